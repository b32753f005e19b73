/* lib/stiffness.c (can RK4 take the step size?) and the solver's numerical
 * guard (a diverging run stops with the block, the shaft or state, and the
 * time).
 *
 * Linear cases have closed forms: a load T = −c1·ω on a shaft of inertia J
 * has the eigenvalue λ = −c1/J, and RK4 multiplies ω by
 * R(λ·dt) = 1 + z + z²/2 + z³/6 + z⁴/24 per step, exactly up to round-off.
 * A magic-formula tyre on a body held at rest is a spring of stiffness
 * k = Fz·B·C·D/σ on the tread deflection against the hub inertia:
 * λ = ±i·sqrt(k·R²/J) without damping. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest |λ|·dt RK4 takes on the negative real axis: the real root of
 * R(z) = −1, z = −2.785293563405282. */
#define RK4_REAL_REACH 2.785293563405282
/* ... and on the imaginary axis: |R(iy)| = 1 at y = 2√2. */
#define RK4_IMAG_REACH 2.8284271247461903

/* A linear system's eigenvalue from central differences of an affine
 * function is exact up to round-off of a few ulps over h = 1e-6: 1e-7
 * relative leaves a wide margin. */
#define TOL_EIG 1e-7

static double rk4_gain(double z) { return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24; }

static dg_sim *sim_of(const char *json, dg_graph **g) {
  *g = dg_test_graph(json);
  return dg_test_sim(*g);
}

static void set_initial(dg_sim *sim, const char *name, double value) {
  int id = dg_sim_signal_find(sim, name);
  ck_assert_msg(id >= 0, "no signal %s", name);
  dg_error err;
  ck_assert_int_eq(dg_sim_set_initial(sim, 1, &id, &value, &err), DG_OK);
}

/* A flywheel of J1 on a drag load of J2 with T = −(c0·sign ω + c1·ω + c2·ω|ω|). */
static char *load_rig(double j1, double j2, double c0, double c1, double c2) {
  static char buf[512];
  snprintf(buf, sizeof buf,
           "{\"drivegraph\": 1, \"blocks\": {"
           "\"fly\": {\"type\": \"inertia\", \"inertia\": %.17g},"
           "\"dyno\": {\"type\": \"load\", \"inertia\": %.17g, \"c0\": %.17g, \"c1\": %.17g, "
           "\"c2\": %.17g}},"
           "\"connections\": [[\"fly.out\", \"dyno.in\"]]}",
           j1, j2, c0, c1, c2);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Linear load: the eigenvalue, the limit, the message                      */

START_TEST(test_load_eigenvalue_and_message) {
  dg_graph *g;
  dg_sim *sim = sim_of(load_rig(0.001, 0.001, 0, 20, 0), &g);
  dg_stiffness st;
  dg_error err;
  /* λ = −20 / 0.002 = −1e4: |λ|·dt = 10 at 1 ms */
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, &st, &err), DG_ERR_NUMERIC);
  ck_assert_int_eq(st.size, 1);
  ck_assert_double_eq_tol(st.lambda_re, -1e4, 1e4 * TOL_EIG);
  ck_assert_double_eq_tol(st.lambda_im, 0.0, 1e4 * TOL_EIG);
  ck_assert_double_eq_tol(st.rate, 1e4, 1e4 * TOL_EIG);
  ck_assert_double_eq_tol(st.max_rate, 1e4, 1e4 * TOL_EIG);
  /* the bisection for the boundary runs to 60 halvings: far below 1e-9 */
  ck_assert_double_eq_tol(st.dt_limit, RK4_REAL_REACH / 1e4, 1e-9 * RK4_REAL_REACH / 1e4);
  ck_assert_double_eq(st.recommended_dt, 2e-4); /* 2/|λ| = 2e-4 exactly: a round number */
  ck_assert(st.stiff);
  ck_assert_int_eq(err.code, DG_ERR_NUMERIC);
  ck_assert_str_eq(err.path, "/blocks/dyno");
  ck_assert_str_eq(err.file, "test.json");
  ck_assert_str_eq(err.text,
                   "step size 0.001 s is too large for RK4: a mode with eigenvalue -1e+04 1/s "
                   "(|eigenvalue|*dt = 10, stable below 2.79) moves mostly speed of fly.out = "
                   "dyno.in (block \"dyno\"); use dt <= 0.0002 s");
  ck_assert_str_eq(st.where, "speed of fly.out = dyno.in (block \"dyno\")");
  ck_assert_int_eq(st.block, 1);

  /* at the recommended step and at the limit itself it is stable */
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 2e-4, &st, &err), DG_OK);
  ck_assert_int_eq(err.code, DG_OK);
  ck_assert(!st.stiff);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 2.78e-4, &st, &err), DG_OK);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 2.79e-4, &st, &err), DG_ERR_NUMERIC);
  /* out may be NULL */
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, NULL, &err), DG_ERR_NUMERIC);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, NULL, NULL), DG_ERR_NUMERIC);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Coulomb friction is no stiffness. At rest it sticks: the shaft is held
 * (a tie to ground), no DOF is left and nothing limits dt. Sliding, its
 * direction is fixed for the step, so only the drag's slope shows:
 * λ = −(c1 + 2·c2·|ω|)/J, in both directions. */
