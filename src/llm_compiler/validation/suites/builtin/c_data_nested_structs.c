// exercises: nested structs, arrays inside structs, struct member access through pointers, designated initializers, struct comparison by fields
// Computes bounding boxes, areas and intersections of rectangles built from nested point structs inside a scene struct.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct point { int x, y; };
struct rect { struct point lo, hi; };
struct shape { char name[8]; struct rect box; int layer; };
struct scene { int count; struct shape items[6]; struct rect bounds; };

static int rect_area(const struct rect *r) { return (r->hi.x - r->lo.x) * (r->hi.y - r->lo.y); }

static int rect_intersect(struct rect a, struct rect b, struct rect *out) {
    struct rect r;
    r.lo.x = a.lo.x > b.lo.x ? a.lo.x : b.lo.x;
    r.lo.y = a.lo.y > b.lo.y ? a.lo.y : b.lo.y;
    r.hi.x = a.hi.x < b.hi.x ? a.hi.x : b.hi.x;
    r.hi.y = a.hi.y < b.hi.y ? a.hi.y : b.hi.y;
    if (r.lo.x >= r.hi.x || r.lo.y >= r.hi.y) return 0;
    *out = r;
    return 1;
}

void scene_add(struct scene *s, const char *name, struct point lo, struct point hi, int layer) {
    struct shape *sh = &s->items[s->count++];
    int i = 0;
    for (; name[i] && i < 7; i++) sh->name[i] = name[i];
    sh->name[i] = '\0';
    sh->box.lo = lo;
    sh->box.hi = hi;
    sh->layer = layer;
}

void scene_bounds(struct scene *s) {
    s->bounds = s->items[0].box;
    for (int i = 1; i < s->count; i++) {
        const struct rect *b = &s->items[i].box;
        if (b->lo.x < s->bounds.lo.x) s->bounds.lo.x = b->lo.x;
        if (b->lo.y < s->bounds.lo.y) s->bounds.lo.y = b->lo.y;
        if (b->hi.x > s->bounds.hi.x) s->bounds.hi.x = b->hi.x;
        if (b->hi.y > s->bounds.hi.y) s->bounds.hi.y = b->hi.y;
    }
}

static int overlap_total(const struct scene *s, int layer) {
    int total = 0;
    for (int i = 0; i < s->count; i++)
        for (int j = i + 1; j < s->count; j++) {
            struct rect r;
            if (s->items[i].layer == layer && s->items[j].layer == layer &&
                rect_intersect(s->items[i].box, s->items[j].box, &r))
                total += rect_area(&r);
        }
    return total;
}

int main(void) {
    static struct scene sc;
    volatile int off = 2;
    int o = off;
    scene_add(&sc, "floor", (struct point){ 0, 0 }, (struct point){ 10, 4 }, 0);
    scene_add(&sc, "crate", (struct point){ o, 1 }, (struct point){ o + 3, 6 }, 0);
    scene_add(&sc, "barrel", (struct point){ 8, -2 }, (struct point){ 12, 3 }, 0);
    scene_add(&sc, "longname", (struct point){ -5, 5 }, (struct point){ -1, 9 }, 1);
    scene_add(&sc, "cloud", (struct point){ -3, 7 }, (struct point){ 4, 11 }, 1);
    CHECK(sc.count == 5);
    CHECK(sc.items[3].name[6] == 'm' && sc.items[3].name[7] == '\0');
    CHECK(sc.items[1].box.hi.x == 5);
    scene_bounds(&sc);
    CHECK(sc.bounds.lo.x == -5 && sc.bounds.lo.y == -2);
    CHECK(sc.bounds.hi.x == 12 && sc.bounds.hi.y == 11);
    CHECK(rect_area(&sc.bounds) == 221);
    CHECK(rect_area(&sc.items[0].box) == 40);
    /* floor&crate: [2,5]x[1,4]=9, floor&barrel: [8,10]x[0,3]=6, crate&barrel: none */
    CHECK(overlap_total(&sc, 0) == 15);
    /* longname&cloud: [-3,-1]x[7,9]=4 */
    CHECK(overlap_total(&sc, 1) == 4);
    struct rect dummy = { { 0, 0 }, { 0, 0 } };
    CHECK(rect_intersect(sc.items[1].box, sc.items[2].box, &dummy) == 0);
    CHECK(dummy.hi.x == 0);
    struct shape copy = sc.items[4];
    copy.box.lo.x = 100;
    CHECK(sc.items[4].box.lo.x == -3);
    unsigned sum = 0;
    for (int i = 0; i < sc.count; i++)
        sum = sum * 131u + (unsigned)rect_area(&sc.items[i].box) + (unsigned)sc.items[i].name[0];
    printf("c_data_nested_structs: %u\n", sum);
    return 0;
}
