// exercises: global arrays modified by functions, zero-initialized global tables, global counters, functions communicating only through globals, global histogram
// Sieves primes below 10000 into global arrays and derives counts, last-digit histograms, gaps and twin-prime statistics from them.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define LIMIT 10000
unsigned char composite[LIMIT];
int primes[1300];
int nprimes;
static int digit_hist[10];
static int prefix_count[LIMIT];

void sieve(int limit) {
    composite[0] = composite[1] = 1;
    for (int i = 2; (long)i * i < limit; i++)
        if (!composite[i])
            for (int j = i * i; j < limit; j += i) composite[j] = 1;
    nprimes = 0;
    for (int i = 0; i < limit; i++) {
        if (!composite[i]) primes[nprimes++] = i;
        prefix_count[i] = nprimes;
    }
}

static void build_hist(void) {
    for (int i = 0; i < nprimes; i++) digit_hist[primes[i] % 10]++;
}

static int max_gap(int *at) {
    int g = 0;
    for (int i = 0; i + 1 < nprimes; i++)
        if (primes[i + 1] - primes[i] > g) { g = primes[i + 1] - primes[i]; *at = primes[i]; }
    return g;
}

static int count_twins(void) {
    int t = 0;
    for (int i = 0; i + 1 < nprimes; i++) t += primes[i + 1] - primes[i] == 2;
    return t;
}

static int pi(int x) { return x < 0 ? 0 : prefix_count[x]; }

int main(void) {
    volatile int vlimit = LIMIT;
    CHECK(nprimes == 0 && digit_hist[3] == 0 && composite[9999] == 0);
    sieve(vlimit);
    CHECK(nprimes == 1229 && primes[nprimes - 1] == 9973);
    CHECK(pi(99) == 25 && pi(999) == 168 && pi(2) == 1 && pi(1) == 0);
    CHECK(composite[9999] == 1 && composite[9973] == 0 && composite[561] == 1);
    long total = 0;
    for (int i = 0; i < nprimes; i++) total += primes[i];
    CHECK(total % 1000007 == 736361);
    build_hist();
    CHECK(digit_hist[1] == 306 && digit_hist[3] == 310 && digit_hist[7] == 308 && digit_hist[9] == 303);
    CHECK(digit_hist[2] == 1 && digit_hist[5] == 1 && digit_hist[0] == 0);
    int at = 0;
    CHECK(max_gap(&at) == 36 && !composite[at] && !composite[at + 36]);
    CHECK(count_twins() == 205);
    unsigned sum = 0;
    for (int x = 0; x < LIMIT; x += 97) sum = sum * 13u + (unsigned)pi(x);
    for (int d = 0; d < 10; d++) sum ^= (unsigned)digit_hist[d] << d;
    printf("c_data_global_array: %u %d\n", sum, at);
    return 0;
}
