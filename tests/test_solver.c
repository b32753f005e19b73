/* Solver: coupled inertia, RK4, efficiency, projection, multipliers,
 * initial values, threads. Every expectation is a closed form. */
#include "testutil.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Constant accelerations are integrated exactly by RK4, so what remains is
 * round-off: ~1e-16 per operation over ~1e4 operations. */
#define TOL_EXACT 1e-10

static dg_graph *gear_rig(double torque, double eff) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":%.17g},"
                        "\"g\":{\"type\":\"gear\",\"ratio\":3,\"efficiency\":%.17g},"
                        "\"ld\":{\"type\":\"load\",\"inertia\":1.0}},"
                        "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}",
                        torque, eff);
}

/* T·k / (I_load + I_src·k²) */
START_TEST(test_gear_acceleration) {
  dg_graph *g = gear_rig(10.0, 1.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 1.0 + 0.1 * 9.0, 1e-15);
  dg_test_step(sim, 1000, 1e-3);
  double alpha = 10.0 * 3.0 / (1.0 + 0.1 * 9.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), alpha * 1.0, TOL_EXACT * alpha);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 3.0 * alpha, TOL_EXACT * alpha);
  ck_assert_double_eq_tol(dg_sim_time(sim), 1.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The mesh loses (1 − η) of the power it transmits, inertial power
 * included. Driving (the source supplies P, the load receives ηP), with
 * m_s, m_L the mesh torques at source and load, ω_s = 3 ω_L:
 *   I_s ω̇_s = T − m_s,  J_L ω̇_L = m_L,  m_L ω_L = η m_s ω_s
 *   ⇒ ω̇_L = 3ηT / (J_L + 9η I_s).
 * Braking (the load drives the source): m_s ω_s = η m_L ω_L
 *   ⇒ ω̇_L = 3T / (9 I_s + η J_L).
 * (A path factor on the applied torque alone gave 3ηT / (J_L + 9 I_s): the
 * source's own inertial torque passed the mesh without loss.) */
START_TEST(test_efficiency_driving_and_braking) {
  const double eta = 0.9, Is = 0.1, JL = 1.0;
  dg_graph *g = gear_rig(10.0, eta);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 3.0 * eta * 10.0 / (JL + 9.0 * eta * Is),
                          TOL_EXACT);
  dg_sim_free(sim);
  dg_graph_free(g);

  g = gear_rig(-10.0, eta);
  sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "ld.omega", 100.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 300.0, 1e-12);
  dg_test_step(sim, 1000, 1e-3); /* the load keeps turning forward: braking all along */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 100.0 - 30.0 / (9.0 * Is + eta * JL),
                          TOL_EXACT * 100);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A reversal of a mesh's power is an event: the directions are held over
 * a segment and the segment ends where the held direction's power reaches
 * zero, so RK4 stays fourth order through it. Rig: a source (I_s = 0.1)
 * with the torque T(t) = 10 sin(2π·1.3 t + 0.3) from a sine_source, a
 * gear (3, η = 0.8), a load J_L = 1 turning forward at 50 rad/s. The mesh
 * torque is T·J_L/(J_L + η r² I_s) while the source drives and
 * T·ηJ_L/(ηJ_L + r² I_s) while the load does: it changes sign with T, so
 *   ω̇_L = c T(t),  c = r η/(J_L + η r² I_s) (T > 0), r/(η J_L + r² I_s) (T < 0)
 * and ω_L(t) = 50 + ∫ c T dt, piecewise in closed form between the zeros
 * of T. Errors at dt = 20, 10, 5, 2.5 ms fall ~16 times per halving
 * (measured 8.3e-7, 5.2e-8, 3.2e-9, 2.0e-10; deciding the direction at
 * each stage instead gave 2.4e-4, 1.3e-4, 6.2e-5, 6.0e-6). */
#define PI 3.14159265358979323846

static double reversal_integral(double t) {
  const double r = 3, eta = 0.8, Is = 0.1, JL = 1, A = 10, om = 2 * PI * 1.3, ph = 0.3;
  const double cd = r * eta / (JL + eta * r * r * Is), cb = r / (eta * JL + r * r * Is);
  double tot = 0.0, a = 0.0;
  for (int k = (int)floor(ph / PI) + 1;; k++) {
    double z = (k * PI - ph) / om, b = fmin(z, t);
    if (b > a) {
      double c = sin(om * 0.5 * (a + b) + ph) > 0.0 ? cd : cb;
      tot += c * A / om * (cos(om * a + ph) - cos(om * b + ph));
    }
    if (z >= t)
      break;
    a = z;
  }
  return tot;
}

START_TEST(test_mesh_reversal_fourth_order) {
  const char *json = "{\"drivegraph\":1,\"blocks\":{"
                     "\"sin\":{\"type\":\"sine_source\",\"amplitude\":10,\"frequency\":1.3,"
                     "\"phase\":0.3},"
                     "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,"
                     "\"inputs\":{\"command\":\"sin.value\"}},"
                     "\"g\":{\"type\":\"gear\",\"ratio\":3,\"efficiency\":0.8},"
                     "\"ld\":{\"type\":\"load\",\"inertia\":1.0}},"
                     "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}";
  const double dts[] = {0.02, 0.01, 0.005, 0.0025};
  double err[4];
  for (int i = 0; i < 4; i++) {
    dg_graph *g = dg_test_graph(json);
    dg_sim *sim = dg_test_sim(g);
    dg_test_set_initial1(sim, "ld.omega", 50.0);
    int n = (int)lround(2.0 / dts[i]);
    err[i] = 0.0;
    for (int k = 1; k <= n; k++) {
      ck_assert_int_eq(dg_sim_step(sim, dts[i]), DG_OK);
      double t = k * dts[i];
      err[i] = fmax(err[i], fabs(dg_test_signal(sim, "ld.omega") - 50.0 - reversal_integral(t)));
    }
    ck_assert_int_ge(dg_sim_event_count(sim), 5); /* T changes sign 5 times in 2 s */
    dg_sim_free(sim);
    dg_graph_free(g);
  }
  printf("mesh reversals: errors %.3g %.3g %.3g %.3g at dt 20, 10, 5, 2.5 ms\n", err[0], err[1],
         err[2], err[3]);
  for (int i = 0; i < 3; i++)
    ck_assert_msg(err[i] / err[i + 1] > 12.0, "order: %g / %g", err[i], err[i + 1]);
  ck_assert_double_lt(err[2], 1e-8);
}
END_TEST

