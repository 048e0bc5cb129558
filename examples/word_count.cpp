// word_count.cpp: counts word frequencies of a fixed embedded text in a
// std::map<std::string, int>, splitting and lower-casing with a lambda and
// querying the map with small template functions.
// Exercises: template instantiation, lambda inlining, std::string and
// red-black-tree code from the standard library, and character loops.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {

const char kText[] =
    "The compiler reads the program, and the optimizer rewrites the program.\n"
    "A smaller program is a faster download; a faster program is a happier user.\n"
    "Passes run in order: the order of passes matters, and the size of the code\n"
    "depends on the order. Measure the size, tune the order, measure again!";

// Returns the first entry (in key order) with the largest mapped value.
template <typename Map>
typename Map::const_iterator max_by_value(const Map &m) {
    auto best = m.begin();
    for (auto it = m.begin(); it != m.end(); ++it)
        if (it->second > best->second)
            best = it;
    return best;
}

// Sums f(key, value) over all entries.
template <typename Map, typename F>
long fold_entries(const Map &m, F f) {
    long acc = 0;
    for (const auto &kv : m)
        acc += f(kv.first, kv.second);
    return acc;
}

}  // namespace

int main() {
    std::map<std::string, int> freq;
    int total = 0;

    auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };

    std::string word;
    for (const char *p = kText;; ++p) {
        if (*p != '\0' && is_letter(*p)) {
            word += lower(*p);
            continue;
        }
        if (!word.empty()) {
            ++freq[word];
            ++total;
            word.clear();
        }
        if (*p == '\0')
            break;
    }

    auto top = max_by_value(freq);
    long hapax = fold_entries(freq, [](const std::string &, int n) { return n == 1 ? 1L : 0L; });
    long letters = fold_entries(freq, [](const std::string &w, int) { return static_cast<long>(w.size()); });

    if (total != 52 || freq.size() != 27 || hapax != 16 || letters != 136)
        std::abort();
    if (top->first != "the" || top->second != 10)
        std::abort();
    if (freq["program"] != 4 || freq["order"] != 4 || freq["a"] != 4 || freq["user"] != 1)
        std::abort();
    if (freq.begin()->first != "a" || freq.rbegin()->first != "user")
        std::abort();

    std::printf("word_count: words=%d distinct=%zu hapax=%ld top=%s:%d\n", total, freq.size(),
                hapax, top->first.c_str(), top->second);
    return 0;
}
