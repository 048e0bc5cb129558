// exercises: value class, constexpr constructors, arithmetic operator overloading, friend operators, compound assignment, equality and ordering operators
// Computes polygon areas, boundary and interior lattice point counts (Pick's theorem) with an integer Vec2 class.
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Vec2 {
    long long x = 0, y = 0;
    constexpr Vec2() = default;
    constexpr Vec2(long long x_, long long y_) : x(x_), y(y_) {}
    constexpr Vec2 operator+(const Vec2& o) const { return Vec2(x + o.x, y + o.y); }
    constexpr Vec2 operator-(const Vec2& o) const { return Vec2(x - o.x, y - o.y); }
    constexpr Vec2 operator-() const { return Vec2(-x, -y); }
    constexpr Vec2 operator*(long long k) const { return Vec2(x * k, y * k); }
    friend constexpr Vec2 operator*(long long k, const Vec2& v) { return v * k; }
    Vec2& operator+=(const Vec2& o) { x += o.x; y += o.y; return *this; }
    Vec2& operator-=(const Vec2& o) { x -= o.x; y -= o.y; return *this; }
    constexpr bool operator==(const Vec2& o) const { return x == o.x && y == o.y; }
    constexpr bool operator!=(const Vec2& o) const { return !(*this == o); }
    constexpr bool operator<(const Vec2& o) const { return x < o.x || (x == o.x && y < o.y); }
    constexpr long long cross(const Vec2& o) const { return x * o.y - y * o.x; }
    constexpr long long dot(const Vec2& o) const { return x * o.x + y * o.y; }
};

static long long absll(long long v) { return v < 0 ? -v : v; }
static long long gcdll(long long a, long long b) { while (b != 0) { long long t = a % b; a = b; b = t; } return a; }

struct Poly {
    Vec2 pts[5];
    std::size_t n;
    const Vec2& at(std::size_t i) const { return pts[i % n]; }
};

static long long twiceArea(const Poly& p) {
    long long s = 0;
    for (std::size_t i = 0; i < p.n; ++i) s += p.at(i).cross(p.at(i + 1));
    return absll(s);
}

static long long boundaryPoints(const Poly& p) {
    long long b = 0;
    for (std::size_t i = 0; i < p.n; ++i) {
        Vec2 d = p.at(i + 1) - p.at(i);
        b += gcdll(absll(d.x), absll(d.y));
    }
    return b;
}

static bool isConvexCcw(const Poly& p) {
    for (std::size_t i = 0; i < p.n; ++i)
        if ((p.at(i + 1) - p.at(i)).cross(p.at(i + 2) - p.at(i + 1)) <= 0) return false;
    return true;
}

int main() {
    static_assert(Vec2(1, 2) + Vec2(3, 4) == Vec2(4, 6), "constexpr addition");
    static_assert((2 * Vec2(1, -3)).dot(Vec2(5, 1)) == 4, "constexpr dot");
    volatile long long scale = 1, two = 2;
    Poly polys[4] = {
        {{Vec2(0, 0), Vec2(6, 0), Vec2(6, 2), Vec2(3, 5), Vec2(0, 2)}, 5},
        {{Vec2(0, 0), Vec2(4, 0), Vec2(4, 3), Vec2(0, 3)}, 4},
        {{Vec2(0, 0), Vec2(5, 0), Vec2(0, 5)}, 3},
        {{}, 3},
    };
    for (std::size_t i = 0; i < 3; ++i) polys[3].pts[i] = polys[2].pts[i] * two * scale;

    const long long expA[] = {42, 24, 25, 100}, expB[] = {16, 14, 15, 30}, expI[] = {14, 6, 6, 36};
    long long sumA = 0, sumB = 0, sumI = 0;
    for (std::size_t k = 0; k < 4; ++k) {
        long long a2 = twiceArea(polys[k]), b = boundaryPoints(polys[k]);
        long long interior = (a2 - b + 2) / 2;
        CHECK(a2 == expA[k] && b == expB[k] && interior == expI[k]);
        CHECK(isConvexCcw(polys[k]));
        Poly moved = polys[k];
        for (Vec2& v : moved.pts) v += Vec2(-7, 11) * scale;
        CHECK(twiceArea(moved) == a2 && boundaryPoints(moved) == b);
        sumA += a2; sumB += b; sumI += interior;
    }
    CHECK(sumA == 191);

    Poly clockwise = polys[1];
    for (std::size_t i = 0; i < 4; ++i) clockwise.pts[i] = polys[1].pts[3 - i];
    CHECK(!isConvexCcw(clockwise) && twiceArea(clockwise) == 24);

    Vec2 acc;
    for (const Vec2& v : polys[0].pts) acc += v;
    CHECK(acc == Vec2(15, 9) && acc != -acc);
    acc -= Vec2(15, 0);
    CHECK(acc == Vec2(0, 9) && Vec2(0, 9) < Vec2(1, 0) && !(acc < acc));

    long long checksum = sumA * 10000 + sumI * 100 + sumB;
    CHECK(checksum == 1916275);
    std::printf("cpp_class_vec2: %lld\n", checksum);
    return 0;
}
