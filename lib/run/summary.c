/* The figures a run is summarized by (drivegraph.h, "Run summaries"):
 * performance (0-100 km/h, 0-400 m, top speed, time and distance to rest),
 * the shift log and the peak wheel slip, sampled after every step, so
 * crossing times are interpolated linearly within one step (a 0-100 km/h
 * time is good to a fraction of dt, not of an output interval). Only the
 * public API is used: blocks are found by their type, signals by
 * "<block>.<signal>". `drivegraph sim` prints these figures
 * (tools/summary.c) and the Python package returns them. */
#include <drivegraph/drivegraph.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Collecting                                                               */

static int find_type(const dg_graph *g, const char *type) {
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), type) == 0)
      return i;
  return -1;
}

static int signal_of(const dg_sim *sim, const char *block, const char *name) {
  char full[256];
  if (!block || snprintf(full, sizeof full, "%s.%s", block, name) >= (int)sizeof full)
    return -1;
  return dg_sim_signal_find(sim, full);
}

int dg_summary_init(dg_summary *s, const dg_sim *sim) {
  const dg_graph *g = dg_sim_graph(sim);
  memset(s, 0, sizeof *s);
  s->sim = sim;
  int veh = find_type(g, "vehicle"), gb = find_type(g, "gearbox");
  s->vehicle = veh >= 0 ? dg_graph_block_id(g, veh) : NULL;
  s->gearbox = gb >= 0 ? dg_graph_block_id(g, gb) : NULL;
  s->id_speed = signal_of(sim, s->vehicle, "speed");
  s->id_x = signal_of(sim, s->vehicle, "x");
  s->id_gear = signal_of(sim, s->gearbox, "gear");
  /* The rpm of the shift log: the engine's, else the motor's, else the
   * gearbox input's (which is what the gearbox's policy reads). */
  static const char *const rpm_sources[] = {"engine", "motor"};
  s->id_rpm = -1;
  for (int k = 0; k < 2 && s->id_rpm < 0; k++) {
    int b = find_type(g, rpm_sources[k]);
    if (b >= 0) {
      s->id_rpm = signal_of(sim, dg_graph_block_id(g, b), "rpm");
      if (s->id_rpm >= 0)
        s->rpm_name = dg_sim_signal_name(sim, s->id_rpm);
    }
  }
  if (s->id_rpm < 0 && s->gearbox) {
    s->id_rpm = signal_of(sim, s->gearbox, "rpm");
    if (s->id_rpm >= 0)
      s->rpm_name = dg_sim_signal_name(sim, s->id_rpm);
  }
  int n = dg_graph_block_count(g);
  s->id_slip = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->id_slip);
  s->id_wheel_v = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->id_wheel_v);
  s->wheel = malloc((size_t)(n > 0 ? n : 1) * sizeof *s->wheel);
  if (!s->id_slip || !s->id_wheel_v || !s->wheel) {
    dg_summary_free(s);
    return DG_ERR_NOMEM;
  }
  for (int i = 0; i < n; i++) {
    if (strcmp(dg_graph_block_type(g, i), "wheel") != 0)
      continue;
    /* the kinematic slip (ωR − v)/|v|, not the tyre model's limited
     * state, and its ground speed to leave out near-rest samples */
    int id = signal_of(sim, dg_graph_block_id(g, i), "slip_ratio");
    int idv = signal_of(sim, dg_graph_block_id(g, i), "speed");
    if (id >= 0 && idv >= 0) {
      s->id_slip[s->nwheels] = id;
      s->id_wheel_v[s->nwheels] = idv;
      s->wheel[s->nwheels++] = dg_graph_block_id(g, i);
    }
  }
  s->t_100 = s->t_400 = s->v_400 = s->t_rest = s->x_rest = NAN;
  s->rest_speed = DG_SUMMARY_REST;
  s->slip_wheel = -1;
  s->slip_t = NAN;
  return DG_OK;
}

void dg_summary_free(dg_summary *s) {
  free(s->id_slip);
  free(s->id_wheel_v);
  free(s->wheel);
  s->id_slip = NULL;
  s->id_wheel_v = NULL;
  s->wheel = NULL;
}

/* Wheel slip is measured from this ground speed up (m/s). */
#define SLIP_MIN_SPEED 1.0

