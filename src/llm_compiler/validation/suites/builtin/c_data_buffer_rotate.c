// exercises: buffer rotation with memcpy plus memmove, triple-reversal rotation, cycle-leader rotation, ring buffer wraparound copies in two chunks, memcmp agreement
// Rotates byte buffers three different ways and streams data through a ring buffer, checking all methods agree byte for byte.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

void rotate_left_memmove(unsigned char *b, size_t n, size_t k) {
    unsigned char tmp[64];
    k %= n;
    memcpy(tmp, b, k);
    memmove(b, b + k, n - k);
    memcpy(b + n - k, tmp, k);
}

static void rev(unsigned char *b, size_t i, size_t j) { while (i < j) { unsigned char t = b[i]; b[i++] = b[--j]; b[j] = t; } }

static void rotate_left_reverse(unsigned char *b, size_t n, size_t k) {
    k %= n;
    rev(b, 0, k); rev(b, k, n); rev(b, 0, n);
}

static size_t gcd(size_t a, size_t b) { while (b) { size_t t = a % b; a = b; b = t; } return a; }

static void rotate_left_cycles(unsigned char *b, size_t n, size_t k) {
    k %= n;
    if (!k) return;
    for (size_t start = 0, g = gcd(n, k); start < g; start++) {
        unsigned char t = b[start];
        size_t i = start;
        for (;;) {
            size_t next = i + k >= n ? i + k - n : i + k;
            if (next == start) break;
            b[i] = b[next];
            i = next;
        }
        b[i] = t;
    }
}

struct ring { unsigned char data[16]; size_t head, len; };

static size_t ring_write(struct ring *r, const unsigned char *src, size_t n) {
    if (n > sizeof r->data - r->len) n = sizeof r->data - r->len;
    size_t tail = (r->head + r->len) % sizeof r->data, first = sizeof r->data - tail;
    if (first > n) first = n;
    memcpy(r->data + tail, src, first);
    memcpy(r->data, src + first, n - first);
    r->len += n;
    return n;
}

static size_t ring_read(struct ring *r, unsigned char *dst, size_t n) {
    if (n > r->len) n = r->len;
    size_t first = sizeof r->data - r->head;
    if (first > n) first = n;
    memcpy(dst, r->data + r->head, first);
    memcpy(dst + first, r->data, n - first);
    r->head = (r->head + n) % sizeof r->data;
    r->len -= n;
    return n;
}

int main(void) {
    unsigned char a[48], b[48], c[48], src[200], dst[200];
    volatile size_t vk = 5;
    char s[] = "abcdefghij";
    memset(a, 0, sizeof a);
    rotate_left_memmove((unsigned char *)s, 10, vk);
    CHECK(strcmp(s, "fghijabcde") == 0);
    rotate_left_cycles((unsigned char *)s, 10, 13);
    CHECK(strcmp(s, "ijabcdefgh") == 0);
    rotate_left_reverse((unsigned char *)s, 10, 12);
    CHECK(strcmp(s, "abcdefghij") == 0);
    for (size_t n = 1; n <= 48; n += 7)
        for (size_t k = 0; k < 2 * n; k += 3) {
            for (size_t i = 0; i < n; i++) a[i] = b[i] = c[i] = (unsigned char)(i * 37 + n);
            rotate_left_memmove(a, n, k);
            rotate_left_reverse(b, n, k);
            rotate_left_cycles(c, n, k);
            CHECK(memcmp(a, b, n) == 0 && memcmp(a, c, n) == 0 && a[0] == (unsigned char)((k % n) * 37 + n));
        }
    struct ring r = { { 0 }, 0, 0 };
    for (int i = 0; i < 200; i++) src[i] = (unsigned char)(i ^ 0x5a);
    size_t in = 0, out = 0, step = 0;
    while (out < 200) {
        in += ring_write(&r, src + in, (step * 7 + 3) % 11 < 200 - in ? (step * 7 + 3) % 11 : 200 - in);
        out += ring_read(&r, dst + out, (step * 5 + 1) % 9);
        step++;
        CHECK(step < 1000);
    }
    CHECK(memcmp(src, dst, 200) == 0 && r.len == 0);
    CHECK(step == 51 && r.head == 8);
    unsigned sum = (unsigned)step;
    for (int i = 0; i < 48; i++) sum = sum * 29u + a[i];
    printf("c_data_buffer_rotate: %u %zu\n", sum, r.head);
    return 0;
}
