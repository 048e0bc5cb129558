// exercises: pointer arithmetic, one-past-the-end pointers, ptrdiff_t differences, backward iteration, pointer comparison, pointers into struct arrays
// Walks arrays with pointers to merge, partition, search and reverse them, and checks pointer differences against indices.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int *merge(const int *a, const int *ae, const int *b, const int *be, int *out) {
    while (a != ae && b != be) *out++ = (*b < *a) ? *b++ : *a++;
    while (a != ae) *out++ = *a++;
    while (b != be) *out++ = *b++;
    return out;
}

/* Moves elements < pivot to the front; returns pointer to first element >= pivot. */
int *partition(int *first, int *last, int pivot) {
    for (int *p = first; p != last; ++p)
        if (*p < pivot) { int t = *p; *p = *first; *first = t; ++first; }
    return first;
}

const int *find_last(const int *begin, const int *end, int v) {
    for (const int *p = end; p != begin;) {
        --p;
        if (*p == v) return p;
    }
    return end;
}

void reverse_ptr(int *lo, int *hi) {
    while (lo < hi) { --hi; if (lo == hi) break; int t = *lo; *lo++ = *hi; *hi = t; }
}

struct item { short w; int v; };

static long weight_stride(const struct item *it, size_t n, size_t step) {
    long s = 0;
    for (const struct item *p = it; (size_t)(p - it) < n; p += step) {
        s += p->w * p->v;
        if (n - (size_t)(p - it) <= step) break;
    }
    return s;
}

int main(void) {
    int a[5] = { 1, 4, 9, 16, 25 }, b[4] = { 2, 3, 10, 30 }, m[9];
    volatile int vpivot = 10;
    int *end = merge(a, a + 5, b, b + 4, m);
    CHECK(end - m == 9);
    static const int wm[9] = { 1, 2, 3, 4, 9, 10, 16, 25, 30 };
    for (int *p = m; p < end; p++) CHECK(*p == wm[p - m]);
    int *mid = partition(m, m + 9, vpivot);
    CHECK(mid - m == 5);
    for (int *p = m; p != mid; p++) CHECK(*p < 10);
    for (int *p = mid; p != m + 9; p++) CHECK(*p >= 10);
    int d[8] = { 5, 3, 5, 7, 5, 2, 8, 1 };
    CHECK(find_last(d, d + 8, 5) - d == 4);
    CHECK(find_last(d, d + 8, 9) == d + 8);
    CHECK(find_last(d, d, 5) == d);
    reverse_ptr(d, d + 8);
    CHECK(d[0] == 1 && d[1] == 8 && d[7] == 5 && d[3] == 5 && d[4] == 7);
    reverse_ptr(d + 1, d + 4);
    CHECK(d[1] == 5 && d[2] == 2 && d[3] == 8);
    struct item it[7];
    for (int i = 0; i < 7; i++) { it[i].w = (short)(i + 1); it[i].v = 10 * i - vpivot; }
    CHECK(weight_stride(it, 7, 1) == 840);
    CHECK(weight_stride(it, 7, 3) == 420);
    CHECK(weight_stride(it, 7, 7) == -10);
    ptrdiff_t diff = &it[6] - &it[2];
    CHECK(diff == 4);
    CHECK((const char *)&it[6].v - (const char *)&it[2].v == 4 * (ptrdiff_t)sizeof(struct item));
    unsigned sum = 0;
    for (const int *p = d + 8; p != d;) sum = sum * 19u + (unsigned)*--p;
    for (const int *p = m; p != m + 9; ++p) sum = sum * 7u + (unsigned)*p;
    printf("c_data_ptr_arith: %u\n", sum);
    return 0;
}
