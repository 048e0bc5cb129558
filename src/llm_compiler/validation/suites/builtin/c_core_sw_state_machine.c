// exercises: explicit finite state machines driven by switch on an enum state, nested switch on input characters, accepting-state checks, CSV quoting automaton, comment stripper with string-literal state
// Computes acceptance of numeric literals, CSV field counts/lengths and comment-stripped C text with switch-based state machines and checks precomputed results.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

enum num_state { S_START, S_SIGN, S_INT, S_DOT0, S_FRAC, S_EXP, S_EXPSIGN, S_EXPDIG, S_FAIL };

int is_number(const char *s) {
    enum num_state st = S_START;
    for (; *s && st != S_FAIL; s++) {
        char c = *s;
        int digit = c >= '0' && c <= '9';
        switch (st) {
        case S_START: st = digit ? S_INT : (c == '+' || c == '-') ? S_SIGN : c == '.' ? S_DOT0 : S_FAIL; break;
        case S_SIGN: st = digit ? S_INT : c == '.' ? S_DOT0 : S_FAIL; break;
        case S_INT: st = digit ? S_INT : c == '.' ? S_FRAC : (c == 'e' || c == 'E') ? S_EXP : S_FAIL; break;
        case S_DOT0: st = digit ? S_FRAC : S_FAIL; break;
        case S_FRAC: st = digit ? S_FRAC : (c == 'e' || c == 'E') ? S_EXP : S_FAIL; break;
        case S_EXP: st = digit ? S_EXPDIG : (c == '+' || c == '-') ? S_EXPSIGN : S_FAIL; break;
        case S_EXPSIGN: case S_EXPDIG: st = digit ? S_EXPDIG : S_FAIL; break;
        case S_FAIL: break;
        }
    }
    switch (st) {
    case S_INT: case S_FRAC: case S_EXPDIG: return 1;
    default: return 0;
    }
}

/* returns number of fields; *content receives the total unquoted field length */
__attribute__((noinline)) static int csv_fields(const char *s, int *content) {
    enum { FIELD, QUOTED, QUOTE_IN_QUOTED } st = FIELD;
    int fields = 1;
    *content = 0;
    for (; *s; s++) {
        switch (st) {
        case FIELD:
            if (*s == ',') fields++;
            else if (*s == '"') st = QUOTED;
            else (*content)++;
            break;
        case QUOTED:
            if (*s == '"') st = QUOTE_IN_QUOTED; else (*content)++;
            break;
        case QUOTE_IN_QUOTED:
            if (*s == '"') { (*content)++; st = QUOTED; }
            else { st = FIELD; if (*s == ',') fields++; else (*content)++; }
            break;
        }
    }
    return fields;
}

static size_t strip_comments(const char *in, char *out) {
    enum { CODE, SLASH, LINE, BLOCK, BLOCK_STAR, STRING } st = CODE;
    size_t n = 0;
    for (; *in; in++) {
        char c = *in;
        switch (st) {
        case CODE: if (c == '/') st = SLASH; else { out[n++] = c; if (c == '"') st = STRING; } break;
        case SLASH:
            if (c == '/') st = LINE;
            else if (c == '*') st = BLOCK;
            else { out[n++] = '/'; out[n++] = c; st = c == '"' ? STRING : CODE; }
            break;
        case LINE: if (c == '\n') { out[n++] = c; st = CODE; } break;
        case BLOCK: if (c == '*') st = BLOCK_STAR; break;
        case BLOCK_STAR: st = c == '/' ? CODE : c == '*' ? BLOCK_STAR : BLOCK; break;
        case STRING: out[n++] = c; if (c == '"') st = CODE; break;
        }
    }
    if (st == SLASH) out[n++] = '/';
    out[n] = '\0';
    return n;
}

int main(void) {
    static const char *const nums[23] = {"0", "-12", "+3.5", ".5", "5.", "1e10", "1E-7", "-.5e+3", "", "+", "-.", "e5",
                                         "1e", "1e+", "1.2.3", "12a", "--1", "0.000", "9e99", " 1", "3.14159", ".e1", "+.1E0"};
    unsigned mask = 0;
    int accepted = 0;
    for (int i = 0; i < 23; i++) { int ok = is_number(nums[i]); accepted += ok; mask |= (unsigned)ok << i; }
    CHECK(accepted == 12);
    CHECK(mask == 0x5600ffu);
    static const char *const lines[6] = {"a,b,c", "\"x,y\",z", "\"he said \"\"hi\"\"\",2,,", "", ",", "\"\""};
    static const int nf[6] = {3, 2, 4, 1, 2, 1}, nc[6] = {3, 4, 13, 0, 0, 0};
    for (int i = 0; i < 6; i++) {
        int content;
        const char *volatile l = lines[i];
        CHECK(csv_fields(l, &content) == nf[i]);
        CHECK(content == nc[i]);
    }
    char out[128];
    const char *text = "int a; // one /* not */\nchar *s = \"/* no */\"; /* multi\nline */ b++; /**/c/ 2;\n";
    size_t len = strip_comments(text, out);
    CHECK(len == 42);
    CHECK(strcmp(out, "int a; \nchar *s = \"/* no */\";  b++; c/ 2;\n") == 0);
    unsigned checksum = mask;
    for (size_t i = 0; i < len; i++) checksum = checksum * 33u ^ (unsigned char)out[i];
    printf("c_core_sw_state_machine: %u %d\n", checksum, accepted);
    return 0;
}
