// exercises: pointer-to-pointer, indirect list unlinking, out-parameters of pointer type, jagged arrays via malloc, arrays of string pointers
// Builds Pascal's triangle as a malloc'd jagged array, unlinks list nodes through pointer-to-pointer and parses numbers via end pointers.
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct cell { int key; struct cell *next; };

/* Unlinks every cell whose key is divisible by d; works for head and interior cells alike. */
int unlink_div(struct cell **pp, int d) {
    int removed = 0;
    while (*pp) {
        if ((*pp)->key % d == 0) { *pp = (*pp)->next; removed++; }
        else pp = &(*pp)->next;
    }
    return removed;
}

long **pascal(int rows) {
    long **t = malloc((size_t)rows * sizeof *t);
    if (!t) abort();
    for (int r = 0; r < rows; r++) {
        t[r] = malloc((size_t)(r + 1) * sizeof **t);
        if (!t[r]) abort();
        t[r][0] = t[r][r] = 1;
        for (int c = 1; c < r; c++) t[r][c] = t[r - 1][c - 1] + t[r - 1][c];
    }
    return t;
}

static void free_rows(long **t, int rows) {
    for (int r = 0; r < rows; r++) free(t[r]);
    free(t);
}

/* Parses an unsigned decimal at *s, advancing *s past it and any following spaces. */
static int next_num(const char **s, unsigned *out) {
    const char *p = *s;
    if (*p < '0' || *p > '9') return 0;
    unsigned v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10u + (unsigned)(*p++ - '0');
    while (*p == ' ') p++;
    *out = v; *s = p;
    return 1;
}

static void swap_ptrs(const char **a, const char **b) { const char *t = *a; *a = *b; *b = t; }

int main(void) {
    volatile int vrows = 21;
    int rows = vrows;
    long **t = pascal(rows);
    CHECK(t[4][2] == 6 && t[10][5] == 252 && t[20][10] == 184756);
    long rowsum = 0;
    for (int c = 0; c <= 20; c++) rowsum += t[20][c];
    CHECK(rowsum == 1048576);
    struct cell cells[10], *head = &cells[0];
    for (int i = 0; i < 10; i++) { cells[i].key = i * 3; cells[i].next = i < 9 ? &cells[i + 1] : NULL; }
    CHECK(unlink_div(&head, 2) == 5);
    CHECK(head == &cells[1] && head->next == &cells[3] && cells[7].next == &cells[9]);
    CHECK(unlink_div(&head, 9) == 2);
    CHECK(head == &cells[1] && head->next == &cells[5] && cells[5].next == &cells[7] && cells[7].next == NULL);
    const char *text = "12 345  6789 x", *cur = text;
    unsigned v, total = 0;
    int count = 0;
    while (next_num(&cur, &v)) { total += v; count++; }
    CHECK(count == 3 && total == 7146 && *cur == 'x' && cur - text == 13);
    const char *names[4] = { "delta", "alpha", "charlie", "bravo" };
    const char **pn = names;
    swap_ptrs(&pn[0], &pn[1]);
    swap_ptrs(pn + 2, pn + 3);
    CHECK(names[0][0] == 'a' && names[1][0] == 'd' && names[2][0] == 'b' && names[3][0] == 'c');
    unsigned sum = total;
    for (int r = 0; r < rows; r++) sum = sum * 3u + (unsigned long)t[r][r / 2] % 1000u;
    for (struct cell *p = head; p; p = p->next) sum = sum * 5u + (unsigned)p->key;
    free_rows(t, rows);
    printf("c_data_ptr_to_ptr: %u\n", sum);
    return 0;
}
