/* planetary: Willis kinematics for each held member, the torque split,
 * member inertias (accelerations by hand), losses in the carrier's frame
 * (textbook efficiencies, recirculating power), a planetary without inertia on
 * two free members refused, bad parameters. SimpleGearShift (a planetary
 * shifted by a brake and a clutch against a scipy reference) is in
 * tests/test_examples.c. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Constant torques: speeds linear in t, integrated exactly by RK4. */
#define TOL_EXACT 1e-9

static const double S = 50.0, R = 75.0;

/* One member driven by a source (J_a = 1, T = 10), one held by a brake
 * (holding from rest, capacity far above the torque), the third driving a
 * load J_b = 2. With ω_b = r ω_a (Willis with the held member at rest):
 *   ring held:    r = S/(S+R) = 0.4      (sun → carrier)
 *   carrier held: r = −S/R = −2/3        (sun → ring)
 *   sun held:     r = R/(S+R) = 0.6      (ring → carrier)
 * the driven side accelerates at α_a = T/(J_a + r² J_b) and ω_b = r ω_a.
 * The gear set applies τ_a = −(T − J_a α_a) to the driven member,
 * τ_b = J_b r α_a to the output, τ_h = −(τ_a + τ_b) to the held one, and
 * the three are in the ratio S : R : −(S+R) of sun : ring : carrier. */
static const struct {
  const char *in, *held, *out;
  double r;
} willis[] = {
    {"sun", "ring", "carrier", 50.0 / 125.0},
    {"sun", "carrier", "ring", -50.0 / 75.0},
    {"ring", "sun", "carrier", 75.0 / 125.0},
};

static double teeth(const char *member) {
  return strcmp(member, "sun") == 0 ? S : strcmp(member, "ring") == 0 ? R : -(S + R);
}

/* The rig of case i: the source on `in`, a brake on `held`, the load on
 * `out`, the set's efficiency eta. */
static dg_graph *held_rig(int i, double eta) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
      "\"torque\":10},\"ps\":{\"type\":\"planetary\",\"sun_teeth\":50,\"ring_teeth\":75,"
      "\"efficiency\":%.17g},\"br\":{\"type\":\"brake\",\"max_torque\":1e6},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2}},"
      "\"connections\":[[\"src.out\",\"ps.%s\"],[\"ps.%s\",\"br.in\"],[\"ps.%s\",\"ld.in\"]]}",
      eta, willis[i].in, willis[i].held, willis[i].out);
}

START_TEST(test_willis) {
  const char *in = willis[_i].in, *held = willis[_i].held, *out = willis[_i].out;
  const double r = willis[_i].r, T = 10.0, Ja = 1.0, Jb = 2.0;
  dg_graph *g = held_rig(_i, 1.0);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  const double a = T / (Ja + r * r * Jb);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), a * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), r * a * 1.0, TOL_EXACT);
  char name[64];
  snprintf(name, sizeof name, "ps.%s_rpm", held);
  ck_assert_double_eq(dg_test_signal(sim, name), 0.0);
  /* the ratio signals */
  if (_i == 0)
    ck_assert_double_eq_tol(dg_test_signal(sim, "ps.carrier_sun"), 0.4, 1e-12);
  else if (_i == 1)
    ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_sun"), -2.0 / 3.0, 1e-12);
  else
    ck_assert_double_eq_tol(dg_test_signal(sim, "ps.carrier_ring"), 0.6, 1e-12);
  /* the torques on each member, by hand, and their ratio */
  double ta = -(T - Ja * a), tb = Jb * r * a, th = -(ta + tb);
  snprintf(name, sizeof name, "ps.%s_torque", in);
  ck_assert_double_eq_tol(dg_test_signal(sim, name), ta, 1e-9);
  snprintf(name, sizeof name, "ps.%s_torque", out);
  ck_assert_double_eq_tol(dg_test_signal(sim, name), tb, 1e-9);
  snprintf(name, sizeof name, "ps.%s_torque", held);
  ck_assert_double_eq_tol(dg_test_signal(sim, name), th, 1e-9);
  ck_assert_double_eq_tol(ta / teeth(in), tb / teeth(out), 1e-12);
  ck_assert_double_eq_tol(ta / teeth(in), th / teeth(held), 1e-12);
  /* the brake holds the member against the gear set's torque */
  ck_assert_double_eq_tol(dg_test_signal(sim, "br.torque"), -th, 1e-9);
  /* lossless: the source's work is the kinetic energy */
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq_tol(e.kinetic, 0.5 * (Ja + r * r * Jb) * a * a, 1e-9);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A lossy set (η = 0.9) with one member held, as in test_willis: the
 * meshes lose (1 − η) of the meshing power in the carrier's frame, so the
 * unit passes e of the power the input member gives it, the textbook
 * efficiencies of the basic ratio i0 = −R/S:
 *   ring held (sun → carrier):    e = (1 + η R/S)/(1 + R/S) = k_s + η k_r
 *   carrier held (sun → ring):    e = η
 *   sun held (ring → carrier):    e = (1 + η S/R)/(1 + S/R) = k_r + η k_s
 * and with ω_b = r ω_a, the input torque through J_a, the output's J_b
 * reflected through the loss: α_a = T / (J_a + r² J_b / e); the output
 * member's torque J_b r α_a and the input member's −(T − J_a α_a) are in
 * the ratio −e/r; the loss is (1 − e) of the work through the input
 * member, W − ½ J_a ω_a². */
