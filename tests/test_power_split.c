/* The power-split hybrid (graphs/power_split_hybrid.json with
 * graphs/scenarios/power_split.json), issue 12's acceptance case: the
 * engine on the carrier, MG1 on the sun, MG2 and the final drive on the
 * ring; a pid holds the engine at its set point through MG1's torque.
 *
 * Kinematics. The planetary (S = 30, R = 78 teeth) is one tie,
 *   S·ω_s + R·ω_r = (S+R)·ω_c,  so  ω_s = 3.6·ω_c − 2.6·ω_r,
 * and every shaft speed is a linear combination of the two DOFs (ω_c, ω_r):
 * Willis holds at every step to round-off, not to a tolerance.
 *
 * Torques. The gear set applies S/(S+R)·λ to the sun, R/(S+R)·λ to the
 * ring and −λ to the carrier (λ its one multiplier), so with the engine
 * torque T_e, MG1's torque T_1 and the inertias I_c = 0.18 (engine on the
 * carrier) and I_s = 0.05 kg·m² (MG1's rotor on the sun):
 *   I_c·α_c = T_e − λ,   I_s·α_s = T_1 + S/(S+R)·λ.
 * With the engine held (α_c = 0): λ = T_e and
 *   T_1 = −S/(S+R)·T_e + I_s·α_s,   α_s = −(R/S)·α_r = −(R/S)·(i_f/r_w)·a,
 * the quasi-static reaction −30/108·T_e plus MG1's own inertia torque while
 * the ring accelerates (the car's acceleration a, final drive i_f = 3.27,
 * rolling radius r_w = 0.3 m): about −1 N·m at a = 0.7 m/s², 3.5 % of T_1.
 *
 * Loop. Mass matrix in (ω_c, ω_r): I_cc = I_c + 3.6²·I_s = 0.828,
 * I_cr = −3.6·2.6·I_s = −0.468, I_rr = J_r + 2.6²·I_s = 12.445 (J_r =
 * MG2 0.04 + (differential 0.03 + wheels 3.0 + body 1400·0.3²)/3.27²
 * = 12.107 kg·m²). The engine's torque accelerates the engine's mode by
 * (M⁻¹)_cc = 1/J, J = I_cc − I_cr²/I_rr = 0.8104 kg·m²; MG1's torque by
 * b = 3.6·(M⁻¹)_cc − 2.6·(M⁻¹)_cr = 4.3216 rad/s² per N·m (it also pushes
 * the ring back, through MG1's inertia: a little less than 3.6/J = 4.442).
 * The PI on the error in rpm (kp = 0.24 N·m/rpm, ki = 0.6 N·m/(rpm·s);
 * 30/π rpm per rad/s: kp' = 2.2918 N·m·s, ki' = 5.7296 N·m) closes
 *   s² + (b·kp' − T_e'/J)·s + b·ki' = 0,
 * T_e' = ∂T_e/∂ω = 0.0682 N·m·s at 2000 rpm, throttle 0.8 (0.2·closed +
 * 0.8·full-load slope): ω_n = √(4.3216·5.7296) = 4.976 rad/s,
 * ζ = (9.904 − 0.084)/(2·4.976) = 0.987: poles −4.910 ± 0.807j, nearly
 * critically damped (the ring's own pole is the free rolling car, at 0).
 * The gains were chosen for ζ ≈ 1 at ω_n ≈ 5 rad/s: fast against the
 * car (seconds), slow against the 1 ms step and within MG1's limits.
 * This linear model's responses (integrated at 1e-4 s; by hand: ζ = 1
 * gives 87.1 rpm and 1.49 s, 67.7 rpm and 1.62 s):
 * - Start: the integral starts at 0, so MG1 gives nothing while the engine
 *   needs −28.17 N·m of reaction: the engine overshoots by 86.7 rpm at
 *   0.20 s and is within 1 rpm of 2000 from 1.465 s.
 * - Set point step of 500 rpm at 10 s: overshoot 71.2 rpm at 0.40 s,
 *   within 1 rpm of 2500 from 1.621 s. MG1's torque jumps by
 *   kp·500 = 120 N·m to +92 N·m, inside the ±100 N·m limits: the loop
 *   stays linear.
 * - Settled, the load drifts slowly (the car's acceleration falls with the
 *   road load, so does MG1's inertia torque): a ramp the integral follows
 *   with the constant error (di/dt)/ki ≈ 0.0165/0.6 = 0.03 rpm.
 * The speed is checked from 2 s after each transient (0 and 10 s); the
 * torques from 3 s, where the decaying error's acceleration is below
 * 1e-3 rad/s² (ω_n²·t·e^{−ω_n t} of the error's scale), so the engine's
 * inertia torques that the hand calculation leaves out,
 * (S/(S+R)·I_c + 3.6·I_s)·α_c = 0.23 kg·m²·α_c, are below 3e-4 N·m. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

START_TEST(test_power_split) {
  const double S = 30, R = 78, i_f = 3.27, r_w = 0.3, I_s = 0.05;
  const double rpm_per = DG_RPM_PER_RAD_S; /* 30/π */
  dg_test_drive run = dg_test_start("graphs/power_split_hybrid.json", "graphs/scenarios/power_split.json");
  dg_sim *sim = run.sim;

  /* the loop's figures from the derivation above */
  const double Icc = 0.18 + 3.6 * 3.6 * I_s, Icr = -3.6 * 2.6 * I_s;
  const double Irr = 0.04 + (0.03 + 3.0 + 1400 * r_w * r_w) / (i_f * i_f) + 2.6 * 2.6 * I_s;
  const double det = Icc * Irr - Icr * Icr, J = det / Irr, b = (3.6 * Irr + 2.6 * Icr) / det;
  const double dTe = (0.2 * (-18.0 / 4200) + 0.8 * 10.0 / 1000) * rpm_per;
  const double wn = sqrt(b * 0.6 * rpm_per), zeta = (b * 0.24 * rpm_per - dTe / J) / (2 * wn);
  ck_assert_double_eq_tol(J, 0.8104, 1e-4);
  ck_assert_double_eq_tol(b, 4.3216, 1e-4);
  ck_assert_double_eq_tol(wn, 4.976, 1e-3);
  ck_assert_double_eq_tol(zeta, 0.987, 1e-3);

  double worst_willis = 0.0, worst_willis_rpm = 0.0;
  double settle[2] = {0.0, 0.0}, peak[2] = {0.0, 0.0}, worst_held[2] = {0.0, 0.0};
  double worst_t1 = 0.0, worst_static = 0.0, t1_at_end = 0.0, te_at_end = 0.0, peak_t1 = 0.0;
  int quadrant[4] = {0, 0, 0, 0}; /* MG1: (ω > 0, T < 0) generating, (ω < 0, T < 0) motoring,
                                     (ω < 0, T > 0) generating, (ω > 0, T > 0) motoring */
  const int steps = 20000;
  for (int k = 1; k <= steps; k++) {
    dg_test_step(sim, 1, 1e-3);
    double t = dg_sim_time(sim);
    /* Willis at every step: the shafts' speeds and the planetary's own */
    double ws = sig(sim, "mg1.omega"), wr = sig(sim, "mg2.omega"), wc = sig(sim, "engine.omega");
    double scale = fmax((S + R) * fabs(wc), fmax(S * fabs(ws), R * fabs(wr)));
    worst_willis = fmax(worst_willis, fabs(S * ws + R * wr - (S + R) * wc) / scale);
    double ns = sig(sim, "ps.sun_rpm"), nr = sig(sim, "ps.ring_rpm"),
           nc = sig(sim, "ps.carrier_rpm");
    worst_willis_rpm =
        fmax(worst_willis_rpm, fabs(S * ns + R * nr - (S + R) * nc) / (scale * rpm_per));
    ck_assert_double_eq_tol(nc, sig(sim, "engine.rpm"), 1e-9 * fabs(nc));

    /* the engine at its set point */
    int phase = t < 10.0 - 1e-9 ? 0 : 1;
    double set = phase == 0 ? 2000.0 : 2500.0, since = phase == 0 ? t : t - 10.0;
    double e = sig(sim, "engine.rpm") - set;
    if (fabs(e) > 1.0)
      settle[phase] = since;
    peak[phase] = fmax(peak[phase], e);
    double t1 = sig(sim, "mg1.torque"), te = sig(sim, "engine.torque");
    ck_assert_double_eq_tol(t1, sig(sim, "mg1_ctl.output"), 1e-12);
    peak_t1 = fmax(peak_t1, fabs(t1));
    quadrant[ws > 0 ? (t1 < 0 ? 0 : 3) : (t1 < 0 ? 1 : 2)]++;
    if (since >= 2.0)
      worst_held[phase] = fmax(worst_held[phase], fabs(e));
    if (since >= 3.0) {
      /* the reaction: −S/(S+R)·T_e plus MG1's inertia torque */
      double a = sig(sim, "body.accel");
      double alpha_s = -(R / S) * (i_f / r_w) * a;
      double hand = -S / (S + R) * te + I_s * alpha_s;
      worst_t1 = fmax(worst_t1, fabs(t1 - hand));
      worst_static = fmax(worst_static, fabs(t1 + S / (S + R) * te));
      /* the gear set's carrier torque reacts the engine */
      ck_assert_double_eq_tol(-sig(sim, "ps.carrier_torque"), te, 1e-3);
      t1_at_end = t1;
      te_at_end = te;
    }
  }
  ck_assert_double_eq_tol(dg_sim_time(sim), 20.0, 1e-9);
  dg_energy en;
  dg_sim_energy(sim, &en);
  double rel = fabs(en.balance_error) / en.work_in;
  printf("power split: Willis worst relative residual %.3g (shafts), %.3g (planetary rpm)\n",
         worst_willis, worst_willis_rpm);
  printf("power split: loop w_n %.4f rad/s, zeta %.4f; engine within 1 rpm of its set point "
         "from %.3f s after the start (predicted 1.465 s), %.3f s after the step (predicted "
         "1.621 s); overshoot %.2f rpm (predicted 86.71), %.2f rpm (predicted 71.19); worst "
         "|error| once settled %.4f rpm (2000), %.4f rpm (2500); peak |T_mg1| %.1f N*m\n",
         wn, zeta, settle[0], settle[1], peak[0], peak[1], worst_held[0], worst_held[1],
         peak_t1);
  printf("power split: at 20 s T_mg1 %.4f N*m, T_engine %.4f N*m, -30/108 T_engine %.4f N*m; "
         "worst |T_mg1 - (-S/(S+R) T_e + I_s alpha_s)| %.3g N*m, without the inertia term %.3f "
         "N*m\n",
         t1_at_end, te_at_end, -S / (S + R) * te_at_end, worst_t1, worst_static);
  printf("power split: MG1 steps per quadrant (w>0,T<0) %d, (w<0,T<0) %d, (w<0,T>0) %d, "
         "(w>0,T>0) %d; speed %.2f m/s at 20 s\n",
         quadrant[0], quadrant[1], quadrant[2], quadrant[3], sig(sim, "body.speed"));
  printf("power split: energy work in %.1f J, balance error %.3g J (%.3g of the work in)\n",
         en.work_in, en.balance_error, rel);

  ck_assert_double_le(worst_willis, 1e-12);
  ck_assert_double_le(worst_willis_rpm, 1e-12);
  /* the linear model's predictions, to what its linearisation leaves out
   * (the engine's torque curve bends, the car's load drifts) */
  ck_assert_double_eq_tol(settle[0], 1.465, 0.02);
  ck_assert_double_eq_tol(settle[1], 1.621, 0.02);
  ck_assert_double_eq_tol(peak[0], 86.71, 1.0);
  ck_assert_double_eq_tol(peak[1], 71.19, 1.0);
  ck_assert_double_le(worst_held[0], 1.0);
  ck_assert_double_le(worst_held[1], 1.0);
  ck_assert_double_lt(peak_t1, 100.0); /* the limits are never reached: a linear loop */
  ck_assert_double_le(worst_t1, 1e-3);
  for (int q = 0; q < 4; q++)
    ck_assert_int_gt(quadrant[q], 0);
  ck_assert_double_le(rel, 1e-6);
  dg_test_finish(&run);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("power_split");
  TCase *tc = tcase_create("power_split");
  tcase_add_test(tc, test_power_split);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
