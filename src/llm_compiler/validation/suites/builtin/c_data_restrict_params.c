// exercises: restrict-qualified pointer parameters, disjoint output buffers, read-only restrict aliases, stencils, prefix sums, restrict with strides
// Runs vector kernels whose restrict parameters are always called with non-overlapping writable buffers and checks their results.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define N 64

void vadd(int n, int *restrict out, const int *restrict a, const int *restrict b) {
    for (int i = 0; i < n; i++) out[i] = a[i] + b[i];
}

static void axpy(int n, int k, const int *restrict x, int *restrict y) {
    for (int i = 0; i < n; i++) y[i] += k * x[i];
}

void stencil3(int n, int *restrict dst, const int *restrict src) {
    dst[0] = src[0];
    dst[n - 1] = src[n - 1];
    for (int i = 1; i < n - 1; i++) dst[i] = src[i - 1] + 2 * src[i] + src[i + 1];
}

static long prefix(int n, long *restrict acc, const int *restrict v, int *restrict count_neg) {
    long s = 0;
    *count_neg = 0;
    for (int i = 0; i < n; i++) {
        s += v[i];
        acc[i] = s;
        if (v[i] < 0) ++*count_neg;
    }
    return s;
}

void gather(int n, int *restrict out, const int *restrict src, const int *restrict idx) {
    for (int i = 0; i < n; i++) out[i] = src[idx[i]];
}

int main(void) {
    static int a[N], b[N], c[N], d[N], idx[N];
    static long acc[N];
    volatile int vk = 3, vn = N;
    int n = vn, neg;
    for (int i = 0; i < n; i++) { a[i] = i; b[i] = i % 7 - 3; idx[i] = (i * 5) % N; }
    vadd(n, c, a, b);
    CHECK(c[0] == -3 && c[10] == 10 && c[63] == 60);
    vadd(n, d, a, a); /* two read-only restrict pointers may refer to the same array */
    CHECK(d[21] == 42);
    axpy(n, vk, b, c);
    CHECK(c[0] == -12 && c[10] == 10 && c[62] == 74);
    stencil3(n, d, a);
    CHECK(d[0] == 0 && d[1] == 4 && d[30] == 120 && d[63] == 63);
    long total = prefix(n, acc, b, &neg);
    CHECK(total == -3 && acc[6] == 0 && acc[9] == -6);
    CHECK(neg == 28);
    gather(n, c, a, idx);
    CHECK(c[1] == 5 && c[13] == 1 && c[63] == 59);
    stencil3(n / 2, d + n / 2, d); /* restrict on disjoint halves of one array */
    CHECK(d[32] == 0 && d[33] == 16 && d[40] == 128 && d[63] == 124);
    unsigned sum = 0;
    for (int i = 0; i < n; i++) sum = sum * 31u + (unsigned)c[i] + (unsigned)d[i] * 3u + (unsigned)acc[i];
    printf("c_data_restrict_params: %u %ld\n", sum, total);
    return 0;
}
