/* Lookup tables (lib/table.c): linear and bilinear interpolation, clamping.
 *
 * The breakpoints and values are chosen so that every expected number is
 * exact in binary floating point (halves, quarters, small integers): the
 * interpolation then has no rounding at all and EXACT is only a guard.
 * Where a weight is not a dyadic fraction, ROUNDING allows a few ulps. */
#include "internal.h"
#include "testutil.h"

#include <math.h>

#define EXACT 1e-12
#define ROUNDING 1e-9

/* ---- 1-D ----------------------------------------------------------------- */

static const double x3[] = {0.0, 1.0, 3.0};
static const double y3[] = {10.0, 20.0, 0.0};
static const dg_table1d t3 = {3, x3, y3};

/* Hand-computed: between (0,10) and (1,20) slope 10; between (1,20) and
 * (3,0) slope -10. Outside [0, 3] the end values hold. */
static const struct {
  double x, y;
} cases_1d[] = {
    {0.0, 10.0},  {1.0, 20.0},  {3.0, 0.0},  /* breakpoints */
    {0.5, 15.0},  {2.0, 10.0},               /* midpoints */
    {0.25, 12.5}, {2.5, 5.0},   {1.5, 15.0}, /* quarter points */
    {-1.0, 10.0}, {-1e9, 10.0},              /* clamped below */
    {3.5, 0.0},   {1e9, 0.0},                /* clamped above */
};

START_TEST(table1d_values) {
  double got = dg_table1d_eval(&t3, cases_1d[_i].x);
  ck_assert_double_eq_tol(got, cases_1d[_i].y, EXACT);
}
END_TEST

START_TEST(table1d_breakpoints_exact) {
  /* At a breakpoint the weight is exactly 0: the stored value comes back
   * bit for bit, whatever it is. */
  static const double x[] = {-2.0, 0.1, 0.7, 1.3, 9.0};
  static const double y[] = {0.123456789, -3.3, 1e-7, 42.42, 7.0 / 3.0};
  dg_table1d t = {5, x, y};
  for (int i = 0; i < 5; i++)
    ck_assert(dg_table1d_eval(&t, x[i]) == y[i]);
}
END_TEST

START_TEST(table1d_single_and_empty) {
  static const double x[] = {5.0};
  static const double y[] = {7.5};
  dg_table1d one = {1, x, y};
  ck_assert_double_eq_tol(dg_table1d_eval(&one, -100.0), 7.5, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&one, 5.0), 7.5, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&one, 100.0), 7.5, EXACT);
  dg_table1d none = {0, NULL, NULL};
  ck_assert_double_eq_tol(dg_table1d_eval(&none, 1.0), 0.0, EXACT);
}
END_TEST

START_TEST(table1d_two_points) {
  static const double x[] = {1000.0, 3000.0};
  static const double y[] = {100.0, 300.0};
  dg_table1d t = {2, x, y};
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 1500.0), 150.0, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 2000.0), 200.0, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 0.0), 100.0, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 9000.0), 300.0, EXACT);
}
END_TEST

START_TEST(table1d_large_binary_search) {
  /* y = x^2 on x = 0..999: the search must find the right interval
   * everywhere, including the first and the last one. */
  enum { N = 1000 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = i;
    y[i] = (double)i * i;
  }
  dg_table1d t = {N, x, y};
  for (int i = 0; i < N; i++)
    ck_assert_double_eq_tol(dg_table1d_eval(&t, x[i]), y[i], EXACT);
  for (int i = 0; i + 1 < N; i++) {
    double mid = (y[i] + y[i + 1]) / 2.0; /* chord midpoint */
    ck_assert_double_eq_tol(dg_table1d_eval(&t, i + 0.5), mid, EXACT);
  }
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 500.25), 250000.0 + 0.25 * 1001.0, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&t, -3.0), 0.0, EXACT);
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 5000.0), 998001.0, EXACT);
}
END_TEST

/* Every size from 2 to 12 breakpoints (the linear search up to 8, the
 * binary one above), uneven spacing: at each breakpoint the stored value
 * exactly, and between them the piece's own interpolation, computed here
 * by scanning every piece (bit for bit: the same formula on the same
 * piece); beyond the ends the end values, and NaN gives NaN. */
