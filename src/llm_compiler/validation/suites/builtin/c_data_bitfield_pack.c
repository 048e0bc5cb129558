// exercises: bitfields, signed and unsigned bitfield members, bitfield wraparound, manual shift/mask packing, sign extension
// Encodes instruction and date records both as bitfield structs and as hand-packed 32-bit words and checks they agree.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct insn { unsigned op : 6; unsigned rd : 5; unsigned rs : 5; signed int imm : 16; };
struct date { unsigned day : 5; unsigned month : 4; unsigned year : 12; unsigned leap : 1; };

static uint32_t pack_insn(unsigned op, unsigned rd, unsigned rs, int imm) {
    return (op & 0x3fu) << 26 | (rd & 0x1fu) << 21 | (rs & 0x1fu) << 16 | ((uint32_t)imm & 0xffffu);
}

static int32_t sext16(uint32_t v) { return (int32_t)((v & 0xffffu) ^ 0x8000u) - 0x8000; }

struct insn unpack_insn(uint32_t w) {
    struct insn i;
    i.op = w >> 26;
    i.rd = (w >> 21) & 0x1fu;
    i.rs = (w >> 16) & 0x1fu;
    i.imm = sext16(w);
    return i;
}

static int is_leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

struct date make_date(unsigned y, unsigned m, unsigned d) {
    struct date dt;
    dt.year = y; dt.month = m; dt.day = d; dt.leap = is_leap(y);
    return dt;
}

uint32_t date_key(struct date d) { return (uint32_t)d.year << 9 | (uint32_t)d.month << 5 | d.day; }

int main(void) {
    volatile int vimm = -1234;
    volatile unsigned vop = 45, vbig = 70, vyear = 5000;
    uint32_t w = pack_insn(vop, 17, 3, vimm);
    CHECK(w == 0xb623fb2eu);
    struct insn in = unpack_insn(w);
    CHECK(in.op == 45 && in.rd == 17 && in.rs == 3 && in.imm == -1234);
    CHECK(pack_insn(in.op, in.rd, in.rs, in.imm) == w);
    in.imm = in.imm + 1000;
    CHECK(in.imm == -234);
    in.op = vbig;                /* unsigned bitfield wraps modulo 64 */
    CHECK(in.op == 6);
    in.rd++;
    in.rd += 14;                 /* 18 + 14 = 32 wraps to 0 */
    CHECK(in.rd == 0);
    CHECK(sext16(0x7fffu) == 32767 && sext16(0x8000u) == -32768 && sext16(0x1ffffu) == -1);

    struct date a = make_date(2024, 2, 29), b = make_date(1900, 12, 31), c = make_date(2000, 1, 1);
    CHECK(a.leap == 1 && b.leap == 0 && c.leap == 1);
    CHECK(a.year == 2024 && a.month == 2 && a.day == 29);
    CHECK(date_key(a) == 1036381u);
    CHECK(date_key(b) < date_key(c) && date_key(c) < date_key(a));
    struct date d = a;
    d.year = vyear;              /* 5000 mod 4096 = 904 */
    CHECK(d.year == 904 && d.day == 29);

    uint32_t sum = 0;
    for (int k = -40; k <= 40; k += 7) {
        struct insn t = unpack_insn(pack_insn((unsigned)(k + 64), (unsigned)k & 31u, 31, k * 811));
        sum = sum * 29u + t.op + t.rd * 3u + (uint32_t)(t.imm + 40000);
    }
    printf("c_data_bitfield_pack: %u 0x%08x\n", sum, w);
    return 0;
}
