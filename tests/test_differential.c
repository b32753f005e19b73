/* differential: torque split, ratio, efficiency, the open / locked /
 * viscous / clutch_lsd kinds on a split-μ rig, the clutch pack's stick–slip
 * transitions and ramps, energy audit, modes for validate, errors.
 * (The coupled-inertia results of open and locked axles are in
 * test_solver.c.)
 *
 * Split μ without tyres: the left output drives "ice", a light load with no
 * resistance (I_L = 0.05), the right one "grip", a heavy load with a large
 * viscous resistance (I_R = 1, c1 = 50 N·m·s/rad: linear, so every result
 * has a closed form; a Coulomb c0 would chatter around rest because the load
 * has no stiction). The source is massless, so the differential's input
 * torque is exactly the source torque T. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* RK4 on constant accelerations is exact: only round-off remains, ~1e-15
 * per step relative, so 1e-9 relative over 1000 steps is generous. */
#define TOL_EXACT 1e-9
/* RK4 on exponentials with h·λ ≤ 0.06: the relative error per step is
 * (hλ)^5/120 < 7e-9, decaying with the solution; 1e-7 bounds the sum. */
#define TOL_RK4 1e-7
/* Tie multipliers come from a linear solve: round-off ~1e-13 of the torques
 * (≤ 1e3 N·m here). */
#define TOL_LAMBDA 1e-9

#define DT 1e-3

static dg_graph *rig(const char *diff_params, double src_inertia, double torque) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":%g,\"torque\":%g},"
      "\"diff\":{\"type\":\"differential\"%s%s},"
      "\"a\":{\"type\":\"load\",\"inertia\":1.5},\"b\":{\"type\":\"load\",\"inertia\":1.5}},"
      "\"connections\":[[\"src.out\",\"diff.in\"],[\"diff.left\",\"a.in\"],"
      "[\"diff.right\",\"b.in\"]]}",
      src_inertia, torque, diff_params[0] ? "," : "", diff_params);
}

/* A massless source (`src_torque` is the JSON of its torque), the
 * differential and two loads `a` (left) and `b` (right). */
static dg_graph *rig2(const char *src_torque, const char *diff_params, const char *left,
                      const char *right) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"src\":{\"type\":\"torque_source\",%s},"
                        "\"diff\":{\"type\":\"differential\",%s},"
                        "\"a\":{\"type\":\"load\",%s},\"b\":{\"type\":\"load\",%s}},"
                        "\"connections\":[[\"src.out\",\"diff.in\"],[\"diff.left\",\"a.in\"],"
                        "[\"diff.right\",\"b.in\"]]}",
                        src_torque, diff_params, left, right);
}

/* split μ: ice on the left, grip on the right */
#define T_SPLIT 100.0
#define I_ICE 0.05
#define I_GRIP 1.0
#define C_GRIP 50.0
static dg_graph *split_mu(const char *diff_params) {
  return rig2("\"torque\":100", diff_params, "\"inertia\":0.05", "\"inertia\":1,\"c1\":50");
}

/* With a massless input the outputs are independent: each gets r·s·T
 * (resp. r·(1−s)·T) times η and accelerates on its own inertia. */
