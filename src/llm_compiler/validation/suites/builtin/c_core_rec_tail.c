// exercises: tail recursion with accumulators (factorial mod p, sums, polynomial hash), tail-recursive gcd, binary search and fast power, digit reversal, walking a static linked list recursively
// Computes results of accumulator-style tail-recursive functions that an optimizer may turn into loops and checks them against precomputed values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define P 1000000007u

static uint64_t fact_acc(uint32_t n, uint64_t acc) { return n <= 1 ? acc : fact_acc(n - 1, acc * n % P); }

uint64_t sum_to(uint64_t n, uint64_t acc) { return n == 0 ? acc : sum_to(n - 1, acc + n); }

static uint32_t hash_acc(uint32_t i, uint32_t n, uint32_t h) { return i > n ? h : hash_acc(i + 1, n, h * 31u + i); }

uint64_t gcd_tail(uint64_t a, uint64_t b) { return b == 0 ? a : gcd_tail(b, a % b); }

static uint64_t pow_acc(uint64_t b, uint32_t e, uint64_t acc) {
    if (e == 0) return acc;
    return pow_acc(b * b % P, e / 2, (e & 1u) ? acc * b % P : acc);
}

__attribute__((noinline)) static int bsearch_rec(const int *v, int lo, int hi, int key) {
    if (lo >= hi) return -1;
    int mid = lo + (hi - lo) / 2;
    if (v[mid] == key) return mid;
    return v[mid] < key ? bsearch_rec(v, mid + 1, hi, key) : bsearch_rec(v, lo, mid, key);
}

static uint64_t reverse_digits(uint64_t n, uint64_t acc) { return n == 0 ? acc : reverse_digits(n / 10, acc * 10 + n % 10); }

struct node { int value; const struct node *next; };

static int list_sum(const struct node *p, int acc) { return p ? list_sum(p->next, acc + p->value) : acc; }

int main(void) {
    volatile uint32_t n = 5000;
    CHECK(fact_acc(n, 1) == 541108809u);
    CHECK(fact_acc(0, 1) == 1 && fact_acc(5, 1) == 120);
    CHECK(sum_to(10000, 0) == 50005000u);
    CHECK(hash_acc(1, 2000, 0) == 2263994600u);
    CHECK(gcd_tail(1071, 462) == 21 && gcd_tail(0, 7) == 7);
    CHECK(gcd_tail(12586269025u, 7778742049u) == 1); /* consecutive Fibonacci numbers */
    CHECK(pow_acc(3, 1000, 1) == 56888193u);
    CHECK(reverse_digits(1234567890123u, 0) == 3210987654321u);

    static int v[1000];
    for (int i = 0; i < 1000; i++) v[i] = i * i + 3 * i;
    volatile int key = 300 * 300 + 900;
    CHECK(bsearch_rec(v, 0, 1000, key) == 300);
    CHECK(bsearch_rec(v, 0, 1000, 5) == -1);
    int found = 0;
    for (int i = 0; i < 1000; i++) found += bsearch_rec(v, 0, 1000, v[i]) == i;
    CHECK(found == 1000);

    static struct node nodes[100];
    for (int i = 0; i < 100; i++) {
        nodes[i].value = i * 2 - 50;
        nodes[i].next = i + 1 < 100 ? &nodes[i + 1] : NULL;
    }
    CHECK(list_sum(&nodes[0], 0) == 4900);
    CHECK(list_sum(&nodes[90], 0) == 1390);
    uint64_t checksum = fact_acc(n, 1) ^ pow_acc(7, n, 1) ^ hash_acc(1, 500, 7);
    printf("c_core_rec_tail: %llu\n", (unsigned long long)checksum);
    return 0;
}
