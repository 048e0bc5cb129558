// exercises: variadic function templates, fold expressions (unary and binary, left and right), sizeof..., recursive variadic class templates, std::index_sequence, type counting with std::is_same
// Computes sums, maxima, predicate counts, folds and dot products over parameter packs and checks them against hand-computed values.
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <typename... Ts>
constexpr auto sumAll(Ts... xs) { return (xs + ... + 0); }

template <typename... Ts>
constexpr auto rightFoldMinus(Ts... xs) { return (xs - ...); }

template <typename... Ts>
constexpr auto leftFoldMinus(Ts... xs) { return (... - xs); }

template <typename T>
constexpr T maxOf(T x) { return x; }
template <typename T, typename... Rest>
constexpr T maxOf(T x, Rest... rest) { T m = maxOf(rest...); return x > m ? x : m; }

template <typename Pred, typename... Ts>
constexpr int countIf(Pred pred, Ts... xs) { return (0 + ... + (pred(xs) ? 1 : 0)); }

template <typename... Ts>
constexpr bool allPositive(Ts... xs) { return ((xs > 0) && ...); }

template <typename T, typename... Ts>
constexpr int countType() { return (0 + ... + (std::is_same<T, Ts>::value ? 1 : 0)); }

struct IsEven { template <typename T> constexpr bool operator()(T v) const { return v % 2 == 0; } };

template <typename... Ts> struct Pack;
template <> struct Pack<> {
    static constexpr std::size_t size = 0;
    long long sum() const { return 0; }
};
template <typename T, typename... Rest>
struct Pack<T, Rest...> {
    static constexpr std::size_t size = 1 + sizeof...(Rest);
    T head;
    Pack<Rest...> tail;
    long long sum() const { return static_cast<long long>(head) + tail.sum(); }
};

template <typename T, std::size_t N, std::size_t... I>
constexpr T dotImpl(const std::array<T, N>& a, const std::array<T, N>& b, std::index_sequence<I...>) {
    return ((a[I] * b[I]) + ... + T(0));
}
template <typename T, std::size_t N>
constexpr T dot(const std::array<T, N>& a, const std::array<T, N>& b) { return dotImpl(a, b, std::make_index_sequence<N>{}); }

template <typename... Ts>
int storeAll(int* out, Ts... xs) {
    int n = 0;
    ((out[n++] = static_cast<int>(xs)), ...);
    return n;
}

int main() {
    static_assert(sumAll(1, 2, 3, 4) == 10, "sum");
    static_assert(sumAll() == 0, "empty sum");
    static_assert(std::is_same<decltype(sumAll(1, 2LL)), long long>::value, "promotion");
    static_assert(countType<int, int, char, int, long, int>() == 3, "count types");
    static_assert(Pack<int, char, long>::size == 3 && Pack<>::size == 0, "pack size");

    volatile int a = 10, b = 4, c = 3, d = -7;
    CHECK(sumAll(a, b, c, d) == 10);
    CHECK(rightFoldMinus(a, b, c) == 9 && leftFoldMinus(a, b, c) == 3);
    CHECK(maxOf(a, b, c, d) == 10 && maxOf(d, c) == 3 && maxOf(2.5, 1.0, 7.25) == 7.25);
    CHECK(countIf(IsEven{}, a, b, c, d, 0, 12LL) == 4);
    CHECK(allPositive(a, b, c) && !allPositive(a, d));

    Pack<int, char, long long> p{a, {'A', {1000000000000LL, {}}}};
    CHECK(p.sum() == 1000000000075LL && p.tail.head == 'A');

    std::array<long long, 4> x{{1, 2, 3, 4}}, y{{a, b, c, d}};
    CHECK(dot(x, y) == 1 * 10 + 2 * 4 + 3 * 3 + 4 * -7);

    int buf[8] = {};
    int stored = storeAll(buf, a, 'z', 5LL, c);
    CHECK(stored == 4 && buf[0] == 10 && buf[1] == 122 && buf[2] == 5 && buf[3] == 3);

    long long checksum = sumAll(a, b, c, d) * 1000 + rightFoldMinus(a, b, c) * 100 + leftFoldMinus(a, b, c) * 10 +
                         dot(x, y) + buf[1];
    CHECK(checksum == 11051);
    std::printf("cpp_tmpl_variadic: %lld\n", checksum);
    return 0;
}
