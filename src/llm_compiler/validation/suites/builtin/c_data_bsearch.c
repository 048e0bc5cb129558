// exercises: bsearch with comparator callbacks, key type different from element type, hand-written generic lower_bound, searching sorted struct tables, void* arithmetic via char*
// Looks up keys in sorted tables with the library bsearch and a generic lower_bound and checks hits, misses and insertion points.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct sym { const char *name; int value; };
static const struct sym table[] = {
    { "add", 1 }, { "and", 2 }, { "br", 3 }, { "call", 4 }, { "icmp", 5 }, { "load", 6 },
    { "mul", 7 }, { "phi", 8 }, { "ret", 9 }, { "store", 10 }, { "sub", 11 }, { "xor", 12 },
};
#define NSYM (sizeof table / sizeof table[0])

static int cmp_key_sym(const void *key, const void *elem) {
    return strcmp((const char *)key, ((const struct sym *)elem)->name);
}
static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* First index whose element is not less than key (n if none). */
size_t lower_bound(const void *key, const void *base, size_t n, size_t sz, int (*cmp)(const void *, const void *)) {
    const char *b = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(key, b + mid * sz) > 0) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int lookup(const char *name) {
    const struct sym *s = bsearch(name, table, NSYM, sizeof table[0], cmp_key_sym);
    return s ? s->value : -1;
}

int main(void) {
    int sq[50];
    volatile int vstep = 3;
    for (int i = 0; i < 50; i++) sq[i] = i * i * vstep;
    CHECK(lookup("add") == 1 && lookup("xor") == 12 && lookup("phi") == 8 && lookup("store") == 10);
    CHECK(lookup("alloca") == -1 && lookup("zext") == -1 && lookup("") == -1);
    for (size_t i = 0; i < NSYM; i++) CHECK(lookup(table[i].name) == (int)i + 1);
    int key = 147;
    int *hit = bsearch(&key, sq, 50, sizeof sq[0], cmp_int);
    CHECK(hit && hit - sq == 7);
    key = 148;
    CHECK(bsearch(&key, sq, 50, sizeof sq[0], cmp_int) == NULL);
    CHECK(lower_bound(&key, sq, 50, sizeof sq[0], cmp_int) == 8);
    key = -5;
    CHECK(lower_bound(&key, sq, 50, sizeof sq[0], cmp_int) == 0);
    key = 7203;
    CHECK(lower_bound(&key, sq, 50, sizeof sq[0], cmp_int) == 49);
    key = 7204;
    CHECK(lower_bound(&key, sq, 50, sizeof sq[0], cmp_int) == 50);
    CHECK(lower_bound("c", table, NSYM, sizeof table[0], cmp_key_sym) == 3);
    CHECK(lower_bound("m", table, NSYM, sizeof table[0], cmp_key_sym) == 6);
    int dup[9] = { 1, 2, 2, 2, 5, 5, 8, 9, 9 };
    key = 2;
    CHECK(lower_bound(&key, dup, 9, sizeof dup[0], cmp_int) == 1);
    key = 5;
    int *d = bsearch(&key, dup, 9, sizeof dup[0], cmp_int);
    CHECK(d && *d == 5);
    unsigned sum = 0;
    for (int k = 0; k < 8000; k += 37) sum = sum * 3u + (unsigned)lower_bound(&k, sq, 50, sizeof sq[0], cmp_int);
    printf("c_data_bsearch: %u\n", sum);
    return 0;
}
