// exercises: floor/ceil/round/trunc/rint/nearbyint, float variants, halfway cases and negative zero results, fmod/remainder/modf/frexp, hand-written floor and round-half-even
// Computes the C rounding functions on halfway, negative and large inputs and cross-checks hand-written versions against them.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* keep a * b + c as two roundings */
#endif

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* valid for |x| < 2^62 */
double my_floor(double x) {
    double t = (double)(long long)x;
    return t > x ? t - 1.0 : t;
}

__attribute__((noinline)) static double my_round_even(double x) {
    double f = my_floor(x), diff = x - f;
    if (diff > 0.5) return f + 1.0;
    if (diff < 0.5) return f;
    return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static const double in[10] = {2.5, -2.5, 3.5, -3.5, 0.49999999999999994, -0.5, 1.7, -1.7, 1000000000000000.5, -7.0};
/* floor, ceil, round, trunc, rint */
static const double want[10][5] = {
    {2, 3, 3, 2, 2}, {-3, -2, -3, -2, -2}, {3, 4, 4, 3, 4}, {-4, -3, -4, -3, -4},
    {0, 1, 0, 0, 0}, {-1, -0.0, -1, -0.0, -0.0}, {1, 2, 2, 1, 2}, {-2, -1, -2, -1, -2},
    {1e15, 1e15 + 1, 1e15 + 1, 1e15, 1e15}, {-7, -7, -7, -7, -7},
};

int main(void) {
    uint32_t checksum = 0;
    for (int i = 0; i < 10; i++) {
        volatile double x = in[i];
        double got[5] = {floor(x), ceil(x), round(x), trunc(x), rint(x)};
        for (int k = 0; k < 5; k++) {
            CHECK(got[k] == want[i][k]);
            CHECK(!signbit(got[k]) == !signbit(want[i][k]));
            checksum = checksum * 5u + (uint32_t)(int32_t)(got[k] / 1e14);
        }
        CHECK(nearbyint(x) == rint(x));
        CHECK(my_floor(x) == floor(x));
        CHECK(my_round_even(x) == rint(x));
    }
    volatile float fx = -2.5f;
    CHECK(floorf(fx) == -3.0f && ceilf(fx) == -2.0f && roundf(fx) == -3.0f && rintf(fx) == -2.0f);
    CHECK(signbit(ceil(-0.25)) && signbit(trunc(-0.75)));
    volatile double a = 7.5;
    CHECK(fmod(a, 2.0) == 1.5 && fmod(-a, 2.0) == -1.5);
    CHECK(remainder(a, 2.0) == -0.5 && remainder(-a, 2.0) == 0.5);
    CHECK(remainder(5.0, 2.0) == 1.0 && remainder(10.0, 4.0) == 2.0);
    CHECK(fmod(1e20, 3.0) == 1.0);
    double ip, fp = modf(-3.25, &ip);
    CHECK(fp == -0.25 && ip == -3.0);
    int e;
    CHECK(frexp(48.0, &e) == 0.75 && e == 6);
    CHECK(frexp(-0.1, &e) == -0.8 && e == -3);
    CHECK((int)lround(a) == 8);

    uint64_t s = 88172645463325252u;
    int odd_ties = 0;
    for (int i = 0; i < 20000; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double v = (double)(int64_t)(s >> 40) / 4.0 - 1048576.0; /* quarter steps: many exact ties */
        CHECK(my_floor(v) == floor(v));
        CHECK(my_round_even(v) == rint(v));
        odd_ties += (v - floor(v) == 0.5) && fmod(floor(v), 2.0) != 0.0;
    }
    CHECK(odd_ties > 2000);
    printf("c_core_fp_rounding: %u %d\n", checksum, odd_ties);
    return 0;
}
