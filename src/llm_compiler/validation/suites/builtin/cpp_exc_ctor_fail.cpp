// exercises: exceptions thrown from constructors and member initializers, destruction of already-constructed members and bases, skipped destructor of a partially constructed object, class-specific operator new/delete freed by a failing new-expression, destructors that throw and catch internally during unwinding, std::uncaught_exceptions
// Traces which bases and members are destroyed when a Widget constructor fails at different points and checks that failed new-expressions release their memory.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static char trace[64];
static unsigned traceLen = 0;
static void put(const char* s) { while (*s != '\0' && traceLen + 1 < sizeof trace) trace[traceLen++] = *s++; trace[traceLen] = '\0'; }
static void reset() { traceLen = 0; trace[0] = '\0'; }
static int news = 0, deletes = 0;

struct Part {
    char tag[3];
    Part(char t, bool fail) : tag{'+', t, '\0'} {
        if (fail) throw 1;
        put(tag);
    }
    ~Part() { tag[0] = '-'; put(tag); }
};

struct Base {
    Base() { put("B"); }
    ~Base() { put("~B"); }
};

struct Widget : Base {
    Part a, b, c;
    explicit Widget(int failAt) : a('a', false), b('b', failAt == 1), c('c', failAt == 2) {
        if (failAt == 3) throw 3;
        put("W");
    }
    ~Widget() { put("~W"); }
    static void* operator new(std::size_t n) { ++news; return ::operator new(n); }
    static void operator delete(void* p) noexcept { ++deletes; ::operator delete(p); }
};

struct Cleaner {
    int* uncaught;
    int* handled;
    ~Cleaner() {
        *uncaught += std::uncaught_exceptions();
        try {
            throw 5;
        } catch (int v) {
            *handled += v;
        }
    }
};

static void failWithCleaner(int& uncaught, int& handled) {
    Cleaner c{&uncaught, &handled};
    throw 9;
}

int main() {
    const char* expected[4] = {"B+a+b+cW~W-c-b-a~B", "B+a-a~B", "B+a+b-b-a~B", "B+a+b+c-c-b-a~B"};
    volatile int cases = 4;
    unsigned totalLen = 0;
    int failures = 0;
    for (int k = 0; k < cases; ++k) {
        reset();
        try {
            Widget* w = new Widget(k);
            delete w;
        } catch (int code) {
            CHECK(code == (k == 3 ? 3 : 1));
            ++failures;
        }
        CHECK(std::strcmp(trace, expected[k]) == 0);
        totalLen += traceLen;
    }
    CHECK(totalLen == 51);
    CHECK(news == 4 && deletes == 4 && failures == 3);

    int uncaught = 0, handled = 0, outer = 0;
    try {
        failWithCleaner(uncaught, handled);
    } catch (int v) {
        outer = v;
    }
    CHECK(outer == 9 && uncaught == 1 && handled == 5);
    { Cleaner normal{&uncaught, &handled}; }
    CHECK(uncaught == 1 && handled == 10);

    int checksum = static_cast<int>(totalLen) * 1000 + news * 100 + deletes * 10 + handled + uncaught * 10000 + outer;
    CHECK(checksum == 61459);
    std::printf("cpp_exc_ctor_fail: %d\n", checksum);
    return 0;
}
