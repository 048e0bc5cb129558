// exercises: visitor pattern, double dispatch, pure virtual visitor interface, accept methods, stateful visitors, calls through base references
// Walks a small directory tree with several visitors to compute total size, node counts, maximum depth and large-file statistics.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

class File;
class Dir;

class Visitor {
public:
    virtual ~Visitor() = default;
    virtual void visit(const File& f) = 0;
    virtual void visit(const Dir& d) = 0;
};

class Node {
public:
    virtual ~Node() = default;
    virtual void accept(Visitor& v) const = 0;
};

class File final : public Node {
public:
    explicit File(long size) : size_(size) {}
    long size() const { return size_; }
    void accept(Visitor& v) const override { v.visit(*this); }
private:
    long size_;
};

class Dir final : public Node {
public:
    void add(const Node& n) { if (count_ < 4) children_[count_++] = &n; }
    int count() const { return count_; }
    const Node& child(int i) const { return *children_[i]; }
    void accept(Visitor& v) const override { v.visit(*this); }
private:
    const Node* children_[4] = {};
    int count_ = 0;
};

// Visits children of a directory; shared by the concrete visitors.
class RecursiveVisitor : public Visitor {
public:
    void visit(const Dir& d) override {
        onDir(d);
        ++level_;
        for (int i = 0; i < d.count(); ++i) d.child(i).accept(*this);
        --level_;
    }
protected:
    virtual void onDir(const Dir&) {}
    int level_ = 0;
};

class SizeVisitor final : public RecursiveVisitor {
public:
    long total = 0;
    void visit(const File& f) override { total += f.size(); }
    using RecursiveVisitor::visit;
};

class CountVisitor final : public RecursiveVisitor {
public:
    int files = 0, dirs = 0, maxDepth = 0;
    void visit(const File&) override { ++files; if (level_ > maxDepth) maxDepth = level_; }
    using RecursiveVisitor::visit;
private:
    void onDir(const Dir&) override { ++dirs; }
};

class LargeFileVisitor final : public RecursiveVisitor {
public:
    explicit LargeFileVisitor(long limit) : limit_(limit) {}
    int over = 0;
    long largest = -1;
    void visit(const File& f) override {
        if (f.size() > limit_) ++over;
        if (f.size() > largest) largest = f.size();
    }
    using RecursiveVisitor::visit;
private:
    long limit_;
};

static long sizeOf(const Node& n) { SizeVisitor v; n.accept(v); return v.total; }

int main() {
    volatile long sizes[6] = {100, 250, 40, 5, 7, 0};
    File a(sizes[0]), b(sizes[1]), c(sizes[2]), d(sizes[3]), e(sizes[4]), f(sizes[5]);
    Dir root, sub1, sub2;
    sub2.add(d); sub2.add(e);
    sub1.add(c); sub1.add(sub2);
    root.add(a); root.add(b); root.add(sub1); root.add(f);

    long total = sizeOf(root);
    CHECK(total == 402);
    CHECK(sizeOf(sub1) == 52 && sizeOf(sub2) == 12 && sizeOf(b) == 250);

    CountVisitor cv;
    root.accept(cv);
    CHECK(cv.files == 6 && cv.dirs == 3 && cv.maxDepth == 3);

    LargeFileVisitor lv(10);
    Visitor& asBase = lv;
    root.accept(asBase);
    CHECK(lv.over == 3 && lv.largest == 250);

    CountVisitor leafOnly;
    e.accept(leafOnly);
    CHECK(leafOnly.files == 1 && leafOnly.dirs == 0 && leafOnly.maxDepth == 0);

    long checksum = total * 1000 + cv.files * 100 + cv.dirs * 10 + cv.maxDepth;
    CHECK(checksum == 402633);
    std::printf("cpp_virtual_visitor: %ld\n", checksum);
    return 0;
}
