// exercises: external-linkage globals, internal-linkage static globals, extern declarations before definitions, tentative definitions, globals initialized with addresses of other globals, shadowing
// Updates external and file-static global state through functions and global pointer tables and checks every global's final value.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

extern int total_calls;          /* declared before its definition below */
extern const int scale_factor;
int tentative;                   /* tentative definition ... */
int tentative;                   /* ... repeated, still one object, zero-initialized */

static int hidden_calls;         /* internal linkage */
int total_calls = 5;
const int scale_factor = 3;
long ledger[4] = { 10, 20, 30, 40 };
long *const ledger_end = ledger + 4;
long *cursor = &ledger[1];
int *const counters[3] = { &total_calls, &hidden_calls, &tentative };
static const char *const labels[] = { "total", "hidden", "tentative" };

void credit(long amount) {
    total_calls++;
    *cursor += amount * scale_factor;
    if (++cursor == ledger_end) cursor = ledger;
}

static void debit(long amount) {
    hidden_calls++;
    long *p = cursor == ledger ? ledger_end - 1 : cursor - 1;
    *p -= amount;
}

int shadow_test(int total_calls) {   /* parameter shadows the global */
    tentative += total_calls;
    return total_calls * 2;
}

static long ledger_sum(void) {
    long s = 0;
    for (const long *p = ledger; p != ledger_end; p++) s += *p;
    return s;
}

int main(void) {
    volatile long vamt = 7;
    long amt = vamt;
    CHECK(tentative == 0 && hidden_calls == 0 && total_calls == 5);
    CHECK(ledger_sum() == 100);
    credit(amt);                     /* ledger[1] += 21 */
    credit(amt * 2);                 /* ledger[2] += 42 */
    credit(1);                       /* ledger[3] += 3, cursor wraps */
    CHECK(cursor == ledger && ledger[1] == 41 && ledger[2] == 72 && ledger[3] == 43);
    debit(amt);                      /* cursor at ledger[0] so the last entry is debited */
    credit(10);                      /* ledger[0] += 30 */
    debit(5);                        /* ledger[0] -= 5 */
    CHECK(ledger[0] == 35 && ledger[3] == 36);
    CHECK(total_calls == 9 && hidden_calls == 2);
    CHECK(shadow_test(11) == 22 && tentative == 11 && total_calls == 9);
    *counters[2] += 100;
    CHECK(tentative == 111);
    int sum_counters = 0;
    for (int i = 0; i < 3; i++) sum_counters += *counters[i] * (labels[i][0] == 't' ? 1 : 10);
    CHECK(sum_counters == 140);
    CHECK(ledger_sum() == 184);
    unsigned sum = 0;
    for (int i = 0; i < 4; i++) sum = sum * 101u + (unsigned)ledger[i];
    sum = sum * 7u + (unsigned)(cursor - ledger) + (unsigned)sum_counters;
    printf("c_data_extern_static: %u\n", sum);
    return 0;
}