START_TEST(test_load_jump_and_slope) {
  dg_graph *g;
  dg_sim *sim = sim_of(load_rig(0.001, 0.001, 5, 20, 0.1), &g);
  dg_stiffness st;
  dg_error err;
  ck_assert_int_eq(dg_sim_step(sim, 1e-12), DG_OK); /* at rest: it sticks */
  ck_assert_int_eq(dg_sim_dof_count(sim), 0);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 1e-4, &st, &err), DG_OK);
  ck_assert_int_eq(st.size, 0);
  ck_assert(isinf(st.dt_limit));
  dg_sim_free(sim);
  for (int k = 0; k < 2; k++) {
    sim = dg_test_sim(g);
    /* stepped once by a negligible dt, so that the check linearizes
     * exactly here (an unstepped sim is checked one short step later) */
    set_initial(sim, "dyno.omega", k ? -50.0 : 50.0);
    ck_assert_int_eq(dg_sim_step(sim, 1e-12), DG_OK);
    set_initial(sim, "dyno.omega", k ? -50.0 : 50.0);
    ck_assert_int_eq(dg_sim_check_stiffness(sim, 1e-4, &st, &err), DG_OK);
    ck_assert_double_eq_tol(st.lambda_re, -(20 + 2 * 0.1 * 50) / 0.002, 1.5e4 * TOL_EIG);
    dg_sim_free(sim);
  }
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A light shaft between heavy inertias                                     */

/* The turbine of a torque converter (2e-4 kg·m²) between the engine (0.35
 * with the pump) and a 50 kg·m² load behind an open clutch: the fluid
 * coupling's slope dT/dω_t on the light turbine is a fast mode. */
static const char *const turbine_rig =
    "{\"drivegraph\": 1, \"blocks\": {"
    "\"engine\": {\"type\": \"torque_source\", \"inertia\": 0.3, \"torque\": 0},"
    "\"tc\": {\"type\": \"torque_converter\", \"pump_inertia\": 0.05, \"turbine_inertia\": 0.0002},"
    "\"clutch\": {\"type\": \"clutch\", \"max_torque\": 400},"
    "\"vehicle\": {\"type\": \"load\", \"inertia\": 50, \"c1\": 1.0}},"
    "\"connections\": [[\"engine.out\", \"tc.in\"], [\"tc.out\", \"clutch.in\"],"
    " [\"clutch.out\", \"vehicle.in\"]]}";

/* Runs the turbine rig for 1 s at dt with the clutch open and the engine at
 * 2000 rpm; returns the final turbine / pump speed ratio. */
static double turbine_run(double dt, dg_stiffness *st, int *rc) {
  dg_graph *g;
  dg_sim *sim = sim_of(turbine_rig, &g);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 1.0);
  set_initial(sim, "engine.rpm", 2000.0);
  dg_error err;
  *rc = dg_sim_check_stiffness(sim, dt, st, &err);
  long n = lround(1.0 / dt);
  for (long k = 0; k < n; k++)
    ck_assert_int_eq(dg_sim_step(sim, dt), DG_OK);
  double sr = dg_test_signal(sim, "tc.omega_out") / dg_test_signal(sim, "tc.omega");
  dg_sim_free(sim);
  dg_graph_free(g);
  return sr;
}

