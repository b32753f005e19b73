/* The dense-algebra room: Cholesky factor and solve, Gaussian elimination
 * with partial pivoting, and the dot product, over row-major arrays with an
 * explicit stride (the solver's arrays are nn wide). */
#include "solver.h"

#include <math.h>

/* In-place Cholesky of the leading n×n of a (lower triangle used) into l.
 * Returns -1 - j for the first column whose pivot is not positive. */
int dgp_cholesky(const double *a, double *l, int n, size_t stride) {
  double scale = 0.0;
  for (int j = 0; j < n; j++)
    scale = fmax(scale, a[(size_t)j * stride + (size_t)j]);
  for (int j = 0; j < n; j++) {
    for (int i = j; i < n; i++) {
      double sum = a[(size_t)i * stride + (size_t)j];
      for (int k = 0; k < j; k++)
        sum -= l[(size_t)i * stride + (size_t)k] * l[(size_t)j * stride + (size_t)k];
      if (i == j) {
        if (!(sum > DGP_PIVOT_EPS * scale))
          return -1 - j;
        l[(size_t)j * stride + (size_t)j] = sqrt(sum);
      } else {
        l[(size_t)i * stride + (size_t)j] = sum / l[(size_t)j * stride + (size_t)j];
      }
    }
  }
  return 0;
}

/* Solves L Lᵀ x = b in place. */
void dgp_cholesky_solve(const double *l, int n, size_t stride, double *x) {
  for (int i = 0; i < n; i++) {
    double sum = x[i];
    const double *li = l + (size_t)i * stride;
    for (int k = 0; k < i; k++)
      sum -= li[k] * x[k];
    x[i] = sum / li[i];
  }
  for (int i = n - 1; i >= 0; i--) {
    double sum = x[i];
    for (int k = i + 1; k < n; k++)
      sum -= l[(size_t)k * stride + (size_t)i] * x[k];
    x[i] = sum / l[(size_t)i * stride + (size_t)i];
  }
}

/* Solves S x = rhs (m × m, stride st) in place by Gaussian elimination with
 * partial pivoting; -1 when singular. */
int dgp_solve_dense(double *S, double *x, int m, size_t st) {
  for (int c = 0; c < m; c++) {
    int p = c;
    for (int r = c + 1; r < m; r++)
      if (fabs(S[(size_t)r * st + (size_t)c]) > fabs(S[(size_t)p * st + (size_t)c]))
        p = r;
    if (!(fabs(S[(size_t)p * st + (size_t)c]) > 1e-300))
      return -1;
    if (p != c) {
      for (int k = 0; k < m; k++) {
        double tmp = S[(size_t)c * st + (size_t)k];
        S[(size_t)c * st + (size_t)k] = S[(size_t)p * st + (size_t)k];
        S[(size_t)p * st + (size_t)k] = tmp;
      }
      double tmp = x[c];
      x[c] = x[p];
      x[p] = tmp;
    }
    for (int r = c + 1; r < m; r++) {
      double f = S[(size_t)r * st + (size_t)c] / S[(size_t)c * st + (size_t)c];
      if (f == 0.0)
        continue;
      for (int k = c; k < m; k++)
        S[(size_t)r * st + (size_t)k] -= f * S[(size_t)c * st + (size_t)k];
      x[r] -= f * x[c];
    }
  }
  for (int c = m - 1; c >= 0; c--) {
    double v = x[c];
    for (int k = c + 1; k < m; k++)
      v -= S[(size_t)c * st + (size_t)k] * x[k];
    x[c] = v / S[(size_t)c * st + (size_t)c];
  }
  return 0;
}