/* Two gears in parallel between the same shafts, one of them lossy: rigid
 * shafts do not say how the torque divides between them, so the lossy
 * one's loss is not determined. Refused at load (not a plausible number),
 * naming the block and the remedies; lossless parallel gears stay valid. */
START_TEST(test_lossy_parallel_refused) {
  const char *fmt = "{\"drivegraph\":1,\"blocks\":{"
                    "\"src\":{\"type\":\"torque_source\",\"inertia\":1,\"torque\":10},"
                    "\"g1\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":%g},"
                    "\"g2\":{\"type\":\"gear\",\"ratio\":2},"
                    "\"ld\":{\"type\":\"load\",\"inertia\":2}},"
                    "\"connections\":[[\"src.out\",\"g1.in\",\"g2.in\"],"
                    "[\"g1.out\",\"g2.out\",\"ld.in\"]]}";
  char json[1024];
  snprintf(json, sizeof json, fmt, 0.9);
  dg_error err = dg_test_graph_error(json);
  ck_assert_str_eq(err.path, "/blocks/g1");
  ck_assert_msg(strstr(err.text, "the lossy mesh (efficiency 0.9) closes a loop whose other ratios "
                                 "already fix its speeds") &&
                    strstr(err.text, "give it efficiency 1, or put a spring_damper in the loop"),
                "%s", err.text);
  snprintf(json, sizeof json, fmt, 1.0);
  dg_graph *g = dg_test_graph(json);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 1e-3); /* ω_ld = T·2 / (J_ld + 4 J_src) · t */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 20.0 / 6.0 * 0.1, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A lock (DOF + tie, as clutches lock) above a lossy gear: the mesh still
 * loses (1 − η) of what it transmits, the power the source puts in less
 * what its own inertia keeps (the closed form of the plain gear). */
START_TEST(test_efficiency_through_lock) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g = dg_test_graph_reg(
      reg, "{\"drivegraph\":1,\"blocks\":{"
           "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":10},"
           "\"c\":{\"type\":\"test_coupler\",\"use_tie\":true},"
           "\"g\":{\"type\":\"gear\",\"ratio\":3,\"efficiency\":0.9},"
           "\"ld\":{\"type\":\"load\",\"inertia\":1.0}},"
           "\"connections\":[[\"src.out\",\"c.in\"],[\"c.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_sim_set_input(sim, dg_sim_input_find(sim, "couple"), 1.0); /* stay coupled */
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 0.9 * 30.0 / (1.0 + 9.0 * 0.9 * 0.1),
                          TOL_EXACT);
  dg_energy e;
  dg_sim_energy(sim, &e);
  double ws = dg_test_signal(sim, "src.omega"), through = e.work_in - 0.5 * 0.1 * ws * ws;
  ck_assert_double_eq_tol(e.efficiency_loss, -0.1 * through, 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

static dg_graph *axle(const char *kind, double il, double ir, double torque, double c1) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"torque_source\",\"inertia\":0.2,\"torque\":%.17g},"
                        "\"final\":{\"type\":\"gear\",\"ratio\":4.1},"
                        "\"diff\":{\"type\":\"differential\",\"kind\":\"%s\"},"
                        "\"l\":{\"type\":\"load\",\"inertia\":%.17g,\"c1\":%.17g},"
                        "\"r\":{\"type\":\"load\",\"inertia\":%.17g,\"c1\":%.17g}},"
                        "\"connections\":[[\"src.out\",\"final.in\"],[\"final.out\",\"diff.in\"],"
                        "[\"diff.left\",\"l.in\"],[\"diff.right\",\"r.in\"]]}",
                        torque, kind, il, c1, ir, c1);
}

#define IE (0.2 * 4.1 * 4.1)

