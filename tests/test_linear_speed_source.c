/* linear_speed_source (blocks/linear_speed_source.c): a vehicle body that
 * follows a given speed exactly, and the force it takes. Every expectation
 * is a closed form derived in the comments.
 *
 * Tolerances: a prescribed speed is exact to round-off, and so is the
 * force (TOL_EXACT, relative to forces of 2 kN); the road load's energies
 * are integrated by RK4 with a right-hand side that depends on time alone
 * (the prescribed speed), i.e. Simpson's rule on each step, exact for the
 * cubic drag power of a linear speed: round-off again (TOL_ENERGY). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

#define TOL_EXACT 1e-9
#define TOL_ENERGY 1e-9

#define MASS 1000.0
#define CRR 0.01
#define G 9.80665
#define F2 (0.5 * 1.225 * 0.5) /* ½ ρ cda = 0.30625 N s²/m² */

/* A body of 1000 kg (cda 0.5, rolling 0.01) with no wheels, on a source at
 * its `front` port following the channel "v". */
static dg_graph *body(const char *extra) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"linear_speed_source\",\"inputs\":{\"speed\":\"v\"}},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1000,\"cda\":0.5,\"rolling_resistance\":0.01%s}},"
      "\"connections\":[[\"src.out\",\"body.front\"]]}",
      extra);
}

/* v = 2 t from rest: force = m a + F2 v² + crr m g (moving), the source's
 * work = ½ m v² + ∫ F2 v³ dt + crr m g x, with ∫_0^T F2 (2t)³ dt = 2 F2 T⁴
 * and x = T². The rolling resistance's direction is the one at each step's
 * start (blocks/vehicle.c), none in the first step from rest: it acts from
 * x(dt) = dt² on, crr m g (T² − dt²). */
START_TEST(ramp) {
  dg_graph *g = body(", \"hold_at_rest\": false");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 0);
  int v = dg_sim_input_find(sim, "v");
  const double t[2] = {0.0, 10.0}, vv[2] = {0.0, 20.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, v, 2, t, vv, false, NULL), DG_OK);
  ck_assert_int_eq(dg_sim_start(sim, NULL), DG_OK);
  for (int k = 1; k <= 4; k++) {
    dg_test_step(sim, 500, 0.002);
    double T = 1.0 * k, speed = 2.0 * T;
    double force = MASS * 2.0 + F2 * speed * speed + CRR * MASS * G;
    ck_assert_double_eq_tol(dg_test_signal(sim, "body.speed"), speed, TOL_EXACT);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.force"), force, TOL_EXACT * force);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.power"), force * speed,
                            TOL_EXACT * force * speed);
    ck_assert_double_eq_tol(dg_test_signal(sim, "src.accel"), 2.0, TOL_EXACT);
    double drag = 2.0 * F2 * T * T * T * T, rolling = CRR * MASS * G * (T * T - 0.002 * 0.002);
    ck_assert_double_eq_tol(dg_test_signal(sim, "body.drag_energy"), drag, TOL_ENERGY * drag);
    ck_assert_double_eq_tol(dg_test_signal(sim, "body.rolling_energy"), rolling,
                            TOL_ENERGY * rolling);
    ck_assert_double_eq_tol(dg_test_signal(sim, "body.grade_energy"), 0.0, TOL_ENERGY);
    double work = dg_sim_block_work(sim, dg_test_block_index(g, "src"));
    double want = 0.5 * MASS * speed * speed + drag + rolling;
    ck_assert_double_eq_tol(work, want, TOL_ENERGY * want);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Uphill at 10 % and constant speed 5 m/s: force = m g sin(atan 0.1) +
 * crr m g cos(atan 0.1) + F2 · 25, and the grade's energy m g sin θ · 5 t. */
START_TEST(grade) {
  dg_graph *g = body(", \"hold_at_rest\": false");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "v"), 5.0);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "grade"), 0.1);
  ck_assert_int_eq(dg_sim_set_initial(sim, 1, (int[]){dg_sim_signal_find(sim, "body.speed")},
                                      (double[]){5.0}, NULL),
                   DG_OK);
  ck_assert_int_eq(dg_sim_start(sim, NULL), DG_OK);
  dg_test_step(sim, 1000, 0.002);
  double th = atan(0.1);
  double force = MASS * G * sin(th) + CRR * MASS * G * cos(th) + F2 * 25.0;
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.force"), force, TOL_EXACT * force);
  double e = MASS * G * sin(th) * 5.0 * 2.0;
  ck_assert_double_eq_tol(dg_test_signal(sim, "body.grade_energy"), e, TOL_ENERGY * e);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("linear_speed_source");
  TCase *tc = tcase_create("motion");
  tcase_add_test(tc, ramp);
  tcase_add_test(tc, grade);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
