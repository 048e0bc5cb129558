// exercises: recursive binary search tree on a static node array with index links, recursive insert/search/height/size, in-order traversal, range counting, minimum depth, leaf counting, recursive mirror
// Computes properties of a BST built from 500 LCG keys and checks them against an independently computed tree.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)
#define MAXN 512
#define NIL (-1)

static struct { int key, left, right; } t[MAXN];
static int used;

static int insert(int n, int key) {
    if (n == NIL) {
        if (used >= MAXN) abort();
        t[used].key = key; t[used].left = t[used].right = NIL;
        return used++;
    }
    if (key < t[n].key) t[n].left = insert(t[n].left, key);
    else if (key > t[n].key) t[n].right = insert(t[n].right, key);
    return n;
}

int contains(int n, int key) {
    if (n == NIL) return 0;
    if (key == t[n].key) return 1;
    return contains(key < t[n].key ? t[n].left : t[n].right, key);
}

static int height(int n) {
    if (n == NIL) return 0;
    int l = height(t[n].left), r = height(t[n].right);
    return 1 + (l > r ? l : r);
}

static int size(int n) { return n == NIL ? 0 : 1 + size(t[n].left) + size(t[n].right); }
static long long sum(int n) { return n == NIL ? 0 : t[n].key + sum(t[n].left) + sum(t[n].right); }

static int count_range(int n, int lo, int hi) {
    if (n == NIL) return 0;
    if (t[n].key < lo) return count_range(t[n].right, lo, hi);
    if (t[n].key > hi) return count_range(t[n].left, lo, hi);
    return 1 + count_range(t[n].left, lo, hi) + count_range(t[n].right, lo, hi);
}

static int min_depth(int n) {
    if (n == NIL) return 0;
    if (t[n].left == NIL) return 1 + min_depth(t[n].right);
    if (t[n].right == NIL) return 1 + min_depth(t[n].left);
    int l = min_depth(t[n].left), r = min_depth(t[n].right);
    return 1 + (l < r ? l : r);
}

static int leaves(int n) {
    if (n == NIL) return 0;
    if (t[n].left == NIL && t[n].right == NIL) return 1;
    return leaves(t[n].left) + leaves(t[n].right);
}

__attribute__((noinline)) static void inorder(int n, int *out, int *pos) {
    if (n == NIL) return;
    inorder(t[n].left, out, pos);
    out[(*pos)++] = t[n].key;
    inorder(t[n].right, out, pos);
}

static void mirror(int n) {
    if (n == NIL) return;
    int tmp = t[n].left; t[n].left = t[n].right; t[n].right = tmp;
    mirror(t[n].left); mirror(t[n].right);
}

int main(void) {
    int root = NIL;
    uint32_t s = 7u;
    volatile int count = 500;
    for (int i = 0; i < count; i++) {
        s = (s * 1103515245u + 12345u) & 0x7fffffffu;
        root = insert(root, (int)(s % 10000u));
    }
    CHECK(t[root].key == 8116);
    CHECK(size(root) == 487 && used == 487);
    CHECK(height(root) == 22);
    CHECK(sum(root) == 2434374);
    CHECK(count_range(root, 2500, 7499) == 256);
    CHECK(min_depth(root) == 5 && leaves(root) == 153);
    CHECK(contains(root, 205) && contains(root, 8) && contains(root, 9976) && !contains(root, 10000));
    static int sorted[MAXN];
    int pos = 0;
    inorder(root, sorted, &pos);
    CHECK(pos == 487 && sorted[0] == 8 && sorted[486] == 9976 && sorted[100] == 2082);
    for (int i = 1; i < pos; i++) CHECK(sorted[i - 1] < sorted[i]);
    mirror(root);
    pos = 0;
    inorder(root, sorted, &pos);
    CHECK(sorted[0] == 9976 && height(root) == 22 && leaves(root) == 153);
    uint32_t checksum = 0;
    for (int i = 0; i < pos; i++) checksum = checksum * 31u + (uint32_t)sorted[i];
    printf("c_core_rec_tree: %u\n", checksum);
    return 0;
}