START_TEST(test_split_ratio_efficiency) {
  dg_graph *g = rig("\"split\":0.3,\"ratio\":2,\"efficiency\":0.9", 0.0, 10.0);
  dg_sim *sim = dg_test_sim(g);
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), 0.9 * 2 * 0.3 * 10.0 / 1.5, 1e-11);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), 0.9 * 2 * 0.7 * 10.0 / 1.5, 1e-11);
  /* kinematics: ω_in = r (s ω_a + (1 − s) ω_b) */
  double wa = dg_test_signal(sim, "a.omega"), wb = dg_test_signal(sim, "b.omega");
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.omega"), 2 * (0.3 * wa + 0.7 * wb), 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), wa - wb, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locking_torque"), 0.0); /* open: no lock */
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Locked with equal outputs: the lock carries nothing; speeds equal. */
START_TEST(test_locked_equal_sides) {
  dg_graph *g = rig("\"kind\":\"locked\",\"inertia\":0.1", 0.2, 20.0);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  double m;
  dg_sim_mass_matrix(sim, &m);
  ck_assert_double_eq_tol(m, 3.0 + 0.3, 1e-14); /* input turns with the outputs at r = 1 */
  for (int i = 0; i < 100; i++)
    ck_assert_int_eq(dg_sim_step(sim, 1e-3), DG_OK);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), 0.0, 1e-12);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), 0.0, 1e-10);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), 20.0 / 3.3 * 0.1, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locked"), 1.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Losses through a locked differential follow the power each mesh
 * transmits: a source (T = 40, I_s = 0.1) drives a locked differential
 * (ratio r_d = 3, η_d = 0.97); its left output drives a gear (r_g = 2,
 * η_g = 0.97) and a load J_L = 2, its right output a load without inertia
 * or torque. Both meshes drive forward; with m the torque the source shaft
 * gives the differential (T − I_s ω̇_in, ω_in = r_d ω_o), the outputs get
 * η_d r_d m and the gear passes η_g of what it takes:
 *   η_d r_d (T − I_s r_d ω̇_o) = J_R ω̇_o + J_L ω̇_o / (η_g r_g²)
 *   ⇒ ω̇_o = η_d r_d T / (η_d r_d² I_s + J_R + J_L / (η_g r_g²)).
 * With J_R = 0 the whole power goes through both meshes: the load's
 * kinetic energy is η_d η_g = 0.9409 of the work through the input shaft
 * (the source's work less its own kinetic energy) at every instant. (The
 * path factors weighted the lossy left path by the split: 0.97 × 0.985.)
 * With J_R = 1 the right side takes power through the final drive only. */
START_TEST(test_locked_losses_by_power) {
  const double T = 40, Is = 0.1, rd = 3, eta = 0.97, rg = 2, JL = 2, JR = _i == 0 ? 0.0 : 1.0;
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":40},"
      "\"diff\":{\"type\":\"differential\",\"kind\":\"locked\",\"ratio\":3,"
      "\"efficiency\":0.97},"
      "\"hub\":{\"type\":\"gear\",\"ratio\":2,\"efficiency\":0.97},"
      "\"ldl\":{\"type\":\"load\",\"inertia\":2},\"ldr\":{\"type\":\"load\",\"inertia\":%g}},"
      "\"connections\":[[\"src.out\",\"diff.in\"],[\"diff.left\",\"hub.in\"],"
      "[\"hub.out\",\"ldl.in\"],[\"diff.right\",\"ldr.in\"]]}",
      JR);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 1000, 1e-3);
  double a = eta * rd * T / (eta * rd * rd * Is + JR + JL / (eta * rg * rg));
  ck_assert_double_eq_tol(dg_test_signal(sim, "ldr.omega"), a * 1.0, 1e-12 * a);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ldl.omega"), a / rg, 1e-12 * a);
  dg_energy e;
  dg_sim_energy(sim, &e);
  double ws = dg_test_signal(sim, "src.omega"), wl = dg_test_signal(sim, "ldl.omega");
  double through = e.work_in - 0.5 * Is * ws * ws, kel = 0.5 * JL * wl * wl;
  if (JR == 0.0)
    ck_assert_double_eq_tol(kel / through, eta * eta, 1e-12);
  else /* the right side's share passes the final drive alone */
    ck_assert_double_eq_tol(kel / (eta * eta) + 0.5 * JR * a * a / eta, through, 1e-9 * through);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* split μ                                                                  */

/* Open: both sides get T/2. The ice side spins up at T/(2 I_L); the grip
 * side tends to T/(2 c1) with the time constant I_R/c1. */
START_TEST(test_split_mu_open) {
  dg_graph *g = split_mu("\"kind\":\"open\"");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 500, DT);
  double t = 0.5;
  double wl = T_SPLIT / 2 * t / I_ICE;
  double wr = T_SPLIT / (2 * C_GRIP) * (1 - exp(-C_GRIP * t / I_GRIP));
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), wl, TOL_EXACT * wl);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), wr, TOL_RK4 * wr);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), wl - wr, TOL_EXACT * wl);
  /* the grip side's torque balance: T/2 = I ω̇ + c1 ω with ω̇ from the
   * closed form, i.e. it too receives exactly T/2 */
  double accel = T_SPLIT / (2 * I_GRIP) * exp(-C_GRIP * t / I_GRIP);
  ck_assert_double_eq_tol(I_GRIP * accel + C_GRIP * wr, T_SPLIT / 2, 1e-9);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locking_torque"), 0.0);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locked"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Locked: one speed, (I_L + I_R) ω̇ = T − c1 ω, so
 * ω = T/c1 (1 − exp(−c1 t / (I_L + I_R))); the lock's torque at the left is
 * what the ice side needs beyond its half: λ = I_L ω̇ − T/2 (< 0: it takes
 * torque from the spinning side and gives it to the gripping one). */
