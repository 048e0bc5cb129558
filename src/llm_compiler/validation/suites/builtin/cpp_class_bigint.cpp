// exercises: class with fixed std::array storage, operator overloading, friend operators, comparison operators, carry propagation, string conversion
// Computes big unsigned integers (30!, 2^100, Fibonacci(100)) with a base-10000 BigUint class and checks their decimal digits.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

class BigUint {
public:
    explicit BigUint(std::uint32_t v = 0) { do { push(v % kBase); v /= kBase; } while (v != 0); }
    BigUint& operator+=(const BigUint& o) {
        while (n_ < o.n_) push(0);
        std::uint32_t carry = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            std::uint32_t s = limbs_[i] + carry + (i < o.n_ ? o.limbs_[i] : 0);
            limbs_[i] = s % kBase;
            carry = s / kBase;
        }
        if (carry != 0) push(carry);
        return *this;
    }
    BigUint& operator*=(std::uint32_t m) {
        std::uint64_t carry = 0;
        for (std::size_t i = 0; i < n_; ++i) {
            std::uint64_t p = static_cast<std::uint64_t>(limbs_[i]) * m + carry;
            limbs_[i] = static_cast<std::uint32_t>(p % kBase);
            carry = p / kBase;
        }
        while (carry != 0) { push(static_cast<std::uint32_t>(carry % kBase)); carry /= kBase; }
        while (n_ > 1 && limbs_[n_ - 1] == 0) --n_;
        return *this;
    }
    friend BigUint operator+(BigUint a, const BigUint& b) { a += b; return a; }
    friend BigUint operator*(BigUint a, std::uint32_t m) { a *= m; return a; }
    bool operator==(const BigUint& o) const {
        if (n_ != o.n_) return false;
        for (std::size_t i = 0; i < n_; ++i)
            if (limbs_[i] != o.limbs_[i]) return false;
        return true;
    }
    bool operator<(const BigUint& o) const {
        if (n_ != o.n_) return n_ < o.n_;
        for (std::size_t i = n_; i-- > 0;)
            if (limbs_[i] != o.limbs_[i]) return limbs_[i] < o.limbs_[i];
        return false;
    }
    // Writes the decimal form into out (NUL-terminated) and returns its length.
    std::size_t toChars(char* out, std::size_t cap) const {
        std::size_t len = 0;
        for (std::size_t i = n_; i-- > 0;) {
            std::uint32_t v = limbs_[i];
            char d[4];
            for (int k = 3; k >= 0; --k) { d[k] = static_cast<char>('0' + v % 10); v /= 10; }
            for (char c : d)
                if ((len > 0 || c != '0') && len + 1 < cap) out[len++] = c;
        }
        if (len == 0) out[len++] = '0';
        out[len] = '\0';
        return len;
    }
    bool textIs(const char* expected) const {
        char buf[128];
        toChars(buf, sizeof buf);
        return std::strcmp(buf, expected) == 0;
    }
    int digitSum() const {
        int s = 0;
        for (std::size_t i = 0; i < n_; ++i)
            for (std::uint32_t l = limbs_[i]; l != 0; l /= 10) s += static_cast<int>(l % 10);
        return s;
    }
private:
    void push(std::uint32_t limb) {
        if (n_ == limbs_.size()) std::abort();
        limbs_[n_++] = limb;
    }
    static constexpr std::uint32_t kBase = 10000;
    std::array<std::uint32_t, 16> limbs_{};
    std::size_t n_ = 0;
};

int main() {
    volatile std::uint32_t n30 = 30, one = 1;
    BigUint fact(one), fact25(0);
    for (std::uint32_t k = 2; k <= n30; ++k) {
        fact *= k;
        if (k == 25) fact25 = fact;
    }
    CHECK(fact.digitSum() == 117);
    CHECK(fact.textIs("265252859812191058636308480000000"));
    CHECK(fact25.digitSum() == 72 && fact25.textIs("15511210043330985984000000"));

    BigUint pow2(one);
    for (int i = 0; i < 100; ++i) pow2 += pow2;
    CHECK(pow2.textIs("1267650600228229401496703205376") && pow2.digitSum() == 115);

    BigUint fa(0), fb(one);
    for (int i = 0; i < 100; ++i) { BigUint t = fa + fb; fa = fb; fb = t; }
    char fibText[64];
    std::size_t fibLen = fa.toChars(fibText, sizeof fibText);
    CHECK(fibLen == 21 && std::strcmp(fibText, "354224848179261915075") == 0);

    CHECK(fa < pow2 && pow2 < fact && !(fact < fact) && !(fact < fa));
    CHECK((BigUint(0) * 5).textIs("0") && BigUint(0) == BigUint(0) * 7);
    BigUint big(99999999);
    big += BigUint(one);
    CHECK(big.textIs("100000000") && big == BigUint(10000) * 10000);

    char factText[64];
    int checksum = fact.digitSum() + pow2.digitSum() + fact25.digitSum() +
                   static_cast<int>(fact.toChars(factText, sizeof factText) + fibLen);
    CHECK(checksum == 358);
    std::printf("cpp_class_bigint: %d\n", checksum);
    return 0;
}
