/* spring_damper: free and damped vibration of two inertias against the
 * closed forms, the backlash's crossing and contact times, energy, the
 * static twist of the start, the stiffness check, parameters, and the
 * compliant driveline's shuffle after a tip-in (graphs/compliant_driveline.json,
 * scenario compliant_tipin.json) against the two-inertia closed form, the
 * ElastoBacklash law in a closing contact against its closed form, and the
 * backlash drive of the MSL's AllComponents against an independent scipy
 * solution (scripts/ref/all_components.py).
 *
 * Tolerances. The rigs are linear oscillators at ω·dt = 0.05 (ω = 50
 * rad/s, dt = 1 ms). RK4 multiplies an oscillation by R(iωh) per step,
 * |R| = 1 − (ωh)⁶/144 + …, arg R = ωh − (ωh)⁵/120 + …: per step a phase
 * error of 2.6e-9 rad and an amplitude error of 1.1e-10, so over 2000
 * steps (2 s) 5.2e-6 rad of phase and 2.2e-7 of amplitude. TOL_PHASE
 * (1e-5, relative to the amplitude) is twice that phase bound; the energy
 * of an undamped oscillator drifts by 2 × 2.2e-7 = 4.4e-7 (TOL_ENERGY 1e-6,
 * relative). Event times are located on RK4's dense output to 1e-10 of a
 * step; in the free play the motion is linear in t, so RK4 is exact there
 * (TOL_EVENT_FREE 1e-9 s); after a contact phase the twist carries the
 * contact's phase error, 2.6e-9 rad/step × 63 steps / 50 rad/s ≈ 3e-9 s
 * (TOL_EVENT 1e-7 s leaves room for the dense output's O(h⁴) error). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define PI 3.14159265358979323846
#define SQRT2 1.41421356237309504880

#define TOL_PHASE 1e-5
#define TOL_ENERGY 1e-6
#define TOL_EVENT_FREE 1e-9
#define TOL_EVENT 1e-7
/* The audit's balance: the acceptance's bound, relative to the work in. */
#define TOL_AUDIT 1e-6

/* Inertia `a` (I1) → spring_damper `s` → inertia `b` (I2). */
static dg_graph *two_inertias(double i1, double i2, const char *spring) {
  return dg_test_graphf("{\"drivegraph\":1,\"blocks\":{"
                        "\"a\":{\"type\":\"inertia\",\"inertia\":%.17g},"
                        "\"s\":{\"type\":\"spring_damper\",%s},"
                        "\"b\":{\"type\":\"inertia\",\"inertia\":%.17g}},"
                        "\"connections\":[[\"a.out\",\"s.in\"],[\"s.out\",\"b.in\"]]}",
                        i1, spring, i2);
}

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* ---- free and damped vibration ------------------------------------------ */

/* I1 = 0.5, I2 = 2, k = 1000: ω_n² = k (1/I1 + 1/I2) = 2500, ω_n = 50.
 * Started untwisted with a spinning at Δω0 = 3 rad/s and b at rest, the
 * relative coordinate θ obeys θ̈ + 2a θ̇ + ω_n² θ = 0, 2a = c (1/I1 + 1/I2):
 *   θ(t) = Δω0/ω_d · e^{−a t} sin(ω_d t),  ω_d = √(ω_n² − a²),
 * and the centre of mass turns at ω_cm = I1 Δω0 / (I1 + I2) = 0.6 rad/s.
 * c = 0 and c = 4 (a = 5, ζ = 0.1, ω_d = 49.749). The twist follows the
 * closed form to TOL_PHASE of its amplitude at every step; the twist rate's
 * zero crossings are π/ω_d apart; the energy the damper took,
 * D = −W − ΔPE from the audit (W: the spring's booked work), equals the
 * mechanical energy the closed form loses, E0 − (KE + PE)(t). */
static const double vib_damping[] = {0.0, 4.0};

