// exercises: singly linked lists in a static node pool, free list allocation and reuse, sorted insert, deletion, in-place reversal, merging
// Maintains sorted linked lists allocated from a fixed static pool and checks contents after inserts, deletes, reversal and merge.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct node { int val; struct node *next; };

#define POOL 32
static struct node pool[POOL];
static struct node *free_list;
static int live;

static void pool_init(void) {
    for (int i = 0; i < POOL - 1; i++) pool[i].next = &pool[i + 1];
    pool[POOL - 1].next = NULL;
    free_list = &pool[0];
    live = 0;
}

static struct node *node_alloc(int v) {
    struct node *n = free_list;
    if (!n) abort();
    free_list = n->next;
    n->val = v; n->next = NULL; live++;
    return n;
}

static void node_free(struct node *n) { n->next = free_list; free_list = n; live--; }

struct node *insert_sorted(struct node *head, int v) {
    struct node *n = node_alloc(v);
    if (!head || v < head->val) { n->next = head; return n; }
    struct node *p = head;
    while (p->next && p->next->val <= v) p = p->next;
    n->next = p->next; p->next = n;
    return head;
}

struct node *remove_all(struct node *head, int v) {
    struct node dummy = { 0, head }, *p = &dummy;
    while (p->next) {
        if (p->next->val == v) { struct node *d = p->next; p->next = d->next; node_free(d); }
        else p = p->next;
    }
    return dummy.next;
}

static struct node *reverse(struct node *h) {
    struct node *prev = NULL;
    while (h) { struct node *nx = h->next; h->next = prev; prev = h; h = nx; }
    return prev;
}

static struct node *merge(struct node *a, struct node *b) {
    struct node dummy = { 0, NULL }, *t = &dummy;
    while (a && b) {
        if (b->val < a->val) { t->next = b; b = b->next; } else { t->next = a; a = a->next; }
        t = t->next;
    }
    t->next = a ? a : b;
    return dummy.next;
}

static int to_array(const struct node *h, int *out) {
    int n = 0;
    for (; h; h = h->next) out[n++] = h->val;
    return n;
}

int main(void) {
    int out[POOL];
    volatile int vdel = 4;
    pool_init();
    struct node *a = NULL, *b = NULL;
    static const int va[] = { 5, 1, 4, 4, 9, 2, 4 }, vb[] = { 3, 8, 0, 6, 10 };
    for (int i = 0; i < 7; i++) a = insert_sorted(a, va[i]);
    for (int i = 0; i < 5; i++) b = insert_sorted(b, vb[i]);
    CHECK(live == 12);
    CHECK(to_array(a, out) == 7 && out[0] == 1 && out[3] == 4 && out[6] == 9);
    a = remove_all(a, vdel);
    CHECK(live == 9 && to_array(a, out) == 4 && out[2] == 5);
    struct node *first_b = b;
    a = insert_sorted(a, 7); /* reuses the most recently freed node */
    CHECK(free_list == &pool[3] && live == 10);
    struct node *m = merge(a, b);
    CHECK(m == first_b);
    static const int wm[10] = { 0, 1, 2, 3, 5, 6, 7, 8, 9, 10 };
    CHECK(to_array(m, out) == 10);
    for (int i = 0; i < 10; i++) CHECK(out[i] == wm[i]);
    m = reverse(m);
    CHECK(to_array(m, out) == 10 && out[0] == 10 && out[9] == 0);
    unsigned sum = 0;
    for (struct node *p = m; p; p = p->next) sum = sum * 23u + (unsigned)p->val + (unsigned)(p - pool);
    while (m) { struct node *nx = m->next; node_free(m); m = nx; }
    CHECK(live == 0);
    printf("c_data_static_pool_list: %u\n", sum);
    return 0;
}
