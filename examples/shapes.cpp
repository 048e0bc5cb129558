// shapes.cpp: a small Shape class hierarchy (circle, rectangle, square,
// right triangle) held in a std::vector<std::unique_ptr<Shape>>, summing
// areas and perimeters through virtual calls.
// Exercises: virtual dispatch (devirtualization), vtables, inlining of
// constructors/destructors, heap allocation, and loops over containers.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

constexpr double kPi = 3.14159265358979323846;

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual double perimeter() const = 0;
    virtual int sides() const = 0;  // 0 for a circle
};

class Circle final : public Shape {
public:
    explicit Circle(double r) : r_(r) {}
    double area() const override { return kPi * r_ * r_; }
    double perimeter() const override { return 2.0 * kPi * r_; }
    int sides() const override { return 0; }

private:
    double r_;
};

class Rect : public Shape {
public:
    Rect(double w, double h) : w_(w), h_(h) {}
    double area() const override { return w_ * h_; }
    double perimeter() const override { return 2.0 * (w_ + h_); }
    int sides() const override { return 4; }

private:
    double w_, h_;
};

class Square final : public Rect {
public:
    explicit Square(double s) : Rect(s, s) {}
};

class RightTriangle final : public Shape {
public:
    // Legs chosen by the caller; hypotenuse given to avoid needing sqrt.
    RightTriangle(double a, double b, double c) : a_(a), b_(b), c_(c) {}
    double area() const override { return 0.5 * a_ * b_; }
    double perimeter() const override { return a_ + b_ + c_; }
    int sides() const override { return 3; }

private:
    double a_, b_, c_;
};

bool near(double x, double y) {
    double d = x - y;
    return d < 1e-9 && d > -1e-9;
}

}  // namespace

int main() {
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.push_back(std::make_unique<Circle>(1.0));
    shapes.push_back(std::make_unique<Circle>(2.5));
    shapes.push_back(std::make_unique<Rect>(3.0, 4.0));
    shapes.push_back(std::make_unique<Square>(5.0));
    shapes.push_back(std::make_unique<RightTriangle>(6.0, 8.0, 10.0));
    shapes.push_back(std::make_unique<Rect>(0.5, 10.0));
    shapes.push_back(std::make_unique<Circle>(0.1));

    double total_area = 0.0, total_perimeter = 0.0;
    int total_sides = 0;
    const Shape *largest = nullptr;
    for (const auto &s : shapes) {
        total_area += s->area();
        total_perimeter += s->perimeter();
        total_sides += s->sides();
        if (!largest || s->area() > largest->area())
            largest = s.get();
    }

    // Expected: areas 66 + 7.26*pi, perimeters 79 + 7.2*pi, sides 4+4+3+4.
    if (!near(total_area, 66.0 + 7.26 * kPi) || !near(total_area, 88.8079626650619))
        std::abort();
    if (!near(total_perimeter, 101.61946710584651) || total_sides != 15)
        std::abort();
    if (largest != shapes[3].get() || !near(largest->area(), 25.0))
        std::abort();

    std::printf("shapes: count=%zu area=%.6g perimeter=%.6g sides=%d\n",
                shapes.size(), total_area, total_perimeter, total_sides);
    return 0;
}
