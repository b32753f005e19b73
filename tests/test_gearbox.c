/* gearbox: neutral, ratios, reverse, efficiency, shifts through friction
 * (a powershift clutch's torque and inertia phases, a synchronizer, the
 * throttle cut, the capacity from the engine's peak torque), rigid shifts
 * with torque interrupt and throttle cut, lock-out, momentum-conserving
 * re-engagement, auto_rpm / shift_map / auto_reverse policies, the C
 * callback, modes for validate, and every parameter error.
 *
 * Rig: source → gearbox → load. With constant torques (the load's Coulomb
 * term c0 at a speed that keeps its sign) every acceleration is constant,
 * which RK4 integrates exactly: the closed forms below hold to round-off. */
#include "testutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Constant accelerations: what remains is round-off, ~1e-16 per operation
 * over ~1e4 operations, relative to the speeds (~1..100 rad/s). */
#define TOL_EXACT 1e-10
#define DT 1e-3
#define RPM DG_RPM_PER_RAD_S

/* ------------------------------------------------------------------------ */
/* Test-only classes                                                        */

/* "test_engine": a torque source that honours its input "throttle_cut" (as
 * the engine does: no torque while it is >= 0.5; by default the gearbox's
 * signal) and exposes it as the signal "cut". */
enum { ENG_OUT };
typedef struct eng_params {
  double inertia, torque;
} eng_params;
static const dg_port_def eng_ports[] = {
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def eng_params_table[] = {
    DG_NUMBER(eng_params, inertia, .unit = "kg*m^2", .def = 0.2, .flags = DG_P_MIN,
              .doc = "inertia"),
    DG_NUMBER(eng_params, torque, .unit = "N*m", .doc = "torque unless cut"),
    {0},
};
static const dg_signal_def eng_signals[] = {
    {.name = "omega", .unit = "rad/s", .port = ENG_OUT, .scale = 1},
    {.name = "cut", .unit = "", .port = DG_SIGNAL_HOOK},
    {0},
};
static const dg_input_def eng_inputs[] = {
    {.name = "throttle_cut", .unit = "", .doc = "cut", .source = ">throttle_cut"},
    {0},
};
static void eng_state_upstream(dg_block *self, dg_topo *topo) {
  const eng_params *p = self->params;
  dg_topo_inertia(topo, self, ENG_OUT, p->inertia);
}
static void eng_torque(dg_block *self, dg_ctx *ctx) {
  const eng_params *p = self->params;
  dg_port_add_torque(ctx, self, ENG_OUT, dg_block_input(ctx, self, 0) >= 0.5 ? 0.0 : p->torque);
}
static double eng_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  (void)index;
  return dg_block_input(ctx, self, 0);
}
static const dg_block_class test_engine = {
    .abi = DG_BLOCK_ABI, .type = "test_engine", .doc = "test: torque source cut by throttle_cut",
    .ports = eng_ports, .params = eng_params_table, .params_size = sizeof(eng_params),
    .signals = eng_signals, .inputs = eng_inputs,
    .state_upstream = eng_state_upstream, .torque_downstream = eng_torque, .signal = eng_signal,
};

/* The test registry (with "test_speedo", testutil.h) plus test_engine. */
static dg_registry *registry(void) {
  dg_registry *reg = dg_test_registry();
  dg_error err;
  ck_assert_msg(dg_registry_add(reg, &test_engine, &err) == DG_OK, "%s", err.text);
  return reg;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

/* src → gb → ld; each argument is the inside of the block's object. */
static dg_graph *rig(const dg_registry *reg, const char *src, const char *gb, const char *ld) {
  return dg_test_graph_regf(
      reg,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{%s},\"gb\":{\"type\":\"gearbox\",%s},"
      "\"ld\":{\"type\":\"load\",%s}},"
      "\"connections\":[[\"src.out\",\"gb.in\"],[\"gb.out\",\"ld.in\"]]}",
      src, gb, ld);
}

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* ------------------------------------------------------------------------ */
/* Kinematics and torque                                                    */

/* Neutral: the input spins up on its own inertia (source + input shaft),
 * T/(I_s + I_gb), while the load coasts on its Coulomb drag, ω0 − c0/I_L·t,
 * exactly as if the source were not there. */
START_TEST(test_neutral_decouples) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.3,\"torque\":10",
                    "\"ratios\":[3,2,1],\"reverse\":3,\"inertia\":0.02,\"start_gear\":0",
                    "\"inertia\":2,\"c0\":4");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_set_initial1(sim, "ld.omega", 50.0);
  ck_assert_double_eq(sig(sim, "gb.omega"), 0.0); /* the projection leaves the input alone */
  dg_test_step(sim, 1000, DT);
  ck_assert_double_eq_tol(sig(sim, "gb.omega"), 10.0 / 0.32 * 1.0, TOL_EXACT * 31.25);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), 50.0 - 4.0 / 2.0 * 1.0, TOL_EXACT * 50);
  ck_assert_double_eq(sig(sim, "gb.gear"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Each gear, with the manual box taking the gear input at the first step:
 *   M = I_L + (I_s + I_gb) r²,   ω_L(t) = r η T / (I_L + η (I_s + I_gb) r²) · t,
 * ω_in = r ω_L, r = ratios[g−1], or −reverse for R (the output turns
 * backwards). The source drives in every case, so the load receives η of
 * the power the mesh takes from the input shaft (the source's torque less
 * the input inertias' inertial torque). */
static const int gears[] = {1, 2, 3, -1};
static const double gear_r[] = {3.5, 2.0, 1.25, -3.2};

START_TEST(test_each_gear_ratio) {
  const double T = 12.0, eta = 0.9, Iin = 0.3 + 0.05, IL = 2.0;
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.3,\"torque\":12",
                    "\"ratios\":[3.5,2.0,1.25],\"reverse\":3.2,\"efficiency\":0.9,"
                    "\"inertia\":0.05",
                    "\"inertia\":2");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(sig(sim, "gb.gear"), 0.0); /* neutral until the first step */
  dg_sim_set_input(sim, DG_INPUT_GEAR, gears[_i]);
  dg_test_step(sim, 1000, DT);
  double r = gear_r[_i], M = IL + Iin * r * r, m;
  ck_assert_int_eq(dg_sim_topology_changes(sim), 1); /* engaged directly, no shift */
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, M, 1e-14 * M);
  double w = r * eta * T / (IL + eta * Iin * r * r) * 1.0;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * fabs(w));
  ck_assert_double_eq_tol(sig(sim, "gb.omega"), r * w, TOL_EXACT * fabs(r * w));
  ck_assert_double_eq_tol(sig(sim, "gb.omega_out"), w, TOL_EXACT * fabs(w));
  ck_assert_double_eq_tol(sig(sim, "gb.rpm"), r * w * RPM, TOL_EXACT * fabs(r * w * RPM));
  ck_assert_double_eq(sig(sim, "gb.gear"), gears[_i]);
  ck_assert_double_eq(sig(sim, "gb.ratio"), r);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  if (gears[_i] < 0) /* reverse drives the output backwards, the input forwards */
    ck_assert(sig(sim, "ld.omega") < 0.0 && sig(sim, "gb.omega") > 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Braking through the box: the load drives the input shaft against the
 * source's negative torque and the input receives η of the power the
 * mesh takes from the load: ω_L = ω0 − r T / (r² I_in + η I_L) · t. */
START_TEST(test_efficiency_braking) {
  const double T = 12.0, eta = 0.8, r = 2.0, M = 0.35 * 4.0 + eta * 2.0;
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.3,\"torque\":-12",
                    "\"ratios\":[3.5,2.0],\"efficiency\":0.8,\"inertia\":0.05,\"start_gear\":2",
                    "\"inertia\":2");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2); /* keeps the start gear */
  dg_test_set_initial1(sim, "ld.omega", 100.0);
  ck_assert_double_eq_tol(sig(sim, "gb.omega"), 200.0, 1e-12);
  dg_test_step(sim, 1000, DT);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 0);
  double w = 100.0 - r * T / M;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * 100);
  /* and the loss is booked: kinetic change = work of the source + loss */
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert(e.efficiency_loss < 0.0);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.kinetic_start);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Shifts                                                                   */

/* test_engine 40 N·m, I_E = 0.2; gearbox I_gb = 0.05; load I_L = 2, c0 = 3
 * (the load starts at 5 rad/s so the Coulomb term is on from the start). */
#define SHIFT_SRC "\"type\":\"test_engine\",\"inertia\":0.2,\"torque\":40"
#define SHIFT_GB                                                                               \
  "\"ratios\":[3,2,1.4],\"inertia\":0.05,\"shift_time\":0.2,\"start_gear\":1,"             \
  "\"shift\":{\"engagement\":\"rigid\"}"
#define SHIFT_LD "\"inertia\":2,\"c0\":3"
static const double IE = 0.25, IL = 2.0, C0 = 3.0, TQ = 40.0;

/* Runs 0.5 s in first gear and checks it against the closed form. */
static void first_gear(dg_sim *sim, double *wl, double *we) {
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_test_set_initial1(sim, "ld.omega", 5.0);
  dg_test_step(sim, 500, DT);
  double M1 = IL + IE * 9.0;
  *wl = 5.0 + (3.0 * TQ - C0) / M1 * 0.5;
  *we = 3.0 * *wl;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), *wl, TOL_EXACT * *wl);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
}

