// exercises: integer to string by hand in any base, INT_MIN via unsigned magnitude, string to integer with overflow detection, comparison with snprintf
// Converts integers to and from text in bases 2 to 36 without library helpers and cross-checks against snprintf.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";

int to_str(int v, unsigned base, char *out) {
    char tmp[40];
    int n = 0, len = 0;
    unsigned mag = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do { tmp[n++] = digits[mag % base]; mag /= base; } while (mag);
    if (v < 0) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    out[len] = '\0';
    return len;
}

static int digit_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* Returns 1 on success; 0 on empty input, bad digit or out of int range. */
int from_str(const char *s, unsigned base, int *out) {
    int neg = 0;
    unsigned limit, acc = 0;
    if (*s == '-' || *s == '+') neg = *s++ == '-';
    if (!*s) return 0;
    limit = neg ? (unsigned)INT_MAX + 1u : (unsigned)INT_MAX;
    for (; *s; s++) {
        int d = digit_val(*s);
        if (d >= (int)base) return 0;
        if (acc > (limit - (unsigned)d) / base) return 0;
        acc = acc * base + (unsigned)d;
    }
    if (neg) *out = acc == (unsigned)INT_MAX + 1u ? INT_MIN : -(int)acc;
    else *out = (int)acc;
    return 1;
}

int main(void) {
    char buf[40], ref[40];
    volatile int vmin = INT_MIN, v255 = 255;
    int x;
    CHECK(to_str(v255, 16, buf) == 2 && strcmp(buf, "ff") == 0);
    CHECK(to_str(v255, 2, buf) == 8 && strcmp(buf, "11111111") == 0);
    CHECK(to_str(-v255, 36, buf) == 3 && strcmp(buf, "-73") == 0);
    CHECK(to_str(vmin, 10, buf) == 11 && strcmp(buf, "-2147483648") == 0);
    CHECK(to_str(0, 7, buf) == 1 && strcmp(buf, "0") == 0);
    CHECK(to_str(INT_MAX, 36, buf) == 6 && strcmp(buf, "zik0zj") == 0);
    CHECK(from_str("zik0zj", 36, &x) == 1 && x == INT_MAX);
    CHECK(from_str("zik0zk", 36, &x) == 0);
    CHECK(from_str("-2147483648", 10, &x) == 1 && x == INT_MIN);
    CHECK(from_str("2147483648", 10, &x) == 0);
    CHECK(from_str("-2147483649", 10, &x) == 0);
    CHECK(from_str("+7FfF", 16, &x) == 1 && x == 32767);
    CHECK(from_str("129", 8, &x) == 0 && from_str("-", 10, &x) == 0);
    CHECK(from_str("-101101", 2, &x) == 1 && x == -45);
    unsigned sum = 0;
    unsigned seed = 12345u;
    for (int i = 0; i < 200; i++) {
        seed = seed * 1664525u + 1013904223u;
        int v = (int)(seed >> 1) - (int)(seed >> 2);
        unsigned base = 2u + (seed >> 27) % 35u;
        int len = to_str(v, base, buf);
        CHECK(from_str(buf, base, &x) == 1 && x == v);
        snprintf(ref, sizeof ref, base == 10 ? "%d" : "%x", v);
        if (base == 10) CHECK(strcmp(buf, ref) == 0);
        if (base == 16 && v >= 0) CHECK(strcmp(buf, ref) == 0);
        sum = sum * 31u + (unsigned)len + (unsigned char)buf[len - 1];
    }
    printf("c_data_int_string_conv: %u\n", sum);
    return 0;
}
