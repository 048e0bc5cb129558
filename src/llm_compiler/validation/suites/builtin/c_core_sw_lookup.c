// exercises: switches that return constants (switch-to-lookup-table candidates), leap-year logic, Sakamoto day-of-week with a month-offset switch, hex digit encode/decode switches, seven-segment encoding, comparison with explicit tables
// Computes calendar facts, hex conversions and seven-segment encodings through constant-returning switches and checks them against tables and known dates.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
    switch (m) {
    case 1: case 3: case 5: case 7: case 8: case 10: case 12: return 31;
    case 4: case 6: case 9: case 11: return 30;
    case 2: return is_leap(y) ? 29 : 28;
    default: return 0;
    }
}

static int month_offset(int m) {
    switch (m) {
    case 1: return 0; case 2: return 3; case 3: return 2; case 4: return 5; case 5: return 0; case 6: return 3;
    case 7: return 5; case 8: return 1; case 9: return 4; case 10: return 6; case 11: return 2; case 12: return 4;
    default: abort();
    }
}

/* 0 = Sunday */
__attribute__((noinline)) int day_of_week(int y, int m, int d) {
    if (m < 3) y -= 1;
    return (y + y / 4 - y / 100 + y / 400 + month_offset(m) + d) % 7;
}

static char hex_char(unsigned v) {
    switch (v) {
    case 0: return '0'; case 1: return '1'; case 2: return '2'; case 3: return '3';
    case 4: return '4'; case 5: return '5'; case 6: return '6'; case 7: return '7';
    case 8: return '8'; case 9: return '9'; case 10: return 'a'; case 11: return 'b';
    case 12: return 'c'; case 13: return 'd'; case 14: return 'e'; case 15: return 'f';
    default: return '?';
    }
}

static uint8_t seven_seg(int digit) {
    switch (digit) {
    case 0: return 0x3f; case 1: return 0x06; case 2: return 0x5b; case 3: return 0x4f; case 4: return 0x66;
    case 5: return 0x6d; case 6: return 0x7d; case 7: return 0x07; case 8: return 0x7f; case 9: return 0x6f;
    default: return 0x40; /* dash */
    }
}

int main(void) {
    long total_days = 0;
    for (int y = 1900; y <= 2100; y++)
        for (int m = 1; m <= 12; m++) total_days += days_in_month(y, m);
    CHECK(total_days == 73414);
    volatile int feb = 2;
    CHECK(days_in_month(2024, feb) == 29 && days_in_month(1900, feb) == 28 && days_in_month(2000, feb) == 29);
    CHECK(days_in_month(2023, 13) == 0);
    CHECK(day_of_week(2024, 2, 29) == 4);  /* Thursday */
    CHECK(day_of_week(2000, 1, 1) == 6);   /* Saturday */
    CHECK(day_of_week(1969, 7, 20) == 0);  /* Sunday */
    int fri13 = 0;
    for (int y = 1900; y < 2100; y++)
        for (int m = 1; m <= 12; m++) fri13 += day_of_week(y, m, 13) == 5;
    CHECK(fri13 == 344);
    /* consecutive days advance the weekday by one */
    int dow = day_of_week(1999, 12, 31);
    for (int m = 1; m <= 12; m++)
        for (int d = 1; d <= days_in_month(2000, m); d++) {
            int w = day_of_week(2000, m, d);
            CHECK(w == (dow + 1) % 7);
            dow = w;
        }
    static const char table[] = "0123456789abcdef";
    for (unsigned v = 0; v < 16; v++) CHECK(hex_char(v) == table[v]);
    CHECK(hex_char(16) == '?');
    volatile uint32_t word = 0xdeadbeefu;
    char hex[9];
    for (int i = 0; i < 8; i++) hex[i] = hex_char((word >> (28 - 4 * i)) & 15u);
    hex[8] = '\0';
    CHECK(hex[0] == 'd' && hex[3] == 'd' && hex[7] == 'f');
    int segs = 0;
    for (int d = 0; d < 10; d++) segs += __builtin_popcount(seven_seg(d));
    CHECK(segs == 49);
    const char *phone = "8675309";
    int lit = 0;
    for (const char *p = phone; *p; p++) lit += __builtin_popcount(seven_seg(*p - '0'));
    CHECK(lit == 38);
    CHECK(seven_seg(-1) == 0x40);
    printf("c_core_sw_lookup: %ld %d %d %s\n", total_days, fri13, lit, hex);
    return 0;
}