/* A manual shift 1 → 2: for shift_time = 0.2 s (200 steps) the box is
 * decoupled and "throttle_cut" is 1, so the engine side keeps its speed
 * exactly (no torque on I_E) and the load coasts exactly, ω_L0 − c0/I_L·t.
 * At the end of the 200th step gear 2 engages conserving momentum:
 *   ω_L' = (I_L ω_L + r2 I_E ω_E) / (I_L + r2² I_E)
 * and the next step accelerates at (r2 T − c0)/(I_L + r2² I_E). */
static double engage(double wl, double we, double r) {
  return (IL * wl + r * IE * we) / (IL + IE * r * r);
}

START_TEST(test_manual_shift_interrupt) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, SHIFT_SRC, SHIFT_GB, SHIFT_LD);
  dg_sim *sim = dg_test_sim(g);
  double wl0, we0;
  first_gear(sim, &wl0, &we0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2.2); /* rounds to 2 */
  for (int k = 1; k < 200; k++) {
    dg_test_step(sim, 1, DT);
    ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
    ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
    ck_assert_double_eq(sig(sim, "gb.gear"), 2.0);
    ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
    ck_assert_int_eq(dg_sim_dof_count(sim), 2);
    ck_assert_double_eq_tol(sig(sim, "src.omega"), we0, TOL_EXACT * we0);
    ck_assert_double_eq_tol(sig(sim, "ld.omega"), wl0 - C0 / IL * k * DT, TOL_EXACT * wl0);
  }
  dg_test_step(sim, 1, DT); /* the 200th decoupled step, then engagement */
  double wl = engage(wl0 - C0 / IL * 0.2, we0, 2.0);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), wl, TOL_EXACT * wl);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), 2.0 * wl, TOL_EXACT * wl);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 2.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 1, DT);
  double w = wl + (2.0 * TQ - C0) / (IL + IE * 4.0) * DT;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * w);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 2); /* decouple, engage */
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A request during the lock-out (3, made half-way through the 1 → 2 shift)
 * is deferred: the first shift completes (gear 2 engages at the end of its
 * 200th step), the policy sees the 3 at the next step and shifts again,
 * for another 200 steps in which the load coasts exactly. */
START_TEST(test_lockout_defers_request) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, SHIFT_SRC, SHIFT_GB, SHIFT_LD);
  dg_sim *sim = dg_test_sim(g);
  double wl0, we0;
  first_gear(sim, &wl0, &we0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 100, DT);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 3);
  dg_test_step(sim, 99, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 2.0); /* still the first shift */
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 2.0); /* completed */
  ck_assert_double_eq(sig(sim, "gb.ratio"), 2.0);
  double wl1 = engage(wl0 - C0 / IL * 0.2, we0, 2.0);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), wl1, TOL_EXACT * wl1);
  for (int k = 1; k < 200; k++) {
    dg_test_step(sim, 1, DT); /* the deferred request */
    ck_assert_double_eq(sig(sim, "gb.gear"), 3.0);
    ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
    ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
    ck_assert_double_eq_tol(sig(sim, "ld.omega"), wl1 - C0 / IL * k * DT, TOL_EXACT * wl1);
    ck_assert_double_eq_tol(sig(sim, "src.omega"), 2.0 * wl1, TOL_EXACT * wl1);
  }
  dg_test_step(sim, 1, DT);
  double wl2 = engage(wl1 - C0 / IL * 0.2, 2.0 * wl1, 1.4);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), wl2, TOL_EXACT * wl2);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 1.4);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 4);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* shift_time 0: the new ratio engages within the step, no cut, no lock-out. */
START_TEST(test_instant_shift) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, SHIFT_SRC,
                    "\"ratios\":[3,2,1.4],\"inertia\":0.05,\"shift_time\":0,\"start_gear\":1,"
                    "\"shift\":{\"engagement\":\"rigid\"}",
                    SHIFT_LD);
  dg_sim *sim = dg_test_sim(g);
  double wl0, we0;
  first_gear(sim, &wl0, &we0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 1, DT);
  double w = engage(wl0, we0, 2.0) + (2.0 * TQ - C0) / (IL + IE * 4.0) * DT;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * w);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 3);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 1.4);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 2);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Re-engagement is a plastic impact that conserves generalized momentum:
 * torque-free source I_s = 0.5 plus input shaft 0.1 (I_in = 0.6) at
 * 4 · 10 rad/s, load I_L = 3 at 10 rad/s, shift 4 → 2:
 *   p = I_L ω_L + r2 I_in ω_in = 30 + 2·0.6·40 = 78,
 *   ω_L' = p / (I_L + r2² I_in) = 78 / 5.4,
 * and the energy lost is booked as impact loss, so the audit closes. */
START_TEST(test_reengagement_conserves_momentum) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.5",
                    "\"ratios\":[4,2],\"inertia\":0.1,\"shift_time\":0.05,\"start_gear\":1,"
                    "\"shift\":{\"engagement\":\"rigid\"}",
                    "\"inertia\":3");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_test_set_initial1(sim, "ld.omega", 10.0);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), 40.0, 1e-12);
  double e0 = dg_sim_kinetic_energy(sim);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 49, DT); /* decoupled: nothing acts, the speeds stay */
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), 40.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), 10.0, 1e-12);
  dg_test_step(sim, 1, DT); /* the 50th: 0.05 s are over, gear 2 engages */
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  double p = 3.0 * 10.0 + 2.0 * 0.6 * 40.0, J = 3.0 + 4.0 * 0.6, momentum;
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_sim_momentum(sim, &momentum);
  ck_assert_double_eq_tol(momentum, p, 1e-12 * p);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), p / J, 1e-12 * p);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), 2.0 * p / J, 1e-12 * p);
  dg_energy e;
  dg_sim_energy(sim, &e);
  double e1 = dg_sim_kinetic_energy(sim);
  ck_assert(e1 < e0);
  ck_assert_double_eq_tol(e.impact_loss, e1 - e0, 1e-12 * e0);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-12 * e0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* Automatic policies                                                       */

/* Full throttle through a source whose torque falls with speed
 * (200 N·m to 3000 rpm, 150 at 6000, 0 at 7000; I = 0.2) into a load with
 * quadratic drag (I_L = 10, c2 = 5e-4): the drag balances the fifth gear
 * below its upshift speed, so the box climbs 1 → 5 and stays there. The
 * source ignores "throttle_cut", so it flares during each 0.1 s shift. */
#define AUTO_SRC                                                                               \
  "\"type\":\"torque_source\",\"inertia\":0.2,"                                                \
  "\"torque_vs_rpm\":{\"rpm\":[0,3000,6000,7000],\"torque\":[200,200,150,0]}"
#define AUTO_GB "\"ratios\":[3.5,2.3,1.6,1.2,0.95],\"reverse\":3.2,\"shift_time\":0.1,"
#define AUTO_LD "\"inertia\":10,\"c2\":5e-4"

/* Engaged, the input accelerates at most r1² T_max / (I_L + r1² I_in)
 * = 12.25·200/12.7 = 193 rad/s², 1.84 rpm per 1 ms step: the speed seen by
 * the policy exceeds a threshold by less than that when it acts. */
#define RPM_PER_STEP 2.0

typedef struct shift_log {
  int n;
  int from[16], to[16];
  double rpm[16];          /* input speed the policy saw */
  double min_rpm, max_rpm; /* engaged, after the first shift */
} shift_log;

static void run_logged(dg_sim *sim, int steps, shift_log *log) {
  memset(log, 0, sizeof *log);
  log->min_rpm = INFINITY;
  log->max_rpm = -INFINITY;
  int gear_id = dg_sim_signal_find(sim, "gb.gear"), rpm_id = dg_sim_signal_find(sim, "gb.rpm");
  int shifting_id = dg_sim_signal_find(sim, "gb.shifting");
  for (int i = 0; i < steps; i++) {
    double g0 = dg_sim_signal(sim, gear_id), rpm0 = dg_sim_signal(sim, rpm_id);
    dg_test_step(sim, 1, DT);
    double g1 = dg_sim_signal(sim, gear_id), rpm1 = dg_sim_signal(sim, rpm_id);
    if (g1 != g0 && log->n < 16) {
      log->from[log->n] = (int)g0;
      log->to[log->n] = (int)g1;
      log->rpm[log->n++] = rpm0;
    }
    if (log->n > 0 && dg_sim_signal(sim, shifting_id) == 0.0) {
      log->min_rpm = fmin(log->min_rpm, rpm1);
      log->max_rpm = fmax(log->max_rpm, rpm1);
    }
  }
}

/* auto_rpm 5500/2500: upshifts 1→2→3→4→5, each when the input reaches
 * 5500 rpm (within one step), no downshift, and once shifting has begun the
 * engaged input speed stays in a sawtooth between the speed after the
 * largest ratio step, 5500·2.3/3.5 = 3614 rpm (less 5 % for the drag
 * during the shift; the flare only raises it), and 5500 rpm + one step. */
