// exercises: full class template specialization, partial specialization for pointers, const and arrays, function template specialization, std::enable_if overloads, if constexpr, bit-packed specialization of a container template
// Computes type tags through template specializations and uses a bool-specialized bit storage next to the generic storage template.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <typename T> struct TypeTag { static constexpr int id = 0; };
template <> struct TypeTag<int> { static constexpr int id = 1; };
template <> struct TypeTag<double> { static constexpr int id = 2; };
template <typename T> struct TypeTag<T*> { static constexpr int id = 10 + TypeTag<T>::id; };
template <typename T> struct TypeTag<const T> { static constexpr int id = 50 + TypeTag<T>::id; };
template <typename T, std::size_t N> struct TypeTag<T[N]> { static constexpr int id = 100 + static_cast<int>(N); };

template <typename T, std::size_t N>
class Storage {
public:
    void set(std::size_t i, T v) { data_[i] = v; }
    T get(std::size_t i) const { return data_[i]; }
    static constexpr std::size_t bytes() { return sizeof(T) * N; }
private:
    T data_[N] = {};
};

template <std::size_t N>
class Storage<bool, N> {
public:
    void set(std::size_t i, bool v) {
        std::uint64_t bit = std::uint64_t(1) << (i % 64);
        if (v) words_[i / 64] |= bit; else words_[i / 64] &= ~bit;
    }
    bool get(std::size_t i) const { return ((words_[i / 64] >> (i % 64)) & 1u) != 0; }
    static constexpr std::size_t bytes() { return (N + 63) / 64 * 8; }
    std::size_t count() const {
        std::size_t c = 0;
        for (std::size_t i = 0; i < N; ++i) c += get(i) ? 1 : 0;
        return c;
    }
private:
    std::uint64_t words_[(N + 63) / 64] = {};
};

template <typename T>
typename std::enable_if<std::is_integral<T>::value, int>::type category(T) { return 1; }
template <typename T>
typename std::enable_if<std::is_floating_point<T>::value, int>::type category(T) { return 2; }
static int category(const char*) { return 3; }

template <typename T>
long long normalize(T v) {
    if constexpr (std::is_floating_point<T>::value) return static_cast<long long>(v * 100);
    else if constexpr (std::is_signed<T>::value) return v < 0 ? -static_cast<long long>(v) : static_cast<long long>(v);
    else return static_cast<long long>(v);
}

template <typename T> int weight(const T&) { return 1; }
template <> int weight<double>(const double&) { return 8; }

int main() {
    constexpr int tagSum = TypeTag<int>::id + TypeTag<double>::id + TypeTag<char>::id + TypeTag<int*>::id +
                           TypeTag<double**>::id + TypeTag<const int>::id + TypeTag<int[5]>::id +
                           TypeTag<const int*>::id;
    static_assert(TypeTag<double**>::id == 22 && TypeTag<const int*>::id == 61, "nested tags");
    CHECK(tagSum == 253);

    volatile std::size_t hundred = 100;
    Storage<bool, 100> bits;
    for (std::size_t i = 0; i < hundred; i += 3) bits.set(i, true);
    CHECK(bits.count() == 34);
    for (std::size_t i = 0; i < hundred; i += 6) bits.set(i, false);
    CHECK(bits.count() == 17 && bits.get(3) && !bits.get(6) && !bits.get(4));
    static_assert(Storage<bool, 100>::bytes() == 16 && Storage<int, 10>::bytes() == 40, "bytes");

    Storage<int, 10> ints;
    for (std::size_t i = 0; i < 10; ++i) ints.set(i, static_cast<int>(i * i));
    int intSum = 0;
    for (std::size_t i = 0; i < 10; ++i) intSum += ints.get(i);
    CHECK(intSum == 285);

    volatile unsigned char uc = 200;
    int cats = category(42) + category(1.5) + category("text") + category(static_cast<unsigned char>(uc));
    CHECK(cats == 7);

    volatile double neg = -2.5;
    volatile int negInt = -7;
    long long norms = normalize(static_cast<double>(neg)) + normalize(static_cast<int>(negInt)) + normalize(9u);
    CHECK(norms == -234);
    CHECK(weight(1) + weight(2.0) == 9);

    long long checksum = tagSum * 1000LL + static_cast<long long>(bits.count()) * 100 + Storage<bool, 100>::bytes() +
                         Storage<int, 10>::bytes() + intSum + cats + norms + weight(1) + weight(2.0);
    CHECK(checksum == 254823);
    std::printf("cpp_tmpl_specialization: %lld\n", checksum);
    return 0;
}
