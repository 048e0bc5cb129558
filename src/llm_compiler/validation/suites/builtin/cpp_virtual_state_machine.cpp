// exercises: state pattern, pure virtual transition function, stateless singleton state objects, virtual finish hook with default implementation, delegation between states
// Tokenizes text with a virtual state machine and computes the count and sum of numbers and the count and longest length of words.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Ctx {
    long numSum = 0, cur = 0;
    int numbers = 0, words = 0, wordLen = 0, longestWord = 0;
};

static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

class State {
public:
    virtual ~State() = default;
    virtual const State* on(char c, Ctx& ctx) const = 0;
    virtual void finish(Ctx&) const {}
};

class Idle final : public State {
public:
    const State* on(char c, Ctx& ctx) const override;
};

class InNumber final : public State {
public:
    const State* on(char c, Ctx& ctx) const override;
    void finish(Ctx& ctx) const override { ++ctx.numbers; ctx.numSum += ctx.cur; ctx.cur = 0; }
};

class InWord final : public State {
public:
    const State* on(char c, Ctx& ctx) const override;
    void finish(Ctx& ctx) const override {
        ++ctx.words;
        if (ctx.wordLen > ctx.longestWord) ctx.longestWord = ctx.wordLen;
        ctx.wordLen = 0;
    }
};

static const Idle idle;
static const InNumber inNumber;
static const InWord inWord;

const State* Idle::on(char c, Ctx& ctx) const {
    if (isDigit(c)) { ctx.cur = c - '0'; return &inNumber; }
    if (isLetter(c)) { ctx.wordLen = 1; return &inWord; }
    return this;
}

const State* InNumber::on(char c, Ctx& ctx) const {
    if (isDigit(c)) { ctx.cur = ctx.cur * 10 + (c - '0'); return this; }
    finish(ctx);
    return idle.on(c, ctx);
}

const State* InWord::on(char c, Ctx& ctx) const {
    if (isLetter(c)) { ++ctx.wordLen; return this; }
    finish(ctx);
    return idle.on(c, ctx);
}

static Ctx run(const char* text) {
    Ctx ctx;
    const State* s = &idle;
    for (; *text != '\0'; ++text) s = s->on(*text, ctx);
    s->finish(ctx);
    return ctx;
}

int main() {
    volatile char second[] = "2024-06-15 version 3x";
    char copy[sizeof second];
    for (unsigned i = 0; i < sizeof second; ++i) copy[i] = second[i];

    Ctx a = run("abc 12 de3f 450,,7 x99y");
    CHECK(a.numbers == 5);
    CHECK(a.numSum == 571 && a.words == 5 && a.longestWord == 3);

    Ctx b = run(copy);
    CHECK(b.numbers == 4 && b.numSum == 2048 && b.words == 2 && b.longestWord == 7);

    Ctx c = run("");
    CHECK(c.numbers == 0 && c.words == 0 && c.numSum == 0);

    Ctx d = run("zzzz");
    CHECK(d.words == 1 && d.longestWord == 4 && d.numbers == 0);

    Ctx e = run("007");
    CHECK(e.numbers == 1 && e.numSum == 7);

    long checksum = (a.numSum + b.numSum) * 1000 + (a.numbers + b.numbers) * 100 +
                    (a.words + b.words + d.words) * 10 + b.longestWord;
    CHECK(checksum == 2619987);
    std::printf("cpp_virtual_state_machine: %ld\n", checksum);
    return 0;
}
