// exercises: CRTP mixins, friend operator injection, static polymorphism, per-type static counters in class templates, fluent interfaces returning the derived type, function templates over CRTP bases
// Derives comparison operators, instance counters and a static shape interface through CRTP and uses them to sort versions and sum areas.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

template <typename D>
struct Comparable {
    friend bool operator==(const D& a, const D& b) { return !(a < b) && !(b < a); }
    friend bool operator!=(const D& a, const D& b) { return !(a == b); }
    friend bool operator>(const D& a, const D& b) { return b < a; }
    friend bool operator<=(const D& a, const D& b) { return !(b < a); }
    friend bool operator>=(const D& a, const D& b) { return !(a < b); }
};

template <typename D>
struct InstanceCounter {
    static int created, alive;
    InstanceCounter() { ++created; ++alive; }
    InstanceCounter(const InstanceCounter&) { ++created; ++alive; }
    InstanceCounter& operator=(const InstanceCounter&) = default;
    ~InstanceCounter() { --alive; }
};
template <typename D> int InstanceCounter<D>::created = 0;
template <typename D> int InstanceCounter<D>::alive = 0;

struct Version : Comparable<Version>, InstanceCounter<Version> {
    int major, minor, patch;
    Version(int a, int b, int c) : major(a), minor(b), patch(c) {}
    bool operator<(const Version& o) const {
        if (major != o.major) return major < o.major;
        if (minor != o.minor) return minor < o.minor;
        return patch < o.patch;
    }
    int code() const { return major * 10000 + minor * 100 + patch; }
};

struct Money : Comparable<Money>, InstanceCounter<Money> {
    long long cents;
    explicit Money(long long c) : cents(c) {}
    bool operator<(const Money& o) const { return cents < o.cents; }
};

template <typename D>
struct Shape {
    long long area() const { return static_cast<const D&>(*this).areaImpl(); }
    long long doubled() const { return 2 * area(); }
};
struct Sq : Shape<Sq> { long long s; explicit Sq(long long v) : s(v) {} long long areaImpl() const { return s * s; } };
struct Rc : Shape<Rc> { long long w, h; Rc(long long a, long long b) : w(a), h(b) {} long long areaImpl() const { return w * h; } };

template <typename D>
long long areaOf(const Shape<D>& s) { return s.area(); }

template <typename D>
struct Steppable {
    D& inc() { D& d = static_cast<D&>(*this); d.value += d.step(); return d; }
};
struct ByThree : Steppable<ByThree> { int value = 0; int step() const { return 3; } };

template <typename T>
void insertionSort(T* a, int n) {
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && a[j - 1] > a[j]; --j) { T t = a[j]; a[j] = a[j - 1]; a[j - 1] = t; }
}

int main() {
    volatile int ten = 10, two = 2;
    long long weighted = 0;
    {
        Version v[5] = {Version(1, two, 3), Version(1, ten, 0), Version(0, 9, 9), Version(1, 2, 3), Version(two, 0, 0)};
        CHECK(InstanceCounter<Version>::alive == 5);
        CHECK(v[0] == v[3] && v[0] != v[1] && v[0] < v[1] && v[2] <= v[0] && v[4] > v[1] && v[1] >= v[1]);
        insertionSort(v, 5);
        const int expected[5] = {909, 10203, 10203, 11000, 20000};
        for (int i = 0; i < 5; ++i) {
            CHECK(v[i].code() == expected[i]);
            weighted += static_cast<long long>(v[i].code()) * (i + 1);
        }
        CHECK(v[3] == Version(1, 10, 0));
    }
    CHECK(InstanceCounter<Version>::alive == 0 && InstanceCounter<Version>::created > 5);
    CHECK(weighted == 195924);

    Money a(250), b(199), c(250);
    CHECK(a == c && b < a && a >= c && !(a > c) && b != c);
    CHECK(InstanceCounter<Money>::created == 3 && InstanceCounter<Money>::alive == 3);

    Sq sq(4 * two / 2);
    Rc rc(3, 5);
    long long areas = areaOf(sq) + areaOf(rc);
    CHECK(areas == 31 && sq.doubled() == 32);

    ByThree s;
    CHECK(s.inc().inc().inc().value == 9);

    long long checksum = weighted + areas + s.value;
    CHECK(checksum == 195964);
    std::printf("cpp_tmpl_crtp: %lld\n", checksum);
    return 0;
}