START_TEST(test_auto_rpm_upshift_sequence) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, AUTO_SRC,
                    AUTO_GB "\"shift\":{\"engagement\":\"rigid\",\"mode\":\"auto_rpm\","
                            "\"upshift_rpm\":5500,"
                            "\"downshift_rpm\":2500}",
                    AUTO_LD);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0); /* automatic modes start in first */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  shift_log log;
  run_logged(sim, 30000, &log);
  ck_assert_int_eq(log.n, 4);
  for (int i = 0; i < log.n; i++) {
    ck_assert_int_eq(log.from[i], i + 1);
    ck_assert_int_eq(log.to[i], i + 2);
    ck_assert_double_ge(log.rpm[i], 5500.0);
    ck_assert_double_lt(log.rpm[i], 5500.0 + RPM_PER_STEP);
  }
  ck_assert_double_ge(log.min_rpm, 0.95 * 5500.0 * 2.3 / 3.5);
  ck_assert_double_gt(log.min_rpm, 2500.0);
  ck_assert_double_lt(log.max_rpm, 5500.0 + RPM_PER_STEP);
  ck_assert_double_eq(sig(sim, "gb.gear"), 5.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.95);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* shift_map with per-gear arrays: gear g shifts up at upshift_map[g−1]. */
START_TEST(test_shift_map_per_gear) {
  static const double up[] = {4000, 4500, 5000, 5500};
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, AUTO_SRC,
                    AUTO_GB "\"shift\":{\"engagement\":\"rigid\",\"mode\":\"shift_map\","
                            "\"upshift_map\":[4000,4500,5000,5500,0],"
                            "\"downshift_map\":[0,1500,1800,2000,2200]}",
                    AUTO_LD);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  shift_log log;
  run_logged(sim, 30000, &log);
  ck_assert_int_eq(log.n, 4);
  for (int i = 0; i < log.n; i++) {
    ck_assert_int_eq(log.to[i], i + 2);
    ck_assert_double_ge(log.rpm[i], up[i]);
    ck_assert_double_lt(log.rpm[i], up[i] + RPM_PER_STEP);
  }
  ck_assert_double_gt(log.min_rpm, 1500.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* shift_map by throttle: rows at throttle 0 and 1, so at throttle 0.5 the
 * upshift speeds are the means 3000, 3300, 3600, 3900 rpm. */
START_TEST(test_shift_map_by_throttle) {
  static const double up[] = {3000, 3300, 3600, 3900};
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, AUTO_SRC,
                    AUTO_GB "\"shift\":{\"engagement\":\"rigid\",\"mode\":\"shift_map\","
                            "\"upshift_table\":{"
                            "\"gear\":[1,2,3,4,5],\"throttle\":[0,1],"
                            "\"rpm\":[[2000,2200,2400,2600,0],[4000,4400,4800,5200,0]]},"
                            "\"downshift_map\":[0,1000,1100,1200,1300]}",
                    AUTO_LD);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.5);
  shift_log log;
  run_logged(sim, 20000, &log);
  ck_assert_int_eq(log.n, 4);
  for (int i = 0; i < log.n; i++) {
    ck_assert_int_eq(log.to[i], i + 2);
    ck_assert_double_ge(log.rpm[i], up[i]);
    ck_assert_double_lt(log.rpm[i], up[i] + RPM_PER_STEP);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Coasting down from fifth against Coulomb drag, without torque:
 * downshifts 5→4→3→2→1, each when the input falls to 2500 rpm (each
 * downshift raises it by r_{g−1}/r_g first), never an upshift. */
START_TEST(test_auto_rpm_downshifts) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2",
                    AUTO_GB "\"start_gear\":5,\"shift\":{\"engagement\":\"rigid\","
                            "\"mode\":\"auto_rpm\","
                            "\"upshift_rpm\":5500,\"downshift_rpm\":2500}",
                    "\"inertia\":10,\"c0\":300");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "gb.rpm", 5000.0);
  shift_log log;
  run_logged(sim, 30000, &log);
  ck_assert_int_eq(log.n, 4);
  for (int i = 0; i < log.n; i++) {
    ck_assert_int_eq(log.from[i], 5 - i);
    ck_assert_int_eq(log.to[i], 4 - i);
    ck_assert_double_le(log.rpm[i], 2500.0);
    /* c0/I_L ≈ 30 rad/s² at the output, ≤ 105 rad/s² at the input: 1 rpm/step */
    ck_assert_double_gt(log.rpm[i], 2500.0 - RPM_PER_STEP);
  }
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST


/* src → gb → spd → ld; spd, a massless shaft whose signal "speed" is
 * 0.3 m · ω_out, feeds the gearbox's input vehicle_speed. */
static dg_graph *rig_speedo(const dg_registry *reg, const char *src, const char *gb,
                            const char *ld) {
  return dg_test_graph_regf(
      reg,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{%s},"
      "\"gb\":{\"type\":\"gearbox\",\"inputs\":{\"vehicle_speed\":\"spd.speed\"},%s},"
      "\"spd\":{\"type\":\"test_speedo\",\"radius\":0.3},"
      "\"ld\":{\"type\":\"load\",%s}},"
      "\"connections\":[[\"src.out\",\"gb.in\"],[\"gb.out\",\"spd.in\"],"
      "[\"spd.out\",\"ld.in\"]]}",
      src, gb, ld);
}

/* In the automatic modes a gear input of −1 selects R while it is held;
 * anything else means drive. */
START_TEST(test_auto_selector_reverse) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2",
                    AUTO_GB "\"shift\":{\"engagement\":\"rigid\",\"mode\":\"auto_rpm\","
                            "\"upshift_rpm\":5500,"
                            "\"downshift_rpm\":2500}",
                    AUTO_LD);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, -1);
  dg_test_step(sim, 100, DT); /* 0.1 s shift */
  ck_assert_double_eq(sig(sim, "gb.gear"), -1.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), -3.2);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 0);
  dg_test_step(sim, 100, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 3.5);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* auto_reverse (delay 0.3 s, shift 0.1 s): at standstill, brake held and
 * throttle released, the 300th step selects R; R engages 100 steps later;
 * throttle at standstill selects first again. Rolling at 3 m/s the brake
 * selects nothing. */
#define AREV_GB                                                                                \
  "\"ratios\":[3,2],\"reverse\":3,\"shift_time\":0.1,\"shift\":{\"engagement\":\"rigid\","     \
  "\"mode\":\"auto_rpm\",\"upshift_rpm\":5000,\"downshift_rpm\":2000,\"auto_reverse\":true,"   \
  "\"auto_reverse_delay\":0.3}"

