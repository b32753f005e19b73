/* battery: the quadratic for the current, the state of charge and the
 * ledger at constant power (discharging and charging), the open-circuit
 * voltage table, the limits, the errors and the bindings. */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A battery drawn by a constant electric_load of `power` W. */
static dg_graph *rig(const char *battery, double power) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"bat\":{\"type\":\"battery\",%s,\"inputs\":{\"power\":\"ld.electric_power\"}},"
                        "\"ld\":{\"type\":\"electric_load\",\"power\":%.17g}},\"connections\":[]}",
                        battery, power);
}

/* P = V I − R I² at V = 350 V, R = 0.1 Ω, P = 20 kW:
 * I = (V − √(V² − 4RP)) / 2R = (350 − √(122500 − 8000)) / 0.2 = 58.1258... A
 * and the state of charge falls at I / (3600 Q) per second. */
START_TEST(test_constant_discharge) {
  const double V = 350.0, R = 0.1, P = 20000.0, Q = 50.0, soc0 = 0.8, T = 100.0;
  double I = (V - sqrt(V * V - 4.0 * R * P)) / (2.0 * R);
  ck_assert_double_eq_tol(I, 58.1076, 1e-4); /* by hand */
  dg_graph *g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1,\"initial_soc\":0.8", P);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.current"), I, 1e-12 * I);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.voltage"), V - R * I, 1e-12 * V);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.voltage") * I, P, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "bat.soc"), soc0);
  dg_test_step(sim, 1000, T / 1000);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.soc"), soc0 - I * T / (3600.0 * Q), 1e-13);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.stored_energy"), V * I * T, 1e-9 * V * I * T);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.heat"), R * I * I * T, 1e-9 * R * I * I * T);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.electric_energy"), -P * T, 1e-9 * P * T);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.electric_energy"), P * T, 1e-9 * P * T);
  dg_block_energy e;
  ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "bat"), &e), DG_OK);
  ck_assert(e.ledger);
  ck_assert_double_eq_tol(e.error, 0.0, 1e-9 * P * T);
  dg_energy_ledger l;
  dg_sim_energy_ledger(sim, &l);
  ck_assert_int_eq(l.ledger_blocks, 2);
  ck_assert_double_eq_tol(l.electric, 0.0, 1e-9 * P * T); /* the bus balances */
  ck_assert_double_eq_tol(l.stored, V * I * T, 1e-9 * P * T);
  ck_assert_double_eq_tol(l.heat, P * T + R * I * I * T, 1e-9 * P * T);
  ck_assert_double_eq_tol(l.balance_error, 0.0, 1e-9 * l.energy_in);
  ck_assert_double_eq(dg_test_signal(sim, "bat.over_limit_time"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Charging at 10 kW through a constant binding: P = −10 kW, I < 0,
 * I = 2P / (V + √(V² − 4RP)); the state of charge rises. */
START_TEST(test_constant_charge) {
  const double V = 350.0, R = 0.1, P = -10000.0, Q = 50.0, T = 60.0;
  dg_graph *g = dg_test_graph("{\"drivegraph\":1,\"blocks\":{\"bat\":{\"type\":\"battery\","
                              "\"capacity\":50,\"voltage\":350,\"resistance\":0.1,"
                              "\"initial_soc\":0.5,\"inputs\":{\"power\":-10000}}},"
                              "\"connections\":[]}");
  dg_sim *sim = dg_test_sim(g);
  double I = (V - sqrt(V * V - 4.0 * R * P)) / (2.0 * R);
  ck_assert(I < 0.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.current"), I, 1e-12 * fabs(I));
  dg_test_step(sim, 600, T / 600);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.soc"), 0.5 - I * T / (3600.0 * Q), 1e-13);
  /* charging loses R I² too: V I = P + R I², the store takes in |P| − R I² */
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.stored_energy"), (P + R * I * I) * T,
                          1e-9 * fabs(P) * T);
  /* the charge comes from outside the model (a number) */
  dg_energy_ledger l;
  dg_sim_energy_ledger(sim, &l);
  ck_assert_double_eq_tol(l.electric, -P * T, 1e-9 * fabs(P) * T);
  ck_assert_double_eq_tol(l.balance_error, 0.0, 1e-9 * l.energy_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A constant-efficiency cell (FASTSim's model: R = 0, η = √0.97 each way):
 * at 350 V a 20 kW discharge carries I = P / V at the terminals and takes
 * I / η from the store; a 10 kW charge puts |I| η in. The heat is the
 * store's loss, P (1/η − 1) and |P| (1 − η); the ledger closes. */
START_TEST(test_efficiency) {
  const double V = 350.0, Q = 50.0, T = 100.0, eta = sqrt(0.97);
  for (int k = 0; k < 2; k++) {
    double P = k == 0 ? 20000.0 : -10000.0;
    dg_graph *g = dg_test_graphf("{\"drivegraph\":1,\"blocks\":{\"bat\":{\"type\":\"battery\","
                                 "\"capacity\":50,\"voltage\":350,\"resistance\":0,"
                                 "\"efficiency\":%.17g,\"initial_soc\":0.5,"
                                 "\"inputs\":{\"power\":%.17g}}},\"connections\":[]}",
                                 eta, P);
    dg_sim *sim = dg_test_sim(g);
    double I = P / V, Is = P > 0 ? I / eta : I * eta;
    ck_assert_double_eq_tol(dg_test_signal(sim, "bat.current"), I, 1e-12 * fabs(I));
    dg_test_step(sim, 1000, T / 1000);
    ck_assert_double_eq_tol(dg_test_signal(sim, "bat.soc"), 0.5 - Is * T / (3600.0 * Q), 1e-13);
    ck_assert_double_eq_tol(dg_test_signal(sim, "bat.stored_energy"), V * Is * T,
                            1e-9 * fabs(P) * T);
    double loss = P > 0 ? P * (1.0 / eta - 1.0) : -P * (1.0 - eta);
    ck_assert_double_eq_tol(dg_test_signal(sim, "bat.heat"), loss * T, 1e-9 * fabs(P) * T);
    dg_block_energy e;
    ck_assert_int_eq(dg_sim_block_energy(sim, dg_test_block_index(g, "bat"), &e), DG_OK);
    ck_assert_double_eq_tol(e.error, 0.0, 1e-9 * fabs(P) * T);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* A linear OCV, V(s) = 300 + 100 s, and R = 0: I = P / V(s), and
 * ds/dt = −P / (3600 Q (300 + 100 s)), so (300 s + 50 s²) falls linearly:
 * 300 s + 50 s² = 300 s0 + 50 s0² − P t / (3600 Q). */
START_TEST(test_ocv_table) {
  const double P = 30000.0, Q = 40.0, s0 = 0.9, T = 200.0;
  dg_graph *g = rig("\"capacity\":40,\"ocv\":{\"soc\":[0,1],\"voltage\":[300,400]},"
                    "\"resistance\":0,\"initial_soc\":0.9",
                    P);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.ocv"), 390.0, 1e-12);
  dg_test_step(sim, 2000, T / 2000);
  double c = 300.0 * s0 + 50.0 * s0 * s0 - P * T / (3600.0 * Q);
  double s = (-300.0 + sqrt(300.0 * 300.0 + 200.0 * c)) / 100.0;
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.soc"), s, 1e-12);
  /* the store gave up exactly what the load took (no resistance) */
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.stored_energy"), P * T, 1e-9 * P * T);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.heat"), 0.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Limits by hand at V = 350 V, R = 0.1 Ω: 300 A discharging gives
 * 350·300 − 0.1·300² = 96 kW, capped by max_discharge_power = 80 kW;
 * 200 A charging takes 350·200 + 0.1·200² = 74 kW. Without limits the
 * discharge is capped at the peak V²/4R = 306.25 kW. */
START_TEST(test_limits) {
  dg_graph *g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1,"
                    "\"max_discharge_current\":300,\"max_charge_current\":200",
                    90000.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.discharge_limit"), 96000.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.charge_limit"), 74000.0, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "bat.over_limit"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1,\"max_discharge_power\":80000",
          90000.0);
  sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.discharge_limit"), 80000.0, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "bat.charge_limit"), DBL_MAX); /* no limit */
  ck_assert_double_eq(dg_test_signal(sim, "bat.over_limit"), 1.0);
  dg_test_step(sim, 100, 0.01); /* supplied all the same; the time counted */
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.over_limit_time"), 1.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
  g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1", 1000.0);
  sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.discharge_limit"), 306250.0, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The limits taper to 0 over soc_taper before the window's ends: at SoC
 * 0.85 with soc_max 0.9 and a taper of 0.1 the charge limit is half. */
START_TEST(test_taper) {
  dg_graph *g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1,\"max_charge_power\":40000,"
                    "\"max_discharge_power\":60000,\"soc_min\":0.2,\"soc_max\":0.9,"
                    "\"soc_taper\":0.1,\"initial_soc\":0.85",
                    0.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.charge_limit"), 20000.0, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.discharge_limit"), 60000.0, 1e-8);
  dg_test_set_initial1(sim, "bat.soc", 0.95);
  ck_assert_double_eq(dg_test_signal(sim, "bat.charge_limit"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "bat.over_limit"), 1.0); /* outside the window */
  dg_test_set_initial1(sim, "bat.soc", 0.25);
  ck_assert_double_eq_tol(dg_test_signal(sim, "bat.discharge_limit"), 30000.0, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Past V²/4R there is no current: the step fails naming the power. An
 * empty battery fails too. */
START_TEST(test_failures) {
  dg_graph *g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1", 400000.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_ne(dg_sim_step(sim, 1e-3), DG_OK);
  const dg_error *err = dg_sim_last_error(sim);
  ck_assert_msg(strstr(err->text, "more than the battery can give") &&
                    strstr(err->text, "306250"),
                "%s", err->text);
  dg_sim_free(sim);
  dg_graph_free(g);
  /* 1 A·h at 100 V and 36 kW: ~0.1 C/s, empty within 10 s */
  g = rig("\"capacity\":1,\"voltage\":100,\"resistance\":0,\"initial_soc\":0.05", 36000.0);
  sim = dg_test_sim(g);
  int rc = DG_OK;
  for (int i = 0; i < 2000 && rc == DG_OK; i++)
    rc = dg_sim_step(sim, 1e-2);
  ck_assert_int_ne(rc, DG_OK);
  err = dg_sim_last_error(sim);
  ck_assert_msg(strstr(err->text, "the battery is empty"), "%s", err->text);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The state of charge as an initial value. */
START_TEST(test_initial_soc) {
  dg_graph *g = rig("\"capacity\":50,\"voltage\":350,\"resistance\":0.1", 0.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "bat.soc"), 0.6);
  dg_test_set_initial1(sim, "bat.soc", 0.25);
  ck_assert_double_eq(dg_test_signal(sim, "bat.soc"), 0.25);
  int id = dg_sim_signal_find(sim, "bat.soc");
  double v = 1.5;
  dg_error e;
  ck_assert_int_ne(dg_sim_set_initial(sim, 1, &id, &v, &e), DG_OK);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"capacity\":50,\"resistance\":0.1", "/blocks/bat", "give one of ocv, voltage"},
    {"\"capacity\":50,\"voltage\":300,\"ocv\":{\"soc\":[0,1],\"voltage\":[300,400]},"
     "\"resistance\":0.1",
     "/blocks/bat", "give only one of ocv, voltage"},
    {"\"capacity\":50,\"ocv\":{\"soc\":[0,1.2],\"voltage\":[300,400]},\"resistance\":0.1",
     "/blocks/bat/ocv/soc/1", "must be within [0, 1] (got 1.2)"},
    {"\"capacity\":0,\"voltage\":300,\"resistance\":0.1", "/blocks/bat/capacity",
     "must be > 0 (got 0)"},
    {"\"capacity\":50,\"voltage\":300,\"resistance\":0.1,\"soc_min\":0.5,\"soc_max\":0.4",
     "/blocks/bat/soc_max", "must be > soc_min (0.5) (got 0.4)"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(bad[_i].path, bad[_i].text,
                         "{\"drivegraph\":1,\"blocks\":{\"bat\":{\"type\":\"battery\",%s,"
                         "\"inputs\":{\"power\":0}}},\"connections\":[]}",
                         bad[_i].params);
}
END_TEST

/* The bindings loading refuses: a mechanical power drawn as electrical, a
 * machine's electrical power drawn twice, a battery with nothing bound. */
START_TEST(test_bindings) {
  const char *motor = "\"m\":{\"type\":\"motor\",\"inertia\":0.1,\"max_torque\":100,"
                      "\"max_rpm\":8000},\"ld\":{\"type\":\"load\",\"inertia\":1}";
  dg_test_graph_error_at(
      "/blocks/bat/inputs/power",
      "input \"power\" draws electrical power, and \"m.power\" is not one: bind "
      "\"m.electric_power\", the electrical power the motor takes from its bus",
      "{\"drivegraph\":1,\"blocks\":{%s,\"bat\":{\"type\":\"battery\",\"capacity\":50,"
      "\"voltage\":350,\"resistance\":0.1,\"inputs\":{\"power\":\"m.power\"}}},"
      "\"connections\":[[\"m.out\",\"ld.in\"]]}",
      motor);
  dg_test_graph_error_at(
      "/blocks/bat/inputs/power",
      "\"m.electric_power\" is drawn twice, by bus.p1 and by bat.power: a block's electrical "
      "power goes to one bus (bind it once; a bus sums several)",
      "{\"drivegraph\":1,\"blocks\":{%s,\"bus\":{\"type\":\"bus\",\"inputs\":{\"p1\":"
      "\"m.electric_power\"}},\"bat\":{\"type\":\"battery\",\"capacity\":50,"
      "\"voltage\":350,\"resistance\":0.1,\"inputs\":{\"power\":\"m.electric_power\"}}},"
      "\"connections\":[[\"m.out\",\"ld.in\"]]}",
      motor);
  dg_test_graph_error_at("/blocks/bat/inputs",
                         "input \"power\" (power the bus draws at the terminals (negative: "
                         "charging): a bus's power or a machine's electric_power) must be bound: "
                         "\"inputs\": { \"power\": \"<channel>\" | \"<block>.<signal>\" | number }",
                         "{\"drivegraph\":1,\"blocks\":{\"bat\":{\"type\":\"battery\","
                         "\"capacity\":50,\"voltage\":350,\"resistance\":0.1}},"
                         "\"connections\":[]}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("battery");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_constant_discharge);
  tcase_add_test(tc, test_constant_charge);
  tcase_add_test(tc, test_ocv_table);
  tcase_add_test(tc, test_efficiency);
  tcase_add_test(tc, test_limits);
  tcase_add_test(tc, test_taper);
  tcase_add_test(tc, test_failures);
  tcase_add_test(tc, test_initial_soc);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_bindings);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
