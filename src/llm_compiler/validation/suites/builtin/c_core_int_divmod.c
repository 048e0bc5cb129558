// exercises: signed division, signed modulo, negative operands, floor division, euclidean division, INT_MIN dividend, table-driven tests
// Computes truncating, floor and euclidean quotient/remainder pairs for signed 32-bit operands and checks them against a table.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct qr { int q, r; };

__attribute__((noinline)) struct qr trunc_divmod(int a, int b) {
    struct qr x = { a / b, a % b };
    return x;
}

struct qr floor_divmod(int a, int b) {
    struct qr x = { a / b, a % b };
    if (x.r != 0 && ((x.r < 0) != (b < 0))) {
        x.q -= 1;
        x.r += b;
    }
    return x;
}

static struct qr euclid_divmod(int a, int b) {
    struct qr x = { a / b, a % b };
    if (x.r < 0) {
        if (b > 0) { x.q -= 1; x.r += b; }
        else { x.q += 1; x.r -= b; }
    }
    return x;
}

static const int table[][8] = {
    /* a, b, trunc q, trunc r, floor q, floor r, euclid q, euclid r */
    {7, 2, 3, 1, 3, 1, 3, 1},
    {-7, 2, -3, -1, -4, 1, -4, 1},
    {7, -2, -3, 1, -4, -1, -3, 1},
    {-7, -2, 3, -1, 3, -1, 4, 1},
    {0, 5, 0, 0, 0, 0, 0, 0},
    {-1, 3, 0, -1, -1, 2, -1, 2},
    {1, -3, 0, 1, -1, -2, 0, 1},
    {100, 7, 14, 2, 14, 2, 14, 2},
    {-100, 7, -14, -2, -15, 5, -15, 5},
    {100, -7, -14, 2, -15, -5, -14, 2},
    {-100, -7, 14, -2, 14, -2, 15, 5},
    {INT_MIN, 2, -1073741824, 0, -1073741824, 0, -1073741824, 0},
    {INT_MIN, 7, -306783378, -2, -306783379, 5, -306783379, 5},
    {INT_MAX, -10, -214748364, 7, -214748365, -3, -214748364, 7},
    {-INT_MAX, -1, INT_MAX, 0, INT_MAX, 0, INT_MAX, 0},
    {13, 13, 1, 0, 1, 0, 1, 0},
    {-13, 13, -1, 0, -1, 0, -1, 0},
};

int main(void) {
    unsigned checksum = 0;
    size_t n = sizeof table / sizeof table[0];
    for (size_t i = 0; i < n; i++) {
        volatile int va = table[i][0], vb = table[i][1];
        int a = va, b = vb;
        struct qr t = trunc_divmod(a, b), f = floor_divmod(a, b), e = euclid_divmod(a, b);
        CHECK(t.q == table[i][2] && t.r == table[i][3]);
        CHECK(f.q == table[i][4] && f.r == table[i][5]);
        CHECK(e.q == table[i][6] && e.r == table[i][7]);
        CHECK(e.r >= 0);
        checksum = checksum * 31u + (unsigned)t.q + 7u * (unsigned)f.r + 13u * (unsigned)e.q;
    }
    volatile int m = -17;
    CHECK(m / 5 == -3);
    CHECK(m % 5 == -2);
    CHECK(floor_divmod(m, 5).q == -4);
    CHECK(euclid_divmod(m, -5).q == 4);
    CHECK(euclid_divmod(m, -5).r == 3);
    /* constant-folded versions of the same identities */
    CHECK(-17 / 5 == -3 && -17 % 5 == -2 && 17 % -5 == 2);
    printf("c_core_int_divmod: %u\n", checksum);
    return 0;
}
