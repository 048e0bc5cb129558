// exercises: non-type template parameters, dimension-checked matrix multiplication templates, template argument deduction of sizes, static constexpr members, function templates returning class templates, static_assert on deduced types
// Multiplies dimension-typed matrices, counts graph walks with adjacency matrix powers and checks traces and transposes.
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <std::size_t R, std::size_t C>
struct Matrix {
    static constexpr std::size_t rows = R, cols = C;
    std::array<long long, R * C> a{};
    long long& operator()(std::size_t r, std::size_t c) { return a[r * C + c]; }
    long long operator()(std::size_t r, std::size_t c) const { return a[r * C + c]; }
    Matrix<C, R> transpose() const {
        Matrix<C, R> t;
        for (std::size_t r = 0; r < R; ++r)
            for (std::size_t c = 0; c < C; ++c) t(c, r) = (*this)(r, c);
        return t;
    }
    long long sum() const { long long s = 0; for (long long v : a) s += v; return s; }
    bool operator==(const Matrix& o) const { return a == o.a; }
};

template <std::size_t R, std::size_t K, std::size_t C>
Matrix<R, C> operator*(const Matrix<R, K>& x, const Matrix<K, C>& y) {
    Matrix<R, C> out;
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t c = 0; c < C; ++c) {
            long long s = 0;
            for (std::size_t k = 0; k < K; ++k) s += x(r, k) * y(k, c);
            out(r, c) = s;
        }
    return out;
}

template <std::size_t N>
Matrix<N, N> identity() {
    Matrix<N, N> m;
    for (std::size_t i = 0; i < N; ++i) m(i, i) = 1;
    return m;
}

template <std::size_t N>
Matrix<N, N> power(Matrix<N, N> base, unsigned e) {
    Matrix<N, N> result = identity<N>();
    for (; e != 0; e >>= 1) {
        if (e & 1u) result = result * base;
        base = base * base;
    }
    return result;
}

template <std::size_t N>
long long trace(const Matrix<N, N>& m) { long long t = 0; for (std::size_t i = 0; i < N; ++i) t += m(i, i); return t; }

int main() {
    volatile int one = 1;
    Matrix<4, 4> adj;
    const int edges[7][2] = {{0, 1}, {0, 2}, {1, 2}, {2, 0}, {2, 3}, {3, 1}, {1, 3}};
    for (const auto& e : edges) adj(static_cast<std::size_t>(e[0]), static_cast<std::size_t>(e[1])) = one;

    volatile unsigned six = 6, twenty = 20;
    Matrix<4, 4> a6 = power(adj, six);
    CHECK(a6.sum() == 96);
    CHECK(a6(0, 3) == 8 && a6(2, 3) == 10);
    CHECK(trace(power(adj, 3)) == 6);
    Matrix<4, 4> a20 = power(adj, twenty);
    CHECK(a20(0, 3) == 14148 && a20.sum() == 141434);
    CHECK(power(adj, 10) * power(adj, 10) == a20);

    Matrix<2, 3> x;
    Matrix<3, 2> y;
    for (std::size_t i = 0; i < 6; ++i) { x.a[i] = static_cast<long long>(i) + one; y.a[i] = static_cast<long long>(i) + 7 * one; }
    auto xy = x * y;
    auto yx = y * x;
    static_assert(decltype(xy)::rows == 2 && decltype(xy)::cols == 2, "2x2 product");
    static_assert(decltype(yx)::rows == 3 && decltype(yx)::cols == 3, "3x3 product");
    CHECK(xy(0, 0) == 58 && xy(0, 1) == 64 && xy(1, 0) == 139 && xy(1, 1) == 154);
    CHECK(xy.sum() == 415 && yx.sum() == 612);
    CHECK(trace(xy) == 212 && trace(yx) == 212);
    CHECK(xy.transpose() == y.transpose() * x.transpose());
    CHECK(identity<3>() * yx == yx);

    long long checksum = a6.sum() + a6(0, 3) + trace(power(adj, 3)) + a20(0, 3) + a20.sum() + xy.sum() + yx.sum() + trace(yx);
    CHECK(checksum == 156931);
    std::printf("cpp_tmpl_matrix_nttp: %lld\n", checksum);
    return 0;
}
