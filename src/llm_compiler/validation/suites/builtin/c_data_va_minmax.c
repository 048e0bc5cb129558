// exercises: variadic max and min, argument index tracking, type-selected va_arg (int, unsigned, double), clamping through variadic helpers, macros that count arguments
// Computes minima, maxima, argmax positions and ranges over variadic argument lists of ints, unsigneds and doubles.
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define NARGS(...) (int)(sizeof((int[]){ __VA_ARGS__ }) / sizeof(int))
#define IMAX(...) max_int(NARGS(__VA_ARGS__), __VA_ARGS__)

int max_int(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int m = INT_MIN;
    for (int i = 0; i < n; i++) { int v = va_arg(ap, int); if (v > m) m = v; }
    va_end(ap);
    return m;
}

static int min_int(int n, ...) {
    va_list ap;
    va_start(ap, n);
    int m = INT_MAX;
    for (int i = 0; i < n; i++) { int v = va_arg(ap, int); if (v < m) m = v; }
    va_end(ap);
    return m;
}

/* Index of the first maximum; kind 'u' reads unsigned, 'd' reads double. */
int argmax(char kind, int n, ...) {
    va_list ap;
    va_start(ap, n);
    int best = -1;
    unsigned bu = 0;
    double bd = 0.0;
    for (int i = 0; i < n; i++) {
        if (kind == 'u') { unsigned v = va_arg(ap, unsigned); if (best < 0 || v > bu) { bu = v; best = i; } }
        else { double v = va_arg(ap, double); if (best < 0 || v > bd) { bd = v; best = i; } }
    }
    va_end(ap);
    return best;
}

static double range_double(int n, ...) {
    va_list ap;
    va_start(ap, n);
    double lo = va_arg(ap, double), hi = lo;
    for (int i = 1; i < n; i++) { double v = va_arg(ap, double); if (v < lo) lo = v; if (v > hi) hi = v; }
    va_end(ap);
    return hi - lo;
}

static int clamp(int v, int lo, int hi) { return max_int(2, lo, min_int(2, v, hi)); }

int main(void) {
    volatile int va = -17, vb = 99;
    int a = va, b = vb;
    CHECK(IMAX(3, a, b, 42) == 99);
    CHECK(NARGS(1, 2, 3, 4, 5) == 5);
    CHECK(max_int(0) == INT_MIN && min_int(0) == INT_MAX);
    CHECK(min_int(4, b, a, 0, -16) == -17);
    CHECK(max_int(3, INT_MIN, INT_MIN + 1, a) == -17);
    CHECK(argmax('u', 5, 3u, 4000000000u, 7u, 4000000000u, 2147483648u) == 1);
    CHECK(argmax('d', 4, -1.5, -0.5, -0.25, -3.0) == 2);
    CHECK(argmax('u', 0) == -1);
    CHECK(range_double(5, 2.5, -1.25, 8.0, 0.0, 3.75) == 9.25);
    CHECK(range_double(1, 4.0) == 0.0);
    CHECK(clamp(150, 0, 100) == 100 && clamp(a, 0, 100) == 0 && clamp(42, 0, 100) == 42);
    unsigned sum = 0;
    for (int i = -10; i <= 10; i++) {
        int m = IMAX(i, -i, i * 3 - 7, a);
        int n = min_int(3, i * i - 20, b, i);
        sum = sum * 17u + (unsigned)m * 3u + (unsigned)n + (unsigned)clamp(i * 9, -50, 50);
    }
    printf("c_data_va_minmax: %u %d\n", sum, IMAX(a, b, 5));
    return 0;
}
