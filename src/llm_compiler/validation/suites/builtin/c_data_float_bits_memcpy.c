// exercises: type punning through memcpy between float/double and uint32_t/uint64_t, IEEE-754 field extraction, building floats from bit patterns, ulp stepping, frexp and ldexp agreement
// Converts floats and doubles to and from their bit patterns with memcpy and checks sign, exponent and mantissa fields and ulp steps.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, sizeof u); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, sizeof f); return f; }
static uint64_t dbits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }
static double bitsd(uint64_t u) { double d; memcpy(&d, &u, sizeof d); return d; }

int float_exponent(float f) { return (int)((fbits(f) >> 23) & 0xffu) - 127; }

/* Next representable float toward +infinity, for finite inputs. */
float next_up(float f) {
    uint32_t u = fbits(f);
    if ((u & 0x7fffffffu) == 0) return bitsf(1u);
    return bitsf(u & 0x80000000u ? u - 1u : u + 1u);
}

/* Total-order key: negative floats reversed, so integer comparison matches float comparison. */
static uint32_t order_key(float f) {
    uint32_t u = fbits(f);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static double make_double(int neg, int exp, uint64_t frac) {
    return bitsd((uint64_t)(neg != 0) << 63 | (uint64_t)(exp + 1023) << 52 | (frac & 0xfffffffffffffull));
}

int main(void) {
    volatile float vone = 1.0f, vpi = 3.14159f;
    volatile double vtenth = 0.1;
    CHECK(fbits(vone) == 0x3f800000u && fbits(-2.5f) == 0xc0200000u && fbits(0.1f) == 0x3dcccccdu);
    CHECK(dbits(vtenth) == 0x3fb999999999999aull && dbits(-0.0) == 0x8000000000000000ull);
    CHECK(fbits(vpi) == 0x40490fd0u && float_exponent(vpi) == 1);
    CHECK(fbits(INFINITY) == 0x7f800000u && isinf(bitsf(0xff800000u)) && isnan(bitsf(0x7fc00000u)));
    CHECK(next_up(vone) - 1.0f == ldexpf(1.0f, -23));
    CHECK(next_up(-vone) == -bitsf(0x3f7fffffu) && next_up(0.0f) == bitsf(1u) && next_up(-bitsf(1u)) == -0.0f);
    CHECK(make_double(0, 0, 0) == 1.0 && make_double(1, 1, 1ull << 51) == -3.0 && make_double(0, -1, 0) == 0.5);
    int e;
    double m = frexp(1000.0, &e);
    CHECK(m == 0.9765625 && e == 10 && ldexp(m, e) == 1000.0);
    CHECK((int)((dbits(1000.0) >> 52) & 0x7ffu) - 1023 == e - 1);
    float vals[6] = { -3.5f, -0.0f, 2.0f, -1e-30f, 7.25f, 1e30f };
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            if (vals[i] < vals[j]) CHECK(order_key(vals[i]) < order_key(vals[j]));
    unsigned steps = 0;
    for (float f = vone; f < 1.0f + 1e-6f; f = next_up(f)) steps++;
    CHECK(steps == 8);
    uint32_t sum = 0;
    for (int i = -20; i <= 20; i++) {
        float f = ldexpf(1.5f, i) * vone;
        sum = sum * 31u + fbits(f) + (uint32_t)(float_exponent(f) + 200);
        sum ^= (uint32_t)(dbits((double)f) >> 29);
    }
    printf("c_data_float_bits_memcpy: 0x%08x %u\n", sum, steps);
    return 0;
}
