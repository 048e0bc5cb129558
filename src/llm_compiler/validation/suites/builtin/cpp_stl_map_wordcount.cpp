// exercises: std::map with std::string keys, operator[] insertion, ordered iteration, std::string building with push_back and clear, c_str access
// Counts case-insensitive word frequencies in a fixed text with std::map and computes totals, ordered initials and weighted rank sums.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using Counts = std::map<std::string, int>;

static void addWords(Counts& counts, const char* text) {
    std::string word;
    for (const char* p = text;; ++p) {
        char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            word.push_back(static_cast<char>(c | 0x20));
        } else {
            if (!word.empty()) { ++counts[word]; word.clear(); }
            if (c == '\0') break;
        }
    }
}

int main() {
    const char* text = "the quick brown fox jumps over the lazy dog. The DOG barks, and the fox runs!";
    volatile int repeat = 2;
    Counts counts;
    for (int r = 0; r < repeat; ++r) addWords(counts, text);
    CHECK(counts.size() == 11);

    int total = 0, letters = 0, weighted = 0, rank = 0, atRepeat = 0, bestCount = 0;
    char initials[16] = {};
    const char* best = "";
    for (const auto& kv : counts) {
        total += kv.second;
        letters += static_cast<int>(kv.first.size()) * kv.second;
        weighted += (rank + 1) * kv.second;
        if (rank < 15) initials[rank] = kv.first[0];
        ++rank;
        if (kv.second > bestCount) { bestCount = kv.second; best = kv.first.c_str(); }
        if (kv.second == repeat) ++atRepeat;
    }
    CHECK(total == 32 && letters == 118 && weighted == 216);
    CHECK(std::strcmp(initials, "abbdfjloqrt") == 0);
    CHECK(std::strcmp(best, "the") == 0 && bestCount == 8 && atRepeat == 8);

    addWords(counts, "Cat cat FOX");
    CHECK(counts.size() == 12);
    int foxes = 0, cats = 0;
    for (const auto& kv : counts) {
        if (std::strcmp(kv.first.c_str(), "fox") == 0) foxes = kv.second;
        if (std::strcmp(kv.first.c_str(), "cat") == 0) cats = kv.second;
    }
    CHECK(foxes == 5 && cats == 2);

    int checksum = total * 10000 + weighted * 10 + 11 + letters + foxes * cats;
    CHECK(checksum == 322299);
    std::printf("cpp_stl_map_wordcount: %d\n", checksum);
    return 0;
}
