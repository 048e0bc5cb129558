// exercises: population count by Kernighan loop, SWAR popcount, nibble lookup table, __builtin_popcountll/__builtin_parityll, parity by xor folding, xorshift generator
// Computes population counts and parities of 64-bit words four different ways and checks they agree with known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int pop_kernighan(uint64_t x) {
    int n = 0;
    while (x) { x &= x - 1; n++; }
    return n;
}

int pop_swar(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555u);
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (int)((x * 0x0101010101010101u) >> 56);
}

__attribute__((noinline)) static int pop_table(uint64_t x) {
    static const unsigned char nib[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    int n = 0;
    for (int i = 0; i < 16; i++) { n += nib[x & 15u]; x >>= 4; }
    return n;
}

static int parity_fold(uint64_t x) {
    x ^= x >> 32; x ^= x >> 16; x ^= x >> 8; x ^= x >> 4; x ^= x >> 2; x ^= x >> 1;
    return (int)(x & 1u);
}

int main(void) {
    static const uint64_t vals[8] = {0, 1, 0x8000000000000000u, UINT64_MAX, 0xf0f0f0f0f0f0f0f0u,
                                     0x0123456789abcdefu, 0xdeadbeefu, 0x5555555555555555u};
    static const int pops[8] = {0, 1, 1, 64, 32, 32, 24, 32};
    for (int i = 0; i < 8; i++) {
        volatile uint64_t v = vals[i];
        CHECK(pop_kernighan(v) == pops[i]);
        CHECK(pop_swar(v) == pops[i]);
        CHECK(pop_table(v) == pops[i]);
        CHECK(__builtin_popcountll(v) == pops[i]);
        CHECK(parity_fold(v) == (pops[i] & 1));
    }
    volatile uint64_t w = 0x0123456789abcdefu;
    CHECK(pop_swar(w) == 32);
    CHECK(pop_table(0xdeadbeefu) == 24);
    CHECK(__builtin_popcount(0xffffu) == 16);
    uint64_t s = 0x9e3779b97f4a7c15u;
    uint64_t total = 0, parity_ones = 0;
    for (int i = 0; i < 20000; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        int p = pop_swar(s);
        CHECK(p == pop_kernighan(s));
        CHECK(p == pop_table(s));
        CHECK(p == __builtin_popcountll(s));
        CHECK(parity_fold(s) == __builtin_parityll(s));
        total += (uint64_t)p;
        parity_ones += (uint64_t)parity_fold(s);
    }
    /* popcount of every 16-bit value: 16 * 2^15 */
    uint32_t all = 0;
    for (uint32_t v = 0; v < 65536u; v++) all += (uint32_t)pop_kernighan(v);
    CHECK(all == 524288u);
    printf("c_core_bits_popcount: %llu %llu %u\n", (unsigned long long)total, (unsigned long long)parity_ones, all);
    return 0;
}
