// exercises: stack unwinding through recursive frames, destructors of locals running during unwinding, arrays destroyed in reverse order, partially constructed arrays, nested scopes that end before a throw, catching by value
// Records the exact destructor order while exceptions unwind through recursion, local arrays and a partially constructed array.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static int order[32];
static int orderLen = 0;
static int alive = 0;

static void record(int id) { if (orderLen < 32) order[orderLen++] = id; }

struct Guard {
    int id;
    explicit Guard(int i) : id(i) { ++alive; }
    ~Guard() { --alive; record(id); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
};

struct Picky {
    int id;
    explicit Picky(int i) : id(i) {
        if (i == 3) throw -3;
        ++alive;
    }
    ~Picky() { --alive; record(id); }
    Picky(const Picky&) = delete;
    Picky& operator=(const Picky&) = delete;
};

struct Fatal { int code; };

static int descend(int depth, int throwAt) {
    Guard g(depth);
    { Guard inner(100 + depth); }
    if (depth == throwAt) throw depth * 7;
    return descend(depth + 1, throwAt) + 1;
}

static void arrayThenThrow(int code) {
    Guard a(200);
    Guard arr[3] = {Guard(201), Guard(202), Guard(203)};
    if (arr[2].id + a.id > 0) throw Fatal{code};
}

static int buildPicky() {
    Picky arr[5] = {Picky(1), Picky(2), Picky(3), Picky(4), Picky(5)};
    return arr[4].id;
}

int main() {
    volatile int throwAt = 4, code = 9;
    int caught = 0;
    try {
        descend(0, throwAt);
    } catch (int v) {
        caught = v;
    }
    CHECK(caught == 28);
    CHECK(orderLen == 10 && alive == 0);
    const int firstPart[10] = {100, 101, 102, 103, 104, 4, 3, 2, 1, 0};
    for (int i = 0; i < 10; ++i) CHECK(order[i] == firstPart[i]);

    int fatal = 0;
    try {
        arrayThenThrow(code);
    } catch (Fatal f) {
        fatal = f.code;
        CHECK(alive == 0);
    }
    CHECK(fatal == 9 && orderLen == 14);
    CHECK(order[10] == 203 && order[11] == 202 && order[12] == 201 && order[13] == 200);

    int picky = 0;
    try {
        picky = buildPicky();
    } catch (int v) {
        picky = v;
    }
    CHECK(picky == -3 && alive == 0);
    CHECK(orderLen == 16 && order[14] == 2 && order[15] == 1);

    int weighted = 0;
    for (int i = 0; i < orderLen; ++i) weighted += order[i] * (i + 1);
    CHECK(weighted == 11726);
    int checksum = weighted * 100 + caught + fatal - picky;
    CHECK(checksum == 1172640);
    std::printf("cpp_exc_unwind: %d\n", checksum);
    return 0;
}
