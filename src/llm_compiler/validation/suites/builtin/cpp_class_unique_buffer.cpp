// exercises: rule of five, deep copy constructor, move constructor, copy-and-swap assignment, new[]/delete[] ownership, noexcept moves in std::vector
// Manages heap int buffers with a rule-of-five class and checks that every allocation is freed exactly once.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static int allocs = 0, frees = 0;

class IntBuffer {
public:
    IntBuffer() = default;
    explicit IntBuffer(std::size_t n) : size_(n), data_(n ? new int[n]() : nullptr) { if (data_) ++allocs; }
    IntBuffer(const IntBuffer& o) : IntBuffer(o.size_) {
        for (std::size_t i = 0; i < size_; ++i) data_[i] = o.data_[i];
    }
    IntBuffer(IntBuffer&& o) noexcept : size_(o.size_), data_(o.data_) { o.size_ = 0; o.data_ = nullptr; }
    IntBuffer& operator=(IntBuffer o) noexcept { swap(o); return *this; }
    ~IntBuffer() { if (data_) { ++frees; delete[] data_; } }
    void swap(IntBuffer& o) noexcept { std::swap(size_, o.size_); std::swap(data_, o.data_); }
    int& operator[](std::size_t i) { return data_[i]; }
    const int& operator[](std::size_t i) const { return data_[i]; }
    std::size_t size() const { return size_; }
    long long sum() const {
        long long s = 0;
        for (std::size_t i = 0; i < size_; ++i) s += data_[i];
        return s;
    }
private:
    std::size_t size_ = 0;
    int* data_ = nullptr;
};

static IntBuffer concat(const IntBuffer& x, const IntBuffer& y) {
    IntBuffer r(x.size() + y.size());
    for (std::size_t i = 0; i < x.size(); ++i) r[i] = x[i];
    for (std::size_t i = 0; i < y.size(); ++i) r[x.size() + i] = y[i];
    return r;
}

int main() {
    volatile int seed = 3;
    int checksum = 0;
    {
        IntBuffer a(5);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i * i) * seed;
        CHECK(a.sum() == 90);
        IntBuffer b(a);
        b[0] = 100;
        CHECK(a.sum() == 90 && b.sum() == 190 && allocs == 2);
        IntBuffer c(std::move(b));
        CHECK(b.size() == 0 && c.sum() == 190 && allocs == 2);
        a = c;
        CHECK(a.sum() == 190 && a[0] == 100 && allocs == 3 && frees == 1);
        c = IntBuffer(2);
        CHECK(c.size() == 2 && c.sum() == 0 && allocs == 4 && frees == 2);
        IntBuffer empty;
        empty = std::move(a);
        CHECK(a.size() == 0 && empty.sum() == 190 && frees == 2);
        checksum += static_cast<int>(empty.sum());

        std::vector<IntBuffer> v;
        for (std::size_t i = 1; i <= 4; ++i) {
            v.push_back(IntBuffer(i));
            for (std::size_t j = 0; j < i; ++j) v.back()[j] = static_cast<int>(i * (j + 1));
        }
        CHECK(allocs == 8 && frees == 2);
        IntBuffer joined = concat(v[1], v[3]);
        CHECK(joined.size() == 6 && joined.sum() == 46 && joined[2] == 4);
        checksum += static_cast<int>(joined.sum());
        v.erase(v.begin());
        CHECK(v.size() == 3 && v[0].sum() == 6 && frees == 3);
    }
    CHECK(allocs == 9 && frees == allocs);
    checksum += allocs * 100;
    CHECK(checksum == 1136);
    std::printf("cpp_class_unique_buffer: %d\n", checksum);
    return 0;
}
