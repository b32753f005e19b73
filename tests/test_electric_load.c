/* electric_load: power times demand, its energy as electricity and heat. */
#include "testutil.h"

#include <math.h>

START_TEST(test_power_and_demand) {
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{"
                              "\"aux\":{\"type\":\"electric_load\",\"power\":500,"
                              "\"inputs\":{\"demand\":\"duty\"}}},\"connections\":[]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "aux.electric_power"), 500.0); /* demand 1 by default */
  dg_test_set_input(sim, "duty", 0.5);
  dg_test_step(sim, 100, 0.1);
  ck_assert_double_eq_tol(dg_test_signal(sim, "aux.electric_energy"), 2500.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "aux.heat"), 2500.0, 1e-9);
  dg_test_set_input(sim, "duty", -1.0); /* clamped: a load does not deliver */
  ck_assert_double_eq(dg_test_signal(sim, "aux.electric_power"), 0.0);
  dg_block_energy e;
  ck_assert_int_eq(dg_sim_block_energy(sim, 0, &e), DG_OK);
  ck_assert(e.ledger);
  ck_assert_double_eq(e.error, 0.0);
  ck_assert_int_eq(dg_sim_block_energy(sim, 1, &e), DG_ERR_USAGE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("electric_load");
  TCase *tc = tcase_create("load");
  tcase_add_test(tc, test_power_and_demand);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