START_TEST(test_split_mu_locked) {
  dg_graph *g = split_mu("\"kind\":\"locked\"");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 50, DT);
  double t = 0.05, isum = I_ICE + I_GRIP;
  double w = T_SPLIT / C_GRIP * (1 - exp(-C_GRIP * t / isum));
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), w, TOL_RK4 * w);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), w, TOL_RK4 * w);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), 0.0, 1e-12);
  double wdot = (T_SPLIT - C_GRIP * w) / isum;
  double lambda = I_ICE * wdot - T_SPLIT / 2;
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), lambda, 1e-5);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* clutch_lsd with preload 5 and power ramp 0.2: capacity C = 5 + 0.2·100 =
 * 25 N·m. The pack starts locked; the lock needs |λ| ≈ 45 N·m > C already
 * at t = 0, so it slips from t = 0 (holds are decided at the segment's
 * start; it used to hold through the first step). Slipping, the ice side
 * gets T/2 − C = 25 N·m (constant acceleration) and the grip side
 * T/2 + C = 75 N·m (exponential approach to 75/c1): the slower side gets
 * more, and the difference between the sides is 2C — the pack takes C from
 * one side and gives it to the other. The diff's work is the pack's
 * friction loss −C ∫ Δω dt, in closed form from the two speeds. */
START_TEST(test_split_mu_clutch_lsd) {
  dg_graph *g = split_mu("\"kind\":\"clutch_lsd\",\"preload\":5,\"power_ramp\":0.2,"
                         "\"coast_ramp\":0.05");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locked"), 1.0);
  ck_assert_double_eq(dg_test_signal(sim, "diff.capacity"), 5.0); /* no torque yet */
  dg_test_step(sim, 1, DT);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 1);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locked"), 0.0);
  /* slipping from t = 0 (unlocking frees a DOF without changing any
   * speed): the closed forms below from t1 = 0, both sides at rest */
  const double cap = 5.0 + 0.2 * T_SPLIT;
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), (T_SPLIT / 2 - cap) / I_ICE * DT,
                          TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.input_torque"), T_SPLIT, TOL_LAMBDA);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.capacity"), cap, TOL_LAMBDA);
  double t1 = 0.0, wl1 = 0.0, wr1 = 0.0;

  dg_test_step(sim, 499, DT);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 1);
  double tau = 0.5 - t1;
  double tl = T_SPLIT / 2 - cap, tr = T_SPLIT / 2 + cap; /* torques the sides receive */
  double al = tl / I_ICE, winf = tr / C_GRIP, k = C_GRIP / I_GRIP;
  double wl = wl1 + al * tau, wr = winf + (wr1 - winf) * exp(-k * tau);
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), wl, TOL_EXACT * wl);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), wr, TOL_RK4 * wr);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), -cap, TOL_LAMBDA);
  ck_assert(tr > tl);                                    /* the slower side gets more */
  ck_assert_double_eq_tol(tr - tl, 2 * cap, 1e-12);      /* bias = 2 × transferred torque */
  ck_assert(fabs(dg_test_signal(sim, "diff.locking_torque")) <= cap * (1 + TOL_LAMBDA));

  double int_l = wl1 * tau + al * tau * tau / 2;
  double int_r = winf * tau + (wr1 - winf) / k * (1 - exp(-k * tau));
  double work = -cap * (int_l - int_r);
  double got = dg_sim_block_work(sim, dg_test_block_index(dg_sim_graph(sim), "diff"));
  ck_assert(got < 0);
  ck_assert_double_eq_tol(got, work, TOL_RK4 * fabs(work));
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Viscous, c = 2 N·m·s/rad: the coupling's torque is −c·Δω at the left at
 * every instant, and at steady state the ice side is at rest relative to
 * its speed (no acceleration: it receives T/2 − cΔω = 0), so Δω → T/(2c) =
 * 25 rad/s, the grip side → T/c1 = 2 rad/s and the whole T goes to the grip
 * side. The modes decay at 35 and 57 1/s: after 1 s they are gone. */
