// exercises: 64x64->128 multiply via 32-bit halves, unsigned carries, signed multiply-high correction, division by magic constant, fixed-seed LCG
// Computes the high and low 64-bit halves of 64x64-bit products without overflow and uses them for division by 10.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint64_t mul_full(uint64_t a, uint64_t b, uint64_t *lo) {
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32;
    uint64_t b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

static uint64_t mulhi_u64(uint64_t a, uint64_t b) {
    uint64_t lo;
    return mul_full(a, b, &lo);
}

/* signed high half computed in unsigned arithmetic: no signed overflow possible */
__attribute__((noinline)) uint64_t mulhi_s64_bits(uint64_t a, uint64_t b) {
    uint64_t hi = mulhi_u64(a, b);
    if (a >> 63) hi -= b;
    if (b >> 63) hi -= a;
    return hi;
}

static uint32_t mulhi_u32(uint32_t a, uint32_t b) {
    return (uint32_t)(((uint64_t)a * b) >> 32);
}

static const uint64_t cases[][4] = {
    {0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u, 0x0000000000000000u},
    {0x0000000000000001u, 0x0000000000000001u, 0x0000000000000000u, 0x0000000000000001u},
    {0xffffffffffffffffu, 0xffffffffffffffffu, 0xfffffffffffffffeu, 0x0000000000000001u},
    {0xffffffffffffffffu, 0x0000000000000002u, 0x0000000000000001u, 0xfffffffffffffffeu},
    {0x123456789abcdef0u, 0xfedcba9876543210u, 0x121fa00ad77d7422u, 0x236d88fe5618cf00u},
    {0xdeadbeefcafebabeu, 0x0123456789abcdefu, 0x00fd5bdeeeb2a01du, 0x7eb689f4ea447d62u},
    {0x0000000100000000u, 0x0000000100000000u, 0x0000000000000001u, 0x0000000000000000u},
    {0x8000000000000000u, 0x0000000000000002u, 0x0000000000000001u, 0x0000000000000000u},
    {0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, 0x7641f3080ff92329u, 0xd67411c46c86742du},
};

int main(void) {
    uint64_t checksum = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        volatile uint64_t va = cases[i][0], vb = cases[i][1];
        uint64_t lo, hi = mul_full(va, vb, &lo);
        CHECK(hi == cases[i][2]);
        CHECK(lo == cases[i][3]);
        CHECK(lo == (uint64_t)(va * vb));
        checksum ^= hi + (lo << 1) + i;
    }
    CHECK(mulhi_s64_bits(0xffffffffffffffffu, 0xffffffffffffffffu) == 0x0u);
    CHECK(mulhi_s64_bits(0xffffffffffffffffu, 5u) == 0xffffffffffffffffu);
    CHECK(mulhi_s64_bits(0x8000000000000000u, 0x8000000000000000u) == 0x4000000000000000u);
    CHECK(mulhi_s64_bits(0x8000000000000000u, 3u) == 0xfffffffffffffffeu);
    CHECK(mulhi_s64_bits(0x9e3779b97f4a7c15u, 0x7f4a7c159e3779b9u) == 0xcf611206d2d8a183u);
    CHECK(mulhi_u32(0xffffffffu, 0xffffffffu) == 0xfffffffeu);
    CHECK(mulhi_u32(0x80000000u, 6u) == 3u);
    /* x / 10 == mulhi(x, ceil(2^67 / 10)) >> 3 for every 64-bit x */
    uint64_t x = 0x2545f4914f6cdd1du;
    for (int i = 0; i < 2000; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint64_t q = mulhi_u64(x, 0xcccccccccccccccdu) >> 3;
        CHECK(q == x / 10);
        checksum += q;
    }
    printf("c_core_int_mulhi: 0x%016llx\n", (unsigned long long)checksum);
    return 0;
}