START_TEST(test_auto_reverse) {
  dg_registry *reg = registry();
  dg_graph *g = rig_speedo(reg, "\"type\":\"test_engine\",\"inertia\":0.2", AREV_GB,
                           "\"inertia\":2");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  dg_test_step(sim, 299, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), -1.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
  dg_test_step(sim, 99, DT);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), -3.0);
  dg_test_step(sim, 500, DT); /* R holds while the brake is on */
  ck_assert_double_eq(sig(sim, "gb.gear"), -1.0);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.5);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  dg_test_step(sim, 99, DT);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 3.0);
  /* rolling: not at standstill, the brake selects nothing */
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.0);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
  dg_test_set_initial1(sim, "ld.omega", 10.0);
  dg_test_step(sim, 1000, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The callback                                                             */

typedef struct policy_log {
  int calls;
  int want;
  dg_shift_context last;
} policy_log;

static int policy_fixed(const dg_shift_context *c, void *user) {
  policy_log *l = user;
  l->calls++;
  l->last = *c;
  return l->want;
}

/* A callback wanting gear 3 overrides auto_rpm: one shift 1 → 3, called at
 * every step except the 49 pre_steps inside the 50-step shift; its context
 * carries what the box sees at the start of the step (vehicle_speed is
 * the speedometer's 0.3·ω_out then). */
START_TEST(test_callback_overrides_mode) {
  dg_registry *reg = registry();
  dg_graph *g = rig_speedo(reg, "\"type\":\"torque_source\",\"inertia\":0.2,\"torque\":50",
                           "\"ratios\":[3.5,2.3,1.6,1.2,0.95],\"reverse\":3.2,"
                           "\"shift_time\":0.05,\"shift\":{\"engagement\":\"rigid\","
                           "\"mode\":\"auto_rpm\","
                           "\"upshift_rpm\":5500,\"downshift_rpm\":2500}",
                           "\"inertia\":10");
  dg_sim *sim = dg_test_sim(g);
  policy_log log = {.want = 3};
  dg_error err;
  ck_assert_int_eq(dg_sim_set_shift_policy(sim, "gb", policy_fixed, &log, &err), DG_OK);
  ck_assert_int_eq(err.code, DG_OK);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.7);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, 0.2);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1); /* ignored: the callback decides */
  for (int i = 0; i < 500; i++) {
    double t = dg_sim_time(sim), rpm = sig(sim, "gb.rpm"), out = sig(sim, "gb.omega_out");
    int calls = log.calls, gear = (int)sig(sim, "gb.gear");
    dg_test_step(sim, 1, DT);
    if (log.calls == calls)
      continue;
    ck_assert_double_eq(log.last.time, t);
    ck_assert_double_eq(log.last.engine_rpm, rpm);
    ck_assert_double_eq_tol(log.last.output_rpm, out * RPM, 1e-12 * (1 + out));
    ck_assert_double_eq_tol(log.last.vehicle_speed, 0.3 * out, 1e-12 * (1 + out));
    ck_assert_int_eq(log.last.current_gear, gear);
    ck_assert_int_eq(log.last.num_gears, 5);
    ck_assert_double_eq(log.last.throttle, 0.7);
    ck_assert_double_eq(log.last.brake, 0.2);
  }
  ck_assert_int_eq(log.calls, 500 - 49);
  ck_assert_double_eq(sig(sim, "gb.gear"), 3.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 1.6);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 2);
  /* out of range: clamped to −1..5 */
  log.want = 99;
  dg_test_step(sim, 50, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 5.0);
  log.want = -7;
  dg_test_step(sim, 50, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), -1.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), -3.2);
  /* NULL restores auto_rpm, which drives forward again */
  ck_assert_int_eq(dg_sim_set_shift_policy(sim, "gb", NULL, NULL, &err), DG_OK);
  int calls = log.calls;
  dg_test_step(sim, 50, DT);
  ck_assert_int_eq(log.calls, calls);
  ck_assert_double_eq(sig(sim, "gb.gear"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

static const struct {
  const char *id;
  int code;
  const char *path, *text;
} policy_bad[] = {
    {"gbx", DG_ERR_UNKNOWN, "", "no block \"gbx\" in the graph"},
    {"ld", DG_ERR_USAGE, "/blocks/ld", "block \"ld\" (type \"load\") is not a gearbox"},
    {NULL, DG_ERR_USAGE, "", "no gearbox id given"},
};

START_TEST(test_set_policy_errors) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2", "\"ratios\":[2]",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  policy_log log = {.want = 1};
  dg_error err;
  int rc = dg_sim_set_shift_policy(sim, policy_bad[_i].id, policy_fixed, &log, &err);
  ck_assert_int_eq(rc, policy_bad[_i].code);
  ck_assert_int_eq(err.code, policy_bad[_i].code);
  ck_assert_str_eq(err.path, policy_bad[_i].path);
  ck_assert_str_eq(err.text, policy_bad[_i].text);
  ck_assert_str_eq(err.file, "test.json");
  ck_assert_int_eq(dg_sim_set_shift_policy(sim, policy_bad[_i].id, NULL, NULL, NULL),
                   policy_bad[_i].code); /* err may be NULL */
  dg_test_step(sim, 10, DT);
  ck_assert_int_eq(log.calls, 0);
  dg_sim_free(sim);
  ck_assert_int_eq(dg_sim_set_shift_policy(NULL, "gb", NULL, NULL, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "no simulation given");
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Shifts through friction                                                  */

/* The rig of the friction shifts: test_engine T = 40 N·m (cut by the
 * gearbox's throttle_cut) on J_E = 0.2, the gearbox's input shaft 0.05
 * (J_in = 0.25), ratios 3 and 1.5, η = 0.95, load J_L = 2 with Coulomb drag
 * c0 = 3 (the output turns forward throughout, so the drag is constant).
 * Every torque is constant or linear in time within a phase, so each phase
 * has polynomial speeds that RK4 integrates exactly, and the switching
 * times are roots the solver locates to ~1e-13 s: the closed forms below
 * hold to round-off (TOL_EXACT), times to 1e-9 s. */
#define FR_SRC "\"type\":\"test_engine\",\"inertia\":0.2,\"torque\":40"
#define FR_LD "\"inertia\":2,\"c0\":3"
#define FR_GB "\"ratios\":[3,1.5],\"inertia\":0.05,\"efficiency\":0.95,\"shift_time\":0.2,"
static const double FJ = 0.25, FJL = 2.0, FT = 40.0, FC0 = 3.0, FR1 = 3.0, FR2 = 1.5, FETA = 0.95;
#define TOL_TIME 1e-9

/* Gear g (ratio r) engaged, the engine driving: M = J_L + η r² J_in (the
 * input's inertial torque crosses the mesh with η as well),
 * ω̇_out = (η r T − c0)/M. */
static double fr_accel(double r, double torque) {
  return (FETA * r * torque - FC0) / (FJL + FETA * r * r * FJ);
}

/* Runs `seconds` in the start gear from ω_out = w0 and checks the closed
 * form; returns ω_out. */
static double fr_engaged(dg_sim *sim, int gear, double r, double w0, double seconds) {
  dg_sim_set_input(sim, DG_INPUT_GEAR, gear);
  dg_test_set_initial1(sim, "ld.omega", w0);
  dg_test_step(sim, (int)lround(seconds / DT), DT);
  double w = w0 + fr_accel(r, FT) * seconds;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * w);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), r * w, TOL_EXACT * w);
  return w;
}

/* Steps until shift_phase is `phase` (at most `max` steps); returns the
 * steps taken and checks the located event's time when `t_event` > 0. */
static int fr_until_phase(dg_sim *sim, int phase, int max, double t_event) {
  for (int k = 1; k <= max; k++) {
    dg_test_step(sim, 1, DT);
    if (sig(sim, "gb.shift_phase") == phase) {
      if (t_event > 0)
        ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t_event, TOL_TIME);
      return k;
    }
  }
  ck_abort_msg("shift_phase %d not reached in %d steps", phase, max);
  return -1;
}

/* A power-on upshift 1 → 2 through the oncoming clutch: capacity
 * C = 120 N·m, reached linearly over t_tp = 0.05 s from the request t0.
 *
 * Torque phase (τ = t − t0): the offgoing first gear stays engaged (a
 * lossy tie, multiplier λ at `in`) while the oncoming clutch, slipping at
 * Δ = (r1 − r2) ω_out > 0, takes −C(τ) at `in` and η r2 C(τ) at `out`:
 *   J_in ω̇_in = T − C + λ,  J_L ω̇_out = −η r1 λ + η r2 C − c0,  ω_in = r1 ω_out
 *   ⇒ ω̇_out = (η r1 T − c0 − η (r1 − r2) C(τ)) / M1,  M1 = J_L + η r1² J_in,
 *      λ = J_in r1 ω̇_out − T + C.
 * The offgoing element lets go where λ reaches 0, where the clutch carries
 *   C_h = (T J_L + r1 J_in c0) / (J_L + η r1 r2 J_in) = 82.25 / 3.06875 = 26.80 N·m,
 * at τ_h = t_tp C_h / C = 0.011168 s.
 * Inertia phase: ω̇_in = (T − C(τ))/J_in, ω̇_out = (η r2 C(τ) − c0)/J_L; once
 * the ramp is over the engine's speed falls at the constant
 *   (T − C)/J_in = (40 − 120)/0.25 = −320 rad/s²
 * while the output gains (0.95·1.5·120 − 3)/2 = 84 rad/s², so the slip
 * closes at −320 − 1.5·84 = −446 rad/s², from 39.97 rad/s at t_tp: sync at
 * τ_s = 0.05 + 39.97/446 = 0.13961 s (engine 95.5 → 62.4 rad/s), where the
 * second gear engages with nothing to project. The box then holds the
 * lock-out to shift_time = 0.2 s and drives on in second. The gearbox's
 * booked work is the element's heat, −∫ C(τ) (ω_in − η r2 ω_out) dτ (slip
 * and its mesh's loss), a piecewise cubic integrated exactly by Simpson's
 * rule per phase. */
typedef struct fr_upshift {
  double t_tp, th, ts;            /* s after t0 */
  double wo0, wo_h, wi_h, wo_t, wi_t;
} fr_upshift;

static double fr_wo_a(const fr_upshift *u, double tau) {
  double M1 = FJL + FETA * FR1 * FR1 * FJ, k = FETA * (FR1 - FR2) * 120.0 / (u->t_tp * M1);
  return u->wo0 + fr_accel(FR1, FT) * tau - 0.5 * k * tau * tau;
}
static double fr_wi_b(const fr_upshift *u, double tau) {
  return u->wi_h + (FT * (tau - u->th) - 120.0 * (tau * tau - u->th * u->th) / (2 * u->t_tp)) / FJ;
}
static double fr_wo_b(const fr_upshift *u, double tau) {
  return u->wo_h + (FETA * FR2 * 120.0 * (tau * tau - u->th * u->th) / (2 * u->t_tp) -
                    FC0 * (tau - u->th)) / FJL;
}
static double fr_wi_c(const fr_upshift *u, double tau) {
  return u->wi_t + (FT - 120.0) / FJ * (tau - u->t_tp);
}
static double fr_wo_c(const fr_upshift *u, double tau) {
  return u->wo_t + (FETA * FR2 * 120.0 - FC0) / FJL * (tau - u->t_tp);
}
/* The element's heat rate C(τ)·(ω_in − η r2 ω_out) in each phase. */
static double fr_heat(const fr_upshift *u, double tau) {
  double c = 120.0 * fmin(tau / u->t_tp, 1.0), wi, wo;
  if (tau <= u->th) {
    wo = fr_wo_a(u, tau);
    wi = FR1 * wo;
  } else if (tau <= u->t_tp) {
    wi = fr_wi_b(u, tau);
    wo = fr_wo_b(u, tau);
  } else {
    wi = fr_wi_c(u, tau);
    wo = fr_wo_c(u, tau);
  }
  return c * (wi - FETA * FR2 * wo);
}
static double simpson(const fr_upshift *u, double a, double b) {
  return (b - a) / 6.0 * (fr_heat(u, a) + 4.0 * fr_heat(u, 0.5 * (a + b)) + fr_heat(u, b));
}

