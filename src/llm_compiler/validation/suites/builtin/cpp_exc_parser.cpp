// exercises: exceptions thrown from deep recursion, exception class hierarchy with data members, handler ordering for derived and base exception types, parser state unwinding, exceptions as error signalling in a recursive-descent parser
// Evaluates twelve arithmetic expressions with a recursive-descent parser that throws on syntax errors, over-long numbers and division by zero, and totals results and error counts.
#include <cstdio>
#include <cstdlib>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct SyntaxError { int pos; };
struct NumberTooLong : SyntaxError { explicit NumberTooLong(int p) : SyntaxError{p} {} };
struct EvalError { long long numerator; };

class Parser {
public:
    explicit Parser(const char* s) : s_(s) {}
    long long parse() {
        long long v = expr();
        if (s_[pos_] != '\0') throw SyntaxError{pos_};
        return v;
    }
private:
    long long expr() {
        long long v = term();
        while (s_[pos_] == '+' || s_[pos_] == '-') {
            char op = s_[pos_++];
            long long r = term();
            v = op == '+' ? v + r : v - r;
        }
        return v;
    }
    long long term() {
        long long v = factor();
        while (s_[pos_] == '*' || s_[pos_] == '/' || s_[pos_] == '%') {
            char op = s_[pos_++];
            long long r = factor();
            if (op == '*') { v *= r; continue; }
            if (r == 0) throw EvalError{v};
            v = op == '/' ? v / r : v % r;
        }
        return v;
    }
    long long factor() {
        char c = s_[pos_];
        if (c == '-') { ++pos_; return -factor(); }
        if (c == '(') {
            ++pos_;
            long long v = expr();
            if (s_[pos_] != ')') throw SyntaxError{pos_};
            ++pos_;
            return v;
        }
        if (c < '0' || c > '9') throw SyntaxError{pos_};
        int start = pos_;
        long long v = 0;
        while (s_[pos_] >= '0' && s_[pos_] <= '9') {
            if (pos_ - start >= 6) throw NumberTooLong(start);
            v = v * 10 + (s_[pos_++] - '0');
        }
        return v;
    }
    const char* s_;
    int pos_ = 0;
};

int main() {
    const char* exprs[12] = {"1+2*3", "(1+2)*3", "10/(5-5)", "2*(3+4", "-(4-10)*2", "8%3+100/7",
                             "", "7 7", "((((5))))", "3+*4", "1234567+1", "100-7*7*2"};
    const long long expected[12] = {7, 9, 0, 0, 12, 16, 0, 0, 5, 0, 0, 2};
    volatile int count = 12;
    long long validSum = 0;
    int syntax = 0, divZero = 0, tooLong = 0, posSum = 0, valid = 0;
    for (int i = 0; i < count; ++i) {
        try {
            long long v = Parser(exprs[i]).parse();
            CHECK(v == expected[i]);
            validSum += v;
            ++valid;
        } catch (const NumberTooLong& e) {
            ++tooLong;
            CHECK(e.pos == 0);
        } catch (const SyntaxError& e) {
            ++syntax;
            posSum += e.pos;
        } catch (const EvalError& e) {
            ++divZero;
            CHECK(e.numerator == 10);
        }
    }
    CHECK(validSum == 51);
    CHECK(valid == 6 && syntax == 4 && divZero == 1 && tooLong == 1 && posSum == 9);

    long long checksum = validSum * 1000 + syntax * 100 + divZero * 10 + tooLong + posSum * 10000;
    CHECK(checksum == 141411);
    std::printf("cpp_exc_parser: %lld\n", checksum);
    return 0;
}
