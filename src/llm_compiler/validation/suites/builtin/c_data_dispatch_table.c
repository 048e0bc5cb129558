// exercises: function pointer dispatch tables, arrays of function pointers indexed by opcode, table lookup by symbol, typedef'd function types, RPN evaluation
// Evaluates reverse-Polish integer expressions by looking up operator handlers in constant dispatch tables.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

typedef long (*binop)(long, long);
typedef long (*unop)(long);

static long op_add(long a, long b) { return a + b; }
static long op_sub(long a, long b) { return a - b; }
static long op_mul(long a, long b) { return a * b; }
static long op_div(long a, long b) { return b ? a / b : 0; }
static long op_mod(long a, long b) { return b ? a % b : 0; }
long op_max(long a, long b) { return a > b ? a : b; }
static long u_neg(long a) { return -a; }
static long u_sq(long a) { return a * a; }
long u_abs(long a) { return a < 0 ? -a : a; }

static const struct { char sym; binop fn; } bin_table[] = {
    { '+', op_add }, { '-', op_sub }, { '*', op_mul }, { '/', op_div }, { '%', op_mod }, { '^', op_max },
};
static const struct { char sym; unop fn; } un_table[] = { { '~', u_neg }, { 's', u_sq }, { '|', u_abs } };

static binop find_bin(char c) {
    for (size_t i = 0; i < sizeof bin_table / sizeof bin_table[0]; i++)
        if (bin_table[i].sym == c) return bin_table[i].fn;
    return NULL;
}

static unop find_un(char c) {
    for (size_t i = 0; i < sizeof un_table / sizeof un_table[0]; i++)
        if (un_table[i].sym == c) return un_table[i].fn;
    return NULL;
}

/* Tokens are single digits, operators, or spaces. Returns 1 and the result on success. */
int rpn(const char *s, long *result) {
    long st[32];
    int sp = 0;
    for (; *s; s++) {
        binop b; unop u;
        if (*s == ' ') continue;
        if (*s >= '0' && *s <= '9') { if (sp == 32) return 0; st[sp++] = *s - '0'; }
        else if ((b = find_bin(*s)) != NULL) { if (sp < 2) return 0; sp--; st[sp - 1] = b(st[sp - 1], st[sp]); }
        else if ((u = find_un(*s)) != NULL) { if (sp < 1) return 0; st[sp - 1] = u(st[sp - 1]); }
        else return 0;
    }
    if (sp != 1) return 0;
    *result = st[0];
    return 1;
}

int main(void) {
    long r;
    volatile char vop = '*';
    binop by_index[6];
    for (int i = 0; i < 6; i++) by_index[i] = bin_table[i].fn;
    CHECK(by_index[2](6, 7) == 42 && by_index[4](17, 5) == 2);
    CHECK(find_bin(vop) == op_mul && find_bin('?') == NULL);
    CHECK(find_un('|') == u_abs);
    CHECK(rpn("3 4 + 2 *", &r) && r == 14);
    CHECK(rpn("9 3 - 4 5 * ~ /", &r) && r == 0);
    CHECK(rpn("8 s 7 s - 3 %", &r) && r == 0);
    CHECK(rpn("2 9 ^ 1 - 4 ~ |*", &r) && r == 32);
    CHECK(rpn("5 1 2 + 4 * + 3 -", &r) && r == 14);
    CHECK(rpn("7 ~ 2 /", &r) && r == -3);
    CHECK(rpn("7 ~ 2 %", &r) && r == -1);
    CHECK(rpn("1 +", &r) == 0 && rpn("1 2", &r) == 0 && rpn("1 x", &r) == 0);
    const char *progs[4] = { "12+3*", "99*9*9*", "5s5s*4~*", "0 1 - 2 - 3 - |" };
    unsigned sum = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(rpn(progs[i], &r));
        sum = sum * 1000003u + (unsigned)r;
    }
    CHECK(r == 6);
    printf("c_data_dispatch_table: %u\n", sum);
    return 0;
}
