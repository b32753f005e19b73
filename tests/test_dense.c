/* Dense algebra (lib/solver/dense.c): Cholesky factor and solve, Gaussian
 * elimination with partial pivoting, over row-major arrays with a stride
 * wider than the matrix (the solver's arrays are nn wide).
 *
 * The matrices are chosen so that the factors and solutions are small
 * integers or simple fractions, computed by hand in the comments: EXACT
 * allows a few ulps of rounding on values of order 1-10. */
#include "solver/solver.h"
#include "testutil.h"

#include <math.h>

#define EXACT 1e-13
#define ST 5 /* stride: wider than every matrix below */

/* A = L Lᵀ with L = [[2,0,0],[1,3,0],[-1,2,1]]:
 * A = [[4,2,-2],[2,1+9,-1+6],[-2,-1+6,1+4+1]] = [[4,2,-2],[2,10,5],[-2,5,6]]. */
static void spd3(double *a) {
  static const double v[3][3] = {{4, 2, -2}, {2, 10, 5}, {-2, 5, 6}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      a[i * ST + j] = v[i][j];
}

START_TEST(cholesky_factor) {
  double a[ST * ST] = {0}, l[ST * ST] = {0};
  spd3(a);
  ck_assert_int_eq(dgp_cholesky(a, l, 3, ST), 0);
  static const double want[3][3] = {{2, 0, 0}, {1, 3, 0}, {-1, 2, 1}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j <= i; j++)
      ck_assert_double_eq_tol(l[i * ST + j], want[i][j], EXACT);
}
END_TEST

START_TEST(cholesky_in_place_and_solve) {
  /* A x = b with x = (1, -1, 2): b = A x = (4-2-4, 2-10+10, -2-5+12) = (-2, 2, 5) */
  double a[ST * ST] = {0};
  spd3(a);
  ck_assert_int_eq(dgp_cholesky(a, a, 3, ST), 0);
  double x[3] = {-2, 2, 5};
  dgp_cholesky_solve(a, 3, ST, x);
  ck_assert_double_eq_tol(x[0], 1.0, EXACT);
  ck_assert_double_eq_tol(x[1], -1.0, EXACT);
  ck_assert_double_eq_tol(x[2], 2.0, EXACT);
}
END_TEST

START_TEST(cholesky_singular_column) {
  /* [[1,1],[1,1]]: the second pivot is 1 - 1 = 0, reported as -1 - 1 */
  double a[ST * ST] = {0}, l[ST * ST] = {0};
  a[0] = a[1] = a[ST] = a[ST + 1] = 1.0;
  ck_assert_int_eq(dgp_cholesky(a, l, 2, ST), -2);
  /* a pivot below DGP_PIVOT_EPS of the diagonal's scale counts as zero */
  a[ST + 1] = 1.0 + 1e-12;
  ck_assert_int_eq(dgp_cholesky(a, l, 2, ST), -2);
  a[ST + 1] = 1.0 + 1e-6;
  ck_assert_int_eq(dgp_cholesky(a, l, 2, ST), 0);
  ck_assert_double_eq_tol(l[ST + 1], sqrt(1e-6), 1e-12);
}
END_TEST

START_TEST(solve_dense_pivoting) {
  /* [[0,2,1],[1,1,0],[3,0,1]] x = b needs a row swap (zero first pivot).
   * With x = (1, 2, -1): b = (0+4-1, 1+2, 3-1) = (3, 3, 2). */
  double s[ST * ST] = {0};
  static const double v[3][3] = {{0, 2, 1}, {1, 1, 0}, {3, 0, 1}};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      s[i * ST + j] = v[i][j];
  double x[3] = {3, 3, 2};
  ck_assert_int_eq(dgp_solve_dense(s, x, 3, ST), 0);
  ck_assert_double_eq_tol(x[0], 1.0, EXACT);
  ck_assert_double_eq_tol(x[1], 2.0, EXACT);
  ck_assert_double_eq_tol(x[2], -1.0, EXACT);
}
END_TEST

START_TEST(solve_dense_singular) {
  /* rows 1 and 2 equal: singular */
  double s[ST * ST] = {0};
  s[0] = 1;
  s[1] = 2;
  s[ST] = 1;
  s[ST + 1] = 2;
  double x[2] = {1, 1};
  ck_assert_int_eq(dgp_solve_dense(s, x, 2, ST), -1);
}
END_TEST

START_TEST(dot_product) {
  const double a[4] = {1, -2, 3, 0.5}, b[4] = {4, 5, -6, 8};
  /* 4 - 10 - 18 + 4 = -20 */
  ck_assert_double_eq(dgp_dot(a, b, 4), -20.0);
  ck_assert_double_eq(dgp_dot(a, b, 0), 0.0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dense");
  TCase *c = tcase_create("cholesky");
  tcase_add_test(c, cholesky_factor);
  tcase_add_test(c, cholesky_in_place_and_solve);
  tcase_add_test(c, cholesky_singular_column);
  suite_add_tcase(s, c);
  TCase *g = tcase_create("gauss");
  tcase_add_test(g, solve_dense_pivoting);
  tcase_add_test(g, solve_dense_singular);
  tcase_add_test(g, dot_product);
  suite_add_tcase(s, g);
  return s;
}

int main(void) { return dg_test_run(suite()); }
