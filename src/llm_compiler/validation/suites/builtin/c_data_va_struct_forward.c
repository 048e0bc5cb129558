// exercises: structs passed through varargs, large and small struct va_arg, function pointers as variadic arguments, forwarding a va_list to vsnprintf
// Computes polygon perimeters and areas from struct points passed as variadic arguments and formats a report through vsnprintf.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct pt { int x, y; };
struct box { long lo[3], hi[3]; };

/* Twice the signed area of a polygon given as n struct pt varargs (shoelace formula). */
long area2(int n, ...) {
    va_list ap;
    va_start(ap, n);
    struct pt first = va_arg(ap, struct pt), prev = first;
    long s = 0;
    for (int i = 1; i < n; i++) {
        struct pt p = va_arg(ap, struct pt);
        s += (long)prev.x * p.y - (long)p.x * prev.y;
        prev = p;
    }
    s += (long)prev.x * first.y - (long)first.x * prev.y;
    va_end(ap);
    return s;
}

static long manhattan_perimeter(int n, ...) {
    va_list ap;
    va_start(ap, n);
    struct pt first = va_arg(ap, struct pt), prev = first;
    long s = 0;
    for (int i = 1; i <= n; i++) {
        struct pt p = i < n ? va_arg(ap, struct pt) : first;
        s += labs((long)p.x - prev.x) + labs((long)p.y - prev.y);
        prev = p;
    }
    va_end(ap);
    return s;
}

static long total_volume(int n, ...) {
    va_list ap;
    va_start(ap, n);
    long v = 0;
    for (int i = 0; i < n; i++) {
        struct box b = va_arg(ap, struct box);
        v += (b.hi[0] - b.lo[0]) * (b.hi[1] - b.lo[1]) * (b.hi[2] - b.lo[2]);
    }
    va_end(ap);
    return v;
}

static int apply_all(int x, int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) x = va_arg(ap, int (*)(int))(x);
    va_end(ap);
    return x;
}
static int twice(int v) { return v * 2; }
static int dec(int v) { return v - 1; }

int report(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

int main(void) {
    volatile int vs = 4;
    int s = vs;
    struct pt a = { 0, 0 }, b = { s, 0 }, c = { s, 3 }, d = { 0, 3 };
    CHECK(area2(4, a, b, c, d) == 24);
    CHECK(area2(4, a, d, c, b) == -24);
    CHECK(area2(3, a, b, c) == 12);
    CHECK(manhattan_perimeter(4, a, b, c, d) == 14);
    CHECK(manhattan_perimeter(3, a, b, c) == 14);
    struct pt star[5] = { { 0, 5 }, { 3, -4 }, { -5, 1 }, { 5, 1 }, { -3, -4 } };
    CHECK(area2(5, star[0], star[1], star[2], star[3], star[4]) == -74);
    struct box b1 = { { 0, 0, 0 }, { 2, 3, 4 } }, b2 = { { -1, -1, -1 }, { 1, 1, 1 } };
    CHECK(total_volume(2, b1, b2) == 32);
    CHECK(total_volume(3, b1, b1, b2) == 56);
    CHECK(apply_all(5, 3, twice, dec, twice) == 18);
    CHECK(apply_all(s, 0) == 4);
    char buf[64];
    int n = report(buf, sizeof buf, "area=%ld perim=%ld tag=%s", area2(4, a, b, c, d), manhattan_perimeter(4, a, b, c, d), "rect");
    CHECK(n == 25 && strcmp(buf, "area=24 perim=14 tag=rect") == 0);
    CHECK(report(buf, 6, "%d-%d", 12345, 678) == 9 && strcmp(buf, "12345") == 0);
    unsigned sum = (unsigned)n;
    for (int i = 1; i <= 20; i++) {
        struct pt p = { i, -i }, q = { i * 2, i % 5 }, r = { -i, 7 };
        sum = sum * 29u + (unsigned)area2(3, p, q, r) + (unsigned)manhattan_perimeter(3, p, q, r);
    }
    printf("c_data_va_struct_forward: %u\n", sum);
    return 0;
}
