// exercises: Newton iteration for sqrt in double and float, frexp/ldexp initial guess, nextafter ulp bounds, integer square root by Newton, float bit reinterpretation via memcpy
// Computes square roots by Newton's method (floating and integer) and checks them against sqrt/sqrtf and exact integer roots.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* keep a * b + c as two roundings */
#endif

#define CHECK(c) do { if (!(c)) abort(); } while (0)

double newton_sqrt(double a) {
    if (a == 0.0) return 0.0;
    int e;
    (void)frexp(a, &e);
    double x = ldexp(1.0, e / 2 + 1); /* always >= sqrt(a) */
    for (int i = 0; i < 200; i++) {
        double y = 0.5 * (x + a / x);
        if (y >= x) break;
        x = y;
    }
    return x;
}

static float newton_sqrtf(float a) {
    float x = a > 1.0f ? a : 1.0f;
    for (int i = 0; i < 200; i++) {
        float y = 0.5f * (x + a / x);
        if (y >= x) break;
        x = y;
    }
    return x;
}

__attribute__((noinline)) uint64_t isqrt64(uint64_t n) {
    if (n < 2) return n;
    uint64_t x = n, y = (n >> 1) + (n & 1u);
    while (y < x) { x = y; y = (x + n / x) >> 1; }
    return x;
}

static float rsqrt_fast(float a) {
    uint32_t i;
    memcpy(&i, &a, sizeof i);
    i = 0x5f3759dfu - (i >> 1);
    float y;
    memcpy(&y, &i, sizeof y);
    return y * (1.5f - 0.5f * a * y * y);
}

int main(void) {
    static const uint64_t sq[][2] = {
        {0, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 2}, {15, 3}, {16, 4}, {17, 4}, {99, 9}, {100, 10},
        {1000000000000u, 1000000}, {999999999999u, 999999}, {18446744073709551615u, 4294967295u},
        {4611686018427387904u, 2147483648u}, {18446744065119617025u, 4294967295u},
        {18446744065119617024u, 4294967294u},
    };
    for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++) {
        volatile uint64_t n = sq[i][0];
        CHECK(isqrt64(n) == sq[i][1]);
    }
    uint64_t total = 0;
    for (uint64_t i = 0; i < 100000; i++) total += isqrt64(i);
    CHECK(total == 21031854);

    volatile double two = 2.0;
    CHECK(newton_sqrt(two) == 1.414213562373095); /* one ulp below sqrt(2) */
    CHECK(newton_sqrt(two) == nextafter(sqrt(two), 0.0));
    CHECK(newton_sqrt(144.0) == 12.0);
    CHECK(newton_sqrt(0.25) == 0.5);
    uint32_t exact = 0, below = 0;
    double a = 1e-3;
    for (int k = 0; k < 300; k++) {
        double r = newton_sqrt(a), s = sqrt(a);
        below += (r < s);
        CHECK(r >= nextafter(s, 0.0) && r <= nextafter(s, INFINITY));
        exact += (r == s);
        float af = (float)a;
        float rf = newton_sqrtf(af), sf = sqrtf(af);
        CHECK(rf >= nextafterf(sf, 0.0f) && rf <= nextafterf(sf, INFINITY));
        float rs = rsqrt_fast(af);
        CHECK(fabs((double)rs * sqrt((double)af) - 1.0) < 2e-3);
        a *= 1.37;
    }
    CHECK(newton_sqrtf(9.0f) == 3.0f);
    CHECK(below == 42);
    CHECK(exact == 225);
    printf("c_core_fp_newton_sqrt: %llu %u %u\n", (unsigned long long)total, exact, below);
    return 0;
}
