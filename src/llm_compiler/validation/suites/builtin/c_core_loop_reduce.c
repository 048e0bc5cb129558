// exercises: sum/min/max/argmin reductions, dot product with widening accumulation (vectorizable), count-if, xor reduction, modular product, sum of absolute differences, any/all early-exit reductions
// Computes many reductions over two LCG-generated int arrays and checks them against values computed independently.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define N 4096

static int32_t a[N], b[N];

long long sum_i32(const int32_t *v, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}

__attribute__((noinline)) long long dot(const int32_t *restrict p, const int32_t *restrict q, int n) {
    long long s = 0;
    for (int i = 0; i < n; i++) s += (long long)p[i] * q[i];
    return s;
}

static int argmin(const int32_t *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (v[i] < v[best]) best = i;
    return best;
}

static int argmax(const int32_t *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (v[i] > v[best]) best = i;
    return best;
}

static int all_in_range(const int32_t *v, int n, int lim) {
    for (int i = 0; i < n; i++) if (v[i] > lim || v[i] < -lim) return 0;
    return 1;
}

int main(void) {
    uint32_t s = 12345u;
    volatile int n = N;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u; a[i] = (int32_t)((s >> 16) % 2001u) - 1000;
        s = s * 1103515245u + 12345u; b[i] = (int32_t)((s >> 16) % 2001u) - 1000;
    }
    CHECK(sum_i32(a, n) == -24845);
    CHECK(dot(a, b, n) == 9972612);
    int im = argmin(a, n), iM = argmax(b, n);
    CHECK(a[im] == -1000 && im == 3704);
    CHECK(b[iM] == 1000 && iM == 2969);
    int over = 0, zeros = 0;
    uint32_t usum = 0, x = 0, prod = 1;
    long long sad = 0;
    for (int i = 0; i < n; i++) {
        over += a[i] > 500;
        zeros += a[i] == 0;
        usum += (uint32_t)a[i];
        x ^= (uint32_t)b[i];
        prod = (uint32_t)((uint64_t)prod * (uint32_t)(abs(a[i]) + 1) % 1000003u);
        sad += a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
    }
    CHECK(over == 1010);
    CHECK(zeros == 2);
    CHECK(usum == 4294942451u);
    CHECK(x == 4294966602u);
    CHECK(prod == 210139u);
    CHECK(sad == 2702673);
    CHECK(all_in_range(a, n, 1000) && !all_in_range(b, n, 999));
    CHECK(dot(a, a, n) >= 0 && dot(a, b, 0) == 0);
    printf("c_core_loop_reduce: %lld %lld %u %u\n", sum_i32(a, n), dot(a, b, n), x, prod);
    return 0;
}
