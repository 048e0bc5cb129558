// exercises: saturating signed add/sub without overflow, unsigned saturating add/sub, int8 clamping, __builtin_add_overflow, branchless unsigned overflow detection, fixed-seed LCG
// Computes saturating sums and differences for int32, uint32 and int8 values in three independent ways and checks them.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int32_t sat_add(int32_t a, int32_t b) {
    if (b > 0 && a > INT32_MAX - b) return INT32_MAX;
    if (b < 0 && a < INT32_MIN - b) return INT32_MIN;
    return a + b;
}

int32_t sat_sub(int32_t a, int32_t b) {
    if (b < 0 && a > INT32_MAX + b) return INT32_MAX;
    if (b > 0 && a < INT32_MIN + b) return INT32_MIN;
    return a - b;
}

static int32_t u2s(uint32_t u) {
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
}

__attribute__((noinline)) static int32_t sat_add_branchless(int32_t a, int32_t b) {
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b, us = ua + ub;
    uint32_t ovf = ((ua ^ us) & (ub ^ us)) >> 31;
    uint32_t limit = (ua >> 31) + (uint32_t)INT32_MAX; /* INT32_MAX or INT32_MIN bits */
    return u2s(ovf ? limit : us);
}

static int32_t sat_add_builtin(int32_t a, int32_t b) {
    int32_t r;
    if (__builtin_add_overflow(a, b, &r)) return a < 0 ? INT32_MIN : INT32_MAX;
    return r;
}

uint32_t usat_add(uint32_t a, uint32_t b) { uint32_t s = a + b; return s < a ? UINT32_MAX : s; }
uint32_t usat_sub(uint32_t a, uint32_t b) { return a > b ? a - b : 0u; }

static int8_t sat_add_i8(int8_t a, int8_t b) {
    int s = a + b;
    return (int8_t)(s > 127 ? 127 : s < -128 ? -128 : s);
}

int main(void) {
    static const int32_t tab[][4] = {
        {INT32_MAX, 1, INT32_MAX, 2147483646},
        {INT32_MIN, -1, INT32_MIN, -2147483647},
        {1000, -3000, -2000, 4000},
        {2000000000, 2000000000, INT32_MAX, 0},
        {-2000000000, -2000000000, INT32_MIN, 0},
        {INT32_MIN, INT32_MAX, -1, INT32_MIN},
        {5, 7, 12, -2},
    };
    uint32_t checksum = 0;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        volatile int32_t a = tab[i][0], b = tab[i][1];
        CHECK(sat_add(a, b) == tab[i][2]);
        CHECK(sat_add_branchless(a, b) == tab[i][2]);
        CHECK(sat_add_builtin(a, b) == tab[i][2]);
        CHECK(sat_sub(a, b) == tab[i][3]);
        checksum = checksum * 33u ^ (uint32_t)sat_sub(a, b);
    }
    volatile uint32_t u = 0xfffffff0u;
    CHECK(usat_add(u, 0xfu) == 0xffffffffu);
    CHECK(usat_add(u, 0x10u) == 0xffffffffu);
    CHECK(usat_sub(u, 0xfu) == 0xffffffe1u);
    CHECK(usat_sub(3u, 4u) == 0u);
    CHECK(usat_add(0x80000000u, 0x80000000u) == 0xffffffffu);
    volatile int8_t p = 100, q = -100;
    CHECK(sat_add_i8(p, p) == 127);
    CHECK(sat_add_i8(q, q) == -128);
    CHECK(sat_add_i8(127, -128) == -1);
    CHECK(sat_add_i8(60, 7) == 67);
    uint32_t x = 12345u;
    int32_t acc = 0, acc2 = 0;
    for (int i = 0; i < 1000; i++) {
        x = x * 1103515245u + 12345u;
        int32_t v = (int32_t)(x >> 1) - (1 << 30);
        acc = sat_add(acc, v);
        acc2 = sat_add_branchless(acc2, v);
        CHECK(acc == acc2);
    }
    CHECK(acc == 1018064352);
    checksum += (uint32_t)acc;
    printf("c_core_int_saturate: %u\n", checksum);
    return 0;
}
