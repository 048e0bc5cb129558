// exercises: static local variables keeping state across calls, function-local memo tables, one-time lazy initialization, stateful generators and tokenizers, returning pointers to static storage
// Uses functions with static local state (counters, an LCG, a Collatz memo, a resumable tokenizer) and checks results across repeated calls.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int next_id(void) { static int id = 100; return id++; }

unsigned rng(int reseed, unsigned seed) {
    static unsigned state = 1;
    if (reseed) state = seed;
    state = state * 214013u + 2531011u;
    return (state >> 16) & 0x7fffu;
}

/* Collatz step counts (n >= 1) with a lazily initialized memo for n < 1024. */
int collatz_steps(unsigned long n) {
    static short memo[1024];
    static int initialized;
    if (!initialized) { memset(memo, -1, sizeof memo); memo[1] = 0; initialized = 1; }
    if (n < 1024 && memo[n] >= 0) return memo[n];
    int r = 1 + collatz_steps(n % 2 ? 3 * n + 1 : n / 2);
    if (n < 1024) memo[n] = (short)r;
    return r;
}

/* Resumable word tokenizer: pass a string to start, NULL to continue. Returns a static buffer. */
static const char *next_word(const char *start) {
    static const char *pos;
    static char word[16];
    if (start) pos = start;
    while (*pos == ' ') pos++;
    if (!*pos) return NULL;
    size_t n = 0;
    while (pos[n] && pos[n] != ' ' && n < sizeof word - 1) n++;
    memcpy(word, pos, n);
    word[n] = '\0';
    pos += n;
    return word;
}

static double running_mean(int x) {
    static long total;
    static int count;
    total += x;
    return (double)total / ++count;
}

int main(void) {
    volatile unsigned vseed = 2024;
    CHECK(next_id() == 100 && next_id() == 101);
    for (int i = 0; i < 5; i++) next_id();
    CHECK(next_id() == 107);
    CHECK(rng(1, vseed) == 6648);
    CHECK(rng(0, 0) == 4542 && rng(0, 0) == 2449 && rng(0, 0) == 13336 && rng(0, 0) == 12337);
    CHECK(rng(1, vseed) == 6648);
    CHECK(collatz_steps(27) == 111);
    CHECK(collatz_steps(871) == 178);
    CHECK(collatz_steps(1) == 0 && collatz_steps(2) == 1);
    int best = 1;
    for (unsigned long n = 1; n < 1000; n++) if (collatz_steps(n) > collatz_steps(best)) best = (int)n;
    CHECK(best == 871);
    const char *w = next_word("  static  locals keep state ");
    CHECK(w && strcmp(w, "static") == 0);
    int words = 1;
    size_t letters = strlen(w);
    while ((w = next_word(NULL)) != NULL) { words++; letters += strlen(w); }
    CHECK(words == 4 && letters == 21);
    CHECK(running_mean(4) == 4.0 && running_mean(8) == 6.0 && running_mean(-3) == 3.0);
    unsigned sum = (unsigned)next_id();
    for (int i = 0; i < 10; i++) sum = sum * 31u + rng(0, 0);
    for (unsigned long n = 900; n < 930; n++) sum = sum * 7u + (unsigned)collatz_steps(n);
    printf("c_data_static_locals: %u\n", sum);
    return 0;
}