START_TEST(test_vibration) {
  const double i1 = 0.5, i2 = 2.0, k = 1000.0, c = vib_damping[_i], dw0 = 3.0, dt = 1e-3;
  const double inv = 1.0 / i1 + 1.0 / i2, wn = sqrt(k * inv), a = 0.5 * c * inv;
  const double wd = sqrt(wn * wn - a * a), jeq = 1.0 / inv, wcm = i1 * dw0 / (i1 + i2);
  char spring[96];
  snprintf(spring, sizeof spring, "\"stiffness\":%g,\"damping\":%g", k, c);
  dg_graph *g = two_inertias(i1, i2, spring);
  dg_sim *sim = dg_test_sim(g);
  const char *names[] = {"a.omega", "b.omega", "s.twist"};
  const double values[] = {dw0, 0.0, 0.0};
  dg_test_set_initial(sim, 3, names, values);
  const double e0 = 0.5 * i1 * dw0 * dw0, amp = dw0 / wd;
  ck_assert_double_eq(sig(sim, "s.potential_energy"), 0.0);
  int sb = dg_test_block_index(g, "s");
  double worst = 0.0, prev = dw0, first = NAN, last = NAN;
  int crossings = 0;
  for (int n = 1; n <= 2000; n++) {
    dg_test_step(sim, 1, dt);
    double t = n * dt, env = exp(-a * t);
    double th = amp * env * sin(wd * t);
    worst = fmax(worst, fabs(sig(sim, "s.twist") - th));
    double rate = sig(sim, "s.twist_rate");
    if (prev > 0.0 ? rate <= 0.0 : rate >= 0.0) {
      double tc = t - dt * rate / (rate - prev); /* linear: O(a·dt²) ≈ 1e-6 s */
      if (crossings == 0)
        first = tc;
      last = tc;
      crossings++;
    }
    prev = rate;
    ck_assert_double_eq_tol(sig(sim, "s.torque"),
                            k * sig(sim, "s.twist") + c * sig(sim, "s.twist_rate"), 1e-9);
  }
  ck_assert_msg(worst <= TOL_PHASE * amp, "twist off the closed form by %g rad", worst);
  printf("vibration c = %g: twist off the closed form by %.2e of its amplitude\n", c, worst / amp);
  /* θ̇ = Δω0 e^{−at}(cos ω_d t − (a/ω_d) sin ω_d t): zeros π/ω_d apart */
  double half = (last - first) / (crossings - 1);
  ck_assert_msg(fabs(half * wd / PI - 1.0) < 1e-5, "half period %.9g s, closed form %.9g s",
                half, PI / wd);
  /* energy: the closed form's at t = 2 s against the audit's */
  double t = 2.0, env = exp(-a * t);
  double th = amp * env * sin(wd * t);
  double thd = dw0 * env * (cos(wd * t) - a / wd * sin(wd * t));
  double e_closed = 0.5 * (i1 + i2) * wcm * wcm + 0.5 * jeq * thd * thd + 0.5 * k * th * th;
  double pe = sig(sim, "s.potential_energy");
  ck_assert_double_eq_tol(pe, 0.5 * k * sig(sim, "s.twist") * sig(sim, "s.twist"), 1e-15);
  dg_energy e;
  dg_sim_energy(sim, &e);
  double w = dg_sim_block_work(sim, sb), loss = -w - pe;
  ck_assert_double_eq_tol(loss, e0 - e_closed, TOL_ENERGY * e0);
  ck_assert_double_eq_tol(e.kinetic + pe, e_closed, TOL_ENERGY * e0);
  if (c == 0.0)
    ck_assert_double_eq_tol(e.kinetic + pe, e0, TOL_ENERGY * e0);
  ck_assert_double_le(fabs(e.balance_error), TOL_AUDIT * e0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- backlash ------------------------------------------------------------- */

/* Free play b = 0.1 rad (h = 0.05), k = 1000, I1 = 0.5, I2 = 2, started
 * centred (twist 0) with Δω = 2 rad/s. In the dead band nothing acts — not
 * even the damper: both speeds stay exactly as they are, and the drive
 * flanks meet at t1 = h / Δω = 0.025 s. dt = 0.7 ms, so t1 falls inside a
 * step and is located there. c = 0: the contact is elastic — it lasts half
 * a period of the relative motion, π/ω_n = π/50 s, and sends the sides
 * apart at −Δω — then the play is crossed again at 2 rad/s, b / Δω =
 * 0.05 s, to the coast flanks: t2 = t1 + π/50, t3 = t2 + 0.05.
 * c = 5: the flanks let go where the contact force reaches zero, before
 * the edge; in contact the torque never pulls (>= 0 at every step end). */
static const double lash_damping[] = {0.0, 5.0};

START_TEST(test_backlash) {
  const double i1 = 0.5, i2 = 2.0, k = 1000.0, c = lash_damping[_i], b = 0.1, h = 0.05;
  const double dw = 2.0, dt = 7e-4, t1 = h / dw, wn = 50.0;
  char spring[128];
  snprintf(spring, sizeof spring, "\"stiffness\":%g,\"damping\":%g,\"backlash\":%g", k, c, b);
  dg_graph *g = two_inertias(i1, i2, spring);
  dg_sim *sim = dg_test_sim(g);
  const char *names[] = {"a.omega", "b.omega", "s.twist"};
  const double values[] = {dw, 0.0, 0.0};
  dg_test_set_initial(sim, 3, names, values);
  int n1 = (int)floor(t1 / dt);
  dg_test_step(sim, 1, dt);
  ck_assert_double_eq(sig(sim, "s.in_contact"), 0.0);
  dg_test_step(sim, n1 - 1, dt);
  /* just before the flanks meet: untouched */
  ck_assert_double_eq(sig(sim, "a.omega"), dw);
  ck_assert_double_eq(sig(sim, "b.omega"), 0.0);
  ck_assert_double_eq(sig(sim, "s.torque"), 0.0);
  ck_assert_double_eq(sig(sim, "s.potential_energy"), 0.0);
  ck_assert_int_eq(dg_sim_event_count(sim), 0);
  dg_test_step(sim, 1, dt);
  ck_assert_int_eq(dg_sim_event_count(sim), 1);
  ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t1, TOL_EVENT_FREE);
  ck_assert_double_eq(sig(sim, "s.in_contact"), 1.0);
  double t2 = t1 + PI / wn, t3 = t2 + b / dw;
  int n2 = (int)floor(t2 / dt);
  for (int n = n1 + 2; n <= n2; n++) {
    dg_test_step(sim, 1, dt);
    if (sig(sim, "s.in_contact") > 0.5)
      ck_assert_double_ge(sig(sim, "s.torque"), 0.0);
  }
  if (c == 0.0) {
    ck_assert_int_eq(dg_sim_event_count(sim), 1);
    dg_test_step(sim, 1, dt);
    ck_assert_int_eq(dg_sim_event_count(sim), 2);
    ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t2, TOL_EVENT);
    ck_assert_double_eq(sig(sim, "s.in_contact"), 0.0);
    ck_assert_double_eq_tol(sig(sim, "s.twist_rate"), -dw, 1e-6);
    dg_test_step(sim, (int)floor(t3 / dt) - n2 - 1, dt);
    ck_assert_int_eq(dg_sim_event_count(sim), 2);
    dg_test_step(sim, 1, dt);
    ck_assert_int_eq(dg_sim_event_count(sim), 3);
    ck_assert_double_eq_tol(dg_sim_last_event_time(sim), t3, TOL_EVENT);
    ck_assert_double_eq(sig(sim, "s.in_contact"), 1.0);
    ck_assert_double_le(sig(sim, "s.torque"), 0.0); /* the coast flanks */
  } else {
    /* damped: it let go before the undamped contact would have ended, at
     * a smaller speed, and the audit books the damper's loss */
    ck_assert_int_eq(dg_sim_event_count(sim), 2);
    ck_assert_double_lt(dg_sim_last_event_time(sim), t2);
    ck_assert_double_eq(sig(sim, "s.in_contact"), 0.0);
    double rate = sig(sim, "s.twist_rate");
    ck_assert_double_lt(rate, 0.0);
    ck_assert_double_gt(rate, -dw);
    dg_energy e;
    dg_sim_energy(sim, &e);
    double e0 = 0.5 * i1 * dw * dw;
    ck_assert_double_lt(dg_sim_block_work(sim, dg_test_block_index(g, "s")), 0.0);
    ck_assert_double_le(fabs(e.balance_error), TOL_AUDIT * e0);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- the start: static twist ---------------------------------------------- */

/* A constant torque T0 on a source of inertia I1 = 0.5 drives I2 = 2
 * through the spring (k = 1000). Rigid, both would accelerate at
 * T0 / (I1 + I2), the shaft carrying T = T0 I2 / (I1 + I2) = 0.8 T0. The
 * start twists the spring by T/k (plus h on the flank that pushes), so both
 * ends accelerate together from the first step: the twist stays put (its
 * rate within round-off of 0 over 2000 steps), nothing changes mode, nothing
 * impacts. Cases: T0 = 100 with no play; T0 = 100 and −100 with b = 0.02. */
typedef struct start_case {
  double t0, backlash;
} start_case;
static const start_case start_cases[] = {{100.0, 0.0}, {100.0, 0.02}, {-100.0, 0.02}};

START_TEST(test_static_twist) {
  const start_case *sc = &start_cases[_i];
  const double i1 = 0.5, i2 = 2.0, k = 1000.0, h = 0.5 * sc->backlash;
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":%g,\"torque\":%g},"
      "\"s\":{\"type\":\"spring_damper\",\"stiffness\":%g,\"damping\":3,\"backlash\":%g},"
      "\"b\":{\"type\":\"inertia\",\"inertia\":%g}},"
      "\"connections\":[[\"src.out\",\"s.in\"],[\"s.out\",\"b.in\"]]}",
      i1, sc->t0, k, sc->backlash, i2);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "b.omega", 10.0);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  /* initial values carry across: the source turns with b */
  ck_assert_double_eq(sig(sim, "src.omega"), 10.0);
  double tq = sc->t0 * i2 / (i1 + i2);
  double th = tq / k + (sc->t0 > 0.0 ? h : -h);
  ck_assert_double_eq_tol(sig(sim, "s.twist"), th, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "s.torque"), tq, 1e-9);
  ck_assert_double_eq(sig(sim, "s.in_contact"), 1.0);
  long changes = dg_sim_topology_changes(sim);
  double worst = 0.0;
  for (int n = 0; n < 2000; n++) {
    dg_test_step(sim, 1, 1e-3);
    worst = fmax(worst, fabs(sig(sim, "s.twist_rate")));
  }
  ck_assert_msg(worst < 1e-10, "twist rate reached %g rad/s", worst);
  ck_assert_double_eq_tol(sig(sim, "s.twist"), th, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "b.omega"), 10.0 + sc->t0 / (i1 + i2) * 2.0, 1e-9);
  ck_assert_int_eq(dg_sim_topology_changes(sim), changes);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_eq(e.impact_loss, 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A car at rest held by its wheel brakes while its motor pulls against
 * them (creeping against the brakes): the start holds the braked wheels
 * (as their first pre_step would) before the half-shafts take their static
 * twist, so each shaft starts carrying half the motor's torque through the
 * final drive, 100 · 9 / 2 = 450 N·m, twisted by 450/2500 = 0.18 rad, and
 * nothing moves or rings (held by 3000 N·m brakes). Without the hold taken
 * at the start the shafts started untwisted and swung ±0.18 rad. */
START_TEST(test_static_twist_held) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"m\":{\"type\":\"motor\",\"inertia\":0.05,\"max_torque\":100,\"max_rpm\":15000},"
      "\"final\":{\"type\":\"gear\",\"ratio\":9},"
      "\"diff\":{\"type\":\"differential\",\"kind\":\"open\",\"inertia\":0.02},"
      "\"sl\":{\"type\":\"spring_damper\",\"stiffness\":2500,\"damping\":5,\"inertia\":0.02},"
      "\"sr\":{\"type\":\"spring_damper\",\"stiffness\":2500,\"damping\":5,\"inertia\":0.02},"
      "\"wl\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":3000},"
      "\"wr\":{\"type\":\"wheel\",\"radius\":0.3,\"inertia\":1,\"brake_torque\":3000},"
      "\"body\":{\"type\":\"vehicle\",\"mass\":1500,\"wheelbase\":2.6}},"
      "\"connections\":[[\"m.out\",\"final.in\"],[\"final.out\",\"diff.in\"],"
      "[\"diff.left\",\"sl.in\"],[\"diff.right\",\"sr.in\"],[\"sl.out\",\"wl.hub\"],"
      "[\"sr.out\",\"wr.hub\"],[\"wl.ground\",\"body.rear_left\"],"
      "[\"wr.ground\",\"body.rear_right\"]]}");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(
      "{\"inputs\":{\"throttle\":[[0,1]],\"brake\":[[0,1]]}}", "held.json", &err);
  ck_assert_ptr_nonnull(scn);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv, "%s", err.text);
  ck_assert_double_eq(sig(sim, "wl.locked"), 1.0);
  ck_assert_double_eq_tol(sig(sim, "sl.twist"), 0.18, 1e-12);
  ck_assert_double_eq_tol(sig(sim, "sr.twist"), 0.18, 1e-12);
  double worst = 0.0;
  for (int n = 0; n < 1000; n++) {
    dg_test_step(sim, 1, 1e-3);
    worst = fmax(worst, fabs(sig(sim, "sl.twist_rate")) + fabs(sig(sim, "m.omega")));
  }
  ck_assert_msg(worst < 1e-9, "the held car moved: %g rad/s", worst);
  ck_assert_double_eq_tol(sig(sim, "sl.torque"), 450.0, 1e-9);
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
}
END_TEST

