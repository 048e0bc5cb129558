// exercises: custom exception hierarchy derived from std::exception, throw across several call frames, catch by base reference, handler ordering, catch by value slicing, virtual members on exceptions, exception object lifetime counting
// Parses short digit strings with functions that throw custom ParseError and RangeError exceptions and totals the values and severities recovered by the handlers.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static int liveErrors = 0;

class AppError : public std::exception {
public:
    explicit AppError(int code) : code_(code) { ++liveErrors; }
    AppError(const AppError& o) : std::exception(o), code_(o.code_) { ++liveErrors; }
    ~AppError() override { --liveErrors; }
    const char* what() const noexcept override { return "app"; }
    int code() const noexcept { return code_; }
    virtual int severity() const noexcept { return 1; }
private:
    int code_;
};

class ParseError : public AppError {
public:
    explicit ParseError(int pos) : AppError(pos) {}
    const char* what() const noexcept override { return "parse"; }
    int severity() const noexcept override { return 2; }
};

class RangeError final : public AppError {
public:
    RangeError(int value, int limit) : AppError(limit), value_(value) {}
    const char* what() const noexcept override { return "range"; }
    int severity() const noexcept override { return 3; }
    int value() const noexcept { return value_; }
private:
    int value_;
};

static int parseDigit(char c, int pos) {
    if (c < '0' || c > '9') throw ParseError(pos);
    return c - '0';
}

static int parseNumber(const char* s, int limit) {
    int v = 0;
    for (int i = 0; s[i] != '\0'; ++i) {
        v = v * 10 + parseDigit(s[i], i);
        if (v > limit) throw RangeError(v, limit);
    }
    return v;
}

static int attempt(const char* s, int limit, int& severitySum) {
    try {
        return parseNumber(s, limit);
    } catch (const RangeError& e) {
        severitySum += e.severity();
        return -e.value();
    } catch (const AppError& e) {
        severitySum += e.severity();
        return -1000 - e.code();
    }
}

int main() {
    volatile int limit = 1000;
    const char* inputs[6] = {"123", "12x4", "99999", "", "7", "-5"};
    const int expected[6] = {123, -1002, -9999, 0, 7, -1000};
    int severitySum = 0, total = 0;
    for (int i = 0; i < 6; ++i) {
        int r = attempt(inputs[i], limit, severitySum);
        CHECK(r == expected[i]);
        total += r;
    }
    CHECK(total == -11871);
    CHECK(severitySum == 7 && liveErrors == 0);

    int caughtStd = 0;
    try {
        parseNumber("5000", limit);
    } catch (const std::exception& e) {
        caughtStd = std::strcmp(e.what(), "range") == 0 ? 1 : 0;
    }
    CHECK(caughtStd == 1 && liveErrors == 0);

    try {
        throw ParseError(5);
    } catch (AppError sliced) {
        CHECK(std::strcmp(sliced.what(), "app") == 0 && sliced.code() == 5 && sliced.severity() == 1);
        CHECK(liveErrors == 2);
    }
    CHECK(liveErrors == 0);

    int checksum = caughtStd * 1000000 - total * 10 + severitySum;
    CHECK(checksum == 1118717);
    std::printf("cpp_exc_custom: %d\n", checksum);
    return 0;
}
