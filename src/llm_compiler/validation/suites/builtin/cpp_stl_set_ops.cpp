// exercises: std::set insertion and ordered iteration, lower_bound, erase by iterator, find, std::set_intersection, std::set_union, std::set_difference into arrays
// Computes intersections, unions and differences of multiples-of-3 and multiples-of-5 sets and sieves primes below 100 by erasing from a std::set.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using IntSet = std::set<int>;

struct Range {
    int items[128];
    int n = 0;
    long long sum() const { long long s = 0; for (int i = 0; i < n; ++i) s += items[i]; return s; }
    bool increasing() const { for (int i = 1; i < n; ++i) if (items[i - 1] >= items[i]) return false; return true; }
};

static IntSet multiples(int step, int limit) {
    IntSet s;
    for (int x = 0; x < limit; x += step) s.insert(x);
    return s;
}

static Range combine(char op, const IntSet& a, const IntSet& b) {
    Range r;
    int* end = r.items;
    if (op == '&') end = std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), r.items);
    else if (op == '|') end = std::set_union(a.begin(), a.end(), b.begin(), b.end(), r.items);
    else end = std::set_difference(a.begin(), a.end(), b.begin(), b.end(), r.items);
    r.n = static_cast<int>(end - r.items);
    return r;
}

static int primesBelow(int limit, int& largest) {
    IntSet primes;
    for (int x = 2; x < limit; ++x) primes.insert(x);
    for (IntSet::iterator it = primes.begin(); it != primes.end(); ++it)
        for (int m = *it * 2; m < limit; m += *it) {
            IntSet::iterator found = primes.find(m);
            if (found != primes.end()) primes.erase(found);
        }
    for (int p : primes) largest = p;
    return primes.find(91) == primes.end() ? static_cast<int>(primes.size()) : -1;
}

static void expect(long long got, long long want) { CHECK(got == want); }

int main() {
    volatile int limit = 100, m3 = 3, m5 = 5;
    IntSet a = multiples(m3, limit), b = multiples(m5, limit);
    CHECK(a.size() == 34);
    expect(static_cast<long long>(b.size()), 20);
    expect(*b.lower_bound(91), 95);

    Range inter = combine('&', a, b), uni = combine('|', a, b), diff = combine('-', a, b), back = combine('-', b, a);
    expect(inter.n, 7);
    expect(inter.sum(), 315);
    expect(inter.items[6], 90);
    expect(uni.n, 47);
    expect(uni.sum(), 2318);
    expect(uni.increasing(), true);
    expect(diff.n, 27);
    expect(diff.sum(), 1368);
    expect(back.n, 13);
    expect(back.sum(), 950 - 315);
    expect(diff.n + back.n, 40);

    int lbA = *a.lower_bound(50), lbB = *b.lower_bound(51);
    expect(lbA, 51);
    expect(lbB, 55);
    while (*a.begin() < 30) a.erase(a.begin());
    expect(static_cast<long long>(a.size()), 24);
    expect(*a.begin(), 30);
    b.erase(b.find(50));
    expect(static_cast<long long>(b.size()), 19);
    expect(b.find(50) == b.end(), true);
    expect(b.find(55) != b.end(), true);

    int largest = 0;
    int primeCount = primesBelow(limit, largest);
    expect(primeCount, 25);
    expect(largest, 97);

    long long checksum = inter.n * 1000000LL + uni.sum() * 100 + diff.sum() + diff.n + back.n + lbA + lbB +
                         static_cast<long long>(a.size()) + primeCount + largest;
    CHECK(checksum == 7233460);
    std::printf("cpp_stl_set_ops: %lld\n", checksum);
    return 0;
}
