// exercises: operator overloading, function-call operator, static member counters, value-returning operators, compound assignment, square-and-multiply
// Computes Fibonacci numbers modulo 1e9+7 with a 2x2 matrix class and checks them against an iterative reference.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

using u64 = std::uint64_t;
static const u64 P = 1000000007ULL;

class Mat2 {
public:
    Mat2(u64 a, u64 b, u64 c, u64 d) : m_{{a % P, b % P}, {c % P, d % P}} {}
    static Mat2 identity() { return Mat2(1, 0, 0, 1); }
    u64 operator()(int r, int c) const { return m_[r][c]; }
    Mat2 operator*(const Mat2& o) const {
        ++multiplications;
        return Mat2((m_[0][0] * o.m_[0][0] + m_[0][1] * o.m_[1][0]) % P,
                    (m_[0][0] * o.m_[0][1] + m_[0][1] * o.m_[1][1]) % P,
                    (m_[1][0] * o.m_[0][0] + m_[1][1] * o.m_[1][0]) % P,
                    (m_[1][0] * o.m_[0][1] + m_[1][1] * o.m_[1][1]) % P);
    }
    Mat2& operator*=(const Mat2& o) { *this = *this * o; return *this; }
    bool operator==(const Mat2& o) const {
        return m_[0][0] == o.m_[0][0] && m_[0][1] == o.m_[0][1] && m_[1][0] == o.m_[1][0] && m_[1][1] == o.m_[1][1];
    }
    u64 det() const { return (m_[0][0] * m_[1][1] % P + P - m_[0][1] * m_[1][0] % P) % P; }
    Mat2 pow(unsigned e) const {
        Mat2 result = identity(), base = *this;
        while (e != 0) {
            if (e & 1u) result *= base;
            base *= base;
            e >>= 1;
        }
        return result;
    }
    static int multiplications;
private:
    u64 m_[2][2];
};
int Mat2::multiplications = 0;

static const Mat2 Q(1, 1, 1, 0);

static u64 fibMatrix(unsigned n) { return Q.pow(n)(0, 1); }

static u64 fibLoop(unsigned n) {
    u64 a = 0, b = 1;
    for (unsigned i = 0; i < n; ++i) { u64 t = (a + b) % P; a = b; b = t; }
    return a;
}

int main() {
    volatile unsigned n10 = 10, n50 = 50, n1000 = 1000;
    CHECK(fibMatrix(n10) == 55);
    Mat2::multiplications = 0;
    u64 f50 = fibMatrix(n50);
    CHECK(f50 == 586268941);
    CHECK(Mat2::multiplications == 9);
    Mat2::multiplications = 0;
    u64 f1000 = fibMatrix(n1000);
    CHECK(f1000 == 517691607);
    CHECK(Mat2::multiplications == 16);

    u64 sum = 0;
    for (unsigned n = 0; n <= 90; ++n) {
        u64 f = fibMatrix(n);
        CHECK(f == fibLoop(n));
        sum = (sum + f) % P;
    }
    CHECK(sum == 965550171);

    volatile unsigned a = 13, b = 29;
    CHECK(Q.pow(a) * Q.pow(b) == Q.pow(a + b));
    CHECK(Q.pow(7).det() == P - 1);
    CHECK(Q.pow(8).det() == 1);
    CHECK(Mat2::identity() * Q == Q && Q.pow(0) == Mat2::identity());

    int checksum = static_cast<int>((f50 + f1000 + sum) % P) + 9 + 16;
    CHECK(checksum == 69510730);
    std::printf("cpp_class_matrix: %d\n", checksum);
    return 0;
}
