// exercises: euclidean gcd (recursive and iterative), binary gcd with ctz, lcm with overflow detection, extended euclid with signed coefficients, nested reduction loops
// Computes gcd, lcm and Bezout coefficients of 64-bit integers and checks them against known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t gcd_rec(uint64_t a, uint64_t b) { return b ? gcd_rec(b, a % b) : a; }

uint64_t gcd_iter(uint64_t a, uint64_t b) {
    while (b != 0) { uint64_t t = a % b; a = b; b = t; }
    return a;
}

__attribute__((noinline)) uint64_t gcd_binary(uint64_t a, uint64_t b) {
    if (a == 0) return b;
    if (b == 0) return a;
    int shift = __builtin_ctzll(a | b);
    a >>= __builtin_ctzll(a);
    do {
        b >>= __builtin_ctzll(b);
        if (a > b) { uint64_t t = a; a = b; b = t; }
        b -= a;
    } while (b != 0);
    return a << shift;
}

/* returns 0 when either input is 0 or the lcm does not fit in 64 bits */
static uint64_t lcm_checked(uint64_t a, uint64_t b) {
    if (a == 0 || b == 0) return 0;
    uint64_t r;
    if (__builtin_mul_overflow(a / gcd_iter(a, b), b, &r)) return 0;
    return r;
}

int64_t ext_gcd(int64_t a, int64_t b, int64_t *x, int64_t *y) {
    int64_t r0 = a, r1 = b, s0 = 1, s1 = 0, t0 = 0, t1 = 1;
    while (r1 != 0) {
        int64_t q = r0 / r1, t;
        t = r0 - q * r1; r0 = r1; r1 = t;
        t = s0 - q * s1; s0 = s1; s1 = t;
        t = t0 - q * t1; t0 = t1; t1 = t;
    }
    *x = s0; *y = t0;
    return r0;
}

int main(void) {
    static const uint64_t tab[][4] = {
        {0, 0, 0, 0}, {0, 9, 9, 0}, {12, 18, 6, 36}, {17, 5, 1, 85},
        {1071, 462, 21, 23562},
        {1099511627776u, 3656158440062976u, 1048576u, 0},
        {600851475143u, 486847u, 486847u, 600851475143u},
        {18446744073709551557u, 18446744073709551533u, 1, 0},
        {12884901888u, 38654705664u, 12884901888u, 38654705664u},
    };
    uint64_t checksum = 0;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        volatile uint64_t a = tab[i][0], b = tab[i][1];
        CHECK(gcd_rec(a, b) == tab[i][2]);
        CHECK(gcd_iter(b, a) == tab[i][2]);
        CHECK(gcd_binary(a, b) == tab[i][2]);
        CHECK(lcm_checked(a, b) == tab[i][3]);
        checksum = checksum * 1000003u + gcd_binary(a, b) + lcm_checked(a, b);
    }
    int64_t x, y;
    volatile int64_t ea = 240;
    CHECK(ext_gcd(ea, 46, &x, &y) == 2);
    CHECK(x == -9);
    CHECK(y == 47);
    CHECK(ext_gcd(65537, 4294967291, &x, &y) == 1);
    CHECK(65537 * x + 4294967291 * y == 1);
    CHECK(ext_gcd(99, 78, &x, &y) == 3 && 99 * x + 78 * y == 3);
    uint64_t s = 0;
    for (uint64_t i = 1; i <= 60; i++)
        for (uint64_t j = 1; j <= 60; j++) s += gcd_iter(i, j);
    CHECK(s == 10160);
    uint64_t l = 1;
    for (uint64_t i = 1; i <= 30; i++) l = lcm_checked(l, i);
    CHECK(l == 2329089562800u);
    checksum ^= s + l;
    printf("c_core_int_gcd_lcm: 0x%016llx\n", (unsigned long long)checksum);
    return 0;
}