START_TEST(test_light_shaft) {
  dg_graph *g;
  dg_sim *sim = sim_of(turbine_rig, &g);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, 1.0);
  set_initial(sim, "engine.rpm", 2000.0);
  dg_stiffness st;
  dg_error err;
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, &st, &err), DG_ERR_NUMERIC);
  ck_assert_str_eq(err.path, "/blocks/clutch");
  ck_assert_msg(strstr(err.text, "moves mostly speed of tc.out = clutch.in (block \"clutch\")"),
                "%s", err.text);
  ck_assert_double_lt(st.lambda_re, -2.785 / 0.001);
  ck_assert_double_le(st.recommended_dt, st.dt_limit);
  ck_assert_double_le(st.recommended_dt, 2.0 / st.rate);
  ck_assert_double_gt(st.recommended_dt, 2.0 / st.rate / 2.5); /* 1, 2, 5 steps */
  /* checking does not step or change the simulation */
  ck_assert_int_eq((int)dg_sim_step_count(sim), 0);
  ck_assert_double_eq(dg_test_signal(sim, "engine.rpm"), 2000.0);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* The warning is real: at 1 ms the turbine runs away (energy from
   * nothing: the engine has no torque), at the recommended dt it settles
   * at the pump's speed (the fluid coupling with nothing to drive). */
  int rc;
  double sr = turbine_run(0.001, &st, &rc);
  ck_assert_int_eq(rc, DG_ERR_NUMERIC);
  ck_assert_double_gt(fabs(sr), 10.0);
  double rec = st.recommended_dt;
  sr = turbine_run(rec, &st, &rc);
  ck_assert_int_eq(rc, DG_OK);
  ck_assert_double_eq_tol(sr, 1.0, 0.01);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A stiff tyre                                                             */

static char *tyre_rig(double damping) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"drivegraph\": 1, \"blocks\": {"
           "\"motor\": {\"type\": \"torque_source\", \"inertia\": 0.01, \"torque\": 100},"
           "\"wheel\": {\"type\": \"wheel\", \"radius\": 0.3, \"inertia\": 0.5, \"tyre\": "
           "{\"model\": \"magic_formula\", \"B\": 12, \"C\": 1.9, \"D\": 1.1, "
           "\"relaxation_length\": 0.02, \"damping_ratio\": %g}},"
           "\"body\": {\"type\": \"vehicle\", \"mass\": 300, \"wheelbase\": 2.0, "
           "\"cg_to_front\": 1.0, \"cg_height\": 0.4, \"cda\": 0.5, "
           "\"rolling_resistance\": 0.01}},"
           "\"connections\": [[\"motor.out\", \"wheel.hub\"], "
           "[\"wheel.ground\", \"body.rear_left\"]]}",
           damping);
  return buf;
}

