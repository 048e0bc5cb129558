// exercises: struct pass by value, struct return by value, compound literals, large struct copies, callee modifying its copy
// Computes 3-D integer vector algebra, exact rational sums and checksums of a large struct, all passed and returned by value.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

typedef struct { int x, y, z; } vec3;
typedef struct { long num, den; } rat;
typedef struct { int v[16]; unsigned tag; } big;

static vec3 vadd(vec3 a, vec3 b) { vec3 r = { a.x + b.x, a.y + b.y, a.z + b.z }; return r; }
static vec3 vscale(vec3 a, int k) { a.x *= k; a.y *= k; a.z *= k; return a; }
int vdot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
vec3 vcross(vec3 a, vec3 b) {
    return (vec3){ a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x };
}

static long gcd(long a, long b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) { long t = a % b; a = b; b = t; }
    return a;
}
static rat rnorm(rat r) {
    long g = gcd(r.num, r.den);
    if (g != 0) { r.num /= g; r.den /= g; }
    if (r.den < 0) { r.num = -r.num; r.den = -r.den; }
    return r;
}
rat radd(rat a, rat b) { return rnorm((rat){ a.num * b.den + b.num * a.den, a.den * b.den }); }
rat rmul(rat a, rat b) { return rnorm((rat){ a.num * b.num, a.den * b.den }); }

big bfill(unsigned seed) {
    big b;
    for (int i = 0; i < 16; i++) {
        seed = seed * 1103515245u + 12345u;
        b.v[i] = (int)((seed >> 16) & 0x7fffu);
    }
    b.tag = seed;
    return b;
}
static unsigned bsum(big b) {
    unsigned s = b.tag;
    for (int i = 0; i < 16; i++) s = s * 31u + (unsigned)b.v[i];
    return s;
}
static big bzero_first(big b) { b.v[0] = 0; b.tag = 0; return b; }

int main(void) {
    volatile int vk = 3, vn = 10;
    volatile unsigned vseed = 42;
    int k = vk, n = vn;
    vec3 a = { 1, 2, 3 }, b = { 4, 5, 6 };

    vec3 c = vadd(a, b);
    CHECK(c.x == 5 && c.y == 7 && c.z == 9);
    vec3 d = vscale(a, k);
    CHECK(d.x == 3 && d.y == 6 && d.z == 9);
    CHECK(a.x == 1 && a.y == 2 && a.z == 3);
    CHECK(vdot(a, b) == 32);
    vec3 e = vcross(a, b);
    CHECK(e.x == -3 && e.y == 6 && e.z == -3);
    CHECK(vdot(e, a) == 0 && vdot(e, b) == 0);

    rat h = { 0, 1 };
    for (int i = 1; i <= n; i++) h = radd(h, (rat){ 1, i });
    CHECK(h.num == 7381 && h.den == 2520);
    rat p = rmul((rat){ -6, 4 }, (rat){ 2, -9 });
    CHECK(p.num == 1 && p.den == 3);

    big x = bfill(vseed);
    big y = bzero_first(x);
    CHECK(x.v[0] == 19081 && x.v[15] == 3632);
    CHECK(x.tag == 238077914u);
    CHECK(bsum(x) == 3012213957u);
    CHECK(y.v[0] == 0 && y.tag == 0 && y.v[1] == 17033);

    unsigned sum = (unsigned)(c.x + d.y + e.z) ^ (unsigned)h.num ^ bsum(x) ^ bsum(y);
    printf("c_data_struct_byvalue: %u\n", sum);
    return 0;
}
