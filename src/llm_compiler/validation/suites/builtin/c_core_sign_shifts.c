// exercises: shifts with counts strictly below the width, masks for 0..32 bits without shifting by 32, portable arithmetic right shift of negatives, promoted uint8 shifted only after widening, signed scaling by multiplication instead of left shift
// Computes shift-based masks, field extraction and floor division by powers of two and checks them against arithmetic definitions.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint32_t low_mask(unsigned n) { return n >= 32u ? 0xffffffffu : (1u << n) - 1u; }

static uint32_t extract(uint32_t w, unsigned lo, unsigned len) { return (w >> lo) & low_mask(len); }

/* floor(x / 2^n) for 0 <= n <= 31, never shifting a negative value */
__attribute__((noinline)) int32_t asr(int32_t x, unsigned n) {
    if (x >= 0) return x >> n;
    return -1 - ((-1 - x) >> n);
}

static int32_t floor_div_pow2(int32_t x, unsigned n) {
    int64_t d = (int64_t)1 << n, q = x / d;
    return (int32_t)((x % d != 0 && x < 0) ? q - 1 : q);
}

static uint32_t pack_be(const uint8_t *b) {
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]; /* b[0] << 24 alone could overflow int */
}

int main(void) {
    volatile unsigned n0 = 0, n31 = 31, n32 = 32;
    CHECK(low_mask(n0) == 0u && low_mask(1) == 1u && low_mask(n31) == 0x7fffffffu && low_mask(n32) == 0xffffffffu);
    CHECK(extract(0xdeadbeefu, 4, 8) == 0xeeu);
    CHECK(extract(0xdeadbeefu, 28, 4) == 0xdu);
    CHECK(extract(0xdeadbeefu, 0, 32) == 0xdeadbeefu);
    CHECK((1u << n31) == 0x80000000u);
    CHECK((0x80000000u >> n31) == 1u);
    CHECK(((uint64_t)1 << 63) == 0x8000000000000000u);
    volatile int32_t neg = -7;
    CHECK(asr(neg, 1) == -4);
    CHECK(asr(neg, 0) == -7);
    CHECK(asr(INT32_MIN, 31) == -1 && asr(INT32_MIN, 4) == -134217728);
    CHECK(asr(-1, 30) == -1 && asr(7, 1) == 3);
    CHECK((1 << 30) == 1073741824 && INT32_MAX / 2 * 2 == 2147483646);
    CHECK(neg * 65536 == -458752); /* scaling a negative value: multiply, never << */
    static const uint8_t bytes[4] = {0x80, 0x01, 0xfe, 0x7f};
    CHECK(pack_be(bytes) == 0x8001fe7fu);
    uint32_t checksum = 0;
    uint32_t s = 0x12345678u;
    for (int i = 0; i < 20000; i++) {
        s ^= s << 13; s ^= s >> 17; s ^= s << 5;
        unsigned n = s % 32u;
        int32_t x = (int32_t)(s >> 1) - 0x40000000;
        CHECK(asr(x, n) == floor_div_pow2(x, n));
        uint32_t lo = s & low_mask(n), hi = s >> n;
        CHECK(((uint64_t)hi << n | lo) == s);
        CHECK(extract(s, n, 32u - n) == hi);
        checksum = checksum * 17u + (uint32_t)asr(x, n) + hi;
    }
    int64_t total = 0;
    for (int32_t x = -1000; x <= 1000; x++) total += asr(x, 3);
    CHECK(total == -875);
    printf("c_core_sign_shifts: %u %lld\n", checksum, (long long)total);
    return 0;
}