START_TEST(test_stiff_tyre) {
  for (int damped = 0; damped <= 1; damped++) {
    dg_graph *g;
    dg_sim *sim = sim_of(tyre_rig(damped), &g);
    dg_stiffness st0, st;
    dg_error err;
    /* unstepped: the check steps a private copy so the body publishes Fz */
    ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.01, &st0, &err), DG_ERR_NUMERIC);
    ck_assert_str_eq(err.path, "/blocks/wheel");
    ck_assert_int_eq((int)dg_sim_step_count(sim), 0);
    ck_assert_double_eq(dg_test_signal(sim, "wheel.fz"), 0.0);
    /* the same after a real first step of 1 µs (what the copy did) */
    ck_assert_int_eq(dg_sim_step(sim, 1e-6), DG_OK);
    ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.01, &st, &err), DG_ERR_NUMERIC);
    ck_assert_double_eq_tol(st.rate, st0.rate, 1e-9 * st.rate);
    /* body held at rest: one DOF (the hub) and the states slip, x and the
     * body's three road-load energies (drag, rolling, grade) */
    ck_assert_int_eq(dg_sim_dof_count(sim), 1);
    ck_assert_int_eq(st.size, 6);
    double fz = dg_test_signal(sim, "wheel.fz");
    ck_assert_double_eq_tol(fz, 300 * 9.81 / 4, 1.0); /* a quarter of the weight */
    double k = fz * 12 * 1.9 * 1.1 / 0.02, jtot = 0.51, r = 0.3;
    double wn = sqrt(k * r * r / jtot);
    /* the damper is critical for the wheel's own 0.5 kg·m²: ζ = sqrt(0.5/0.51) */
    double zeta = damped ? sqrt(0.5 / jtot) : 0.0;
    /* The slip state moved by the 1 µs step (~1e-5) lowers the slope of the
     * magic formula by ~(B·κ)²: 1e-6 relative covers it. */
    ck_assert_double_eq_tol(st.rate, wn, 1e-6 * wn);
    ck_assert_double_eq_tol(st.lambda_re, -zeta * wn, 1e-6 * wn);
    ck_assert_double_eq_tol(fabs(st.lambda_im), wn * sqrt(1 - zeta * zeta), 1e-6 * wn);
    if (!damped) /* on the imaginary axis RK4 reaches 2√2 */
      ck_assert_double_eq_tol(st.dt_limit, RK4_IMAG_REACH / wn, 1e-6 * st.dt_limit);
    ck_assert_msg(strstr(err.text, "moves mostly speed of motor.out = wheel.hub (block \"wheel\")"),
                  "%s", err.text);
    ck_assert_int_eq(dg_sim_check_stiffness(sim, st.recommended_dt, NULL, &err), DG_OK);
    dg_sim_free(sim);
    dg_graph_free(g);
  }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The example graphs and side effects                                      */

static const char *const examples[] = {"awd_lsd", "ev_single_speed", "gear_train",
                                       "hatchback_fwd_manual", "open_diff_axle",
                                       "sedan_rwd_automatic"};

