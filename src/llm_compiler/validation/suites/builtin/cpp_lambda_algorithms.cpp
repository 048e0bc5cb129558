// exercises: lambdas as std::sort comparators, predicates for std::count_if, std::find_if, std::all_of and std::any_of, binary lambdas for std::accumulate, unary lambdas for std::transform, std::for_each with reference captures
// Ranks eight records with a lambda comparator and computes counts, filtered sums, searches and maxima with lambdas passed to standard algorithms.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Record { int id, age, score; };

int main() {
    volatile int bonus = 0;
    std::array<Record, 8> people = {{{1, 25, 88}, {2, 34, 92}, {3, 29, 75}, {4, 41, 92},
                                     {5, 30, 60}, {6, 22, 99}, {7, 37, 75}, {8, 28, 81}}};
    for (Record& r : people) r.score += bonus;

    int threshold = 30;
    long adults = std::count_if(people.begin(), people.end(), [threshold](const Record& r) { return r.age >= threshold; });
    CHECK(adults == 4);

    int youngScores = std::accumulate(people.begin(), people.end(), 0, [threshold](int acc, const Record& r) {
        return r.age < threshold ? acc + r.score : acc;
    });
    CHECK(youngScores == 343);

    auto firstHigh = std::find_if(people.begin(), people.end(), [](const Record& r) { return r.score > 90; });
    CHECK(firstHigh != people.end() && firstHigh->id == 2);
    const int firstHighId = firstHigh->id;
    CHECK(std::all_of(people.begin(), people.end(), [](const Record& r) { return r.score >= 50; }));
    CHECK(std::any_of(people.begin(), people.end(), [](const Record& r) { return r.age > 40; }));
    CHECK(!std::any_of(people.begin(), people.end(), [](const Record& r) { return r.id > 8; }));

    int oldest = 0;
    std::for_each(people.begin(), people.end(), [&oldest](const Record& r) { if (r.age > oldest) oldest = r.age; });
    CHECK(oldest == 41);

    std::array<int, 8> doubled{};
    std::transform(people.begin(), people.end(), doubled.begin(), [](const Record& r) { return r.score * 2; });
    int doubledSum = std::accumulate(doubled.begin(), doubled.end(), 0);
    CHECK(doubledSum == 1324);

    int comparisons = 0;
    std::sort(people.begin(), people.end(), [&comparisons](const Record& x, const Record& y) {
        ++comparisons;
        return x.score != y.score ? x.score > y.score : x.id < y.id;
    });
    int encoded = 0;
    for (const Record& r : people) encoded = encoded * 10 + r.id;
    CHECK(encoded == 62418375);
    CHECK(comparisons > 0);

    int checksum = encoded + static_cast<int>(adults) + youngScores + firstHighId + oldest + doubledSum;
    CHECK(checksum == 62420089);
    std::printf("cpp_lambda_algorithms: %d\n", checksum);
    return 0;
}
