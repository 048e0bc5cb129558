// exercises: 64-bit unsigned multiply wraparound, xor-shift mixing, splitmix64, murmur3 fmix64, xorshift64, multiplicative inverse mod 2^64 by Newton iteration, inverse mixing
// Computes 64-bit hash mixers and their exact inverses and checks known outputs plus round-trips.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t smix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t splitmix_next(uint64_t *state) {
    *state += 0x9e3779b97f4a7c15u;
    return smix(*state);
}

uint64_t fmix64(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdu;
    k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53u;
    return k ^ (k >> 33);
}

static uint64_t xorshift64(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}

/* inverse of an odd number modulo 2^64: each Newton step doubles correct bits */
__attribute__((noinline)) uint64_t inv_odd(uint64_t a) {
    uint64_t x = a; /* correct to 3 bits since a*a == 1 mod 8 */
    for (int i = 0; i < 5; i++) x *= 2u - a * x;
    return x;
}

static uint64_t unxorshr(uint64_t y, unsigned k) {
    uint64_t x = y;
    for (unsigned s = k; s < 64; s += k) x = y ^ (x >> k);
    return x;
}

static uint64_t unsmix(uint64_t z) {
    z = unxorshr(z, 31);
    z *= inv_odd(0x94d049bb133111ebu);
    z = unxorshr(z, 27);
    z *= inv_odd(0xbf58476d1ce4e5b9u);
    return unxorshr(z, 30);
}

int main(void) {
    uint64_t st = 0;
    CHECK(splitmix_next(&st) == 0xe220a8397b1dcdafu);
    CHECK(splitmix_next(&st) == 0x6e789e6aa1b965f4u);
    CHECK(splitmix_next(&st) == 0x06c45d188009454fu);
    volatile uint64_t seed = 1234567u;
    st = seed;
    CHECK(splitmix_next(&st) == 0x599ed017fb08fc85u);
    CHECK(splitmix_next(&st) == 0x2c73f08458540fa5u);
    CHECK(fmix64(0) == 0);
    CHECK(fmix64(1) == 0xb456bcfc34c2cb2cu);
    CHECK(fmix64(0xdeadbeefu) == 0xd24bd59f862a1dacu);
    CHECK(fmix64(UINT64_MAX) == 0x64b5720b4b825f21u);
    CHECK(inv_odd(0xbf58476d1ce4e5b9u) == 0x96de1b173f119089u);
    uint64_t xs = 88172645463325252u;
    CHECK(xorshift64(&xs) == 0x79690975fbde15b0u);
    CHECK(xorshift64(&xs) == 0x2a337357ae2cc59bu);
    CHECK(xorshift64(&xs) == 0x2fef107a27529ad0u);
    uint64_t checksum = 0;
    for (int i = 0; i < 3000; i++) {
        uint64_t v = xorshift64(&xs);
        uint64_t h = smix(v);
        CHECK(unsmix(h) == v);
        CHECK((v | 1u) * inv_odd(v | 1u) == 1u);
        checksum ^= h + (uint64_t)i * 0x100000001b3u;
        checksum = (checksum << 7) | (checksum >> 57);
    }
    printf("c_core_int_mix64: 0x%016llx\n", (unsigned long long)checksum);
    return 0;
}