START_TEST(test_examples) {
  char path[1024], rel[256];
  snprintf(rel, sizeof rel, "graphs/%s.json", examples[_i]);
  dg_test_path(path, sizeof path, rel);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s: %s", path, err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_stiffness st;
  /* every example runs at the default 1 ms */
  ck_assert_msg(dg_sim_check_stiffness(sim, 0.001, &st, &err) == DG_OK, "%s: %s", rel, err.text);
  ck_assert(st.dt_limit > 0.001);
  /* and a step of a second is too much for all but the slow test rigs */
  int rc = dg_sim_check_stiffness(sim, 1.0, &st, &err);
  if (rc == DG_ERR_NUMERIC) {
    ck_assert(st.stiff);
    ck_assert_msg(strncmp(err.path, "/blocks/", 8) == 0, "%s", err.path);
    ck_assert_double_lt(st.recommended_dt, st.dt_limit);
  } else {
    ck_assert_int_eq(rc, DG_OK);
    ck_assert_double_gt(st.dt_limit, 1.0);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Checking in the middle of a run does not change its results by one bit. */
START_TEST(test_check_changes_nothing) {
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_ptr_nonnull(g);
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  int n = dg_sim_signal_count(a);
  for (int k = 0; k < 3000; k++) {
    double thr = k < 200 ? 0.0 : 1.0;
    dg_sim_set_input(a, DG_INPUT_THROTTLE, thr);
    dg_sim_set_input(b, DG_INPUT_THROTTLE, thr);
    dg_sim_set_input(a, DG_INPUT_GEAR, 1);
    dg_sim_set_input(b, DG_INPUT_GEAR, 1);
    if (k % 500 == 0)
      dg_sim_check_stiffness(b, 0.001, NULL, NULL);
    ck_assert_int_eq(dg_sim_step(a, 0.001), DG_OK);
    ck_assert_int_eq(dg_sim_step(b, 0.001), DG_OK);
    for (int i = 0; i < n; i++) {
      double va = dg_sim_signal(a, i), vb = dg_sim_signal(b, i);
      ck_assert_msg(memcmp(&va, &vb, sizeof va) == 0, "step %d: %s %.17g != %.17g", k,
                    dg_sim_signal_name(a, i), va, vb);
    }
  }
  ck_assert_double_gt(dg_test_signal(a, "body.speed"), 5.0);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
}
END_TEST

/* A ratio that changes with a state (the solver rebuilds G every substep):
 * the linearization includes the inertial term −I_src·r·ṙ of the changing
 * ratio, λ = −(c1 + I_src·r·ṙ)/(I_ld + I_src·r²), and leaves the run bit for
 * bit as it was. */
START_TEST(test_variable_kinematics) {
  dg_registry *reg = dg_test_registry();
  const char *json = "{\"drivegraph\":1,\"blocks\":{"
                     "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5},"
                     "\"cvt\":{\"type\":\"test_cvt\",\"ratio\":1,\"rate\":0.5},"
                     "\"ld\":{\"type\":\"load\",\"inertia\":2.0,\"c1\":1.0}},"
                     "\"connections\":[[\"src.out\",\"cvt.in\"],[\"cvt.out\",\"ld.in\"]]}";
  dg_graph *g = dg_test_graph_reg(reg, json);
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  set_initial(a, "ld.omega", 10.0);
  set_initial(b, "ld.omega", 10.0);
  dg_stiffness st;
  dg_error err;
  for (int k = 0; k < 2000; k++) {
    if (k % 400 == 1) {
      ck_assert_int_eq(dg_sim_check_stiffness(b, 0.001, &st, &err), DG_OK);
      double r = 1.0 + 0.5 * dg_sim_time(b); /* ṙ = 0.5 from r = 1 */
      double lam = -(1.0 + 0.5 * r * 0.5) / (2.0 + 0.5 * r * r);
      ck_assert_double_eq_tol(st.lambda_re, lam, 1e-6 * fabs(lam));
      ck_assert_int_eq(st.size, 2); /* the load's speed and the ratio */
    }
    ck_assert_int_eq(dg_sim_step(a, 0.001), DG_OK);
    ck_assert_int_eq(dg_sim_step(b, 0.001), DG_OK);
    for (int i = 0; i < dg_sim_signal_count(a); i++) {
      double va = dg_sim_signal(a, i), vb = dg_sim_signal(b, i);
      ck_assert_msg(memcmp(&va, &vb, sizeof va) == 0, "step %d: %s %.17g != %.17g", k,
                    dg_sim_signal_name(a, i), va, vb);
    }
  }
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

START_TEST(test_usage_errors) {
  dg_graph *g;
  dg_sim *sim = sim_of(load_rig(1, 1, 0, 1, 0), &g);
  dg_error err;
  dg_stiffness st;
  const double bad[] = {0.0, -0.001, NAN, INFINITY};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(dg_sim_check_stiffness(sim, bad[i], &st, &err), DG_ERR_USAGE);
    char want[64];
    snprintf(want, sizeof want, "step size must be > 0 (got %g)", bad[i]);
    ck_assert_str_eq(err.text, want);
    ck_assert(!st.stiff);
  }
  ck_assert_int_eq(dg_sim_check_stiffness(NULL, 0.001, &st, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "no simulation given");
  /* a slow system: nothing binds below a huge step */
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, &st, &err), DG_OK);
  ck_assert_double_eq_tol(st.lambda_re, -0.5, 0.5 * TOL_EIG);
  ck_assert_double_eq_tol(st.recommended_dt, 2.0, 1e-12); /* 2/0.5 = 4 → 2 */
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* A block with an internal state: ṡ = rate·s                                */

typedef struct rate_params {
  double rate;
  double nan_after;
} rate_params;
enum { RATE_IN };
static const dg_port_def rate_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true},
    {0},
};
static const dg_param_def rate_param_table[] = {
    DG_NUMBER(rate_params, rate, .unit = "1/s", .doc = "ds/dt = rate s"),
    DG_NUMBER(rate_params, nan_after, .unit = "s", .def = 1e30,
              .doc = "from this time on, a NaN torque"),
    {0},
};
static const dg_signal_def rate_signals[] = {
    {.name = "s", .unit = "", .port = DG_SIGNAL_HOOK},
    {.name = "omega", .unit = "rad/s", .port = RATE_IN, .scale = 1},
    {0},
};
static void rate_upstream(dg_block *self, dg_topo *topo) {
  dg_topo_dof(topo, self, RATE_IN);
  dg_topo_inertia(topo, self, RATE_IN, 1.0);
}
static void rate_torque(dg_block *self, dg_ctx *ctx) {
  const rate_params *p = self->params;
  if (ctx->t >= p->nan_after)
    dg_port_add_torque(ctx, self, RATE_IN, NAN);
  dg_block_state_rate(ctx, self)[0] = p->rate * dg_block_state(ctx, self)[0];
}
static double rate_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  (void)index;
  return dg_block_state(ctx, self)[0];
}
static int rate_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  (void)index;
  *dg_block_state_commit(ctx, self) = value;
  return 0;
}
static const dg_block_class test_rate = {
    .abi = DG_BLOCK_ABI,
    .type = "test_rate",
    .doc = "a shaft of inertia 1 and a state with ds/dt = rate s",
    .ports = rate_ports,
    .params = rate_param_table,
    .params_size = sizeof(rate_params),
    .signals = rate_signals,
    .num_states = 1,
    .state_upstream = rate_upstream,
    .torque_downstream = rate_torque,
    .signal = rate_signal,
    .set_signal = rate_set_signal,
};

