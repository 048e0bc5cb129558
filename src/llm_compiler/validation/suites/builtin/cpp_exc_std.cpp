// exercises: standard exception hierarchy, std::out_of_range from at(), std::invalid_argument and std::out_of_range from std::stoi, std::length_error from reserve, std::bad_cast from dynamic_cast to a reference, std::runtime_error messages, handler ordering from most to least derived
// Triggers eleven library operations that may throw standard exceptions and classifies each caught exception by its most specific handler.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

struct Base { virtual ~Base() = default; };
struct Left : Base {};
struct Right : Base {};

static int lastValue = -1;

static void operation(int which, int index) {
    std::vector<int> v(3, 7);
    std::string s = "hi";
    std::array<int, 3> arr = {{1, 2, 3}};
    Left left;
    const Base& base = left;
    switch (which) {
        case 0: lastValue = v.at(static_cast<std::size_t>(index + 2)); break;
        case 1: lastValue = std::stoi("abc"); break;
        case 2: lastValue = std::stoi("99999999999"); break;
        case 3: lastValue = s.at(static_cast<std::size_t>(index)); break;
        case 4: lastValue = arr.at(static_cast<std::size_t>(index + 1)); break;
        case 5: lastValue = &dynamic_cast<const Right&>(base) == &base ? 1 : 2; break;
        case 6: v.reserve(v.max_size() + 1); break;
        case 7: throw std::runtime_error("disk full");
        case 8: throw std::domain_error("negative root");
        case 9: { std::size_t pos = 0; lastValue = std::stoi("  42x", &pos) * 10 + static_cast<int>(pos); break; }
        default: throw std::bad_exception();
    }
}

// The message is compared inside the handler, while the exception object is still alive.
static int classify(int which, int index, int& messagesOk) {
    try {
        operation(which, index);
        return 0;
    } catch (const std::out_of_range&) {
        return 1;
    } catch (const std::invalid_argument&) {
        return 2;
    } catch (const std::length_error&) {
        return 3;
    } catch (const std::logic_error& e) {
        messagesOk += std::strcmp(e.what(), "negative root") == 0 ? 1 : 0;
        return 4;
    } catch (const std::bad_cast&) {
        return 5;
    } catch (const std::runtime_error& e) {
        messagesOk += std::strcmp(e.what(), "disk full") == 0 ? 1 : 0;
        return 6;
    } catch (const std::exception&) {
        return 7;
    }
}

int main() {
    volatile int index = 2;
    const int expected[11] = {1, 2, 1, 1, 1, 5, 3, 6, 4, 0, 7};
    int sum = 0, weighted = 0, messagesOk = 0;
    for (int i = 0; i < 11; ++i) {
        int code = classify(i, index, messagesOk);
        CHECK(code == expected[i]);
        sum += code;
        weighted += code * (i + 1);
    }
    CHECK(sum == 31);
    CHECK(weighted == 229 && messagesOk == 2);
    CHECK(lastValue == 424);

    int checksum = weighted * 1000 + sum * 10 + messagesOk + lastValue;
    CHECK(checksum == 229736);
    std::printf("cpp_exc_std: %d\n", checksum);
    return 0;
}