START_TEST(test_lossy_holds) {
  const char *in = willis[_i].in, *held = willis[_i].held, *out = willis[_i].out;
  const double r = willis[_i].r, T = 10.0, Ja = 1.0, Jb = 2.0, eta = 0.9, ks = 0.4, kr = 0.6;
  const double e = _i == 0 ? ks + eta * kr : _i == 1 ? eta : kr + eta * ks;
  dg_graph *g = held_rig(_i, eta);
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq(dg_test_signal(sim, "br.held"), 1.0);
  const double a = T / (Ja + r * r * Jb / e);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), a * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), r * a * 1.0, TOL_EXACT);
  char name[64];
  double ta = -(T - Ja * a), tb = Jb * r * a;
  snprintf(name, sizeof name, "ps.%s_torque", in);
  ck_assert_double_eq_tol(dg_test_signal(sim, name), ta, 1e-9);
  snprintf(name, sizeof name, "ps.%s_torque", out);
  ck_assert_double_eq_tol(dg_test_signal(sim, name), tb, 1e-9);
  ck_assert_double_eq_tol(-tb / ta, e / r, 1e-12); /* the static torque ratio */
  snprintf(name, sizeof name, "ps.%s_torque", held); /* the holder takes the rest */
  ck_assert_double_eq_tol(dg_test_signal(sim, name) + ta + tb, 0.0, 1e-9);
  dg_energy en;
  dg_sim_energy(sim, &en);
  double through = en.work_in - 0.5 * Ja * a * a;
  ck_assert_double_eq_tol(en.efficiency_loss, -(1.0 - e) * through, 1e-9 * through);
  ck_assert_double_le(fabs(en.balance_error), 1e-9 * en.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Recirculating power: S = 30, R = 90 (k_s = 1/4, k_r = 3/4), the source
 * (T = 10, I_c = 1) on the carrier, a gear (ratio k = 3, lossless) driving
 * the sun from the carrier (ω_s = 3 ω_c), the output J_r = 2 on the ring.
 * Willis with ω_s = k ω_c: ω_c = g ω_r, g = k_r/(1 − k k_s) = 3. With λ the
 * set's multiplier and f the ring's factor, the carrier feels
 * −(k_s (1 − k) + f k_r) λ (the gear's reaction included), the ring f k_r λ:
 *   I_c g ω̇_r = T − c λ,  c = k_s (1 − k) + f k_r,   J_r ω̇_r = f k_r λ
 *   ⇒ ω̇_r = T / (I_c g + c J_r / (f k_r)).
 * The meshing power k_s λ (ω_s − ω_c) = k_s g (k − 1) λ ω_r is 1.83 × the
 * power through the unit and positive (the ring drives in the carrier's
 * frame: f = 1/η; with f = η it would not be): the set loses
 * (1/η − 1) of it, more than (1 − η) of what it passes: the unit's
 * efficiency is f k_r / (g c) = 0.25 / (0.75 − 0.5 η) = 0.943 at η = 0.97. */
START_TEST(test_lossy_recirculation) {
  const double T = 10, Ic = 1, Jr = 2, k = 3, ks = 0.25, kr = 0.75, eta = 0.97;
  const double gr = kr / (1.0 - k * ks), f = 1.0 / eta, c = ks * (1.0 - k) + f * kr;
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
      "\"torque\":10},\"ps\":{\"type\":\"planetary\",\"sun_teeth\":30,\"ring_teeth\":90,"
      "\"efficiency\":0.97},\"g\":{\"type\":\"gear\",\"ratio\":3},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2}},"
      "\"connections\":[[\"src.out\",\"ps.carrier\",\"g.out\"],[\"g.in\",\"ps.sun\"],"
      "[\"ps.ring\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1);
  dg_test_step(sim, 1000, 1e-3);
  const double a = T / (Ic * gr + c * Jr / (f * kr)), lam = Jr * a / (f * kr);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), a * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), gr * a * 1.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_torque"), Jr * a, 1e-9);
  double pm = ks * gr * (k - 1.0) * lam * a, through = c * lam * gr * a; /* per ω_r = a at 1 s */
  ck_assert_double_gt(pm, 1.8 * through); /* 1.83 × */
  dg_energy e;
  dg_sim_energy(sim, &e);
  /* the loss: (1/η − 1) of the meshing power, ∫ over ω_r = a t: × t²/2 / t */
  double loss = (f - 1.0) * ks * gr * (k - 1.0) * lam * 0.5 * a;
  ck_assert_double_eq_tol(e.efficiency_loss, -loss, 1e-9 * loss);
  double wr = a, unit = 0.5 * Jr * wr * wr / (e.work_in - 0.5 * Ic * gr * gr * a * a);
  ck_assert_double_eq_tol(unit, 0.25 / (0.75 - 0.5 * eta), 1e-12);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.work_in);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The member inertias alone, no member held: T = 10 on the sun (J_s =
 * 0.2), ring J_r = 0.5 and carrier J_c = 0.3 free. With k_s = 0.4,
 * k_r = 0.6, ω_r = (ω_c − k_s ω_s)/k_r; in q = (ω_s, ω_c) the kinetic
 * energy gives
 *   M = [[J_s + J_r k_s²/k_r², −J_r k_s/k_r²], [−J_r k_s/k_r², J_c + J_r/k_r²]],
 * M α = (T, 0), so α_s = T M22/det, α_c = −T M12/det. The gear set's
 * torques are what accelerates each member: τ_c = J_c α_c, τ_r = J_r α_r,
 * τ_s = J_s α_s − T, in the ratio 0.4 : 0.6 : −1. */