/* [[I_L + I_e/4, I_e/4], [I_e/4, I_R + I_e/4]] */
START_TEST(test_open_diff_mass_matrix) {
  dg_graph *g = axle("open", 1.2, 0.9, 0.0, 0.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  double m[4];
  dg_sim_mass_matrix(sim, m);
  char name[64];
  dg_sim_dof_describe(sim, 0, name, sizeof name);
  if (strcmp(name, "diff.left") != 0) { /* put the left wheel first */
    ck_assert_str_eq(name, "diff.right");
    double t = m[0];
    m[0] = m[3];
    m[3] = t;
  }
  ck_assert_double_eq_tol(m[0], 1.2 + IE / 4, 1e-14);
  ck_assert_double_eq_tol(m[1], IE / 4, 1e-14);
  ck_assert_double_eq_tol(m[2], IE / 4, 1e-14);
  ck_assert_double_eq_tol(m[3], 0.9 + IE / 4, 1e-14);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Symmetric acceleration feels I_e: a = (T k / 2) / (I + I_e / 2). */
START_TEST(test_open_diff_symmetric_feels_engine) {
  const double I = 1.0, T = 50.0;
  dg_graph *g = axle("open", I, I, T, 0.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 500, 1e-3);
  double a = T * 4.1 / 2.0 / (I + IE / 2.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.omega"), a * 0.5, TOL_EXACT * a);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), a * 0.5, TOL_EXACT * a);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A speed difference does not feel the engine: with equal wheels the
 * difference mode has inertia I alone, so viscous drag c1 decays it as
 * exp(-c1 t / I) and the engine stays at rest. RK4 at dt = 1 ms on a rate of
 * 0.5/s has a relative error ~ (h λ)^5 / 120 per step: far below 1e-9. */
START_TEST(test_open_diff_difference_ignores_engine) {
  const double I = 1.0, c1 = 0.5;
  dg_graph *g = axle("open", I, I, 0.0, c1);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"l.omega", "r.omega"}, (double[]){10.0, -10.0});
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 0.0, 1e-12);
  dg_test_step(sim, 2000, 1e-3);
  double expect = 10.0 * exp(-c1 * 2.0 / I);
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.omega"), expect, 1e-9 * 10.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), -expect, 1e-9 * 10.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 0.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), 2 * expect, 2e-9 * 10.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Locked: one DOF with I_L + I_R + I_e (I_e/2 per wheel), and the locking
 * torque λ = T k (I_L − I_R) / (2 ΣI) from the wheels' equations. */
START_TEST(test_locked_diff) {
  const double il = 1.2, ir = 0.9, T = 80.0, k = 4.1;
  dg_graph *g = axle("locked", il, ir, T, 0.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, il + ir + IE, 1e-13);
  dg_test_step(sim, 100, 1e-3);
  double sum = il + ir + IE;
  double a = T * k / sum;
  ck_assert_double_eq_tol(dg_test_signal(sim, "l.omega"), a * 0.1, TOL_EXACT * a);
  ck_assert_double_eq_tol(dg_test_signal(sim, "r.omega"), a * 0.1, TOL_EXACT * a);
  double lambda = T * k * (il - ir) / (2.0 * sum);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), lambda, 1e-9 * T * k);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* No sources, no losses: kinetic energy constant to 1e-9 over 10 s. */
START_TEST(test_energy_conserved_without_sources) {
  dg_graph *g = axle("open", 1.2, 0.9, 0.0, 0.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"l.omega", "r.omega"}, (double[]){10.0, 30.0});
  double e0 = dg_sim_kinetic_energy(sim);
  ck_assert(e0 > 0);
  dg_test_step(sim, 10000, 1e-3);
  ck_assert_double_eq_tol(dg_sim_kinetic_energy(sim), e0, 1e-9 * e0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Loads only: energy never increases (to round-off) and does decrease. */
START_TEST(test_energy_decreases_with_loads) {
  const char *json =
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
      "\"final\":{\"type\":\"gear\",\"ratio\":4.1,\"efficiency\":0.95},"
      "\"diff\":{\"type\":\"differential\"},"
      "\"l\":{\"type\":\"load\",\"inertia\":1.2,\"c0\":3,\"c1\":0.4,\"c2\":0.01},"
      "\"r\":{\"type\":\"load\",\"inertia\":0.9,\"c1\":1.5}},"
      "\"connections\":[[\"src.out\",\"final.in\"],[\"final.out\",\"diff.in\"],"
      "[\"diff.left\",\"l.in\"],[\"diff.right\",\"r.in\"]]}";
  dg_graph *g = dg_test_graph(json);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"l.omega", "r.omega"}, (double[]){40.0, 25.0});
  double e0 = dg_sim_kinetic_energy(sim), prev = e0;
  for (int i = 0; i < 5000; i++) {
    dg_test_step(sim, 1, 1e-3);
    double e = dg_sim_kinetic_energy(sim);
    ck_assert_msg(e <= prev + 1e-12 * e0, "energy rose at step %d: %.17g > %.17g", i, e, prev);
    prev = e;
  }
  ck_assert(prev < 0.5 * e0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Work-energy: a constant torque T on a lossless line: KE(t) = T·θ_src(t)
 * with θ_src = ½ α_src t². */
START_TEST(test_work_equals_kinetic_energy) {
  dg_graph *g = gear_rig(10.0, 1.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 2000, 1e-3);
  double alpha_src = 3.0 * 30.0 / 1.9, t = 2.0;
  double work = 10.0 * 0.5 * alpha_src * t * t;
  ck_assert_double_eq_tol(dg_sim_kinetic_energy(sim), work, TOL_EXACT * work);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Energy audit: work in − drag − efficiency loss = ΔKE, and the efficiency
 * loss is exactly (1 − η) of the power through the mesh: the driving work
 * less the source inertia's kinetic energy. RK4 integrates the work as
 * states beside the speeds, so the balance closes to the integration error
 * (~1e-12 of the work here: smooth, h·λ ≈ 1e-3). */
START_TEST(test_energy_audit_closes) {
  const char *json =
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":10},"
      "\"g\":{\"type\":\"gear\",\"ratio\":3,\"efficiency\":0.9},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1.0,\"c1\":0.3,\"c2\":0.01}},"
      "\"connections\":[[\"src.out\",\"g.in\"],[\"g.out\",\"ld.in\"]]}";
  dg_graph *g = dg_test_graph(json);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 5000, 1e-3);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert(e.work_in > 1000.0);
  ck_assert_double_eq_tol(e.work_in, dg_sim_block_work(sim, 0), 1e-9);
  ck_assert_double_eq_tol(e.work_out, dg_sim_block_work(sim, 2), 1e-9);
  ck_assert(e.work_out < 0.0);
  double ws = dg_test_signal(sim, "src.omega"), through = e.work_in - 0.5 * 0.1 * ws * ws;
  ck_assert_double_eq_tol(e.efficiency_loss, -(1.0 - 0.9) * through, 1e-12 * e.work_in);
  ck_assert_double_eq(e.impact_loss, 0.0);
  ck_assert_double_eq_tol(e.kinetic_start, 0.0, 0.0 + 1e-300);
  ck_assert_msg(fabs(e.balance_error) < 1e-9 * e.work_in, "balance error %g of %g",
                e.balance_error, e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* RK4 is fourth order: on J ω' = −c2 ω² (ω = ω0 / (1 + c2 ω0 t / J)) the
 * error at t = 1 falls by 2⁴ = 16 when dt halves (14..18 allows for the
 * higher-order terms at these step sizes). */
static double quad_drag_error(double dt) {
  const char *json =
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\"},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1.0,\"c2\":0.5}},"
      "\"connections\":[[\"src.out\",\"ld.in\"]]}";
  dg_graph *g = dg_test_graph(json);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "ld.omega", 10.0);
  int n = (int)lround(1.0 / dt);
  dg_test_step(sim, n, dt);
  double err = fabs(dg_test_signal(sim, "ld.omega") - 10.0 / (1.0 + 0.5 * 10.0 * 1.0));
  dg_sim_free(sim);
  dg_graph_free(g);
  return err;
}

START_TEST(test_rk4_fourth_order) {
  double e1 = quad_drag_error(0.02), e2 = quad_drag_error(0.01), e3 = quad_drag_error(0.005);
  ck_assert_msg(e1 / e2 > 14.0 && e1 / e2 < 18.0, "ratio %g (errors %g %g)", e1 / e2, e1, e2);
  ck_assert_msg(e2 / e3 > 14.0 && e2 / e3 < 18.0, "ratio %g (errors %g %g)", e2 / e3, e2, e3);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Inputs inside the step                                                 */

/* A clutch slipping under a pedal ramp: source J_s = 0.2 at 50 rad/s with
 * 150 N·m, clutch max_torque 300 (no plate), load J_L = 0.5 with viscous
 * drag 20 N·m·s from rest. The pedal goes 1 → 0.5 from t = 0 to t1 =
 * 0.3333 s (not on any step grid) and holds, so the capacity is
 * T(t) = α t with α = 150/t1, then 150. The slip stays positive (the source
 * ends at 175 rad/s, the load under 7.5), so, with a = α/20, b = −a/40:
 *   t <= t1: ω_s = 50 + (150 t − α t²/2)/0.2,  ω_L = a t + b − b e^{−40 t}
 *   t >= t1: ω_s = ω_s(t1),  ω_L = 7.5 + (ω_L(t1) − 7.5) e^{−40 (t − t1)}. */
#define RAMP_T1 0.3333
static const char ramp_rig[] =
    "{\"drivegraph\":1,\"blocks\":{"
    "\"src\":{\"type\":\"torque_source\",\"inertia\":0.2,\"torque\":150},"
    "\"cl\":{\"type\":\"clutch\",\"max_torque\":300,\"inertia\":0},"
    "\"ld\":{\"type\":\"load\",\"inertia\":0.5,\"c1\":20}},"
    "\"connections\":[[\"src.out\",\"cl.in\"],[\"cl.out\",\"ld.in\"]]}";

static void ramp_exact(double t, double *ws, double *wl) {
  double alpha = 150.0 / RAMP_T1, a = alpha / 20.0, b = -a / 40.0;
  double tt = fmin(t, RAMP_T1);
  *ws = 50.0 + (150.0 * tt - alpha * tt * tt / 2.0) / 0.2;
  double wl1 = a * tt + b - b * exp(-40.0 * tt);
  *wl = t <= RAMP_T1 ? wl1 : 7.5 + (wl1 - 7.5) * exp(-40.0 * (t - RAMP_T1));
}

/* Largest error of the load speed over t = 0.1, 0.2, ..., 0.6 at step h.
 * `held`: the pedal set once per step from the schedule (inputs held
 * constant over a step, as before inputs were evaluated inside it). */
static double ramp_error(double h, bool held) {
  dg_graph *g = dg_test_graph(ramp_rig);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){50, 0});
  int pedal = dg_sim_input_find(sim, "clutch");
  const double t[] = {0.0, RAMP_T1}, v[] = {1.0, 0.5};
  dg_error err;
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, pedal, 2, t, v, false, &err), DG_OK);
  double worst = 0.0;
  int n = (int)lround(0.6 / h);
  for (int k = 1; k <= n; k++) {
    if (held) {
      double tk = (k - 1) * h;
      dg_sim_set_input(sim, pedal, tk < RAMP_T1 ? 1.0 - 0.5 * tk / RAMP_T1 : 0.5);
    }
    dg_test_step(sim, 1, h);
    if (k % (int)lround(0.1 / h) == 0) {
      double ws, wl;
      ramp_exact(dg_sim_time(sim), &ws, &wl);
      worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") - wl));
      worst = fmax(worst, fabs(dg_test_signal(sim, "src.omega") - ws) * 1e-3);
    }
  }
  ck_assert_double_eq(dg_test_signal(sim, "cl.locked"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
  return worst;
}

/* Fourth order with a ramped input and a breakpoint off the step grid:
 * halving dt divides the error by ~16 (>= 12 asked). Held inputs are first
 * order: the ratio is ~2. */
START_TEST(test_ramped_input_fourth_order) {
  double e[4];
  const double hs[4] = {0.02, 0.01, 0.005, 0.0025};
  for (int i = 0; i < 4; i++)
    e[i] = ramp_error(hs[i], false);
  for (int i = 0; i + 1 < 4; i++)
    ck_assert_msg(e[i] / e[i + 1] >= 12.0, "dt %g -> %g: error %g -> %g (ratio %g)", hs[i],
                  hs[i + 1], e[i], e[i + 1], e[i] / e[i + 1]);
  double held1 = ramp_error(0.01, true), held2 = ramp_error(0.005, true);
  printf("ramped input: errors %.3g %.3g %.3g %.3g at dt 20, 10, 5, 2.5 ms (ratios %.1f %.1f "
         "%.1f); held over the step: %.3g %.3g at 10, 5 ms (ratio %.2f)\n",
         e[0], e[1], e[2], e[3], e[0] / e[1], e[1] / e[2], e[2] / e[3], held1, held2,
         held1 / held2);
  ck_assert_msg(held1 / held2 < 3.0 && held2 > 100.0 * e[2], "held inputs: %g -> %g", held1,
                held2);
}
END_TEST

/* A jump (two breakpoints at one time, off the grid) acts at its time: the
 * same run with the jump at 0.2001 s matches its closed form at 1 ms. Before
 * the jump the pedal is pressed (no capacity), after it half released:
 * ω_s = 50 + 750 t up to t_j, then 50 + 750 t_j (150 in, 150 out);
 * ω_L = 7.5 (1 − e^{−40 (t − t_j)}). */
START_TEST(test_input_jump) {
  const double tj = 0.2001;
  dg_graph *g = dg_test_graph(ramp_rig);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){50, 0});
  int pedal = dg_sim_input_find(sim, "clutch");
  const double t[] = {0.0, tj, tj}, v[] = {1.0, 1.0, 0.5};
  dg_error err;
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, pedal, 3, t, v, false, &err), DG_OK);
  long seg0 = dg_sim_segment_count(sim);
  dg_test_step(sim, 400, 1e-3);
  ck_assert_int_eq(dg_sim_segment_count(sim) - seg0, 401); /* one step cut at t_j */
  double tt = dg_sim_time(sim);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 50.0 + 750.0 * tj, 1e-9);
  /* RK4 on e^{-40t} at h = 1 ms: 7e-11 relative per step */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 7.5 * (1.0 - exp(-40.0 * (tt - tj))),
                          1e-8);
  ck_assert_double_eq(dg_sim_get_input(sim, pedal), 0.5);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static double ramp_pedal(double t, void *user) {
  (void)user;
  return t < RAMP_T1 ? 1.0 - 0.5 * t / RAMP_T1 : 0.5;
}

