// exercises: noexcept specifications, the noexcept operator, conditional noexcept in templates, std::move_if_noexcept, std::vector reallocation falling back to copies for a throwing move, noexcept functions that catch internally, implicitly noexcept destructors
// Checks noexcept properties at compile time and counts the copies and moves that vector reallocation and std::move_if_noexcept perform for throwing and non-throwing move constructors.
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static int copies = 0, moves = 0;

struct SafeMove {
    int v;
    explicit SafeMove(int x) : v(x) {}
    SafeMove(const SafeMove& o) : v(o.v) { ++copies; }
    SafeMove(SafeMove&& o) noexcept : v(o.v) { ++moves; }
};

struct RiskyMove {
    int v;
    explicit RiskyMove(int x) : v(x) {}
    RiskyMove(const RiskyMove& o) : v(o.v) { ++copies; }
    RiskyMove(RiskyMove&& o) : v(o.v) { if (o.v < 0) throw o.v; ++moves; }
};

struct DivideByZero { int numerator; };

static int riskyDiv(int a, int b) {
    if (b == 0) throw DivideByZero{a};
    return a / b;
}

static int safeDiv(int a, int b) noexcept {
    try {
        return riskyDiv(a, b);
    } catch (const DivideByZero& e) {
        return -e.numerator;
    }
}

template <typename T>
void exchange(T& a, T& b) noexcept(std::is_nothrow_move_constructible<T>::value) {
    T tmp(std::move(a));
    a.v = b.v;
    b.v = tmp.v;
}

static_assert(noexcept(safeDiv(1, 2)), "safeDiv is noexcept");
static_assert(!noexcept(riskyDiv(1, 2)), "riskyDiv may throw");
static_assert(noexcept(exchange(std::declval<SafeMove&>(), std::declval<SafeMove&>())), "conditional noexcept true");
static_assert(!noexcept(exchange(std::declval<RiskyMove&>(), std::declval<RiskyMove&>())), "conditional noexcept false");
static_assert(std::is_nothrow_destructible<RiskyMove>::value, "destructors are implicitly noexcept");

template <typename T>
static int reallocate(int base) {
    std::vector<T> v;
    v.reserve(2);
    v.emplace_back(base);
    v.emplace_back(base + 1);
    v.emplace_back(base + 2);
    return v[0].v + v[1].v + v[2].v;
}

int main() {
    volatile int zero = 0, seven = 7;
    CHECK(safeDiv(84, seven) == 12);
    CHECK(safeDiv(seven, zero) == -7);

    copies = moves = 0;
    CHECK(reallocate<RiskyMove>(20) == 63);
    CHECK(copies == 2 && moves == 0);

    copies = moves = 0;
    SafeMove s1(seven);
    SafeMove s2(std::move_if_noexcept(s1));
    RiskyMove r1(seven);
    RiskyMove r2(std::move_if_noexcept(r1));
    CHECK(copies == 1 && moves == 1 && s2.v == 7 && r2.v == 7);

    SafeMove a(1), b(2);
    exchange(a, b);
    CHECK(a.v == 2 && b.v == 1 && moves == 2);

    int thrown = 0;
    RiskyMove negative(-seven);
    try {
        RiskyMove taken(std::move(negative));
        thrown = taken.v;
    } catch (int v) {
        thrown = v * 10;
    }
    CHECK(thrown == -70);

    int checksum = safeDiv(84, seven) * 1000 + safeDiv(seven, zero) * 100 + moves * 10 + copies - thrown;
    CHECK(checksum == 11391);
    std::printf("cpp_exc_noexcept: %d\n", checksum);
    return 0;
}
