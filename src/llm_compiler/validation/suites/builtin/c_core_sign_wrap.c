// exercises: unsigned wraparound on add/sub/mul, integer promotion of uint8/uint16 (casting before multiply to avoid signed overflow), truncation on store, down-counting unsigned loops, serial-number comparison, ring-buffer indices
// Computes wrapping unsigned arithmetic of several widths and checks modular results, wrap-aware sequence comparisons and ring-buffer behaviour.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

uint32_t mul16_wide(uint16_t a, uint16_t b) { return (uint32_t)a * b; } /* a * b alone would be int */
static uint16_t mul16_wrap(uint16_t a, uint16_t b) { return (uint16_t)((uint32_t)a * b); }
static uint8_t add8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }

/* true when sequence number a comes after b, modulo 2^32 */
__attribute__((noinline)) int seq_after(uint32_t a, uint32_t b) {
    uint32_t d = a - b;
    return d != 0 && d < 0x80000000u;
}

static uint32_t sum_down(const uint32_t *v, size_t n) {
    uint32_t s = 0;
    for (size_t i = n; i-- > 0;) s += v[i] * (uint32_t)(i + 1);
    return s;
}

int main(void) {
    volatile uint32_t zero = 0, max = UINT32_MAX;
    CHECK(zero - 1u == 0xffffffffu);
    CHECK(max + 1u == 0u);
    CHECK(max * max == 1u);
    CHECK((uint64_t)max * max == 0xfffffffe00000001u);
    volatile uint16_t h = 65535;
    CHECK(mul16_wide(h, h) == 4294836225u);
    CHECK(mul16_wrap(h, h) == 1u);
    CHECK(mul16_wrap(300, 300) == 24464u);
    volatile uint8_t b = 200;
    CHECK(add8(b, b) == 144u);
    CHECK((uint8_t)(b * 2u) == 144u);
    CHECK((b + b) == 400); /* promoted to int: no wrap */
    uint8_t nb = (uint8_t)~b;
    CHECK(nb == 55u);
    CHECK(~b == -201);
    CHECK(seq_after(5u, 0xfffffff0u) && !seq_after(0xfffffff0u, 5u));
    CHECK(!seq_after(7u, 7u) && seq_after(0x7fffffffu, 0u) && !seq_after(0x80000000u, 0u));

    uint32_t ring[8] = {0};
    uint32_t head = 0xfffffffcu, tail = 0xfffffffcu; /* free-running indices that wrap */
    uint32_t popped = 0;
    for (uint32_t i = 1; i <= 20; i++) {
        ring[head++ & 7u] = i * i;
        if (head - tail > 5u) popped += ring[tail++ & 7u];
    }
    CHECK(head - tail == 5u);
    CHECK(head == 16u);
    CHECK(popped == 1240u);

    uint32_t v[100];
    uint32_t x = 1u;
    for (int i = 0; i < 100; i++) { x = x * 2654435761u; v[i] = x; }
    uint32_t s = sum_down(v, 100);
    uint32_t t = 0;
    for (int i = 0; i < 100; i++) t += v[i] * (uint32_t)(i + 1);
    CHECK(s == t);
    uint64_t acc = 0;
    for (uint16_t k = 65530; k != 6; k++) acc += k; /* wraps through 0 */
    CHECK(acc == 393210u);
    printf("c_core_sign_wrap: %u %llu\n", s, (unsigned long long)acc);
    return 0;
}
