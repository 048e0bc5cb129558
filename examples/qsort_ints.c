/*
 * qsort_ints.c: sorts 1000 pseudo-random ints from a fixed-seed LCG with a
 * hand-written recursive quicksort that falls back to insertion sort on small
 * ranges, then checks sortedness, the sum and a position-weighted checksum.
 * Exercises: recursion (tail-call elimination), data-dependent loops and
 * branches, swaps through pointers, and inlining of small helpers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 1000
#define CUTOFF 12

static uint32_t lcg_state = 20240601u;

static int lcg_next(void)
{
    lcg_state = lcg_state * 1103515245u + 12345u;
    return (int)((lcg_state >> 16) & 0x7FFFu) % 10000 - 5000;
}

static void swap_ints(int *x, int *y)
{
    int t = *x;
    *x = *y;
    *y = t;
}

static void insertion_sort(int *a, int lo, int hi)
{
    for (int i = lo + 1; i <= hi; i++) {
        int v = a[i];
        int j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}

/* Median-of-three pivot, Hoare-style partition. */
static void quick_sort(int *a, int lo, int hi)
{
    while (hi - lo + 1 > CUTOFF) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] < a[lo])
            swap_ints(&a[mid], &a[lo]);
        if (a[hi] < a[lo])
            swap_ints(&a[hi], &a[lo]);
        if (a[hi] < a[mid])
            swap_ints(&a[hi], &a[mid]);
        int pivot = a[mid];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                swap_ints(&a[i], &a[j]);
                i++;
                j--;
            }
        }
        /* Recurse into the smaller half, loop on the larger one. */
        if (j - lo < hi - i) {
            quick_sort(a, lo, j);
            lo = i;
        } else {
            quick_sort(a, i, hi);
            hi = j;
        }
    }
    insertion_sort(a, lo, hi);
}

static int is_sorted(const int *a, int n)
{
    for (int i = 1; i < n; i++)
        if (a[i - 1] > a[i])
            return 0;
    return 1;
}

int main(void)
{
    static int a[COUNT];
    long long sum_before = 0, sum_after = 0, weighted = 0;

    for (int i = 0; i < COUNT; i++) {
        a[i] = lcg_next();
        sum_before += a[i];
    }
    if (sum_before != -354522LL)
        abort();

    quick_sort(a, 0, COUNT - 1);

    if (!is_sorted(a, COUNT))
        abort();
    for (int i = 0; i < COUNT; i++) {
        sum_after += a[i];
        weighted += (long long)(i + 1) * a[i];
    }
    if (sum_after != sum_before || weighted != 671472238LL)
        abort();
    if (a[0] != -4991 || a[COUNT / 2 - 1] != -578 || a[COUNT - 1] != 4998)
        abort();

    printf("qsort_ints: min=%d median=%d max=%d weighted=%lld\n",
           a[0], a[COUNT / 2 - 1], a[COUNT - 1], weighted);
    return 0;
}
