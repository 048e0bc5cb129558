// exercises: lambda capture by value and by reference, default captures [=] and [&], mutable lambdas with copied state, init-captures including move-only std::unique_ptr, capturing this and *this, lambdas returned from functions
// Checks which values lambdas observe when captured variables change after creation, and how mutable and copied closures keep independent state.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Account {
    int balance;
    auto depositor() { return [this](int amount) { balance += amount; return balance; }; }
    auto snapshot() const { return [*this] { return balance; }; }
};

static auto multiplier(int k) { return [k](int v) { return v * k; }; }

int main() {
    volatile int seed = 10;
    int checksum = 0;

    int x = seed;
    auto byVal = [x] { return x * 2; };
    auto byRef = [&x] { return x * 2; };
    x = 21;
    CHECK(byVal() == 20);
    CHECK(byRef() == 42);
    checksum += byVal() + byRef();

    auto counter = [n = 0]() mutable { return ++n; };
    counter();
    counter();
    CHECK(counter() == 3);
    auto copyCounter = counter;
    int c1 = copyCounter(), c2 = counter();
    CHECK(c1 == 4 && c2 == 4);
    checksum += c1 + c2;

    int total = 0;
    auto acc = [&total](int v) { total += v; };
    for (int i = 1; i <= seed; ++i) acc(i);
    CHECK(total == 55);
    checksum += total;

    int a = 3, b = 4;
    auto hyp = [=] { return a * a + b * b; };
    a = 100;
    auto bump = [&] { ++a; ++b; };
    bump();
    CHECK(hyp() == 25 && a == 101 && b == 5);
    checksum += hyp() + a + b;

    auto plusOne = [y = x + 1] { return y; };
    x = 0;
    CHECK(plusOne() == 22 && byRef() == 0);
    checksum += plusOne();

    Account acct{100};
    auto dep = acct.depositor();
    dep(50);
    CHECK(dep(25) == 175);
    auto snap = acct.snapshot();
    dep(5);
    CHECK(snap() == 175 && acct.balance == 180);
    checksum += snap() + acct.balance;

    std::unique_ptr<int> p(new int(7));
    auto owner = [q = std::move(p)] { return *q * 6; };
    CHECK(!p && owner() == 42);
    checksum += owner();

    using Mul = decltype(multiplier(0));
    Mul ms[3] = {multiplier(1), multiplier(2), multiplier(seed / 10 + 2)};
    int mulSum = 0;
    for (const Mul& m : ms) mulSum += m(10);
    CHECK(mulSum == 60);
    checksum += mulSum;

    CHECK(checksum == 735);
    std::printf("cpp_lambda_capture: %d\n", checksum);
    return 0;
}
