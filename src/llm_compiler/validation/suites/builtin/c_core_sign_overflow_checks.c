// exercises: pre-checked signed add/sub/mul overflow detection, __builtin_add/sub/mul_overflow cross-check, unsigned absolute difference, overflow-free midpoint, sign function, extreme-value operand grid
// Computes overflow predicates, absolute differences and midpoints over a grid of extreme 32-bit operands and checks them against exact counts.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int add_ovf(int a, int b) { return b > 0 ? a > INT_MAX - b : a < INT_MIN - b; }
int sub_ovf(int a, int b) { return b < 0 ? a > INT_MAX + b : a < INT_MIN + b; }

__attribute__((noinline)) static int mul_ovf(int a, int b) {
    if (a == 0 || b == 0) return 0;
    if (a > 0) return b > 0 ? a > INT_MAX / b : b < INT_MIN / a;
    return b > 0 ? a < INT_MIN / b : a < INT_MAX / b;
}

static unsigned absdiff(int a, int b) {
    return a > b ? (unsigned)a - (unsigned)b : (unsigned)b - (unsigned)a;
}

/* midpoint rounded towards a; the result lies between a and b so the final add cannot overflow */
static int midpoint(int a, int b) {
    if (a <= b) return a + (int)(((unsigned)b - (unsigned)a) / 2u);
    return a - (int)(((unsigned)a - (unsigned)b) / 2u);
}

static int sign(int x) { return (x > 0) - (x < 0); }

int main(void) {
    static const int grid[15] = {INT_MIN, INT_MIN + 1, -65536, -46341, -46340, -2, -1, 0,
                                 1, 2, 46340, 46341, 65536, INT_MAX - 1, INT_MAX};
    int nadd = 0, nsub = 0, nmul = 0;
    unsigned dsum = 0;
    long long msum = 0;
    for (int i = 0; i < 15; i++)
        for (int j = 0; j < 15; j++) {
            volatile int a = grid[i], b = grid[j];
            int r;
            CHECK(add_ovf(a, b) == __builtin_add_overflow(a, b, &r));
            CHECK(sub_ovf(a, b) == __builtin_sub_overflow(a, b, &r));
            CHECK(mul_ovf(a, b) == __builtin_mul_overflow(a, b, &r));
            if (!mul_ovf(a, b)) CHECK((long long)a * b == (long long)(a * b));
            nadd += add_ovf(a, b); nsub += sub_ovf(a, b); nmul += mul_ovf(a, b);
            dsum += absdiff(a, b);
            CHECK((long long)absdiff(a, b) == ((long long)a > b ? (long long)a - b : (long long)b - a));
            int m = midpoint(a, b);
            CHECK((a <= m && m <= b) || (b <= m && m <= a));
            msum += m;
        }
    CHECK(nadd == 44);
    CHECK(nsub == 44);
    CHECK(nmul == 106);
    CHECK(dsum == 5216452u);
    CHECK(msum == -30);
    volatile int mn = INT_MIN, mx = INT_MAX;
    CHECK(midpoint(mn, mx) == -1 && midpoint(mx, mn) == 0);
    CHECK(midpoint(-3, 0) == -2 && midpoint(0, -3) == -1 && midpoint(3, 0) == 2);
    CHECK(absdiff(mn, mx) == 4294967295u);
    CHECK(sign(mn) == -1 && sign(0) == 0 && sign(mx) == 1);
    CHECK(mul_ovf(-1, mn) && !mul_ovf(1, mn) && mul_ovf(46341, 46341) && !mul_ovf(-46341, 46340));
    printf("c_core_sign_overflow_checks: %d %d %d %u\n", nadd, nsub, nmul, dsum);
    return 0;
}
