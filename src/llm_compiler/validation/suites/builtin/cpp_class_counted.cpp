// exercises: constructors, destructors, copy constructor, move constructor, copy assignment, move assignment, guaranteed copy elision, std::vector reallocation, destruction order
// Counts constructions, copies, moves and destructions of a tracked class across several object-lifetime scenarios.
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Stats { int ctor = 0, copy = 0, move = 0, copyAssign = 0, moveAssign = 0, dtor = 0; };
static Stats g;

class Tracked {
public:
    explicit Tracked(int v) : value_(v) { ++g.ctor; }
    Tracked(const Tracked& o) : value_(o.value_) { ++g.copy; }
    Tracked(Tracked&& o) noexcept : value_(o.value_) { o.value_ = -1; ++g.move; }
    Tracked& operator=(const Tracked& o) { value_ = o.value_; ++g.copyAssign; return *this; }
    Tracked& operator=(Tracked&& o) noexcept { value_ = o.value_; o.value_ = -1; ++g.moveAssign; return *this; }
    ~Tracked() { ++g.dtor; }
    int value() const { return value_; }
private:
    int value_;
};

static int live() { return g.ctor + g.copy + g.move - g.dtor; }

static Tracked makeDoubled(int v) { return Tracked(v * 2); }

static int logBuf[8];
static int logLen = 0;
struct Logged {
    int id;
    explicit Logged(int i) : id(i) {}
    ~Logged() { if (logLen < 8) logBuf[logLen++] = id; }
};

int main() {
    volatile int seed = 7;
    int checksum = 0;

    g = Stats{};
    {
        Tracked a(seed);
        Tracked b(a);
        Tracked c(std::move(a));
        CHECK(b.value() == 7 && c.value() == 7 && a.value() == -1);
        CHECK(live() == 3);
    }
    CHECK(g.ctor == 1 && g.copy == 1 && g.move == 1 && g.dtor == 3 && live() == 0);

    g = Stats{};
    {
        Tracked t = makeDoubled(seed);
        CHECK(t.value() == 14);
        CHECK(g.ctor == 1 && g.copy == 0 && g.move == 0);
    }
    CHECK(g.dtor == 1);

    g = Stats{};
    {
        std::vector<Tracked> v;
        v.reserve(4);
        for (int i = 1; i <= 4; ++i) v.emplace_back(i * seed);
        CHECK(g.ctor == 4 && g.move == 0 && g.copy == 0);
        v.push_back(Tracked(5 * seed));
        CHECK(g.ctor == 5 && g.move == 5 && g.dtor == 5 && g.copy == 0);
        int sum = 0;
        for (const Tracked& t : v) sum += t.value();
        CHECK(sum == 105);
        checksum += sum;
    }
    CHECK(live() == 0 && g.dtor == 10);

    g = Stats{};
    {
        Tracked x(10), y(seed * 3);
        x = y;
        CHECK(x.value() == 21 && g.copyAssign == 1);
        y = Tracked(30);
        CHECK(y.value() == 30 && g.moveAssign == 1 && g.ctor == 3 && g.dtor == 1);
        using std::swap;
        swap(x, y);
        CHECK(x.value() == 30 && y.value() == 21);
        CHECK(g.move == 1 && g.moveAssign == 3 && g.dtor == 2);
        checksum += x.value() * 100 + y.value();
    }
    CHECK(live() == 0);

    {
        Logged a(1), b(2);
        Logged arr[3] = {Logged(3), Logged(4), Logged(5)};
        CHECK(a.id + b.id + arr[0].id + arr[1].id + arr[2].id == 15);
    }
    CHECK(logLen == 5);
    int order = 0;
    for (int i = 0; i < logLen; ++i) order = order * 10 + logBuf[i];
    CHECK(order == 54321);
    checksum += order;

    CHECK(checksum == 57447);
    std::printf("cpp_class_counted: %d\n", checksum);
    return 0;
}