/* A torque source (30 N·m, 0.1 kg·m²) against a load at rest whose
 * Coulomb friction (c0 = 50 N·m) holds it, through a spring (k = 2000):
 * the start sticks the load (as its first pre_step would) before the
 * spring takes its static twist, so the spring starts carrying the whole
 * 30 N·m, twisted by 30/2000 = 0.015 rad, and nothing moves. */
START_TEST(test_static_twist_coulomb) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.1,\"torque\":30},"
      "\"s\":{\"type\":\"spring_damper\",\"stiffness\":2000,\"damping\":2},"
      "\"ld\":{\"type\":\"load\",\"inertia\":1,\"c0\":50}},"
      "\"connections\":[[\"src.out\",\"s.in\"],[\"s.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  ck_assert_double_eq_tol(sig(sim, "s.twist"), 0.015, 1e-12);
  double worst = 0.0;
  for (int n = 0; n < 1000; n++) {
    dg_test_step(sim, 1, 1e-3);
    worst = fmax(worst, fabs(sig(sim, "src.omega")) + fabs(sig(sim, "ld.omega")));
  }
  ck_assert_msg(worst < 1e-9, "the held line moved: %g rad/s", worst);
  ck_assert_double_eq_tol(sig(sim, "s.torque"), 30.0, 1e-9);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* Without dg_sim_start the same rig starts untwisted and rings: the twist
 * swings about the static twist T/k = 0.08 rad with that amplitude,
 * so its rate peaks near ω_n · 0.08 = 4 rad/s. An initial twist that is
 * given is kept by the start; and two ends given apart keep their speeds
 * (no rigid connection is tried). */
