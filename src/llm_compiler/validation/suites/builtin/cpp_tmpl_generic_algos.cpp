// exercises: function templates over iterators, default template arguments, comparator function objects, template argument deduction for C arrays and std::array, explicit template arguments, templates instantiated for several integer and floating types
// Sorts, searches, sums and reduces data with hand-written generic algorithm templates instantiated for several types.
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Less { template <typename T> bool operator()(const T& a, const T& b) const { return a < b; } };
struct Greater { template <typename T> bool operator()(const T& a, const T& b) const { return b < a; } };

template <typename It, typename Compare = Less>
void insertionSort(It first, It last, Compare cmp = Compare()) {
    if (first == last) return;
    for (It i = first + 1; i != last; ++i)
        for (It j = i; j != first && cmp(*j, *(j - 1)); --j) {
            auto t = *j; *j = *(j - 1); *(j - 1) = t;
        }
}

template <typename It, typename T>
It lowerBound(It first, It last, const T& v) {
    while (first != last) {
        It mid = first + (last - first) / 2;
        if (*mid < v) first = mid + 1; else last = mid;
    }
    return first;
}

template <typename T, std::size_t N>
T sumOf(const T (&arr)[N]) { T s = T(); for (const T& v : arr) s += v; return s; }

template <typename Container>
typename Container::value_type sumOf(const Container& c) { typename Container::value_type s{}; for (const auto& v : c) s += v; return s; }

template <typename T>
T gcdT(T a, T b) { while (b != T(0)) { T t = a % b; a = b; b = t; } return a; }

template <typename T>
T powMod(T base, T exp, T mod) {
    T result = T(1) % mod;
    base %= mod;
    for (; exp != T(0); exp /= T(2)) {
        if (exp % T(2) == T(1)) result = result * base % mod;
        base = base * base % mod;
    }
    return result;
}

template <typename To, typename From>
To convert(From v) { return static_cast<To>(v); }

int main() {
    volatile int raw[10] = {42, 7, 19, 3, 88, 23, 7, 56, 11, 30};
    int data[10];
    for (int i = 0; i < 10; ++i) data[i] = raw[i];
    insertionSort(data, data + 10);
    const int sorted[10] = {3, 7, 7, 11, 19, 23, 30, 42, 56, 88};
    for (int i = 0; i < 10; ++i) CHECK(data[i] == sorted[i]);
    int total = sumOf(data);
    CHECK(total == 286);
    long idx7 = lowerBound(data, data + 10, 7) - data;
    long idx8 = lowerBound(data, data + 10, 8) - data;
    long idx100 = lowerBound(data, data + 10, 100) - data;
    CHECK(idx7 == 1 && idx8 == 3 && idx100 == 10 && lowerBound(data, data + 10, 0) == data);

    insertionSort(data, data + 10, Greater());
    CHECK(data[0] == 88 && data[9] == 3);

    std::array<double, 4> ds{{1.5, 2.25, 3.0, 0.25}};
    insertionSort(ds.begin(), ds.end());
    CHECK(ds[0] == 0.25 && sumOf(ds) == 7.0);

    char word[] = "template";
    insertionSort(word, word + 8);
    const char expectWord[] = "aeelmptt";
    for (int i = 0; i < 8; ++i) CHECK(word[i] == expectWord[i]);

    volatile long long scale = 1000000;
    int g1 = gcdT(84, 36);
    long long g2 = gcdT(1071LL * scale, 462LL * scale);
    unsigned g3 = gcdT(17u, 5u);
    CHECK(g1 == 12 && g2 == 21000000 && g3 == 1u);

    using ull = unsigned long long;
    ull p1 = powMod<ull>(2, 62, 1000000007ULL);
    ull p2 = powMod<ull>(3, 200, 1000003ULL);
    ull p3 = powMod<ull>(7, 12345, 998244353ULL);
    CHECK(p1 == 145586002ULL && p2 == 333986ULL && p3 == 69943761ULL);
    CHECK(convert<int>(3.99) == 3 && convert<long long>(g3) == 1);

    long long checksum = total * 1000LL + idx7 * 100 + idx8 * 10 + idx100 + g1 + g2 / scale + g3 +
                         convert<long long>((p1 + p2 + p3) % 1000000ULL);
    CHECK(checksum == 1149923);
    std::printf("cpp_tmpl_generic_algos: %lld\n", checksum);
    return 0;
}
