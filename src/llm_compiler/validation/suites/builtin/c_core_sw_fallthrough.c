// exercises: switch fallthrough chains, Duff's device (switch jumping into a do-while), murmur3 tail handling by fallthrough, cumulative month-day sums, flag accumulation by fallthrough
// Computes Duff's-device copies, MurmurHash3 32-bit hashes and fallthrough-accumulated day counts and checks published and precomputed values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

__attribute__((noinline)) void duff_copy(unsigned char *to, const unsigned char *from, size_t count) {
    if (count == 0) return;
    size_t n = (count + 7) / 8;
    switch (count % 8) {
    case 0: do { *to++ = *from++; /* fall through */
    case 7:      *to++ = *from++; /* fall through */
    case 6:      *to++ = *from++; /* fall through */
    case 5:      *to++ = *from++; /* fall through */
    case 4:      *to++ = *from++; /* fall through */
    case 3:      *to++ = *from++; /* fall through */
    case 2:      *to++ = *from++; /* fall through */
    case 1:      *to++ = *from++;
            } while (--n > 0);
    }
}

static uint32_t rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t murmur3_32(const unsigned char *p, size_t len, uint32_t seed) {
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed, k;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++) {
        k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        k *= c1; k = rotl(k, 15); k *= c2;
        h ^= k; h = rotl(h, 13); h = h * 5u + 0xe6546b64u;
    }
    const unsigned char *tail = p + nblocks * 4;
    k = 0;
    switch (len & 3u) {
    case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1: k ^= tail[0]; k *= c1; k = rotl(k, 15); k *= c2; h ^= k; break;
    default: break;
    }
    h ^= (uint32_t)len;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return h;
}

/* days from the first of month m to the end of a non-leap year */
static int days_left(int m) {
    int d = 0;
    switch (m) {
    case 1: d += 31; /* fall through */
    case 2: d += 28; /* fall through */
    case 3: d += 31; /* fall through */
    case 4: d += 30; /* fall through */
    case 5: d += 31; /* fall through */
    case 6: d += 30; /* fall through */
    case 7: d += 31; /* fall through */
    case 8: d += 31; /* fall through */
    case 9: d += 30; /* fall through */
    case 10: d += 31; /* fall through */
    case 11: d += 30; /* fall through */
    case 12: d += 31; break;
    default: return -1;
    }
    return d;
}

int main(void) {
    unsigned char src[64], dst[64];
    for (int i = 0; i < 64; i++) src[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n <= 40; n++) {
        memset(dst, 0xee, sizeof dst);
        duff_copy(dst + 3, src + 1, n);
        CHECK(memcmp(dst + 3, src + 1, n) == 0);
        CHECK(dst[2] == 0xee && dst[3 + n] == 0xee);
    }
    static const char *const msgs[8] = {"", "a", "ab", "abc", "abcd", "hello", "hello, world",
                                        "The quick brown fox jumps over the lazy dog"};
    static const uint32_t h0[8] = {0x0u, 0x3c2569b2u, 0x9bbfd75fu, 0xb3dd93fau, 0x43ed676au, 0x248bfa47u, 0x149bbb7fu, 0x2e4ff723u};
    static const uint32_t hs[8] = {0xebb6c228u, 0x7fa09ea6u, 0x74875592u, 0xc84a62ddu, 0xf0478627u, 0x5d7f56e8u, 0x9a933e00u, 0x2fa826cdu};
    uint32_t checksum = 0;
    volatile uint32_t seed = 0x9747b28cu;
    for (int i = 0; i < 8; i++) {
        const unsigned char *m = (const unsigned char *)msgs[i];
        CHECK(murmur3_32(m, strlen(msgs[i]), 0) == h0[i]);
        CHECK(murmur3_32(m, strlen(msgs[i]), seed) == hs[i]);
        checksum ^= murmur3_32(m, strlen(msgs[i]), (uint32_t)i);
    }
    CHECK(murmur3_32((const unsigned char *)"hello", 5, 0) == 0x248bfa47u);
    static const int want[12] = {365, 334, 306, 275, 245, 214, 184, 153, 122, 92, 61, 31};
    volatile int month = 1;
    CHECK(days_left(month) == 365);
    for (int m = 1; m <= 12; m++) { CHECK(days_left(m) == want[m - 1]); checksum += (uint32_t)days_left(m); }
    CHECK(days_left(0) == -1 && days_left(13) == -1);
    printf("c_core_sw_fallthrough: 0x%08x\n", checksum);
    return 0;
}
