// exercises: pure virtual interface, virtual destructor, overriding through a two-level hierarchy, calls through base references, std::unique_ptr ownership, factory function
// Computes total doubled area, perimeter and side counts of a heterogeneous collection of shapes through a Shape interface.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

class Shape {
public:
    virtual ~Shape() = default;
    virtual long long area2() const = 0;
    virtual long long perimeter() const = 0;
    virtual int sides() const = 0;
    virtual const char* name() const = 0;
    long long score() const { return area2() * 100 + perimeter(); }  // non-virtual, dispatches internally
};

class Rect : public Shape {
public:
    Rect(int w, int h) : w_(w), h_(h) {}
    long long area2() const override { return 2LL * w_ * h_; }
    long long perimeter() const override { return 2LL * (w_ + h_); }
    int sides() const override { return 4; }
    const char* name() const override { return "rect"; }
private:
    int w_, h_;
};

class Square final : public Rect {
public:
    explicit Square(int s) : Rect(s, s) {}
    const char* name() const override { return "square"; }
};

class RightTriangle final : public Shape {
public:
    RightTriangle(int a, int b, int c) : a_(a), b_(b), c_(c) {}
    long long area2() const override { return 1LL * a_ * b_; }
    long long perimeter() const override { return 1LL * a_ + b_ + c_; }
    int sides() const override { return 3; }
    const char* name() const override { return "triangle"; }
private:
    int a_, b_, c_;
};

class Parallelogram final : public Shape {
public:
    Parallelogram(int base, int height, int side) : base_(base), height_(height), side_(side) {}
    long long area2() const override { return 2LL * base_ * height_; }
    long long perimeter() const override { return 2LL * (base_ + side_); }
    int sides() const override { return 4; }
    const char* name() const override { return "parallelogram"; }
private:
    int base_, height_, side_;
};

static std::unique_ptr<Shape> make(int kind, int p) {
    switch (kind) {
        case 0: return std::unique_ptr<Shape>(new Rect(p, p + 1));
        case 1: return std::unique_ptr<Shape>(new Square(p));
        case 2: return std::unique_ptr<Shape>(new RightTriangle(3 * p, 4 * p, 5 * p));
        default: return std::unique_ptr<Shape>(new Parallelogram(2 * p, p - 1, p));
    }
}

static long long totalArea2(const Shape* const* shapes, int n) {
    long long s = 0;
    for (int i = 0; i < n; ++i) s += shapes[i]->area2();
    return s;
}

static int sidesOf(const Shape& s) { return s.sides(); }

int main() {
    volatile int kinds[5] = {0, 1, 2, 2, 3};
    volatile int params[5] = {3, 5, 1, 0, 3};
    std::unique_ptr<Shape> owned[5];
    for (int i = 0; i < 5; ++i) owned[i] = make(kinds[i], params[i]);
    owned[3].reset(new RightTriangle(5, 12, 13));

    const Shape* raw[5];
    for (int i = 0; i < 5; ++i) raw[i] = owned[i].get();
    long long area = totalArea2(raw, 5);
    CHECK(area == 170);

    long long perim = 0;
    int sides = 0, largest = 0;
    for (int i = 0; i < 5; ++i) {
        perim += owned[i]->perimeter();
        sides += sidesOf(*owned[i]);
        if (owned[i]->area2() > owned[largest]->area2()) largest = i;
    }
    CHECK(perim == 94 && sides == 18);
    CHECK(largest == 3 && std::strcmp(owned[largest]->name(), "triangle") == 0);
    CHECK(std::strcmp(owned[1]->name(), "square") == 0 && owned[1]->area2() == 50);
    CHECK(owned[0]->score() == 2414 && owned[4]->score() == 2418);

    Square sq(params[0]);
    const Rect& asRect = sq;
    CHECK(asRect.area2() == 18 && std::strcmp(asRect.name(), "square") == 0);

    long long checksum = area * 10000 + perim * 100 + sides;
    CHECK(checksum == 1709418);
    std::printf("cpp_virtual_shapes: %lld\n", checksum);
    return 0;
}
