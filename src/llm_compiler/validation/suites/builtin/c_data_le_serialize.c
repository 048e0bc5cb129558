// exercises: little-endian byte serialization with shifts, host-endianness-independent readers, LEB128 varints, zigzag signed encoding without implementation-defined shifts, record round trips
// Serializes integers and records into byte buffers with explicit shifts and LEB128/zigzag varints and checks exact bytes and round trips.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static unsigned char *put_u16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); return p + 2; }
static unsigned char *put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); return p + 4; }
static unsigned char *put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); return p + 8; }
static uint32_t get_u32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static uint64_t to_u64(int64_t v) { return (uint64_t)v; }
static int64_t from_u64(uint64_t u) { return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1; }

size_t leb_put(unsigned char *p, uint64_t v) {
    size_t n = 0;
    do { unsigned char b = v & 0x7fu; v >>= 7; p[n++] = (unsigned char)(b | (v ? 0x80u : 0u)); } while (v);
    return n;
}

size_t leb_get(const unsigned char *p, uint64_t *out) {
    uint64_t v = 0;
    size_t n = 0;
    unsigned shift = 0;
    do { v |= (uint64_t)(p[n] & 0x7fu) << shift; shift += 7; } while (p[n++] & 0x80u);
    *out = v;
    return n;
}

static uint64_t zigzag(int64_t v) { return to_u64(v) << 1 ^ (v < 0 ? UINT64_MAX : 0u); }
static int64_t unzigzag(uint64_t u) { return from_u64(u >> 1 ^ (0u - (u & 1u))); }

int main(void) {
    unsigned char buf[64], *p = buf;
    volatile uint32_t vmagic = 0xdeadbeefu;
    volatile int64_t vneg = -2;
    memset(buf, 0, sizeof buf);
    p = put_u32(p, vmagic);
    p = put_u16(p, 0x1234);
    p = put_u64(p, to_u64(vneg));
    p = put_u32(p, (uint32_t)to_u64(-1000000));
    static const unsigned char want[18] = { 0xef, 0xbe, 0xad, 0xde, 0x34, 0x12, 0xfe, 0xff, 0xff,
                                            0xff, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xbd, 0xf0, 0xff };
    CHECK(p - buf == 18 && memcmp(buf, want, 18) == 0);
    CHECK(get_u32(buf) == 0xdeadbeefu && from_u64(get_u64(buf + 6)) == -2);
    CHECK(from_u64(0xffffffff00000000ull | get_u32(buf + 14)) == -1000000);
    size_t n = leb_put(buf, 624485);
    CHECK(n == 3 && buf[0] == 0xe5 && buf[1] == 0x8e && buf[2] == 0x26);
    CHECK(leb_put(buf, 127) == 1 && leb_put(buf, 128) == 2 && buf[0] == 0x80 && buf[1] == 0x01);
    CHECK(leb_put(buf, UINT64_MAX) == 10 && buf[9] == 0x01 && buf[8] == 0xff);
    uint64_t back;
    CHECK(leb_get(buf, &back) == 10 && back == UINT64_MAX);
    CHECK(zigzag(0) == 0 && zigzag(-1) == 1 && zigzag(1) == 2 && zigzag(-2) == 3);
    CHECK(zigzag(2147483647) == 4294967294u && zigzag(-2147483648LL) == 4294967295u);
    CHECK(unzigzag(zigzag(INT64_MIN)) == INT64_MIN && unzigzag(zigzag(INT64_MAX)) == INT64_MAX);
    uint32_t sum = 0;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t v = from_u64(s) / ((int64_t)1 << (i % 60));
        size_t len = leb_put(buf, zigzag(v));
        CHECK(leb_get(buf, &back) == len && unzigzag(back) == v);
        put_u64(buf + 16, s);
        CHECK(get_u64(buf + 16) == s);
        sum = sum * 31u + (uint32_t)len + buf[0];
    }
    printf("c_data_le_serialize: %u\n", sum);
    return 0;
}
