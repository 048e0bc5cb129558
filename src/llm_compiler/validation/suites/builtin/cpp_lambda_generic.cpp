// exercises: generic lambdas with auto parameters, variadic generic lambdas with fold expressions, constexpr lambdas in static_assert, forwarding with auto&& and std::forward, generic lambdas instantiated for int, long long, double and char, generic lambdas as comparator arguments
// Applies generic lambdas to values of several types, folds parameter packs, transforms arrays and sorts with a generic comparator.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <typename T, std::size_t N, typename Less>
void insertionSort(T (&a)[N], Less less) {
    for (std::size_t i = 1; i < N; ++i)
        for (std::size_t j = i; j > 0 && less(a[j], a[j - 1]); --j) { T t = a[j]; a[j] = a[j - 1]; a[j - 1] = t; }
}

int main() {
    constexpr auto square = [](auto v) { return v * v; };
    static_assert(square(12) == 144, "constexpr generic lambda");
    static_assert(std::is_same<decltype(square(2.0)), double>::value, "deduced double");

    volatile int base = 21;
    auto twice = [](auto x) { return x + x; };
    CHECK(twice(static_cast<int>(base)) == 42);
    CHECK(twice(1.25) == 2.5 && twice('A') == 130 && twice(3000000000LL) == 6000000000LL);

    auto sumAll = [](auto... xs) { return (xs + ... + 0); };
    CHECK(sumAll(1, 2, 3) == 6 && sumAll() == 0);
    auto mixed = sumAll(1, 2LL, 3u);
    static_assert(std::is_same<decltype(mixed), long long>::value, "promoted to long long");
    CHECK(mixed == 6);

    auto maxOf = [](auto a, auto b) { return a < b ? b : a; };
    CHECK(maxOf(3, static_cast<int>(base)) == 21 && maxOf(2.5, -1.0) == 2.5 && maxOf('x', 'q') == 'x');

    auto applyAll = [](auto f, auto& container) { for (auto& v : container) v = f(v); };
    std::array<int, 4> ints = {{1, 2, 3, 4}};
    double reals[3] = {0.5, 1.5, 2.5};
    applyAll(square, ints);
    applyAll(twice, reals);
    CHECK(ints[3] == 16 && ints[0] + ints[1] + ints[2] + ints[3] == 30);
    CHECK(reals[0] == 1.0 && reals[2] == 5.0);

    int calls = 0;
    auto invoke = [&calls](auto&& fn, auto&&... args) {
        ++calls;
        return std::forward<decltype(fn)>(fn)(std::forward<decltype(args)>(args)...);
    };
    int viaInvoke = invoke(sumAll, 4, 5, 6) + invoke(twice, 10) + invoke(maxOf, 7, 9);
    CHECK(viaInvoke == 15 + 20 + 9 && calls == 3);

    double values[5] = {3.5, -2.0, 9.25, 0.0, 4.75};
    insertionSort(values, [](const auto& a, const auto& b) { return a > b; });
    CHECK(values[0] == 9.25 && values[4] == -2.0);
    long long words[4] = {40, 10, 30, 20};
    insertionSort(words, [](auto a, auto b) { return a < b; });
    CHECK(words[0] == 10 && words[3] == 40);

    int checksum = twice(static_cast<int>(base)) + static_cast<int>(mixed) + maxOf(3, static_cast<int>(base)) +
                   ints[3] + static_cast<int>(reals[2] * 10) + viaInvoke * 100 + static_cast<int>(values[0] * 4) +
                   static_cast<int>(words[3]);
    CHECK(checksum == 4612);
    std::printf("cpp_lambda_generic: %d\n", checksum);
    return 0;
}