START_TEST(table1d_every_size) {
  for (int n = 2; n <= 12; n++) {
    double x[12], y[12];
    for (int i = 0; i < n; i++) {
      x[i] = i * i + 0.37 * i; /* uneven */
      y[i] = 5.0 - 0.9 * i + (i % 3) * 1.7;
    }
    dg_table1d t = {n, x, y};
    for (int i = 0; i < n; i++)
      ck_assert_double_eq_tol(dg_table1d_eval(&t, x[i]), y[i], EXACT);
    for (int i = 0; i + 1 < n; i++)
      for (int k = 1; k < 8; k++) {
        double u = x[i] + (x[i + 1] - x[i]) * k / 8.0;
        int p = 0; /* the piece holding u, by a scan of every piece */
        for (int j = 0; j + 1 < n; j++)
          if (x[j] <= u && u < x[j + 1])
            p = j;
        double w = (u - x[p]) / (x[p + 1] - x[p]);
        double want = y[p] + w * (y[p + 1] - y[p]);
        double got = dg_table1d_eval(&t, u);
        ck_assert_msg(got == want, "n = %d, u = %.17g: %.17g, want %.17g", n, u, got, want);
      }
    ck_assert_double_eq_tol(dg_table1d_eval(&t, x[0] - 1.0), y[0], EXACT);
    ck_assert_double_eq_tol(dg_table1d_eval(&t, x[n - 1] + 1.0), y[n - 1], EXACT);
    ck_assert(isnan(dg_table1d_eval(&t, NAN)));
  }
}
END_TEST

START_TEST(table1d_uneven_spacing) {
  /* Non-dyadic weight: (0.3 - 0.1) / (0.7 - 0.1) = 1/3 up to rounding. */
  static const double x[] = {0.1, 0.7};
  static const double y[] = {0.0, 3.0};
  dg_table1d t = {2, x, y};
  ck_assert_double_eq_tol(dg_table1d_eval(&t, 0.3), 1.0, ROUNDING);
}
END_TEST

START_TEST(table1d_nan_propagates) { ck_assert(isnan(dg_table1d_eval(&t3, NAN))); }
END_TEST

/* The hinted lookup returns dg_table1d_eval's value bit for bit whatever
 * the hint (right, a neighbour, far off, out of range), sets the hint to
 * the piece found, and gives the piece's slope: on y = x² over x = 0..99
 * the piece [i, i+1] has slope 2i + 1 exactly; 0 outside the table; at a
 * breakpoint the piece that starts there; at x[0] the first piece. */
START_TEST(table1d_hint_same_values) {
  enum { N = 100 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = i;
    y[i] = (double)i * i;
  }
  dg_table1d t = {N, x, y};
  static const int hints[] = {0, 1, 37, 50, 97, 98, 99, -5, 1000};
  for (double u = -2.0; u <= 101.0; u += 0.125) {
    for (size_t h = 0; h < sizeof hints / sizeof hints[0]; h++) {
      int hint = hints[h];
      double slope = -1.0;
      double got = dg_table1d_eval_hint(&t, u, &hint, &slope);
      ck_assert_msg(got == dg_table1d_eval(&t, u), "u %g hint %d: %.17g", u, hints[h], got);
      if (u < 0.0 || u >= N - 1) {
        ck_assert(slope == 0.0);
      } else {
        int i = (int)floor(u);
        ck_assert_int_eq(hint, i);
        ck_assert(slope == 2.0 * i + 1.0);
      }
    }
  }
  int hint = 3;
  double slope = 1.0;
  ck_assert(isnan(dg_table1d_eval_hint(&t, NAN, &hint, &slope)));
  ck_assert(slope == 0.0);
  ck_assert(dg_table1d_eval_hint(&t3, 3.0, &hint, &slope) == 0.0 && slope == 0.0);
  static const double x1[] = {5.0}, y1[] = {7.5};
  dg_table1d one = {1, x1, y1};
  ck_assert(dg_table1d_eval_hint(&one, 6.0, &hint, &slope) == 7.5 && slope == 0.0);
  dg_table1d none = {0, NULL, NULL};
  ck_assert(dg_table1d_eval_hint(&none, 6.0, &hint, NULL) == 0.0);
}
END_TEST

/* ---- 2-D ----------------------------------------------------------------- */

/* The engine map of DESIGN.md: rows are throttle breakpoints. */
static const double rpm[] = {1000, 2500, 4000, 5500, 6500};
static const double thr[] = {0.0, 0.5, 1.0};
static const double torque[] = {
    -15, -20, -25, -30, -35, /* throttle 0 */
    95,  150, 165, 150, 120, /* throttle 0.5 */
    180, 300, 330, 300, 250, /* throttle 1 */
};
static const dg_table2d map = {5, 3, rpm, thr, torque};

