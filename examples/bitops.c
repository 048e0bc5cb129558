/*
 * bitops.c: popcount (two ways), 32-bit bit reversal, gcd (Euclid and
 * binary), integer square root, and signed/unsigned arithmetic edge cases
 * that have well-defined results, folded into a checksum.
 * Exercises: bit-manipulation idiom recognition (ctpop, bitreverse), loops
 * with data-dependent trip counts, constant folding, and instcombine.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned popcount_loop(uint32_t x)
{
    unsigned n = 0;
    while (x) {
        x &= x - 1u;
        n++;
    }
    return n;
}

static unsigned popcount_swar(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0Fu;
    return (x * 0x01010101u) >> 24;
}

static uint32_t bit_reverse(uint32_t x)
{
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) {
        r = (r << 1) | (x & 1u);
        x >>= 1;
    }
    return r;
}

static uint32_t gcd_euclid(uint32_t a, uint32_t b)
{
    while (b != 0) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static uint32_t gcd_binary(uint32_t a, uint32_t b)
{
    if (a == 0 || b == 0)
        return a | b;
    unsigned shift = 0;
    while (((a | b) & 1u) == 0) {
        a >>= 1;
        b >>= 1;
        shift++;
    }
    while ((a & 1u) == 0)
        a >>= 1;
    while (b != 0) {
        while ((b & 1u) == 0)
            b >>= 1;
        if (a > b) {
            uint32_t t = a;
            a = b;
            b = t;
        }
        b -= a;
    }
    return a << shift;
}

/* Digit-by-digit integer square root: floor(sqrt(x)). */
static uint32_t isqrt32(uint32_t x)
{
    uint32_t res = 0, bit = 1u << 30;
    while (bit > x)
        bit >>= 2;
    while (bit != 0) {
        if (x >= res + bit) {
            x -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    return res;
}

static void edge_cases(void)
{
    unsigned char uc1 = 200, uc2 = 100;
    if ((unsigned)INT_MIN != 0x80000000u || 0u - 1u != UINT_MAX || UINT_MAX + 1u != 0u)
        abort();
    if (-7 / 2 != -3 || -7 % 2 != -1 || 7 / -2 != -3 || 7 % -2 != 1)
        abort();
    if (uc1 + uc2 != 300 || (unsigned char)(uc1 + uc2) != 44)
        abort();
    if ((long long)INT_MAX + 1 != 2147483648LL || -(long long)INT_MIN != 2147483648LL)
        abort();
    if ((uint16_t)-1 != 65535u || (int8_t)100 + (int8_t)100 != 200)
        abort();
    if (-1 >= 0 || (unsigned)-1 < 1u)
        abort();
}

int main(void)
{
    edge_cases();
    if (popcount_loop(0xFFFFFFFFu) != 32 || popcount_swar(0xF0F0A5A5u) != 16)
        abort();
    if (bit_reverse(1u) != 0x80000000u || bit_reverse(0x12345678u) != 0x1E6A2C48u)
        abort();
    if (gcd_euclid(1071, 462) != 21 || gcd_binary(1071, 462) != 21 || gcd_binary(0, 9) != 9)
        abort();
    if (isqrt32(UINT32_MAX) != 65535u || isqrt32(1000000u) != 1000u || isqrt32(999999u) != 999u)
        abort();

    uint32_t h = 0;
    for (uint32_t i = 1; i <= 2000; i++) {
        uint32_t x = i * 2654435761u;
        unsigned pc = popcount_loop(x);
        uint32_t g = gcd_euclid(x, i * 6u + 12u);
        if (pc != popcount_swar(x) || g != gcd_binary(x, i * 6u + 12u))
            abort();
        uint32_t s = isqrt32(x);
        if ((uint64_t)s * s > x || (uint64_t)(s + 1) * (s + 1) <= x)
            abort();
        h = h * 31u + pc;
        h = h * 31u + bit_reverse(x);
        h = h * 31u + s;
        h = h * 31u + g;
    }
    if (h != 0x388B8CEDu)
        abort();

    printf("bitops: hash=%08x\n", (unsigned)h);
    return 0;
}
