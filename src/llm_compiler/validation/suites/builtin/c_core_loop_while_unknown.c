// exercises: while loops with data-dependent trip counts, do-while, Collatz iteration, Floyd cycle detection, search loops that stop at the first hit, integer bisection
// Computes Collatz step counts, happy numbers, a first-hit digit-sum search and integer cube roots and checks them against known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

unsigned collatz_steps(uint64_t n) {
    unsigned s = 0;
    while (n != 1) {
        n = (n & 1u) ? 3u * n + 1u : n / 2u;
        s++;
    }
    return s;
}

static unsigned digit_square_sum(unsigned n) {
    unsigned s = 0;
    do { unsigned d = n % 10u; s += d * d; n /= 10u; } while (n);
    return s;
}

/* tortoise and hare: the sequence either reaches 1 or enters a cycle */
__attribute__((noinline)) static int is_happy(unsigned n) {
    unsigned slow = n, fast = n;
    do {
        slow = digit_square_sum(slow);
        fast = digit_square_sum(digit_square_sum(fast));
    } while (slow != fast);
    return slow == 1;
}

static unsigned digit_sum(unsigned n) {
    unsigned s = 0;
    while (n) { s += n % 10u; n /= 10u; }
    return s;
}

uint64_t icbrt(uint64_t n) {
    uint64_t lo = 0, hi = 2097152; /* invariant lo^3 <= n < hi^3, valid for n < 2^63 */
    while (hi - lo > 1) {
        uint64_t m = lo + (hi - lo) / 2;
        if (m * m * m <= n) lo = m; else hi = m;
    }
    return lo;
}

int main(void) {
    volatile uint64_t v27 = 27;
    CHECK(collatz_steps(v27) == 111);
    CHECK(collatz_steps(1) == 0);
    unsigned best = 0, best_n = 0;
    uint64_t total = 0;
    for (unsigned n = 1; n <= 10000; n++) {
        unsigned s = collatz_steps(n);
        total += s;
        if (s > best && n < 10000) { best = s; best_n = n; }
    }
    CHECK(best == 261);
    CHECK(best_n == 6171);
    CHECK(total == 849666);

    unsigned happy = 0;
    for (unsigned n = 1; n < 1000; n++) happy += (unsigned)is_happy(n);
    CHECK(happy == 142);
    CHECK(is_happy(7) && !is_happy(4));

    volatile unsigned target = 50;
    unsigned first = 1;
    while (digit_sum(first) != target) first++;
    CHECK(first == 599999);

    CHECK(icbrt(1000000000000000000u) == 1000000);
    CHECK(icbrt(999999999999999999u) == 999999);
    CHECK(icbrt(9223372036854775807u) == 2097151);
    CHECK(icbrt(26) == 2 && icbrt(27) == 3 && icbrt(0) == 0);
    printf("c_core_loop_while_unknown: %llu %u %u %u\n", (unsigned long long)total, best_n, happy, first);
    return 0;
}