START_TEST(test_member_inertias) {
  const double T = 10.0, Js = 0.2, Jr = 0.5, Jc = 0.3, ks = 0.4, kr = 0.6;
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"torque\":10},"
      "\"ps\":{\"type\":\"planetary\",\"sun_teeth\":50,\"ring_teeth\":75,\"sun_inertia\":0.2,"
      "\"ring_inertia\":0.5,\"carrier_inertia\":0.3}},\"connections\":[[\"src.out\",\"ps.sun\"]]}");
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 2);
  dg_test_step(sim, 1000, 1e-3);
  double m11 = Js + Jr * ks * ks / (kr * kr), m12 = -Jr * ks / (kr * kr),
         m22 = Jc + Jr / (kr * kr), det = m11 * m22 - m12 * m12;
  double as = T * m22 / det, ac = -T * m12 / det, ar = (ac - ks * as) / kr;
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.sun_rpm"), as * DG_RPM_PER_RAD_S, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.carrier_rpm"), ac * DG_RPM_PER_RAD_S, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_rpm"), ar * DG_RPM_PER_RAD_S, 1e-8);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.carrier_torque"), Jc * ac, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_torque"), Jr * ar, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.sun_torque"), Js * as - T, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.sun_torque") + dg_test_signal(sim, "ps.ring_torque") +
                              dg_test_signal(sim, "ps.carrier_torque"),
                          0.0, 1e-12);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Two members free with no inertia anywhere on them: ring and carrier can
 * turn together (k_r ω_r = ω_c) without moving anything that has inertia.
 * The every-mode check refuses it, naming the shafts and the block. */
