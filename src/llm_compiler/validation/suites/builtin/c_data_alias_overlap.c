// exercises: pointer aliasing, same-address arguments, overlapping ranges, alias-safe swap, accumulators that point into their input, matrix multiply into an operand
// Calls functions with aliased and overlapping pointer arguments and checks the results follow the C abstract machine exactly.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void xor_swap(unsigned *a, unsigned *b) {
    if (a == b) return; /* the xor trick would zero the value if both point to one object */
    *a ^= *b; *b ^= *a; *a ^= *b;
}

/* p and q may be the same object; both updates must land. */
void bump(int *p, int *q) { *p += 1; *q += 10; *p *= 2; }

/* acc may point into v: every read of v must see earlier stores through acc. */
int accumulate(int *acc, const int *v, int n) {
    for (int i = 0; i < n; i++) *acc += v[i];
    return *acc;
}

/* out = a * b for 2x2 matrices; out may alias a or b, so compute into a temporary. */
void mat2_mul(int *out, const int *a, const int *b) {
    int t[4];
    t[0] = a[0] * b[0] + a[1] * b[2];
    t[1] = a[0] * b[1] + a[1] * b[3];
    t[2] = a[2] * b[0] + a[3] * b[2];
    t[3] = a[2] * b[1] + a[3] * b[3];
    memcpy(out, t, sizeof t);
}

/* Scales every element by the original first element even though v[0] itself changes. */
static void scale_by_first(int *v, int n) {
    int k = v[0];
    for (int i = 0; i < n; i++) v[i] *= k;
}

/* Naive forward copy: with dst overlapping src ahead of it the pattern repeats. */
static void forward_copy(int *dst, const int *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = src[i];
}

int main(void) {
    volatile unsigned vx = 0xdeadbeefu;
    unsigned x = vx, y = 0x12345678u;
    xor_swap(&x, &y);
    CHECK(x == 0x12345678u && y == 0xdeadbeefu);
    xor_swap(&x, &x);
    CHECK(x == 0x12345678u);
    int p = 5, q = 7;
    bump(&p, &q);
    CHECK(p == 12 && q == 17);
    bump(&p, &p);
    CHECK(p == 46);
    int v[6] = { 1, 2, 3, 4, 5, 6 };
    CHECK(accumulate(&v[2], v, 6) == 27); /* 3 +1 +2 +6 (itself) +4 +5 +6 */
    CHECK(v[2] == 27 && v[1] == 2);
    int w[6] = { 1, 2, 3, 4, 5, 6 };
    CHECK(accumulate(&w[5], w, 6) == 42); /* last step adds 21 to itself */
    int m[4] = { 1, 1, 1, 0 };
    for (int i = 0; i < 5; i++) mat2_mul(m, m, m); /* squares: fib(2^5) */
    CHECK(m[0] == 3524578 && m[1] == 2178309 && m[3] == 1346269);
    int s[5] = { 3, 1, 4, 1, 5 };
    scale_by_first(s, 5);
    CHECK(s[0] == 9 && s[2] == 12 && s[4] == 15);
    int r[8] = { 7, 8, 9, 0, 0, 0, 0, 0 };
    forward_copy(r + 3, r, 5);
    CHECK(r[3] == 7 && r[5] == 9 && r[6] == 7 && r[7] == 8);
    int z[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    forward_copy(z, z + 2, 6);
    CHECK(z[0] == 3 && z[5] == 8 && z[6] == 7 && z[7] == 8);
    unsigned sum = x ^ (unsigned)p;
    for (int i = 0; i < 8; i++) sum = sum * 11u + (unsigned)r[i] + (unsigned)z[i];
    for (int i = 0; i < 4; i++) sum = sum * 13u + (unsigned)m[i];
    printf("c_data_alias_overlap: %u\n", sum);
    return 0;
}
