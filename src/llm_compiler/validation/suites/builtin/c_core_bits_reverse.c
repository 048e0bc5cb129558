// exercises: bit reversal by loop and by mask-and-swap, byte reversal table, byte swapping 16/32/64 by hand vs __builtin_bswap, endian-independent loads/stores from byte arrays
// Computes bit-reversed and byte-swapped words and little/big-endian encodings and checks them against known values and builtins.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint32_t rev32_loop(uint32_t x) {
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) { r = (r << 1) | (x & 1u); x >>= 1; }
    return r;
}

static uint32_t rev32_swap(uint32_t x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    return (x >> 16) | (x << 16);
}

static unsigned char rev8_tab[256];

__attribute__((noinline)) static uint64_t rev64_table(uint64_t x) {
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) { r = (r << 8) | rev8_tab[x & 0xffu]; x >>= 8; }
    return r;
}

uint16_t bswap16(uint16_t x) { return (uint16_t)((x >> 8) | (x << 8)); }
uint32_t bswap32(uint32_t x) {
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}
static uint64_t bswap64(uint64_t x) { return ((uint64_t)bswap32((uint32_t)x) << 32) | bswap32((uint32_t)(x >> 32)); }

static uint64_t load_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}
static uint32_t load_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static void store_be64(unsigned char *p, uint64_t v) {
    for (int i = 7; i >= 0; i--) { p[i] = (unsigned char)(v & 0xffu); v >>= 8; }
}

int main(void) {
    for (int i = 0; i < 256; i++) rev8_tab[i] = (unsigned char)(rev32_loop((uint32_t)i) >> 24);
    static const uint32_t in[5] = {1, 0x12345678u, 0xdeadbeefu, 0xf0000000u, 0x80000001u};
    static const uint32_t out[5] = {0x80000000u, 0x1e6a2c48u, 0xf77db57bu, 0xfu, 0x80000001u};
    for (int i = 0; i < 5; i++) {
        volatile uint32_t x = in[i];
        CHECK(rev32_loop(x) == out[i] && rev32_swap(x) == out[i]);
    }
    volatile uint64_t w = 0x0123456789abcdefu;
    CHECK(rev64_table(w) == 0xf7b3d591e6a2c480u);
    CHECK(bswap64(w) == 0xefcdab8967452301u);
    CHECK(__builtin_bswap64(w) == 0xefcdab8967452301u);
    CHECK(bswap32(0x12345678u) == 0x78563412u);
    CHECK(bswap16(0xabcdu) == 0xcdabu);
    static const unsigned char bytes[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
    CHECK(load_le64(bytes) == 0xfedcba9876543210u);
    CHECK(load_be32(bytes) == 0x10325476u);
    unsigned char buf[8];
    store_be64(buf, w);
    CHECK(buf[0] == 0x01 && buf[7] == 0xef);
    CHECK(load_le64(buf) == bswap64(w));
    uint64_t s = 0x2545f4914f6cdd1du, checksum = 0;
    for (int i = 0; i < 5000; i++) {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        uint32_t lo = (uint32_t)s;
        CHECK(rev32_swap(lo) == rev32_loop(lo));
        CHECK(rev32_swap(rev32_swap(lo)) == lo);
        CHECK(bswap32(lo) == __builtin_bswap32(lo));
        CHECK(rev64_table(s) == (((uint64_t)rev32_swap(lo) << 32) | rev32_swap((uint32_t)(s >> 32))));
        checksum = (checksum ^ rev64_table(s)) * 0x100000001b3u;
    }
    printf("c_core_bits_reverse: 0x%016llx\n", (unsigned long long)checksum);
    return 0;
}
