// exercises: triply nested countable loops, matrix multiply with i-k-j order, transpose, 2-D stencil over interior points, Floyd-Warshall with loop-carried dependence through the k loop
// Computes integer matrix products, a squared 5-point Laplacian sum and all-pairs shortest paths and checks them against precomputed values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define N 24
#define INF 1000000000

static int A[N][N], B[N][N], C[N][N], T[N][N];

void matmul(int n, int a[][N], int b[][N], int c[][N]) {
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) c[i][j] = 0;
        for (int k = 0; k < n; k++) {
            int aik = a[i][k];
            for (int j = 0; j < n; j++) c[i][j] += aik * b[k][j];
        }
    }
}

static void transpose(int n, int a[][N], int t[][N]) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) t[j][i] = a[i][j];
}

__attribute__((noinline)) static long long laplace_sq(int n, int a[][N]) {
    long long s = 0;
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            int l = a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1] - 4 * a[i][j];
            s += (long long)l * l;
        }
    return s;
}

static void floyd(int n, int d[][8]) {
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (d[i][k] < INF && d[k][j] < INF && d[i][k] + d[k][j] < d[i][j]) d[i][j] = d[i][k] + d[k][j];
}

int main(void) {
    volatile int n = N;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            A[i][j] = (i * 7 + j * 3) % 11 - 5;
            B[i][j] = (i * j + 1) % 13 - 6;
        }
    matmul(n, A, B, C);
    long long total = 0, trace = 0;
    for (int i = 0; i < n; i++) {
        trace += C[i][i];
        for (int j = 0; j < n; j++) total += C[i][j];
    }
    CHECK(total == 673);
    CHECK(trace == 128);
    CHECK(C[0][0] == 35 && C[5][17] == 25 && C[23][23] == 24);
    CHECK(laplace_sq(n, A) == 138424);

    /* (A B)^T == B^T A^T */
    static int At[N][N], Bt[N][N];
    transpose(n, A, At); transpose(n, B, Bt); transpose(n, C, T);
    matmul(n, Bt, At, C);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) CHECK(C[i][j] == T[i][j]);

    int s3a[N][N] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, s3b[N][N] = {{9, 8, 7}, {6, 5, 4}, {3, 2, 1}};
    matmul(3, s3a, s3b, C);
    CHECK(C[0][0] == 30 && C[1][1] == 69 && C[2][0] == 138 && C[2][2] == 90);

    int d[8][8];
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            d[i][j] = i == j ? 0 : ((i * 3 + j * 5) % 7 < 3 ? (i * j) % 9 + 1 : INF);
    floyd(8, d);
    int dsum = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) { CHECK(d[i][j] < INF); dsum += d[i][j]; }
    CHECK(dsum == 290);
    CHECK(d[0][7] == 1 && d[7][0] == 1 && d[3][6] == 2);
    printf("c_core_loop_nested: %lld %lld %d\n", total, trace, dsum);
    return 0;
}
