// exercises: const lookup tables, static const arrays of structs, table-driven popcount, day-of-year and weekday tables, Roman numeral table, const string tables
// Computes popcounts, day-of-year, weekdays and Roman numerals from constant lookup tables and checks them against known values.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
static const unsigned char popcnt8[256] = { B6(0), B6(1), B6(1), B6(2) };

static const unsigned char mdays[2][12] = {
    { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 },
    { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 },
};
static const int dow_offset[12] = { 0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4 };
static const char *const day_names[7] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };

static const struct { unsigned short value; char sym[3]; } roman[13] = {
    { 1000, "M" }, { 900, "CM" }, { 500, "D" }, { 400, "CD" }, { 100, "C" }, { 90, "XC" },
    { 50, "L" }, { 40, "XL" }, { 10, "X" }, { 9, "IX" }, { 5, "V" }, { 4, "IV" }, { 1, "I" },
};

unsigned popcount32(uint32_t x) {
    return popcnt8[x & 0xff] + popcnt8[x >> 8 & 0xff] + popcnt8[x >> 16 & 0xff] + popcnt8[x >> 24];
}

static int leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int day_of_year(int y, int m, int d) {
    int n = d;
    for (int i = 0; i < m - 1; i++) n += mdays[leap(y)][i];
    return n;
}

static int weekday(int y, int m, int d) {
    if (m < 3) y -= 1;
    return (y + y / 4 - y / 100 + y / 400 + dow_offset[m - 1] + d) % 7;
}

void to_roman(unsigned v, char *out) {
    out[0] = '\0';
    for (int i = 0; i < 13; i++)
        while (v >= roman[i].value) { strcat(out, roman[i].sym); v -= roman[i].value; }
}

int main(void) {
    char buf[32];
    volatile uint32_t vx = 0xdeadbeefu;
    volatile int vyear = 2024;
    for (unsigned i = 0; i < 256; i++) {
        unsigned c = 0;
        for (unsigned b = i; b; b >>= 1) c += b & 1u;
        CHECK(popcnt8[i] == c);
    }
    CHECK(popcount32(vx) == 24);
    CHECK(popcount32(vx) + popcount32(0x12345678u) + popcount32(0xffffffffu) + popcount32(0) == 69);
    CHECK(day_of_year(vyear, 3, 1) == 61 && day_of_year(2023, 12, 31) == 365);
    CHECK(day_of_year(2000, 2, 29) == 60 && day_of_year(1900, 3, 1) == 60);
    CHECK(weekday(vyear, 3, 1) == 5 && strcmp(day_names[weekday(1970, 1, 1)], "Thu") == 0);
    to_roman(1994, buf);
    CHECK(strcmp(buf, "MCMXCIV") == 0);
    to_roman(3999, buf);
    CHECK(strcmp(buf, "MMMCMXCIX") == 0);
    to_roman((unsigned)vyear, buf);
    CHECK(strcmp(buf, "MMXXIV") == 0);
    unsigned sum = 0;
    for (int y = 1990; y < 2030; y++) sum = sum * 7u + (unsigned)weekday(y, 7, 4) + (unsigned)day_of_year(y, 12, 31);
    for (unsigned v = 1; v < 200; v += 13) { to_roman(v, buf); sum = sum * 3u + (unsigned)strlen(buf); }
    printf("c_data_const_tables: %u\n", sum);
    return 0;
}
