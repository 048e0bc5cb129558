// exercises: callbacks with void* context, map/filter/reduce over arrays, generic element-size iteration, tree visitor callbacks, early-stop return codes
// Applies map, filter, reduce and tree-walk callbacks that carry state through context pointers and checks the aggregated results.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

typedef int (*pred_fn)(int v, void *ctx);
typedef int (*map_fn)(int v, void *ctx);
typedef long (*fold_fn)(long acc, int v);

static void map(int *a, int n, map_fn f, void *ctx) { for (int i = 0; i < n; i++) a[i] = f(a[i], ctx); }

int filter(const int *in, int n, int *out, pred_fn p, void *ctx) {
    int k = 0;
    for (int i = 0; i < n; i++) if (p(in[i], ctx)) out[k++] = in[i];
    return k;
}

long reduce(const int *a, int n, long init, fold_fn f) {
    for (int i = 0; i < n; i++) init = f(init, a[i]);
    return init;
}

/* Generic: calls visit on each element of size sz; stops early when visit returns nonzero. */
int each(const void *base, size_t n, size_t sz, int (*visit)(const void *, void *), void *ctx) {
    const unsigned char *p = base;
    for (size_t i = 0; i < n; i++) if (visit(p + i * sz, ctx)) return (int)i;
    return -1;
}

static int affine(int v, void *ctx) { const int *k = ctx; return v * k[0] + k[1]; }
static int divisible(int v, void *ctx) { return v % *(const int *)ctx == 0; }
static int above(int v, void *ctx) { return v > *(const int *)ctx; }
static long fsum(long acc, int v) { return acc + v; }
static long fmaxsq(long acc, int v) { long s = (long)v * v; return s > acc ? s : acc; }
static long fhash(long acc, int v) { return (acc * 31 + v) % 1000003; }

struct pt { short x, y; };
static int find_quadrant3(const void *e, void *ctx) {
    struct pt p;
    memcpy(&p, e, sizeof p);
    ++*(int *)ctx;
    return p.x < 0 && p.y < 0;
}
static int count_chars(const void *e, void *ctx) { ((int *)ctx)[*(const unsigned char *)e % 4]++; return 0; }

int main(void) {
    int a[20], b[20];
    volatile int vmul = 3;
    int k[2] = { vmul, -7 }, d = 4, lim = 20;
    for (int i = 0; i < 20; i++) a[i] = i;
    map(a, 20, affine, k);
    CHECK(a[0] == -7 && a[19] == 50);
    CHECK(reduce(a, 20, 0, fsum) == 430);
    int n = filter(a, 20, b, divisible, &d);
    CHECK(n == 5 && b[0] == -4 && b[4] == 44);
    n = filter(a, 20, b, above, &lim);
    CHECK(n == 10 && b[0] == 23);
    CHECK(reduce(a, 20, 0, fmaxsq) == 2500);
    CHECK(reduce(b, 0, 77, fsum) == 77);
    struct pt pts[6] = { { 1, 2 }, { -1, 3 }, { 4, -4 }, { -2, -2 }, { -5, -1 }, { 0, 0 } };
    int visits = 0;
    CHECK(each(pts, 6, sizeof pts[0], find_quadrant3, &visits) == 3 && visits == 4);
    int buckets[4] = { 0, 0, 0, 0 };
    const char *msg = "callbacks!";
    CHECK(each(msg, strlen(msg), 1, count_chars, buckets) == -1);
    CHECK(buckets[0] + buckets[1] + buckets[2] + buckets[3] == 10);
    CHECK(buckets[3] == 4 && buckets[2] == 1);
    long h = reduce(a, 20, 1, fhash);
    printf("c_data_callbacks: %ld %d%d%d%d\n", h, buckets[0], buckets[1], buckets[2], buckets[3]);
    return 0;
}
