// exercises: switch on char values (case ranges written out, grouped labels), character-class tokenizer, roman numeral parsing and formatting, escape-sequence decoding, hex digit switch
// Computes token counts for a C-like snippet, roman numeral round trips and decoded escape strings using switches on characters.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int roman_value(char c) {
    switch (c) {
    case 'I': return 1; case 'V': return 5; case 'X': return 10; case 'L': return 50;
    case 'C': return 100; case 'D': return 500; case 'M': return 1000;
    default: return 0;
    }
}

int parse_roman(const char *s) {
    int total = 0;
    for (; *s; s++) {
        int v = roman_value(s[0]), next = roman_value(s[1]);
        total += v < next ? -v : v;
    }
    return total;
}

static size_t to_roman(int n, char *out) {
    static const int val[13] = {1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1};
    static const char *const sym[13] = {"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"};
    size_t len = 0;
    for (int i = 0; i < 13; i++)
        while (n >= val[i]) { n -= val[i]; for (const char *p = sym[i]; *p; p++) out[len++] = *p; }
    out[len] = '\0';
    return len;
}

static int char_class(char c) {
    switch (c) {
    case ' ': case '\t': case '\n': return 0;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': return 1;
    case '+': case '-': case '*': case '/': case '=': case '<': case '>': case '(': case ')': case ';': return 2;
    default: return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') ? 3 : 4;
    }
}

/* counts[0]=identifiers, [1]=numbers, [2]=operators, [3]=two-char operators, [4]=comments */
__attribute__((noinline)) static void tokenize(const char *s, int counts[5]) {
    while (*s) {
        switch (char_class(*s)) {
        case 0: s++; break;
        case 1: counts[1]++; while (char_class(*s) == 1 || char_class(*s) == 3) s++; break;
        case 3: counts[0]++; while (char_class(*s) == 1 || char_class(*s) == 3) s++; break;
        case 2:
            if (s[0] == '/' && s[1] == '*') {
                counts[4]++;
                s += 2;
                while (*s && !(s[0] == '*' && s[1] == '/')) s++;
                if (*s) s += 2;
                break;
            }
            counts[2]++;
            if (s[1] == '=' && strchr("<>=-+", s[0]) != NULL) { counts[3]++; s++; }
            s++;
            break;
        default: abort();
        }
    }
}

static size_t unescape(const char *in, char *out) {
    size_t n = 0;
    while (*in) {
        char c = *in++;
        if (c != '\\') { out[n++] = c; continue; }
        switch (*in++) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case '\\': out[n++] = '\\'; break;
        case '0': out[n++] = '\0'; break;
        case 'x': {
            int v = 0;
            for (int k = 0; k < 2; k++, in++) {
                switch (*in) {
                case 'a': case 'b': case 'c': case 'd': case 'e': case 'f': v = v * 16 + (*in - 'a' + 10); break;
                case 'A': case 'B': case 'C': case 'D': case 'E': case 'F': v = v * 16 + (*in - 'A' + 10); break;
                default: v = v * 16 + (*in - '0'); break;
                }
            }
            out[n++] = (char)v;
            break;
        }
        default: abort();
        }
    }
    return n;
}

int main(void) {
    static const char *const r[6] = {"MCMXCIV", "MMXXIV", "XLII", "MMMCMXCIX", "IV", "CDXLIV"};
    static const int rv[6] = {1994, 2024, 42, 3999, 4, 444};
    for (int i = 0; i < 6; i++) CHECK(parse_roman(r[i]) == rv[i]);
    char buf[32];
    size_t total = 0;
    for (int n = 1; n < 4000; n++) { total += to_roman(n, buf); CHECK(parse_roman(buf) == n); }
    CHECK(total == 30000);
    int counts[5] = {0};
    const char *volatile src = "int x1 = 42 + y_2*(0x1F - 7); /* c */ while(x1>=10) x1 -= 3;";
    tokenize(src, counts);
    CHECK(counts[0] == 6 && counts[1] == 5 && counts[2] == 12 && counts[3] == 2 && counts[4] == 1);
    char out[32];
    size_t len = unescape("a\\tb\\n\\\\c\\x41\\x7e", out);
    CHECK(len == 8);
    CHECK(memcmp(out, "a\tb\n\\cA~", 8) == 0);
    CHECK(char_class('_') == 3 && char_class('@') == 4);
    unsigned checksum = (unsigned)total;
    for (size_t i = 0; i < len; i++) checksum = checksum * 131u + (unsigned char)out[i];
    printf("c_core_sw_chars: %u %d\n", checksum, counts[0] * 10000 + counts[1] * 100 + counts[2]);
    return 0;
}
