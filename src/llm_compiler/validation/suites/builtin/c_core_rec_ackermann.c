// exercises: deep non-primitive recursion (Ackermann) with small inputs, nested recursive calls as arguments (Takeuchi, McCarthy 91), call counting through a global, explicit-stack iterative cross-check
// Computes Ackermann, Takeuchi and McCarthy 91 values plus their call counts and checks them against known results.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static unsigned long calls;

unsigned ack(unsigned m, unsigned n) {
    calls++;
    if (m == 0) return n + 1;
    if (n == 0) return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

/* same function with an explicit stack of pending m values */
__attribute__((noinline)) static unsigned ack_iter(unsigned m, unsigned n) {
    static unsigned stack[4096];
    int sp = 0;
    stack[sp++] = m;
    while (sp > 0) {
        m = stack[--sp];
        if (m == 0) n = n + 1;
        else if (n == 0) { stack[sp++] = m - 1; n = 1; }
        else {
            if (sp + 2 > 4096) abort();
            stack[sp++] = m - 1;
            stack[sp++] = m;
            n = n - 1;
        }
    }
    return n;
}

static int tak(int x, int y, int z) {
    calls++;
    if (y < x) return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y));
    return z;
}

int mc91(int n) { return n > 100 ? n - 10 : mc91(mc91(n + 11)); }

int main(void) {
    static const unsigned in[5][2] = {{0, 0}, {1, 2}, {2, 3}, {3, 3}, {3, 5}};
    static const unsigned val[5] = {1, 4, 9, 61, 253};
    static const unsigned long cnt[5] = {1, 6, 44, 2432, 42438};
    unsigned long checksum = 0;
    for (int i = 0; i < 5; i++) {
        volatile unsigned m = in[i][0], n = in[i][1];
        calls = 0;
        CHECK(ack(m, n) == val[i]);
        CHECK(calls == cnt[i]);
        CHECK(ack_iter(m, n) == val[i]);
        checksum = checksum * 131u + val[i] + calls;
    }
    CHECK(ack(3, 4) == 125);
    CHECK(ack_iter(2, 100) == 203);
    calls = 0;
    volatile int x = 18;
    CHECK(tak(x, 12, 6) == 7);
    CHECK(calls == 63609);
    CHECK(mc91(0) == 91 && mc91(99) == 91 && mc91(100) == 91 && mc91(101) == 91 && mc91(150) == 140);
    int s = 0;
    for (int i = 0; i < 200; i++) s += mc91(i);
    CHECK(s == 23051);
    checksum += (unsigned long)s;
    printf("c_core_rec_ackermann: %lu\n", checksum);
    return 0;
}
