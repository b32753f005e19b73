/* retarder (examples/retarder/retarder.c): registration through the plugin
 * entry point (linked in, and dlopen'ed from the built module), the
 * parameter table, and the physics against closed forms:
 *   fill lag          f(t) = u + (f0 − u)·exp(−t/τ)
 *   quadratic braking J ω̇ = −k ω|ω|      → ω = ω0 / (1 + k ω0 t / J)
 *   torque limit      J ω̇ = −T_max       → ω = ω0 − T_max t / J
 *   driven shaft      J ω̇ = T_s − k ω²   → ω = ω_ss tanh(t √(T_s k) / J)
 * and the energy audit booking the absorbed energy to the retarder. */
#include "testutil.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* retarder.c is linked into this program: its entry point registers the
 * class like a plugin would. */
int drivegraph_plugin_init(dg_registry *reg, dg_error *err);

/* RK4 at dt = 1e-3 on these smooth rigs: the global error is O(dt⁴) times
 * derivatives of order 1, ~1e-12; 1e-9 leaves room for the round-off of a
 * few thousand steps and is still far below any modelling error. */
#define RK4_TOL 1e-9
#define DT 1e-3

static dg_registry *registry(void) {
  dg_registry *reg = dg_registry_new();
  ck_assert_ptr_nonnull(reg);
  dg_error err;
  ck_assert_int_eq(drivegraph_plugin_init(reg, &err), DG_OK);
  return reg;
}

/* A flywheel of 2 kg·m² on the retarder's `in`; `params` are the
 * retarder's (its own inertia comes on top). */
static void rig_json(char *buf, size_t size, const char *params) {
  snprintf(buf, size,
           "{\"drivegraph\":1,\"blocks\":{\"fly\":{\"type\":\"inertia\",\"inertia\":2},"
           "\"r\":{\"type\":\"retarder\",%s}},\"connections\":[[\"fly.out\",\"r.in\"]]}",
           params);
}

typedef struct rig {
  dg_registry *reg;
  dg_graph *g;
  dg_sim *sim;
  int input; /* the "retarder" input */
} rig;

static rig rig_new(const char *params) {
  rig r;
  char json[1024];
  rig_json(json, sizeof json, params);
  r.reg = registry();
  r.g = dg_test_graph_reg(r.reg, json);
  r.sim = dg_test_sim(r.g);
  r.input = dg_sim_input_find(r.sim, "retarder");
  ck_assert_int_ge(r.input, DG_NUM_STD_INPUTS);
  return r;
}

static void rig_free(rig *r) {
  dg_sim_free(r->sim);
  dg_graph_free(r->g);
  dg_registry_free(r->reg);
}

/* Initial shaft speed and fill level (both through signals). */
static void set_initial(dg_sim *sim, double omega, double fill) {
  dg_test_set_initial(sim, 2, (const char *[]){"r.omega", "r.fill"}, (double[]){omega, fill});
}

static void run(dg_sim *sim, double seconds) { dg_test_step(sim, (int)lround(seconds / DT), DT); }

/* ------------------------------------------------------------------------ */
/* Registration                                                             */

