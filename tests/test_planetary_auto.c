/* Issue 12's acceptance case: a 4-speed planetary automatic made of
 * planetaries, clutches and brakes only (no gearbox block), shifting clutch
 * to clutch: graphs/planetary_automatic.json with
 * graphs/scenarios/planetary_automatic.json.
 *
 * The layout. Two simple planetaries, ps1 (sun 30, ring 70) and ps2 (sun 36,
 * ring 72), with carrier 1 joined to ring 2 (the shaft A) and ring 1 joined
 * to carrier 2 (the output o, on the final drive). The input i (the
 * engine's shaft) feeds two clutches; two brakes hold members to ground:
 *   c_fwd  forward clutch   i -> sun 2
 *   c_34   3-4 clutch       i -> A (carrier 1 / ring 2)
 *   b_low  low brake        holds A
 *   b_24   2-4 brake        holds sun 1
 * (the shift pattern of GM's 700-R4 / 4L60-E: 1st forward + low, 2nd
 * forward + 2-4, 3rd forward + 3-4, 4th 3-4 + 2-4).
 *
 * The ratios, by hand. Willis for a simple planetary with k = R/S (ring
 * teeth over sun teeth): ω_s + k ω_r = (1 + k) ω_c. Here k1 = 70/30 = 7/3,
 * k2 = 72/36 = 2, and with carrier 1 = ring 2 = a, ring 1 = carrier 2 = o:
 *   (P1)  ω_s1 + k1 o   = (1 + k1) a
 *   (P2)  ω_s2 + k2 a   = (1 + k2) o
 * Five shafts (i, s1, s2, a, o), two ties: three DOF; two elements locked
 * per gear leave one, so i/o is fixed:
 *   1st  c_fwd (ω_s2 = i), b_low (a = 0):   (P2) i = (1 + k2) o
 *        i/o = 1 + k2 = 3
 *   2nd  c_fwd (ω_s2 = i), b_24 (ω_s1 = 0): (P1) a = k1 o / (1 + k1);
 *        (P2) i = (1 + k2) o − k2 k1 o / (1 + k1)
 *                = o ((1 + k1)(1 + k2) − k1 k2) / (1 + k1)
 *        i/o = (1 + k1 + k2) / (1 + k1) = (16/3) / (10/3) = 1.6
 *   3rd  c_fwd (ω_s2 = i), c_34 (a = i):    (P2) i + k2 i = (1 + k2) o
 *        i/o = 1 (the set turns as one)
 *   4th  c_34 (a = i), b_24 (ω_s1 = 0):     (P1) k1 o = (1 + k1) i
 *        i/o = k1 / (1 + k1) = (7/3) / (10/3) = 0.7 (overdrive)
 * Each upshift releases one element and applies another: 1→2 b_low → b_24,
 * 2→3 b_24 → c_34, 3→4 c_fwd → b_24.
 *
 * The torques of the hand-over (quasi-static, input torque T; the gear set
 * applies sun : ring : carrier = 1 : k : −(1 + k) times its multiplier):
 * in 1st b_low holds k2 T = 2T; b_24 slipping on sun 1 (which turns
 * backwards at −k1 o) with τ pushes A forward with (1 + k1) τ, so b_low
 * carries nothing at τ = k2 T / (1 + k1) = 0.6 T, the torque b_24 holds in
 * 2nd. In 2nd b_24 holds 0.6 T; c_34 slipping with τ3 takes it over at
 * τ3 = k2 T / (1 + k2) = 2T/3 (3rd's split: c_fwd T/3, c_34 2T/3). In 3rd
 * c_fwd carries T/3; b_24 slipping on sun 1 (turning forward) unloads it at
 * 0.3 T, what it holds in 4th. The scenario (throttle 0.5, ~157 N·m)
 * scripts each shift as dct_upshifts.json does: at T_s − 0.1 s the
 * off-going element's command falls to just above what it holds (reaching
 * it at T_s) and then to 0 over 0.15 s (torque phase) while the on-coming
 * one rises past the hand-over torque; it then rises a little more and
 * holds, pulling the engine down to the new gear's speed (inertia phase),
 * locks, and goes to 1 from T_s + 0.9 s. The launch: b_low applied from
 * the start, c_fwd rises to 0.27 (162 N·m, just above the engine's) over
 * 0.3 s and holds, so the engine runs at ~3000 rpm on the slipping clutch
 * until the car catches up (c_fwd locks at 2.5 s), then goes to 1.
 *
 * Checked:
 * - in each gear, from the moment its two elements are locked (and the
 *   other two free) until the next shift begins: input / output speed
 *   (engine.omega / final.omega) equals the ratio above to 1e-9, and the
 *   held member (A in 1st, sun 1 in 2nd and 4th) is at rest;
 * - every shift completes within 1.3 s of T_s: the on-coming element
 *   locked, the off-going one released (not locked, no torque), and the
 *   state stays so until the next shift;
 * - the power flow never breaks during a shift. Criterion: at every 1 ms
 *   step from T_s − 0.1 to T_s + 1.3 s the torque the two gear sets apply
 *   to the output shaft (ps1.ring_torque + ps2.carrier_torque) stays at or
 *   above 0.9 · r_new / r_old of its value at T_s − 0.1 s (the last
 *   instant before the off-going element's command falls), and the body's
 *   acceleration stays positive. r_new / r_old (0.533, 0.625, 0.7) is where
 *   an ideal torque phase takes it at a constant engine torque: the
 *   on-coming element then carries the whole input torque at the new
 *   ratio; a tie-up (both elements holding) would pull it lower, a gap
 *   (neither) towards zero. In the inertia phase the engine's deceleration
 *   adds to it. Measured: 0.530, 0.616, 0.685 of the pre-shift torque;
 * - the energy audit closes to 1e-6 of the work in, nothing lost to an
 *   impact (each lock is located at zero slip). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

enum { C_FWD, C_34, B_LOW, B_24, NUM_ELEMENTS };
static const char *const element_state[NUM_ELEMENTS] = {"c_fwd.locked", "c_34.locked",
                                                       "b_low.held", "b_24.held"};
static const char *const element_torque[NUM_ELEMENTS] = {"c_fwd.torque", "c_34.torque",
                                                        "b_low.torque", "b_24.torque"};
static const char *const element_name[NUM_ELEMENTS] = {"c_fwd", "c_34", "b_low", "b_24"};

/* Tooth counts of the graph: k = ring / sun. */
#define K1 (70.0 / 30.0)
#define K2 (72.0 / 36.0)

