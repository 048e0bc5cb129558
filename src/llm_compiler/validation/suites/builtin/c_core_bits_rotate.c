// exercises: 32/64-bit rotate left/right with masked shift counts (no shift by width), rotate by zero, rotate idiom recognition, __builtin_rotateleft32, ChaCha quarter round (add-rotate-xor)
// Computes rotations of 32- and 64-bit words and the ChaCha20 quarter round and checks them against known vectors and a naive bit-by-bit rotate.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint32_t rotl32(uint32_t x, unsigned n) { n &= 31u; return (x << n) | (x >> ((32u - n) & 31u)); }
uint32_t rotr32(uint32_t x, unsigned n) { n &= 31u; return (x >> n) | (x << ((0u - n) & 31u)); }
static uint64_t rotl64(uint64_t x, unsigned n) { n &= 63u; return n ? (x << n) | (x >> (64u - n)) : x; }

__attribute__((noinline)) static uint32_t rotl32_naive(uint32_t x, unsigned n) {
    for (unsigned i = 0; i < n % 32u; i++) x = (x << 1) | (x >> 31);
    return x;
}

static void quarter_round(uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d) {
    *a += *b; *d ^= *a; *d = rotl32(*d, 16);
    *c += *d; *b ^= *c; *b = rotl32(*b, 12);
    *a += *b; *d ^= *a; *d = rotl32(*d, 8);
    *c += *d; *b ^= *c; *b = rotl32(*b, 7);
}

int main(void) {
    volatile unsigned zero = 0, one = 1;
    volatile uint32_t x = 0x12345678u;
    CHECK(rotl32(0x80000001u, one) == 0x3u);
    CHECK(rotl32(x, 8) == 0x34567812u);
    CHECK(rotl32(x, 28) == 0x81234567u);
    CHECK(rotr32(x, 4) == 0x81234567u);
    CHECK(rotl32(x, zero) == 0x12345678u && rotr32(x, zero) == 0x12345678u);
    CHECK(rotl32(x, 32 + 8) == 0x34567812u);
    CHECK(rotl64(0x0123456789abcdefu, 13) == 0x68acf13579bde024u);
    CHECK(rotl64(0x0123456789abcdefu, zero) == 0x0123456789abcdefu);
#if defined(__clang__)
    CHECK(__builtin_rotateleft32(x, 8) == 0x34567812u);
#endif

    uint32_t a = 0x11111111u, b = 0x01020304u, c = 0x9b8d6f43u, d = 0x01234567u;
    quarter_round(&a, &b, &c, &d);
    CHECK(a == 0xea2a92f4u);
    CHECK(b == 0xcb1cf8ceu);
    CHECK(c == 0x4581472eu);
    CHECK(d == 0x5881c4bbu);

    uint32_t s = 0xcafef00du, checksum = 0;
    for (unsigned i = 0; i < 4000; i++) {
        s = s * 1664525u + 1013904223u;
        unsigned n = i % 70u;
        uint32_t r = rotl32(s, n);
        CHECK(r == rotl32_naive(s, n));
        CHECK(rotr32(r, n) == s);
        CHECK(__builtin_popcount(r) == __builtin_popcount(s));
        uint64_t wide = ((uint64_t)s << 32) | r;
        CHECK(rotl64(rotl64(wide, n), 64u - (n & 63u)) == wide);
        checksum ^= rotl32(r + checksum, i);
    }
    for (int round = 0; round < 10; round++) {
        quarter_round(&a, &b, &c, &d);
        quarter_round(&b, &c, &d, &a);
    }
    checksum ^= a ^ rotl32(b, 1) ^ rotl32(c, 2) ^ rotl32(d, 3);
    printf("c_core_bits_rotate: 0x%08x\n", checksum);
    return 0;
}
