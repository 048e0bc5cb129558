// exercises: std::vector, std::sort, std::lower_bound, std::accumulate, range-for loops, fixed-seed LCG data
// Generates 200 pseudo-random values with a fixed-seed LCG and computes sorted statistics, distinct counts and filtered counts with std::vector algorithms.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static std::vector<int> generate(std::uint32_t seed, int n) {
    std::vector<int> out;
    std::uint32_t x = seed;
    for (int i = 0; i < n; ++i) {
        x = (x * 1103515245u + 12345u) & 0x7fffffffu;
        out.push_back(static_cast<int>((x >> 8) % 1000u));
    }
    return out;
}

static bool notDivisibleBy3(int v) { return v % 3 != 0; }

int main() {
    volatile std::uint32_t seed = 12345;
    volatile int count = 200;
    std::vector<int> v = generate(seed, count);
    CHECK(v.size() == 200);
    CHECK(v[0] == 830 && v[1] == 967 && v[4] == 340);

    long long sum = std::accumulate(v.begin(), v.end(), 0LL);
    CHECK(sum == 98754);
    long long div7 = 0, kept = 0;
    for (int x : v) {
        div7 += (x % 7 == 0) ? 1 : 0;
        kept += notDivisibleBy3(x) ? 1 : 0;
    }
    CHECK(div7 == 24 && kept == 122);

    std::sort(v.begin(), v.end());
    CHECK(v.front() == 15 && v.back() == 997);
    int median2 = v[99] + v[100];
    CHECK(median2 == 948);
    long below500 = std::lower_bound(v.begin(), v.end(), 500) - v.begin();
    CHECK(below500 == 102);
    CHECK(*std::lower_bound(v.begin(), v.end(), 830) == 830 && v[static_cast<std::size_t>(below500)] != 500);
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i - 1] <= v[i]);

    long long distinct = 0, distinctSum = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
        if (i == 0 || v[i] != v[i - 1]) { ++distinct; distinctSum += v[i]; }
    CHECK(distinct == 187 && distinctSum == 92449);

    long long checksum = sum + median2 + distinct + below500 + div7 + kept + distinctSum;
    CHECK(checksum == 192586);
    std::printf("cpp_stl_vector_sort: %lld\n", checksum);
    return 0;
}
