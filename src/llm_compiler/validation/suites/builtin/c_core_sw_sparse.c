// exercises: sparse switch with widely spaced case values (binary search or compare chains), negative case labels, 64-bit switch operand, switch inside a scanning loop, default-heavy dispatch
// Computes file-signature identification, HTTP status categorisation and scattered-key scoring through sparse switches and checks counts.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int magic_id(uint32_t m) {
    switch (m) {
    case 0x7f454c46u: return 1; /* ELF */
    case 0x89504e47u: return 2; /* PNG */
    case 0x25504446u: return 3; /* PDF */
    case 0x504b0304u: return 4; /* ZIP */
    case 0xcafebabeu: return 5;
    case 0xfeedfaceu: return 6;
    case 0x47494638u: return 7; /* GIF8 */
    case 0x00000100u: return 8;
    default: return 0;
    }
}

static int http_class(int code) {
    switch (code) {
    case 100: case 101: return 1;
    case 200: case 201: case 204: return 2;
    case 301: case 302: case 304: return 3;
    case 400: case 401: case 403: case 404: case 418: return 4;
    case 500: case 502: case 503: return 5;
    default: return -1;
    }
}

__attribute__((noinline)) static int score(int64_t key) {
    switch (key) {
    case -1000000000000LL: return 17;
    case -65536: return 3;
    case -1: return 1;
    case 0: return 0;
    case 7: return 70;
    case 4096: return 12;
    case 1000003: return 99;
    case 4294967296LL: return 33;
    case 9000000000000000000LL: return 5;
    default: return -2;
    }
}

int main(void) {
    static const unsigned char blob[] = "\x7f" "ELF....\x89PNG%PDF-1.4 PK\x03\x04 \xca\xfe\xba\xbe GIF89a \xfe\xed\xfa\xce";
    int found[9] = {0};
    uint32_t positions = 0;
    for (size_t i = 0; i + 4 <= sizeof blob - 1; i++) {
        uint32_t w = (uint32_t)blob[i] << 24 | (uint32_t)blob[i + 1] << 16 | (uint32_t)blob[i + 2] << 8 | blob[i + 3];
        int id = magic_id(w);
        found[id]++;
        if (id) positions = positions * 41u + (uint32_t)i;
    }
    CHECK(found[1] == 1 && found[2] == 1 && found[3] == 1 && found[4] == 1);
    CHECK(found[5] == 1 && found[6] == 1 && found[7] == 1 && found[8] == 0);
    CHECK(positions == 962251096u);
    volatile uint32_t elf = 0x7f454c46u;
    CHECK(magic_id(elf) == 1 && magic_id(elf + 1u) == 0);

    int hist[7] = {0};
    for (int c = 0; c < 700; c++) hist[http_class(c) + 1]++;
    CHECK(hist[0] == 684);
    CHECK(hist[2] == 2 && hist[3] == 3 && hist[4] == 3 && hist[5] == 5 && hist[6] == 3);
    volatile int teapot = 418;
    CHECK(http_class(teapot) == 4);

    static const int64_t keys[12] = {-1000000000000LL, -65536, -65535, -1, 0, 1, 7, 4096, 1000003,
                                     4294967296LL, 4294967297LL, 9000000000000000000LL};
    int total = 0;
    for (int i = 0; i < 12; i++) total = total * 3 + score(keys[i]);
    CHECK(total == 3175334);
    CHECK(score(-1) == 1 && score(9000000000000000000LL) == 5 && score(INT64_MIN) == -2);
    printf("c_core_sw_sparse: %u %d\n", positions, total);
    return 0;
}
