/*
 * strings.c: in-place string reversal, tokenizing on a delimiter set,
 * classifying characters with a switch, and run-length encoding/decoding.
 * Exercises: byte loops with early exits, a dense switch (jump table or
 * lookup-table lowering), pointer arithmetic, and calls to libc string code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { VOWEL, CONSONANT, DIGIT, SPACE, PUNCT, NCLASSES };

static void str_reverse(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) {
        char t = s[i];
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = t;
    }
}

static int is_delim(char c)
{
    return c == ' ' || c == ',' || c == ';';
}

/* Counts tokens separated by delimiters; sums their lengths into *total. */
static int tokenize(const char *s, size_t *total)
{
    int count = 0;
    *total = 0;
    while (*s) {
        while (*s && is_delim(*s))
            s++;
        if (!*s)
            break;
        const char *start = s;
        while (*s && !is_delim(*s))
            s++;
        count++;
        *total += (size_t)(s - start);
    }
    return count;
}

static int classify(char c)
{
    switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u':
    case 'A': case 'E': case 'I': case 'O': case 'U':
        return VOWEL;
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return DIGIT;
    case ' ':
        return SPACE;
    default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
            return CONSONANT;
        return PUNCT;
    }
}

/* Encodes runs as <count digit 1-9><char>; out must hold 2*strlen(in)+1. */
static void rle_encode(const char *in, char *out)
{
    while (*in) {
        char c = *in;
        int run = 0;
        while (*in == c && run < 9) {
            in++;
            run++;
        }
        *out++ = (char)('0' + run);
        *out++ = c;
    }
    *out = '\0';
}

static void rle_decode(const char *in, char *out)
{
    for (; in[0] && in[1]; in += 2)
        for (int k = 0; k < in[0] - '0'; k++)
            *out++ = in[1];
    *out = '\0';
}

int main(void)
{
    const char *text = "Hello, World; 42 ducks swam across the pond,, quietly!";
    const char *runs = "aaabccddddddddddddeffg";
    char buf[128], enc[128], dec[128];
    int classes[NCLASSES] = {0};
    size_t total = 0;

    strcpy(buf, text);
    str_reverse(buf);
    if (strcmp(buf, "!ylteiuq ,,dnop eht ssorca maws skcud 24 ;dlroW ,olleH") != 0)
        abort();
    str_reverse(buf);
    if (strcmp(buf, text) != 0)
        abort();

    int ntok = tokenize(text, &total);
    if (ntok != 9 || total != 42)
        abort();

    for (const char *p = text; *p; p++)
        classes[classify(*p)]++;
    if (classes[VOWEL] != 12 || classes[CONSONANT] != 27 || classes[DIGIT] != 2 ||
        classes[SPACE] != 8 || classes[PUNCT] != 5)
        abort();

    rle_encode(runs, enc);
    if (strcmp(enc, "3a1b2c9d3d1e2f1g") != 0)
        abort();
    rle_decode(enc, dec);
    if (strcmp(dec, runs) != 0)
        abort();

    printf("strings: tokens=%d chars=%zu classes=%d/%d/%d/%d/%d rle=%s\n",
           ntok, total, classes[VOWEL], classes[CONSONANT], classes[DIGIT],
           classes[SPACE], classes[PUNCT], enc);
    return 0;
}