START_TEST(test_start_given) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{"
      "\"src\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":100},"
      "\"s\":{\"type\":\"spring_damper\",\"stiffness\":1000},"
      "\"b\":{\"type\":\"inertia\",\"inertia\":2}},"
      "\"connections\":[[\"src.out\",\"s.in\"],[\"s.out\",\"b.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  double peak = 0.0;
  for (int n = 0; n < 200; n++) {
    dg_test_step(sim, 1, 1e-3);
    peak = fmax(peak, fabs(sig(sim, "s.twist_rate")));
  }
  ck_assert_double_gt(peak, 3.9);
  dg_sim_free(sim);

  sim = dg_test_sim(g);
  dg_test_set_initial1(sim, "s.twist", 0.2);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  ck_assert_double_eq(sig(sim, "s.twist"), 0.2);
  dg_sim_free(sim);

  sim = dg_test_sim(g);
  const char *names[] = {"src.omega", "b.omega"};
  const double values[] = {5.0, 1.0};
  dg_test_set_initial(sim, 2, names, values);
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  ck_assert_double_eq(sig(sim, "src.omega"), 5.0);
  ck_assert_double_eq(sig(sim, "b.omega"), 1.0);
  ck_assert_double_eq(sig(sim, "s.twist"), 0.0);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- the stiffness check ---------------------------------------------------- */