static double read_signal(const dg_summary *s, int id) { return id >= 0 ? dg_sim_signal(s->sim, id) : NAN; }

/* Time at which a quantity going from a (at t0) to b (at t1) reaches level. */
static double cross(double t0, double a, double t1, double b, double level) {
  return b != a ? t0 + (t1 - t0) * (level - a) / (b - a) : t1;
}

/* A manual gearbox is in neutral until the first step engages the gear
 * input (without a shift): that is the start gear, not a shift. */
static bool initial_engagement(const dg_summary *s, int gear) {
  return s->t_prev == 0.0 && s->gear_prev == 0 && gear != 0;
}

void dg_summary_sample(dg_summary *s, double t) {
  double v = read_signal(s, s->id_speed), x = read_signal(s, s->id_x), rpm = read_signal(s, s->id_rpm);
  int gear = s->id_gear >= 0 ? (int)lround(read_signal(s, s->id_gear)) : 0;
  for (int i = 0; i < s->nwheels; i++) {
    /* below SLIP_MIN_SPEED the ratio divides by the speed floor and says
     * little: a wheel turning at all from rest would top the list */
    double k = fabs(read_signal(s, s->id_slip[i]));
    if (fabs(read_signal(s, s->id_wheel_v[i])) >= SLIP_MIN_SPEED && k > s->slip_peak) {
      s->slip_peak = k;
      s->slip_wheel = i;
      s->slip_t = t;
    }
  }
  if (!s->started) {
    s->started = true;
    s->v_start = s->v_top = v;
    s->x_start = x;
    s->t_top = t;
  } else {
    if (v > s->v_top) {
      s->v_top = v;
      s->t_top = t;
    }
    if (s->v_start <= DG_SUMMARY_FROM_REST) {
      if (isnan(s->t_100) && s->v_prev < DG_SUMMARY_V100 && v >= DG_SUMMARY_V100)
        s->t_100 = cross(s->t_prev, s->v_prev, t, v, DG_SUMMARY_V100);
      double d0 = s->x_prev - s->x_start, d1 = x - s->x_start;
      if (isnan(s->t_400) && d0 < DG_SUMMARY_X400 && d1 >= DG_SUMMARY_X400) {
        s->t_400 = cross(s->t_prev, d0, t, d1, DG_SUMMARY_X400);
        s->v_400 = s->v_prev + (v - s->v_prev) * (s->t_400 - s->t_prev) / (t - s->t_prev);
      }
    } else if (isnan(s->t_rest) && fabs(v) <= s->rest_speed) {
      s->t_rest = cross(s->t_prev, fabs(s->v_prev), t, fabs(v), s->rest_speed);
      s->x_rest = x - s->x_start;
    }
    /* The gearbox's policy chose the new gear in the pre_step of this step,
     * from the state at its start: that is the time and rpm logged. */
    if (s->id_gear >= 0 && s->t_prev == 0.0)
      s->gear_start = gear;
    if (s->id_gear >= 0 && gear != s->gear_prev && !initial_engagement(s, gear)) {
      if (s->nshifts < DG_SUMMARY_MAX_SHIFTS)
        s->shifts[s->nshifts++] =
            (dg_summary_shift){.t = s->t_prev, .from = s->gear_prev, .to = gear, .rpm = s->rpm_prev};
      s->shifts_total++;
    }
  }
  s->t_prev = t;
  s->v_prev = v;
  s->x_prev = x;
  s->rpm_prev = rpm;
  s->gear_prev = gear;
}

/* ------------------------------------------------------------------------ */
/* Timing                                                                   */

int dg_run_timing_init(dg_run_timing *rt, double dt, double duration, double interval) {
  if (isnan(duration)) {
    rt->total_steps = LONG_MAX;
  } else {
    double steps = ceil(duration / dt - 1e-9);
    if (steps > 1e12)
      return -1;
    rt->total_steps = (long)steps;
  }
  if (isnan(interval))
    interval = fmax(dt, 0.01);
  rt->steps_per_row = lround(interval / dt);
  if (rt->steps_per_row < 1)
    rt->steps_per_row = 1;
  rt->interval = interval;
  if (fabs((double)rt->steps_per_row * dt - interval) > 1e-9 * interval) {
    rt->interval = (double)rt->steps_per_row * dt;
    return 1;
  }
  return 0;
}