static dg_sim *rate_sim(dg_registry **reg, dg_graph **g, double rate, double nan_after) {
  *reg = dg_registry_new();
  dg_error err;
  ck_assert_int_eq(dg_registry_add(*reg, &test_rate, &err), DG_OK);
  char json[256];
  snprintf(json, sizeof json,
           "{\"drivegraph\": 1, \"blocks\": {\"x\": {\"type\": \"test_rate\", \"rate\": %g, "
           "\"nan_after\": %g}}, \"connections\": []}",
           rate, nan_after);
  *g = dg_test_graph_reg(*reg, json);
  dg_sim *sim = dg_test_sim(*g);
  set_initial(sim, "x.s", 1.0);
  return sim;
}

START_TEST(test_internal_state_mode) {
  dg_registry *reg;
  dg_graph *g;
  /* a decay at −2000 1/s: stiff at 10 ms, named by its state */
  dg_sim *sim = rate_sim(&reg, &g, -2000, 1e30);
  dg_stiffness st;
  dg_error err;
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.01, &st, &err), DG_ERR_NUMERIC);
  ck_assert_int_eq(st.size, 2);
  ck_assert_double_eq_tol(st.lambda_re, -2000, 2000 * TOL_EIG);
  ck_assert_str_eq(st.where, "internal state 0 of block \"x\" (test_rate)");
  ck_assert_str_eq(err.path, "/blocks/x");
  ck_assert_str_eq(err.text,
                   "step size 0.01 s is too large for RK4: a mode with eigenvalue -2e+03 1/s "
                   "(|eigenvalue|*dt = 20, stable below 2.79) moves mostly internal state 0 of "
                   "block \"x\" (test_rate); use dt <= 0.001 s");
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
  /* a growth at +2000 1/s is physics, not the step size */
  sim = rate_sim(&reg, &g, 2000, 1e30);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.01, &st, &err), DG_OK);
  ck_assert(!st.stiff);
  ck_assert_double_eq(st.rate, 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* The guard: a diverging run stops with block, shaft or state, and time    */

START_TEST(test_guard_speed) {
  dg_graph *g;
  dg_sim *sim = sim_of(load_rig(0.001, 0.001, 0, 20, 0), &g);
  set_initial(sim, "dyno.omega", 100.0);
  /* z = λ·dt = −10: R = 291, so ω = 100·291^k passes the 1e9 limit of a
   * believable speed on the third step (2.46e9), which starts at 2 ms. */
  ck_assert_double_eq_tol(rk4_gain(-10.0), 291.0, 1e-12);
  ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "dyno.omega"), 100 * 291.0, 1e-6);
  ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_OK);
  ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_ERR_NUMERIC);
  const dg_error *e = dg_sim_last_error(sim);
  ck_assert_int_eq(e->code, DG_ERR_NUMERIC);
  ck_assert_str_eq(e->file, "test.json");
  ck_assert_str_eq(e->path, "/blocks/dyno");
  char want[DG_ERROR_TEXT_LEN];
  snprintf(want, sizeof want,
           "simulation diverged at t = 0.002 s: speed of fly.out became %g (block \"dyno\"); "
           "reduce dt or check the parameters",
           100 * 291.0 * 291.0 * 291.0);
  ck_assert_str_eq(e->text, want);
  /* the failed step committed nothing, and the sim stays failed */
  ck_assert_double_eq_tol(dg_sim_time(sim), 0.002, 1e-15);
  ck_assert_int_eq((int)dg_sim_step_count(sim), 2);
  ck_assert_int_eq(dg_sim_step(sim, 0.001), DG_ERR_NUMERIC);
  ck_assert_str_eq(dg_sim_last_error(sim)->text, want);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 0.001, NULL, NULL), DG_ERR_USAGE);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A NaN torque from t = 10 ms: the step that starts there fails. */
