// exercises: memset zeroing of arrays and structs, non-zero byte fill patterns, partial clears, calloc versus memset, all-zero test via overlapping memcmp, volatile wipe loops
// Fills and clears buffers, struct arrays and heap blocks with memset, calloc and a volatile wipe and checks contents and fill patterns.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct slot { uint32_t key; uint16_t hits; uint8_t used, tag; uint64_t value; };

static int all_zero(const void *p, size_t n) {
    const unsigned char *b = p;
    return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

void wipe(void *p, size_t n) {
    volatile unsigned char *b = p;
    while (n--) *b++ = 0;
}

static size_t count_byte(const void *p, size_t n, unsigned char v) {
    const unsigned char *b = p;
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += b[i] == v;
    return c;
}

int main(void) {
    volatile int vfill = 0x7f;
    struct slot table[32];
    int32_t ints[20];
    uint16_t halves[10];
    memset(table, 0xa5, sizeof table);
    CHECK(table[7].key == 0xa5a5a5a5u && table[31].value == 0xa5a5a5a5a5a5a5a5ull && table[3].used == 0xa5);
    memset(table, 0, sizeof table);
    CHECK(all_zero(table, sizeof table) && table[12].hits == 0 && table[0].value == 0);
    for (int i = 0; i < 32; i++) { table[i].key = (uint32_t)i * 7u; table[i].used = (uint8_t)(i % 3 == 0); table[i].value = (uint64_t)i << 40; }
    memset(&table[8], 0, 8 * sizeof table[0]);
    int used = 0;
    uint64_t vsum = 0;
    for (int i = 0; i < 32; i++) { used += table[i].used; vsum += table[i].value >> 40; }
    CHECK(used == 8 && vsum == 404);
    memset(ints, vfill, sizeof ints);
    CHECK(ints[0] == 0x7f7f7f7f && ints[19] == 0x7f7f7f7f);
    memset(ints, 0xff, 5 * sizeof ints[0]);
    CHECK(ints[4] == -1 && ints[5] == 0x7f7f7f7f);
    memset(halves, 0x01, sizeof halves);
    CHECK(halves[9] == 0x0101);
    CHECK(!all_zero(ints, sizeof ints) && all_zero(ints, 0));
    unsigned char *heap = calloc(300, 1), *ref = malloc(300);
    if (!heap || !ref) abort();
    memset(ref, 0, 300);
    CHECK(memcmp(heap, ref, 300) == 0 && all_zero(heap, 300));
    memset(heap + 100, 'z', 50);
    CHECK(count_byte(heap, 300, 'z') == 50 && heap[99] == 0 && heap[149] == 'z' && heap[150] == 0);
    CHECK(!all_zero(heap, 300) && all_zero(heap, 100) && all_zero(heap + 150, 150));
    wipe(heap, 300);
    CHECK(all_zero(heap, 300));
    char str[16] = "sensitive";
    wipe(str + 3, 6);
    CHECK(strlen(str) == 3 && count_byte(str, sizeof str, 0) == 13);
    unsigned sum = 0;
    for (int i = 0; i < 32; i++) sum = sum * 3u + table[i].key + table[i].used;
    for (int i = 0; i < 20; i++) sum ^= (uint32_t)ints[i] >> (i % 7);
    free(heap);
    free(ref);
    printf("c_data_memset_zero: %u\n", sum);
    return 0;
}
