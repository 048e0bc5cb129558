// exercises: count leading/trailing zeros by binary search, de Bruijn multiplication table, __builtin_clz/__builtin_ctz on nonzero inputs, floor/ceil log2, lowest set bit isolation, zero-input handling
// Computes clz, ctz and integer log2 of 32-bit words by hand and checks them against the compiler builtins and known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int clz32(uint32_t x) {
    if (x == 0) return 32;
    int n = 0;
    if ((x & 0xffff0000u) == 0) { n += 16; x <<= 16; }
    if ((x & 0xff000000u) == 0) { n += 8; x <<= 8; }
    if ((x & 0xf0000000u) == 0) { n += 4; x <<= 4; }
    if ((x & 0xc0000000u) == 0) { n += 2; x <<= 2; }
    if ((x & 0x80000000u) == 0) { n += 1; }
    return n;
}

static int ctz_loop(uint32_t x) {
    if (x == 0) return 32;
    int n = 0;
    while ((x & 1u) == 0) { x >>= 1; n++; }
    return n;
}

__attribute__((noinline)) int ctz_debruijn(uint32_t x) {
    static const unsigned char pos[32] = {0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
                                          31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9};
    if (x == 0) return 32;
    return pos[((x & (0u - x)) * 0x077cb531u) >> 27];
}

static int floor_log2(uint32_t x) { return 31 - clz32(x); }
static int ceil_log2(uint32_t x) { return x <= 1 ? 0 : 32 - clz32(x - 1); }

int main(void) {
    static const uint32_t v[8] = {1, 2, 3, 0x80000000u, 0x00010000u, 0x12345678u, 0xf0u, 1000000u};
    static const int want[8][4] = { /* clz, ctz, floor log2, ceil log2 */
        {31, 0, 0, 0}, {30, 1, 1, 1}, {30, 0, 1, 2}, {0, 31, 31, 31},
        {15, 16, 16, 16}, {3, 3, 28, 29}, {24, 4, 7, 8}, {12, 6, 19, 20},
    };
    uint32_t checksum = 0;
    for (int i = 0; i < 8; i++) {
        volatile uint32_t x = v[i];
        CHECK(clz32(x) == want[i][0] && __builtin_clz(x) == want[i][0]);
        CHECK(ctz_loop(x) == want[i][1] && ctz_debruijn(x) == want[i][1] && __builtin_ctz(x) == want[i][1]);
        CHECK(floor_log2(x) == want[i][2]);
        CHECK(ceil_log2(x) == want[i][3]);
    }
    volatile uint32_t zero = 0;
    CHECK(clz32(zero) == 32);
    CHECK(ctz_debruijn(zero) == 32);
    CHECK(ctz_loop(0x12345678u) == 3);
    CHECK(clz32(0x00ffffffu) == 8);
    uint32_t s = 2463534242u;
    for (int i = 0; i < 30000; i++) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        uint32_t x = s >> (s & 31u); /* varied magnitudes; may be zero */
        if (x == 0) continue;
        CHECK(clz32(x) == __builtin_clz(x));
        CHECK(ctz_debruijn(x) == __builtin_ctz(x));
        CHECK(ctz_loop(x) == ctz_debruijn(x));
        CHECK((x & (0u - x)) == (1u << ctz_loop(x)));
        checksum += (uint32_t)(clz32(x) * 37 + ctz_debruijn(x));
    }
    for (uint32_t p = 0; p < 32; p++) {
        CHECK(floor_log2(1u << p) == (int)p && ceil_log2(1u << p) == (int)p);
        if (p >= 1) CHECK(ceil_log2((1u << p) + 1u) == (int)p + 1);
    }
    printf("c_core_bits_clz_ctz: %u\n", checksum);
    return 0;
}
