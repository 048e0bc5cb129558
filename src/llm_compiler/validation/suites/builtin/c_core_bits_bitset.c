// exercises: word-array bitset set/clear/test, bit indexing with shifts and masks, sieve of Eratosthenes, popcount over words, set union/intersection/difference, iterating set bits with ctz
// Computes a bitset prime sieve below 100000 and bitset set algebra on multiples of 3 and 5 and checks counts and sums.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define NBITS 100000u
#define NWORDS ((NBITS + 63u) / 64u)

static uint64_t composite[NWORDS], m3[NWORDS], m5[NWORDS], tmp[NWORDS];

static void bs_set(uint64_t *b, uint32_t i) { b[i >> 6] |= (uint64_t)1 << (i & 63u); }
static void bs_clear(uint64_t *b, uint32_t i) { b[i >> 6] &= ~((uint64_t)1 << (i & 63u)); }
int bs_test(const uint64_t *b, uint32_t i) { return (int)((b[i >> 6] >> (i & 63u)) & 1u); }

uint32_t bs_count(const uint64_t *b) {
    uint32_t n = 0;
    for (uint32_t w = 0; w < NWORDS; w++) n += (uint32_t)__builtin_popcountll(b[w]);
    return n;
}

__attribute__((noinline)) static void sieve(uint64_t *c, uint32_t n) {
    bs_set(c, 0); bs_set(c, 1);
    for (uint32_t i = 2; i * i < n; i++)
        if (!bs_test(c, i))
            for (uint32_t j = i * i; j < n; j += i) bs_set(c, j);
    for (uint32_t j = n; j < NWORDS * 64u; j++) bs_set(c, j); /* padding bits are not primes */
}

int main(void) {
    sieve(composite, NBITS);
    uint32_t nprimes = NWORDS * 64u - bs_count(composite);
    CHECK(nprimes == 9592);
    uint64_t sum = 0;
    uint32_t twins = 0, last = 0, ones = 0;
    for (uint32_t w = 0; w < NWORDS; w++) {
        uint64_t bits = ~composite[w];
        while (bits) {
            uint32_t p = w * 64u + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
            sum += p;
            if (p + 2 < NBITS && !bs_test(composite, p + 2)) twins++;
            ones += (p % 4u == 1u);
            last = p;
        }
    }
    CHECK(sum == 454396537u);
    CHECK(twins == 1224);
    CHECK(last == 99991);
    CHECK(ones == 4783);
    volatile uint32_t probe = 97;
    CHECK(!bs_test(composite, probe) && bs_test(composite, probe + 2));

    for (uint32_t i = 0; i < NBITS; i += 3) bs_set(m3, i);
    for (uint32_t i = 0; i < NBITS; i += 5) bs_set(m5, i);
    for (uint32_t w = 0; w < NWORDS; w++) tmp[w] = m3[w] | m5[w];
    CHECK(bs_count(tmp) == 46667);
    for (uint32_t w = 0; w < NWORDS; w++) tmp[w] = m3[w] & m5[w];
    CHECK(bs_count(tmp) == 6667);
    for (uint32_t w = 0; w < NWORDS; w++) tmp[w] = m3[w] & ~m5[w];
    CHECK(bs_count(tmp) == 26667);
    bs_clear(m3, 99999);
    bs_clear(m3, 99998); /* already clear */
    CHECK(bs_count(m3) == 33333);
    CHECK(bs_test(m3, 99996) && !bs_test(m3, 99999));
    uint32_t checksum = (uint32_t)sum ^ (twins << 16) ^ nprimes;
    printf("c_core_bits_bitset: %u %u\n", nprimes, checksum);
    return 0;
}
