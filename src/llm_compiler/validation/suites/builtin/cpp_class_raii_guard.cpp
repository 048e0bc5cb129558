// exercises: RAII guards, destructors on early return, deleted copy operations, reference members, scope-based rollback, recursion with guards
// Uses RAII guards to keep a resource pool, a depth counter and a transactional vector consistent across early returns.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

class ValueRestorer {
public:
    ValueRestorer(int& ref, int newValue) : ref_(ref), saved_(ref) { ref_ = newValue; }
    ~ValueRestorer() { ref_ = saved_; }
    ValueRestorer(const ValueRestorer&) = delete;
    ValueRestorer& operator=(const ValueRestorer&) = delete;
private:
    int& ref_;
    int saved_;
};

struct Pool { int capacity = 3, available = 3, maxInUse = 0, acquisitions = 0; };

class Lease {
public:
    explicit Lease(Pool& p) : pool_(&p), held_(p.available > 0) {
        if (!held_) return;
        --p.available;
        ++p.acquisitions;
        if (p.capacity - p.available > p.maxInUse) p.maxInUse = p.capacity - p.available;
    }
    ~Lease() { release(); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    bool held() const { return held_; }
    void release() { if (held_) { ++pool_->available; held_ = false; } }
private:
    Pool* pool_;
    bool held_;
};

static int depth = 0, maxDepth = 0;

static int grab(Pool& p, int need) {
    if (need == 0) return 0;
    Lease lease(p);
    ValueRestorer r(depth, depth + 1);
    if (depth > maxDepth) maxDepth = depth;
    if (!lease.held()) return 0;
    return 1 + grab(p, need - 1);
}

class Transaction {
public:
    explicit Transaction(std::vector<int>& d) : data_(d), mark_(d.size()) {}
    ~Transaction() { if (!committed_) data_.resize(mark_); }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit() { committed_ = true; }
private:
    std::vector<int>& data_;
    std::size_t mark_;
    bool committed_ = false;
};

static bool appendAll(std::vector<int>& d, const int* items, int n) {
    Transaction t(d);
    for (int i = 0; i < n; ++i) {
        if (items[i] < 0) return false;
        d.push_back(items[i]);
    }
    t.commit();
    return true;
}

int main() {
    volatile int need2 = 2, need5 = 5;
    Pool p;
    CHECK(grab(p, need2) == 2);
    CHECK(p.available == 3 && p.maxInUse == 2 && depth == 0 && maxDepth == 2);
    CHECK(grab(p, need5) == 3);
    CHECK(p.available == 3 && p.maxInUse == 3 && depth == 0 && maxDepth == 4);
    {
        Lease a(p), b(p);
        a.release();
        CHECK(p.available == 2);
        a.release();
        CHECK(p.available == 2 && b.held() && !a.held());
    }
    CHECK(p.available == 3);
    CHECK(p.acquisitions == 7);

    std::vector<int> data;
    const int batch1[] = {1, 2, 3}, batch2[] = {4, -5, 6}, batch3[] = {7, 8};
    volatile int n3 = 3;
    CHECK(appendAll(data, batch1, n3));
    CHECK(!appendAll(data, batch2, n3));
    CHECK(data.size() == 3);
    CHECK(appendAll(data, batch3, 2));
    int sum = 0;
    for (int v : data) sum += v;
    CHECK(sum == 21 && data.size() == 5 && data[3] == 7);

    int checksum = sum * 100 + p.acquisitions * 10 + maxDepth;
    CHECK(checksum == 2174);
    std::printf("cpp_class_raii_guard: %d\n", checksum);
    return 0;
}
