// exercises: lazily computed static lookup table, one-time initialization flag, global init counter, table-driven CRC-32, incremental updates with carried state
// Computes CRC-32 (IEEE) checksums from a table built on first use and checks known check values and incremental consistency.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint32_t crc_table[256];
static int table_ready;
int table_builds;

static void build_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
        crc_table[n] = c;
    }
    table_ready = 1;
    table_builds++;
}

static const uint32_t *get_table(void) {
    if (!table_ready) build_table();
    return crc_table;
}

/* Continues a CRC: pass 0 to start; the result can be passed back to extend it. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len) {
    const uint32_t *t = get_table();
    const unsigned char *p = data;
    crc = ~crc;
    while (len--) crc = t[(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc32_str(const char *s) { return crc32_update(0, s, strlen(s)); }

int main(void) {
    unsigned char all[256];
    volatile unsigned char vbias = 0;
    CHECK(table_builds == 0 && crc_table[1] == 0);
    CHECK(crc32_str("123456789") == 0xcbf43926u);
    CHECK(table_builds == 1);
    CHECK(crc_table[1] == 0x77073096u && crc_table[128] == 0xedb88320u && crc_table[255] == 0x2d02ef8du);
    CHECK(crc32_str("") == 0);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    CHECK(crc32_str(fox) == 0x414fa339u);
    for (int i = 0; i < 256; i++) all[i] = (unsigned char)(i + vbias);
    CHECK(crc32_update(0, all, sizeof all) == 0x29058c73u);
    size_t n = strlen(fox);
    for (size_t cut = 0; cut <= n; cut += 5) {
        uint32_t c = crc32_update(0, fox, cut);
        CHECK(crc32_update(c, fox + cut, n - cut) == 0x414fa339u);
    }
    uint32_t c1 = crc32_str("payload"), c2;
    char msg[8];
    memcpy(msg, "payload", 8);
    msg[3] ^= 0x01;
    c2 = crc32_str(msg);
    CHECK(c1 != c2);
    CHECK(table_builds == 1);
    uint32_t sum = 0;
    for (int len = 0; len <= 256; len += 16) sum = sum * 31u ^ crc32_update(sum, all, (size_t)len);
    printf("c_data_crc32_lazy_table: 0x%08x 0x%08x\n", sum, c1);
    return 0;
}
