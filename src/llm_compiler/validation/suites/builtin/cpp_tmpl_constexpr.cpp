// exercises: constexpr functions, constexpr loops, constexpr std::array, static_assert, recursive class templates with partial specialization, non-type template parameters
// Computes factorials, Fibonacci numbers, prime counts, Collatz step counts and integer powers both at compile time and at run time and checks they agree.
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

constexpr long long factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }

constexpr long long fib(int n) {
    long long a = 0, b = 1;
    for (int i = 0; i < n; ++i) { long long t = a + b; a = b; b = t; }
    return a;
}

constexpr int collatzSteps(long long n) {
    int steps = 0;
    while (n != 1) { n = (n % 2 == 0) ? n / 2 : 3 * n + 1; ++steps; }
    return steps;
}

constexpr long long gcd(long long a, long long b) { return b == 0 ? a : gcd(b, a % b); }

template <int N>
constexpr std::array<bool, N> sieve() {
    std::array<bool, N> s{};
    for (int i = 2; i < N; ++i) s[i] = true;
    for (int i = 2; i * i < N; ++i)
        if (s[i])
            for (int j = i * i; j < N; j += i) s[j] = false;
    return s;
}

template <int N>
constexpr int primeSumBelow(int limit) {
    constexpr std::array<bool, N> s = sieve<N>();
    int sum = 0;
    for (int i = 0; i < limit && i < N; ++i)
        if (s[i]) sum += i;
    return sum;
}

template <long long B, unsigned E>
struct Pow { static constexpr long long value = B * Pow<B, E - 1>::value; };
template <long long B>
struct Pow<B, 0> { static constexpr long long value = 1; };

template <typename T, std::size_t N>
constexpr std::size_t countTrue(const std::array<T, N>& a) {
    std::size_t c = 0;
    for (std::size_t i = 0; i < N; ++i) c += a[i] ? 1 : 0;
    return c;
}

constexpr std::array<bool, 1000> kPrimes = sieve<1000>();
static_assert(factorial(10) == 3628800, "factorial");
static_assert(fib(40) == 102334155, "fib");
static_assert(countTrue(kPrimes) == 168, "prime count");
static_assert(primeSumBelow<1000>(100) == 1060, "prime sum");
static_assert(collatzSteps(27) == 111, "collatz");
static_assert(Pow<3, 13>::value == 1594323, "pow");
static_assert(gcd(1071, 462) == 21, "gcd");

int main() {
    volatile int n10 = 10, n20 = 20, n40 = 40;
    volatile long long c27 = 27, c97 = 97;

    CHECK(factorial(n10) == 3628800);
    CHECK(factorial(n20) == 2432902008176640000LL);
    CHECK(fib(n40) == 102334155);
    CHECK(collatzSteps(c27) == 111 && collatzSteps(c97) == 118);

    std::array<bool, 1000> runtimeSieve = sieve<1000>();
    int count = 0, last = 0;
    for (int i = 0; i < 1000; ++i)
        if (runtimeSieve[i]) { ++count; last = i; }
    CHECK(count == 168 && last == 997);
    CHECK(runtimeSieve == kPrimes);

    volatile long long a = 1071, b = 462;
    CHECK(gcd(a, b) == 21);
    long long p = 1;
    for (int i = 0; i < 13; ++i) p *= 3;
    CHECK((p == Pow<3, 13>::value));

    long long checksum = count + primeSumBelow<1000>(100) + collatzSteps(c27) + fib(n40) % 1000 +
                         factorial(n10) % 1000 + Pow<3, 13>::value % 1000;
    CHECK(checksum == 2617);
    std::printf("cpp_tmpl_constexpr: %lld\n", checksum);
    return 0;
}
