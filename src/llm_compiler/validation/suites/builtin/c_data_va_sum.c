// exercises: stdarg variadic functions, count-prefixed and sentinel-terminated argument lists, long long and double varargs, default argument promotions of char/short/float
// Sums variadic argument lists of several types and checks totals including promoted char, short and float arguments.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int sum_int(int count, ...) {
    va_list ap;
    int s = 0;
    va_start(ap, count);
    for (int i = 0; i < count; i++) s += va_arg(ap, int);
    va_end(ap);
    return s;
}

/* Terminated by a negative value. */
static long sum_until_neg(int first, ...) {
    va_list ap;
    long s = 0;
    va_start(ap, first);
    for (int v = first; v >= 0; v = va_arg(ap, int)) s += v;
    va_end(ap);
    return s;
}

long long sum_ll(unsigned count, ...) {
    va_list ap;
    long long s = 0;
    va_start(ap, count);
    while (count--) s += va_arg(ap, long long);
    va_end(ap);
    return s;
}

static double sum_double(int count, ...) {
    va_list ap;
    double s = 0.0;
    va_start(ap, count);
    for (int i = 0; i < count; i++) s += va_arg(ap, double);
    va_end(ap);
    return s;
}

/* Alternating weights: a0 - a1 + a2 - ... */
static int alt_sum(int count, ...) {
    va_list ap;
    int s = 0;
    va_start(ap, count);
    for (int i = 0; i < count; i++) { int v = va_arg(ap, int); s += (i & 1) ? -v : v; }
    va_end(ap);
    return s;
}

int main(void) {
    volatile int v5 = 5;
    volatile float vf = 0.25f;
    char c = 'A';
    short sh = -300;
    unsigned char uc = 200;
    CHECK(sum_int(0) == 0);
    CHECK(sum_int(3, 1, 2, v5) == 8);
    CHECK(sum_int(4, c, sh, uc, -v5) == -40);
    CHECK(sum_int(10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) == 55);
    CHECK(sum_until_neg(4, 8, 15, 16, 23, 42, -1) == 108);
    CHECK(sum_until_neg(-1) == 0);
    CHECK(sum_ll(3, 4000000000LL, 5000000000LL, -1LL) == 8999999999LL);
    CHECK(sum_ll(2, (long long)v5, 1LL << 40) == 1099511627781LL);
    double d = sum_double(4, 1.5, (double)vf, vf, -0.125);
    CHECK(d == 1.875);
    CHECK(alt_sum(6, 10, 1, 20, 2, 30, 3) == 54);
    CHECK(alt_sum(1, -v5) == -5);
    unsigned sum = 0;
    for (int i = 0; i < 20; i++) {
        sum = sum * 31u + (unsigned)sum_int(5, i, i * i, -i, v5, c);
        sum ^= (unsigned)sum_until_neg(i, i + 1, i * 3, -i - 1);
    }
    printf("c_data_va_sum: %u %d\n", sum, (int)(d * 8.0));
    return 0;
}
