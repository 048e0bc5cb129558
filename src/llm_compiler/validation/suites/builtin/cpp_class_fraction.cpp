// exercises: operator overloading, arithmetic operators, comparison operators, unary minus, compound assignment, class invariants, const member functions
// Computes exact rational results (harmonic numbers, telescoping sums, greedy Egyptian fractions) with a normalized Fraction class.
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static long long gcdll(long long a, long long b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) { long long t = a % b; a = b; b = t; }
    return a;
}

class Fraction {
public:
    Fraction(long long n = 0, long long d = 1) : num_(n), den_(d) { normalize(); }
    long long num() const { return num_; }
    long long den() const { return den_; }
    Fraction operator+(const Fraction& o) const { return Fraction(num_ * o.den_ + o.num_ * den_, den_ * o.den_); }
    Fraction operator-(const Fraction& o) const { return Fraction(num_ * o.den_ - o.num_ * den_, den_ * o.den_); }
    Fraction operator*(const Fraction& o) const { return Fraction(num_ * o.num_, den_ * o.den_); }
    Fraction operator/(const Fraction& o) const { return Fraction(num_ * o.den_, den_ * o.num_); }
    Fraction operator-() const { return Fraction(-num_, den_); }
    Fraction& operator+=(const Fraction& o) { *this = *this + o; return *this; }
    Fraction& operator-=(const Fraction& o) { *this = *this - o; return *this; }
    bool operator==(const Fraction& o) const { return num_ == o.num_ && den_ == o.den_; }
    bool operator!=(const Fraction& o) const { return !(*this == o); }
    bool operator<(const Fraction& o) const { return num_ * o.den_ < o.num_ * den_; }
private:
    void normalize() {
        if (den_ < 0) { den_ = -den_; num_ = -num_; }
        long long g = gcdll(num_, den_);
        if (g > 1) { num_ /= g; den_ /= g; }
    }
    long long num_, den_;
};

static Fraction harmonic(int n) {
    Fraction h;
    for (int k = 1; k <= n; ++k) h += Fraction(1, k);
    return h;
}

static std::vector<long long> egyptian(Fraction f) {
    std::vector<long long> dens;
    while (f.num() != 0) {
        long long d = (f.den() + f.num() - 1) / f.num();
        dens.push_back(d);
        f -= Fraction(1, d);
    }
    return dens;
}

int main() {
    volatile int n20 = 20, n10 = 10, n30 = 30;
    int checksum = 0;

    Fraction a(6, -8);
    CHECK(a.num() == -3);
    CHECK(a.den() == 4);
    CHECK(a == Fraction(-9, 12));
    CHECK(Fraction(0, -5) == Fraction(0, 1));

    Fraction h10 = harmonic(n10);
    CHECK(h10.num() == 7381 && h10.den() == 2520);
    Fraction h20 = harmonic(n20);
    CHECK(h20.num() == 55835135 && h20.den() == 15519504);
    checksum += static_cast<int>(h20.num() % 1000003);

    Fraction tel;
    for (int k = 1; k <= n30; ++k) tel += Fraction(1, static_cast<long long>(k) * (k + 1));
    CHECK(tel == Fraction(30, 31));
    checksum += static_cast<int>(tel.num() + tel.den());

    Fraction q = Fraction(2, 3) / Fraction(4, 9);
    CHECK(q.num() == 3 && q.den() == 2);
    checksum += static_cast<int>(q.num() + q.den());

    CHECK(Fraction(1, 3) < Fraction(1, 2));
    CHECK(-Fraction(1, 2) < Fraction(1, 3));
    CHECK(!(Fraction(2, 4) < Fraction(1, 2)) && Fraction(2, 4) != Fraction(1, 3));
    CHECK(Fraction(1, 2) * Fraction(2, 1) == Fraction(1));

    std::vector<long long> e = egyptian(Fraction(4, 13));
    CHECK(e.size() == 3 && e[0] == 4 && e[1] == 18 && e[2] == 468);
    for (long long d : e) checksum += static_cast<int>(d);

    CHECK(checksum == 835526);
    std::printf("cpp_class_fraction: %d\n", checksum);
    return 0;
}