START_TEST(test_friction_upshift_power_on) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, FR_SRC,
                    FR_GB "\"start_gear\":1,\"shift\":{\"element\":\"clutch\",\"capacity\":120,"
                          "\"torque_phase_time\":0.05}",
                    FR_LD);
  dg_sim *sim = dg_test_sim(g);
  fr_upshift u = {.t_tp = 0.05};
  u.wo0 = fr_engaged(sim, 1, FR1, 5.0, 1.0);
  double t0 = dg_sim_time(sim);
  u.th = 0.05 * (FT * FJL + FR1 * FJ * FC0) / (FJL + FETA * FR1 * FR2 * FJ) / 120.0;
  u.wo_h = fr_wo_a(&u, u.th);
  u.wi_h = FR1 * u.wo_h;
  u.wi_t = fr_wi_b(&u, u.t_tp);
  u.wo_t = fr_wo_b(&u, u.t_tp);
  double rate = (FT - 120.0) / FJ - FR2 * (FETA * FR2 * 120.0 - FC0) / FJL; /* of the slip */
  u.ts = u.t_tp + (u.wi_t - FR2 * u.wo_t) / -rate;
  ck_assert_double_eq_tol(u.th, 0.011167684996605568, 1e-15);
  ck_assert_double_eq_tol(u.ts, 0.1396113602391629, 1e-13);

  /* torque phase: first gear still engaged, no cut */
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 1.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
  ck_assert_double_eq(sig(sim, "gb.gear"), 2.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), FR1);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "gb.element_torque"), 120.0 * DT / 0.05, 1e-9);
  double wo = fr_wo_a(&u, DT);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), wo, TOL_EXACT * wo);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), FR1 * wo, TOL_EXACT * wo);
  /* the offgoing gear lets go where the clutch carries C_h */
  int k = 1 + fr_until_phase(sim, 2, 20, t0 + u.th);
  ck_assert_int_eq(k, 12);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  double tau = k * DT;
  ck_assert_double_eq_tol(sig(sim, "src.omega"), fr_wi_b(&u, tau), TOL_EXACT * u.wi_h);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), fr_wo_b(&u, tau), TOL_EXACT * u.wi_h);
  /* inertia phase after the ramp: the engine's slope (T − C)/J_in */
  dg_test_step(sim, 60 - k, DT); /* τ = 0.06 */
  double wa = sig(sim, "src.omega");
  ck_assert_double_eq_tol(wa, fr_wi_c(&u, 0.06), TOL_EXACT * u.wi_h);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), fr_wo_c(&u, 0.06), TOL_EXACT * u.wi_h);
  ck_assert_double_eq_tol(sig(sim, "gb.element_torque"), 120.0, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "gb.slip_rpm"),
                          (fr_wi_c(&u, 0.06) - FR2 * fr_wo_c(&u, 0.06)) * RPM, 1e-8);
  dg_test_step(sim, 50, DT); /* τ = 0.11 */
  ck_assert_double_eq_tol((sig(sim, "src.omega") - wa) / 0.05, (FT - 120.0) / FJ, 1e-8);
  /* sync: second gear engages at τ_s with nothing to project */
  k = 110 + fr_until_phase(sim, 4, 40, t0 + u.ts);
  ck_assert_int_eq(k, 140);
  ck_assert_double_eq(sig(sim, "gb.ratio"), FR2);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0); /* the lock-out to 0.2 s */
  ck_assert_double_eq(sig(sim, "gb.element_torque"), 0.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double ws = fr_wo_c(&u, u.ts), w = ws + fr_accel(FR2, FT) * (k * DT - u.ts);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * w);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), FR2 * w, TOL_EXACT * w);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-12 * e.kinetic);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  double heat = simpson(&u, 0.0, u.th) + simpson(&u, u.th, u.t_tp) + simpson(&u, u.t_tp, u.ts);
  double work = dg_sim_block_work(sim, dg_test_block_index(g, "gb"));
  ck_assert_double_eq_tol(work, -heat, 1e-9 * heat);
  dg_test_step(sim, 59, DT); /* to t0 + 0.199 */
  ck_assert_double_eq(sig(sim, "gb.shifting"), 1.0);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 0.0);
  /* tie, decouple, engage (the clutch holding the new gear as a tie
   * through the lock-out), and at its end the gear's own link */
  ck_assert_int_eq(dg_sim_topology_changes(sim), 4);
  printf("friction upshift: offgoing lets go at +%.6f s, sync at +%.6f s, engine %.2f -> %.2f "
         "rad/s, slope %.1f rad/s^2, heat %.3f J, impact %.2g J\n",
         u.th, u.ts, u.wi_h, FR2 * ws, (FT - 120.0) / FJ, heat, e.impact_loss);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A power-on downshift 2 → 1 through the clutch (C = 120 N·m over
 * t_tp = 0.05 s): the input must speed up (Δ = ω_in − r1 ω_out < 0, s = −1)
 * while the offgoing second gear holds the engine back (λ < 0), so it lets
 * go at the request itself: hold_check reads λ at the segment's start
 * (issue 22 item 3; it used to be read by a probe 1e-6 of a step later,
 * an event of its own). The engine flares on its own torque, helped by
 * the clutch:
 *   ω̇_in = (T + C(τ))/J_in,  ω̇_out = (−(r1/η) C(τ) − c0)/J_L
 * (the clutch takes r1 C/η from the output: the output drives its mesh),
 * and after the ramp the engine climbs at (T + C)/J_in = 640 rad/s² until
 * the slip closes: from −45.98 rad/s at the request (second gear ran 0.5 s
 * from ω_out = 20 rad/s first), −11.54 rad/s at the ramp's end, 0 at
 * τ_s = 0.05 + 11.54/1212.9 = 0.059518 s, where first gear engages. */
START_TEST(test_friction_downshift_power_on) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, FR_SRC,
                    FR_GB "\"start_gear\":2,\"shift\":{\"element\":\"clutch\",\"capacity\":120,"
                          "\"torque_phase_time\":0.05}",
                    FR_LD);
  dg_sim *sim = dg_test_sim(g);
  double wo0 = fr_engaged(sim, 2, FR2, 20.0, 0.5), t0 = dg_sim_time(sim);
  double wo_e = wo0, wi_e = FR2 * wo_e, t_tp = 0.05, c = 120.0;
  /* closed forms from τ = 0 on, C(τ) = c τ / t_tp */
#define WI_B(tau) (wi_e + (FT * (tau) + c * (tau) * (tau) / (2 * t_tp)) / FJ)
#define WO_B(tau) (wo_e - (FR1 / FETA * c * (tau) * (tau) / (2 * t_tp) + FC0 * (tau)) / FJL)
  double wi_t = WI_B(t_tp), wo_t = WO_B(t_tp);
  double rate = (FT + c) / FJ + FR1 * (FR1 / FETA * c + FC0) / FJL;
  double ts = t_tp + (FR1 * wo_t - wi_t) / rate;
  ck_assert_double_eq_tol(ts, 0.0595181338713, 1e-12);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 2.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  ck_assert_double_lt(sig(sim, "gb.element_torque"), 0.0); /* from out toward in */
  ck_assert_int_eq(dg_sim_event_count(sim), 0);            /* let go at the segment's start */
  ck_assert_double_eq_tol(sig(sim, "src.omega"), WI_B(DT), TOL_EXACT * wi_e);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), WO_B(DT), TOL_EXACT * wi_e);
  dg_test_step(sim, 54, DT); /* τ = 0.055: the ramp is over */
  double wa = sig(sim, "src.omega");
  ck_assert_double_eq_tol(wa, wi_t + (FT + c) / FJ * 0.005, TOL_EXACT * wi_e);
  int k = 55 + fr_until_phase(sim, 4, 20, t0 + ts);
  ck_assert_int_eq(k, 60);
  ck_assert_double_eq(sig(sim, "gb.ratio"), FR1);
  double ws = wo_t - (FR1 / FETA * c + FC0) / FJL * (ts - t_tp);
  double w = ws + fr_accel(FR1, FT) * (k * DT - ts);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * w);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), FR1 * w, TOL_EXACT * w);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-12 * e.kinetic);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 3); /* tie, let go, engage */