static const struct {
  double x, y, z;
} cases_2d[] = {
    /* grid points */
    {1000, 0.0, -15},
    {4000, 0.5, 165},
    {6500, 1.0, 250},
    {2500, 1.0, 300},
    /* cell centres = mean of the four corners */
    {1750, 0.25, (-15 - 20 + 95 + 150) / 4.0},   /* 52.5 */
    {3250, 0.75, (150 + 165 + 300 + 330) / 4.0}, /* 236.25 */
    {6000, 0.75, (150 + 120 + 300 + 250) / 4.0}, /* 205 */
    /* along an edge: 1-D interpolation of that row or column */
    {3250, 0.5, (150 + 165) / 2.0},
    {2500, 0.75, (150 + 300) / 2.0},
    /* wx = wy = 1/4 in cell (1,1): rows 150 + 15/4 = 153.75 and
     * 300 + 30/4 = 307.5, then 153.75 + (307.5 - 153.75) / 4 */
    {2875, 0.625, 192.1875},
    /* clamped in x, in y, and at the four corners */
    {500, 0.5, 95},
    {9000, 0.5, 120},
    {4000, -0.5, -25},
    {4000, 1.5, 330},
    {0, -1, -15},
    {0, 2, 180},
    {9000, -1, -35},
    {9000, 2, 250},
    /* clamped in x only, interpolated in y: (120 + 250) / 2 */
    {7000, 0.75, 185},
    /* interpolated in x on the clamped top row: (300 + 250) / 2 */
    {6000, 3.0, 275},
};

START_TEST(table2d_values) {
  double got = dg_table2d_eval(&map, cases_2d[_i].x, cases_2d[_i].y);
  ck_assert_double_eq_tol(got, cases_2d[_i].z, EXACT);
}
END_TEST

START_TEST(table2d_breakpoints_exact) {
  for (int iy = 0; iy < 3; iy++)
    for (int ix = 0; ix < 5; ix++)
      ck_assert(dg_table2d_eval(&map, rpm[ix], thr[iy]) == torque[iy * 5 + ix]);
}
END_TEST

START_TEST(table2d_bilinear_is_linear_on_lines) {
  /* On a line of constant throttle the map is piecewise linear in rpm:
   * the value at a quarter of a cell is the quarter of the difference. */
  double a = dg_table2d_eval(&map, 2500, 0.3);
  double b = dg_table2d_eval(&map, 4000, 0.3);
  double q = dg_table2d_eval(&map, 2875, 0.3);
  ck_assert_double_eq_tol(q, a + 0.25 * (b - a), ROUNDING);
}
END_TEST

START_TEST(table2d_degenerate_axes) {
  /* One row: the map is a 1-D curve in x for every y. */
  static const double x[] = {0.0, 2.0};
  static const double y1[] = {0.5};
  static const double z1[] = {4.0, 8.0};
  dg_table2d row = {2, 1, x, y1, z1};
  ck_assert_double_eq_tol(dg_table2d_eval(&row, 1.0, -7.0), 6.0, EXACT);
  ck_assert_double_eq_tol(dg_table2d_eval(&row, 1.0, 7.0), 6.0, EXACT);
  /* One column: a 1-D curve in y. */
  static const double x1[] = {3.0};
  static const double y[] = {0.0, 1.0};
  static const double zc[] = {-2.0, 2.0};
  dg_table2d col = {1, 2, x1, y, zc};
  ck_assert_double_eq_tol(dg_table2d_eval(&col, 100.0, 0.25), -1.0, EXACT);
  dg_table2d none = {0};
  ck_assert_double_eq_tol(dg_table2d_eval(&none, 1.0, 1.0), 0.0, EXACT);
}
END_TEST

START_TEST(table2d_nan_propagates) {
  ck_assert(isnan(dg_table2d_eval(&map, NAN, 0.5)));
  ck_assert(isnan(dg_table2d_eval(&map, 3000, NAN)));
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("table");
  TCase *t1 = tcase_create("table1d");
  tcase_add_loop_test(t1, table1d_values, 0, (int)(sizeof cases_1d / sizeof cases_1d[0]));
  tcase_add_test(t1, table1d_breakpoints_exact);
  tcase_add_test(t1, table1d_single_and_empty);
  tcase_add_test(t1, table1d_two_points);
  tcase_add_test(t1, table1d_large_binary_search);
  tcase_add_test(t1, table1d_every_size);
  tcase_add_test(t1, table1d_uneven_spacing);
  tcase_add_test(t1, table1d_nan_propagates);
  tcase_add_test(t1, table1d_hint_same_values);
  suite_add_tcase(s, t1);
  TCase *t2 = tcase_create("table2d");
  tcase_add_loop_test(t2, table2d_values, 0, (int)(sizeof cases_2d / sizeof cases_2d[0]));
  tcase_add_test(t2, table2d_breakpoints_exact);
  tcase_add_test(t2, table2d_bilinear_is_linear_on_lines);
  tcase_add_test(t2, table2d_degenerate_axes);
  tcase_add_test(t2, table2d_nan_propagates);
  suite_add_tcase(s, t2);
  return s;
}

int main(void) { return dg_test_run(suite()); }
