// exercises: float/double to integer truncation toward zero, integer to float rounding (ties-to-even), uint64/double conversions above 2^63, lround/lrint/llround, double to float narrowing, in-range round trips
// Computes in-range conversions between integer and floating types and checks the exact results dictated by IEEE-754 round-to-nearest-even.
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int d2i(double d) { return (int)d; }
__attribute__((noinline)) uint64_t d2u64(double d) { return (uint64_t)d; }
static float i2f(int32_t i) { return (float)i; }
static double u2d(uint64_t u) { return (double)u; }

int main(void) {
    volatile double v1 = 3.99, v2 = -3.99, v3 = -0.5;
    CHECK(d2i(v1) == 3);
    CHECK(d2i(v2) == -3);
    CHECK(d2i(v3) == 0);
    CHECK(d2i(2147483647.9) == INT_MAX);
    CHECK(d2i(-2147483648.9) == INT_MIN);
    volatile int32_t big = 16777217;
    CHECK(i2f(big) == 16777216.0f);
    CHECK(i2f(big + 2) == 16777220.0f);
    CHECK(i2f(123456789) == 123456792.0f);
    CHECK((int32_t)i2f(-123456789) == -123456792);
    CHECK(i2f(INT32_MAX) == 2147483648.0f);
    CHECK((uint32_t)4294967040.0f == 4294967040u);
    CHECK(u2d(UINT64_MAX) == 18446744073709551616.0);
    CHECK(d2u64(18446744073709549568.0) == 18446744073709549568u);
    CHECK(d2u64(u2d(9223372036854777857u)) == 9223372036854777856u);
    volatile double big53 = 9007199254740993.0;
    CHECK((long long)big53 == 9007199254740992LL);
    volatile double h = 2.5;
    CHECK(lround(h) == 3 && lround(-h) == -3);
    CHECK(lrint(h) == 2 && lrint(h + 1.0) == 4 && lrint(-h) == -2);
    CHECK(llround(-0.49999999999999994) == 0);
    CHECK((signed char)-128.9f == -128);
    float tenth = (float)0.1;
    uint32_t tb;
    memcpy(&tb, &tenth, sizeof tb);
    CHECK(tb == 0x3dcccccdu);

    uint32_t x = 2463534242u, checksum = 0;
    int rounded = 0;
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        int32_t small = (int32_t)(x & 0xffffffu) - 0x800000;
        CHECK((int32_t)(float)small == small);
        int32_t wide = (int32_t)(x >> 1);
        float fw = (float)wide;
        double dw = (double)wide;
        CHECK((int32_t)dw == wide);
        CHECK(fabs((double)fw - dw) <= 64.0);
        rounded += ((double)fw != dw);
        checksum = checksum * 31u + (uint32_t)(int64_t)fw;
    }
    CHECK(rounded > 4000);
    printf("c_core_fp_conv: %u %d\n", checksum, rounded);
    return 0;
}
