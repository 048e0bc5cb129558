// exercises: std::function holding lambdas, function pointers and stateful functors, dispatch tables of std::function, passing std::function by reference, reassignment of std::function, empty std::function and std::bad_function_call
// Evaluates reverse-Polish expressions and folds event lists through a table of std::function operators, and reassigns a std::function between different callables.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using BinOp = std::function<long long(long long, long long)>;

struct OpEntry {
    char symbol;
    BinOp fn;
};

static long long subtract(long long a, long long b) { return a - b; }

static long long evalRpn(const char* s, const std::array<OpEntry, 4>& table) {
    long long stack[16];
    int top = 0;
    for (; *s != '\0'; ++s) {
        if (*s == ' ') continue;
        if (*s >= '0' && *s <= '9') {
            long long v = 0;
            while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
            --s;
            stack[top++] = v;
            continue;
        }
        for (const OpEntry& e : table)
            if (e.symbol == *s) {
                long long b = stack[--top], a = stack[--top];
                stack[top++] = e.fn(a, b);
            }
    }
    return top == 1 ? stack[0] : -1;
}

struct Scaler {
    long long factor;
    long long operator()(long long x, long long y) { ++factor; return x * (factor - 1) + y; }
};

static long long foldWith(const BinOp& op, const int* events, int n) {
    long long acc = events[0];
    for (int i = 1; i < n; ++i) acc = op(acc, events[i]);
    return acc;
}

int main() {
    std::array<OpEntry, 4> table = {{
        {'+', [](long long a, long long b) { return a + b; }},
        {'-', subtract},
        {'*', [](long long a, long long b) { return a * b; }},
        {'M', [](long long a, long long b) { return a > b ? a : b; }},
    }};
    const char* exprs[6] = {"3 4 + 2 *", "5 1 2 + 4 * + 3 -", "7 2 3 * -", "4 9 M 2 *", "10 20 30 M M", "6 6 * 6 -"};
    const long long expected[6] = {14, 14, 1, 18, 30, 30};
    long long rpnSum = 0;
    for (int i = 0; i < 6; ++i) {
        long long v = evalRpn(exprs[i], table);
        CHECK(v == expected[i]);
        rpnSum += v;
    }
    CHECK(rpnSum == 107);

    volatile int raw[4] = {5, -3, 12, 7};
    int events[4];
    for (int i = 0; i < 4; ++i) events[i] = raw[i];
    long long folds[4];
    for (int i = 0; i < 4; ++i) folds[i] = foldWith(table[static_cast<std::size_t>(i)].fn, events, 4);
    CHECK(folds[0] == 21 && folds[1] == -11 && folds[2] == -1260 && folds[3] == 12);

    long long k = 3;
    BinOp f = [k](long long x, long long y) { return x * k + y; };
    long long r1 = f(10, 1);
    Scaler scaler{5};
    f = scaler;
    long long r2 = f(10, 0), r3 = f(10, 0);
    CHECK(r1 == 31 && r2 == 50 && r3 == 60 && scaler.factor == 5);
    f = table[0].fn;
    CHECK(f(r2, r3) == 110);

    f = nullptr;
    int caught = 0;
    CHECK(!f);
    try {
        f(1, 2);
    } catch (const std::bad_function_call&) {
        caught = 1;
    }
    CHECK(caught == 1);

    long long checksum = rpnSum * 1000 + folds[0] * 10 + folds[1] + folds[2] + folds[3] + r1 + r2 + r3 + caught;
    CHECK(checksum == 106093);
    std::printf("cpp_lambda_function_table: %lld\n", checksum);
    return 0;
}
