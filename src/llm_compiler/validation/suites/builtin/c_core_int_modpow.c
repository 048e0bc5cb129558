// exercises: modular exponentiation by squaring, overflow-free 64-bit mulmod by shift-and-add, modular addition without overflow, modular inverse via Fermat, Miller-Rabin primality
// Computes modular powers, inverses and deterministic Miller-Rabin primality for 32- and 64-bit numbers.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t addmod(uint64_t a, uint64_t b, uint64_t m) {
    return a >= m - b ? a - (m - b) : a + b;
}

uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
    if (m <= 0xffffffffu) return (a % m) * (b % m) % m;
    uint64_t r = 0;
    a %= m;
    while (b != 0) {
        if (b & 1u) r = addmod(r, a, m);
        a = addmod(a, a, m);
        b >>= 1;
    }
    return r;
}

uint64_t powmod(uint64_t base, uint64_t e, uint64_t m) {
    uint64_t r = 1 % m;
    base %= m;
    while (e != 0) {
        if (e & 1u) r = mulmod(r, base, m);
        base = mulmod(base, base, m);
        e >>= 1;
    }
    return r;
}

__attribute__((noinline)) static int is_prime(uint64_t n) {
    static const uint64_t bases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
    if (n < 2) return 0;
    for (int i = 0; i < 12; i++) {
        if (n == bases[i]) return 1;
        if (n % bases[i] == 0) return 0;
    }
    uint64_t d = n - 1;
    int s = 0;
    while ((d & 1u) == 0) { d >>= 1; s++; }
    int nb = n < 3215031751u ? 4 : 12;
    for (int i = 0; i < nb; i++) {
        uint64_t x = powmod(bases[i], d, n);
        if (x == 1 || x == n - 1) continue;
        int composite = 1;
        for (int r = 1; r < s && composite; r++) {
            x = mulmod(x, x, n);
            if (x == n - 1) composite = 0;
        }
        if (composite) return 0;
    }
    return 1;
}

int main(void) {
    volatile uint64_t m61 = 2305843009213693951u; /* 2^61 - 1 */
    CHECK(powmod(2, 10, 1000) == 24);
    CHECK(powmod(3, 200, 1000000007u) == 136318165);
    CHECK(powmod(7, 0, 13) == 1);
    CHECK(powmod(0, 0, 13) == 1);
    CHECK(powmod(5, 3, 1) == 0);
    CHECK(powmod(123456789, 987654321, m61) == 50357601586279104u);
    CHECK(powmod(2, 18446744073709551614u, 18446744073709551557u) == 288230376151711744u);
    CHECK(powmod(10, 1000000005u, 1000000007u) == 700000005);
    CHECK(powmod(5, m61 - 2, m61) == 1844674407370955161u);
    CHECK(mulmod(5, powmod(5, m61 - 2, m61), m61) == 1);
    int count = 0;
    uint64_t checksum = 0;
    for (uint64_t n = 0; n < 5000; n++) {
        if (is_prime(n)) { count++; checksum = checksum * 31u + n; }
    }
    CHECK(count == 669);
    CHECK(is_prime(4294967291u) && !is_prime(4294967297u));
    CHECK(!is_prime(561) && !is_prime(3215031751u));
    CHECK(is_prime(m61) && is_prime(18446744073709551557u));
    CHECK(!is_prime(1000000007ull * 998244353ull));
    checksum ^= powmod(checksum, 65537, m61);
    printf("c_core_int_modpow: %d 0x%016llx\n", count, (unsigned long long)checksum);
    return 0;
}
