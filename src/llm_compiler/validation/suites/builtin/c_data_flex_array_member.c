// exercises: flexible array members, malloc/realloc/free of variable-size structs, offsetof, sizeof with flexible arrays, struct header plus payload
// Builds growable integer bags as structs with flexible array members and computes statistics over them.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct bag { size_t len, cap; unsigned id; int items[]; };

static struct bag *bag_new(unsigned id, size_t cap) {
    struct bag *b = malloc(sizeof *b + cap * sizeof b->items[0]);
    if (!b) abort();
    b->len = 0; b->cap = cap; b->id = id;
    return b;
}

struct bag *bag_push(struct bag *b, int v) {
    if (b->len == b->cap) {
        size_t ncap = b->cap * 2 + 1;
        struct bag *nb = realloc(b, sizeof *b + ncap * sizeof b->items[0]);
        if (!nb) abort();
        b = nb;
        b->cap = ncap;
    }
    b->items[b->len++] = v;
    return b;
}

long bag_sum(const struct bag *b) {
    long s = 0;
    for (size_t i = 0; i < b->len; i++) s += b->items[i];
    return s;
}

static struct bag *bag_concat(const struct bag *a, const struct bag *b) {
    struct bag *r = bag_new(a->id * 100 + b->id, a->len + b->len);
    for (size_t i = 0; i < a->len; i++) r->items[r->len++] = a->items[i];
    for (size_t i = 0; i < b->len; i++) r->items[r->len++] = b->items[i];
    return r;
}

static int bag_max(const struct bag *b) {
    int m = b->items[0];
    for (size_t i = 1; i < b->len; i++) if (b->items[i] > m) m = b->items[i];
    return m;
}

int main(void) {
    volatile int vn = 25;
    int n = vn;
    CHECK(offsetof(struct bag, items) <= sizeof(struct bag));
    struct bag *sq = bag_new(1, 0), *odd = bag_new(2, 4);
    for (int i = 1; i <= n; i++) {
        sq = bag_push(sq, i * i);
        if (i % 2) odd = bag_push(odd, -i);
    }
    CHECK(sq->len == 25 && sq->cap == 31);
    CHECK(odd->len == 13 && odd->cap == 19);
    CHECK(bag_sum(sq) == 5525);
    CHECK(bag_sum(odd) == -169);
    struct bag *all = bag_concat(sq, odd);
    CHECK(all->id == 102 && all->len == 38 && all->cap == 38);
    CHECK(bag_sum(all) == 5356);
    CHECK(all->items[25] == -1 && all->items[37] == -25 && all->items[24] == 625);
    CHECK(bag_max(all) == 625 && bag_max(odd) == -1);
    unsigned sum = 0;
    for (size_t i = 0; i < all->len; i++) sum = sum * 37u + (unsigned)all->items[i];
    free(sq);
    free(odd);
    free(all);
    printf("c_data_flex_array_member: %u\n", sum);
    return 0;
}