/* I1 = I2 = 0.01, k = 1e5: ω_n = √(k (1/I1 + 1/I2)) = √2e7 = 4472.1 rad/s.
 * With no damping the eigenvalues are ±iω_n, and RK4 is stable on the
 * imaginary axis up to |λ|dt = 2√2: dt_limit = 2√2/ω_n = 6.3246e-4 s. The
 * check refuses dt = 1e-3 (|λ|dt = 4.47), and 6.3e-4, and accepts 6.3e-4.
 * With backlash a fresh simulation sits on the drive flanks (twist b/2), so
 * the check sees the spring too. */
static const double stiff_lash[] = {0.0, 0.01};

START_TEST(test_stiffness) {
  char spring[96];
  snprintf(spring, sizeof spring, "\"stiffness\":1e5,\"backlash\":%g", stiff_lash[_i]);
  dg_graph *g = two_inertias(0.01, 0.01, spring);
  dg_sim *sim = dg_test_sim(g);
  const double wn = sqrt(1e5 * 200.0), limit = 2.0 * SQRT2 / wn;
  dg_stiffness st;
  dg_error err;
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 1e-3, &st, &err), DG_ERR_NUMERIC);
  ck_assert_double_eq_tol(st.rate, wn, 1e-6 * wn);
  ck_assert_double_eq_tol(fabs(st.lambda_im), wn, 1e-6 * wn);
  ck_assert_double_eq_tol(st.dt_limit, limit, 1e-6 * limit);
  ck_assert_msg(strstr(err.text, "(block \"s\")"), "%s", err.text);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 6.3e-4, &st, &err), DG_OK);
  ck_assert_int_eq(dg_sim_check_stiffness(sim, 6.4e-4, &st, &err), DG_ERR_NUMERIC);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- the compliant driveline: shuffle after a tip-in ------------------------ */

/* graphs/compliant_driveline.json with graphs/scenarios/compliant_tipin.json:
 * the car rolls at 10 m/s on 0.2 throttle (60 N·m), the throttle goes to 1
 * (300 N·m) between 0.5 and 0.52 s, and the half-shafts ring.
 *
 * The reduction to two inertias, by hand. The motor's torque does not
 * depend on its speed (no power limit, far below max_rpm), the tyres roll
 * (hub = v/R) and there is no road load, so the line is linear with
 * constant forcing after the ramp. The open differential with equal sides
 * splits it into a symmetric mode (both side gears at ω_s) and an
 * antisymmetric one (side gears opposite, carrier still), which the
 * symmetric rig and input never excite. In the symmetric mode, by kinetic
 * energy at the half-shaft speed ω_s (motor at 9 ω_s, differential ratio 1):
 *   J1 = J_motor·9² + J_diff + 2 · 0.01 = 0.05·81 + 0.02 + 0.02 = 4.09 kg·m²
 * (0.01: half of each half-shaft's 0.02 at its side-gear end), and at the
 * wheel speed ω_h = v/R:
 *   J2 = m R² + 4 J_wheel + 2 · 0.01 = 1500·0.09 + 4 + 0.02 = 139.02 kg·m²;
 * the two half-shafts twist alike, in parallel: K = 2·2500 = 5000 N·m/rad,
 * C = 2·5 = 10 N·m·s/rad. With 1/J = 1/J1 + 1/J2:
 *   ω_n = √(K/J) = 35.4737 rad/s,  a = C/(2J) = 1.2584 1/s,
 *   ω_d = √(ω_n² − a²) = 35.4514 rad/s (5.6423 Hz),
 * and after the ramp θ̇ = A e^{−a t} sin(ω_d t + φ): its zero crossings are
 * exactly π/ω_d apart. Measured over the crossings from 0.6 s to 3 s (27
 * half periods) with linear interpolation between steps (bias at most
 * a·dt²/4 = 3e-7 s per crossing) and RK4's phase error (ω_d dt)⁴/120 =
 * 1.3e-8 relative, the half period must match to 1e-4 (the acceptance).
 * Before the tip-in the start's static twist holds the shaft still, and
 * the two half-shafts stay equal (no antisymmetric motion). */