#undef WI_B
#undef WO_B
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* The oncoming clutch holds the new gear up to its capacity until the
 * lock-out ends; one that cannot hold at sync lets go there, at the
 * segment's start after the located sync (hold_check, issue 22 item 3),
 * and slips on the other way. A power-on downshift 2 → 1 of a torque T on
 * J_in = 0.25 kg·m² (engine 0.2 + input shaft 0.05) into J_L = 50 kg·m²
 * (no drag), C = 60 N·m from the request (torque_phase_time 0), requested
 * at t = 0 from ω_out = 10 rad/s (Δ0 = (r2 − r1)·10 = −15 rad/s, s = −1):
 *   the offgoing gear lets go at once (it holds the input back);
 *   inertia phase: ω̇_in = (T + C)/J_in, ω̇_out = −r1 C/(η J_L),
 *   sync at τ_s = 15/((T + C)/J_in + r1² C/(η J_L));
 *   held in first: ω̇_out = a = η r1 T/(J_L + η r1² J_in) and the clutch
 *   holds λ = J_in r1 a − T at in.
 * T = 40: |λ| = 38.36 < C, it holds: ω_out = ω_s + a (t − τ_s).
 * T = 100: |λ| = 95.90 > C: it lets go at τ_s and slips with s = +1:
 *   ω̇_in = (T − C)/J_in = 160 rad/s², ω̇_out = η r1 C/J_L = 3.42 rad/s²
 * (before, first gear engaged rigidly at sync and caught the engine). Every
 * piece is linear, so RK4 is exact and only the located sync time's
 * tolerance (1e-9 s) separates the speeds from the closed forms. */
START_TEST(test_oncoming_overloaded_at_sync) {
  const double T = _i == 0 ? 40.0 : 100.0, C = 60.0, JL = 50.0, w0 = 10.0;
  dg_registry *reg = registry();
  char src[128];
  snprintf(src, sizeof src, "\"type\":\"test_engine\",\"inertia\":0.2,\"torque\":%g", T);
  dg_graph *g = rig(reg, src,
                    FR_GB "\"start_gear\":2,\"shift\":{\"element\":\"clutch\",\"capacity\":60,"
                          "\"torque_phase_time\":0}",
                    "\"inertia\":50");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "ld.omega", w0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  double wi_rate = (T + C) / FJ, wo_rate = -FR1 * C / (FETA * JL);
  double ts = (FR1 - FR2) * w0 / (wi_rate - FR1 * wo_rate);
  double wo_s = w0 + wo_rate * ts, wi_s = FR2 * w0 + wi_rate * ts;
  double a = FETA * FR1 * T / (JL + FETA * FR1 * FR1 * FJ), lambda = FJ * FR1 * a - T;
  bool lets_go = fabs(lambda) > C;
  ck_assert_int_eq(lets_go, _i == 1);
  double worst = 0.0;
  for (int k = 1; k <= 100; k++) {
    dg_test_step(sim, 1, DT);
    double t = k * DT, wi, wo;
    if (t < ts) {
      wi = FR2 * w0 + wi_rate * t;
      wo = w0 + wo_rate * t;
    } else if (lets_go) {
      wi = wi_s + (T - C) / FJ * (t - ts);
      wo = wo_s + FETA * FR1 * C / JL * (t - ts);
    } else {
      wo = wo_s + a * (t - ts);
      wi = FR1 * wo;
    }
    worst = fmax(worst, fabs(sig(sim, "src.omega") - wi) / wi);
    worst = fmax(worst, fabs(sig(sim, "ld.omega") - wo) / wo);
  }
  printf("downshift, T = %g: sync at %.9f s, clutch at lock %.2f N*m (C %g): %s; worst "
         "relative error %.2e\n",
         T, ts, fabs(lambda), C, lets_go ? "lets go" : "holds", worst);
  ck_assert_double_le(worst, 1e-9);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), lets_go ? 2.0 : 4.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), lets_go ? 0.0 : FR1);
  if (lets_go) /* slipping the other way, the engine pulling the output */
    ck_assert_double_eq_tol(sig(sim, "gb.element_torque"), C, 1e-12);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A manual box's upshift 1 → 2 through its synchronizer (the default
 * element of mode "manual"), C = 60 N·m: the old gear comes out at once,
 * the engine's throttle is cut for the whole shift, and the synchronizer
 * alone brings the input to second gear's speed:
 *   ω̇_in = −C/J_in = −240 rad/s²,  ω̇_out = (η r2 C − c0)/J_L = 41.25 rad/s²,
 * the slip 47.74 rad/s closing at 301.875 rad/s²: sync at τ_s = 0.158151 s.
 * Second gear then engages; the shift (cut, lock-out) lasts to shift_time
 * = 0.2 s, the engine coasting with the car, (J_L + η r2² J_in) ω̇_out = −c0,
 * and drives on at fr_accel(r2, T) from the step after. */
START_TEST(test_synchronizer_upshift) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, FR_SRC, FR_GB "\"start_gear\":1,\"shift\":{\"capacity\":60}", FR_LD);
  dg_sim *sim = dg_test_sim(g);
  double wo0 = fr_engaged(sim, 1, FR1, 5.0, 1.0), t0 = dg_sim_time(sim), c = 60.0;
  double ai = -c / FJ, ao = (FETA * FR2 * c - FC0) / FJL;
  double ts = (FR1 - FR2) * wo0 / (-ai + FR2 * ao);
  ck_assert_double_eq_tol(ts, 0.1581505320, 1e-10);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  for (int k = 1; k <= 158; k++) {
    dg_test_step(sim, 1, DT);
    ck_assert_double_eq(sig(sim, "gb.shift_phase"), 2.0);
    ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
    ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
    ck_assert_double_eq_tol(sig(sim, "src.omega"), FR1 * wo0 + ai * k * DT, TOL_EXACT * wo0);
    ck_assert_double_eq_tol(sig(sim, "ld.omega"), wo0 + ao * k * DT, TOL_EXACT * wo0);
  }
  dg_test_step(sim, 1, DT); /* sync inside step 159 */
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t0 + ts, TOL_TIME);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 4.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), FR2);
  ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
  double ah = -FC0 / (FJL + FETA * FR2 * FR2 * FJ), ws = wo0 + ao * ts;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), ws + ah * (0.159 - ts), TOL_EXACT * wo0);
  dg_test_step(sim, 41, DT); /* to 0.2 s: the shift is over */
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  double w = ws + ah * (0.2 - ts);
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * wo0);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  w += fr_accel(FR2, FT) * DT;
  ck_assert_double_eq_tol(sig(sim, "ld.omega"), w, TOL_EXACT * wo0);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), FR2 * w, TOL_EXACT * wo0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-12 * e.kinetic);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A lever moved while the synchronizer still slips is followed at once:
 * back to neutral the box decouples (shift_phase 3) until shift_time, then
 * rests in neutral. */
START_TEST(test_synchronizer_lever_back) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, FR_SRC, FR_GB "\"start_gear\":1,\"shift\":{\"capacity\":60}", FR_LD);
  dg_sim *sim = dg_test_sim(g);
  fr_engaged(sim, 1, FR1, 5.0, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 50, DT);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 2.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 0);
  double wi = sig(sim, "src.omega");
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 3.0);
  ck_assert_double_eq(sig(sim, "gb.element_torque"), 0.0);
  ck_assert_double_eq_tol(sig(sim, "src.omega"), wi, 1e-12 * wi); /* cut, free */
  dg_test_step(sim, 149, DT);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* "cut_throttle": the engine is cut in the inertia phase of an upshift
 * only: the torque phase and the lock-out after the sync keep its torque,
 * and the engine's slope in the inertia phase is −C/J_in. */
START_TEST(test_friction_cut_throttle) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, FR_SRC,
                    FR_GB "\"start_gear\":1,\"shift\":{\"element\":\"clutch\",\"capacity\":120,"
                          "\"torque_phase_time\":0.01,\"cut_throttle\":true}",
                    FR_LD);
  dg_sim *sim = dg_test_sim(g);
  fr_engaged(sim, 1, FR1, 5.0, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 1.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  fr_until_phase(sim, 2, 20, 0.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 1.0);
  dg_test_step(sim, 20, DT); /* past the ramp */
  double wa = sig(sim, "src.omega");
  dg_test_step(sim, 10, DT);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 2.0);
  ck_assert_double_eq_tol((sig(sim, "src.omega") - wa) / 0.01, -120.0 / FJ, 1e-8);
  fr_until_phase(sim, 4, 200, 0.0);
  ck_assert_double_eq(sig(sim, "src.cut"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A shift whose slip is already zero (at rest) engages at once: no
 * capacity is needed, the lock-out still lasts shift_time. */
START_TEST(test_friction_shift_at_rest) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2",
                    "\"ratios\":[3,2],\"shift_time\":0.1,\"start_gear\":1", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_test_step(sim, 10, DT);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 1, DT);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 2.0);
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 4.0);
  dg_test_step(sim, 99, DT);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Without an engine (a torque source drives) and without "capacity", a
 * friction shift under way cannot size its element: the step fails and
 * says what to give. */
START_TEST(test_friction_needs_capacity) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2,\"torque\":5",
                    "\"ratios\":[3,2],\"start_gear\":1", "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_test_step(sim, 100, DT);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  ck_assert_int_ne(dg_sim_step(sim, DT), DG_OK);
  const dg_error *err = dg_sim_last_error(sim);
  ck_assert_str_eq(err->path, "/blocks/gb");
  ck_assert_msg(strstr(err->text, "the shift from 1 to 2 through friction needs the element's "
                                  "capacity: give \"shift\": { \"capacity\": N*m }"),
                "%s", err->text);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* By default the capacity scales the peak torque of the graph's engine:
 * full load 150/200/170 N·m at 1000/3000/6000 rpm less friction 0..60 N·m
 * over 0..6000 rpm peaks at 3000 rpm, 200 − 30 = 170 N·m (engine.max_torque),
 * and a clutch's default capacity_factor 1.5 makes C = 255 N·m, reached at
 * the end of the torque phase's ramp. */