static double nan_after(double t, void *user) {
  return t > *(const double *)user ? NAN : 0.0;
}

/* A callback input is evaluated at the substep times like a schedule (it
 * has no breakpoints to cut the step at, so it is compared on [0, t1)); a
 * non-finite value stops the step naming the input; dg_sim_set_input makes
 * the input a constant again. */
START_TEST(test_input_callback) {
  dg_graph *g = dg_test_graph(ramp_rig);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){50, 0});
  int pedal = dg_sim_input_find(sim, "clutch");
  dg_error err;
  ck_assert_int_eq(dg_sim_set_input_fn(sim, pedal, ramp_pedal, NULL, &err), DG_OK);
  dg_test_step(sim, 300, 1e-3);
  double ws, wl;
  ramp_exact(dg_sim_time(sim), &ws, &wl);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), ws, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), wl, 1e-8);
  dg_sim_set_input(sim, pedal, 0.25);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_double_eq(dg_sim_get_input(sim, pedal), 0.25);
  double when = 0.3505;
  ck_assert_int_eq(dg_sim_set_input_fn(sim, pedal, nan_after, &when, &err), DG_OK);
  int rc = DG_OK;
  for (int k = 0; k < 100 && rc == DG_OK; k++)
    rc = dg_sim_step(sim, 1e-3);
  ck_assert_int_eq(rc, DG_ERR_NUMERIC);
  ck_assert_str_eq(dg_sim_last_error(sim)->text,
                   "at t = 0.3505 s: input \"clutch\" became nan (its callback must return finite "
                   "values)");
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Bad schedules are refused with the input and the breakpoint named, and
 * leave the input as it was. */
