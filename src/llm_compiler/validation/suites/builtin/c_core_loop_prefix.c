// exercises: inclusive and exclusive prefix sums, range queries from prefix differences, 2-D summed-area table, difference arrays, running maximum, second-order loop-carried recurrence modulo a prime
// Computes prefix sums, range updates via difference arrays and a modular linear recurrence over fixed arrays and checks precomputed results.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define N 1000
#define G 40

static int x[N];
static long long pre[N + 1];
static int grid[G][G];
static long long sat[G + 1][G + 1];

void prefix_exclusive(const int *in, long long *out, int n) {
    out[0] = 0;
    for (int i = 0; i < n; i++) out[i + 1] = out[i] + in[i];
}

__attribute__((noinline)) static long long range_sum(const long long *p, int lo, int hi) { return p[hi] - p[lo]; }

static void summed_area(void) {
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++)
            sat[i + 1][j + 1] = grid[i][j] + sat[i][j + 1] + sat[i + 1][j] - sat[i][j];
}

int main(void) {
    volatile int n = N;
    for (int i = 0; i < n; i++) x[i] = (i * i * 7 + 3 * i) % 101 - 50;
    prefix_exclusive(x, pre, n);
    CHECK(pre[N] == -2939);
    CHECK(pre[500] == -1504);
    long long mx = pre[0], mn = pre[0];
    uint32_t psum = 0;
    for (int i = 0; i <= n; i++) {
        mx = pre[i] > mx ? pre[i] : mx;
        mn = pre[i] < mn ? pre[i] : mn;
        psum += (uint32_t)pre[i];
    }
    CHECK(mx == 14 && mn == -3054);
    CHECK(psum == 4293439166u);
    CHECK(range_sum(pre, 100, 200) == -275);
    CHECK(range_sum(pre, 37, 938) == -2759);

    long long runmax_sum = 0;
    int m = x[0];
    for (int i = 0; i < n; i++) { if (x[i] > m) m = x[i]; runmax_sum += m; }
    CHECK(runmax_sum == 49545);

    static uint32_t a[N];
    const uint32_t P = 1000000007u;
    a[0] = 1; a[1] = 1;
    uint64_t asum = 2;
    for (int i = 2; i < n; i++) {
        a[i] = (uint32_t)(((uint64_t)a[i - 1] * 3u + a[i - 2]) % P);
        asum += a[i];
    }
    CHECK(a[N - 1] == 380769612u);
    CHECK(asum % P == 869856303u);

    static long long diff[N + 1], arr[N];
    for (int q = 0; q < 200; q++) {
        int l = (q * 37) % N, r = l + (q * 13) % 97 + 1;
        if (r > N) r = N;
        diff[l] += q; diff[r] -= q;
    }
    long long run = 0, tot = 0, best = 0;
    for (int i = 0; i < n; i++) { run += diff[i]; arr[i] = run; tot += run; if (run > best) best = run; }
    CHECK(tot == 931521 && best == 1575 && arr[500] == 762);

    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) grid[i][j] = (i * 31 + j * 17) % 23 - 11;
    summed_area();
    long long box = sat[30][35] - sat[5][35] - sat[30][10] + sat[5][10];
    CHECK(box == -5);
    CHECK(sat[G][G] == 19);
    printf("c_core_loop_prefix: %u %llu %lld %lld\n", psum, (unsigned long long)(asum % P), tot, box);
    return 0;
}
