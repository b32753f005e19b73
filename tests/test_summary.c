/* Tests for lib/run/summary.c: the figures a run is summarized by, against
 * what the run's own trace gives (crossings interpolated within a step,
 * shifts where the gear signal changes). */
#include "testutil.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define DT 0.001
/* A crossing interpolated within one step must lie inside that step. */
#define STEP_TOL (DT + 1e-12)

/* The sedan's scenario launch: 0-100 km/h, the shifts where the gear
 * signal changes (logged at the start of that step), a moving start has no
 * time to rest. */
START_TEST(test_launch_figures) {
  dg_test_drive r = dg_test_start("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json");
  dg_summary s;
  ck_assert_int_eq(dg_summary_init(&s, r.sim), DG_OK);
  ck_assert_str_eq(s.vehicle, "body");
  ck_assert_str_eq(s.gearbox, "gearbox");
  ck_assert_str_eq(s.rpm_name, "engine.rpm");
  int id_v = dg_sim_signal_find(r.sim, "body.speed");
  int id_g = dg_sim_signal_find(r.sim, "gearbox.gear");
  dg_summary_sample(&s, 0.0);
  double t_cross = NAN;
  int shifts = 0, gear_prev = (int)lround(dg_sim_signal(r.sim, id_g));
  double first_shift = NAN;
  for (long k = 0; k < 12000; k++) {
    double t = (double)k * DT;
    dg_driver_apply(r.drv, t);
    ck_assert_int_eq(dg_sim_step(r.sim, DT), DG_OK);
    double t1 = (double)(k + 1) * DT;
    dg_summary_sample(&s, t1);
    if (isnan(t_cross) && dg_sim_signal(r.sim, id_v) >= DG_SUMMARY_V100)
      t_cross = t1;
    int gear = (int)lround(dg_sim_signal(r.sim, id_g));
    if (k > 0 && gear != gear_prev) {
      if (shifts++ == 0)
        first_shift = t;
    }
    gear_prev = gear;
  }
  ck_assert(!isnan(t_cross));
  ck_assert(s.t_100 <= t_cross && s.t_100 > t_cross - STEP_TOL);
  ck_assert_int_eq(s.shifts_total, shifts);
  ck_assert_int_ge(shifts, 2);
  ck_assert_double_eq(s.shifts[0].t, first_shift);
  ck_assert_int_eq(s.shifts[0].from, 1);
  ck_assert_int_eq(s.shifts[0].to, 2);
  ck_assert(s.v_top >= DG_SUMMARY_V100);
  ck_assert(isnan(s.t_rest));
  ck_assert(s.v_start <= DG_SUMMARY_FROM_REST);
  dg_summary_free(&s);
  dg_summary_free(&s); /* freeing twice is harmless */
  dg_test_finish(&r);
}
END_TEST

/* A rig without a vehicle, gearbox or wheels: no ids, nothing measured. */
START_TEST(test_rig_has_no_figures) {
  dg_test_drive r = dg_test_start("graphs/gear_train.json", "graphs/scenarios/gear_train_pulse.json");
  dg_summary s;
  ck_assert_int_eq(dg_summary_init(&s, r.sim), DG_OK);
  ck_assert_int_eq(s.id_speed, -1);
  ck_assert_int_eq(s.id_gear, -1);
  ck_assert_int_eq(s.nwheels, 0);
  ck_assert_ptr_null(s.vehicle);
  dg_summary_sample(&s, 0.0);
  ck_assert_int_eq(dg_sim_step(r.sim, DT), DG_OK);
  dg_summary_sample(&s, DT);
  ck_assert(isnan(s.t_100));
  ck_assert_int_eq(s.slip_wheel, -1);
  ck_assert_int_eq(s.shifts_total, 0);
  dg_summary_free(&s);
  dg_test_finish(&r);
}
END_TEST

/* The run's steps and rows (dg_run_timing_init), by hand: ceil(T/dt) steps
 * with 1e-9 of a step forgiven, a row every round(interval/dt) steps, the
 * interval rounded (rc 1) when it is not a multiple of dt. */
START_TEST(test_run_timing) {
  dg_run_timing rt;
  ck_assert_int_eq(dg_run_timing_init(&rt, 0.001, 1.0, NAN), 0);
  ck_assert_int_eq(rt.total_steps, 1000);
  ck_assert_int_eq(rt.steps_per_row, 10); /* max(dt, 0.01) s */
  ck_assert_double_eq(rt.interval, 0.01);
  ck_assert_int_eq(dg_run_timing_init(&rt, 0.001, 0.0100000000001, 0.05), 0);
  ck_assert_int_eq(rt.total_steps, 10); /* 1e-8 of a step over: forgiven */
  ck_assert_int_eq(rt.steps_per_row, 50);
  ck_assert_int_eq(dg_run_timing_init(&rt, 0.003, 1.0, NAN), 1);
  ck_assert_int_eq(rt.total_steps, 334);  /* ceil(333.3) */
  ck_assert_int_eq(rt.steps_per_row, 3);  /* lround(3.33) */
  ck_assert_double_eq_tol(rt.interval, 0.009, 1e-15); /* 3 x 0.003 */
  ck_assert_int_eq(dg_run_timing_init(&rt, 0.1, 1.0, 0.01), 1);
  ck_assert_int_eq(rt.steps_per_row, 1); /* at least every step */
  ck_assert_double_eq(rt.interval, 0.1);
  ck_assert_int_eq(dg_run_timing_init(&rt, 0.001, NAN, NAN), 0);
  ck_assert(rt.total_steps == LONG_MAX); /* open-ended */
  ck_assert_int_eq(dg_run_timing_init(&rt, 1e-6, 1e7, NAN), -1); /* 1e13 steps */
}
END_TEST

static Suite *summary_suite(void) {
  Suite *s = suite_create("summary");
  TCase *tc = tcase_create("figures");
  tcase_add_test(tc, test_launch_figures);
  tcase_add_test(tc, test_rig_has_no_figures);
  tcase_add_test(tc, test_run_timing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(summary_suite()); }
