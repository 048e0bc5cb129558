// exercises: sorting arrays of strings, hand-written strcmp, sorting characters, letter histograms, anagram grouping, 2-D char arrays
// Sorts words lexicographically and by length, and counts anagram groups and anagram pairs using letter signatures.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define NW 14
static const char *const words[NW] = { "listen", "silent", "enlist", "google", "gogole", "cat", "act",
                                       "tac", "tca", "dog", "god", "odg", "banana", "inlets" };

static int my_strcmp(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return (unsigned char)*a - (unsigned char)*b;
}

static int by_len_then_alpha(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb) return la < lb ? -1 : 1;
    return my_strcmp(a, b);
}

void sort_words(const char **w, int n, int (*cmp)(const char *, const char *)) {
    for (int i = 1; i < n; i++) {
        const char *k = w[i];
        int j = i;
        while (j > 0 && cmp(w[j - 1], k) > 0) { w[j] = w[j - 1]; j--; }
        w[j] = k;
    }
}

void signature(const char *w, char *sig) {
    int hist[26] = { 0 }, n = 0;
    for (; *w; w++) hist[*w - 'a']++;
    for (int c = 0; c < 26; c++)
        while (hist[c]--) sig[n++] = (char)('a' + c);
    sig[n] = '\0';
}

static int anagram_stats(int *groups, int *largest) {
    char sigs[NW][16];
    int seen[NW] = { 0 }, pairs = 0;
    for (int i = 0; i < NW; i++) signature(words[i], sigs[i]);
    *groups = 0; *largest = 0;
    for (int i = 0; i < NW; i++) {
        if (seen[i]) continue;
        int size = 0;
        for (int j = i; j < NW; j++)
            if (!seen[j] && strcmp(sigs[i], sigs[j]) == 0) { seen[j] = 1; size++; }
        ++*groups;
        pairs += size * (size - 1) / 2;
        if (size > *largest) *largest = size;
    }
    return pairs;
}

int main(void) {
    const char *w[NW];
    char sig[16];
    volatile int vn = NW;
    int n = vn;
    for (int i = 0; i < n; i++) w[i] = words[i];
    sort_words(w, n, my_strcmp);
    CHECK(strcmp(w[0], "act") == 0 && strcmp(w[1], "banana") == 0 && strcmp(w[13], "tca") == 0);
    for (int i = 1; i < n; i++) CHECK(strcmp(w[i - 1], w[i]) < 0);
    sort_words(w, n, by_len_then_alpha);
    CHECK(strcmp(w[4], "odg") == 0 && strcmp(w[7], "banana") == 0 && strcmp(w[13], "silent") == 0);
    signature("banana", sig);
    CHECK(strcmp(sig, "aaabnn") == 0);
    CHECK(my_strcmp("abc", "abd") < 0 && my_strcmp("ab", "a") > 0 && my_strcmp("", "") == 0);
    int groups, largest;
    int pairs = anagram_stats(&groups, &largest);
    CHECK(pairs == 16);
    CHECK(groups == 5 && largest == 4);
    unsigned sum = 0;
    for (int i = 0; i < n; i++) sum = sum * 37u + (unsigned char)w[i][0] + (unsigned)strlen(w[i]);
    printf("c_data_str_sort_anagram: %u %d\n", sum, pairs);
    return 0;
}
