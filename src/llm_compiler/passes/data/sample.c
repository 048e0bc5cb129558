/* Sample program on which every candidate of the searchable pass set is probe-run.
 * It has loops (nested, countable, with unknown trip counts), calls, recursion,
 * a switch, globals, a struct, pointer arithmetic and floating point, so that each
 * pass finds something to work on. */
#include <stdio.h>
#include <string.h>

struct point { int x, y; };

static int table[64];
const char message[] = "sample";
int counter;

static int square(int v) { return v * v; }

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int sum_squares(const int *values, int n) {
  int total = 0;
  for (int i = 0; i < n; i++) total += square(values[i]);
  return total;
}

void fill(int rows, int cols, int grid[rows][cols]) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) grid[r][c] = r * cols + c;
}

int classify(int code) {
  switch (code) {
  case 0: return 10;
  case 1: return 20;
  case 2: return 35;
  case 5: return 7;
  case 9: return 1;
  default: return -1;
  }
}

double mean(const double *xs, unsigned n) {
  double s = 0.0;
  unsigned i = 0;
  while (i < n) s += xs[i++];
  return n ? s / n : 0.0;
}

int manhattan(struct point a, struct point b) {
  int dx = a.x - b.x, dy = a.y - b.y;
  return (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
}

int main(void) {
  int grid[4][8];
  double xs[5] = {1.0, 2.0, 3.0, 4.0, 5.0};
  struct point a = {1, 2}, b = {4, 6};
  for (int i = 0; i < 64; i++) table[i] = i & 7;
  fill(4, 8, grid);
  counter += sum_squares(table, 64) + classify(grid[1][2] % 10) + manhattan(a, b);
  char buffer[16];
  memcpy(buffer, message, sizeof message);
  printf("%d %d %.2f %s\n", counter, fib(10), mean(xs, 5), buffer);
  return 0;
}