typedef struct gear {
  double ratio;      /* input / output speed, by hand (above) */
  int on[2];         /* the two elements locked in this gear */
  const char *held;  /* the member held at rest (a brake's omega), or NULL */
} gear;

#define BIT(e) (1u << (e))

static const gear gears[4] = {
    {1.0 + K2, {C_FWD, B_LOW}, "b_low.omega"},
    {(1.0 + K1 + K2) / (1.0 + K1), {C_FWD, B_24}, "b_24.omega"},
    {1.0, {C_FWD, C_34}, NULL},
    {K1 / (1.0 + K1), {C_34, B_24}, "b_24.omega"},
};

static unsigned gear_elements(const gear *gr) { return BIT(gr->on[0]) | BIT(gr->on[1]); }

/* The scenario's shifts 1→2, 2→3, 3→4: T_s, the off-going and on-coming
 * elements. */
static const double shift_time[3] = {5.0, 13.0, 20.0};
static const int off_going[3] = {B_LOW, B_24, C_FWD};
static const int on_coming[3] = {B_24, C_34, B_24};
#define SHIFT_LEAD 0.1 /* the off-going command starts to fall at T_s - 0.1 s */
#define SHIFT_SPAN 1.3 /* a shift is over by T_s + 1.3 s */

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* The elements locked (clutches) or held (brakes) now, as bits. */
static unsigned locked_set(const dg_sim *sim) {
  unsigned s = 0;
  for (int e = 0; e < NUM_ELEMENTS; e++)
    if (sig(sim, element_state[e]) == 1.0)
      s |= BIT(e);
  return s;
}

/* The torque the two gear sets apply to the output shaft (ring 1 and
 * carrier 2), at the last step's end. */
static double output_torque(const dg_sim *sim) {
  return sig(sim, "ps1.ring_torque") + sig(sim, "ps2.carrier_torque");
}

