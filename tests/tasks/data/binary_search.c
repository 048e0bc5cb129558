/* A small program for the task dataset tests: its IR, assembly and optimized IR
 * all stay well inside the paper's token budgets. */
#include <stddef.h>

int binary_search(const int *values, size_t count, int key) {
  size_t low = 0, high = count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    if (values[middle] < key)
      low = middle + 1;
    else if (values[middle] > key)
      high = middle;
    else
      return (int)middle;
  }
  return -1;
}

int count_below(const int *values, size_t count, int limit) {
  int below = 0;
  for (size_t i = 0; i < count; i++)
    below += values[i] < limit;
  return below;
}

int main(void) {
  static const int values[] = {1, 3, 5, 7, 11, 13, 17, 19};
  int found = binary_search(values, 8, 13) == 5 && binary_search(values, 8, 4) == -1;
  return found && count_below(values, 8, 10) == 4 ? 0 : 1;
}
