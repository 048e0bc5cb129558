// exercises: std::unordered_map with int keys, operator[] default insertion, find against end, first-occurrence bookkeeping, iteration independent of bucket order, std::array input, fixed-seed LCG data
// Uses hash maps over 300 LCG values to count target-sum pairs, find the longest subarray with a given sum, the first unique value, distinct values and the maximum frequency.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using Data = std::array<int, 300>;
using Map = std::unordered_map<int, int>;

static long long countPairs(const Data& a, int target) {
    Map seen;
    long long pairs = 0;
    for (int v : a) {
        Map::const_iterator it = seen.find(target - v);
        if (it != seen.end()) pairs += it->second;
        ++seen[v];
    }
    return pairs;
}

// Returns the length of the longest subarray with the given sum; start receives its first index.
static int longestWithSum(const Data& a, int sum, int& start) {
    Map firstIndex;
    int prefix = 0, best = 0;
    firstIndex[prefix] = -1;
    start = -1;
    for (int i = 0; i < static_cast<int>(a.size()); ++i) {
        prefix += a[static_cast<std::size_t>(i)];
        Map::const_iterator it = firstIndex.find(prefix - sum);
        if (it != firstIndex.end() && i - it->second > best) { best = i - it->second; start = it->second + 1; }
        if (firstIndex.find(prefix) == firstIndex.end()) firstIndex[prefix] = i;
    }
    return best;
}

int main() {
    volatile std::uint32_t seed = 2024;
    std::uint32_t x = seed;
    Data a{};
    for (int& v : a) {
        x = x * 1664525u + 1013904223u;
        v = static_cast<int>((x >> 16) % 50u) - 10;
    }
    CHECK(a[0] == 31 && a[1] == -4 && a[3] == -10);

    long long pairs = countPairs(a, 30);
    CHECK(pairs == 868);
    int start = 0;
    int longest = longestWithSum(a, 100, start);
    int check = 0;
    for (int i = start; i < start + longest; ++i) check += a[static_cast<std::size_t>(i)];
    CHECK(longest == 13 && start == 284 && check == 100);

    Map freq;
    for (int v : a) ++freq[v];
    int maxFreq = 0;
    long long total = 0;
    for (const auto& kv : freq) {
        if (kv.second > maxFreq) maxFreq = kv.second;
        total += static_cast<long long>(kv.first) * kv.second;
    }
    CHECK(freq.size() == 49 && maxFreq == 11 && total == 4552);
    int firstUnique = -100;
    for (int v : a)
        if (freq[v] == 1) { firstUnique = v; break; }
    CHECK(firstUnique == 19 && freq.find(40) == freq.end());

    long long checksum = pairs * 100000 + longest * 1000 + start + static_cast<long long>(freq.size()) + maxFreq + firstUnique;
    CHECK(checksum == 86813363);
    std::printf("cpp_stl_unordered_map: %lld\n", checksum);
    return 0;
}
