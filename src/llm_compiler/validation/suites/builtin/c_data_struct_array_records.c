// exercises: arrays of structs, insertion sort of structs by multiple keys, group-by aggregation, struct swap, index arrays
// Sorts an array of employee records by department then salary and computes per-department totals and maxima.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct rec { unsigned id; unsigned char dept; unsigned salary; short age; };

static const struct rec initial[8] = {
    { 101, 2, 5200, 31 }, { 102, 1, 4100, 45 }, { 103, 2, 6100, 28 }, { 104, 3, 3900, 52 },
    { 105, 1, 4100, 23 }, { 106, 3, 7000, 39 }, { 107, 2, 5200, 41 }, { 108, 1, 8800, 36 },
};

static int rec_less(const struct rec *a, const struct rec *b) {
    if (a->dept != b->dept) return a->dept < b->dept;
    if (a->salary != b->salary) return a->salary > b->salary;
    return a->id < b->id;
}

void sort_recs(struct rec *r, int n) {
    for (int i = 1; i < n; i++) {
        struct rec key = r[i];
        int j = i - 1;
        while (j >= 0 && rec_less(&key, &r[j])) { r[j + 1] = r[j]; j--; }
        r[j + 1] = key;
    }
}

struct agg { unsigned total; unsigned max_id; int count; int age_sum; };

void aggregate(const struct rec *r, int n, struct agg out[4]) {
    for (int d = 0; d < 4; d++) out[d] = (struct agg){ 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        struct agg *a = &out[r[i].dept];
        a->total += r[i].salary;
        a->count++;
        a->age_sum += r[i].age;
    }
    for (int d = 0; d < 4; d++) {
        unsigned best = 0;
        for (int i = 0; i < n; i++)
            if (r[i].dept == d && r[i].salary > best) { best = r[i].salary; out[d].max_id = r[i].id; }
    }
}

static int find_oldest(const struct rec *r, int n) {
    int k = 0;
    for (int i = 1; i < n; i++) if (r[i].age > r[k].age) k = i;
    return k;
}

int main(void) {
    struct rec r[8];
    struct agg a[4];
    volatile int vn = 8;
    int n = vn;
    memcpy(r, initial, sizeof r);
    sort_recs(r, n);
    static const unsigned want[8] = { 108, 102, 105, 103, 101, 107, 106, 104 };
    for (int i = 0; i < n; i++) CHECK(r[i].id == want[i]);
    CHECK(r[3].salary == 6100 && r[3].dept == 2);
    aggregate(r, n, a);
    CHECK(a[0].count == 0 && a[0].total == 0);
    CHECK(a[1].total == 17000 && a[1].count == 3 && a[1].max_id == 108);
    CHECK(a[2].total == 16500 && a[2].count == 3 && a[2].max_id == 103);
    CHECK(a[3].total == 10900 && a[3].age_sum == 91 && a[3].max_id == 106);
    CHECK(r[find_oldest(r, n)].id == 104);
    r[0].salary += 100;
    CHECK(initial[7].salary == 8800);
    unsigned sum = 0;
    for (int i = 0; i < n; i++) sum = sum * 33u + r[i].id * 7u + r[i].salary;
    for (int d = 0; d < 4; d++) sum ^= a[d].total << d;
    printf("c_data_struct_array_records: %u\n", sum);
    return 0;
}
