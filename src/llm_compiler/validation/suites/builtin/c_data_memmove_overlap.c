// exercises: overlapping memmove forwards and backwards, array insert and erase with memmove, gap buffer editing, reference copies through a temporary buffer
// Edits integer arrays and a gap-buffer text with overlapping memmove calls and checks them against temporary-buffer reference copies.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void ref_move(unsigned char *base, size_t dst, size_t src, size_t n) {
    unsigned char tmp[256];
    memcpy(tmp, base + src, n);
    memcpy(base + dst, tmp, n);
}

size_t insert_at(int *a, size_t len, size_t pos, int v) {
    memmove(a + pos + 1, a + pos, (len - pos) * sizeof *a);
    a[pos] = v;
    return len + 1;
}

size_t erase_range(int *a, size_t len, size_t pos, size_t count) {
    memmove(a + pos, a + pos + count, (len - pos - count) * sizeof *a);
    return len - count;
}

/* Gap buffer: text[0..gap) + text[gap_end..cap). */
struct gapbuf { char text[64]; size_t gap, gap_end; };

static void gb_move_cursor(struct gapbuf *g, size_t pos) {
    if (pos < g->gap) {
        size_t n = g->gap - pos;
        memmove(g->text + g->gap_end - n, g->text + pos, n);
        g->gap = pos; g->gap_end -= n;
    } else if (pos > g->gap) {
        size_t n = pos - g->gap;
        memmove(g->text + g->gap, g->text + g->gap_end, n);
        g->gap += n; g->gap_end += n;
    }
}

static void gb_insert(struct gapbuf *g, const char *s) { size_t n = strlen(s); memcpy(g->text + g->gap, s, n); g->gap += n; }

static void gb_contents(const struct gapbuf *g, char *out) {
    memcpy(out, g->text, g->gap);
    memcpy(out + g->gap, g->text + g->gap_end, sizeof g->text - g->gap_end);
    out[g->gap + sizeof g->text - g->gap_end] = '\0';
}

int main(void) {
    unsigned char x[200], y[200];
    volatile unsigned vseed = 99;
    unsigned s = vseed;
    for (int i = 0; i < 200; i++) { s = s * 1103515245u + 12345u; x[i] = (unsigned char)(s >> 24); }
    memcpy(y, x, sizeof x);
    for (int t = 0; t < 300; t++) {
        s = s * 1103515245u + 12345u;
        size_t n = (s >> 8) % 100, src = (s >> 16) % (200 - n), dst = (s >> 4) % (200 - n);
        memmove(x + dst, x + src, n);
        ref_move(y, dst, src, n);
        CHECK(memcmp(x, y, sizeof x) == 0);
    }
    int a[16] = { 10, 20, 30, 40, 50 };
    size_t len = 5;
    len = insert_at(a, len, 0, 5);
    len = insert_at(a, len, 3, 25);
    len = insert_at(a, len, len, 60);
    CHECK(len == 8 && a[0] == 5 && a[3] == 25 && a[4] == 30 && a[7] == 60);
    len = erase_range(a, len, 1, 3);
    CHECK(len == 5 && a[0] == 5 && a[1] == 30 && a[4] == 60);
    struct gapbuf g;
    char out[80];
    memset(g.text, '#', sizeof g.text);
    g.gap = 0; g.gap_end = sizeof g.text;
    gb_insert(&g, "hello world");
    gb_move_cursor(&g, 5);
    gb_insert(&g, ",");
    gb_move_cursor(&g, 12);
    gb_insert(&g, "!");
    gb_move_cursor(&g, 0);
    gb_insert(&g, ">> ");
    gb_contents(&g, out);
    CHECK(strcmp(out, ">> hello, world!") == 0 && g.gap == 3 && g.gap_end == 64 - 13);
    unsigned sum = 0;
    for (int i = 0; i < 200; i++) sum = sum * 33u + x[i];
    for (size_t i = 0; i < len; i++) sum = sum * 5u + (unsigned)a[i];
    printf("c_data_memmove_overlap: %u\n", sum);
    return 0;
}
