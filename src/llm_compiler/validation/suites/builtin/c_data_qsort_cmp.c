// exercises: qsort with several comparator functions, overflow-safe comparisons, multi-key struct ordering, sorting an array of string pointers, descending order
// Sorts LCG-generated integers, records and strings with qsort and different comparators and checks the orderings.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_int_desc(const void *a, const void *b) { return cmp_int(b, a); }

/* Orders by remainder mod 10 (C semantics, so negatives come first), then descending value. */
int cmp_mod_then_desc(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    if (x % 10 != y % 10) return x % 10 < y % 10 ? -1 : 1;
    return (x < y) - (x > y);
}

struct player { char name[8]; int score; unsigned id; };
static int cmp_player(const void *a, const void *b) {
    const struct player *p = a, *q = b;
    if (p->score != q->score) return p->score > q->score ? -1 : 1;
    int c = strcmp(p->name, q->name);
    if (c) return c;
    return (p->id > q->id) - (p->id < q->id);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int main(void) {
    int v[40], w[40];
    volatile unsigned vseed = 12345u;
    unsigned s = vseed;
    for (int i = 0; i < 40; i++) { s = s * 1103515245u + 12345u; v[i] = (int)((s >> 8) % 2001u) - 1000; }
    memcpy(w, v, sizeof v);
    qsort(v, 40, sizeof v[0], cmp_int);
    CHECK(v[0] == -997 && v[1] == -973 && v[2] == -953 && v[39] == 974 && v[38] == 949);
    long weighted = 0;
    for (int i = 0; i < 40; i++) weighted += (long)v[i] * (i + 1);
    CHECK(weighted == 365262);
    qsort(v, 40, sizeof v[0], cmp_int_desc);
    CHECK(v[0] == 974 && v[39] == -997);
    qsort(w, 40, sizeof w[0], cmp_mod_then_desc);
    CHECK(w[0] == -429 && w[1] == -318 && w[2] == -548 && w[3] == -997);
    int ext[4] = { INT_MAX, INT_MIN, 0, -1 };
    qsort(ext, 4, sizeof ext[0], cmp_int);
    CHECK(ext[0] == INT_MIN && ext[1] == -1 && ext[3] == INT_MAX);
    struct player pl[6] = { { "eve", 50, 3 }, { "bob", 70, 1 }, { "amy", 50, 9 },
                            { "eve", 50, 2 }, { "dan", 90, 5 }, { "cat", 70, 4 } };
    qsort(pl, 6, sizeof pl[0], cmp_player);
    static const unsigned want_ids[6] = { 5, 1, 4, 9, 2, 3 };
    for (int i = 0; i < 6; i++) CHECK(pl[i].id == want_ids[i]);
    const char *names[7] = { "pear", "apple", "fig", "banana", "apricot", "Zucchini", "app" };
    qsort(names, 7, sizeof names[0], cmp_str);
    CHECK(strcmp(names[0], "Zucchini") == 0 && strcmp(names[1], "app") == 0);
    CHECK(strcmp(names[3], "apricot") == 0 && strcmp(names[6], "pear") == 0);
    unsigned sum = 0;
    for (int i = 0; i < 40; i++) sum = sum * 7u + (unsigned)w[i];
    for (int i = 0; i < 7; i++) sum = sum * 5u + (unsigned)names[i][1];
    printf("c_data_qsort_cmp: %u\n", sum);
    return 0;
}
