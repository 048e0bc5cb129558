// exercises: class templates with type and non-type parameters, default template arguments, member function templates, return type deduction with decltype, template friend equality operator, instantiation with user-defined types
// Implements a fixed-capacity vector class template and computes sums, maps, filters and reversals over int, char and Point instantiations.
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <utility>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <typename T, std::size_t N = 8>
class FixedVec {
public:
    bool push_back(const T& v) { if (size_ == N) return false; items_[size_++] = v; return true; }
    T pop_back() { return items_[--size_]; }
    std::size_t size() const { return size_; }
    static constexpr std::size_t capacity() { return N; }
    T& operator[](std::size_t i) { return items_[i]; }
    const T& operator[](std::size_t i) const { return items_[i]; }
    const T* begin() const { return items_.data(); }
    const T* end() const { return items_.data() + size_; }

    template <typename F>
    auto map(F f) const -> FixedVec<decltype(f(std::declval<const T&>())), N> {
        FixedVec<decltype(f(std::declval<const T&>())), N> out;
        for (const T& v : *this) out.push_back(f(v));
        return out;
    }
    template <typename Pred>
    FixedVec filter(Pred p) const {
        FixedVec out;
        for (const T& v : *this) if (p(v)) out.push_back(v);
        return out;
    }
    template <typename Acc, typename F>
    Acc fold(Acc init, F f) const { for (const T& v : *this) init = f(init, v); return init; }
    void reverse() { for (std::size_t i = 0, j = size_; i + 1 < j; ++i, --j) std::swap(items_[i], items_[j - 1]); }

    friend bool operator==(const FixedVec& a, const FixedVec& b) {
        if (a.size_ != b.size_) return false;
        for (std::size_t i = 0; i < a.size_; ++i) if (!(a.items_[i] == b.items_[i])) return false;
        return true;
    }
private:
    std::array<T, N> items_{};
    std::size_t size_ = 0;
};

struct Point {
    int x = 0, y = 0;
    bool operator==(const Point& o) const { return x == o.x && y == o.y; }
};

static long long square(const int& v) { return static_cast<long long>(v) * v; }
static bool isOdd(const int& v) { return v % 2 != 0; }
static int manhattan(const Point& p) { return (p.x < 0 ? -p.x : p.x) + (p.y < 0 ? -p.y : p.y); }
template <typename A, typename B> static A plus(A a, const B& b) { return a + b; }

int main() {
    volatile int input[7] = {5, 3, 8, 1, 9, 2, 7};
    FixedVec<int, 6> v;
    int accepted = 0;
    for (int i = 0; i < 7; ++i) accepted += v.push_back(static_cast<int>(input[i])) ? 1 : 0;
    CHECK(accepted == 6 && v.size() == 6 && v.capacity() == 6);
    int sum = v.fold(0, plus<int, int>);
    CHECK(sum == 28);
    CHECK(v.pop_back() == 2 && v.size() == 5);

    FixedVec<long long, 6> sq = v.map(square);
    long long sqSum = sq.fold(0LL, plus<long long, long long>);
    CHECK(sqSum == 180 && sq[2] == 64);

    FixedVec<int, 6> odd = v.filter(isOdd);
    CHECK(odd.size() == 4 && odd[3] == 9);

    FixedVec<int, 6> copy = v;
    CHECK(copy == v);
    copy.reverse();
    CHECK(!(copy == v) && copy[0] == 9 && copy[1] == 1 && copy[4] == 5);
    copy.reverse();
    CHECK(copy == v);

    FixedVec<Point, 4> pts;
    pts.push_back(Point{1, 2});
    pts.push_back(Point{3, input[1] + 1});
    pts.push_back(Point{-5, 6});
    int dist = pts.map(manhattan).fold(0, plus<int, int>);
    CHECK(dist == 21 && pts[2] == (Point{-5, 6}));

    FixedVec<char> text;
    for (const char* s = "hello"; *s != '\0'; ++s) text.push_back(*s);
    int ls = 0;
    for (char c : text) ls += (c == 'l') ? 1 : 0;
    CHECK(ls == 2 && FixedVec<char>::capacity() == 8);

    long long checksum = sum + sqSum * 10 + static_cast<long long>(odd.size()) * 100 + dist * 1000LL + ls;
    CHECK(checksum == 23230);
    std::printf("cpp_tmpl_fixed_vector: %lld\n", checksum);
    return 0;
}
