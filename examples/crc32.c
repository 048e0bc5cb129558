/*
 * crc32.c: table-driven CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320)
 * over a few fixed buffers, checked against known check values.
 * Exercises: table-building nested loops, byte-at-a-time loops with table
 * lookups, shifts/xors, and a global constant-initialised array.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_LEN 4096

static uint32_t crc_table[256];

static void crc32_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) {
            if (c & 1u)
                c = 0xEDB88320u ^ (c >> 1);
            else
                c >>= 1;
        }
        crc_table[n] = c;
    }
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *data, size_t len)
{
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

static uint32_t crc32_of(const void *data, size_t len)
{
    return crc32_update(0, (const unsigned char *)data, len);
}

static void check(uint32_t got, uint32_t want)
{
    if (got != want)
        abort();
}

int main(void)
{
    static unsigned char buf[BUF_LEN];
    const char *check_str = "123456789";
    const char *fox = "The quick brown fox jumps over the lazy dog";

    crc32_init();

    /* Standard CRC-32 check value and a well-known pangram. */
    check(crc32_of(check_str, strlen(check_str)), 0xCBF43926u);
    check(crc32_of(fox, strlen(fox)), 0x414FA339u);
    check(crc32_of("", 0), 0x00000000u);

    /* A deterministic 4 KiB buffer. */
    for (unsigned i = 0; i < BUF_LEN; i++)
        buf[i] = (unsigned char)(((i * 31u + 7u) ^ (i >> 3)) & 0xFFu);
    uint32_t whole = crc32_of(buf, BUF_LEN);
    check(whole, 0xAB060335u);

    /* Incremental updates must give the same result as one pass. */
    uint32_t inc = 0;
    for (unsigned off = 0; off < BUF_LEN; off += 512)
        inc = crc32_update(inc, buf + off, 512);
    check(inc, whole);

    printf("crc32: %08x %08x\n", (unsigned)crc32_of(check_str, 9), (unsigned)whole);
    return 0;
}
