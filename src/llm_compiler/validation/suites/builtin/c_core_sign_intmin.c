// exercises: INT_MIN/INT64_MIN magnitude via unsigned negation, guarded INT_MIN / -1, integer-to-string of INT_MIN, overflow-checked string parsing accumulating negatively, floor average without overflow
// Computes magnitudes, decimal strings, parses and averages of extreme signed integers while avoiding every signed overflow.
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

unsigned uabs(int x) { return x < 0 ? 0u - (unsigned)x : (unsigned)x; }
static uint64_t uabs64(int64_t x) { return x < 0 ? 0u - (uint64_t)x : (uint64_t)x; }

/* returns 0 and leaves *q untouched when the quotient is not representable */
static int safe_div(int a, int b, int *q) {
    if (b == 0 || (a == INT_MIN && b == -1)) return 0;
    *q = a / b;
    return 1;
}

__attribute__((noinline)) static char *itoa10(int v, char *end) {
    unsigned u = uabs(v);
    *--end = '\0';
    do { *--end = (char)('0' + u % 10u); u /= 10u; } while (u);
    if (v < 0) *--end = '-';
    return end;
}

/* accumulate as a negative number so INT_MIN parses; 0 on overflow or junk */
int parse_int(const char *s, int *out) {
    int neg = (*s == '-'), acc = 0;
    if (neg) s++;
    if (*s == '\0') return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        int d = *s - '0';
        if (acc < (INT_MIN + d) / 10) return 0;
        acc = acc * 10 - d;
    }
    if (!neg) { if (acc == INT_MIN) return 0; acc = -acc; }
    *out = acc;
    return 1;
}

/* floor((a + b) / 2) without overflow and without right-shifting negative values */
static int avg_floor(int a, int b) {
    long long s = (long long)a + b;
    return (int)(s >= 0 ? s / 2 : -((-s + 1) / 2));
}

int main(void) {
    volatile int mn = INT_MIN;
    CHECK(uabs(mn) == 2147483648u);
    CHECK(uabs(INT_MAX) == 2147483647u && uabs(-5) == 5u);
    CHECK(uabs64(INT64_MIN) == 9223372036854775808u);
    int q = 12345;
    CHECK(!safe_div(mn, -1, &q) && q == 12345);
    CHECK(safe_div(mn, 1, &q) && q == INT_MIN);
    CHECK(safe_div(mn, -2, &q) && q == 1073741824);
    CHECK(safe_div(mn, 3, &q) && q == -715827882);
    char buf[16];
    CHECK(strcmp(itoa10(mn, buf + 16), "-2147483648") == 0);
    CHECK(strcmp(itoa10(INT_MAX, buf + 16), "2147483647") == 0);
    CHECK(strcmp(itoa10(0, buf + 16), "0") == 0);
    int v = 0;
    CHECK(parse_int("-2147483648", &v) && v == INT_MIN);
    CHECK(parse_int("2147483647", &v) && v == INT_MAX);
    CHECK(!parse_int("2147483648", &v) && !parse_int("-2147483649", &v));
    CHECK(!parse_int("99999999999", &v) && !parse_int("12a", &v) && !parse_int("-", &v));
    CHECK(parse_int("-0", &v) && v == 0);
    CHECK(avg_floor(INT_MAX, INT_MAX) == INT_MAX && avg_floor(mn, mn) == INT_MIN);
    CHECK(avg_floor(mn, INT_MAX) == -1 && avg_floor(-7, 2) == -3 && avg_floor(7, -2) == 2);
    unsigned checksum = 0;
    int x = INT_MIN;
    for (int i = 0; i < 3000; i++) {
        char *s = itoa10(x, buf + 16);
        int back;
        CHECK(parse_int(s, &back) && back == x);
        checksum = checksum * 33u + uabs(x) + (unsigned)strlen(s);
        if (x > INT_MAX - 1431655) break;
        x += 1431655;
    }
    CHECK(x == 2147481352);
    printf("c_core_sign_intmin: %u\n", checksum);
    return 0;
}
