// exercises: string search, naive matching, KMP failure table, overlapping occurrence counting, char arrays, agreement with strstr
// Finds substring occurrences with a naive scan and with Knuth-Morris-Pratt and checks both against strstr and known positions.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int naive_find(const char *t, const char *p, int from) {
    int n = (int)strlen(t), m = (int)strlen(p);
    for (int i = from; i + m <= n; i++) {
        int j = 0;
        while (j < m && t[i + j] == p[j]) j++;
        if (j == m) return i;
    }
    return -1;
}

void kmp_table(const char *p, int m, int *fail) {
    int k = 0;
    fail[0] = 0;
    for (int i = 1; i < m; i++) {
        while (k > 0 && p[i] != p[k]) k = fail[k - 1];
        if (p[i] == p[k]) k++;
        fail[i] = k;
    }
}

/* Writes all (overlapping) match positions into pos, returns the count. */
int kmp_all(const char *t, const char *p, int *pos, int maxpos) {
    int m = (int)strlen(p), fail[64], k = 0, cnt = 0;
    if (m == 0 || m > 64) return 0;
    kmp_table(p, m, fail);
    for (int i = 0; t[i]; i++) {
        while (k > 0 && t[i] != p[k]) k = fail[k - 1];
        if (t[i] == p[k]) k++;
        if (k == m) {
            if (cnt < maxpos) pos[cnt] = i - m + 1;
            cnt++;
            k = fail[k - 1];
        }
    }
    return cnt;
}

static int count_naive(const char *t, const char *p) {
    int c = 0, at = 0;
    while ((at = naive_find(t, p, at)) >= 0) { c++; at++; }
    return c;
}

int main(void) {
    char text[64];
    volatile char first = 'a';
    strcpy(text, "abracadabra abracadabra cadabra");
    text[0] = first;
    int pos[16], fail[16];
    static const int abra[5] = { 0, 7, 12, 19, 27 };
    CHECK(kmp_all(text, "abra", pos, 16) == 5);
    for (int i = 0; i < 5; i++) CHECK(pos[i] == abra[i]);
    CHECK(kmp_all(text, "cad", pos, 16) == 3 && pos[0] == 4 && pos[1] == 16 && pos[2] == 24);
    CHECK(kmp_all("aaaaaa", "aa", pos, 16) == 5 && pos[4] == 4);
    CHECK(kmp_all(text, "dabra c", pos, 16) == 1 && pos[0] == 18);
    CHECK(kmp_all(text, "zebra", pos, 16) == 0);
    kmp_table("abracadabra", 11, fail);
    static const int fw[11] = { 0, 0, 0, 1, 0, 1, 0, 1, 2, 3, 4 };
    for (int i = 0; i < 11; i++) CHECK(fail[i] == fw[i]);
    kmp_table("aabaaab", 7, fail);
    CHECK(fail[5] == 2 && fail[6] == 3);
    CHECK(naive_find(text, "abra", 1) == 7);
    CHECK(naive_find(text, "cadabra", 20) == 24);
    CHECK(count_naive(text, "a") == 13);
    const char *needles[4] = { "ra ", "bra", "a c", "abracadabra" };
    unsigned sum = 0;
    for (int i = 0; i < 4; i++) {
        const char *s = strstr(text, needles[i]);
        int k = naive_find(text, needles[i], 0);
        CHECK(s != NULL && s - text == k);
        CHECK(count_naive(text, needles[i]) == kmp_all(text, needles[i], pos, 16));
        sum = sum * 97u + (unsigned)k * 5u + (unsigned)count_naive(text, needles[i]);
    }
    printf("c_data_str_search: %u\n", sum);
    return 0;
}
