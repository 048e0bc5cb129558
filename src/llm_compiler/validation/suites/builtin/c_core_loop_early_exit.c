// exercises: loops with break, return from inside loops, continue, multi-exit loops, sentinel search, strlen/memcmp-style byte loops, exiting nested loops via return and via goto
// Computes first-occurrence searches, duplicate detection, threshold crossing and string scans and checks the exit positions.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int a[3000], b[5000], g[30][30];

int find_first(const int *v, int n, int key) {
    for (int i = 0; i < n; i++)
        if (v[i] == key) return i;
    return -1;
}

static int first_duplicate(const int *v, int n, int *value) {
    static unsigned char seen[1009];
    for (int i = 0; i < 1009; i++) seen[i] = 0;
    int i;
    for (i = 0; i < n; i++) {
        if (seen[v[i]]) break;
        seen[v[i]] = 1;
    }
    if (i < n) *value = v[i];
    return i < n ? i : -1;
}

__attribute__((noinline)) size_t my_strlen(const char *s) {
    const char *p = s;
    while (*p) p++;
    return (size_t)(p - s);
}

static int my_memcmp(const unsigned char *p, const unsigned char *q, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
    return 0;
}

int main(void) {
    for (int i = 0; i < 3000; i++) a[i] = (i * 7919) % 1009;
    for (int i = 0; i < 5000; i++) b[i] = (i * 13) % 17;
    volatile int key = 500;
    CHECK(find_first(a, 3000, key) == 920);
    CHECK(find_first(a, 3000, 1008) == 765);
    CHECK(find_first(a, 3000, 1009) == -1);
    int dv = -1;
    CHECK(first_duplicate(a, 3000, &dv) == 1009 && dv == 0);
    CHECK(first_duplicate(a, 1009, &dv) == -1);

    int s = 0, at = -1;
    for (int i = 0; i < 5000; i++) {
        s += b[i];
        if (s > 10000) { at = i; break; }
    }
    CHECK(at == 1250 && s == 10003);

    int odd_sum = 0;
    for (int v = 0; v < 1000; v++) {
        if (v % 3 == 0) continue;
        if (v % 2 == 0) continue;
        odd_sum += v;
    }
    CHECK(odd_sum == 166333);

    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++) g[i][j] = (i * j + 3 * i + j) % 97;
    int fi = -1, fj = -1;
    for (int i = 0; i < 30; i++)
        for (int j = 0; j < 30; j++)
            if (g[i][j] == 96) { fi = i; fj = j; goto found; }
found:
    CHECK(fi == 6 && fj == 25);

    static const char text[] = "the quick brown fox\0hidden";
    CHECK(my_strlen(text) == 19);
    CHECK(my_strlen(text + 20) == 6);
    CHECK(my_memcmp((const unsigned char *)"abcdef", (const unsigned char *)"abcxef", 6) == -1);
    CHECK(my_memcmp((const unsigned char *)"abc", (const unsigned char *)"abd", 2) == 0);
    printf("c_core_loop_early_exit: %d %d %d %d\n", at, s, odd_sum, fi * 30 + fj);
    return 0;
}