START_TEST(test_upshifts) {
  dg_test_drive run = dg_test_start("graphs/planetary_automatic.json", "graphs/scenarios/planetary_automatic.json");
  dg_sim *sim = run.sim;

  const double dt = 1e-3;
  const long steps = 24000; /* the scenario's 24 s, in steps of 1 ms */
  long shift_begin[3], shift_end[3];
  for (int s = 0; s < 3; s++) {
    shift_begin[s] = lround((shift_time[s] - SHIFT_LEAD) / dt);
    shift_end[s] = lround((shift_time[s] + SHIFT_SPAN) / dt);
  }
  double in_gear_from[4] = {NAN, NAN, NAN, NAN}, worst[4] = {0}, ratio_seen[4] = {0};
  long samples[4] = {0};
  double pre_torque[3] = {NAN, NAN, NAN}, min_torque[3] = {INFINITY, INFINITY, INFINITY};
  double pre_accel[3] = {NAN, NAN, NAN}, min_accel[3] = {INFINITY, INFINITY, INFINITY};
  double t_release[3] = {NAN, NAN, NAN}, t_lock[3] = {NAN, NAN, NAN};
  unsigned prev = locked_set(sim);
  for (long ms = 1; ms <= steps; ms++) {
    long events = dg_sim_event_count(sim);
    dg_test_step(sim, 1, dt);
    double t = dg_sim_time(sim);
    /* an element's lock or release happens at an event inside the step */
    double t_event = dg_sim_event_count(sim) > events ? dg_sim_last_event_time(sim) : t;
    unsigned now = locked_set(sim);
    int k = 0; /* shifts begun: the gear aimed at is gears[k] */
    while (k < 3 && ms >= shift_begin[k])
      k++;
    if (k > 0 && ms <= shift_end[k - 1]) {
      int s = k - 1;
      double tq = output_torque(sim), acc = sig(sim, "body.accel");
      if (ms == shift_begin[s]) {
        pre_torque[s] = tq;
        pre_accel[s] = acc;
      }
      min_torque[s] = fmin(min_torque[s], tq);
      min_accel[s] = fmin(min_accel[s], acc);
      if ((prev & BIT(off_going[s])) && !(now & BIT(off_going[s])))
        t_release[s] = t_event;
      if (!(prev & BIT(on_coming[s])) && (now & BIT(on_coming[s])))
        t_lock[s] = t_event;
    }
    const gear *gr = &gears[k];
    if (isnan(in_gear_from[k]) && now == gear_elements(gr))
      in_gear_from[k] = t;
    if (!isnan(in_gear_from[k])) {
      /* in gear: its two elements locked, the other two free, until the
       * next shift begins */
      ck_assert_msg(now == gear_elements(gr), "gear %d: elements 0x%x locked at %.3f s, not 0x%x",
                    k + 1, now, t, gear_elements(gr));
      double wi = sig(sim, "engine.omega"), wo = sig(sim, "final.omega");
      ck_assert_double_gt(wo, 1.0);
      double r = wi / wo;
      worst[k] = fmax(worst[k], fabs(r - gr->ratio));
      ratio_seen[k] = r;
      samples[k]++;
      if (gr->held)
        ck_assert_double_le(fabs(sig(sim, gr->held)), 1e-9);
      for (int e = 0; e < NUM_ELEMENTS; e++)
        if (!(gear_elements(gr) & BIT(e)))
          ck_assert_msg(sig(sim, element_torque[e]) == 0.0, "gear %d: %s = %g at %.3f s", k + 1,
                        element_torque[e], sig(sim, element_torque[e]), t);
    }
    prev = now;
  }

  /* the launch: c_fwd locks (b_low held from the start) by 3 s */
  ck_assert_double_le(in_gear_from[0], 3.0);
  for (int k = 0; k < 4; k++) {
    double span = samples[k] * dt;
    printf("planetary automatic: gear %d (%s + %s): input/output %.15f, by hand %.15f, worst "
           "|i/o - r| %.3g over %.2f s from %.3f s\n",
           k + 1, element_name[gears[k].on[0]], element_name[gears[k].on[1]], ratio_seen[k],
           gears[k].ratio,
           worst[k], span, in_gear_from[k]);
    ck_assert_msg(!isnan(in_gear_from[k]), "gear %d never engaged", k + 1);
    ck_assert_double_ge(span, 2.0);
    ck_assert_double_le(worst[k], 1e-9);
  }
  for (int s = 0; s < 3; s++) {
    double r_step = gears[s + 1].ratio / gears[s].ratio;
    printf("planetary automatic: upshift %d->%d at %.2f s: %s released at %.6f s, %s locked at "
           "%.6f s (in gear at %.3f s); output torque %.1f N*m before, lowest %.1f (%.3f; "
           "r_new/r_old %.3f); body accel %.3f m/s^2 before, lowest %.3f\n",
           s + 1, s + 2, shift_time[s], element_name[off_going[s]], t_release[s],
           element_name[on_coming[s]], t_lock[s], in_gear_from[s + 1], pre_torque[s],
           min_torque[s], min_torque[s] / pre_torque[s], r_step, pre_accel[s], min_accel[s]);
    /* the shift completes: the off-going released and the on-coming locked
     * within the shift (in gear from then on: checked above) */
    ck_assert_double_ge(t_release[s], shift_time[s] - SHIFT_LEAD);
    ck_assert_double_le(t_release[s], shift_time[s] + SHIFT_SPAN);
    ck_assert_double_ge(t_lock[s], shift_time[s] - SHIFT_LEAD);
    ck_assert_double_le(t_lock[s], shift_time[s] + SHIFT_SPAN);
    ck_assert_double_le(in_gear_from[s + 1], shift_time[s] + SHIFT_SPAN);
    /* no break in the power flow */
    ck_assert_double_gt(pre_torque[s], 50.0);
    ck_assert_double_ge(min_torque[s], 0.9 * r_step * pre_torque[s]);
    ck_assert_double_gt(min_accel[s], 0.0);
  }

  dg_energy e;
  dg_sim_energy(sim, &e);
  printf("planetary automatic: %.1f km/h at 24 s; energy: work in %.6g J, balance error %.3g J "
         "(%.3g of the work in), impact loss %.3g J\n",
         sig(sim, "body.speed") * 3.6, e.work_in, e.balance_error, e.balance_error / e.work_in,
         e.impact_loss);
  ck_assert_double_le(fabs(e.balance_error), 1e-6 * e.work_in);
  ck_assert_double_le(fabs(e.impact_loss), 1e-6);
  dg_test_finish(&run);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("planetary_auto");
  TCase *tc = tcase_create("upshifts");
  tcase_add_test(tc, test_upshifts);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
