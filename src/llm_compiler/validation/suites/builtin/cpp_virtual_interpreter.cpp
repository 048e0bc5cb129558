// exercises: pure virtual interface, abstract syntax tree, recursive virtual dispatch, virtual clone, std::unique_ptr children, virtual destructor
// Evaluates an arithmetic expression tree over two variables through virtual eval/count/depth/clone methods.
#include <cstdio>
#include <cstdlib>
#include <memory>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Env { long long x, y; };

class Expr {
public:
    virtual ~Expr() = default;
    virtual long long eval(const Env& env) const = 0;
    virtual int count() const = 0;
    virtual int depth() const = 0;
    virtual std::unique_ptr<Expr> clone() const = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

class Num final : public Expr {
public:
    explicit Num(long long v) : v_(v) {}
    long long eval(const Env&) const override { return v_; }
    int count() const override { return 1; }
    int depth() const override { return 1; }
    ExprPtr clone() const override { return ExprPtr(new Num(v_)); }
private:
    long long v_;
};

class Var final : public Expr {
public:
    explicit Var(char name) : name_(name) {}
    long long eval(const Env& env) const override { return name_ == 'x' ? env.x : env.y; }
    int count() const override { return 1; }
    int depth() const override { return 1; }
    ExprPtr clone() const override { return ExprPtr(new Var(name_)); }
private:
    char name_;
};

class Neg final : public Expr {
public:
    explicit Neg(ExprPtr e) : e_(std::move(e)) {}
    long long eval(const Env& env) const override { return -e_->eval(env); }
    int count() const override { return 1 + e_->count(); }
    int depth() const override { return 1 + e_->depth(); }
    ExprPtr clone() const override { return ExprPtr(new Neg(e_->clone())); }
private:
    ExprPtr e_;
};

class Binary final : public Expr {
public:
    Binary(char op, ExprPtr l, ExprPtr r) : op_(op), l_(std::move(l)), r_(std::move(r)) {}
    long long eval(const Env& env) const override {
        long long a = l_->eval(env), b = r_->eval(env);
        return op_ == '+' ? a + b : op_ == '-' ? a - b : a * b;
    }
    int count() const override { return 1 + l_->count() + r_->count(); }
    int depth() const override { int a = l_->depth(), b = r_->depth(); return 1 + (a > b ? a : b); }
    ExprPtr clone() const override { return ExprPtr(new Binary(op_, l_->clone(), r_->clone())); }
private:
    char op_;
    ExprPtr l_, r_;
};

static ExprPtr num(long long v) { return ExprPtr(new Num(v)); }
static ExprPtr var(char n) { return ExprPtr(new Var(n)); }
static ExprPtr bin(char op, ExprPtr l, ExprPtr r) { return ExprPtr(new Binary(op, std::move(l), std::move(r))); }

int main() {
    volatile long long three = 3, two = 2;
    // (x + 3) * (y - 2) - -(x * y)
    ExprPtr e = bin('-', bin('*', bin('+', var('x'), num(three)), bin('-', var('y'), num(two))),
                    ExprPtr(new Neg(bin('*', var('x'), var('y')))));
    CHECK(e->eval(Env{2, 5}) == 25);
    CHECK(e->eval(Env{-1, 4}) == 0);
    CHECK(e->eval(Env{7, 0}) == -20);
    CHECK(e->count() == 12 && e->depth() == 4);

    long long grid = 0;
    for (long long x = -3; x <= 3; ++x)
        for (long long y = -3; y <= 3; ++y) grid += e->eval(Env{x, y});
    CHECK(grid == -294);

    ExprPtr copy = e->clone();
    e.reset();
    CHECK(copy->eval(Env{3, 3}) == 15 && copy->count() == 12);

    ExprPtr bigger = bin('*', copy->clone(), bin('+', std::move(copy), num(1)));
    CHECK(bigger->eval(Env{2, 5}) == 650 && bigger->count() == 27 && bigger->depth() == 6);

    long long checksum = grid * -100 + bigger->eval(Env{1, 1}) + bigger->count();
    CHECK(checksum == 29433);
    std::printf("cpp_virtual_interpreter: %lld\n", checksum);
    return 0;
}
