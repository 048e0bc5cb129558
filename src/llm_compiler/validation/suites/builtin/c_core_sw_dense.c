// exercises: dense switch over contiguous opcodes (jump table), interpreter dispatch loop, switch with default trap, per-case side effects on a stack, bytecode programs with loops
// Computes factorial, gcd and a triangular sum by interpreting small bytecode programs through a dense switch-based stack machine.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

enum { PUSH, ADD, SUB, MUL, MOD, DUP, SWAP, DROP, OVER, JZ, JMP, LT, HALT };

static unsigned long steps;

__attribute__((noinline)) int64_t run(const int *code) {
    int64_t st[64];
    int sp = 0, pc = 0;
    for (;;) {
        steps++;
        int op = code[pc++];
        switch (op) {
        case PUSH: st[sp++] = code[pc++]; break;
        case ADD: sp--; st[sp - 1] += st[sp]; break;
        case SUB: sp--; st[sp - 1] -= st[sp]; break;
        case MUL: sp--; st[sp - 1] *= st[sp]; break;
        case MOD: sp--; st[sp - 1] %= st[sp]; break;
        case DUP: st[sp] = st[sp - 1]; sp++; break;
        case SWAP: { int64_t t = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = t; break; }
        case DROP: sp--; break;
        case OVER: st[sp] = st[sp - 2]; sp++; break;
        case JZ: { int target = code[pc++]; if (st[--sp] == 0) pc = target; break; }
        case JMP: pc = code[pc]; break;
        case LT: sp--; st[sp - 1] = st[sp - 1] < st[sp]; break;
        case HALT: return st[sp - 1];
        default: abort();
        }
        if (sp < 0 || sp > 60) abort();
    }
}

int opcode_class(int op) {
    switch (op) {
    case 0: return 1; case 1: return 2; case 2: return 2; case 3: return 2; case 4: return 2;
    case 5: return 3; case 6: return 3; case 7: return 3; case 8: return 3;
    case 9: return 4; case 10: return 4; case 11: return 2; case 12: return 5;
    default: return 0;
    }
}

int main(void) {
    /* stack [acc n]: while (n != 0) { acc *= n; n -= 1; } */
    static const int fact_tmpl[18] = {PUSH, 1, PUSH, 0, DUP, JZ, 16, SWAP, OVER, MUL, SWAP,
                                      PUSH, 1, SUB, JMP, 4, DROP, HALT};
    int fact[18];
    volatile int n = 20;
    for (int i = 0; i < 18; i++) fact[i] = fact_tmpl[i];
    fact[3] = n;
    CHECK(run(fact) == 2432902008176640000LL);
    CHECK(steps == 186);
    /* stack [a b]: while (b != 0) { a, b = b, a % b; } */
    static const int gcd[14] = {PUSH, 1071, PUSH, 462, DUP, JZ, 12, SWAP, OVER, MOD, JMP, 4, DROP, HALT};
    CHECK(run(gcd) == 21);
    /* stack [s i]: while (i < 100) { s += i; i += 1; } */
    static const int tri[21] = {PUSH, 0, PUSH, 0, DUP, PUSH, 100, LT, JZ, 19, SWAP, OVER, ADD, SWAP,
                                PUSH, 1, ADD, JMP, 4, DROP, HALT};
    CHECK(run(tri) == 4950);
    CHECK(steps == 1318);
    int classes = 0;
    for (int op = -2; op < 15; op++) classes = classes * 3 + opcode_class(op);
    CHECK(classes == 9595764);
    CHECK(opcode_class(PUSH) == 1 && opcode_class(HALT) == 5 && opcode_class(13) == 0);
    printf("c_core_sw_dense: %lu %d\n", steps, classes);
    return 0;
}
