// exercises: descriptor-driven va_arg of mixed types, default argument promotions (char, short, bool, float), long long and size_t varargs, pointer varargs, writing through pointer varargs
// Serializes mixed-type variadic arguments described by a type string into a checksum and writes results back through pointer arguments.
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static unsigned long long mix(unsigned long long h, unsigned long long v) {
    return (h ^ v) * 0x100000001b3ull;
}

/* i:int c:char s:string d:double(as 1/16ths) L:long long z:size_t p:int* (incremented) b:bool h:short */
unsigned long long digest(const char *types, ...) {
    va_list ap;
    unsigned long long h = 0xcbf29ce484222325ull;
    va_start(ap, types);
    for (const char *t = types; *t; t++) {
        switch (*t) {
        case 'i': h = mix(h, (unsigned long long)(long long)va_arg(ap, int)); break;
        case 'c': h = mix(h, (unsigned char)va_arg(ap, int)); break;
        case 'h': h = mix(h, (unsigned short)va_arg(ap, int)); break;
        case 'b': h = mix(h, va_arg(ap, int) ? 1u : 0u); break;
        case 's': for (const char *s = va_arg(ap, const char *); *s; s++) h = mix(h, (unsigned char)*s); break;
        case 'd': h = mix(h, (unsigned long long)(long long)(va_arg(ap, double) * 16.0)); break;
        case 'L': h = mix(h, (unsigned long long)va_arg(ap, long long)); break;
        case 'z': h = mix(h, va_arg(ap, size_t)); break;
        case 'p': { int *p = va_arg(ap, int *); ++*p; h = mix(h, (unsigned)*p); break; }
        default: abort();
        }
    }
    va_end(ap);
    return h;
}

/* Counts how many of the typed arguments are "negative" (strings: empty). */
static int count_neg(const char *types, ...) {
    va_list ap;
    int n = 0;
    va_start(ap, types);
    for (; *types; types++) {
        if (*types == 'i') n += va_arg(ap, int) < 0;
        else if (*types == 'd') n += va_arg(ap, double) < 0.0;
        else if (*types == 'L') n += va_arg(ap, long long) < 0;
        else if (*types == 's') n += *va_arg(ap, const char *) == '\0';
        else abort();
    }
    va_end(ap);
    return n;
}

int main(void) {
    volatile float vf = -2.5f;
    volatile int vi = -3;
    char c = 'z';
    short sh = -2;
    bool flag = true;
    int counter = 41;
    unsigned long long h1 = digest("icsdLzpbh", vi, c, "hi", vf, -5000000000LL, (size_t)77, &counter, flag, sh);
    CHECK(counter == 42);
    unsigned long long h2 = digest("icsdLzpbh", -3, 'z', "hi", -2.5, -5000000000LL, (size_t)77, &counter, true, (short)-2);
    CHECK(counter == 43);
    CHECK(h1 != h2);
    counter = 41;
    unsigned long long h3 = digest("icsdLzpbh", -3, 'z', "hi", -2.5, -5000000000LL, (size_t)77, &counter, 1, -2);
    CHECK(h1 == h3);
    CHECK(digest("") == 0xcbf29ce484222325ull);
    CHECK(digest("c", 'a') == 0xaf63dc4c8601ec8cull);
    CHECK(digest("s", "a") == digest("c", 'a') && digest("i", 97) == digest("c", 'a'));
    CHECK(digest("h", -1) == digest("i", 65535));
    CHECK(count_neg("idLs", vi, (double)vf, 5LL, "") == 3);
    CHECK(count_neg("sdi", "x", 0.5, 0) == 0);
    printf("c_data_va_mixed_types: %llx %llx\n", h1, h2 ^ h1);
    return 0;
}
