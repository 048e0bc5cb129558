// exercises: initialized versus zero-initialized data, partial array initializers, designated initializers with gaps, string initializers shorter than the array, implicit zeroing of static and automatic aggregates
// Checks that every element of partially and designated-initialized static and automatic objects holds its initializer or zero.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct cfg { int mode; unsigned flags; char name[12]; int limits[4]; struct { short lo, hi; } range; };

int bss_table[64];                                    /* zero-initialized, external */
static long data_table[8] = { 1, 2, 3 };              /* rest are zero */
static int sparse[20] = { [3] = 30, [10] = 100, 11, 12, [19] = 190 };
static const char greeting[16] = "hello";
static struct cfg defaults = { .flags = 0x5u, .name = "dflt", .limits[2] = 7, .range.hi = 99 };
static struct cfg table[3] = { [1] = { 1, 2, "one", { 1 }, { -1, 1 } } };
double fractions[5] = { 0.5, [3] = 0.25 };

static int count_nonzero_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    int c = 0;
    for (size_t i = 0; i < n; i++) c += b[i] != 0;
    return c;
}

static long touch(int i) {
    static long calls;                                /* zero before first call */
    calls += i;
    return calls;
}

int main(void) {
    volatile int vi = 5;
    int i5 = vi;
    for (int i = 0; i < 64; i++) CHECK(bss_table[i] == 0);
    CHECK(data_table[2] == 3 && data_table[3] == 0 && data_table[7] == 0);
    CHECK(sparse[3] == 30 && sparse[10] == 100 && sparse[11] == 11 && sparse[12] == 12 && sparse[19] == 190);
    int nz = 0;
    for (int i = 0; i < 20; i++) nz += sparse[i] != 0;
    CHECK(nz == 5);
    CHECK(greeting[4] == 'o' && greeting[5] == '\0' && greeting[15] == '\0');
    CHECK(count_nonzero_bytes(greeting, sizeof greeting) == 5);
    CHECK(defaults.mode == 0 && defaults.flags == 5u && strcmp(defaults.name, "dflt") == 0);
    CHECK(defaults.name[11] == 0 && defaults.limits[0] == 0 && defaults.limits[2] == 7 && defaults.limits[3] == 0);
    CHECK(defaults.range.lo == 0 && defaults.range.hi == 99);
    CHECK(table[0].mode == 0 && table[0].name[0] == 0 && table[2].range.hi == 0);
    CHECK(table[1].flags == 2 && table[1].limits[0] == 1 && table[1].limits[1] == 0 && table[1].range.lo == -1);
    CHECK(fractions[0] == 0.5 && fractions[1] == 0.0 && fractions[3] == 0.25 && fractions[4] == 0.0);
    int local[10] = { i5 };
    struct cfg lc = { .mode = i5 };
    char lname[8] = "ab";
    CHECK(local[0] == 5 && local[9] == 0 && lc.flags == 0 && lc.limits[3] == 0 && lc.range.hi == 0);
    CHECK(lname[2] == 0 && lname[7] == 0);
    CHECK(touch(0) == 0 && touch(i5) == 5 && touch(3) == 8);
    bss_table[i5] = 42;
    data_table[7] = -1;
    unsigned sum = 0;
    for (int i = 0; i < 20; i++) sum = sum * 17u + (unsigned)sparse[i];
    for (int i = 0; i < 8; i++) sum = sum * 5u + (unsigned)data_table[i] + (unsigned)bss_table[i];
    sum += (unsigned)count_nonzero_bytes(&defaults.limits, sizeof defaults.limits);
    printf("c_data_init_data: %u\n", sum);
    return 0;
}
