// exercises: state machine whose states are functions returning the next state, self-referential function pointer struct, per-state counters, table of test strings
// Validates decimal number literals (sign, fraction, exponent) with a function-pointer state machine and counts transitions.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct state;
typedef struct state (*state_fn)(char c, unsigned *visits);
struct state { state_fn fn; int accepting; };

static struct state s_start(char c, unsigned *v);
static struct state s_sign(char c, unsigned *v);
static struct state s_int(char c, unsigned *v);
static struct state s_dot(char c, unsigned *v);
static struct state s_frac(char c, unsigned *v);
static struct state s_e(char c, unsigned *v);
static struct state s_esign(char c, unsigned *v);
static struct state s_exp(char c, unsigned *v);

static const struct state DEAD = { NULL, 0 };
static int is_digit(char c) { return c >= '0' && c <= '9'; }
static struct state go(state_fn f, int acc) { struct state s = { f, acc }; return s; }

static struct state s_start(char c, unsigned *v) {
    v[0]++;
    if (c == '+' || c == '-') return go(s_sign, 0);
    if (is_digit(c)) return go(s_int, 1);
    return c == '.' ? go(s_dot, 0) : DEAD;
}
static struct state s_sign(char c, unsigned *v) {
    v[1]++;
    if (is_digit(c)) return go(s_int, 1);
    return c == '.' ? go(s_dot, 0) : DEAD;
}
static struct state s_int(char c, unsigned *v) {
    v[2]++;
    if (is_digit(c)) return go(s_int, 1);
    if (c == '.') return go(s_frac, 1);
    return (c == 'e' || c == 'E') ? go(s_e, 0) : DEAD;
}
static struct state s_dot(char c, unsigned *v) { v[3]++; return is_digit(c) ? go(s_frac, 1) : DEAD; }
static struct state s_frac(char c, unsigned *v) {
    v[4]++;
    if (is_digit(c)) return go(s_frac, 1);
    return (c == 'e' || c == 'E') ? go(s_e, 0) : DEAD;
}
static struct state s_e(char c, unsigned *v) {
    v[5]++;
    if (c == '+' || c == '-') return go(s_esign, 0);
    return is_digit(c) ? go(s_exp, 1) : DEAD;
}
static struct state s_esign(char c, unsigned *v) { v[6]++; return is_digit(c) ? go(s_exp, 1) : DEAD; }
static struct state s_exp(char c, unsigned *v) { v[7]++; return is_digit(c) ? go(s_exp, 1) : DEAD; }

int is_number(const char *s, unsigned *visits) {
    struct state st = go(s_start, 0);
    for (; *s; s++) {
        st = st.fn(*s, visits);
        if (!st.fn) return 0;
    }
    return st.accepting;
}

int main(void) {
    unsigned visits[8] = { 0 };
    volatile char vsign = '-';
    char buf[8] = { vsign, '1', '.', '5', 'e', '3', '\0', '\0' };
    static const char *const good[] = { "0", "42", "-7", "+.5", "3.", "3.14", "1e9", "2E-3", "-0.5e+10", ".25" };
    static const char *const bad[] = { "", "+", "-.", ".", "e5", "1e", "1e+", "1.2.3", "12a", "--1", ".e1", "1e5.0" };
    int ng = 0, nb = 0;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) ng += is_number(good[i], visits);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) nb += is_number(bad[i], visits);
    CHECK(ng == 10 && nb == 0);
    CHECK(is_number(buf, visits) == 1);
    buf[6] = 'x';
    buf[7] = '\0';
    CHECK(is_number(buf, visits) == 0);
    unsigned total = 0;
    for (int i = 0; i < 8; i++) total += visits[i];
    CHECK(visits[0] == 23 && visits[2] == 14 && visits[4] == 11);
    CHECK(total == 70);
    unsigned sum = 0;
    for (int i = 0; i < 8; i++) sum = sum * 100u + visits[i];
    printf("c_data_fnptr_state_machine: %u %u\n", sum, total);
    return 0;
}
