/* bus: the sum of its members, balanced against a battery at every stage. */
#include "testutil.h"

#include <math.h>

/* A motor at a fixed torque command on a flywheel (driving it up), an
 * auxiliary load and a battery behind a bus: the battery delivers, stage
 * by stage, exactly what the members take, so the electrical energies sum
 * to zero to round-off while the motor's power changes all the time. */
START_TEST(test_balance) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"m\":{\"type\":\"motor\",\"inertia\":0.1,\"max_torque\":200,\"max_power\":50000,"
      "\"max_rpm\":12000,\"command\":\"torque\",\"efficiency\":0.9,"
      "\"inputs\":{\"torque\":150}},"
      "\"fly\":{\"type\":\"load\",\"inertia\":2,\"c1\":0.05},"
      "\"aux\":{\"type\":\"electric_load\",\"power\":700},"
      "\"bus\":{\"type\":\"bus\",\"inputs\":{\"p1\":\"m.electric_power\",\"p2\":\"aux.electric_power\"}},"
      "\"bat\":{\"type\":\"battery\",\"capacity\":30,\"voltage\":360,\"resistance\":0.08,"
      "\"inputs\":{\"power\":\"bus.power\"}}},"
      "\"connections\":[[\"m.out\",\"fly.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double pm = dg_test_signal(sim, "m.electric_power"), pa = dg_test_signal(sim, "aux.electric_power");
  ck_assert_double_eq(dg_test_signal(sim, "bus.power"), pm + pa);
  ck_assert_double_eq(dg_test_signal(sim, "bat.power"), pm + pa);
  dg_test_step(sim, 5000, 1e-3);
  double em = dg_test_signal(sim, "m.electric_energy"), ea = dg_test_signal(sim, "aux.electric_energy");
  double eb = dg_test_signal(sim, "bat.electric_energy");
  ck_assert(em > 1e5);
  ck_assert_double_eq_tol(ea, 700.0 * 5.0, 1e-9 * 3500.0);
  ck_assert_double_eq_tol(em + ea + eb, 0.0, 1e-12 * (em + ea));
  ck_assert_double_eq(dg_test_signal(sim, "bus.members"), 2.0);
  dg_energy_ledger l;
  dg_sim_energy_ledger(sim, &l);
  ck_assert_int_eq(l.ledger_blocks, 3);
  ck_assert_double_eq_tol(l.electric, 0.0, 1e-12 * l.energy_in);
  ck_assert_double_eq_tol(l.balance_error, 0.0, 1e-9 * l.energy_in);
  ck_assert_double_eq_tol(l.stored, l.energy_in, 1e-12 * l.energy_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Buses chain: a bus's power is a member of another. */
START_TEST(test_chain) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"electric_load\",\"power\":100},"
      "\"b\":{\"type\":\"electric_load\",\"power\":250},"
      "\"low\":{\"type\":\"bus\",\"inputs\":{\"p1\":\"a.electric_power\"}},"
      "\"high\":{\"type\":\"bus\",\"inputs\":{\"p3\":\"low.power\",\"p8\":\"b.electric_power\"}},"
      "\"bat\":{\"type\":\"battery\",\"capacity\":30,\"voltage\":360,\"resistance\":0,"
      "\"inputs\":{\"power\":\"high.power\"}}},\"connections\":[]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "high.power"), 350.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.current"), 350.0 / 360.0, 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("bus");
  TCase *tc = tcase_create("balance");
  tcase_add_test(tc, test_balance);
  tcase_add_test(tc, test_chain);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