START_TEST(test_input_schedule_errors) {
  dg_graph *g = dg_test_graph(ramp_rig);
  dg_sim *sim = dg_test_sim(g);
  int pedal = dg_sim_input_find(sim, "clutch");
  dg_sim_set_input(sim, pedal, 0.3);
  dg_error err;
  const double t[] = {0.0, 1.0, 0.5}, v[] = {0.0, 1.0, NAN};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, pedal, 3, t, v, false, &err), DG_ERR_RANGE);
  ck_assert_str_eq(err.text, "schedule of input \"clutch\": breakpoint 2 must be finite (got t = "
                             "0.5, v = nan)");
  const double v2[] = {0.0, 1.0, 2.0};
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, pedal, 3, t, v2, false, &err), DG_ERR_RANGE);
  ck_assert_str_eq(err.text, "schedule of input \"clutch\": times must not decrease (breakpoint "
                             "2 at 0.5 s after 1 s)");
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, pedal, 0, t, v2, false, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "schedule of input \"clutch\" needs at least one breakpoint");
  ck_assert_int_eq(dg_sim_set_input_schedule(sim, 99, 1, t, v2, false, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "no input with index 99 (the simulation has 4)");
  ck_assert_int_eq(dg_sim_set_input_fn(sim, -1, ramp_pedal, NULL, &err), DG_ERR_USAGE);
  ck_assert_double_eq(dg_sim_get_input(sim, pedal), 0.3);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---------------------------------------------------------------------- */
/* Snapshots                                                              */

/* Runs `steps` steps of `dt` and records every signal after each into rec
 * (steps × signal count). */
static void record_run(dg_sim *sim, int steps, double dt, double *rec) {
  int ns = dg_sim_signal_count(sim);
  for (int k = 0; k < steps; k++) {
    ck_assert_int_eq(dg_sim_step(sim, dt), DG_OK);
    for (int i = 0; i < ns; i++)
      rec[(size_t)k * (size_t)ns + (size_t)i] = dg_sim_signal(sim, i);
  }
}

static const char *const snapshot_cases[][2] = {
    {"graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json"},
    {"graphs/hatchback_fwd_manual.json", "graphs/scenarios/manual_launch.json"},
    {"graphs/imported/hmmwv_cvt.json", NULL},
};

/* A snapshot taken mid-launch (shifts, locks, events and a variable ratio
 * ahead) and restored gives the same run bit for bit, into the same
 * simulation and into another one of the same graph; energy audit and
 * counters included. */
START_TEST(test_snapshot_restore) {
  char spath[512];
  dg_error err;
  dg_graph *g = dg_test_graph_file(snapshot_cases[_i][0]);
  dg_scenario *scn = NULL;
  if (snapshot_cases[_i][1]) {
    dg_test_path(spath, sizeof spath, snapshot_cases[_i][1]);
    scn = dg_scenario_load_file(spath, &err);
    ck_assert_msg(scn != NULL, "%s", err.text);
  }
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  dg_driver *da = scn ? dg_driver_new(scn, a, &err) : NULL;
  dg_driver *db = scn ? dg_driver_new(scn, b, &err) : NULL;
  if (!scn)
    for (int k = 0; k < 2; k++) { /* the bench launch: full throttle, gear input 1 */
      dg_sim *x = k ? b : a;
      dg_sim_set_input(x, DG_INPUT_THROTTLE, 1.0);
      dg_sim_set_input(x, DG_INPUT_GEAR, 1.0);
    }
  const double dt = 1e-3;
  const int warm = 500, steps = 3000, ns = dg_sim_signal_count(a);
  double *r1 = malloc(sizeof(double) * (size_t)steps * (size_t)ns);
  double *r2 = malloc(sizeof(double) * (size_t)steps * (size_t)ns);
  double *r3 = malloc(sizeof(double) * (size_t)steps * (size_t)ns);
  ck_assert(r1 && r2 && r3);
  for (int k = 0; k < warm; k++)
    ck_assert_int_eq(dg_sim_step(a, dt), DG_OK);
  dg_snapshot *snap = dg_sim_snapshot(a, &err);
  ck_assert_msg(snap != NULL, "%s", err.text);
  long changes = dg_sim_topology_changes(a);
  double t_snap = dg_sim_time(a);
  dg_energy e1, e2;
  record_run(a, steps, dt, r1);
  dg_sim_energy(a, &e1);
  if (scn) /* the launches shift and lock after the snapshot */
    ck_assert_int_gt(dg_sim_topology_changes(a), changes);
  ck_assert_int_eq(dg_sim_restore(a, snap, &err), DG_OK);
  ck_assert_double_eq(dg_sim_time(a), t_snap);
  record_run(a, steps, dt, r2);
  dg_sim_energy(a, &e2);
  ck_assert_int_eq(memcmp(r1, r2, sizeof(double) * (size_t)steps * (size_t)ns), 0);
  ck_assert_int_eq(memcmp(&e1, &e2, sizeof e1), 0);
  /* another simulation of the same graph, never stepped */
  ck_assert_int_eq(dg_sim_restore(b, snap, &err), DG_OK);
  record_run(b, steps, dt, r3);
  ck_assert_int_eq(memcmp(r1, r3, sizeof(double) * (size_t)steps * (size_t)ns), 0);
  ck_assert_int_eq(dg_sim_topology_changes(b), dg_sim_topology_changes(a));
  dg_snapshot_free(snap);
  free(r1);
  free(r2);
  free(r3);
  dg_driver_free(da);
  dg_driver_free(db);
  dg_scenario_free(scn);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
}
END_TEST

/* A snapshot belongs to its graph; a failed simulation has none. */
START_TEST(test_snapshot_errors) {
  dg_graph *g1 = dg_test_graph(ramp_rig), *g2 = dg_test_graph(ramp_rig);
  dg_sim *a = dg_test_sim(g1), *b = dg_test_sim(g2);
  dg_error err;
  dg_snapshot *snap = dg_sim_snapshot(a, &err);
  ck_assert_ptr_nonnull(snap);
  ck_assert_int_eq(dg_sim_restore(b, snap, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "the snapshot is of a simulation of another graph (test.json)");
  ck_assert_int_eq(dg_sim_step(a, -1.0), DG_ERR_USAGE);
  dg_snapshot_free(snap);
  dg_snapshot_free(NULL);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g1);
  dg_graph_free(g2);
}
END_TEST

static const char *coupler_graphs[2] = {
    "{\"drivegraph\":1,\"blocks\":{"
    "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5},"
    "\"c\":{\"type\":\"test_coupler\",\"ratio\":2,\"start_coupled\":false},"
    "\"ld\":{\"type\":\"load\",\"inertia\":2.0}},"
    "\"connections\":[[\"src.out\",\"c.in\"],[\"c.out\",\"ld.in\"]]}",
    /* the same coupling as a lock: a DOF plus a tie */
    "{\"drivegraph\":1,\"blocks\":{"
    "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5},"
    "\"c\":{\"type\":\"test_coupler\",\"ratio\":2,\"start_coupled\":false,\"use_tie\":true},"
    "\"ld\":{\"type\":\"load\",\"inertia\":2.0}},"
    "\"connections\":[[\"src.out\",\"c.in\"],[\"c.out\",\"ld.in\"]]}",
};

/* Engaging conserves generalized momentum: p = I2 ω2 + k I1 ω1 on the new
 * DOF, so ω' = p / (I2 + k² I1): a plastic impact that loses energy. */
START_TEST(test_topology_change_conserves_momentum) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g = dg_test_graph_reg(reg, coupler_graphs[_i]);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_set_initial(sim, 2, (const char *[]){"src.omega", "ld.omega"}, (double[]){100.0, 10.0});
  double e0 = dg_sim_kinetic_energy(sim);
  int couple = dg_sim_input_find(sim, "couple");
  ck_assert_int_ge(couple, DG_NUM_STD_INPUTS);
  dg_sim_set_input(sim, couple, 1.0);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 1);
  double p = 2.0 * 10.0 + 2.0 * 0.5 * 100.0, J = 2.0 + 4.0 * 0.5;
  double momentum;
  dg_sim_momentum(sim, &momentum);
  char dof[64];
  dg_sim_dof_describe(sim, 0, dof, sizeof dof);
  /* p is the momentum along the load's speed; along the source's it is p/2 */
  double along = strcmp(dof, "c.out") == 0 ? 1.0 : 0.5;
  ck_assert_msg(along == 1.0 || strcmp(dof, "src.out") == 0, "dof %s", dof);
  ck_assert_double_eq_tol(momentum, along * p, 1e-12 * p);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), p / J, 1e-12 * p);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 2.0 * p / J, 1e-12 * p);
  ck_assert(dg_sim_kinetic_energy(sim) < e0);
  dg_energy e;
  dg_sim_energy(sim, &e); /* the impact is booked as a loss: the balance closes */
  ck_assert_double_eq_tol(e.impact_loss, dg_sim_kinetic_energy(sim) - e0, 1e-9 * e0);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e0);
  /* decoupling keeps every speed (the new mode is less constrained) */
  dg_sim_set_input(sim, couple, 0.0);
  dg_test_step(sim, 1, 1e-3);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), p / J, 1e-12 * p);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 2.0 * p / J, 1e-12 * p);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

