// exercises: generic lambdas that recurse by receiving themselves as an auto&& parameter, explicit lambda return types, memo tables captured by reference, std::map find and operator[] as a cache, counting evaluations to prove memoization
// Computes stair-climbing counts, binomial coefficients and the longest Collatz chain below 1000 with self-passing recursive lambdas and std::map memo tables.
#include <cstdio>
#include <cstdlib>
#include <map>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using Memo = std::map<int, long long>;

int main() {
    volatile int n30 = 30, n40 = 40, limit = 1000;

    Memo stairs;
    int stairCalls = 0;
    auto ways = [&stairs, &stairCalls](auto&& self, int n) -> long long {
        if (n < 0) return 0;
        if (n == 0) return 1;
        Memo::const_iterator it = stairs.find(n);
        if (it != stairs.end()) return it->second;
        ++stairCalls;
        long long r = self(self, n - 1) + self(self, n - 2) + self(self, n - 3);
        stairs[n] = r;
        return r;
    };
    long long w30 = ways(ways, n30);
    CHECK(w30 == 53798080);
    CHECK(stairCalls == 30 && stairs.size() == 30);
    CHECK(ways(ways, n30) == w30 && stairCalls == 30 && ways(ways, 4) == 7);

    Memo binom;
    auto choose = [&binom](auto&& self, int n, int k) -> long long {
        if (k == 0 || k == n) return 1;
        int key = n * 64 + k;
        Memo::const_iterator it = binom.find(key);
        if (it != binom.end()) return it->second;
        long long r = self(self, n - 1, k - 1) + self(self, n - 1, k);
        binom[key] = r;
        return r;
    };
    long long c4020 = choose(choose, n40, n40 / 2);
    CHECK(c4020 == 137846528820LL && binom.size() == 400);
    CHECK(choose(choose, 30, 15) == 155117520 && binom.size() == 400);

    Memo steps;
    auto collatz = [&steps](auto&& self, int n) -> long long {
        if (n == 1) return 0;
        Memo::const_iterator it = steps.find(n);
        if (it != steps.end()) return it->second;
        long long r = 1 + self(self, n % 2 == 0 ? n / 2 : 3 * n + 1);
        steps[n] = r;
        return r;
    };
    int bestStart = 0;
    long long bestLen = 0;
    for (int n = 1; n < limit; ++n) {
        long long len = collatz(collatz, n);
        if (len > bestLen) { bestLen = len; bestStart = n; }
    }
    CHECK(bestStart == 871 && bestLen == 178 && steps.size() == 2227);

    long long checksum = w30 + c4020 % 1000003 + bestStart + bestLen + static_cast<long long>(binom.size()) +
                         static_cast<long long>(steps.size()) + stairCalls;
    CHECK(checksum == 53917068);
    std::printf("cpp_lambda_memo: %lld\n", checksum);
    return 0;
}