START_TEST(test_free_members_without_inertia) {
  dg_error err = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1},"
      "\"ps\":{\"type\":\"planetary\",\"sun_teeth\":50,\"ring_teeth\":75}},"
      "\"connections\":[[\"src.out\",\"ps.sun\"]]}");
  printf("two free members without inertia: %s: %s\n", err.path, err.text);
  ck_assert_msg(strstr(err.text, "a degree of freedom has no inertia") &&
                    strstr(err.text, "ps.carrier") && strstr(err.text, "ps.ring"),
                "%s", err.text);
  /* one free member without inertia is fine: it turns, carrying nothing */
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
      "\"torque\":5},\"ps\":{\"type\":\"planetary\",\"sun_teeth\":50,\"ring_teeth\":75},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
      "\"connections\":[[\"src.out\",\"ps.sun\"],[\"ps.carrier\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_test_step(sim, 1000, 1e-3);
  ck_assert_double_eq_tol(dg_test_signal(sim, "src.omega"), 5.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ld.omega"), 0.0, TOL_EXACT);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_rpm"),
                          -S / R * 5.0 * DG_RPM_PER_RAD_S, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The stuck mode (self_locking; issue 22). S = 50, R = 100 (k_s = 1/3,
 * k_r = 2/3), η = 0.5, the ring held by a brake: the sun (J_s = 1, a
 * torque T_s) drives the carrier (J_c = 1.5, a torque −12 N·m; the brake
 * engaged by default, holding the ring from rest) at
 * ω_c = k_s ω_s. Rolling, with λ the Willis multiplier and f the ring's
 * factor,
 *   J_s ω̇_s = T_s + k_s λ,  J_c ω̇_c = −12 − (k_s + f k_r) λ,  ω̇_c = k_s ω̇_s
 *   ⇒ λ (3 + 4 f)/9 = −8 − T_s/3.
 * Stuck, at rest, the set holds τ_s = −T_s and τ_c = 12, so τ_r = T_s − 12:
 * mesh loads a = τ_s/k_s = −3 T_s, b = τ_r/k_r = 1.5 (T_s − 12).
 *
 * T_s = 5, turning backward from ω_s = −0.6 rad/s (ω_c = −0.2): λ < 0 and
 * ω_s < 0 put the meshing power into the sun, so the ring drives (f = 1/η
 * = 2): λ = −87/11, ω̇_s = 5 + λ/3 = 26/11 rad/s², at rest at
 * t* = 0.6·11/26 = 0.253846 s. There a = −15, b = −10.5: b/a = 0.7 in
 * [η, 1/η] = [0.5, 2], so the meshes hold and the set stays at exactly 0
 * (without the stuck mode its speed chatters around 0). Linear speeds:
 * exact for RK4, the stop located to 1e-10 of a step. */
static dg_graph *stuck_rig(double ts, bool self_locking) {
  return dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":1,"
      "\"torque\":%g},\"ps\":{\"type\":\"planetary\",\"sun_teeth\":50,\"ring_teeth\":100,"
      "\"efficiency\":0.5,\"self_locking\":%s},\"br\":{\"type\":\"brake\",\"max_torque\":1e6},"
      "\"ld\":{\"type\":\"torque_source\",\"inertia\":1.5,\"torque\":-12}},"
      "\"connections\":[[\"src.out\",\"ps.sun\"],[\"ps.ring\",\"br.in\"],"
      "[\"ps.carrier\",\"ld.out\"]]}",
      ts, self_locking ? "true" : "false");
}

START_TEST(test_self_locking_comes_to_rest) {
  dg_graph *g = stuck_rig(5.0, true);
  dg_sim *sim = dg_test_sim(g);
  static const char *const names[2] = {"src.omega", "ld.omega"};
  const double w0[2] = {-0.6, -0.2};
  dg_test_set_initial(sim, 2, names, w0);
  const double alpha = 26.0 / 11.0, t_rest = 0.6 / alpha, dt = 1e-3;
  double worst = 0.0, worst_rest = 0.0;
  for (int k = 1; k * dt <= 1.0 + 1e-12; k++) {
    dg_test_step(sim, 1, dt);
    double t = dg_sim_time(sim), ws = dg_test_signal(sim, "src.omega");
    double exact = t < t_rest ? -0.6 + alpha * t : 0.0;
    worst = fmax(worst, fabs(ws - exact));
    worst = fmax(worst, fabs(dg_test_signal(sim, "ld.omega") - exact / 3.0));
    if (t > t_rest + dt)
      worst_rest = fmax(worst_rest, fabs(ws));
  }
  printf("self-locking planetary: at rest at %.12f s (closed form %.12f), worst |w - closed "
         "form| %.2e rad/s, at rest within %.2e rad/s\n",
         dg_sim_last_event_time(sim), t_rest, worst, worst_rest);
  /* located where the relative speed is within its rest tolerance
   * (1e-12 rad/s + 1e-10 of the speeds) of 0, 6e-13 s at 26/11 rad/s²,
   * and to 1e-10 of a step */
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t_rest, 1e-11);
  ck_assert_double_le(worst, 1e-9);
  ck_assert_double_le(worst_rest, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "ps.stuck"), 1.0);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.sun_torque"), -5.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.carrier_torque"), 12.0, 1e-9);
  ck_assert_double_eq_tol(dg_test_signal(sim, "ps.ring_torque"), -7.0, 1e-9);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), 1e-9 * e.kinetic_start);
  dg_sim_free(sim);
  dg_graph_free(g);

  /* the same without the stuck mode: no consistent direction at rest */
  g = stuck_rig(5.0, false);
  sim = dg_test_sim(g);
  dg_test_set_initial(sim, 2, names, w0);
  dg_test_step(sim, 1000, dt);
  double chatter = 0.0;
  for (int k = 0; k < 100; k++) {
    dg_test_step(sim, 1, dt);
    chatter = fmax(chatter, fabs(dg_test_signal(sim, "src.omega")));
  }
  printf("  without self_locking: |w_sun| up to %.2e rad/s at rest\n", chatter);
  ck_assert_double_gt(chatter, 1e-6);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* T_s = 40 from rest: the set starts stuck (at rest in its frame) and
 * cannot hold there: a = −120, b = 42 push the planets the same way
 * (opposite signs), so it lets go at t = 0 (hold_check), and the sun
 * drives (f = η = 0.5): λ = −192/5, ω̇_s = 40 − 12.8 = 27.2 rad/s² from
 * t = 0 on, exactly. */
