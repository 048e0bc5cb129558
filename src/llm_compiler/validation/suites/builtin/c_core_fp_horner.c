// exercises: Horner polynomial evaluation in double and float, polynomial derivative, Newton root finding, Taylor approximation vs exp, Chebyshev recurrence, exact dyadic arithmetic
// Computes polynomial values, derivatives and roots with Horner's scheme and checks exact and toleranced results.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* keep a * b + c as two roundings */
#endif

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* coefficients from highest degree down */
double horner(const double *c, int n, double x) {
    double r = 0.0;
    for (int i = 0; i < n; i++) r = r * x + c[i];
    return r;
}

/* value and first derivative in one pass */
__attribute__((noinline)) double horner_d(const double *c, int n, double x, double *deriv) {
    double p = 0.0, d = 0.0;
    for (int i = 0; i < n; i++) { d = d * x + p; p = p * x + c[i]; }
    *deriv = d;
    return p;
}

static float horner_f(const float *c, int n, float x) {
    float r = 0.0f;
    for (int i = 0; i < n; i++) r = r * x + c[i];
    return r;
}

static long long horner_i(const long long *c, int n, long long x) {
    long long r = 0;
    for (int i = 0; i < n; i++) r = r * x + c[i];
    return r;
}

static double chebyshev(int n, double x) {
    double t0 = 1.0, t1 = x;
    if (n == 0) return t0;
    for (int k = 1; k < n; k++) { double t2 = 2.0 * x * t1 - t0; t0 = t1; t1 = t2; }
    return t1;
}

int main(void) {
    static const double p[4] = {2, -6, 2, -1};
    volatile double x3 = 3.0;
    CHECK(horner(p, 4, x3) == 5.0);
    CHECK(horner(p, 4, 0.0) == -1.0);
    CHECK(horner(p, 4, -1.0) == -11.0);
    CHECK(horner(p, 4, 0.5) == -1.25);
    CHECK(horner(p, 4, 1.25) == -127.0 / 32.0);
    double d;
    CHECK(horner_d(p, 4, x3, &d) == 5.0 && d == 20.0); /* 6x^2 - 12x + 2 */

    static const double q[4] = {1, 0, -2, -5};
    double r = 2.0;
    for (int i = 0; i < 50; i++) { double v = horner_d(q, 4, r, &d); r -= v / d; }
    CHECK(fabs(r - 2.0945514815423265) < 1e-14);

    double taylor[13];
    double fact = 1.0;
    for (int k = 0; k <= 12; k++) { if (k > 0) fact *= k; taylor[12 - k] = 1.0 / fact; }
    volatile double half = 0.5;
    CHECK(horner(taylor, 13, 0.0) == 1.0);
    CHECK(fabs(horner(taylor, 13, half) - exp(half)) < 1e-13);
    double e1 = fabs(horner(taylor, 13, 1.0) - exp(1.0));
    CHECK(e1 > 1e-10 && e1 < 2e-10);

    static const double cheb[8] = {1.0, 0.5, -0.5, -1.0, -0.5, 0.5, 1.0, 0.5};
    for (int n = 0; n < 8; n++) CHECK(chebyshev(n, half) == cheb[n]);

    static const float pf[5] = {1.0f, -3.0f, 0.0f, 7.0f, -2.0f};
    static const long long pi[5] = {1, -3, 0, 7, -2};
    uint64_t checksum = 0;
    for (int x = -20; x <= 20; x++) {
        long long vi = horner_i(pi, 5, x);
        CHECK((float)vi == horner_f(pf, 5, (float)x));
        checksum = checksum * 131u + (uint64_t)vi;
    }
    CHECK(horner_i(pi, 5, 10) == 7068);
    printf("c_core_fp_horner: 0x%016llx %.6g\n", (unsigned long long)checksum, r);
    return 0;
}
