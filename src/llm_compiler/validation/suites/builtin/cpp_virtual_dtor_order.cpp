// exercises: virtual destructors, delete through base pointer, construction and destruction order, member subobject lifetimes, virtual calls inside constructors and destructors
// Records the exact order of constructor, member and destructor events when polymorphic objects are created and deleted through base pointers.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static char trace[256];
static unsigned traceLen = 0;
static int live = 0, dtorB = 0, dtorM = 0, dtorL = 0;

static void put(const char* s) { while (*s && traceLen + 1 < sizeof trace) trace[traceLen++] = *s++; trace[traceLen] = '\0'; }
static void putc1(char c) { const char s[2] = {c, '\0'}; put(s); }
static void resetTrace() { traceLen = 0; trace[0] = '\0'; }

struct Member {
    char tag;
    explicit Member(char t) : tag(t) { putc1('+'); putc1(tag); }
    ~Member() { putc1('-'); putc1(tag); }
};

class Base {
public:
    Base() { ++live; put("B("); putc1(kind()); put(")"); }
    virtual ~Base() { --live; ++dtorB; put("~B"); putc1(kind()); }
    virtual char kind() const { return 'b'; }
};

class Middle : public Base {
public:
    Middle() { put("M("); putc1(kind()); put(")"); }
    ~Middle() override { ++dtorM; put("~M"); putc1(kind()); }
    char kind() const override { return 'm'; }
private:
    Member m_{'m'};
};

class Leaf final : public Middle {
public:
    Leaf() { put("L("); putc1(kind()); put(")"); }
    ~Leaf() override { ++dtorL; put("~L"); putc1(kind()); }
    char kind() const override { return 'l'; }
private:
    Member l_{'l'};
};

static char kindOf(const Base& b) { return b.kind(); }

int main() {
    resetTrace();
    Base* p = new Leaf();
    CHECK(std::strcmp(trace, "B(b)+mM(m)+lL(l)") == 0);
    CHECK(kindOf(*p) == 'l' && live == 1);
    delete p;
    CHECK(std::strcmp(trace, "B(b)+mM(m)+lL(l)~Ll-l~Mm-m~Bb") == 0);
    CHECK(live == 0);
    unsigned len1 = traceLen;

    resetTrace();
    {
        Middle stackObj;
        CHECK(kindOf(stackObj) == 'm');
    }
    CHECK(std::strcmp(trace, "B(b)+mM(m)~Mm-m~Bb") == 0);
    unsigned len2 = traceLen;

    dtorB = dtorM = dtorL = 0;
    volatile int pattern[4] = {2, 1, 0, 2};
    Base* objs[4];
    for (int i = 0; i < 4; ++i) {
        if (pattern[i] == 2) objs[i] = new Leaf();
        else if (pattern[i] == 1) objs[i] = new Middle();
        else objs[i] = new Base();
    }
    CHECK(live == 4);
    int kinds = 0;
    for (int i = 0; i < 4; ++i) kinds = kinds * 128 + objs[i]->kind();
    CHECK(kinds == ((('l' * 128 + 'm') * 128 + 'b') * 128 + 'l'));
    resetTrace();
    for (int i = 3; i >= 0; --i) delete objs[i];
    CHECK(live == 0);
    CHECK(dtorL == 2 && dtorM == 3 && dtorB == 4);
    CHECK(std::strcmp(trace, "~Ll-l~Mm-m~Bb~Bb~Mm-m~Bb~Ll-l~Mm-m~Bb") == 0);

    int checksum = static_cast<int>(len1 * 1000 + len2 * 10) + dtorL + dtorM + dtorB;
    CHECK(checksum == 29189);
    std::printf("cpp_virtual_dtor_order: %d\n", checksum);
    return 0;
}
