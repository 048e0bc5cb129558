// exercises: signed-to-unsigned conversions (modular), zero vs sign extension, int8/int16/int32/int64 widening, in-range narrowing, portable unsigned-to-signed conversion, sign extension of n-bit fields
// Computes value-preserving and modular conversions between integer widths and decodes packed 12-bit two's complement fields.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* sign-extend the low `bits` bits of x (1 <= bits <= 32) without implementation-defined conversions */
int32_t sext(uint32_t x, unsigned bits) {
    uint32_t m = 1u << (bits - 1u);
    uint32_t mask = m | (m - 1u);
    x &= mask;
    if (x & m) return -(int32_t)(mask - x) - 1; /* x - 2^bits, computed without overflow */
    return (int32_t)x;
}

static int64_t u32_to_i32_value(uint32_t u) {
    return u < 0x80000000u ? (int64_t)u : (int64_t)u - 4294967296;
}

__attribute__((noinline)) static uint64_t widen_mix(int8_t a, int16_t b, int32_t c) {
    int64_t s = (int64_t)a + (int64_t)b * 256 + (int64_t)c * 65536;
    return (uint64_t)s;
}

int main(void) {
    volatile int m1 = -1, m2 = -2;
    CHECK((uint8_t)m1 == 255u);
    CHECK((uint16_t)m2 == 65534u);
    CHECK((uint32_t)(int8_t)-128 == 0xffffff80u);
    CHECK((uint64_t)(int32_t)m1 == 0xffffffffffffffffu);
    CHECK((uint64_t)(uint32_t)m1 == 0xffffffffu);
    volatile uint8_t byte = 0x80;
    CHECK((int32_t)byte == 128);
    CHECK(sext(byte, 8) == -128);
    CHECK(sext(0x7f, 8) == 127);
    CHECK(sext(0xfff, 12) == -1);
    CHECK(sext(0x800, 12) == -2048);
    CHECK(sext(0x1234, 12) == 564);
    CHECK(sext(0x80000000u, 32) == INT32_MIN && sext(0xffffffffu, 32) == -1 && sext(1u, 1) == -1);
    CHECK(u32_to_i32_value(0x80000000u) == -2147483648LL);
    CHECK(u32_to_i32_value(0xfffffffeu) == -2);
    volatile int16_t s16 = -30000;
    CHECK((int64_t)s16 * 100000 == -3000000000LL);
    CHECK((int8_t)(int16_t)-100 == -100);
    CHECK(widen_mix(-1, -1, -1) == 0xfffffffffffefeffu);
    CHECK(widen_mix(127, 32767, 2147483647) == 140737496678271u);

    /* eight signed 12-bit samples packed into 12 bytes, little-endian bit order */
    static const int32_t samples[8] = {-2048, 2047, -1, 0, 1, -300, 1000, -1234};
    unsigned char packed[12] = {0};
    for (unsigned i = 0; i < 8; i++) {
        uint32_t u = (uint32_t)samples[i] & 0xfffu;
        unsigned bit = i * 12u;
        for (unsigned k = 0; k < 12; k++)
            if (u >> k & 1u) packed[(bit + k) / 8u] |= (unsigned char)(1u << ((bit + k) % 8u));
    }
    CHECK(packed[0] == 0x00 && packed[1] == 0xf8 && packed[2] == 0x7f);
    uint32_t checksum = 0;
    for (unsigned i = 0; i < 8; i++) {
        unsigned bit = i * 12u;
        uint32_t w = (uint32_t)packed[bit / 8u] | (uint32_t)packed[bit / 8u + 1u] << 8;
        int32_t v = sext(w >> (bit % 8u), 12);
        CHECK(v == samples[i]);
        checksum = checksum * 4099u + (uint32_t)v;
    }
    int64_t total = 0;
    for (int32_t v = -40000; v <= 40000; v += 7) total += sext((uint32_t)v, 16);
    CHECK(total == 42678);
    printf("c_core_sign_widths: %u %lld\n", checksum, (long long)total);
    return 0;
}
