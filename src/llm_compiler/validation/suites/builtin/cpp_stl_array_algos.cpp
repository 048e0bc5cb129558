// exercises: std::array, std::iota, std::partial_sum, std::adjacent_difference, std::find_if, std::count_if, std::min_element, std::max_element, std::rotate, std::reverse, std::next_permutation, std::equal, array comparison operators
// Computes triangular numbers, searches, rotations and permutation statistics (derangements of five elements) with std::array and standard algorithms.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using A10 = std::array<int, 10>;

static bool greaterThan20(int v) { return v > 20; }
static bool isEven(int v) { return v % 2 == 0; }
static bool isNegative(int v) { return v < 0; }

int main() {
    volatile int start = 1;
    A10 a;
    std::iota(a.begin(), a.end(), static_cast<int>(start));
    A10 tri;
    std::partial_sum(a.begin(), a.end(), tri.begin());
    CHECK(tri[9] == 55);
    CHECK(tri[4] == 15);
    A10 back;
    std::adjacent_difference(tri.begin(), tri.end(), back.begin());
    CHECK(std::equal(back.begin(), back.end(), a.begin()) && back == a);

    long found = std::find_if(tri.begin(), tri.end(), greaterThan20) - tri.begin();
    long evens = std::count_if(tri.begin(), tri.end(), isEven);
    CHECK(found == 5 && tri[static_cast<std::size_t>(found)] == 21 && evens == 4);

    A10 rot = a;
    std::rotate(rot.begin(), rot.begin() + 3, rot.end());
    CHECK(rot[0] == 4 && rot[6] == 10 && rot[7] == 1 && rot[9] == 3);
    std::reverse(rot.begin(), rot.end());
    CHECK(rot[0] == 3 && rot[2] == 1 && rot[3] == 10 && rot[9] == 4);
    CHECK(a < rot && !(rot < a) && a != rot);

    volatile std::uint32_t seed = 31337;
    std::uint32_t x = seed;
    std::array<int, 16> d;
    for (int& v : d) {
        x = (x * 1103515245u + 12345u) & 0x7fffffffu;
        v = static_cast<int>((x >> 8) % 500u) - 250;
    }
    CHECK(d[0] == -154 && d[15] == -247);
    long minIdx = std::min_element(d.begin(), d.end()) - d.begin();
    long maxIdx = std::max_element(d.begin(), d.end()) - d.begin();
    CHECK(minIdx == 15 && maxIdx == 4 && d[4] == 235);
    CHECK(std::count_if(d.begin(), d.end(), isNegative) == 7);

    std::array<int, 5> perm = {{1, 2, 3, 4, 5}};
    int total = 0, derangements = 0, firstLessLast = 0;
    do {
        ++total;
        bool fixedPoint = false;
        for (int i = 0; i < 5; ++i) fixedPoint = fixedPoint || perm[static_cast<std::size_t>(i)] == i + 1;
        derangements += fixedPoint ? 0 : 1;
        firstLessLast += perm[0] < perm[4] ? 1 : 0;
    } while (std::next_permutation(perm.begin(), perm.end()));
    CHECK(total == 120 && derangements == 44 && firstLessLast == 60);
    CHECK(perm[0] == 1 && perm[4] == 5);

    long long checksum = tri[9] * 1000000LL + found * 100000 + evens * 10000 + minIdx * 100 + maxIdx +
                         derangements * 10 + (d[static_cast<std::size_t>(maxIdx)] - d[static_cast<std::size_t>(minIdx)]) + firstLessLast;
    CHECK(checksum == 55542486);
    std::printf("cpp_stl_array_algos: %lld\n", checksum);
    return 0;
}
