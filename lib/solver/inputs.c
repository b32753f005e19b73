/* The inputs room: schedules and callbacks evaluated inside the step, at
 * each substep's time, and the breakpoints that end a step's segments. */
#include "solver.h"

#include <float.h>
#include <math.h>

/* Value of a schedule on piece k at t: linear on [t_k, t_k+1], held outside. */
static double piece_value(const dg_timed_input *ti, int k, double t) {
  if (k < 0)
    return ti->v[0];
  if (k >= ti->n - 1 || ti->stepped)
    return ti->v[k];
  double t0 = ti->t[k], t1 = ti->t[k + 1];
  return ti->v[k] + (ti->v[k + 1] - ti->v[k]) * ((t - t0) / (t1 - t0));
}

static bool input_finite(dg_sim *sim, const dg_timed_input *ti, double v, double t) {
  if (isfinite(v))
    return true;
  if (!sim->failed)
    dgp_sim_fail(sim, DG_ERR_NUMERIC, "at t = %.6g s: input \"%s\" became %g (its callback must "
                "return finite values)", t, sim->input_names[ti->input], v);
  sim->input[ti->input] = 0.0;
  return false;
}

void dgp_solver_inputs_start(dg_sim *sim, double t) {
  double tol = dgp_time_tol(t, sim->ctx.dt > 0.0 ? sim->ctx.dt : 1e-3);
  for (int i = 0; i < sim->n_timed; i++) {
    dg_timed_input *ti = &sim->timed[i];
    if (ti->fn) {
      double v = ti->fn(t, ti->user);
      if (input_finite(sim, ti, v, t))
        sim->input[ti->input] = v;
      continue;
    }
    /* the last breakpoint at or before t (right-continuous: at a jump the
     * later value), moving from where the previous segment left it */
    int k = ti->piece;
    while (k + 1 < ti->n && ti->t[k + 1] <= t + tol)
      k++;
    while (k >= 0 && ti->t[k] > t + tol)
      k--;
    ti->piece = k;
    sim->input[ti->input] = piece_value(ti, k, t);
  }
}

/* Continuous inputs at a time inside the current segment: each schedule
 * follows the piece the segment started on, so a segment that ends at a
 * breakpoint sees the value from the left there. */
void dgp_inputs_at_timed(dg_sim *sim, double t) {
  for (int i = 0; i < sim->n_timed; i++) {
    const dg_timed_input *ti = &sim->timed[i];
    if (ti->stepped)
      continue;
    double v = ti->fn ? ti->fn(t, ti->user) : piece_value(ti, ti->piece, t);
    if (input_finite(sim, ti, v, t))
      sim->input[ti->input] = v;
  }
}

/* The end of a segment starting at ta: t_end, or the first breakpoint of a
 * continuous schedule inside (ta, t_end). */
double dgp_inputs_next_break(const dg_sim *sim, double ta, double t_end, double tol) {
  double tb = t_end;
  for (int i = 0; i < sim->n_timed; i++) {
    const dg_timed_input *ti = &sim->timed[i];
    if (ti->fn || ti->stepped || ti->piece + 1 >= ti->n)
      continue;
    double tk = ti->t[ti->piece + 1];
    if (tk > ta + tol && tk < tb - tol)
      tb = tk;
  }
  return tb;
}