START_TEST(test_friction_capacity_from_engine) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg,
                    "\"type\":\"engine\",\"inertia\":0.2,\"idle_rpm\":800,\"redline_rpm\":6500,"
                    "\"full_load\":{\"rpm\":[1000,3000,6000],\"torque\":[150,200,170]},"
                    "\"friction\":{\"rpm\":[0,6000],\"torque\":[0,60]}",
                    "\"ratios\":[3,1.5],\"start_gear\":1,\"shift\":{\"element\":\"clutch\"}",
                    "\"inertia\":2,\"c0\":3");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq_tol(sig(sim, "src.max_torque"), 170.0, 1e-12);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1);
  dg_test_set_initial1(sim, "ld.omega", 30.0);
  dg_test_step(sim, 10, DT);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 2);
  dg_test_step(sim, 120, DT); /* past the default 0.1 s ramp */
  ck_assert_double_eq(sig(sim, "gb.shift_phase"), 2.0);
  ck_assert_double_eq_tol(sig(sim, "gb.element_torque"), 1.5 * 170.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* The automatic policy through friction: the same climb 1 → 5 as the
 * rigid test_auto_rpm_upshift_sequence, each upshift requested within one
 * step of 5500 rpm, and the audit closes with no impact loss. */
START_TEST(test_auto_rpm_friction_sequence) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, AUTO_SRC,
                    AUTO_GB "\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":5500,"
                            "\"downshift_rpm\":2500,\"capacity\":300}",
                    AUTO_LD);
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  shift_log log;
  run_logged(sim, 30000, &log);
  ck_assert_int_eq(log.n, 4);
  for (int i = 0; i < log.n; i++) {
    ck_assert_int_eq(log.to[i], i + 2);
    ck_assert_double_ge(log.rpm[i], 5500.0);
    ck_assert_double_lt(log.rpm[i], 5500.0 + RPM_PER_STEP);
  }
  ck_assert_double_gt(log.min_rpm, 2500.0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.impact_loss, 0.0, 1e-12 * e.kinetic);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Manual clamping, modes                                                   */

/* Out-of-range gear inputs are clamped: 7 → 3 (top), −1 → neutral without
 * a reverse gear; NaN keeps the gear. */