START_TEST(test_registers) {
  dg_registry *reg = registry();
  const dg_block_class *k = dg_registry_find(reg, "retarder");
  ck_assert_ptr_nonnull(k);
  ck_assert_int_eq(k->num_states, 1);
  /* a second registration of the same type is refused */
  dg_error err;
  ck_assert_int_eq(drivegraph_plugin_init(reg, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "block type \"retarder\" is already registered");
  dg_registry_free(reg);
}
END_TEST

/* The built-in registry does not know the type: the plugin is needed. */
START_TEST(test_unknown_without_plugin) {
  char json[1024];
  rig_json(json, sizeof json, "\"max_torque\":100,\"coefficient\":0.01");
  dg_error err = dg_test_graph_error(json);
  ck_assert_int_eq(err.code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.path, "/blocks/r/type");
  ck_assert_msg(strstr(err.text, "unknown block type \"retarder\"") == err.text, "%s", err.text);
}
END_TEST

/* Runs the example truck for `seconds` under its scenario; returns the
 * body speed. */
static double truck_run(const dg_registry *reg, double seconds, bool retarder_off, double *work,
                        dg_energy *energy) {
  char gpath[1024], spath[1024];
  dg_test_path(gpath, sizeof gpath, "examples/retarder/truck_retarder.json");
  dg_test_path(spath, sizeof spath, "examples/retarder/descent.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(reg, gpath, &err);
  ck_assert_msg(g != NULL, "%s: %s", err.path, err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_scenario *scn = dg_scenario_load_file(spath, &err);
  ck_assert_msg(scn != NULL, "%s: %s", err.path, err.text);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv != NULL, "%s: %s", err.path, err.text);
  int in = dg_sim_input_find(sim, "retarder");
  ck_assert_int_ge(in, 0);
  long n = lround(seconds / DT);
  for (long i = 0; i < n; i++) {
    dg_driver_apply(drv, dg_sim_time(sim));
    if (retarder_off)
      dg_sim_set_input(sim, in, 0.0);
    ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
  }
  double v = dg_test_signal(sim, "body.speed");
  if (work)
    *work = dg_sim_block_work(sim, dg_test_block_index(g, "retarder"));
  if (energy)
    dg_sim_energy(sim, energy);
  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(sim);
  dg_graph_free(g);
  return v;
}

/* The built module, loaded the way `drivegraph --plugin` loads it, gives
 * the same class: bit-identical results to the linked-in copy. */
START_TEST(test_dlopen_plugin) {
  const char *path = getenv("RETARDER_PLUGIN");
  ck_assert_msg(path != NULL, "RETARDER_PLUGIN (the built libretarder.so) is not set");
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(lib != NULL, "dlopen: %s", dlerror());
  dg_plugin_init_fn init;
  *(void **)&init = dlsym(lib, DG_PLUGIN_ENTRY);
  ck_assert_msg(init != NULL, "no %s in %s", DG_PLUGIN_ENTRY, path);
  /* only the entry point is exported */
  ck_assert_ptr_null(dlsym(lib, "retarder_class"));

  dg_registry *plugin_reg = dg_registry_new();
  dg_error err;
  ck_assert_int_eq(init(plugin_reg, &err), DG_OK);
  ck_assert_ptr_nonnull(dg_registry_find(plugin_reg, "retarder"));
  dg_registry *linked_reg = registry();
  ck_assert_ptr_ne(dg_registry_find(plugin_reg, "retarder"),
                   dg_registry_find(linked_reg, "retarder"));

  double w_plugin, w_linked;
  double v_plugin = truck_run(plugin_reg, 8.0, false, &w_plugin, NULL);
  double v_linked = truck_run(linked_reg, 8.0, false, &w_linked, NULL);
  ck_assert(v_plugin == v_linked);
  ck_assert(w_plugin == w_linked);
  ck_assert_double_lt(w_plugin, -1e5); /* it braked */
  dg_registry_free(plugin_reg);
  dg_registry_free(linked_reg);
  dlclose(lib);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameters: errors come from the table and the check hook               */

static const struct {
  const char *params;
  const char *path;
  const char *text;
} bad_params[] = {
    {"\"coefficient\":0.01", "/blocks/r/max_torque", "missing required number (N*m)"},
    {"\"max_torque\":-5,\"coefficient\":0.01", "/blocks/r/max_torque", "must be > 0 (got -5)"},
    {"\"max_torque\":100,\"coefficient\":0.01,\"full_torque_rpm\":1000",
     "/blocks/r/full_torque_rpm", "give coefficient or full_torque_rpm, not both"},
    {"\"max_torque\":100", "/blocks/r",
     "missing coefficient or full_torque_rpm (one of them is required)"},
    {"\"max_torque\":100,\"coefficient\":0.01,\"fill_time\":0", "/blocks/r/fill_time",
     "must be > 0 (got 0)"},
    {"\"max_torque\":100,\"coefficient\":0.01,\"brake_blend\":1.5", "/blocks/r/brake_blend",
     "must be <= 1 (got 1.5)"},
    {"\"max_torque\":100,\"coeficient\":0.01", "/blocks/r/coeficient",
     "unknown parameter; did you mean \"coefficient\"?"},
};

START_TEST(test_bad_params) {
  dg_registry *reg = registry();
  char json[1024];
  rig_json(json, sizeof json, bad_params[_i].params);
  dg_error err;
  dg_graph *g = dg_graph_load_string(reg, json, "test.json", &err);
  ck_assert_ptr_null(g);
  ck_assert_str_eq(err.path, bad_params[_i].path);
  ck_assert_str_eq(err.text, bad_params[_i].text);
  dg_registry_free(reg);
}
END_TEST

/* full_torque_rpm: k = T_max / ω_f², so a quarter of T_max at ω_f / 2 and
 * the limit beyond ω_f. */
START_TEST(test_full_torque_rpm) {
  rig r = rig_new("\"max_torque\":2000,\"full_torque_rpm\":1500");
  double wf = 1500.0 / DG_RPM_PER_RAD_S;
  set_initial(r.sim, wf / 2, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.torque"), -500.0, 1e-9);
  set_initial(r.sim, -2.0 * wf, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.torque"), 2000.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.rpm"), -3000.0, 1e-9);
  rig_free(&r);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Dynamics                                                                 */

/* The fill level's first-order lag, from the stalk and then the pedal. */
START_TEST(test_fill_lag) {
  rig r = rig_new("\"max_torque\":100,\"coefficient\":0.01,\"fill_time\":0.2,"
                  "\"brake_blend\":0.8");
  dg_sim_set_input(r.sim, r.input, 1.0);
  ck_assert_double_eq(dg_test_signal(r.sim, "r.command"), 1.0);
  run(r.sim, 0.5);
  double f1 = 1.0 - exp(-0.5 / 0.2);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.fill"), f1, RK4_TOL);
  /* stalk off, brake pedal at 0.5: u = 0.8 · 0.5 */
  dg_sim_set_input(r.sim, r.input, 0.0);
  dg_sim_set_input(r.sim, DG_INPUT_BRAKE, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.command"), 0.4, 1e-15);
  run(r.sim, 0.3);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.fill"), 0.4 + (f1 - 0.4) * exp(-0.3 / 0.2),
                          RK4_TOL);
  /* commands outside 0..1 are clamped */
  dg_sim_set_input(r.sim, r.input, 7.0);
  ck_assert_double_eq(dg_test_signal(r.sim, "r.command"), 1.0);
  rig_free(&r);
}
END_TEST

/* J ω̇ = −k ω|ω| (below the limit, full fill held by a full command):
 * ω = ω0 / (1 + k ω0 t / J), in both directions of rotation. */
START_TEST(test_quadratic_spindown) {
  static const double w0s[2] = {100.0, -100.0};
  double w0 = w0s[_i];
  rig r = rig_new("\"max_torque\":10000,\"coefficient\":0.01,\"inertia\":0.5");
  const double k = 0.01, J = 2.5;
  set_initial(r.sim, w0, 1.0);
  dg_sim_set_input(r.sim, r.input, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.torque"), -k * w0 * fabs(w0), 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.power"), k * w0 * w0 * fabs(w0), 1e-6);
  run(r.sim, 5.0);
  double w = w0 / (1.0 + k * fabs(w0) * 5.0 / J); /* = w0 / 3 */
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.omega"), w, RK4_TOL * fabs(w0));
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "fly.omega"), w, RK4_TOL * fabs(w0));
  ck_assert_double_eq(dg_test_signal(r.sim, "r.fill"), 1.0);
  rig_free(&r);
}
END_TEST

/* Above ω_c = √(T_max/k) the torque is T_max: a linear decay that reaches
 * ω_c at t_c = (ω0 − ω_c) J / T_max (a step boundary here, so RK4 never
 * straddles the kink), then the hyperbola from ω_c. */
START_TEST(test_torque_limit) {
  rig r = rig_new("\"max_torque\":50,\"coefficient\":0.01,\"inertia\":0.5");
  const double k = 0.01, J = 2.5, tmax = 50.0;
  const double wc = sqrt(tmax / k), w0 = wc + 30.0; /* t_c = 30 · 2.5 / 50 = 1.5 s */
  set_initial(r.sim, w0, 1.0);
  dg_sim_set_input(r.sim, r.input, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.torque"), -tmax, 1e-12);
  run(r.sim, 1.0);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.omega"), w0 - tmax / J * 1.0, RK4_TOL);
  run(r.sim, 0.5);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.omega"), wc, RK4_TOL);
  run(r.sim, 2.5);
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.omega"), wc / (1.0 + k * wc * 2.5 / J),
                          RK4_TOL * w0);
  rig_free(&r);
}
END_TEST

/* A constant torque T_s through the retarder (in = out) into a flywheel,
 * from rest with full fill: J ω̇ = T_s − k ω², ω = ω_ss tanh(t √(T_s k)/J)
 * with ω_ss = √(T_s/k); every shaft turns at one speed. */
START_TEST(test_driven_through) {
  dg_registry *reg = registry();
  dg_graph *g =
      dg_test_graph_reg(reg, "{\"drivegraph\":1,\"blocks\":{"
                             "\"src\":{\"type\":\"torque_source\",\"torque\":40,\"inertia\":0.5},"
                             "\"r\":{\"type\":\"retarder\",\"max_torque\":1000,"
                             "\"coefficient\":0.1,\"inertia\":0.5},"
                             "\"fly\":{\"type\":\"inertia\",\"inertia\":1.5}},"
                             "\"connections\":[[\"src.out\",\"r.in\"],[\"r.out\",\"fly.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  set_initial(sim, 0.0, 1.0);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "retarder"), 1.0);
  const double ts = 40.0, k = 0.1, J = 2.5, wss = sqrt(ts / k);
  static const double times[] = {1.0, 3.0, 10.0};
  double t = 0.0;
  for (int i = 0; i < 3; i++) {
    run(sim, times[i] - t);
    t = times[i];
    double w = wss * tanh(t * sqrt(ts * k) / J);
    ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), w, RK4_TOL * wss);
    ck_assert(dg_test_signal(sim, "src.omega") == dg_test_signal(sim, "fly.omega"));
    ck_assert(dg_sim_port_speed(sim, "r.out") == dg_sim_port_speed(sim, "r.in"));
  }
  /* after 10 s (8 time constants J/√(T_s k)) the retarder holds the torque */
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.torque"), -ts, 1e-4);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Nobody computes the retarder's energy: the audit books T·ω to it, and it
 * equals the kinetic energy lost; the fill lag and the limit included. */
START_TEST(test_energy_audit) {
  rig r = rig_new("\"max_torque\":50,\"coefficient\":0.01,\"inertia\":0.5,\"fill_time\":0.3");
  set_initial(r.sim, 120.0, 0.0);
  dg_sim_set_input(r.sim, r.input, 1.0);
  double ke0 = dg_sim_kinetic_energy(r.sim);
  ck_assert_double_eq_tol(ke0, 0.5 * 2.5 * 120.0 * 120.0, 1e-9);
  run(r.sim, 6.0);
  dg_energy e;
  dg_sim_energy(r.sim, &e);
  double work = dg_sim_block_work(r.sim, dg_test_block_index(r.g, "r"));
  double lost = dg_sim_kinetic_energy(r.sim) - ke0;
  ck_assert_double_lt(lost, -0.5 * ke0);
  ck_assert_double_eq_tol(work, lost, 1e-9 * ke0);
  ck_assert_double_eq_tol(e.work_out, work, 1e-12 * ke0);
  ck_assert_double_eq(e.work_in, 0.0);
  ck_assert_double_lt(fabs(e.balance_error), 1e-9 * ke0);
  double w = dg_test_signal(r.sim, "r.omega");
  ck_assert_double_eq_tol(dg_test_signal(r.sim, "r.power"),
                          -dg_test_signal(r.sim, "r.torque") * w, 1e-9);
  rig_free(&r);
}
END_TEST

/* The example truck coasting down a 6 % grade in top gear from 80 km/h:
 * engine braking alone lets it run away (measured +22.6 m/s in 60 s); with
 * the retarder switched on at 2 s it settles near 89 km/h (+2.55 m/s). The
 * bounds leave a margin of ~10 % of each change; the audit closes to
 * round-off (measured 2e-14 of the work). */
START_TEST(test_truck_descent) {
  dg_registry *reg = registry();
  double work, work_off;
  dg_energy e;
  double v_on = truck_run(reg, 60.0, false, &work, &e);
  double v_off = truck_run(reg, 60.0, true, &work_off, NULL);
  const double v0 = 80.0 / 3.6;
  ck_assert_msg(v_on > v0 && v_on < v0 + 2.8, "with the retarder: %g m/s", v_on);
  ck_assert_msg(v_off > v0 + 20.0, "without the retarder: %g m/s", v_off);
  ck_assert_double_eq(work_off, 0.0);
  /* it absorbs most of the potential energy released (~2.8e7 J) */
  ck_assert_double_lt(work, -2e7);
  ck_assert_double_lt(fabs(e.balance_error), 1e-9 * (e.work_in - e.work_out));
  dg_registry_free(reg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("retarder");
  TCase *tc = tcase_create("registration");
  tcase_add_test(tc, test_registers);
  tcase_add_test(tc, test_unknown_without_plugin);
  tcase_add_test(tc, test_dlopen_plugin);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad_params / sizeof bad_params[0]));
  tcase_add_test(tc, test_full_torque_rpm);
  suite_add_tcase(s, tc);
  tc = tcase_create("dynamics");
  tcase_add_test(tc, test_fill_lag);
  tcase_add_loop_test(tc, test_quadratic_spindown, 0, 2);
  tcase_add_test(tc, test_torque_limit);
  tcase_add_test(tc, test_driven_through);
  tcase_add_test(tc, test_energy_audit);
  tcase_add_test(tc, test_truck_descent);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
