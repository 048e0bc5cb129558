// exercises: hand-written tokenizer, delimiter sets, empty CSV fields, key=value parsing, strtok on a writable copy, token spans
// Splits text into tokens by hand, parses key=value pairs and CSV rows with empty fields, and checks agreement with strtok.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct span { int start, len; };

static int is_delim(char c, const char *delims) {
    for (; *delims; delims++) if (*delims == c) return 1;
    return 0;
}

/* Collapsing split: runs of delimiters separate tokens, no empty tokens. */
int split(const char *s, const char *delims, struct span *out, int max) {
    int n = 0, i = 0;
    while (s[i]) {
        while (s[i] && is_delim(s[i], delims)) i++;
        if (!s[i]) break;
        int st = i;
        while (s[i] && !is_delim(s[i], delims)) i++;
        if (n < max) out[n] = (struct span){ st, i - st };
        n++;
    }
    return n;
}

/* CSV split: every comma separates a field, fields may be empty. */
int csv_fields(const char *s, struct span *out, int max) {
    int n = 0, st = 0;
    for (int i = 0;; i++) {
        if (s[i] == ',' || s[i] == '\0') {
            if (n < max) out[n] = (struct span){ st, i - st };
            n++;
            st = i + 1;
            if (s[i] == '\0') break;
        }
    }
    return n;
}

static long kv_lookup(const char *s, const char *key) {
    struct span t[16];
    int n = split(s, ";", t, 16), klen = (int)strlen(key);
    for (int i = 0; i < n && i < 16; i++) {
        const char *p = s + t[i].start;
        if (t[i].len > klen && strncmp(p, key, (size_t)klen) == 0 && p[klen] == '=') {
            long v = 0, sign = 1;
            int j = klen + 1;
            if (p[j] == '-') { sign = -1; j++; }
            for (; j < t[i].len; j++) v = v * 10 + (p[j] - '0');
            return sign * v;
        }
    }
    return -999;
}

int main(void) {
    struct span t[16];
    char buf[80];
    volatile char sep = ' ';
    const char *text = "  alpha beta\tgamma,,delta  ";
    int n = split(text, " \t,", t, 16);
    CHECK(n == 4);
    CHECK(t[0].start == 2 && t[0].len == 5 && t[2].start == 13 && t[3].len == 5);
    strcpy(buf, text);
    buf[0] = sep;
    int k = 0;
    for (char *tok = strtok(buf, " \t,"); tok; tok = strtok(NULL, " \t,"), k++) {
        CHECK(k < n && (int)strlen(tok) == t[k].len && tok - buf == t[k].start);
    }
    CHECK(k == n);
    CHECK(split("", " ", t, 16) == 0 && split(";;;", ";", t, 16) == 0);
    CHECK(csv_fields("a,,bc,", t, 16) == 4 && t[1].len == 0 && t[2].start == 3 && t[3].len == 0);
    CHECK(csv_fields("", t, 16) == 1 && t[0].len == 0);
    const char *cfg = "width=640;height=480;;depth=-24;name=x;w=7";
    CHECK(kv_lookup(cfg, "width") == 640);
    CHECK(kv_lookup(cfg, "depth") == -24);
    CHECK(kv_lookup(cfg, "w") == 7);
    CHECK(kv_lookup(cfg, "color") == -999);
    unsigned sum = 0;
    n = split("the rain in spain stays mainly in the plain", " ", t, 16);
    CHECK(n == 9);
    for (int i = 0; i < n; i++) sum = sum * 13u + (unsigned)t[i].start * 3u + (unsigned)t[i].len;
    printf("c_data_str_tokenize: %u %ld\n", sum, kv_lookup(cfg, "height") + kv_lookup(cfg, "depth"));
    return 0;
}
