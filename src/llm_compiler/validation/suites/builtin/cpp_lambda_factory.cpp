// exercises: functions returning lambdas with auto return type, closures capturing factory arguments, function composition with generic lambdas, currying through nested lambdas, mutable generator closures, pairs of closures sharing caller state via structured bindings
// Builds adders, counters, composed and repeated functions and curried lambdas from factory functions and checks the values they compute.
#include <cstdio>
#include <cstdlib>
#include <utility>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static auto makeAdder(int n) { return [n](int x) { return x + n; }; }

template <typename F, typename G>
auto compose(F f, G g) { return [f, g](auto x) { return f(g(x)); }; }

static auto makeCounter(int start, int step) {
    return [value = start - step, step]() mutable { value += step; return value; };
}

template <typename F>
auto repeatN(F f, int times) {
    return [f, times](auto x) {
        for (int i = 0; i < times; ++i) x = f(x);
        return x;
    };
}

static auto makeIncGet(int& state) {
    return std::make_pair([&state] { ++state; }, [&state] { return state; });
}

int main() {
    volatile int five = 5, seven = 7;
    auto add5 = makeAdder(five);
    auto dbl = [](int x) { return 2 * x; };
    int a = add5(10);
    int b = compose(add5, dbl)(static_cast<int>(seven));
    int c = compose(dbl, add5)(static_cast<int>(seven));
    CHECK(a == 15);
    CHECK(b == 19 && c == 24);

    auto counter = makeCounter(100, seven);
    int c1 = counter(), c2 = counter(), c3 = counter();
    CHECK(c1 == 100 && c2 == 107 && c3 == 114);
    auto counterCopy = counter;
    CHECK(counterCopy() == 121 && counter() == 121);

    auto curry = [](int x) { return [x](int y) { return [x, y](int z) { return x * 100 + y * 10 + z; }; }; };
    int curried = curry(1)(2)(3);
    auto partial = curry(9)(8);
    CHECK(curried == 123 && partial(7) == 987 && partial(0) == 980);

    int addedFour = repeatN(add5, 4)(0);
    long long power = repeatN([](long long x) { return x * 2; }, 10)(1LL);
    CHECK(addedFour == 20 && power == 1024);

    auto add12 = compose(makeAdder(5), makeAdder(seven));
    auto add24 = compose(add12, add12);
    CHECK(add12(0) == 12 && add24(1) == 25);

    int state = 0;
    auto [inc, get] = makeIncGet(state);
    inc();
    inc();
    inc();
    CHECK(get() == 3 && state == 3);

    int checksum = a + b + c + c3 + curried + addedFour + static_cast<int>(power) + get();
    CHECK(checksum == 1342);
    std::printf("cpp_lambda_factory: %d\n", checksum);
    return 0;
}
