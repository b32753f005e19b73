/* Lookup tables: linear (1-D) and bilinear (2-D) interpolation over strictly
 * increasing breakpoints, clamped to the end values outside the range.
 *
 * For x[i] <= u < x[i+1], with w = (u - x[i]) / (x[i+1] - x[i]) in [0, 1):
 *   1-D  f = y[i] + w (y[i+1] - y[i])
 *   2-D  f = lerp(lerp(z00, z01, wx), lerp(z10, z11, wx), wy)
 * where z00 = z[iy*nx + ix], z01 = z[iy*nx + ix+1], z10 = z[(iy+1)*nx + ix]...
 * At a breakpoint w = 0, so the stored value comes back exactly.
 *
 * These run inside every RK4 substep: no allocation, a search over the
 * breakpoints (search()), no checks beyond the clamping. Parsed tables always have
 * valid shapes (params.c); an absent table (n = 0) evaluates to 0, a single
 * breakpoint to its value. NaN in gives NaN out, so the solver sees it. */
#include <drivegraph/block.h>

#include <stddef.h>

/* The interval of a clamped lookup: the value is v[i0] + w (v[i1] - v[i0]). */
typedef struct span {
  int i0, i1;
  double w;
} span;

/* Breakpoints a table may have for a linear search. */
#define SMALL_TABLE 8

/* The piece [x[lo], x[lo+1]) holding u, for x[0] <= u < x[n-1], by a
 * linear search over a small table (which a compiled unit, where n and x
 * are constants, unrolls into a compare or two: a torque curve of three
 * points) and a binary search over a larger one. Both find the same
 * piece; NaN gives the first piece or the last, and NaN out either way. */
static inline int search(const double *x, int n, double u) {
  if (n <= SMALL_TABLE) {
    int lo = 0;
    while (lo < n - 2 && u >= x[lo + 1])
      lo++;
    return lo;
  }
  int lo = 0, hi = n - 1; /* invariant: x[lo] <= u < x[hi] */
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (u < x[mid])
      hi = mid;
    else
      lo = mid;
  }
  return lo;
}

/* NaN fails both clamping tests and leaves the search with w = NaN. */
static inline span locate(const double *x, int n, double u) {
  if (n == 1 || u <= x[0])
    return (span){0, 0, 0.0};
  if (u >= x[n - 1])
    return (span){n - 1, n - 1, 0.0};
  int lo = search(x, n, u);
  return (span){lo, lo + 1, (u - x[lo]) / (x[lo + 1] - x[lo])};
}

static inline double lerp(double a, double b, double w) { return a + w * (b - a); }

double dg_table1d_eval(const dg_table1d *t, double x) {
  if (t->n <= 0)
    return 0.0;
  span s = locate(t->x, t->n, x);
  return lerp(t->y[s.i0], t->y[s.i1], s.w);
}

/* The piece [x[i], x[i+1]) holding u (0 <= i <= n - 2), for x[0] <= u <
 * x[n-1]: the hint's piece or a neighbour's, else a binary search. */
static inline int locate_near(const double *x, int n, double u, int h) {
  if (h >= 0 && h <= n - 2) {
    if (u >= x[h] && u < x[h + 1])
      return h;
    if (h + 2 <= n - 1 && u >= x[h + 1] && u < x[h + 2])
      return h + 1;
    if (h >= 1 && u >= x[h - 1] && u < x[h])
      return h - 1;
  }
  return search(x, n, u);
}

double dg_table1d_eval_hint(const dg_table1d *t, double x, int *hint, double *slope) {
  if (slope)
    *slope = 0.0;
  if (t->n <= 0)
    return 0.0;
  if (t->n == 1 || x < t->x[0])
    return t->y[0];
  if (x != x)
    return x; /* NaN in, NaN out (and no slope) */
  if (x >= t->x[t->n - 1])
    return t->y[t->n - 1];
  int i = locate_near(t->x, t->n, x, *hint);
  *hint = i;
  double dx = t->x[i + 1] - t->x[i], dy = t->y[i + 1] - t->y[i];
  if (slope)
    *slope = dy / dx;
  return lerp(t->y[i], t->y[i + 1], (x - t->x[i]) / dx);
}

double dg_table2d_eval(const dg_table2d *t, double x, double y) {
  if (t->nx <= 0 || t->ny <= 0)
    return 0.0;
  span sx = locate(t->x, t->nx, x);
  span sy = locate(t->y, t->ny, y);
  const double *r0 = t->z + (size_t)sy.i0 * (size_t)t->nx;
  const double *r1 = t->z + (size_t)sy.i1 * (size_t)t->nx;
  return lerp(lerp(r0[sx.i0], r0[sx.i1], sx.w), lerp(r1[sx.i0], r1[sx.i1], sx.w), sy.w);
}
