// exercises: mini printf with va_list, vsnprintf-style truncation and return value, %d %u %x %s %c %ld %% conversions, zero-padded widths, comparison with snprintf
// Formats values into a bounded buffer with a hand-written printf and checks the output and return length against snprintf.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct out { char *buf; size_t cap, len; };

static void put(struct out *o, char c) { if (o->len + 1 < o->cap) o->buf[o->len] = c; o->len++; }

static void put_num(struct out *o, unsigned long mag, int neg, unsigned base, int width, char pad) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = "0123456789abcdef"[mag % base]; mag /= base; } while (mag);
    if (neg) { if (pad == '0') put(o, '-'); width--; }
    for (int w = n; w < width; w++) put(o, pad);
    if (neg && pad != '0') put(o, '-');
    while (n) put(o, tmp[--n]);
}

int mini_vformat(char *buf, size_t cap, const char *fmt, va_list ap) {
    struct out o = { buf, cap, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') { put(&o, *fmt); continue; }
        fmt++;
        char pad = ' ';
        int width = 0, is_long = 0;
        if (*fmt == '0') { pad = '0'; fmt++; }
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        if (*fmt == 'l') { is_long = 1; fmt++; }
        switch (*fmt) {
        case 'd': {
            long v = is_long ? va_arg(ap, long) : va_arg(ap, int);
            put_num(&o, v < 0 ? 0ul - (unsigned long)v : (unsigned long)v, v < 0, 10, width, pad);
            break;
        }
        case 'u': put_num(&o, is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 0, 10, width, pad); break;
        case 'x': put_num(&o, is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 0, 16, width, pad); break;
        case 'c': put(&o, (char)va_arg(ap, int)); break;
        case 's': for (const char *s = va_arg(ap, const char *); *s; s++) put(&o, *s); break;
        case '%': put(&o, '%'); break;
        default: return -1;
        }
    }
    if (cap) buf[o.len < cap ? o.len : cap - 1] = '\0';
    return (int)o.len;
}

static int mini_format(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int r = mini_vformat(buf, cap, fmt, ap);
    va_end(ap);
    return r;
}

int main(void) {
    char a[64], b[64];
    volatile int vneg = -42;
    volatile long vbig = -9000000000L;
    int n = mini_format(a, sizeof a, "x=%d y=%u z=%x %s%c %%", vneg, 3000000000u, 0xbeefu, "ok", '!');
    CHECK(n == 31 && strcmp(a, "x=-42 y=3000000000 z=beef ok! %") == 0);
    CHECK(mini_format(a, sizeof a, "[%5d|%05d|%-0d]", vneg, vneg, 0) == -1);
    n = mini_format(a, sizeof a, "[%5d|%05d|%3u]", vneg, vneg, 7u);
    CHECK(n == 17 && strcmp(a, "[  -42|-0042|  7]") == 0);
    n = mini_format(a, sizeof a, "%ld %lx", vbig, 0xfedcba9876543210ul);
    CHECK(n == 28 && strcmp(a, "-9000000000 fedcba9876543210") == 0);
    n = mini_format(a, 8, "%s=%d", "truncate", 12345);
    CHECK(n == 14 && strcmp(a, "truncat") == 0);
    CHECK(mini_format(NULL, 0, "%d", 123456) == 6);
    unsigned sum = 0;
    unsigned s = 7;
    for (int i = 0; i < 60; i++) {
        s = s * 1664525u + 1013904223u;
        int v = (int)(s >> 4) - (int)(s >> 5);
        int na = mini_format(a, 24, "%d:%08x:%u:%c", v, s, s >> 3, 'a' + i % 26);
        int nb = snprintf(b, 24, "%d:%08x:%u:%c", v, s, s >> 3, 'a' + i % 26);
        CHECK(na == nb && strcmp(a, b) == 0);
        sum = sum * 131u + (unsigned)na + (unsigned char)a[na > 23 ? 22 : na - 1];
    }
    printf("c_data_mini_printf: %u\n", sum);
    return 0;
}
