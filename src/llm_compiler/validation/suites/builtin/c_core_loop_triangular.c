// exercises: triangular loop nests (j <= i, j > i), in-place Pascal row update running right to left, lower-triangular matrix-vector product, forward substitution, pair counting, bubble sort inversion count
// Computes binomial rows, a triangular solve and pair/inversion counts with triangular loops and checks them against precomputed values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define N 50
#define M 200

static long long L[N][N];

void pascal_row(uint64_t *row, int n) {
    for (int i = 0; i <= n; i++) row[i] = 0;
    row[0] = 1;
    for (int r = 1; r <= n; r++)
        for (int k = r; k > 0; k--) row[k] += row[k - 1];
}

static void lower_mv(int n, const long long *v, long long *y) {
    for (int i = 0; i < n; i++) {
        long long s = 0;
        for (int j = 0; j <= i; j++) s += L[i][j] * v[j];
        y[i] = s;
    }
}

__attribute__((noinline)) static void forward_subst(int n, const long long *y, long long *x) {
    for (int i = 0; i < n; i++) {
        long long s = y[i];
        for (int j = 0; j < i; j++) s -= L[i][j] * x[j];
        x[i] = s / L[i][i];
    }
}

static int bubble(int *a, int n) {
    int swaps = 0;
    for (int i = 0; i < n - 1; i++)
        for (int j = 0; j < n - 1 - i; j++)
            if (a[j] > a[j + 1]) { int t = a[j]; a[j] = a[j + 1]; a[j + 1] = t; swaps++; }
    return swaps;
}

int main(void) {
    static uint64_t row[61];
    pascal_row(row, 30);
    uint64_t rs = 0;
    for (int k = 0; k <= 30; k++) rs += row[k];
    CHECK(row[15] == 155117520u);
    CHECK(rs == 1073741824u);
    volatile int sixty = 60;
    pascal_row(row, sixty);
    CHECK(row[30] == 118264581564861424u);
    CHECK(row[1] == 60 && row[59] == 60);

    long long v[N], y[N], xs[N];
    for (int i = 0; i < N; i++) {
        v[i] = (i * 5) % 9 - 4;
        for (int j = 0; j < N; j++) L[i][j] = j <= i ? (i + j) % 7 + 1 : 0;
    }
    lower_mv(N, v, y);
    long long ysum = 0;
    for (int i = 0; i < N; i++) ysum += y[i];
    CHECK(ysum == -687 && y[49] == -28 && y[0] == -4);
    forward_subst(N, y, xs);
    for (int i = 0; i < N; i++) CHECK(xs[i] == v[i]);

    int a[M];
    volatile int m = M;
    for (int i = 0; i < m; i++) a[i] = (i * i) % 37;
    int pairs = 0;
    for (int i = 0; i < m; i++)
        for (int j = i + 1; j < m; j++) pairs += (a[i] + a[j] == 36);
    CHECK(pairs == 539);
    int swaps = bubble(a, m);
    CHECK(swaps == 9512);
    for (int i = 1; i < m; i++) CHECK(a[i - 1] <= a[i]);
    long long tri = 0;
    for (int i = 0; i < 100; i++)
        for (int j = 0; j < i; j++) tri += (long long)i * j;
    CHECK(tri == 12087075);
    printf("c_core_loop_triangular: %llu %lld %d %d %lld\n", (unsigned long long)row[30], ysum, pairs, swaps, tri);
    return 0;
}