START_TEST(test_guard_nan) {
  dg_registry *reg;
  dg_graph *g;
  dg_sim *sim = rate_sim(&reg, &g, 0.0, 0.0105);
  int rc = DG_OK;
  int k = 0;
  for (; k < 100 && rc == DG_OK; k++)
    rc = dg_sim_step(sim, 0.001);
  ck_assert_int_eq(rc, DG_ERR_NUMERIC);
  ck_assert_int_eq(k, 11); /* steps from 0 .. 0.009 pass, the one from 0.010 fails */
  const dg_error *e = dg_sim_last_error(sim);
  ck_assert_str_eq(e->path, "/blocks/x");
  ck_assert_msg(strcmp(e->text, "simulation diverged at t = 0.01 s: speed of x.in became nan "
                                "(block \"x\"); reduce dt or check the parameters") == 0 ||
                    strcmp(e->text, "simulation diverged at t = 0.01 s: speed of x.in became "
                                    "-nan (block \"x\"); reduce dt or check the parameters") == 0,
                "%s", e->text);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* An internal state that grows without bound: s = R(z)^k overflows. The
 * guard names the state, the block and its type. */
START_TEST(test_guard_state) {
  dg_registry *reg;
  dg_graph *g;
  dg_sim *sim = rate_sim(&reg, &g, 1000.0, 1e30);
  int rc = DG_OK;
  long k = 0;
  double last = 1.0;
  for (; k < 1000 && rc == DG_OK; k++) {
    rc = dg_sim_step(sim, 0.01);
    if (rc == DG_OK) {
      last = dg_test_signal(sim, "x.s");
      ck_assert(isfinite(last));
    }
  }
  ck_assert_int_eq(rc, DG_ERR_NUMERIC);
  /* R(10) = 644.33 per step: 1.8e308 is passed after about 110 steps */
  ck_assert_double_eq_tol(log10(last) / log10(rk4_gain(10.0)), (double)(k - 1), 1e-6 * k);
  ck_assert(k >= 105 && k <= 111);
  const dg_error *e = dg_sim_last_error(sim);
  char want[DG_ERROR_TEXT_LEN];
  snprintf(want, sizeof want,
           "simulation diverged at t = %.6g s: internal state 0 of block \"x\" (test_rate) became ",
           dg_sim_time(sim));
  ck_assert_msg(strncmp(e->text, want, strlen(want)) == 0, "%s", e->text);
  ck_assert_double_eq_tol(dg_sim_time(sim), 0.01 * (double)(k - 1), 1e-9);
  ck_assert_str_eq(e->path, "/blocks/x");
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("stiffness");
  TCase *tc = tcase_create("linearization");
  tcase_add_test(tc, test_load_eigenvalue_and_message);
  tcase_add_test(tc, test_load_jump_and_slope);
  tcase_add_test(tc, test_light_shaft);
  tcase_add_test(tc, test_stiff_tyre);
  tcase_add_test(tc, test_internal_state_mode);
  tcase_add_test(tc, test_variable_kinematics);
  tcase_add_test(tc, test_usage_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("examples");
  tcase_add_loop_test(tc, test_examples, 0, (int)(sizeof examples / sizeof examples[0]));
  tcase_add_test(tc, test_check_changes_nothing);
  suite_add_tcase(s, tc);
  tc = tcase_create("guard");
  tcase_add_test(tc, test_guard_speed);
  tcase_add_test(tc, test_guard_nan);
  tcase_add_test(tc, test_guard_state);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
