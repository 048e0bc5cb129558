// exercises: Gray code encode/decode (prefix xor), single-bit adjacency, power-of-two tests, next/previous power of two by bit smearing, align up/down to power-of-two boundaries
// Computes binary-reflected Gray codes and power-of-two roundings of 32-bit values and checks them against known sequences.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint32_t gray_encode(uint32_t x) { return x ^ (x >> 1); }

__attribute__((noinline)) uint32_t gray_decode(uint32_t g) {
    g ^= g >> 16; g ^= g >> 8; g ^= g >> 4; g ^= g >> 2; g ^= g >> 1;
    return g;
}

static uint32_t gray_decode_loop(uint32_t g) {
    uint32_t x = 0;
    for (; g; g >>= 1) x ^= g;
    return x;
}

static int is_pow2(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* smallest power of two >= x, for 1 <= x <= 2^31 */
static uint32_t next_pow2(uint32_t x) {
    x--;
    x |= x >> 1; x |= x >> 2; x |= x >> 4; x |= x >> 8; x |= x >> 16;
    return x + 1;
}

/* largest power of two <= x, for x >= 1 */
uint32_t prev_pow2(uint32_t x) {
    x |= x >> 1; x |= x >> 2; x |= x >> 4; x |= x >> 8; x |= x >> 16;
    return x - (x >> 1);
}

static uint32_t align_up(uint32_t x, uint32_t a) { return (x + a - 1u) & ~(a - 1u); }
static uint32_t align_down(uint32_t x, uint32_t a) { return x & (0u - a); }

int main(void) {
    static const uint32_t g8[8] = {0, 1, 3, 2, 6, 7, 5, 4};
    for (uint32_t i = 0; i < 8; i++) {
        volatile uint32_t v = i;
        CHECK(gray_encode(v) == g8[i]);
        CHECK(gray_decode(g8[i]) == i);
    }
    volatile uint32_t big = 0xdeadbeefu;
    CHECK(gray_encode(big) == 0xb1fb6198u);
    CHECK(gray_decode(0xb1fb6198u) == 0xdeadbeefu);
    CHECK(gray_decode_loop(0xb1fb6198u) == 0xdeadbeefu);
    uint32_t checksum = 0;
    for (uint32_t i = 0; i < 65536u; i++) {
        uint32_t g = gray_encode(i), h = gray_encode(i + 1u);
        CHECK(__builtin_popcount(g ^ h) == 1);
        CHECK(gray_decode(g) == i);
        checksum = checksum * 3u + (g ^ h);
    }
    CHECK(!is_pow2(0) && is_pow2(1) && is_pow2(0x80000000u) && !is_pow2(0x80000001u));
    volatile uint32_t n = 1000;
    CHECK(next_pow2(n) == 1024);
    CHECK(prev_pow2(n) == 512);
    CHECK(next_pow2(1) == 1 && next_pow2(1024) == 1024 && next_pow2(1025) == 2048);
    CHECK(next_pow2(0x80000000u) == 0x80000000u && prev_pow2(0xffffffffu) == 0x80000000u);
    CHECK(align_up(n, 64) == 1024 && align_down(n, 64) == 960);
    CHECK(align_up(4096, 4096) == 4096 && align_down(4095, 4096) == 0);
    int pow2_count = 0;
    uint32_t s = 1u;
    for (int i = 0; i < 20000; i++) {
        s = s * 69069u + 1u;
        uint32_t x = (s >> (s & 15u)) | 1u;
        uint32_t up = next_pow2(x >> 1 | 1u), down = prev_pow2(x);
        CHECK(is_pow2(up) && is_pow2(down));
        CHECK(down <= x && (down == 0x80000000u || x < 2u * down));
        CHECK(up >= (x >> 1 | 1u) && (up == 1u || up / 2u < (x >> 1 | 1u)));
        pow2_count += is_pow2(x >> 16);
        checksum += up ^ down;
    }
    printf("c_core_bits_gray: %u %d\n", checksum, pow2_count);
    return 0;
}
