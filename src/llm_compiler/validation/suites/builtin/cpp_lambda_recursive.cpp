// exercises: recursive lambdas through std::function captured by reference, backtracking with captured state, flood fill recursion over a captured grid, nested recursion (Ackermann), std::function with one and two parameters
// Computes Fibonacci(20), N-Queens solution counts for 6 and 8, Ackermann values and flood-fill region sizes with recursive lambdas stored in std::function.
#include <cstdio>
#include <cstdlib>
#include <functional>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

int main() {
    volatile int n20 = 20;
    std::function<int(int)> fib = [&fib](int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); };
    int f20 = fib(n20);
    CHECK(f20 == 6765);

    int queensN = 0;
    bool colUsed[8] = {}, diag1[15] = {}, diag2[15] = {};
    std::function<int(int)> place = [&](int row) {
        if (row == queensN) return 1;
        int solutions = 0;
        for (int c = 0; c < queensN; ++c) {
            int d1 = row + c, d2 = row - c + queensN - 1;
            if (colUsed[c] || diag1[d1] || diag2[d2]) continue;
            colUsed[c] = diag1[d1] = diag2[d2] = true;
            solutions += place(row + 1);
            colUsed[c] = diag1[d1] = diag2[d2] = false;
        }
        return solutions;
    };
    queensN = 6;
    int q6 = place(0);
    queensN = 8;
    int q8 = place(0);
    CHECK(q6 == 4 && q8 == 92);

    std::function<int(int, int)> ack = [&ack](int m, int n) {
        if (m == 0) return n + 1;
        if (n == 0) return ack(m - 1, 1);
        return ack(m - 1, ack(m, n - 1));
    };
    int a23 = ack(2, 3), a33 = ack(3, 3);
    CHECK(a23 == 9 && a33 == 61);

    char grid[8][9] = {"..#....#", "..#.##.#", "###.#..#", "....#.##",
                       ".####...", "......#.", "#######.", "...#...."};
    std::function<int(int, int)> fill = [&](int r, int c) {
        if (r < 0 || r >= 8 || c < 0 || c >= 8 || grid[r][c] != '.') return 0;
        grid[r][c] = 'x';
        return 1 + fill(r + 1, c) + fill(r - 1, c) + fill(r, c + 1) + fill(r, c - 1);
    };
    int regions = 0, largest = 0, cells = 0;
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
            int size = fill(r, c);
            if (size == 0) continue;
            ++regions;
            cells += size;
            if (size > largest) largest = size;
        }
    CHECK(regions == 3 && largest == 30 && cells == 37);

    int checksum = f20 + q6 * 10 + q8 * 100 + a23 + a33 + regions * 1000 + largest;
    CHECK(checksum == 19105);
    std::printf("cpp_lambda_recursive: %d\n", checksum);
    return 0;
}
