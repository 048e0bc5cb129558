// exercises: tagged unions, enums as discriminants, switch over tag, anonymous-free union members, recursive evaluation over a node pool
// Evaluates arithmetic expression trees whose nodes are tagged unions and combines mixed-kind values with type promotion.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

enum kind { K_INT, K_FRAC, K_STR };
struct value {
    enum kind k;
    union { long i; struct { long n, d; } f; struct { const char *p; int len; } s; } u;
};

enum nkind { N_NUM, N_NEG, N_BIN };
struct node {
    enum nkind k;
    union { long num; int child; struct { char op; int l, r; } bin; } u;
};

static struct node pool[32];
static int npool;

static int mk_num(long v) { pool[npool].k = N_NUM; pool[npool].u.num = v; return npool++; }
static int mk_neg(int c) { pool[npool].k = N_NEG; pool[npool].u.child = c; return npool++; }
static int mk_bin(char op, int l, int r) {
    pool[npool].k = N_BIN;
    pool[npool].u.bin.op = op; pool[npool].u.bin.l = l; pool[npool].u.bin.r = r;
    return npool++;
}

long eval(int idx) {
    const struct node *n = &pool[idx];
    switch (n->k) {
    case N_NUM: return n->u.num;
    case N_NEG: return -eval(n->u.child);
    case N_BIN: {
        long a = eval(n->u.bin.l), b = eval(n->u.bin.r);
        switch (n->u.bin.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return b != 0 ? a / b : 0;
        }
    }
    }
    abort();
}

/* Numeric weight of a value: ints as-is, fractions truncated, strings by length. */
long weight(struct value v) {
    switch (v.k) {
    case K_INT: return v.u.i;
    case K_FRAC: return v.u.f.n / v.u.f.d;
    case K_STR: return v.u.s.len;
    }
    return -1;
}

static struct value add(struct value a, struct value b) {
    struct value r;
    if (a.k == K_INT && b.k == K_INT) { r.k = K_INT; r.u.i = a.u.i + b.u.i; return r; }
    if (a.k == K_INT) { long t = a.u.i; a.k = K_FRAC; a.u.f.n = t; a.u.f.d = 1; }
    if (b.k == K_INT) { long t = b.u.i; b.k = K_FRAC; b.u.f.n = t; b.u.f.d = 1; }
    if (a.k == K_STR || b.k == K_STR) { r.k = K_INT; r.u.i = weight(a) + weight(b); return r; }
    r.k = K_FRAC;
    r.u.f.n = a.u.f.n * b.u.f.d + b.u.f.n * a.u.f.d;
    r.u.f.d = a.u.f.d * b.u.f.d;
    return r;
}

int main(void) {
    volatile long v7 = 7;
    long seven = v7;
    /* (7 * (3 + -4)) - (100 / (2 * 5)) = -7 - 10 = -17 */
    int a = mk_num(seven), b = mk_num(3), c = mk_neg(mk_num(4));
    int m = mk_bin('*', a, mk_bin('+', b, c));
    int q = mk_num(100), two = mk_num(2), five = mk_num(5), t = mk_bin('*', two, five);
    int e1 = mk_bin('-', m, mk_bin('/', q, t));
    CHECK(eval(e1) == -17);
    int s1 = mk_num(seven), s2 = mk_num(seven);
    int e2 = mk_neg(mk_bin('*', s1, s2));
    CHECK(eval(e2) == -49);
    int s3 = mk_num(seven), s4 = mk_num(7), z = mk_bin('-', s3, s4);
    int e3 = mk_bin('/', mk_num(1), z);
    CHECK(eval(e3) == 0);
    CHECK(npool == 21);
    CHECK(pool[e1].k == N_BIN && pool[e1].u.bin.op == '-');

    struct value i5 = { .k = K_INT, .u.i = 5 };
    struct value h = { .k = K_FRAC, .u.f = { 3, 4 } };
    struct value s = { .k = K_STR, .u.s = { "tagged", 6 } };
    struct value r1 = add(i5, i5);
    CHECK(r1.k == K_INT && r1.u.i == 10);
    struct value r2 = add(i5, h);
    CHECK(r2.k == K_FRAC && r2.u.f.n == 23 && r2.u.f.d == 4);
    CHECK(weight(r2) == 5);
    struct value r3 = add(h, s);
    CHECK(r3.k == K_INT && r3.u.i == 6);
    struct value r4 = add(r2, h);
    CHECK(r4.k == K_FRAC && r4.u.f.n == 104 && r4.u.f.d == 16);

    unsigned long sum = 0;
    for (int i = 0; i < npool; i++) sum = sum * 17u + (unsigned long)(eval(i) + 1000) + (unsigned)pool[i].k;
    printf("c_data_tagged_union: %lu %ld\n", sum % 1000000007ul, weight(r4) + eval(e1));
    return 0;
}
