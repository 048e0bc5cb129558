// exercises: mutual recursion between functions (even/odd, Hofstadter female/male sequences), recursive-descent parser with expr/term/factor recursion, static and external recursive functions
// Computes mutually recursive predicates and sequences and evaluates arithmetic expressions with a recursive-descent parser.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int is_odd(unsigned n);
int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }

static int hof_m(int n);
static int hof_f(int n) { return n == 0 ? 1 : n - hof_m(hof_f(n - 1)); }
static int hof_m(int n) { return n == 0 ? 0 : n - hof_f(hof_m(n - 1)); }

static long expr(const char **p);

static long factor(const char **p) {
    if (**p == '-') { (*p)++; return -factor(p); }
    if (**p == '(') {
        (*p)++;
        long v = expr(p);
        if (**p != ')') abort();
        (*p)++;
        return v;
    }
    long v = 0;
    while (**p >= '0' && **p <= '9') { v = v * 10 + (**p - '0'); (*p)++; }
    return v;
}

static long term(const char **p) {
    long v = factor(p);
    while (**p == '*') { (*p)++; v *= factor(p); }
    return v;
}

static long expr(const char **p) {
    long v = term(p);
    while (**p == '+' || **p == '-') {
        char op = *(*p)++;
        long t = term(p);
        v = op == '+' ? v + t : v - t;
    }
    return v;
}

__attribute__((noinline)) long eval(const char *s) {
    long v = expr(&s);
    if (*s != '\0') abort();
    return v;
}

int main(void) {
    volatile unsigned n = 777;
    CHECK(is_odd(n) && !is_even(n));
    CHECK(is_even(1000) && is_odd(1));
    static const int f20[20] = {1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 7, 8, 8, 9, 9, 10, 11, 11, 12};
    static const int m20[20] = {0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 7, 8, 9, 9, 10, 11, 11, 12};
    for (int i = 0; i < 20; i++) CHECK(hof_f(i) == f20[i] && hof_m(i) == m20[i]);
    int sf = 0, sm = 0;
    for (int i = 0; i < 30; i++) { sf += hof_f(i); sm += hof_m(i); }
    CHECK(sf == 276);
    CHECK(sm == 269);
    static const char *const exprs[7] = {"1+2*3", "(1+2)*3", "-(4-10)*-(2+3)", "2*(3+(4*(5-6)))-7",
                                          "((((9))))", "10-3-2", "7*-8+100"};
    static const long want[7] = {7, 9, -30, -9, 9, 5, 44};
    long checksum = 0;
    for (int i = 0; i < 7; i++) {
        const char *volatile e = exprs[i];
        CHECK(eval(e) == want[i]);
        checksum = checksum * 10 + eval(e);
    }
    CHECK(eval("123456*1000-(99)") == 123455901);
    printf("c_core_rec_mutual: %d %d %ld\n", sf, sm, checksum);
    return 0;
}