START_TEST(test_split_mu_viscous) {
  dg_graph *g = split_mu("\"kind\":\"viscous\",\"viscous_coefficient\":2");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  for (int i = 0; i < 1000; i++) {
    dg_test_step(sim, 1, DT);
    double dw = dg_test_signal(sim, "diff.speed_diff");
    ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), -2.0 * dw,
                            1e-12 * fabs(dw) + 1e-300);
  }
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), T_SPLIT / 4, TOL_RK4);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), T_SPLIT / C_GRIP, TOL_RK4);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), -T_SPLIT / 2, TOL_RK4);
  ck_assert_double_eq(dg_test_signal(sim, "diff.capacity"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Free decay through a viscous coupling, nothing else acting: with
 * μ = I_L I_R / (I_L + I_R) the speed difference decays as
 * Δω0·exp(−k t), k = c (1/I_L + 1/I_R), the momentum I_L ω_L + I_R ω_R
 * stays, and the coupling dissipates exactly the relative kinetic energy
 * ½ μ Δω0² (1 − exp(−2 k t)): its work is that, negative. */
START_TEST(test_viscous_energy_closed_form) {
  const double il = 0.5, ir = 1.5, c = 0.8;
  dg_graph *g = rig2("\"torque\":0", "\"kind\":\"viscous\",\"viscous_coefficient\":0.8",
                     "\"inertia\":0.5", "\"inertia\":1.5");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"a.omega", "b.omega"}, (double[]){20.0, -4.0});
  dg_test_step(sim, 1000, DT);
  double mu = il * ir / (il + ir), k = c * (1 / il + 1 / ir), dw0 = 24.0, t = 1.0;
  double dw = dw0 * exp(-k * t);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.speed_diff"), dw, TOL_RK4 * dw);
  double wl = dg_test_signal(sim, "a.omega"), wr = dg_test_signal(sim, "b.omega");
  ck_assert_double_eq_tol(il * wl + ir * wr, il * 20.0 - ir * 4.0, 1e-12);
  double loss = 0.5 * mu * dw0 * dw0 * (1 - exp(-2 * k * t));
  double work = dg_sim_block_work(sim, dg_test_block_index(dg_sim_graph(sim), "diff"));
  ck_assert_double_eq_tol(work, -loss, TOL_RK4 * loss);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.kinetic - e.kinetic_start, -loss, TOL_RK4 * loss);
  ck_assert_double_eq_tol(e.balance_error, 0.0, 1e-9 * loss);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* clutch_lsd: transitions and ramps                                        */

/* Lock → slip → lock under a torque that rises past the capacity and then
 * drops. Free inertias I_L = 0.2, I_R = 1 (no resistance), preload 10,
 * power ramp 0.1, T = 200 t for t ≤ 1 s, falling to 0 at 1.01 s.
 * Locked: λ = T (I_L/(I_L + I_R) − 1/2) = −T/3 (exact each step), within
 * C = 10 + 0.1 T until T* = 10 / (1/3 − 0.1) = 42.86 N·m, t* = 0.2143 s;
 * the pack slips at the first step end past t*. Slipping, the left runs
 * ahead with Δω̇ = (T/2 − C)/I_L − (T/2 + C)/I_R = 1.4 T − 60, so
 * Δω(1) = 140 (1 − t_u²) − 60 (1 − t_u), +0.8 over the drop (∫T = 1), then
 * Δω̇ = −60: the pack relocks at t_l = 1.01 + Δω(1.01)/60 and holds
 * (no torque left: λ = 0). The detection takes up to one step and the
 * capacity's one-step lag shifts Δω by ~0.01 rad/s (0.2 ms), so t_l is
 * checked to 2 ms. Momentum I_L ω_L + I_R ω_R = ∫T dt = 101 N·m·s whatever
 * the pack does, so both end at 101/1.2 rad/s. */
static dg_sim *transitions_sim(dg_graph **g) {
  *g = rig2("\"torque_vs_time\":{\"time\":[0,1,1.01],\"torque\":[0,200,0]}",
            "\"kind\":\"clutch_lsd\",\"preload\":10,\"power_ramp\":0.1", "\"inertia\":0.2",
            "\"inertia\":1");
  return dg_test_sim(*g);
}