START_TEST(test_self_locking_released_at_start) {
  dg_graph *g = stuck_rig(40.0, true);
  dg_sim *sim = dg_test_sim(g);
  double worst = 0.0;
  for (int k = 1; k <= 100; k++) {
    dg_test_step(sim, 1, 1e-2);
    worst = fmax(worst, fabs(dg_test_signal(sim, "src.omega") - 27.2 * dg_sim_time(sim)));
  }
  printf("self-locking planetary overloaded at t = 0: worst |w - 27.2 t| %.2e rad/s\n", worst);
  ck_assert_double_le(worst, 1e-12);
  ck_assert_double_eq(dg_test_signal(sim, "ps.stuck"), 0.0);
  dg_test_check_balance(sim, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static const dg_test_bad_param bad[] = {
    {"\"ring_teeth\":75", "/blocks/ps/sun_teeth", "missing required number"},
    {"\"sun_teeth\":50", "/blocks/ps/ring_teeth", "missing required number"},
    {"\"sun_teeth\":0,\"ring_teeth\":75", "/blocks/ps/sun_teeth", "must be > 0 (got 0)"},
    {"\"sun_teeth\":50,\"ring_teeth\":40", "/blocks/ps/ring_teeth",
     "must be > sun_teeth (50) (got 40)"},
    {"\"sun_teeth\":50,\"ring_teeth\":50", "/blocks/ps/ring_teeth",
     "must be > sun_teeth (50) (got 50)"},
    {"\"sun_teeth\":50,\"ring_teeth\":75,\"ring_inertia\":-1", "/blocks/ps/ring_inertia",
     "must be >= 0 (got -1)"},
    {"\"sun_teeth\":50,\"ring_teeth\":75,\"efficiency\":0", "/blocks/ps/efficiency",
     "must be > 0 (got 0)"},
    {"\"sun_teeth\":50,\"ring_teeth\":75,\"efficiency\":1.2", "/blocks/ps/efficiency",
     "must be <= 1 (got 1.2)"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(bad[_i].path, bad[_i].text,
                         "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\","
                         "\"inertia\":1},\"ps\":{\"type\":\"planetary\",%s},"
                         "\"ld\":{\"type\":\"load\",\"inertia\":1}},"
                         "\"connections\":[[\"src.out\",\"ps.sun\"],[\"ps.carrier\",\"ld.in\"]]}",
                         bad[_i].params);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("planetary");
  TCase *tc = tcase_create("kinematics");
  tcase_add_loop_test(tc, test_willis, 0, (int)(sizeof willis / sizeof willis[0]));
  tcase_add_test(tc, test_member_inertias);
  tcase_add_loop_test(tc, test_lossy_holds, 0, (int)(sizeof willis / sizeof willis[0]));
  tcase_add_test(tc, test_lossy_recirculation);
  tcase_add_test(tc, test_self_locking_comes_to_rest);
  tcase_add_test(tc, test_self_locking_released_at_start);
  suite_add_tcase(s, tc);
  tc = tcase_create("modes");
  tcase_add_test(tc, test_free_members_without_inertia);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