START_TEST(test_compliant_tipin) {
  char path[1024];
  dg_graph *g = dg_test_graph_file("graphs/compliant_driveline.json");
  dg_test_path(path, sizeof path, "graphs/scenarios/compliant_tipin.json");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_file(path, &err);
  ck_assert_msg(scn, "%s: %s", err.path, err.text);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_msg(drv, "%s", err.text);
  const double j1 = 0.05 * 81.0 + 0.02 + 0.02, j2 = 1500.0 * 0.09 + 4.0 + 0.02;
  const double kk = 5000.0, cc = 10.0, inv = 1.0 / j1 + 1.0 / j2;
  const double wn = sqrt(kk * inv), a = 0.5 * cc * inv, wd = sqrt(wn * wn - a * a);
  /* the start: the static twist carries the rigid line's torque */
  double t_static = 0.2 * 300.0 * 9.0 * j2 / (j1 + j2) / 2.0;
  ck_assert_double_eq_tol(sig(sim, "shaft_l.torque"), t_static, 1e-9 * t_static);
  double dt = dg_scenario_dt(scn), prev = 0.0, first = NAN, last = NAN, worst_pre = 0.0;
  double worst_asym = 0.0;
  int crossings = 0, steps = (int)lround(dg_scenario_duration(scn) / dt);
  for (int n = 1; n <= steps; n++) {
    dg_test_step(sim, 1, dt);
    double t = n * dt, rate = sig(sim, "shaft_l.twist_rate");
    worst_asym = fmax(worst_asym, fabs(sig(sim, "shaft_l.twist") - sig(sim, "shaft_r.twist")));
    if (t <= 0.5)
      worst_pre = fmax(worst_pre, fabs(rate));
    if (t > 0.6 && n > 1 && (prev > 0.0 ? rate <= 0.0 : rate >= 0.0)) {
      double tc = t - dt * rate / (rate - prev);
      if (crossings == 0)
        first = tc;
      last = tc;
      crossings++;
    }
    prev = rate;
  }
  ck_assert_msg(worst_pre < 1e-10, "the shaft moved before the tip-in: %g rad/s", worst_pre);
  ck_assert_double_le(worst_asym, 1e-12);
  ck_assert_int_ge(crossings, 20);
  double half = (last - first) / (crossings - 1), err_rel = half * wd / PI - 1.0;
  printf("compliant_tipin: %d crossings, half period %.9f s, closed form %.9f s "
         "(%.4f Hz), relative error %.2e\n",
         crossings, half, PI / wd, wd / (2.0 * PI), err_rel);
  ck_assert_msg(fabs(err_rel) < 1e-4, "shuffle frequency off by %g", err_rel);
  dg_energy e;
  dg_sim_energy(sim, &e);
  ck_assert_double_le(fabs(e.balance_error), TOL_AUDIT * e.work_in);
  ck_assert_double_eq(e.impact_loss, 0.0);
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
}
END_TEST

/* ---- parameters --------------------------------------------------------------- */

static const dg_test_bad_param bad[] = {
    {"\"damping\":1", "/blocks/s/stiffness", "missing required number (N*m/rad)"},
    {"\"stiffness\":0", "/blocks/s/stiffness", "must be > 0 (got 0)"},
    {"\"stiffness\":100,\"damping\":-1", "/blocks/s/damping", "must be >= 0 (got -1)"},
    {"\"stiffness\":100,\"backlash\":-0.01", "/blocks/s/backlash", "must be >= 0 (got -0.01)"},
    {"\"stiffness\":100,\"inertia\":-0.5", "/blocks/s/inertia", "must be >= 0 (got -0.5)"},
    {"\"stiffnes\":100", "/blocks/s/stiffnes", "unknown parameter; did you mean \"stiffness\"?"},
};

START_TEST(test_bad_params) {
  dg_test_graph_error_at(bad[_i].path, bad[_i].text,
                         "{\"drivegraph\":1,\"blocks\":{"
                         "\"a\":{\"type\":\"inertia\",\"inertia\":1},"
                         "\"s\":{\"type\":\"spring_damper\",%s},"
                         "\"b\":{\"type\":\"inertia\",\"inertia\":1}},"
                         "\"connections\":[[\"a.out\",\"s.in\"],[\"s.out\",\"b.in\"]]}",
                         bad[_i].params);
}
END_TEST

/* Two springs in series with nothing between them: the shaft between is a
 * DOF without inertia, refused where it is. */
START_TEST(test_massless_node) {
  dg_error e = dg_test_graph_error(
      "{\"drivegraph\":1,\"blocks\":{\"a\":{\"type\":\"inertia\",\"inertia\":1},"
      "\"s1\":{\"type\":\"spring_damper\",\"stiffness\":100},"
      "\"s2\":{\"type\":\"spring_damper\",\"stiffness\":100},"
      "\"b\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"a.out\",\"s1.in\"],[\"s1.out\",\"s2.in\"],[\"s2.out\",\"b.in\"]]}");
  ck_assert_str_eq(e.path, "/blocks/s1");
  ck_assert_msg(strstr(e.text, "has no inertia: s1.out can turn"), "%s", e.text);
}
END_TEST

/* ---- ElastoBacklash's law (backlash_law "elasto_backlash") ------------ */

/* A fixed end (speed_source 0) and a 1 kg·m² inertia on a spring_damper
 * with k = 1e4, c = 100, backlash 0.2 (h = 0.1), the contact closing at the
 * drive edge (twist h) at Δω = 2 rad/s. With φ = θ − h:
 *  - while c·φ' > k·φ the damper is limited to the spring: T = 2kφ, so
 *    φ'' = −2kφ/J from φ(0) = 0, φ'(0) = 2: φ = (2/Ω) sin Ωt, Ω = √(2k/J);
 *    T starts at 0 (ElastoBacklash2's law would step to c·2 = 200 N·m);
 *  - the limit lets go where tan Ωt = cΩ/k (t₁ = atan(cΩ/k)/Ω = 6.755 ms),
 *    located as an event; after it T = kφ + cφ': a damped oscillator
 *    (ω_n = 100, ζ = 0.5) from φ(t₁), φ'(t₁), in closed form.
 * RK4 at dt 1e-4 (Ω dt = 0.014): 1e-9 relative. */
