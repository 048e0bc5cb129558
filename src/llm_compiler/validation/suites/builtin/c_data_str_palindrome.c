// exercises: in-place string reversal, word-order reversal, case-insensitive palindrome test, longest palindromic substring, ctype with unsigned char
// Reverses strings and word orders in place, tests palindromes and finds the longest palindromic substring by centre expansion.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void reverse_range(char *s, size_t i, size_t j) {
    while (i < j) { char t = s[i]; s[i] = s[j]; s[j] = t; i++; j--; }
}

void reverse(char *s) { size_t n = strlen(s); if (n > 1) reverse_range(s, 0, n - 1); }

/* Reverse the order of space-separated words, keeping runs of spaces in place. */
void reverse_words(char *s) {
    size_t n = strlen(s), i = 0;
    if (n < 2) return;
    reverse_range(s, 0, n - 1);
    while (i < n) {
        while (i < n && s[i] == ' ') i++;
        size_t j = i;
        while (j < n && s[j] != ' ') j++;
        if (j > i + 1) reverse_range(s, i, j - 1);
        i = j;
    }
}

int is_palindrome(const char *s) {
    size_t n = strlen(s);
    if (n == 0) return 1;
    size_t i = 0, j = n - 1;
    while (i < j) {
        if (!isalnum((unsigned char)s[i])) { i++; continue; }
        if (!isalnum((unsigned char)s[j])) { j--; continue; }
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)s[j])) return 0;
        i++; j--;
    }
    return 1;
}

static int longest_pal(const char *s, int *start) {
    int n = (int)strlen(s), best = 0;
    *start = 0;
    for (int c = 0; c < 2 * n - 1; c++) {
        int l = c / 2, r = l + c % 2;
        while (l >= 0 && r < n && s[l] == s[r]) { l--; r++; }
        if (r - l - 1 > best) { best = r - l - 1; *start = l + 1; }
    }
    return best;
}

int main(void) {
    char buf[64];
    volatile char vc = 'h';
    strcpy(buf, "hello, world");
    buf[0] = vc;
    reverse(buf);
    CHECK(strcmp(buf, "dlrow ,olleh") == 0);
    reverse(buf);
    CHECK(strcmp(buf, "hello, world") == 0);
    strcpy(buf, "the quick  brown fox");
    reverse_words(buf);
    CHECK(strcmp(buf, "fox brown  quick the") == 0);
    strcpy(buf, "a");
    reverse_words(buf);
    CHECK(strcmp(buf, "a") == 0);
    CHECK(is_palindrome("A man, a plan, a canal: Panama") == 1);
    CHECK(is_palindrome("No 'x' in Nixon") == 1);
    CHECK(is_palindrome("palindrome") == 0);
    CHECK(is_palindrome("") == 1 && is_palindrome(",.;") == 1);
    int st;
    CHECK(longest_pal("forgeeksskeegfor", &st) == 10 && st == 3);
    CHECK(longest_pal("abacdfgdcabaypqqpyx", &st) == 6 && st == 12);
    CHECK(longest_pal("x", &st) == 1 && st == 0);
    unsigned sum = 0;
    const char *words[5] = { "racecar", "level", "rotor", "lever", "madam" };
    for (int i = 0; i < 5; i++) {
        strcpy(buf, words[i]);
        reverse(buf);
        sum = sum * 7u + (unsigned)is_palindrome(buf) + (unsigned)(strcmp(buf, words[i]) == 0) * 2u;
        sum = sum * 31u + (unsigned char)buf[0];
    }
    printf("c_data_str_palindrome: %u\n", sum);
    return 0;
}
