// exercises: va_copy for multi-pass traversal, passing va_list to helper functions, v-prefixed function variants, va_list consumed by a callee, nested variadic wrappers
// Computes integer means and squared deviations in two passes over variadic lists using va_copy, and joins strings via forwarded va_lists.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static long vsum(int n, va_list ap) {
    long s = 0;
    for (int i = 0; i < n; i++) s += va_arg(ap, int);
    return s;
}

/* Returns sum of squared deviations from the truncated mean; *mean receives the mean. */
long vsq_dev(int n, long *mean, va_list ap) {
    va_list again;
    va_copy(again, ap);
    long m = n ? vsum(n, ap) / n : 0, acc = 0;
    for (int i = 0; i < n; i++) { long d = va_arg(again, int) - m; acc += d * d; }
    va_end(again);
    *mean = m;
    return acc;
}

static long sq_dev(int n, long *mean, ...) {
    va_list ap;
    va_start(ap, mean);
    long r = vsq_dev(n, mean, ap);
    va_end(ap);
    return r;
}

/* Joins n strings with sep; first pass measures, second pass copies. Caller frees. */
char *vjoin(const char *sep, int n, va_list ap) {
    va_list count;
    va_copy(count, ap);
    size_t total = 1, sl = strlen(sep);
    for (int i = 0; i < n; i++) total += strlen(va_arg(count, const char *)) + (i ? sl : 0);
    va_end(count);
    char *out = malloc(total), *p = out;
    if (!out) abort();
    for (int i = 0; i < n; i++) {
        const char *s = va_arg(ap, const char *);
        if (i) { memcpy(p, sep, sl); p += sl; }
        size_t len = strlen(s);
        memcpy(p, s, len);
        p += len;
    }
    *p = '\0';
    return out;
}

static char *join(const char *sep, int n, ...) {
    va_list ap;
    va_start(ap, n);
    char *r = vjoin(sep, n, ap);
    va_end(ap);
    return r;
}

int main(void) {
    long mean;
    volatile int v42 = 42;
    CHECK(sq_dev(6, &mean, 4, 8, 15, 16, 23, v42) == 910 && mean == 18);
    CHECK(sq_dev(3, &mean, 10, -10, 30) == 800 && mean == 10);
    CHECK(sq_dev(1, &mean, -7) == 0 && mean == -7);
    CHECK(sq_dev(0, &mean) == 0 && mean == 0);
    char *s = join(", ", 4, "alpha", "beta", "", "delta");
    CHECK(strcmp(s, "alpha, beta, , delta") == 0 && strlen(s) == 20);
    char *t = join("--", 1, "solo");
    CHECK(strcmp(t, "solo") == 0);
    char *u = join("+", 0);
    CHECK(u[0] == '\0');
    unsigned sum = 0;
    for (int i = 0; i < 12; i++) {
        long r = sq_dev(5, &mean, i, i * 2, v42 - i, -i, i * i);
        sum = sum * 37u + (unsigned)r + (unsigned)mean;
    }
    sum += (unsigned)strlen(s) * 1000u + (unsigned char)s[7];
    free(s);
    free(t);
    free(u);
    printf("c_data_va_copy: %u\n", sum);
    return 0;
}