static double eb_phi(double t, double *rate) {
  const double k = 1e4, c = 100, J = 1, W = sqrt(2 * k / J);
  double t1 = atan(c * W / k) / W;
  if (t <= t1) {
    *rate = 2 * cos(W * t);
    return 2 / W * sin(W * t);
  }
  double p1 = 2 / W * sin(W * t1), v1 = 2 * cos(W * t1);
  double wn = sqrt(k / J), z = c / (2 * sqrt(k * J)), wd = wn * sqrt(1 - z * z), s = t - t1;
  double A = p1, B = (v1 + z * wn * p1) / wd, e = exp(-z * wn * s);
  *rate = e * (-z * wn * (A * cos(wd * s) + B * sin(wd * s)) + wd * (-A * sin(wd * s) + B * cos(wd * s)));
  return e * (A * cos(wd * s) + B * sin(wd * s));
}

START_TEST(test_elasto_backlash_law) {
  dg_graph *g = dg_test_graph(
      "{\"drivegraph\":1,\"blocks\":{\"fixed\":{\"type\":\"speed_source\",\"inputs\":{\"speed\":0}},"
      "\"s\":{\"type\":\"spring_damper\",\"stiffness\":1e4,\"damping\":100,\"backlash\":0.2,"
      "\"backlash_law\":\"elasto_backlash\"},\"m\":{\"type\":\"inertia\",\"inertia\":1}},"
      "\"connections\":[[\"fixed.out\",\"s.in\"],[\"s.out\",\"m.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  static const char *const names[] = {"s.twist", "m.omega"};
  static const double values[] = {0.1, -2.0};
  dg_test_set_initial(sim, 2, names, values);
  const double k = 1e4, c = 100, dt = 1e-4;
  dg_test_step(sim, 1, dt);
  double rate, phi = eb_phi(dt, &rate);
  /* right after the contact starts: 2kφ ≈ 4 N·m, not the 200 of T_c + T_d */
  ck_assert_double_eq_tol(dg_test_signal(sim, "s.torque"), 2 * k * phi, 1e-9 * 2 * k * 0.0142);
  ck_assert_double_le(dg_test_signal(sim, "s.torque"), 5.0);
  double worst = 0;
  for (int i = 1; i <= 15; i++) { /* to 15 ms: both laws, the switch at 6.755 ms inside a step */
    dg_test_step(sim, 10, dt);
    double t = dg_sim_time(sim);
    phi = eb_phi(t, &rate);
    worst = fmax(worst, fabs(dg_test_signal(sim, "s.twist") - 0.1 - phi) / 0.0142);
    double tq = dg_test_signal(sim, "s.torque");
    double want = c * rate > k * phi ? 2 * k * phi : k * phi + c * rate;
    ck_assert_double_eq_tol(tq, want, 1e-6 * 200);
  }
  printf("spring_damper elasto_backlash: closing contact, worst |twist error| / amplitude %.2e\n",
         worst);
  ck_assert_double_le(worst, 1e-8);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* ---- against an independent reference: MSL AllComponents ----------------- */

/* The drive of inertia5 ... inertia6 of ModelicaTest.Rotational.AllComponents
 * (tests/data/msl/ModelicaTest.Rotational.AllComponents: a clutch engaged
 * by sin(2πt), an ideal gear, a planetary whose massless ring drives a
 * spring-damper, a SpringDamper with phi_rel0 = 1e-3°, an ElastoBacklash of
 * 1e-5° (backlash_law elasto_backlash), bearing friction and a brake)
 * against tests/data/ref/all_components.csv (scripts/ref/all_components.py:
 * the equations by hand, ElastoBacklash's law as Modelica writes it,
 * exact Coulomb friction, scipy's DOP853 at rtol = atol = 1e-12 between
 * located events; its two solvers agree to 1.1e-10). The clutch holds from
 * t = 0 and lets go at 0.4968 s, where its capacity 1.56 sin(2πt) falls
 * below what it carries; the brake slides forward, turns back at 0.0169 s;
 * both are free from 0.5 s. Measured: at dt = 1e-3, 5.4e-8 rad/s (damper's
 * w_rel) and 1.3e-9 rad; at dt = 1e-4, 3.0e-11 rad/s and 2.7e-12 rad
 * (RK4's O(dt⁴) and the events located inside the steps); the clutch lets
 * go 4.1e-9 s and 1e-12 s off the reference's time. The columns are
 * Modelica's signals, read from ours as tests/data/msl/.../compare.json
 * does; each term a signal and its coefficient. */
typedef struct msl_column {
  const char *name, *a;
  double ca;
  const char *b;
  double cb, offset;
} msl_column;

static const msl_column ac_columns[] = {
    {"clutch.phi_rel", "clutch.out.angle", 1, "clutch.in.angle", -1, 0},
    {"clutch.w_rel", "clutch.omega_out", 1, "clutch.omega", -1, 0},
    {"damper.phi_rel", "damper.twist", -1, NULL, 0, 0},
    {"damper.w_rel", "damper.twist_rate", -1, NULL, 0, 0},
    {"elastoBacklash.phi_rel", "elastoBacklash.twist", -1, NULL, 0, 0},
    {"elastoBacklash.w_rel", "elastoBacklash.twist_rate", -1, NULL, 0, 0},
    {"inertia2.phi", "inertia2.in.angle", 1, NULL, 0, 0},
    {"inertia2.w", "inertia2.omega", 1, NULL, 0, 0},
    {"inertia3.phi", "inertia3.in.angle", 1, NULL, 0, 0},
    {"inertia3.w", "inertia3.omega", 1, NULL, 0, 0},
    {"springDamper.phi_rel", "springDamper.twist", -1, NULL, 0, 1.7453292519943e-05},
    {"springDamper.w_rel", "springDamper.twist_rate", -1, NULL, 0, 0},
};
#define AC_COLS ((int)(sizeof ac_columns / sizeof ac_columns[0]))

START_TEST(test_all_components_reference) {
  const double dts[] = {1e-3, 1e-4}, tol_phi[] = {4e-9, 2e-11}, tol_w[] = {2e-7, 2e-10},
               tol_break[] = {2e-8, 1e-10};
  double dt = dts[_i];
  char path[1024], line[4096];
  dg_test_path(path, sizeof path, "tests/data/ref/all_components.csv");
  FILE *f = fopen(path, "r");
  ck_assert_msg(f, "cannot read %s", path);
  double t_break = NAN; /* the clutch's breakaway in the reference */
  while (fgets(line, sizeof line, f) && line[0] == '#')
    if (strstr(line, "element=clutch backward"))
      ck_assert_int_eq(sscanf(line, "# event t=%lf", &t_break), 1);
  ck_assert_msg(!isnan(t_break), "no clutch breakaway in %s", path);
  char want[4096] = "t";
  for (int c = 0; c < AC_COLS; c++)
    strcat(strcat(want, ","), ac_columns[c].name);
  ck_assert_str_eq(line, strcat(want, "\n"));
  dg_test_drive r = dg_test_start("tests/data/msl/ModelicaTest.Rotational.AllComponents/graph.json",
                                  "tests/data/msl/ModelicaTest.Rotational.AllComponents/scenario.json");
  double worst_phi = 0, worst_w = 0, worst_phi_t = 0, worst_w_t = 0, seen_break = NAN;
  int steps = (int)lround(1e-3 / dt), rows = 0;
  bool first = true;
  while (fgets(line, sizeof line, f)) {
    double v[1 + AC_COLS];
    char *p = line;
    for (int c = 0; c <= AC_COLS; c++) {
      v[c] = strtod(p, &p);
      p += *p == ',';
    }
    for (int k = 0; !first && k < steps; k++) {
      double locked = dg_test_signal(r.sim, "clutch.locked");
      dg_driver_apply(r.drv, dg_sim_time(r.sim));
      dg_test_step(r.sim, 1, dt);
      if (locked == 1.0 && dg_test_signal(r.sim, "clutch.locked") == 0.0 && isnan(seen_break))
        seen_break = dg_sim_last_event_time(r.sim);
    }
    first = false;
    rows++;
    ck_assert_double_eq_tol(dg_sim_time(r.sim), v[0], 1e-12);
    for (int c = 0; c < AC_COLS; c++) {
      const msl_column *m = &ac_columns[c];
      double y = m->offset + m->ca * dg_test_signal(r.sim, m->a);
      if (m->b)
        y += m->cb * dg_test_signal(r.sim, m->b);
      double d = fabs(y - v[1 + c]);
      bool angle = strstr(m->name, ".phi") != NULL;
      if (angle && d > worst_phi) {
        worst_phi = d;
        worst_phi_t = v[0];
      } else if (!angle && d > worst_w) {
        worst_w = d;
        worst_w_t = v[0];
      }
    }
  }
  fclose(f);
  printf("AllComponents' backlash drive, dt = %g: worst |angle - ref| %.3g rad at t = %.3f s, "
         "|speed - ref| %.3g rad/s at t = %.3f s; clutch lets go at %.12g s (ref %.12g)\n",
         dt, worst_phi, worst_phi_t, worst_w, worst_w_t, seen_break, t_break);
  ck_assert_int_eq(rows, 901);
  ck_assert_double_le(worst_phi, tol_phi[_i]);
  ck_assert_double_le(worst_w, tol_w[_i]);
  ck_assert_double_eq_tol(seen_break, t_break, tol_break[_i]);
  dg_test_finish(&r);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("spring_damper");
  TCase *tc = tcase_create("dynamics");
  tcase_add_loop_test(tc, test_vibration, 0, (int)(sizeof vib_damping / sizeof vib_damping[0]));
  tcase_add_loop_test(tc, test_backlash, 0, (int)(sizeof lash_damping / sizeof lash_damping[0]));
  tcase_add_loop_test(tc, test_stiffness, 0, (int)(sizeof stiff_lash / sizeof stiff_lash[0]));
  suite_add_tcase(s, tc);
  tc = tcase_create("start");
  tcase_add_loop_test(tc, test_static_twist, 0, (int)(sizeof start_cases / sizeof start_cases[0]));
  tcase_add_test(tc, test_start_given);
  tcase_add_test(tc, test_static_twist_held);
  tcase_add_test(tc, test_static_twist_coulomb);
  suite_add_tcase(s, tc);
  tc = tcase_create("driveline");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_compliant_tipin);
  tcase_add_loop_test(tc, test_all_components_reference, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("params");
  tcase_add_loop_test(tc, test_bad_params, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, test_massless_node);
  tcase_add_test(tc, test_elasto_backlash_law);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
