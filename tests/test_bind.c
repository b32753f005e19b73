/* Input bindings (lib/bind.c): constants, channels and signals as sources,
 * defaults, evaluation order, and every binding error with its place. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* Two rigs in one graph: torque_source a (2 N·m) on a 1 kg·m² load, and
 * torque_source b on another; b's `command` is bound by `bind`. */
static dg_graph *two_rigs(const char *bind) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"torque\":2},\"la\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"torque_source\",\"inputs\":{\"command\":%s}},"
      "\"lb\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"a.out\",\"la.in\"],[\"b.out\",\"lb.in\"]]}",
      bind);
}

static double signal_of(dg_sim *sim, const char *name) {
  double v = NAN;
  dg_error err;
  ck_assert_int_eq(dg_sim_signal_by_name(sim, name, &v, &err), DG_OK);
  return v;
}

static dg_sim *run(dg_graph *g, double dt, int steps) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  ck_assert_msg(sim, "%s", err.text);
  for (int i = 0; i < steps; i++)
    ck_assert_int_eq(dg_sim_step(sim, dt), DG_OK);
  return sim;
}

/* A constant: b's torque is 3 N·m on 1 kg·m², ω = 3t. */
START_TEST(test_constant) {
  dg_graph *g = two_rigs("3");
  ck_assert_int_eq(dg_graph_channel_count(g), 0);
  dg_sim *sim = run(g, 0.01, 100);
  ck_assert_double_eq_tol(signal_of(sim, "lb.omega"), 3.0, 1e-12);
  ck_assert_double_eq_tol(signal_of(sim, "b.torque"), 3.0, 1e-15);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A channel named by the file: listed with its place, 0 until given, then
 * followed (1.5 N·m from t = 0.5 s: ω(1) = 0.75). */
START_TEST(test_channel) {
  dg_graph *g = two_rigs("\"cmd\"");
  ck_assert_int_eq(dg_graph_channel_count(g), 1);
  ck_assert_str_eq(dg_graph_channel_name(g, 0), "cmd");
  ck_assert_str_eq(dg_graph_channel_path(g, 0), "/blocks/b/inputs/command");
  dg_sim *sim = run(g, 0.01, 50);
  ck_assert_double_eq(signal_of(sim, "lb.omega"), 0.0);
  int ch = dg_sim_input_find(sim, "cmd");
  ck_assert_int_ge(ch, 0);
  ck_assert(!dg_sim_input_is_integer(sim, ch));
  dg_sim_set_input(sim, ch, 1.5);
  for (int i = 0; i < 50; i++)
    ck_assert_int_eq(dg_sim_step(sim, 0.01), DG_OK);
  ck_assert_double_eq_tol(signal_of(sim, "lb.omega"), 0.75, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Another block's signal, evaluated at every RK4 stage: b's torque is a's
 * speed 2t, so ω_b = t² — RK4 is exact for it, so the only error is
 * round-off. Read at the stage ends instead it would be O(dt) off. */
START_TEST(test_signal_inside_the_step) {
  dg_graph *g = two_rigs("\"la.omega\"");
  dg_sim *sim = run(g, 0.1, 10);
  ck_assert_double_eq_tol(signal_of(sim, "la.omega"), 2.0, 1e-12);
  ck_assert_double_eq_tol(signal_of(sim, "lb.omega"), 1.0, 1e-12);
  ck_assert_double_eq_tol(signal_of(sim, "b.torque"), 2.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A chain of feedthrough signals evaluated in dependency order whatever the
 * order of the file: c.command ← b.torque ← a.torque (each a source's
 * torque, which depends on its command at the same instant). */
START_TEST(test_feedthrough_order) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"c\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"b.torque\"}},"
      "\"lc\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"torque_source\",\"torque\":1,\"inputs\":{\"command\":\"a.torque\"}},"
      "\"lb\":{\"type\":\"load\",\"inertia\":1},"
      "\"a\":{\"type\":\"torque_source\",\"torque\":2},\"la\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"a.out\",\"la.in\"],[\"b.out\",\"lb.in\"],[\"c.out\",\"lc.in\"]]}");
  dg_sim *sim = run(g, 0.01, 100);
  /* a: 2, b: 1 + 2 = 3, c: 3 */
  ck_assert_double_eq_tol(signal_of(sim, "lc.omega"), 3.0, 1e-12);
  ck_assert_double_eq_tol(signal_of(sim, "lb.omega"), 3.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* An integer input makes its channel integer (schedules step). */
START_TEST(test_integer_channel) {
  dg_graph *g = dg_test_graph_file("graphs/hatchback_fwd_manual.json");
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  ck_assert_msg(sim, "%s", err.text);
  ck_assert(dg_sim_input_is_integer(sim, DG_INPUT_GEAR));
  ck_assert(!dg_sim_input_is_integer(sim, DG_INPUT_THROTTLE));
  ck_assert(!dg_sim_input_is_integer(sim, -1));
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

static const struct {
  const char *bind, *path, *text;
} bad[] = {
    {"{\"comand\":1}", "/blocks/b/inputs/comand",
     "unknown input of a torque_source; did you mean \"command\"?"},
    {"{\"xyzzy\":1}", "/blocks/b/inputs/xyzzy",
     "unknown input of a torque_source (its inputs: command)"},
    {"[1]", "/blocks/b/inputs",
     "expected an object binding inputs to channels, signals or numbers ({ \"pedal\": \"c1\" }), "
     "got array"},
    {"{\"command\":[1]}", "/blocks/b/inputs/command",
     "expected a channel name, \"block.signal\" or a number, got array"},
    {"{\"command\":\"al.omega\"}", "/blocks/b/inputs/command",
     "\"al.omega\": unknown block \"al\"; did you mean \"a\"? (a source is a channel name, "
     "\"block.signal\" or a number)"},
    {"{\"command\":\"la.omgea\"}", "/blocks/b/inputs/command",
     "\"la.omgea\": a load has no signal \"omgea\"; did you mean \"omega\"?"},
    {"{\"command\":\"a b\"}", "/blocks/b/inputs/command",
     "\"a b\": a channel name uses only letters, digits, '_' and '-' (or give \"block.signal\" "
     "or a number)"},
    {"{\"command\":\"\"}", "/blocks/b/inputs/command",
     "\"\": a channel name uses only letters, digits, '_' and '-' (or give \"block.signal\" or a "
     "number)"},
    {"{\"command\":\"b.torque\"}", "/blocks/b/inputs/command",
     "\"b.torque\": input \"command\" follows the block's own signal \"torque\", which its "
     "inputs make at the same instant: a loop through the block's own output, the input defined "
     "by itself; bind another block's signal, a channel or a number"},
};

START_TEST(test_bad_binding) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"torque\":2},\"la\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"torque_source\",\"inputs\":%s},"
      "\"lb\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"a.out\",\"la.in\"],[\"b.out\",\"lb.in\"]]}",
      bad[_i].bind);
}
END_TEST

/* A constant outside the input's range. */
START_TEST(test_constant_range) {
  dg_test_graph_error_at(
      "/blocks/c/inputs/engagement", "must be in [0, 1], got 2",
      "{\"drivegraph\":1,\"blocks\":{\"s\":{\"type\":\"torque_source\",\"torque\":1},"
      "\"c\":{\"type\":\"clutch\",\"max_torque\":10,\"inputs\":{\"engagement\":2}},"
      "\"l\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"s.out\",\"c.in\"],[\"c.out\",\"l.in\"]]}");
}
END_TEST

/* A loop through two blocks is named link by link. */
START_TEST(test_loop_of_two) {
  dg_error e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"b.torque\"}},"
      "\"la\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"torque_source\",\"inputs\":{\"command\":\"a.power\"}},"
      "\"lb\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"a.out\",\"la.in\"],[\"b.out\",\"lb.in\"]]}");
  ck_assert_str_eq(e.path, "/blocks/a/inputs");
  ck_assert_msg(strstr(e.text, "a.power -> b.command") && strstr(e.text, "b.torque -> a.command"),
                "%s", e.text);
}
END_TEST

/* A speed is no loop: a's command from its own shaft's speed. */
START_TEST(test_speed_is_no_loop) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"a\":{\"type\":\"torque_source\",\"torque\":1,\"inputs\":{\"command\":\"a.omega\"}},"
      "\"la\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"a.out\",\"la.in\"]]}");
  /* ω' = 1 + ω: ω(t) = e^t − 1 */
  dg_sim *sim = run(g, 0.001, 1000);
  ck_assert_double_eq_tol(signal_of(sim, "la.omega"), exp(1.0) - 1.0, 1e-11);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* "@vehicle.speed" with two vehicles: the gearbox must be bound. */
START_TEST(test_ambiguous_default) {
  dg_error e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"m\":{\"type\":\"motor\",\"max_torque\":100,\"max_rpm\":9000,\"inertia\":0.1},"
      "\"gb\":{\"type\":\"gearbox\",\"ratios\":[3,1]},"
      "\"w\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"normal_load\":3000},"
      "\"v1\":{\"type\":\"vehicle\",\"mass\":1000,\"wheelbase\":2.5},"
      "\"w2\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"normal_load\":3000},"
      "\"v2\":{\"type\":\"vehicle\",\"mass\":1000,\"wheelbase\":2.5}},"
      "\"connections\":[[\"m.out\",\"gb.in\"],[\"gb.out\",\"w.hub\"],"
      "[\"w.ground\",\"v1.rear_left\"],[\"w2.ground\",\"v2.rear_left\"]]}");
  ck_assert_str_eq(e.path, "/blocks/gb/inputs");
  ck_assert_msg(strstr(e.text, "input \"vehicle_speed\"") && strstr(e.text, "\"v1\", \"v2\"") &&
                    strstr(e.text, "\"vehicle_speed\": \"v1.speed\""),
                "%s", e.text);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("bind");
  TCase *tc = tcase_create("sources");
  tcase_add_test(tc, test_constant);
  tcase_add_test(tc, test_channel);
  tcase_add_test(tc, test_signal_inside_the_step);
  tcase_add_test(tc, test_feedthrough_order);
  tcase_add_test(tc, test_integer_channel);
  tcase_add_test(tc, test_speed_is_no_loop);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_bad_binding, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_constant_range);
  tcase_add_test(tc, test_loop_of_two);
  tcase_add_test(tc, test_ambiguous_default);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
