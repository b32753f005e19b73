/* brake: a flywheel stopped at the hand-computed time, a hold against a
 * smaller torque letting go at the static capacity under a ramp, the
 * engagement ramp, the parking lock (ratchet, impact, release), modes,
 * bad parameters. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Constant or linear torques give polynomial speeds of degree <= 2, which
 * RK4 integrates exactly, and the events are located to 1e-10 of a step:
 * what is left is round-off on speeds of ~50 rad/s over ~5000 steps. */
#define TOL_EXACT 1e-9

/* A flywheel (torque_source "src" with `src`) braked by "br" (`br`), whose
 * engagement follows the channel "cmd". */
static dg_graph *rig(const char *src, const char *br) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"torque_source\",%s},"
                        "\"br\":{\"type\":\"brake\",%s,\"inputs\":{\"engagement\":\"cmd\"}}},"
                        "\"connections\":[[\"src.out\",\"br.in\"]]}",
                        src, br);
}

static void schedule(dg_sim *sim, int n, const double *t, const double *v) {
  dg_error err;
  int id = dg_sim_input_find(sim, "cmd");
  ck_assert_int_ge(id, 0);
  ck_assert_msg(dg_sim_set_input_schedule(sim, id, n, t, v, false, &err) == DG_OK, "%s", err.text);
}

/* J = 2 at ω0 = 50.01 against T = 40: ω = ω0 − T t/J, at rest at
 * t* = ω0 J/T = 2.5005 s (inside a step: located), where the brake holds;
 * its work is the kinetic energy −½ J ω0², nothing lost to an impact. */
START_TEST(test_stops_flywheel) {
  dg_graph *g = rig("\"inertia\":2", "\"max_torque\":40");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "cmd", 1.0);
  dg_test_set_initial1(sim, "src.omega", 50.01);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 50.01 - 20.0 * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), -40.0, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 0.0);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 2.5005, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 0.0, 1e-12);
  ck_assert_int_eq(dg_sim_dof_count(sim), 0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  double work = dg_sim_block_work(sim, dg_test_block_index(g, "br"));
  ck_assert_double_eq_tol(work, -0.5 * 2.0 * 50.01 * 50.01, 1e-9 * 2500.0);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-9);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  dg_sim_free(sim);
  /* and backwards: the same stop from −50 rad/s */
  sim = dg_test_sim(g);
  dg_test_set_input(sim, "cmd", 1.0);
  dg_test_set_initial1(sim, "src.omega", -50.0);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), -30.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), 40.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A held flywheel (J = 2, at rest) under the ramp T_src = 20 t: the brake
 * holds with λ = −20 t until |λ| reaches the static capacity
 * 1.2501 · 40 = 50.004 N·m at t_u = 2.5002 s (located inside the step),
 * then slips forward against the kinetic 40 N·m:
 * ω = [10 (t² − t_u²) − 40 (t − t_u)] / J. */
START_TEST(test_hold_then_let_go) {
  dg_graph *g = rig("\"inertia\":2,\"torque_vs_time\":{\"time\":[0,10],\"torque\":[0,200]}",
                    "\"max_torque\":40,\"static_factor\":1.2501");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "cmd", 1.0);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "br.omega"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), -20.0, 1e-9);
  dg_test_step(sim, 2000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 0.0);
  const double tu = 2.5002;
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), tu, 1e-9);
  double t = dg_sim_time(sim);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"),
                          (10.0 * (t * t - tu * tu) - 40.0 * (t - tu)) / 2.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), -40.0, 1e-12);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The engagement ramps 0 → 1 over [0.5, 1] s on J = 1 at ω0 = 10.003 with
 * max_torque 20: T = 40 (t − 0.5), ω = ω0 − 20 (t − 0.5)², 5.003 rad/s at
 * 1 s, then ω = 5.003 − 20 (t − 1): held at 1.25015 s. */
START_TEST(test_engagement_ramp) {
  dg_graph *g = rig("\"inertia\":1", "\"max_torque\":20");
  dg_sim *sim = dg_test_sim(g);
  schedule(sim, 3, (const double[]){0, 0.5, 1.0}, (const double[]){0, 0, 1});
  dg_test_set_initial1(sim, "src.omega", 10.003);
  dg_test_step(sim, 500, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 10.003, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "br.torque"), 0.0);
  dg_test_step(sim, 250, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.engagement"), 0.5, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.capacity"), 10.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 10.003 - 20.0 * 0.0625, TOL_EXACT);
  dg_test_step(sim, 250, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 5.003, TOL_EXACT);
  dg_test_step(sim, 500, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), 1.25015, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A parking lock on J = 1 at ω0 = 3.0007 slowed by −2 N·m: engaged, it
 * ratchets until ω = lock_speed = 0.5 at t = 1.25035 s and then holds with
 * a plastic impact of ½ J 0.5² = 0.125 J, holding +2 N·m; disengaged at
 * t = 2 it lets the shaft run backwards, ω = −2 (t − 2). With lock_speed 0
 * it holds at t = 1.50035 s without an impact. */
START_TEST(test_parking_lock) {
  const double ls = _i == 0 ? 0.5 : 0.0, t_hold = (3.0007 - ls) / 2.0;
  dg_graph *g = rig("\"inertia\":1,\"torque\":-2",
                    _i == 0 ? "\"kind\":\"lock\"" : "\"kind\":\"lock\",\"lock_speed\":0");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "cmd", 1.0);
  dg_test_set_initial1(sim, "src.omega", 3.0007);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 1.0007, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "br.torque"), 0.0);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t_hold, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "br.omega"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), 2.0, 1e-9);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, -0.5 * ls * ls, 1e-9);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  dg_test_set_input(sim, "cmd", 0.4);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), -2.0, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Engaged at rest from the start: the brake holds at the first step and
 * carries the source's torque; released (engagement 0) it lets go. */