START_TEST(test_manual_clamps) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2",
                    "\"ratios\":[3,2,1.4],\"shift_time\":0.01,\"shift\":{\"engagement\":\"rigid\"}",
                    "\"inertia\":1");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 7);
  dg_test_step(sim, 1, DT); /* taken at the first step without a shift */
  ck_assert_double_eq(sig(sim, "gb.gear"), 3.0);
  ck_assert_double_eq(sig(sim, "gb.shifting"), 0.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, -1);
  dg_test_step(sim, 10, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 0.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1.5); /* halves round away from zero */
  dg_test_step(sim, 10, DT);
  ck_assert_double_eq(sig(sim, "gb.gear"), 2.0);
  ck_assert_double_eq(sig(sim, "gb.ratio"), 2.0);
  /* a gear input that is not a number is refused (the selector keeps 2) */
  dg_sim_set_input(sim, DG_INPUT_GEAR, NAN);
  ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_GEAR), 1.5);
  ck_assert_int_eq(dg_sim_step(sim, DT), DG_ERR_RANGE);
  ck_assert_double_eq(sig(sim, "gb.gear"), 2.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* validate enumerates every gear, start gear first. */
START_TEST(test_modes) {
  static const char *const names0[] = {"neutral", "R", "1", "2", "3"};
  static const char *const names2[] = {"2", "R", "neutral", "1", "3"};
  dg_registry *reg = registry();
  const char *json = "{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
                     "\"gb\":{\"type\":\"gearbox\",\"ratios\":[3,2,1],\"reverse\":3},"
                     "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
                     "\"connections\":[[\"src.out\",\"gb.in\"],[\"gb.out\",\"ld.in\"]]}";
  dg_graph_info info;
  ck_assert_int_eq(dg_graph_validate_string(reg, json, "m.json", NULL, NULL, &info), 0);
  ck_assert_int_eq(info.modes, 5);
  ck_assert_int_eq(info.dofs, 2); /* manual without start_gear: neutral */
  dg_graph *g = dg_test_graph_reg(reg, json);
  dg_sim *sim = dg_test_sim(g);
  dg_block *b = dg_sim_block(sim, "gb");
  ck_assert_int_eq(b->klass->mode_count(b), 5);
  for (int m = 0; m < 5; m++)
    ck_assert_str_eq(b->klass->mode_name(b, m), names0[m]);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = rig(reg, "\"type\":\"torque_source\",\"inertia\":0.2",
          "\"ratios\":[3,2,1],\"reverse\":3,\"start_gear\":2", "\"inertia\":1");
  sim = dg_test_sim(g);
  b = dg_sim_block(sim, "gb");
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  for (int m = 0; m < 5; m++)
    ck_assert_str_eq(b->klass->mode_name(b, m), names2[m]);
  b->klass->mode_set(b, 2); /* neutral */
  ck_assert_double_eq(sig(sim, "gb.ratio"), 0.0);
  b->klass->mode_set(b, 1); /* R */
  ck_assert_double_eq(sig(sim, "gb.ratio"), -3.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Neutral needs inertia on the input side: the default input-shaft inertia
 * provides it; with none, validate names the mode. */
START_TEST(test_neutral_needs_inertia) {
  dg_registry *reg = registry();
  dg_graph *g = rig(reg, "\"type\":\"torque_source\"", "\"ratios\":[3,2],\"start_gear\":1",
                    "\"inertia\":1");
  dg_graph_free(g);
  char json[1024];
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\"},"
           "\"gb\":{\"type\":\"gearbox\",\"ratios\":[3,2],\"start_gear\":1,\"inertia\":0},"
           "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
           "\"connections\":[[\"src.out\",\"gb.in\"],[\"gb.out\",\"ld.in\"]]}");
  dg_error err;
  g = dg_graph_load_string(reg, json, "test.json", &err);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(err.code, DG_ERR_INERTIA);
  ck_assert_str_eq(err.path, "/blocks/src");
  ck_assert_str_eq(err.text,
                   "a degree of freedom has no inertia: src.out can turn without moving anything "
                   "that has inertia (blocks: src, gb); give one of them an inertia (in mode "
                   "gb=neutral)");
  dg_registry_free(reg);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* Parameter errors: exact path and message                                 */

static const dg_test_bad_param bad[] = {
    {"\"ratios\":[]",
     "/blocks/gb/ratios",
     "must have at least 1 element (got 0)"},
    {"\"ratios\":[3,-1]",
     "/blocks/gb/ratios/1",
     "must be > 0 (got -1)"},
    {"\"reverse\":3",
     "/blocks/gb/ratios",
     "missing required array of numbers"},
    {"\"ratios\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
     "/blocks/gb/ratios",
     "must have at most 24 elements (got 25)"},
    {"\"ratios\":[3,2],\"reverse\":0",
     "/blocks/gb/reverse",
     "must be > 0 (got 0)"},
    {"\"ratios\":[3,2],\"efficiency\":1.2",
     "/blocks/gb/efficiency",
     "must be <= 1 (got 1.2)"},
    {"\"ratios\":[3,2],\"shift_time\":-0.1",
     "/blocks/gb/shift_time",
     "must be >= 0 (got -0.1)"},
    {"\"ratios\":[3,2],\"inertia\":-1",
     "/blocks/gb/inertia",
     "must be >= 0 (got -1)"},
    {"\"ratios\":[3,2,1],\"reverse\":3,\"start_gear\":4",
     "/blocks/gb/start_gear",
     "must be between -1 and 3 (got 4)"},
    {"\"ratios\":[3,2,1],\"start_gear\":-1",
     "/blocks/gb/start_gear",
     "must be between 0 and 3 without a reverse ratio (got -1)"},
    {"\"ratios\":[3,2,1],\"start_gear\":-2",
     "/blocks/gb/start_gear",
     "must be >= -1 (got -2)"},
    {"\"ratios\":[3,2,1],\"start_gear\":1.5",
     "/blocks/gb/start_gear",
     "expected an integer, got 1.5"},
    {"\"ratios\":[3,2],\"shift\":\"auto_rpm\"",
     "/blocks/gb/shift",
     "expected an object, got string"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto\"}",
     "/blocks/gb/shift/mode",
     "must be one of \"manual\", \"auto_rpm\", \"shift_map\" (got \"auto\"); did you mean "
     "\"auto_rpm\"?"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"downshift_rpm\":2000}",
     "/blocks/gb/shift/upshift_rpm",
     "missing required number (rpm) for mode \"auto_rpm\""},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":5000}",
     "/blocks/gb/shift/downshift_rpm",
     "missing required number (rpm) for mode \"auto_rpm\""},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":3000,"
     "\"downshift_rpm\":3500}",
     "/blocks/gb/shift/downshift_rpm",
     "must be < upshift_rpm (3000) (got 3500)"},
    {"\"ratios\":[3,2,1.5],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":4100}",
     "/blocks/gb/shift/downshift_rpm",
     "must be < 4000 (upshift_rpm 6000 x 2/3, the step from gear 1 to 2) so that an upshift does "
     "not shift straight back down (got 4100)"},
    {"\"ratios\":[3,3.5],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":2000}",
     "/blocks/gb/ratios/1",
     "must be < ratios/0 (3) for automatic shifting (got 3.5)"},
    {"\"ratios\":[3,2],\"shift\":{\"upshift_rpm\":6000}",
     "/blocks/gb/shift/upshift_rpm",
     "only used by mode \"auto_rpm\" (mode is \"manual\")"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":2000,\"upshift_map\":[1,2]}",
     "/blocks/gb/shift/upshift_map",
     "only used by mode \"shift_map\" (mode is \"auto_rpm\")"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"shift_map\"}",
     "/blocks/gb/shift",
     "mode \"shift_map\" needs upshift_map or upshift_table"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"shift_map\",\"upshift_map\":[5000,0],"
     "\"downshift_map\":[0,2000],\"upshift_table\":{\"gear\":[1,2],\"throttle\":[0,1],\"rpm\":[[1,"
     "2],[3,4]]}}",
     "/blocks/gb/shift/upshift_table",
     "give only one of upshift_map and upshift_table"},
    {"\"ratios\":[3,2,1],\"shift\":{\"mode\":\"shift_map\",\"upshift_map\":[5000,0],"
     "\"downshift_map\":[0,2000,2000]}",
     "/blocks/gb/shift/upshift_map",
     "must have 3 elements, one per forward gear (got 2)"},
    {"\"ratios\":[3,2,1],\"shift\":{\"mode\":\"shift_map\",\"upshift_table\":{\"gear\":[1,3,4],"
     "\"throttle\":[0,1],\"rpm\":[[1,2,3],[3,4,5]]},\"downshift_map\":[0,0,0]}",
     "/blocks/gb/shift/upshift_table/gear/1",
     "must be 2 (the forward gears 1..3 in order) (got 3)"},
    {"\"ratios\":[3,2,1],\"shift\":{\"mode\":\"shift_map\",\"upshift_table\":{\"gear\":[1,2],"
     "\"throttle\":[0,1],\"rpm\":[[1,2],[3,4]]},\"downshift_map\":[0,0,0]}",
     "/blocks/gb/shift/upshift_table/gear",
     "must list the 3 forward gears 1..3 (got 2 values)"},
    {"\"ratios\":[3,2,1],\"shift\":{\"mode\":\"shift_map\",\"upshift_map\":[5000,5000,0],"
     "\"downshift_map\":[0,2000,2600]}",
     "/blocks/gb/shift/downshift_map/2",
     "must be < 2500 (gear 2's upshift 5000 rpm x 1/2) so that gear 3 does not shift straight "
     "back down (got 2600)"},
    {"\"ratios\":[3,2,1],\"shift\":{\"mode\":\"shift_map\",\"upshift_map\":[5000,5000,0],"
     "\"downshift_table\":{\"gear\":[1,2,3],\"throttle\":[0,1],\"rpm\":[[0,1000,1000],[0,3400,"
     "2000]]}}",
     "/blocks/gb/shift/downshift_table",
     "at throttle 1: gear 2's downshift speed 3400 rpm must be < 3333.33 (gear 1's upshift 5000 "
     "rpm x 2/3) so that it does not shift straight back down"},
    {"\"ratios\":[3,2],\"shift\":{\"auto_reverse\":true}",
     "/blocks/gb/shift/auto_reverse",
     "only used by modes \"auto_rpm\" and \"shift_map\" (mode is \"manual\")"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":2000,\"auto_reverse\":true}",
     "/blocks/gb/shift/auto_reverse",
     "needs a reverse gear (give \"reverse\")"},
    {"\"ratios\":[3,2],\"shift\":{\"upshft_rpm\":6000}",
     "/blocks/gb/shift/upshft_rpm",
     "unknown parameter; did you mean \"upshift_rpm\"?"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"shift_map\",\"upshift_table\":{\"gear\":[1,2],"
     "\"throttle\":[0,1],\"rpm\":[[1,-5],[3,4]]},\"downshift_map\":[0,0]}",
     "/blocks/gb/shift/upshift_table/rpm/0/1",
     "must be >= 0 (got -5)"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":0,\"downshift_rpm\":2000}",
     "/blocks/gb/shift/upshift_rpm",
     "must be > 0 (got 0)"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":2000,\"auto_reverse_delay\":-1},\"reverse\":3",
     "/blocks/gb/shift/auto_reverse_delay",
     "must be >= 0 (got -1)"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"shift_map\",\"upshift_map\":[],\"downshift_map\":[0,"
     "0]}",
     "/blocks/gb/shift/upshift_map",
     "must have at least 1 element (got 0)"},
    {"\"ratio\":[3,2]",
     "/blocks/gb/ratio",
     "unknown parameter; did you mean \"ratios\"?"},
    {"\"ratios\":[3,2],\"shift\":{\"engagement\":\"rigid\",\"capacity\":100}",
     "/blocks/gb/shift/capacity",
     "only used with engagement \"friction\" (engagement is \"rigid\")"},
    {"\"ratios\":[3,2],\"shift\":{\"engagement\":\"rigid\",\"element\":\"clutch\"}",
     "/blocks/gb/shift/element",
     "only used with engagement \"friction\" (engagement is \"rigid\")"},
    {"\"ratios\":[3,2],\"shift\":{\"capacity\":100,\"capacity_factor\":2}",
     "/blocks/gb/shift/capacity_factor",
     "give only one of capacity, capacity_factor"},
    {"\"ratios\":[3,2],\"shift\":{\"torque_phase_time\":0.1}",
     "/blocks/gb/shift/torque_phase_time",
     "only used with element \"clutch\" (element is \"synchronizer\")"},
    {"\"ratios\":[3,2],\"shift\":{\"mode\":\"auto_rpm\",\"upshift_rpm\":6000,"
     "\"downshift_rpm\":2000,\"element\":\"synchronizer\",\"cut_throttle\":true}",
     "/blocks/gb/shift/cut_throttle",
     "only used with element \"clutch\" (element is \"synchronizer\")"},
    {"\"ratios\":[3,2],\"shift\":{\"capacity\":0}",
     "/blocks/gb/shift/capacity",
     "must be > 0 (got 0)"},
    {"\"ratios\":[3,2],\"shift\":{\"element\":\"clutch\",\"torque_phase_time\":-1}",
     "/blocks/gb/shift/torque_phase_time",
     "must be >= 0 (got -1)"},
    {"\"ratios\":[3,2],\"shift\":{\"engagement\":\"hard\"}",
     "/blocks/gb/shift/engagement",
     "must be one of \"friction\", \"rigid\" (got \"hard\")"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
      "\"gb\":{\"type\":\"gearbox\",%s},\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"gb.in\"],[\"gb.out\",\"ld.in\"]]}",
      bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("gearbox");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_neutral_decouples);
  tcase_add_loop_test(tc, test_each_gear_ratio, 0, (int)(sizeof gears / sizeof gears[0]));
  tcase_add_test(tc, test_efficiency_braking);
  suite_add_tcase(s, tc);
  tc = tcase_create("shifts");
  tcase_add_test(tc, test_manual_shift_interrupt);
  tcase_add_test(tc, test_lockout_defers_request);
  tcase_add_test(tc, test_instant_shift);
  tcase_add_test(tc, test_reengagement_conserves_momentum);
  suite_add_tcase(s, tc);
  tc = tcase_create("friction");
  tcase_add_test(tc, test_friction_upshift_power_on);
  tcase_add_test(tc, test_friction_downshift_power_on);
  tcase_add_loop_test(tc, test_oncoming_overloaded_at_sync, 0, 2);
  tcase_add_test(tc, test_synchronizer_upshift);
  tcase_add_test(tc, test_synchronizer_lever_back);
  tcase_add_test(tc, test_friction_cut_throttle);
  tcase_add_test(tc, test_friction_shift_at_rest);
  tcase_add_test(tc, test_friction_needs_capacity);
  tcase_add_test(tc, test_friction_capacity_from_engine);
  tcase_add_test(tc, test_auto_rpm_friction_sequence);
  suite_add_tcase(s, tc);
  tc = tcase_create("policies");
  tcase_add_test(tc, test_auto_rpm_upshift_sequence);
  tcase_add_test(tc, test_shift_map_per_gear);
  tcase_add_test(tc, test_shift_map_by_throttle);
  tcase_add_test(tc, test_auto_rpm_downshifts);
  tcase_add_test(tc, test_auto_selector_reverse);
  tcase_add_test(tc, test_auto_reverse);
  tcase_add_test(tc, test_manual_clamps);
  suite_add_tcase(s, tc);
  tc = tcase_create("callback");
  tcase_add_test(tc, test_callback_overrides_mode);
  tcase_add_loop_test(tc, test_set_policy_errors, 0,
                      (int)(sizeof policy_bad / sizeof policy_bad[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("modes");
  tcase_add_test(tc, test_modes);
  tcase_add_test(tc, test_neutral_needs_inertia);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
