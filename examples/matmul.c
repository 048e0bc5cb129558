/*
 * matmul.c: integer 12x12 matrix multiply and transpose, checking the
 * identity (A*B)^T == B^T * A^T and a weighted checksum of A*B.
 * Exercises: nested countable loops (unrolling, vectorization, interchange),
 * 2-D array indexing, and loop-invariant code motion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 12

typedef int Mat[N][N];

static void mat_fill(Mat a, Mat b)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i][j] = (i * N + j) % 9 - 4;
            b[i][j] = (i * 3 + j * 5) % 11 - 5;
        }
}

static void mat_mul(Mat c, Mat a, Mat b)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            c[i][j] = 0;
        for (int k = 0; k < N; k++) {
            int aik = a[i][k];
            for (int j = 0; j < N; j++)
                c[i][j] += aik * b[k][j];
        }
    }
}

static void mat_transpose(Mat t, Mat m)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            t[j][i] = m[i][j];
}

static long mat_checksum(Mat m)
{
    long sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += (long)(i * N + j + 1) * m[i][j];
    return sum;
}

static int mat_trace(Mat m)
{
    int t = 0;
    for (int i = 0; i < N; i++)
        t += m[i][i];
    return t;
}

int main(void)
{
    static Mat a, b, c, ct, at, bt, d;

    mat_fill(a, b);
    mat_mul(c, a, b);

    /* Spot values and aggregates computed independently. */
    if (c[0][0] != 27 || c[N - 1][N - 1] != -30 || c[3][7] != -13)
        abort();
    long sum = mat_checksum(c);
    int trace = mat_trace(c);
    if (sum != -10104L || trace != 87)
        abort();

    /* (A*B)^T must equal B^T * A^T. */
    mat_transpose(ct, c);
    mat_transpose(at, a);
    mat_transpose(bt, b);
    mat_mul(d, bt, at);
    if (memcmp(ct, d, sizeof(Mat)) != 0)
        abort();

    /* Transposing twice is the identity. */
    mat_transpose(d, ct);
    if (memcmp(c, d, sizeof(Mat)) != 0)
        abort();

    printf("matmul: checksum=%ld trace=%d\n", sum, trace);
    return 0;
}
