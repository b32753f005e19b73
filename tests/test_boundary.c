/* The boundary a host sees (lib/solver/boundary.c, dg_sim_boundary_*):
 * effective inertias and damping at prescribed shafts, mobility at free
 * ones, against closed forms (exact up to round-off: EXACT; the damping by
 * central differences of a linear law: DIFF). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#define EXACT 1e-12
#define DIFF 1e-7

/* speed_source → gear (ratio 2) → inertia 3 with a viscous load c1 = 8 on
 * the output: J = 3/2² = 0.75; the load's torque −8·(v/2) at the output is
 * 8v/4 = 2v at the source: ∂f/∂v = 2. */
START_TEST(geared_inertia_and_damping) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":\"w\"}},"
                              "\"g\":{\"type\":\"gear\",\"ratio\":2},"
                              "\"ld\":{\"type\":\"load\",\"inertia\":3,\"c1\":8}},"
                              "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "w", 12.0);
  dg_test_step(sim, 5, 0.001);
  const char *ids[1] = {"src"};
  double J, D;
  dg_error err;
  ck_assert_int_eq(dg_sim_boundary_motion(sim, 1, ids, &J, &D, &err), DG_OK);
  ck_assert_double_eq_tol(J, 0.75, EXACT);
  ck_assert_double_eq_tol(D, 2.0, DIFF);
  /* the state is left as it was */
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.torque"), 2.0 * 12.0, 1e-9);
  const char *bad[1] = {"g"};
  ck_assert_int_eq(dg_sim_boundary_motion(sim, 1, bad, &J, NULL, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "block \"g\" prescribes no speed in the current mode");
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A prescribed differential input with wheels of 1 and 3 kg·m²: M_pp = 4,
 * M_fp = (1 − 3)/2 = −1, M_ff = 1, so J = 4 − 1 = 3 (the 3a of the open
 * differential's equal split, tests/test_motion.c). */
START_TEST(differential_schur) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"src\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":1}},"
                              "\"d\":{\"type\":\"differential\",\"kind\":\"open\"},"
                              "\"l\":{\"type\":\"inertia\",\"inertia\":1},"
                              "\"r\":{\"type\":\"inertia\",\"inertia\":3}},"
                              "\"connections\":[[\"src.out\",\"d.in\"],[\"d.left\",\"l.in\"],"
                              "[\"d.right\",\"r.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  const char *ids[1] = {"src"};
  double J;
  ck_assert_int_eq(dg_sim_boundary_motion(sim, 1, ids, &J, NULL, NULL), DG_OK);
  ck_assert_double_eq_tol(J, 3.0, EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Free shafts: engine 0.5 → gear 3 (0.1 on its input) → inertia 2. The
 * DOF's inertia at the engine shaft is 0.6 + 2/9; Y at the engine shaft is
 * its inverse, at the output (1/3)² of it, across 1/3 of it. */
START_TEST(port_mobility) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.5},"
                              "\"g\":{\"type\":\"gear\",\"ratio\":3,\"inertia\":0.1},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":2}},"
                              "\"connections\":[[\"eng.out\",\"g.in\"],[\"g.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  const char *ports[2] = {"eng.out", "j.in"};
  double y[4];
  dg_error err;
  ck_assert_int_eq(dg_sim_boundary_ports(sim, 2, ports, y, &err), DG_OK);
  double m = 0.6 + 2.0 / 9.0;
  ck_assert_double_eq_tol(y[0], 1.0 / m, EXACT);
  ck_assert_double_eq_tol(y[1], 1.0 / 3.0 / m, EXACT);
  ck_assert_double_eq_tol(y[2], 1.0 / 3.0 / m, EXACT);
  ck_assert_double_eq_tol(y[3], 1.0 / 9.0 / m, EXACT);
  const char *bad[1] = {"j.nope"};
  ck_assert_int_eq(dg_sim_boundary_ports(sim, 1, bad, y, &err), DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.text, "no port \"j.nope\" in the graph (\"block.port\")");
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Explicit coupling: J = 0.6 + 2/9 at the engine shaft; with c = 1000
 * N·m/(rad/s) the step must be below 2J/c = 1.644e-3 s. */
START_TEST(explicit_coupling_check) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"eng\":{\"type\":\"torque_source\",\"inertia\":0.5},"
                              "\"g\":{\"type\":\"gear\",\"ratio\":3,\"inertia\":0.1},"
                              "\"j\":{\"type\":\"inertia\",\"inertia\":2}},"
                              "\"connections\":[[\"eng.out\",\"g.in\"],[\"g.out\",\"j.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_error err;
  double J = 0.6 + 2.0 / 9.0;
  ck_assert_int_eq(dg_sim_check_coupling(sim, "eng.out", 1000.0, 1e-3, &err), DG_OK);
  ck_assert_int_eq(dg_sim_check_coupling(sim, "eng.out", 1000.0, 2.0 * J / 1000.0 * 1.001, &err),
                   DG_ERR_RANGE);
  ck_assert_msg(strstr(err.text, "an explicit coupling at eng.out cannot be stable") != NULL,
                "%s", err.text);
  ck_assert_msg(strstr(err.text, "take dt below 2J/c = 0.00164444 s") != NULL, "%s", err.text);
  ck_assert_int_eq(dg_sim_check_coupling(sim, "eng.out", -1.0, 1e-3, &err), DG_ERR_RANGE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("boundary");
  TCase *c = tcase_create("boundary");
  tcase_add_test(c, geared_inertia_and_damping);
  tcase_add_test(c, differential_schur);
  tcase_add_test(c, port_mobility);
  tcase_add_test(c, explicit_coupling_check);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return dg_test_run(suite()); }