START_TEST(test_lsd_lock_unlock_transitions) {
  dg_graph *g;
  dg_sim *sim = transitions_sim(&g);
  double t_unlock = -1, t_lock = -1;
  for (int i = 1; i <= 3000; i++) {
    dg_test_step(sim, 1, DT);
    double t = dg_sim_time(sim);
    double lt = dg_test_signal(sim, "diff.locking_torque");
    double cap = dg_test_signal(sim, "diff.capacity");
    bool locked = dg_test_signal(sim, "diff.locked") == 1.0;
    if (t_unlock < 0 && !locked) {
      t_unlock = t;
    } else if (t_unlock < 0) {
      double torque = 200 * t;
      ck_assert_double_eq_tol(lt, -torque / 3, TOL_LAMBDA * 100);
      ck_assert(fabs(lt) <= cap);
    } else if (t_lock < 0 && locked) {
      t_lock = t;
    } else if (t_lock < 0) {
      ck_assert_double_eq(lt, -cap); /* slipping, left faster: C taken from the left */
      ck_assert(dg_test_signal(sim, "diff.speed_diff") > 0);
    } else {
      ck_assert(locked);
      ck_assert_double_eq_tol(lt, 0.0, TOL_LAMBDA);
    }
  }
  const double t_star = 10.0 / (1.0 / 3 - 0.1) / 200;
  ck_assert_msg(t_unlock >= t_star && t_unlock <= t_star + DT + 1e-12, "unlocked at %g, t* %g",
                t_unlock, t_star);
  double dw1 = 140 * (1 - t_unlock * t_unlock) - 60 * (1 - t_unlock);
  double t_hand = 1.01 + (dw1 + 0.8) / 60;
  ck_assert_msg(fabs(t_lock - t_hand) <= 2e-3, "relocked at %g, hand %g", t_lock, t_hand);
  ck_assert_int_eq(dg_sim_topology_changes(sim), 2);
  double w = 101.0 / 1.2;
  ck_assert_double_eq_tol(dg_test_signal(sim, "a.omega"), w, 1e-6 * w);
  ck_assert_double_eq_tol(dg_test_signal(sim, "b.omega"), w, 1e-6 * w);
  /* the pack dissipated energy while slipping; the relock impact is small */
  ck_assert(dg_sim_block_work(sim, dg_test_block_index(dg_sim_graph(sim), "diff")) < 0);
  dg_energy e;
  dg_sim_energy(sim, &e);
  /* the relock meets equal speeds: its impact is round-off (1e-16 of the work) */
  ck_assert(e.impact_loss <= 1e-14 * e.work_in && e.impact_loss > -1e-2 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Same run twice: bit-identical speeds (no hidden state between sims). */
START_TEST(test_lsd_deterministic) {
  double w[2][2];
  for (int r = 0; r < 2; r++) {
    dg_graph *g;
    dg_sim *sim = transitions_sim(&g);
    dg_test_step(sim, 3000, DT);
    w[r][0] = dg_test_signal(sim, "a.omega");
    w[r][1] = dg_test_signal(sim, "b.omega");
    dg_sim_free(sim);
    dg_graph_free(g);
  }
  ck_assert(memcmp(w[0], w[1], sizeof w[0]) == 0);
}
END_TEST

/* The ramp follows the direction of power: ratio 2, efficiency 0.9,
 * preload 3, power ramp 0.3, coast ramp 0.1, both outputs at 10 rad/s and a
 * massless source of ±40 N·m. Driving, the carrier gets r·η·T = 72 N·m and
 * C = 3 + 0.3·72 = 24.6 > |λ| = 18 (locked: λ = I_L ω̇ − T_c/2 with
 * ω̇ = T_c/2): it holds. Coasting, the outputs must also cover the loss:
 * T_c = r·T/η = −88.9 N·m, C = 3 + 0.1·88.9 = 11.9 < |λ| = 22.2: it slips. */
static const struct {
  double torque, t_c, cap, locked;
} ramp_case[] = {
    {40.0, 2 * 0.9 * 40.0, 3 + 0.3 * 2 * 0.9 * 40.0, 1.0},
    {-40.0, -2 * 40.0 / 0.9, 3 + 0.1 * 2 * 40.0 / 0.9, 0.0},
};

START_TEST(test_lsd_power_coast_ramp) {
  char src[64];
  snprintf(src, sizeof src, "\"torque\":%g", ramp_case[_i].torque);
  dg_graph *g = rig2(src,
                     "\"kind\":\"clutch_lsd\",\"ratio\":2,\"efficiency\":0.9,\"preload\":3,"
                     "\"power_ramp\":0.3,\"coast_ramp\":0.1",
                     "\"inertia\":0.5", "\"inertia\":1.5");
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, (const char *[]){"a.omega", "b.omega"}, (double[]){10.0, 10.0});
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.omega"), 20.0, 1e-12);
  dg_test_step(sim, 1, DT);
  double t_c = ramp_case[_i].t_c;
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.input_torque"), t_c, TOL_LAMBDA);
  ck_assert_double_eq_tol(dg_test_signal(sim, "diff.capacity"), ramp_case[_i].cap, TOL_LAMBDA);
  ck_assert_double_eq(dg_test_signal(sim, "diff.locked"), ramp_case[_i].locked);
  if (ramp_case[_i].locked == 1.0) /* λ = 0.5 · T_c/2 − T_c/2 = −T_c/4 */
    ck_assert_double_eq_tol(dg_test_signal(sim, "diff.locking_torque"), -t_c / 4, TOL_LAMBDA);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* modes for validate                                                       */

typedef struct collected {
  int count;
  char text[1024];
} collected;

static void collect(const dg_error *err, void *user) {
  collected *c = user;
  size_t len = strlen(c->text);
  snprintf(c->text + len, sizeof c->text - len, "%s: %s\n", err->path, err->text);
  c->count++;
}

static int validate(const char *diff_params, const char *left, const char *right,
                    collected *got, dg_graph_info *info) {
  char json[1200];
  snprintf(json, sizeof json,
           "{\"drivegraph\":1,\"blocks\":{"
           "\"src\":{\"type\":\"torque_source\",\"inertia\":0.2},"
           "\"diff\":{\"type\":\"differential\",%s},"
           "\"l\":{\"type\":\"load\",%s},\"r\":{\"type\":\"load\",%s}},"
           "\"connections\":[[\"src.out\",\"diff.in\"],[\"diff.left\",\"l.in\"],"
           "[\"diff.right\",\"r.in\"]]}",
           diff_params, left, right);
  memset(got, 0, sizeof *got);
  return dg_graph_validate_string(NULL, json, "v.json", collect, got, info);
}

/* clutch_lsd has two modes (locked, slipping); the other kinds one. */
START_TEST(test_validate_modes) {
  collected got;
  dg_graph_info info;
  ck_assert_int_eq(validate("\"kind\":\"clutch_lsd\",\"preload\":50", "\"inertia\":1",
                            "\"inertia\":1", &got, &info),
                   0);
  ck_assert_int_eq(info.modes, 2);
  ck_assert_int_eq(info.dofs, 1); /* starts locked */
  ck_assert_int_eq(validate("\"kind\":\"viscous\",\"viscous_coefficient\":1", "\"inertia\":1",
                            "\"inertia\":1", &got, &info),
                   0);
  ck_assert_int_eq(info.modes, 1);
  ck_assert_int_eq(info.dofs, 2);
}
END_TEST

/* Massless outputs behind an inertial input: fine while the pack is locked,
 * but slipping lets the outputs turn against each other without moving
 * any inertia; validate finds it in that mode. */
START_TEST(test_validate_slipping_without_inertia) {
  collected got;
  ck_assert_int_eq(validate("\"kind\":\"clutch_lsd\"", "\"c1\":1", "\"c1\":1", &got, NULL), 1);
  ck_assert_str_eq(got.text,
                   "/blocks/diff: a degree of freedom has no inertia: diff.left, diff.right can "
                   "turn without moving anything that has inertia (blocks: diff, l, r); give one "
                   "of them an inertia (in mode diff=slipping)\n");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* errors                                                                   */

static const dg_test_bad_param bad[] = {
    {"\"kind\":\"opne\"", "/blocks/diff/kind",
     "must be one of \"open\", \"locked\", \"viscous\", \"clutch_lsd\" (got \"opne\"); did you "
     "mean \"open\"?"},
    {"\"split\":1", "/blocks/diff/split", "must be < 1 (got 1)"},
    {"\"split\":0", "/blocks/diff/split", "must be > 0 (got 0)"},
    {"\"ratio\":-3.7", "/blocks/diff/ratio", "must be > 0 (got -3.7)"},
    {"\"kind\":1", "/blocks/diff/kind",
     "expected a string (one of \"open\", \"locked\", \"viscous\", \"clutch_lsd\"), got number"},
    {"\"kind\":\"viscous\",\"viscous_coefficient\":-1", "/blocks/diff/viscous_coefficient",
     "must be >= 0 (got -1)"},
    {"\"kind\":\"viscous\"", "/blocks/diff/viscous_coefficient",
     "missing required number (N*m*s/rad) for kind \"viscous\""},
    {"\"kind\":\"clutch_lsd\",\"preload\":-5", "/blocks/diff/preload", "must be >= 0 (got -5)"},
    {"\"kind\":\"clutch_lsd\",\"power_ramp\":-0.1", "/blocks/diff/power_ramp",
     "must be >= 0 (got -0.1)"},
    {"\"kind\":\"clutch_lsd\",\"coast_ramp\":1.5", "/blocks/diff/coast_ramp",
     "must be <= 1 (got 1.5)"},
    {"\"kind\":\"clutch_lsd\",\"power_ramp\":40", "/blocks/diff/power_ramp",
     "must be <= 1 (got 40)"},
    {"\"preload\":20", "/blocks/diff/preload",
     "only used by kind \"clutch_lsd\" (kind is \"open\")"},
    {"\"kind\":\"locked\",\"coast_ramp\":0.2", "/blocks/diff/coast_ramp",
     "only used by kind \"clutch_lsd\" (kind is \"locked\")"},
    {"\"kind\":\"viscous\",\"viscous_coefficient\":3,\"power_ramp\":0.2",
     "/blocks/diff/power_ramp", "only used by kind \"clutch_lsd\" (kind is \"viscous\")"},
    {"\"kind\":\"clutch_lsd\",\"viscous_coefficient\":3", "/blocks/diff/viscous_coefficient",
     "only used by kind \"viscous\" (kind is \"clutch_lsd\")"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(
      bad[_i].path, bad[_i].text,
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"diff\":{\"type\":\"differential\",%s},\"a\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"diff.in\"],"
      "[\"diff.left\",\"a.in\"],[\"diff.right\",\"b.in\"]]}",
      bad[_i].params);
}
END_TEST

/* The carrier is internal: connecting to it is a port error. */
START_TEST(test_carrier_not_connectable) {
  dg_error err = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"diff\":{\"type\":\"differential\"},\"a\":{\"type\":\"load\",\"inertia\":1},"
      "\"b\":{\"type\":\"load\",\"inertia\":1}},\"connections\":[[\"src.out\",\"diff.in\"],"
      "[\"diff.left\",\"a.in\"],[\"diff.carrier\",\"b.in\"]]}");
  ck_assert_str_eq(err.path, "/connections/2/0");
  ck_assert_str_eq(err.text, "port \"carrier\" of block \"diff\" (differential) is internal and "
                            "cannot be connected (ports: in, left, right)");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("differential");
  TCase *tc = tcase_create("dynamics");
  tcase_add_test(tc, test_split_ratio_efficiency);
  tcase_add_test(tc, test_locked_equal_sides);
  tcase_add_loop_test(tc, test_locked_losses_by_power, 0, 2);
  tcase_add_test(tc, test_split_mu_open);
  tcase_add_test(tc, test_split_mu_locked);
  tcase_add_test(tc, test_split_mu_clutch_lsd);
  tcase_add_test(tc, test_split_mu_viscous);
  tcase_add_test(tc, test_viscous_energy_closed_form);
  suite_add_tcase(s, tc);
  tc = tcase_create("clutch_lsd");
  tcase_add_test(tc, test_lsd_lock_unlock_transitions);
  tcase_add_test(tc, test_lsd_deterministic);
  tcase_add_loop_test(tc, test_lsd_power_coast_ramp, 0,
                      (int)(sizeof ramp_case / sizeof ramp_case[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("modes");
  tcase_add_test(tc, test_validate_modes);
  tcase_add_test(tc, test_validate_slipping_without_inertia);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_carrier_not_connectable);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
