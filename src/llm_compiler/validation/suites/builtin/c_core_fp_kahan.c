// exercises: float accumulation rounding, Kahan compensated summation, Neumaier summation, float/double mixing, fabsf, bit-exact float comparison via memcpy
// Computes naive, Kahan and Neumaier float sums of several series and checks their exact IEEE-754 single-precision bit patterns.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* keep a * b + c as two roundings */
#endif

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }

float sum_naive(const float *x, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

__attribute__((noinline)) float sum_kahan(const float *x, int n) {
    float s = 0.0f, c = 0.0f;
    for (int i = 0; i < n; i++) {
        float y = x[i] - c;
        float t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

static float sum_neumaier(const float *x, int n) {
    float s = 0.0f, c = 0.0f;
    for (int i = 0; i < n; i++) {
        float t = s + x[i];
        if (fabsf(s) >= fabsf(x[i])) c += (s - t) + x[i];
        else c += (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

static float buf[100000];

int main(void) {
    volatile float tenth = 0.1f;
    for (int i = 0; i < 100000; i++) buf[i] = tenth;
    float a = sum_naive(buf, 100000), b = sum_kahan(buf, 100000);
    CHECK(fbits(a) == 0x461c3a3au);
    CHECK(fbits(b) == 0x461c4000u);
    CHECK(b == 10000.0f && a < b);

    volatile float big = 1e8f;
    float ys[4] = {1.0f, big, 1.0f, -big};
    CHECK(sum_naive(ys, 4) == 0.0f);
    CHECK(sum_kahan(ys, 4) == 0.0f);
    CHECK(sum_neumaier(ys, 4) == 2.0f);

    for (int i = 1; i <= 20000; i++) buf[i - 1] = 1.0f / (float)i;
    float hn = sum_naive(buf, 20000), hk = sum_kahan(buf, 20000), hm = sum_neumaier(buf, 20000);
    CHECK(fbits(hn) == 0x4127b12eu);
    CHECK(fbits(hk) == 0x4127b110u);
    CHECK(fbits(hm) == 0x4127b110u);
    double exact = 0.0;
    for (int i = 0; i < 20000; i++) exact += (double)buf[i];
    CHECK((float)exact == hk);
    CHECK(fabs((double)hn - exact) > fabs((double)hk - exact));

    uint32_t checksum = fbits(a) ^ (fbits(b) << 1) ^ (fbits(hn) * 3u) ^ (fbits(hk) * 5u);
    printf("c_core_fp_kahan: 0x%08x %.6g\n", checksum, (double)hk);
    return 0;
}