START_TEST(test_held_at_rest) {
  dg_graph *g = rig("\"inertia\":0.5,\"torque\":10", "\"max_torque\":100");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "cmd", 1.0);
  dg_test_step(sim, 10, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), -10.0, 1e-12);
  dg_test_set_input(sim, "cmd", 0.0);
  dg_test_step(sim, 100, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.omega"), 10.0 / 0.5 * 0.1, TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* validate enumerates slipping and held; a brake whose shaft has no
 * inertia at all is refused in the slipping mode. */
/* A friction brake of 1 N·m (static_factor 1) on 1 kg·m² at 1 rad/s under
 * −5 N·m: at rest at t = 1/6 s, and the hold it takes there is
 * overloaded (5 > 1), so the shaft turns back at once: ω = −4 (t − 1/6)
 * (formerly the known bug brake_reversal: held to the step's end). */
START_TEST(test_reversal_at_once) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"drive\":{\"type\":\"torque_source\",\"torque\":-5},"
      "\"shaft\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"friction\":{\"type\":\"brake\",\"max_torque\":1,\"static_factor\":1}},"
      "\"connections\":[[\"drive.out\",\"shaft.in\"],[\"shaft.out\",\"friction.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "shaft.omega", 1.0);
  double worst = 0.0;
  for (int k = 1; k <= 4; k++) {
    dg_test_step(sim, 1, 0.1);
    double t = dg_sim_time(sim);
    double exact = t < 1.0 / 6.0 ? 1.0 - 6.0 * t : -4.0 * (t - 1.0 / 6.0);
    worst = fmax(worst, fabs(dg_test_signal(sim, "shaft.omega") - exact));
  }
  ck_assert_double_le(worst, TOL_EXACT);
  ck_assert_double_eq(dg_test_signal(sim, "friction.held"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_validate_modes) {
  const char *fmt = "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\","
                    "\"inertia\":%g},\"br\":{\"type\":\"brake\",\"max_torque\":10}},"
                    "\"connections\":[[\"src.out\",\"br.in\"]]}";
  char json[512];
  snprintf(json, sizeof json, fmt, 1.0);
  dg_graph_info info;
  int problems = 0;
  ck_assert_int_eq(dg_graph_validate_string(NULL, json, "b.json", dg_test_count_diag, &problems,
                                            &info),
                   0);
  ck_assert_int_eq(info.modes, 2);
  snprintf(json, sizeof json, fmt, 0.0);
  dg_error err = dg_test_graph_error(json);
  ck_assert_msg(strstr(err.text, "no inertia") && strstr(err.text, "br"), "%s", err.text);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"inertia\":0.1", "/blocks/br/max_torque",
     "missing required number (N*m) for kind \"friction\""},
    {"\"max_torque\":-5", "/blocks/br/max_torque", "must be > 0 (got -5)"},
    {"\"max_torque\":10,\"static_factor\":0.9", "/blocks/br/static_factor",
     "must be >= 1 (got 0.9)"},
    {"\"max_torque\":10,\"inertia\":-1", "/blocks/br/inertia", "must be >= 0 (got -1)"},
    {"\"kind\":\"pawl\"", "/blocks/br/kind", "must be one of \"friction\", \"lock\" (got \"pawl\")"},
    {"\"kind\":\"lock\",\"max_torque\":10", "/blocks/br/max_torque",
     "only used by kind \"friction\" (kind is \"lock\")"},
    {"\"kind\":\"lock\",\"static_factor\":1.2", "/blocks/br/static_factor",
     "only used by kind \"friction\" (kind is \"lock\")"},
    {"\"max_torque\":10,\"lock_speed\":1", "/blocks/br/lock_speed",
     "only used by kind \"lock\" (kind is \"friction\")"},
    {"\"kind\":\"lock\",\"lock_speed\":-1", "/blocks/br/lock_speed", "must be >= 0 (got -1)"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(bad[_i].path, bad[_i].text,
                         "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\","
                         "\"inertia\":1},\"br\":{\"type\":\"brake\",%s}},"
                         "\"connections\":[[\"src.out\",\"br.in\"]]}",
                         bad[_i].params);
}
END_TEST

/* Two brakes on one shaft would each hold it to ground: the second hold
 * is redundant (its force 0, its capacity never used) and the two would
 * take turns instead of pooling. validate refuses it, naming both. */
START_TEST(test_two_holds_refused) {
  dg_error e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
      "\"torque\":35},\"b1\":{\"type\":\"brake\",\"max_torque\":10},"
      "\"b2\":{\"type\":\"brake\",\"max_torque\":20},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"b1.in\",\"b2.in\",\"ld.in\"]]}");
  ck_assert_int_eq(e.code, DG_ERR_OVERCONSTRAINED);
  ck_assert_msg(strstr(e.text, "blocks \"b1\" and \"b2\" both hold the shaft src.out to ground") &&
                    strstr(e.text, "use one (a brake with the capacities added)"),
                "%s", e.text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("brake");
  TCase *tc = tcase_create("friction");
  tcase_add_test(tc, test_stops_flywheel);
  tcase_add_test(tc, test_two_holds_refused);
  tcase_add_test(tc, test_hold_then_let_go);
  tcase_add_test(tc, test_engagement_ramp);
  tcase_add_test(tc, test_held_at_rest);
  tcase_add_test(tc, test_reversal_at_once);
  suite_add_tcase(s, tc);
  tc = tcase_create("lock");
  tcase_add_loop_test(tc, test_parking_lock, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("modes");
  tcase_add_test(tc, test_validate_modes);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
