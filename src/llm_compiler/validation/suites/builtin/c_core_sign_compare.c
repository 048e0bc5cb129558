// exercises: correct signed-vs-unsigned comparison, usual arithmetic conversions made explicit, mixed int64/uint64 three-way compare, mixed-type min/max, clamping to unsigned ranges, insertion sort with mixed comparator
// Computes mathematically correct comparisons between signed and unsigned integers of several widths and checks them against the converted (wrapping) comparisons.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int less_si_ui(int a, unsigned b) { return a < 0 || (unsigned)a < b; }

/* -1, 0, 1 for a <=> b over the mathematical integers */
__attribute__((noinline)) int cmp_i64_u64(int64_t a, uint64_t b) {
    if (a < 0) return -1;
    uint64_t ua = (uint64_t)a;
    return (ua > b) - (ua < b);
}

static int64_t min_mixed(int64_t a, uint32_t b) { return a < (int64_t)b ? a : (int64_t)b; }

static uint8_t clamp_u8(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

struct val { int neg; uint64_t mag; }; /* value = neg ? -(mag) : mag, using int64 or uint64 sources */

static int cmp_val(struct val x, struct val y) {
    if (x.neg != y.neg) return x.neg ? -1 : 1;
    int c = (x.mag > y.mag) - (x.mag < y.mag);
    return x.neg ? -c : c;
}

static struct val from_i64(int64_t v) {
    struct val r = { v < 0, v < 0 ? 0u - (uint64_t)v : (uint64_t)v };
    return r;
}

int main(void) {
    volatile int m1 = -1;
    volatile unsigned one = 1u;
    CHECK(((unsigned)m1 < one) == 0);        /* what the implicit conversion does */
    CHECK(less_si_ui(m1, one) == 1);          /* what was meant */
    CHECK(((long long)m1 < (long long)one) == 1);
    CHECK(less_si_ui(INT_MAX, 0x80000000u) && !less_si_ui(INT_MAX, 0x7fffffffu));
    CHECK(cmp_i64_u64(-1, 0) == -1);
    CHECK(cmp_i64_u64(INT64_MAX, 0x8000000000000000u) == -1);
    CHECK(cmp_i64_u64(INT64_MAX, 0x7fffffffffffffffu) == 0);
    CHECK(cmp_i64_u64(5, 4) == 1);
    CHECK(((uint64_t)(int64_t)m1 == UINT64_MAX));
    CHECK(min_mixed(-5, 4000000000u) == -5 && min_mixed(5000000000LL, 4000000000u) == 4000000000LL);
    CHECK(clamp_u8(m1) == 0 && clamp_u8(300) == 255 && clamp_u8(77) == 77);

    /* sort values that came from both signed and unsigned sources */
    struct val v[10];
    static const int64_t sv[5] = {-3, INT64_MIN, 42, 0, -42};
    static const uint64_t uv[5] = {UINT64_MAX, 7, 0x8000000000000000u, 3, 41};
    for (int i = 0; i < 5; i++) { v[i] = from_i64(sv[i]); v[5 + i].neg = 0; v[5 + i].mag = uv[i]; }
    for (int i = 1; i < 10; i++) {
        struct val key = v[i];
        int j = i - 1;
        while (j >= 0 && cmp_val(v[j], key) > 0) { v[j + 1] = v[j]; j--; }
        v[j + 1] = key;
    }
    CHECK(v[0].neg && v[0].mag == 0x8000000000000000u);
    CHECK(v[1].neg && v[1].mag == 42);
    CHECK(!v[4].neg && v[4].mag == 3);
    CHECK(v[9].mag == UINT64_MAX && v[8].mag == 0x8000000000000000u && !v[8].neg);
    uint64_t checksum = 0;
    for (int i = 0; i < 10; i++) checksum = checksum * 31u + v[i].mag + (uint64_t)v[i].neg;

    int wrong = 0;
    for (int a = -300; a <= 300; a += 3)
        for (unsigned b = 0; b < 600u; b += 7) {
            int good = less_si_ui(a, b);
            CHECK(good == ((long long)a < (long long)b));
            wrong += good != ((unsigned)a < b);
        }
    CHECK(wrong == 8600);
    printf("c_core_sign_compare: 0x%016llx %d\n", (unsigned long long)checksum, wrong);
    return 0;
}
