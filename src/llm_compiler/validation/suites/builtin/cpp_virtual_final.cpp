// exercises: final classes, devirtualizable calls on known dynamic types, non-devirtualizable calls through base pointers chosen at run time, template method pattern, qualified base calls
// Computes FNV-1a, DJB2 and byte-sum string hashes through a virtual Hasher interface, both with statically known and run-time selected implementations.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

class Hasher {
public:
    virtual ~Hasher() = default;
    virtual std::uint32_t seed() const = 0;
    virtual std::uint32_t step(std::uint32_t h, unsigned char c) const = 0;
    std::uint32_t hash(const char* s) const {
        std::uint32_t h = seed();
        for (; *s != '\0'; ++s) h = step(h, static_cast<unsigned char>(*s));
        return h;
    }
};

class Fnv1a final : public Hasher {
public:
    std::uint32_t seed() const override { return 2166136261u; }
    std::uint32_t step(std::uint32_t h, unsigned char c) const override { return (h ^ c) * 16777619u; }
};

class Djb2 final : public Hasher {
public:
    std::uint32_t seed() const override { return 5381u; }
    std::uint32_t step(std::uint32_t h, unsigned char c) const override { return h * 33u + c; }
};

class ByteSum : public Hasher {
public:
    std::uint32_t seed() const override { return 0u; }
    std::uint32_t step(std::uint32_t h, unsigned char c) const override { return h + c; }
};

class CountingSum final : public ByteSum {
public:
    std::uint32_t step(std::uint32_t h, unsigned char c) const override { ++calls; return ByteSum::step(h, c); }
    mutable int calls = 0;
};

static const Hasher& pick(int which, const Hasher& a, const Hasher& b, const Hasher& c) {
    return which == 0 ? a : which == 1 ? b : c;
}

int main() {
    const char* words[3] = {"hello", "devirtualize", "The quick brown fox"};
    const std::uint32_t expFnv[3] = {1335831723u, 697994273u, 2924308450u};
    const std::uint32_t expDjb[3] = {261238937u, 3890754941u, 2546203896u};
    const std::uint32_t expSum[3] = {532u, 1304u, 1811u};

    Fnv1a fnv;
    Djb2 djb;
    CountingSum sum;
    CHECK(fnv.hash("hello") == 1335831723u);
    CHECK(fnv.hash("") == 2166136261u && djb.hash("") == 5381u);

    volatile int order[3] = {0, 1, 2};
    std::uint32_t tot = 0;
    for (int w = 0; w < 3; ++w) {
        CHECK(fnv.hash(words[w]) == expFnv[w]);
        CHECK(djb.hash(words[w]) == expDjb[w]);
        CHECK(sum.ByteSum::hash(words[w]) == expSum[w]);
        std::uint32_t viaBase[3];
        for (int k = 0; k < 3; ++k) viaBase[order[k]] = pick(order[k], fnv, djb, sum).hash(words[w]);
        CHECK(viaBase[0] == expFnv[w] && viaBase[1] == expDjb[w] && viaBase[2] == expSum[w]);
        tot ^= viaBase[0];
        tot += viaBase[1];
        tot += viaBase[2];
    }
    CHECK(sum.calls == 2 * (5 + 12 + 19));
    CHECK(fnv.Fnv1a::step(0u, 'a') == 97u * 16777619u);

    ByteSum plain;
    const Hasher& h = plain;
    CHECK(h.hash("AB") == 131u);

    CHECK(tot == 2292018679u);
    std::printf("cpp_virtual_final: %u\n", static_cast<unsigned>(tot));
    return 0;
}
