// exercises: rethrow with throw;, catch(...) handlers, translating exceptions in a handler, modifying a caught exception before rethrowing, std::exception_ptr with std::current_exception and std::rethrow_exception, function-try-blocks, throwing non-class types
// Runs values through a three-level call chain whose handlers log, rethrow and translate exceptions, and totals the recovered results.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Wrapped { int code; };
struct Fatal { int code; };

static char logBuf[64];
static int logLen = 0;
static void note(char c) { if (logLen < 63) { logBuf[logLen++] = c; logBuf[logLen] = '\0'; } }

static int level3(int v) {
    if (v % 3 == 0) throw v;
    if (v % 5 == 0) throw Fatal{v};
    return v * 2;
}

static int level2(int v) {
    try {
        return level3(v);
    } catch (...) {
        note('r');
        throw;
    }
}

static int level1(int v) {
    try {
        return level2(v);
    } catch (int code) {
        note('i');
        throw Wrapped{code * 10};
    }
}

static int run(int v) {
    try {
        return level1(v);
    } catch (const Wrapped& w) {
        note('w');
        return w.code;
    } catch (...) {
        note('x');
        return -1;
    }
}

static int guarded(int v) try {
    return level1(v);
} catch (...) {
    return -7;
}

int main() {
    volatile int count = 10;
    int sum = 0;
    for (int v = 1; v <= count; ++v) sum += run(v);
    CHECK(sum == 222);
    CHECK(std::strcmp(logBuf, "riwrxriwriwrx") == 0);
    int logged = logLen;

    int modified = 0;
    try {
        try {
            throw Wrapped{1};
        } catch (Wrapped& w) {
            w.code += 41;
            throw;
        }
    } catch (const Wrapped& w) {
        modified = w.code;
    }
    CHECK(modified == 42);

    std::exception_ptr saved[4];
    for (int i = 0; i < 4; ++i) {
        try {
            level2(i * 5);
        } catch (...) {
            saved[i] = std::current_exception();
        }
    }
    int ints = 0, fatals = 0;
    for (int i = 0; i < 4; ++i) {
        CHECK(saved[i] != nullptr);
        try {
            std::rethrow_exception(saved[i]);
        } catch (int c) {
            ints += c + 1;
        } catch (const Fatal& f) {
            fatals += f.code;
        }
    }
    CHECK(ints == 17 && fatals == 15);

    int g = guarded(count / 2) + guarded(3) + guarded(4);
    CHECK(g == -6);

    int checksum = sum * 100 + ints * 10 + fatals + logged + g;
    CHECK(checksum == 22392);
    std::printf("cpp_exc_rethrow: %d\n", checksum);
    return 0;
}
