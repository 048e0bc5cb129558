// exercises: isnan/isinf/isfinite/isnormal/fpclassify, signbit and copysign with signed zero, fmin/fmax with NaN operands, unordered comparisons, infinity arithmetic, NaN-aware reductions
// Computes classifications and NaN-aware min/max/sum reductions over arrays containing NaN, infinities and signed zeros.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int classify(double x) {
    switch (fpclassify(x)) {
    case FP_NAN: return 0;
    case FP_INFINITE: return 1;
    case FP_ZERO: return 2;
    case FP_SUBNORMAL: return 3;
    default: return 4;
    }
}

__attribute__((noinline)) double nan_max(const double *x, int n) {
    double m = NAN;
    for (int i = 0; i < n; i++) m = fmax(m, x[i]);
    return m;
}

static double finite_sum(const double *x, int n, int *skipped) {
    double s = 0.0;
    *skipped = 0;
    for (int i = 0; i < n; i++) {
        if (isfinite(x[i])) s += x[i];
        else (*skipped)++;
    }
    return s;
}

static int count_unordered(const double *x, int n) {
    int c = 0;
    for (int i = 0; i < n; i++) c += !(x[i] < 1.0) && !(x[i] >= 1.0);
    return c;
}

int main(void) {
    volatile double vinf = INFINITY, vnan = NAN, nz = -0.0;
    double arr[10] = {1.5, NAN, -2.0, INFINITY, 0.0, -0.0, -INFINITY, 4.25, DBL_MIN / 4.0, NAN};
    arr[1] = vnan;
    static const int classes[10] = {4, 0, 4, 1, 2, 2, 1, 4, 3, 0};
    unsigned checksum = 0;
    for (int i = 0; i < 10; i++) {
        CHECK(classify(arr[i]) == classes[i]);
        CHECK((isnan(arr[i]) != 0) == (arr[i] != arr[i]));
        checksum = checksum * 7u + (unsigned)classify(arr[i]) + (signbit(arr[i]) ? 100u : 0u);
    }
    CHECK(isnan(vinf - vinf));
    CHECK(isinf(vinf * 2.0) && !signbit(vinf * 2.0));
    CHECK(isinf(-vinf) && signbit(-vinf));
    CHECK(1.0 / vinf == 0.0);
    CHECK(nz == 0.0 && signbit(nz) && !signbit(0.0));
    CHECK(signbit(copysign(3.0, nz)) && copysign(3.0, nz) == -3.0);
    CHECK(fmin(vnan, 2.0) == 2.0 && fmax(2.0, vnan) == 2.0);
    CHECK(isnan(fmax(vnan, vnan)));
    CHECK(fmin(-vinf, 5.0) == -vinf);
    CHECK(!(vnan < 0.0) && !(vnan > 0.0) && !(vnan == vnan));
    CHECK(isnormal(1.0) && !isnormal(DBL_MIN / 4.0) && !isnormal(0.0));
    CHECK(isinf(nan_max(arr, 10)));
    CHECK(nan_max(arr, 3) == 1.5);
    CHECK(isnan(nan_max(arr + 1, 1)));
    int skipped;
    double s = finite_sum(arr, 10, &skipped);
    CHECK(skipped == 4);
    CHECK(s == 1.5 - 2.0 + 4.25 + DBL_MIN / 4.0);
    CHECK(count_unordered(arr, 10) == 2);
    float fn = (float)vnan;
    CHECK(isnan(fn) && isinf((float)vinf) && isfinite(FLT_MAX));
    printf("c_core_fp_nan_inf: %u %d\n", checksum, skipped);
    return 0;
}
