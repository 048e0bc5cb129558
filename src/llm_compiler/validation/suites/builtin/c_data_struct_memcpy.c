// exercises: struct copies with memcpy and assignment, memcmp of padding-free structs, structs stored at unaligned buffer offsets via memcpy, shallow versus deep copy, arrays of structs copied in bulk
// Copies padding-free records through memcpy, assignment and an unaligned byte buffer and checks equality, independence and shallow-copy sharing.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct rec { uint32_t id; uint16_t kind, flags; int32_t delta[3]; };       /* 20 bytes, no padding */
struct owner { uint32_t len; uint32_t pad; int32_t *data; };

static uint32_t rec_hash(const struct rec *r) {
    uint32_t h = r->id * 2654435761u ^ ((uint32_t)r->kind << 16 | r->flags);
    for (int i = 0; i < 3; i++) h = h * 31u + (uint32_t)r->delta[i];
    return h;
}

/* Packs n records back to back starting at an arbitrary (possibly odd) offset. */
size_t pack(unsigned char *buf, size_t off, const struct rec *r, size_t n) {
    for (size_t i = 0; i < n; i++, off += sizeof *r) memcpy(buf + off, &r[i], sizeof *r);
    return off;
}

static struct rec unpack_one(const unsigned char *buf, size_t off) {
    struct rec r;
    memcpy(&r, buf + off, sizeof r);
    return r;
}

static struct owner deep_copy(const struct owner *o) {
    struct owner c = *o;
    c.data = malloc(o->len * sizeof *c.data);
    if (!c.data) abort();
    memcpy(c.data, o->data, o->len * sizeof *c.data);
    return c;
}

int main(void) {
    struct rec a[4], b[4];
    unsigned char buf[1 + sizeof a];
    volatile uint32_t vid = 1000;
    CHECK(sizeof(struct rec) == 20);
    memset(buf, 0xee, sizeof buf);
    for (int i = 0; i < 4; i++) {
        a[i].id = vid + (uint32_t)i;
        a[i].kind = (uint16_t)(i * 3);
        a[i].flags = (uint16_t)(0xf000u >> i);
        for (int k = 0; k < 3; k++) a[i].delta[k] = (i - 2) * (k + 1) * 1000;
    }
    memcpy(b, a, sizeof a);
    CHECK(memcmp(a, b, sizeof a) == 0);
    b[2].delta[1] = 5;
    CHECK(memcmp(a, b, sizeof a) != 0 && a[2].delta[1] == 0);
    CHECK(pack(buf, 1, a, 4) == 81);
    struct rec u = unpack_one(buf, 1 + 3 * sizeof(struct rec));
    CHECK(u.id == 1003 && u.kind == 9 && u.flags == 0x1e00 && u.delta[2] == 3000);
    CHECK(memcmp(&u, &a[3], sizeof u) == 0 && rec_hash(&u) == rec_hash(&a[3]));
    struct rec c = a[0];
    c.delta[0] = -c.delta[0];
    CHECK(c.delta[0] == 2000 && a[0].delta[0] == -2000);
    int32_t vals[5] = { 1, 2, 3, 4, 5 };
    struct owner o = { 5, 0, vals }, shallow = o, deep = deep_copy(&o);
    vals[4] = 50;
    CHECK(shallow.data[4] == 50 && deep.data[4] == 5 && deep.len == 5);
    deep.data[0] = -1;
    CHECK(vals[0] == 1);
    uint32_t sum = 0;
    for (int i = 0; i < 4; i++) sum = sum * 7u ^ rec_hash(&a[i]);
    for (size_t i = 0; i < sizeof buf; i++) sum = sum * 3u + buf[i];
    free(deep.data);
    printf("c_data_struct_memcpy: %u\n", sum);
    return 0;
}
