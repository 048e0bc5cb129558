/*
 * fixed_point.c: a tiny arithmetic library with a Q16.16 fixed-point backend
 * and a double backend behind a struct of function pointers; both evaluate
 * sin(x) by range reduction plus an odd Taylor polynomial (Horner form).
 * Exercises: indirect calls through a const table (devirtualization, inlining),
 * 64-bit multiply/divide, int<->double conversions, and FP constant folding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t q16;
#define Q_ONE 65536
#define Q_PI 205887      /* round(pi * 2^16) */
#define Q_HALF_PI 102944 /* round(pi/2 * 2^16) */

static q16 q_from_double(double d) { return (q16)(d * Q_ONE + (d >= 0 ? 0.5 : -0.5)); }
static double q_to_double(q16 q) { return (double)q / Q_ONE; }
static q16 q_mul(q16 a, q16 b) { return (q16)(((int64_t)a * b) / Q_ONE); }
static q16 q_div(q16 a, q16 b) { return (q16)(((int64_t)a * Q_ONE) / b); }

/* sin for |x| <= pi: fold into [-pi/2, pi/2], then x - x^3/3! + x^5/5! - x^7/7!. */
static q16 q_sin(q16 x)
{
    if (x > Q_HALF_PI)
        x = Q_PI - x;
    else if (x < -Q_HALF_PI)
        x = -Q_PI - x;
    q16 x2 = q_mul(x, x);
    q16 p = -13;               /* -2^16 / 7! */
    p = 546 + q_mul(x2, p);    /*  2^16 / 5! */
    p = -10923 + q_mul(x2, p); /* -2^16 / 3! */
    p = Q_ONE + q_mul(x2, p);
    return q_mul(x, p);
}

static double d_sin(double x)
{
    const double pi = 3.14159265358979323846;
    if (x > pi / 2)
        x = pi - x;
    else if (x < -pi / 2)
        x = -pi - x;
    double x2 = x * x;
    double p = 1.0 / 362880.0;
    p = -1.0 / 5040.0 + x2 * p;
    p = 1.0 / 120.0 + x2 * p;
    p = -1.0 / 6.0 + x2 * p;
    p = 1.0 + x2 * p;
    return x * p;
}

static double d_mul(double a, double b) { return a * b; }
static double d_div(double a, double b) { return a / b; }
static double fx_sin(double x) { return q_to_double(q_sin(q_from_double(x))); }
static double fx_mul(double a, double b) { return q_to_double(q_mul(q_from_double(a), q_from_double(b))); }
static double fx_div(double a, double b) { return q_to_double(q_div(q_from_double(a), q_from_double(b))); }

typedef struct {
    const char *name;
    double tolerance;
    double (*sin)(double);
    double (*mul)(double, double);
    double (*div)(double, double);
} Backend;

static const Backend backends[] = {
    {"double", 1e-5, d_sin, d_mul, d_div},
    {"q16.16", 5e-4, fx_sin, fx_mul, fx_div},
};

static double absd(double x) { return x < 0 ? -x : x; }

int main(void)
{
    static const double xs[] = {-3.0, -2.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.5, 3.0};
    static const double sins[] = {-0.1411200080598672, -0.9092974268256817,
                                  -0.479425538604203,  0.0,
                                  0.479425538604203,   0.8414709848078965,
                                  0.9974949866040544,  0.5984721441039565,
                                  0.1411200080598672};
    double sums[2] = {0.0, 0.0};

    for (int b = 0; b < 2; b++) {
        const Backend *be = &backends[b];
        if (be->mul(1.5, -2.25) != -3.375 || be->div(1.0, 4.0) != 0.25)
            abort();
        if (absd(be->div(1.0, 3.0) - 1.0 / 3.0) > 2e-5)
            abort();
        for (int i = 0; i < (int)(sizeof xs / sizeof xs[0]); i++)
            if (absd(be->sin(xs[i]) - sins[i]) > be->tolerance)
                abort();
        for (int k = 0; k <= 30; k++)
            sums[b] += be->sin(k / 10.0);
    }

    /* Exact integer checksum of the raw fixed-point results. */
    int64_t qsum = 0;
    for (int k = -30; k <= 30; k++)
        qsum += (int64_t)(k + 31) * q_sin(q_from_double(k / 10.0));
    if (qsum != 41022986 || q_div(Q_ONE, 3 * Q_ONE) != 21845)
        abort();

    printf("fixed_point: %s=%.6g %s=%.6g qsum=%lld\n", backends[0].name, sums[0],
           backends[1].name, sums[1], (long long)qsum);
    return 0;
}
