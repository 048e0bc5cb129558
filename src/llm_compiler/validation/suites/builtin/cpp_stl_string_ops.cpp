// exercises: std::string append, find, rfind, substr, replace, insert, erase, comparison, std::reverse on strings, character classification by hand, run-length encoding and decoding
// Performs run-length coding, Caesar shifts, palindrome tests, replace-all, splitting and search operations on std::string and hashes the results.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#define CHECK(c) do { if (!(c)) std::abort(); } while (0)

static std::string rleEncode(const char* text) {
    const std::string s(text);
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j < s.size() && s[j] == s[i]) ++j;
        out += s[i];
        out += static_cast<char>('0' + (j - i));
        i = j;
    }
    return out;
}

static std::string rleDecode(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i + 1 < s.size(); i += 2) out.append(static_cast<std::size_t>(s[i + 1] - '0'), s[i]);
    return out;
}

static std::string caesar(const std::string& in, int k) {
    std::string s = in;
    for (char& c : s) {
        if (c >= 'a' && c <= 'z') c = static_cast<char>('a' + (c - 'a' + k) % 26);
        else if (c >= 'A' && c <= 'Z') c = static_cast<char>('A' + (c - 'A' + k) % 26);
    }
    return s;
}

static bool isPalindrome(const char* s) {
    std::string letters;
    for (; *s != '\0'; ++s)
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) letters += static_cast<char>(*s | 0x20);
    std::string rev = letters;
    std::reverse(rev.begin(), rev.end());
    return !letters.empty() && rev == letters;
}

static std::string replaceAll(const char* text, const char* from, const char* to) {
    std::string s(text);
    const std::string f(from), t(to);
    for (std::size_t pos = s.find(f); pos != std::string::npos; pos = s.find(f, pos + t.size())) s.replace(pos, f.size(), t);
    return s;
}

static int splitCount(const std::string& s, char sep, std::size_t& longest) {
    int parts = 0;
    longest = 0;
    for (std::size_t start = 0;; ++parts) {
        std::size_t end = s.find(sep, start);
        std::size_t len = (end == std::string::npos ? s.size() : end) - start;
        if (len > longest) longest = len;
        if (end == std::string::npos) return parts + 1;
        start = end + 1;
    }
}

static long long hashInto(long long h, const std::string& s) {
    for (char c : s) h = (h * 31 + static_cast<unsigned char>(c)) % 1000003;
    return h;
}

int main() {
    volatile int shift = 3;
    const std::string rle = rleEncode("aaabccddddde");
    CHECK(rle == "a3b1c2d5e1" && rleDecode(rle) == "aaabccddddde");
    const std::string plain = "Hello, World!";
    const std::string secret = caesar(plain, shift);
    CHECK(secret == "Khoor, Zruog!" && caesar(secret, 26 - shift) == plain);
    int pal = isPalindrome("A man, a plan, a canal: Panama") ? 1 : 0;
    CHECK(pal == 1 && !isPalindrome("std::string"));
    const std::string replaced = replaceAll("the cat sat on the mat", "at", "og");
    CHECK(replaced == "the cog sog on the mog" && replaceAll("aaa", "a", "aa") == "aaaaaa");

    std::string edit = "alpha,beta,,gamma";
    std::size_t longest = 0;
    CHECK(splitCount(edit, ',', longest) == 4 && longest == 5);

    const std::string m = "mississippi";
    std::size_t f = m.find("ss"), r = m.rfind("ss"), p = m.find('p');
    CHECK(f == 2 && r == 5 && p == 8 && m.find("xyz") == std::string::npos);
    CHECK(m.substr(4, 3) == "iss" && m.compare(0, 4, "miss") == 0 && m < "mist");

    edit = "abcdef";
    edit.insert(3, "XYZ");
    CHECK(edit == "abcXYZdef");
    edit.erase(1, 2);
    CHECK(edit == "aXYZdef" && edit.size() == 7);
    edit = "stressed";
    std::reverse(edit.begin(), edit.end());
    CHECK(edit == "desserts");

    long long h = hashInto(hashInto(hashInto(0, rle), secret), replaced);
    CHECK(h == 606874);
    long long checksum = h + 1000000LL * pal + static_cast<long long>(f * 100 + r * 10 + p);
    CHECK(checksum == 1607132);
    std::printf("cpp_stl_string_ops: %lld\n", checksum);
    return 0;
}