START_TEST(test_initial_contradiction) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g = dg_test_graph_reg(reg,
                                  "{\"drivegraph\":1,\"blocks\":{"
                                  "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5},"
                                  "\"c\":{\"type\":\"test_coupler\",\"ratio\":2},"
                                  "\"ld\":{\"type\":\"load\",\"inertia\":2.0}},"
                                  "\"connections\":[[\"src.out\",\"c.in\"],[\"c.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  int ids[2] = {dg_sim_signal_find(sim, "src.omega"), dg_sim_signal_find(sim, "ld.omega")};
  dg_error err;
  ck_assert_int_eq(dg_sim_set_initial(sim, 2, ids, (double[]){100.0, 10.0}, &err), DG_ERR_RANGE);
  ck_assert_str_eq(err.text, "initial speed of c.out (10) contradicts the other initial values: "
                             "the current mode connects them rigidly (it would have to be 50)");
  /* consistent values are met exactly */
  ck_assert_int_eq(dg_sim_set_initial(sim, 2, ids, (double[]){100.0, 50.0}, &err), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 50.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* Two simulations of one graph in two threads give the serial result. */
typedef struct job {
  dg_sim *sim;
  double omega;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  for (int i = 0; i < 20000; i++)
    dg_sim_step(j->sim, 1e-3);
  j->omega = dg_sim_signal(j->sim, dg_sim_signal_find(j->sim, "left.omega"));
  dg_sim_free(j->sim);
  return NULL;
}

START_TEST(test_two_threads) {
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/open_diff_axle.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s", err.text);
  job serial = {dg_test_sim(g), 0}, a = {dg_test_sim(g), 0}, b = {dg_test_sim(g), 0};
  run_job(&serial);
  dg_graph_free(g); /* the simulations keep it alive */
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run_job, &a);
  pthread_create(&tb, NULL, run_job, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ck_assert(serial.omega > 10.0);
  ck_assert(a.omega == serial.omega && b.omega == serial.omega); /* bit-identical */
}
END_TEST

/* Run twice, compare bit for bit (determinism). */
START_TEST(test_deterministic) {
  dg_graph *g = axle("open", 1.2, 0.9, 35.0, 0.7);
  double out[2][3];
  for (int r = 0; r < 2; r++) {
    dg_sim *sim = dg_test_sim(g);
    dg_test_step(sim, 3000, 1e-3);
    out[r][0] = dg_test_signal(sim, "l.omega");
    out[r][1] = dg_test_signal(sim, "r.omega");
    out[r][2] = dg_test_signal(sim, "src.omega");
    dg_sim_free(sim);
  }
  for (int i = 0; i < 3; i++)
    ck_assert(out[0][i] == out[1][i]);
  dg_graph_free(g);
}
END_TEST

START_TEST(test_bad_step_and_signal) {
  dg_graph *g = gear_rig(1.0, 1.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_step(sim, 0.0), DG_ERR_USAGE);
  ck_assert_str_eq(dg_sim_last_error(sim)->text, "step size must be > 0 (got 0)");
  ck_assert(isnan(dg_sim_signal(sim, -1)));
  ck_assert_int_eq(dg_sim_signal_find(sim, "ld.omgea"), -1);
  dg_error err;
  double v;
  ck_assert_int_eq(dg_sim_signal_by_name(sim, "ld.omgea", &v, &err), DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.text, "unknown signal \"ld.omgea\"; did you mean \"ld.omega\"?");
  ck_assert_int_eq(dg_sim_input_find(sim, "throttle"), DG_INPUT_THROTTLE);
  ck_assert_int_eq(dg_sim_input_find(sim, "gear"), DG_INPUT_GEAR);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A CVT changing its ratio between two free inertias: no torque acts, so by
 * d'Alembert M(t) ω̇ = −r ṙ I1 ω and the kinetic energy stays constant:
 * ω_load(t) = ω0 √(M(0)/M(t)), M = I2 + r² I1. Without the −I Ġ q term the
 * load speed would not change and the energy would grow with r². RK4 error
 * here ~1e-12 (smooth, slow). */
START_TEST(test_variable_ratio_conserves_energy) {
  dg_registry *reg = dg_test_registry();
  dg_graph *g = dg_test_graph_reg(reg, "{\"drivegraph\":1,\"blocks\":{"
                                       "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5},"
                                       "\"cvt\":{\"type\":\"test_cvt\",\"ratio\":1,\"rate\":0.5},"
                                       "\"ld\":{\"type\":\"load\",\"inertia\":2.0}},"
                                       "\"connections\":[[\"src.out\",\"cvt.in\"],[\"cvt.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "ld.omega", 10.0);
  double e0 = dg_sim_kinetic_energy(sim);
  dg_test_step(sim, 2000, 1e-3); /* r goes 1 → 2 */
  double m0 = 2.0 + 1.0 * 0.5, m1 = 2.0 + 4.0 * 0.5;
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 10.0 * sqrt(m0 / m1), 1e-10);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 2.0 * 10.0 * sqrt(m0 / m1), 1e-10);
  ck_assert_double_eq_tol(dg_sim_kinetic_energy(sim), e0, 1e-10 * e0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-10 * e0);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

/* A block class that misuses the topology calls in its state_upstream
 * (tests/testblocks.c, test_misuse) gets an error naming the block and the
 * misuse, at load (the every-mode check runs every hook), never a crash or
 * a plan built from the bad declaration. */
static const struct {
  int fault;
  const char *text; /* in the error's text */
} misuse_cases[] = {
    {1, "block class test_misuse used port index 2 of 2"},
    {2, "block class test_misuse used port index -1 of 2"},
    {3, "dg_topo_link with 0 sources (1..16)"},
    {4, "efficiency 1.5 outside (0, 1]"},
    {5, "efficiency 0 outside (0, 1]"},
    {6, "inertia -0.5 must be finite and >= 0"},
    {7, "inertia inf must be finite and >= 0"},
    {8, "block class test_misuse used port index 3 of 2"},
    {9, "block class test_misuse used port index 7 of 2"},
    {10, "efficiency 1.25 outside (0, 1]"},
    {11, "block class test_misuse used port index 5 of 2"},
};

START_TEST(test_topology_misuse) {
  dg_registry *reg = dg_test_registry();
  char json[1024];
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{"
           "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":10},"
           "\"m\":{\"type\":\"test_misuse\",\"fault\":%d},"
           "\"ld\":{\"type\":\"load\",\"inertia\":1.0}},"
           "\"connections\":[[\"src.out\",\"m.in\"],[\"m.out\",\"ld.in\"]]}",
           misuse_cases[_i].fault);
  dg_error err;
  dg_graph *g = dg_graph_load_string(reg, json, "test.json", &err);
  ck_assert_msg(g == NULL, "fault %d: the graph loaded", misuse_cases[_i].fault);
  ck_assert_int_ne(err.code, DG_OK);
  ck_assert_str_eq(err.path, "/blocks/m");
  ck_assert_msg(strstr(err.text, misuse_cases[_i].text) != NULL, "fault %d: %s",
                misuse_cases[_i].fault, err.text);
  /* fault 0, the same class used right: loads and runs */
  g = dg_test_graph_reg(reg, "{\"drivegraph\":1,\"blocks\":{"
                             "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":10},"
                             "\"m\":{\"type\":\"test_misuse\"},"
                             "\"ld\":{\"type\":\"load\",\"inertia\":0.9}},"
                             "\"connections\":[[\"src.out\",\"m.in\"],[\"m.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 100, 1e-3); /* ω = T t / (J_src + J_ld) */
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 10.0 * 0.1 / 1.0, 1e-12);
  dg_sim_free(sim);
  dg_graph_free(g);
  dg_registry_free(reg);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("solver");
  TCase *inertia = tcase_create("coupled_inertia");
  tcase_add_test(inertia, test_gear_acceleration);
  tcase_add_test(inertia, test_open_diff_mass_matrix);
  tcase_add_test(inertia, test_open_diff_symmetric_feels_engine);
  tcase_add_test(inertia, test_open_diff_difference_ignores_engine);
  tcase_add_test(inertia, test_locked_diff);
  suite_add_tcase(s, inertia);
  TCase *energy = tcase_create("energy");
  tcase_add_test(energy, test_efficiency_driving_and_braking);
  tcase_add_test(energy, test_efficiency_through_lock);
  tcase_add_test(energy, test_lossy_parallel_refused);
  tcase_add_test(energy, test_mesh_reversal_fourth_order);
  tcase_add_test(energy, test_energy_conserved_without_sources);
  tcase_add_test(energy, test_energy_decreases_with_loads);
  tcase_add_test(energy, test_work_equals_kinetic_energy);
  tcase_add_test(energy, test_energy_audit_closes);
  suite_add_tcase(s, energy);
  TCase *num = tcase_create("integration");
  tcase_add_test(num, test_rk4_fourth_order);
  tcase_add_test(num, test_ramped_input_fourth_order);
  tcase_add_test(num, test_input_jump);
  tcase_add_test(num, test_input_callback);
  tcase_add_test(num, test_input_schedule_errors);
  tcase_add_loop_test(num, test_snapshot_restore, 0,
                      (int)(sizeof snapshot_cases / sizeof snapshot_cases[0]));
  tcase_add_test(num, test_snapshot_errors);
  tcase_add_test(num, test_deterministic);
  tcase_add_test(num, test_two_threads);
  suite_add_tcase(s, num);
  TCase *topo = tcase_create("topology");
  tcase_add_loop_test(topo, test_topology_change_conserves_momentum, 0, 2);
  tcase_add_test(topo, test_initial_contradiction);
  tcase_add_test(topo, test_bad_step_and_signal);
  tcase_add_test(topo, test_variable_ratio_conserves_energy);
  tcase_add_loop_test(topo, test_topology_misuse, 0,
                      (int)(sizeof misuse_cases / sizeof misuse_cases[0]));
  suite_add_tcase(s, topo);
  return s;
}

int main(void) { return dg_test_run(suite()); }
