// exercises: recursive permutation generation by swapping and by used-flags (lexicographic), backtracking N-queens with bitmasks, recursive subset-sum counting, order-dependent hashing of generated sequences
// Computes permutation statistics, derangement counts, N-queens solutions and subset-sum counts by recursion and checks known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int perm[10];
static long long weighted, derangements, count;

static void swap_perm(int k, int n) {
    if (k == n) {
        int fixed = 0;
        for (int i = 0; i < n; i++) { weighted += (long long)i * perm[i]; fixed += perm[i] == i; }
        derangements += fixed == 0;
        count++;
        return;
    }
    for (int i = k; i < n; i++) {
        int t = perm[k]; perm[k] = perm[i]; perm[i] = t;
        swap_perm(k + 1, n);
        t = perm[k]; perm[k] = perm[i]; perm[i] = t;
    }
}

static int used[10], lex[10], lex_index, snapshot[10];
static uint32_t lex_hash;

static void lex_perm(int k, int n, int want) {
    if (k == n) {
        for (int i = 0; i < n; i++) lex_hash = lex_hash * 7u + (uint32_t)lex[i];
        if (lex_index++ == want) for (int i = 0; i < n; i++) snapshot[i] = lex[i];
        return;
    }
    for (int v = 0; v < n; v++) {
        if (used[v]) continue;
        used[v] = 1; lex[k] = v;
        lex_perm(k + 1, n, want);
        used[v] = 0;
    }
}

__attribute__((noinline)) int queens(int n, unsigned cols, unsigned d1, unsigned d2) {
    unsigned full = (1u << n) - 1u;
    if (cols == full) return 1;
    int total = 0;
    unsigned avail = full & ~(cols | d1 | d2);
    while (avail) {
        unsigned bit = avail & (0u - avail);
        avail -= bit;
        total += queens(n, cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1);
    }
    return total;
}

static long long subset_sum(int i, int limit, int remaining) {
    if (remaining == 0) return 1;
    if (i > limit || remaining < i) return 0;
    return subset_sum(i + 1, limit, remaining - i) + subset_sum(i + 1, limit, remaining);
}

int main(void) {
    volatile int n7 = 7, n8 = 8;
    for (int i = 0; i < 10; i++) perm[i] = i;
    swap_perm(0, n7);
    CHECK(count == 5040);
    CHECK(weighted == 317520);
    count = derangements = 0;
    swap_perm(0, n8);
    CHECK(count == 40320);
    CHECK(derangements == 14833);
    for (int i = 0; i < 8; i++) CHECK(perm[i] == i); /* swaps were undone */

    lex_perm(0, 5, 99);
    CHECK(lex_index == 120);
    CHECK(lex_hash == 1952563152u);
    CHECK(snapshot[0] == 4 && snapshot[1] == 0 && snapshot[2] == 2 && snapshot[3] == 3 && snapshot[4] == 1);

    CHECK(queens(n8, 0, 0, 0) == 92);
    CHECK(queens(6, 0, 0, 0) == 4);
    CHECK(queens(1, 0, 0, 0) == 1);
    volatile int target = 50;
    CHECK(subset_sum(1, 20, target) == 1969);
    printf("c_core_rec_permute: %lld %lld %u\n", weighted, derangements, lex_hash);
    return 0;
}
