// exercises: memoized recursion with static tables, sentinel-initialised memo arrays, two-parameter recursion (partitions, coin change), string edit distance recursion with memo, 64-bit results
// Computes Fibonacci numbers, integer partition counts, coin-change counts and edit distances by memoized recursion and checks known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t fib_memo[94];

uint64_t fib(unsigned n) {
    if (n < 2) return n;
    if (fib_memo[n]) return fib_memo[n];
    return fib_memo[n] = fib(n - 1) + fib(n - 2);
}

static long long part_memo[201][201];

/* partitions of n into parts no larger than k */
static long long partitions(int n, int k) {
    if (n == 0) return 1;
    if (k == 0) return 0;
    if (k > n) k = n;
    if (part_memo[n][k] >= 0) return part_memo[n][k];
    return part_memo[n][k] = partitions(n - k, k) + partitions(n, k - 1);
}

static const int coins[5] = {1, 5, 10, 25, 50};
static long long coin_memo[301][5];

static long long ways(int amount, int i) {
    if (amount == 0) return 1;
    if (amount < 0 || i == 5) return 0;
    if (coin_memo[amount][i] >= 0) return coin_memo[amount][i];
    return coin_memo[amount][i] = ways(amount - coins[i], i) + ways(amount, i + 1);
}

static const char *ea, *eb;
static int la, lb, ed_memo[33][33];

static int ed(int i, int j) {
    if (i == la) return lb - j;
    if (j == lb) return la - i;
    if (ed_memo[i][j] >= 0) return ed_memo[i][j];
    int r;
    if (ea[i] == eb[j]) r = ed(i + 1, j + 1);
    else {
        int x = ed(i + 1, j), y = ed(i, j + 1), z = ed(i + 1, j + 1);
        r = 1 + (x < y ? (x < z ? x : z) : (y < z ? y : z));
    }
    return ed_memo[i][j] = r;
}

__attribute__((noinline)) int edit_distance(const char *a, const char *b) {
    ea = a; eb = b; la = (int)strlen(a); lb = (int)strlen(b);
    if (la > 32 || lb > 32) abort();
    for (int i = 0; i < 33; i++) for (int j = 0; j < 33; j++) ed_memo[i][j] = -1;
    return ed(0, 0);
}

int main(void) {
    volatile unsigned n = 90;
    CHECK(fib(n) == 2880067194370816120u);
    CHECK(fib(10) == 55 && fib(1) == 1 && fib(0) == 0);
    for (unsigned i = 2; i <= 90; i++) CHECK(fib(i) == fib(i - 1) + fib(i - 2));
    for (int i = 0; i <= 200; i++) for (int j = 0; j <= 200; j++) part_memo[i][j] = -1;
    CHECK(partitions(100, 100) == 190569292);
    CHECK(partitions(200, 200) == 3972999029388LL);
    CHECK(partitions(5, 5) == 7);
    for (int i = 0; i <= 300; i++) for (int j = 0; j < 5; j++) coin_memo[i][j] = -1;
    volatile int amount = 100;
    CHECK(ways(amount, 0) == 292);
    CHECK(ways(300, 0) == 9590);
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("intention", "execution") == 5);
    CHECK(edit_distance("optimization passes", "pessimization paths") == 7);
    CHECK(edit_distance("", "abc") == 3 && edit_distance("same", "same") == 0);
    uint64_t checksum = fib(n) ^ (uint64_t)partitions(200, 200) ^ (uint64_t)ways(300, 0);
    printf("c_core_rec_memo: %llu\n", (unsigned long long)checksum);
    return 0;
}
