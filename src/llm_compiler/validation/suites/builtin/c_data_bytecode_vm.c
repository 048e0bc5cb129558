// exercises: bytecode interpreter, array of handler function pointers indexed by opcode, VM state struct passed by pointer, jumps with back-patching, register file
// Assembles small stack-machine programs (factorial, gcd, Fibonacci) and runs them on an interpreter driven by a handler table.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

enum { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, JZ, JMP, HALT, NOPS };
struct vm { const long *code; int pc, sp, running; long stack[16], reg[4]; unsigned steps; };
typedef void (*handler)(struct vm *);

static long pop(struct vm *m) { if (m->sp == 0) abort(); return m->stack[--m->sp]; }
static void push(struct vm *m, long v) { if (m->sp == 16) abort(); m->stack[m->sp++] = v; }
static void h_push(struct vm *m) { push(m, m->code[m->pc++]); }
static void h_load(struct vm *m) { push(m, m->reg[m->code[m->pc++]]); }
static void h_store(struct vm *m) { m->reg[m->code[m->pc++]] = pop(m); }
static void h_add(struct vm *m) { long b = pop(m), a = pop(m); push(m, a + b); }
static void h_sub(struct vm *m) { long b = pop(m), a = pop(m); push(m, a - b); }
static void h_mul(struct vm *m) { long b = pop(m), a = pop(m); push(m, a * b); }
static void h_mod(struct vm *m) { long b = pop(m), a = pop(m); push(m, b ? a % b : 0); }
static void h_jz(struct vm *m) { long t = m->code[m->pc++]; if (pop(m) == 0) m->pc = (int)t; }
static void h_jmp(struct vm *m) { m->pc = (int)m->code[m->pc]; }
static void h_halt(struct vm *m) { m->running = 0; }

static const handler handlers[NOPS] = { h_push, h_load, h_store, h_add, h_sub, h_mul, h_mod, h_jz, h_jmp, h_halt };

long run(const long *code, long r0, long r1, unsigned *steps) {
    struct vm m = { code, 0, 0, 1, { 0 }, { r0, r1, 0, 0 }, 0 };
    while (m.running) {
        long op = code[m.pc++];
        if (op < 0 || op >= NOPS || ++m.steps > 100000u) abort();
        handlers[op](&m);
    }
    *steps = m.steps;
    return pop(&m);
}

static long prog[3][40];
static int len;
static int emit(long *p, long v) { p[len] = v; return len++; }

int main(void) {
    unsigned steps;
    volatile long vn = 10;
    long *f = prog[0], *g = prog[1], *fib = prog[2];
    /* factorial: r1 = 1; while (r0) { r1 *= r0; r0 -= 1; } return r1 */
    len = 0;
    emit(f, PUSH); emit(f, 1); emit(f, STORE); emit(f, 1);
    int top = emit(f, LOAD); emit(f, 0); emit(f, JZ); int fix = emit(f, 0);
    emit(f, LOAD); emit(f, 1); emit(f, LOAD); emit(f, 0); emit(f, MUL); emit(f, STORE); emit(f, 1);
    emit(f, LOAD); emit(f, 0); emit(f, PUSH); emit(f, 1); emit(f, SUB); emit(f, STORE); emit(f, 0);
    emit(f, JMP); emit(f, top);
    f[fix] = emit(f, LOAD); emit(f, 1); emit(f, HALT);
    /* gcd: while (r1) { t = r0 % r1; r0 = r1; r1 = t; } return r0 */
    len = 0;
    top = emit(g, LOAD); emit(g, 1); emit(g, JZ); fix = emit(g, 0);
    emit(g, LOAD); emit(g, 0); emit(g, LOAD); emit(g, 1); emit(g, MOD);
    emit(g, LOAD); emit(g, 1); emit(g, STORE); emit(g, 0); emit(g, STORE); emit(g, 1);
    emit(g, JMP); emit(g, top);
    g[fix] = emit(g, LOAD); emit(g, 0); emit(g, HALT);
    /* fib: r2 = 0; r3 = 1; repeat r0 times { r3 = r2 + r3; r2 = r3 - r2 } return r2 */
    len = 0;
    emit(fib, PUSH); emit(fib, 1); emit(fib, STORE); emit(fib, 3);
    top = emit(fib, LOAD); emit(fib, 0); emit(fib, JZ); fix = emit(fib, 0);
    emit(fib, LOAD); emit(fib, 2); emit(fib, LOAD); emit(fib, 3); emit(fib, ADD); emit(fib, STORE); emit(fib, 3);
    emit(fib, LOAD); emit(fib, 3); emit(fib, LOAD); emit(fib, 2); emit(fib, SUB); emit(fib, STORE); emit(fib, 2);
    emit(fib, LOAD); emit(fib, 0); emit(fib, PUSH); emit(fib, 1); emit(fib, SUB); emit(fib, STORE); emit(fib, 0);
    emit(fib, JMP); emit(fib, top);
    fib[fix] = emit(fib, LOAD); emit(fib, 2); emit(fib, HALT);

    CHECK(run(f, vn, 0, &steps) == 3628800 && steps == 116);
    CHECK(run(f, 0, 0, &steps) == 1 && steps == 6);
    CHECK(run(f, 20, 0, &steps) == 2432902008176640000L);
    CHECK(run(g, 1071, 462, &steps) == 21);
    CHECK(run(g, 17, 5, &steps) == 1 && run(g, 0, 9, &steps) == 9);
    CHECK(run(fib, 50, 0, &steps) == 12586269025L);
    CHECK(run(fib, 1, 0, &steps) == 1 && run(fib, 0, 0, &steps) == 0);
    unsigned long sum = 0;
    for (long n = 1; n <= 30; n++) {
        sum = sum * 31u + (unsigned long)run(g, n * 12, 90, &steps) + steps;
        sum += (unsigned long)run(fib, n, 0, &steps) ^ steps;
    }
    printf("c_data_bytecode_vm: %lu\n", sum % 4294967291ul);
    return 0;
}
