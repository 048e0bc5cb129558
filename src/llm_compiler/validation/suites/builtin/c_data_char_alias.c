// exercises: character-type aliasing of any object, object representation inspection, stores through unsigned char* that modify an int, in-place byte reversal, endianness detection with memcpy
// Reads and writes the bytes of integers and doubles through unsigned char pointers and checks the effects on the original objects.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int little_endian(void) {
    uint32_t one = 1;
    unsigned char b[4];
    memcpy(b, &one, 4);
    return b[0] == 1;
}

unsigned byte_sum(const void *p, size_t n) {
    const unsigned char *b = p;
    unsigned s = 0;
    while (n--) s += *b++;
    return s;
}

/* cp may point into *ip; the final load of *ip must observe the byte store. */
uint32_t store_then_load(uint32_t *ip, unsigned char *cp) {
    *ip = 0;
    *cp = 0xffu;
    return *ip;
}

void reverse_bytes(void *p, size_t n) {
    unsigned char *b = p;
    for (size_t i = 0; i < n / 2; i++) { unsigned char t = b[i]; b[i] = b[n - 1 - i]; b[n - 1 - i] = t; }
}

static uint32_t bswap32(uint32_t x) {
    return x >> 24 | (x >> 8 & 0xff00u) | (x << 8 & 0xff0000u) | x << 24;
}

int main(void) {
    volatile uint32_t vx = 0x01020304u;
    volatile double vd = 1.0;
    uint32_t x = vx;
    int le = little_endian();
    CHECK(byte_sum(&x, sizeof x) == 10);
    double d = vd;
    CHECK(byte_sum(&d, sizeof d) == 0x3fu + 0xf0u);
    uint32_t y = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t r = store_then_load(&y, (unsigned char *)&y + k);
        uint32_t want = 0xffu << (8 * (le ? k : 3 - k));
        CHECK(r == want && y == want);
    }
    memset(&y, 0xab, sizeof y);
    CHECK(y == 0xababababu);
    uint32_t z = x;
    reverse_bytes(&z, sizeof z);
    CHECK(z == bswap32(x) && z == 0x04030201u);
    uint64_t big = 0x1122334455667788ull;
    reverse_bytes(&big, sizeof big);
    CHECK(big == 0x8877665544332211ull);
    int16_t h = -2;
    unsigned char hb[2];
    memcpy(hb, &h, 2);
    CHECK(le ? (hb[0] == 0xfe && hb[1] == 0xff) : (hb[0] == 0xff && hb[1] == 0xfe));
    signed char sc;
    unsigned char uc = 0xf0;
    memcpy(&sc, &uc, 1);
    CHECK(sc == -16);
    unsigned sum = byte_sum(&big, 8) * 7u + z;
    for (unsigned char *p = (unsigned char *)&x; p != (unsigned char *)&x + 4; p++) *p ^= 0x5a;
    CHECK(x == 0x5b58595eu);
    sum ^= x;
    printf("c_data_char_alias: %u\n", sum);
    return 0;
}
