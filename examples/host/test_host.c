/* The vehicle host (examples/host): drivegraph as the drivetrain of a
 * planar chassis with its own tyres. Acceptance tests of issue 20, each
 * checked against a reference computed another way: the all-in-drivegraph
 * run of the same car (the vehicle and wheel blocks, the body integrated
 * inside the drivetrain's RK4), or a hand calculation written out here.
 *
 *   launch_against_all_in   host-coupled launch vs all-in; the explicit,
 *                           one-step-late coupling beside it, refused by
 *                           dg_sim_check_coupling
 *   split_mu_*              open, locked and clutch-pack limited-slip
 *                           differentials on split µ: the split from the
 *                           port torques by hand
 *   turn_open_diff          a constant-radius turn: side speeds from the
 *                           track geometry, port torques balanced
 *   awd_split_mu            the AWD hub graph: front open, rear LSD
 *   tyre_and_loads          the host's own tyre law and load transfer */
#include "host.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT 1e-3
#define V100 (100.0 / 3.6)

/* A graph of the source tree with overrides ("block.param" = value). */
static dg_graph *load(const char *relative, int n, const dg_override *ov) {
  char *text = dg_test_read_source(relative);
  dg_error err;
  dg_graph *g = dg_graph_load_overrides(NULL, text, relative, n, ov, &err);
  free(text);
  ck_assert_msg(g != NULL, "%s: %s %s", relative, err.path, err.text);
  return g;
}

static void init(host *h, const host_car *car, const dg_graph *g, host_coupling c) {
  dg_error err;
  int rc = host_init(h, car, g, c, &err);
  ck_assert_msg(rc == DG_OK, "host_init: %s", err.text);
}

static void step(host *h) {
  int rc = host_step(h, DT);
  ck_assert_msg(rc == DG_OK, "host step at %g s: %s", dg_sim_time(h->sim),
                dg_sim_last_error(h->sim)->text);
}

static double sig(const dg_sim *sim, const char *name) { return dg_test_signal(sim, name); }

/* The time a speed trace crosses 100 km/h, linear within the step. */
static double crossing(double v0, double v1, long k) {
  return ((double)k + (V100 - v0) / (v1 - v0)) * DT;
}

/* ---- the launch: host-coupled vs all-in vs explicit ---------------------- */

/* The stiff tyre: magic formula B 12, C 1, D 2.5, E 0, so Fx ≈ 30·Fz·κ for
 * small slip, grip 2.5·Fz (a drag slick's numbers, so that the launch stays
 * on the tyre's stiff slope instead of spinning on its flat top, where a
 * tyre has no stiffness to couple), relaxation length 0.15 m, tread damping
 * ζ = 1: the same law in the wheel blocks of the all-in run and in the
 * host's tyre model (α = 0 on a straight line). */
static const char *const STIFF[4][2] = {{"B", "12"}, {"C", "1"}, {"D", "2.5"}, {"E", "0"}};

static void stiff_car(host_car *car) {
  host_car_sedan(car);
  for (int i = 0; i < HOST_WHEELS; i++) {
    car->tyre[i].B = 12.0;
    car->tyre[i].C = 1.0;
    car->tyre[i].D = 2.5;
    car->tyre[i].E = 0.0;
  }
}

#define LAUNCH_STEPS 7000
#define EARLY 500 /* steps: the first 0.5 s, where the tyre is stiffest */

/* The all-in run: graphs/sedan_rwd_automatic.json (its body: 1500 kg, cda
 * 0.65, rolling resistance 0.012, load transfer from the last step's
 * acceleration) with the stiff tyre on its four wheels, the host's driver:
 * gear 1 (drive), throttle 0 at the start (the engine at idle), full
 * throttle from the first step. */
static void all_in_launch(double *v, double *t100) {
  static char keys[16][64];
  dg_override ov[16];
  const char *wheels[4] = {"wheel_fl", "wheel_fr", "wheel_rl", "wheel_rr"};
  for (int i = 0; i < 16; i++) {
    snprintf(keys[i], sizeof keys[i], "%s.tyre.%s", wheels[i / 4], STIFF[i % 4][0]);
    ov[i] = (dg_override){keys[i], STIFF[i % 4][1]};
  }
  dg_graph *g = load("graphs/sedan_rwd_automatic.json", 16, ov);
  dg_sim *sim = dg_test_sim(g);
  dg_test_set_input(sim, "gear", 1);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  dg_test_set_input(sim, "throttle", 1.0);
  int id = dg_sim_signal_find(sim, "body.speed");
  v[0] = 0.0;
  *t100 = NAN;
  for (long k = 1; k <= LAUNCH_STEPS; k++) {
    dg_test_step(sim, 1, DT);
    v[k] = dg_sim_signal(sim, id);
    if (isnan(*t100) && v[k] >= V100)
      *t100 = crossing(v[k - 1], v[k], k - 1);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}

START_TEST(launch_against_all_in) {
  static double v_all[LAUNCH_STEPS + 1];
  double t_all;
  all_in_launch(v_all, &t_all);
  ck_assert(isfinite(t_all));

  host_car car;
  stiff_car(&car);
  /* hub coupling: the tyre inside the drivetrain's step */
  dg_graph *g = load("examples/host/sedan_rwd_hubs.json", 0, NULL);
  host h;
  init(&h, &car, g, HOST_HUB);
  h.throttle = 1.0;
  double t_hub = NAN, worst = 0.0, worst_t = 0.0, peak_hub = 0.0, v_prev = 0.0, fx_prev = 0.0;
  long rev_hub = 0;
  for (long k = 1; k <= LAUNCH_STEPS; k++) {
    step(&h);
    double v = h.s.vx;
    double e = fabs(v - v_all[k]) / fmax(v_all[k], 1.0);
    if (e > worst) {
      worst = e;
      worst_t = (double)k * DT;
    }
    double fx = h.w[HOST_RL].fx;
    if (k <= EARLY)
      peak_hub = fmax(peak_hub, fabs(fx));
    rev_hub += fx * fx_prev < 0.0;
    fx_prev = fx;
    if (isnan(t_hub) && v >= V100)
      t_hub = crossing(v_prev, v, k - 1);
    v_prev = v;
  }
  /* the wheel-spin time constant τ = J·|vx|/(R²·∂Fx/∂κ) at the rear hub,
   * J the drivetrain's effective inertia there (1/Y): below 1 ms (the
   * host's step) while the car is slower than J_fast below */
  const char *port[1] = {"hub_rl.hub"};
  double y;
  ck_assert_int_eq(dg_sim_boundary_ports(h.sim, 1, port, &y, NULL), DG_OK);
  double fz = car.mass * car.gravity * car.cg_to_front / car.wheelbase / 2.0;
  double kstiff = fz * 12.0 * 1.0 * 2.5, R = 0.32;
  double v_fast = R * R * kstiff * DT * y; /* τ < DT below this speed */
  printf("launch: rear hub J = %.3f kg m^2, wheel-spin time constant below 1 ms up to %.2f m/s\n",
         1.0 / y, v_fast);
  ck_assert_double_gt(v_fast, 3.0);
  host_free(&h);
  dg_graph_free(g);

  /* the explicit, one-step-late coupling */
  g = load("examples/host/sedan_rwd_explicit.json", 0, NULL);
  init(&h, &car, g, HOST_EXPLICIT);
  h.throttle = 1.0;
  double t_exp = NAN, worst_exp = 0.0, peak_exp = 0.0;
  long reversals = 0;
  fx_prev = 0.0;
  bool checked = false;
  dg_error err;
  v_prev = 0.0;
  for (long k = 1; k <= 4 * LAUNCH_STEPS && isnan(t_exp); k++) {
    step(&h);
    double v = h.s.vx, fx = h.w[HOST_RL].fx;
    if (k <= LAUNCH_STEPS)
      worst_exp = fmax(worst_exp, fabs(v - v_all[k]) / fmax(v_all[k], 1.0));
    if (k <= EARLY)
      peak_exp = fmax(peak_exp, fabs(fx));
    reversals += fx * fx_prev < 0.0;
    fx_prev = fx;
    if (!checked && v >= 1.0) {
      /* what the host asks before coupling so: at 1 m/s the tyre's
       * slope is c = R²·∂Fx/∂κ/|vx| */
      double c = R * R * h.w[HOST_RL].fz * 30.0 / v;
      int rc = dg_sim_check_coupling(h.sim, "hub_rl.out", c, DT, &err);
      printf("explicit: dg_sim_check_coupling at %.2f m/s: %s\n", v, err.text);
      ck_assert_int_eq(rc, DG_ERR_RANGE);
      ck_assert_msg(strstr(err.text, "an explicit coupling at hub_rl.out cannot be stable"),
                    "%s", err.text);
      checked = true;
    }
    if (isnan(t_exp) && v >= V100)
      t_exp = crossing(v_prev, v, k - 1);
    v_prev = v;
  }
  host_free(&h);
  dg_graph_free(g);

  printf("launch 0-100 km/h: all-in %.4f s, host (hub) %.4f s (%+.2e), explicit %.4f s (%+.2e)\n",
         t_all, t_hub, t_hub / t_all - 1.0, t_exp, t_exp / t_all - 1.0);
  printf("speed trace vs all-in: hub %.2e (worst at %.3f s), explicit %.2e\n", worst, worst_t,
         worst_exp);
  printf("rear-left tyre force over the first %.1f s: hub peak %.0f N, %ld sign reversals in the "
         "run; explicit peak %.0f N, %ld sign reversals\n",
         EARLY * DT, peak_hub, rev_hub, peak_exp, reversals);
  ck_assert(checked);
  ck_assert_double_lt(fabs(t_hub / t_all - 1.0), 0.005);
  ck_assert_double_lt(worst, 1e-3);
  /* the explicit coupling chatters at low speed: its force swings past
   * what the tyre carries when coupled inside the step, and reverses */
  ck_assert_double_gt(peak_exp, 1.5 * peak_hub);
  ck_assert_int_gt(reversals, 10 * (rev_hub + 1));
  ck_assert_double_gt(worst_exp, 10.0 * worst);
}
END_TEST

/* ---- split µ ------------------------------------------------------------ */

/* The sedan on split µ: left wheels on µ 0.3, right on 1 (the host's tyre,
 * D and Dy per wheel), full throttle from rest in first gear; the
 * differential's port torques over 0.1–0.9 s (before the first upshift),
 * by hand (ratio 1, split ½, the carrier's inertia taken out so that
 * nothing on the input shaft needs its acceleration): the sides' torques
 * sum to what the input gives, T_L + T_R = −T_in, and their difference is
 * twice the torque the lock or the clutch pack moves across,
 * T_L − T_R = 2·L (steps with a mode change left out). */
typedef struct split_result {
  double v;        /* speed at 0.9 s */
  double diff_max; /* largest |T_L − T_R| / (T_L + T_R) */
  double slipped;  /* LSD: steps slipping */
  double balance;  /* largest |T_L + T_R + T_in| / (T_L + T_R) */
} split_result;

static split_result split_mu(int n, const dg_override *ov, int kind) {
  dg_graph *g = load("examples/host/sedan_rwd_hubs.json", n, ov);
  host_car car;
  host_car_sedan(&car);
  car.tyre[HOST_FL].D = car.tyre[HOST_FL].Dy = 0.3;
  car.tyre[HOST_RL].D = car.tyre[HOST_RL].Dy = 0.3;
  host h;
  init(&h, &car, g, HOST_HUB);
  h.throttle = 1.0;
  const dg_sim *sim = h.sim;
  int iL = dg_sim_signal_find(sim, "diff.left.torque"), iR = dg_sim_signal_find(sim, "diff.right.torque");
  int iI = dg_sim_signal_find(sim, "diff.in.torque");
  int icap = dg_sim_signal_find(sim, "diff.capacity"), ilk = dg_sim_signal_find(sim, "diff.locked");
  int ilt = dg_sim_signal_find(sim, "diff.locking_torque");
  const double preload = 40.0, ramp = 0.15;
  split_result r = {0};
  for (long k = 1; k <= 900; k++) {
    long before = dg_sim_topology_changes(sim);
    step(&h);
    if (k < 100 || dg_sim_topology_changes(sim) != before)
      continue;
    double L = dg_sim_signal(sim, iL), R = dg_sim_signal(sim, iR), in = dg_sim_signal(sim, iI);
    double sum = L + R;
    double scale = fabs(L) + fabs(R) + fabs(in) + 1.0; /* N·m: round-off of the others */
    /* no carrier inertia: the sides balance the input exactly */
    ck_assert_double_eq_tol(sum, -in, 1e-9 * scale);
    r.balance = fmax(r.balance, fabs(sum + in) / scale);
    if (sum < 10.0)
      continue; /* the gearbox's shift interrupts the drive */
    r.diff_max = fmax(r.diff_max, fabs(L - R) / sum);
    if (kind == 0) { /* open: equal halves, to round-off */
      ck_assert_double_eq_tol(L, R, 1e-9 * sum);
      ck_assert_double_eq_tol(L, 0.5 * sum, 1e-9 * sum);
    } else if (kind == 1) {
      /* locked: the spool's multiplier is the difference (the block reads
       * it in its post_step, before the hubs' post_step holds a slip state
       * that RK4 carried past ±1: not round-off; 1e-3, the low-µ wheel
       * spinning up to the slip bound on the dry-road tyre, 3.7e-4 seen) */
      ck_assert_double_eq_tol(L - R, 2.0 * dg_sim_signal(sim, ilt), 1e-3 * sum);
    } else { /* LSD: bounded by its capacity, preload + ramp·|T_L + T_R| */
      double cap = preload + ramp * fabs(sum), cap_sig = dg_sim_signal(sim, icap);
      /* the block computes it in its post_step (see locked: to 1e-4) */
      ck_assert_double_eq_tol(cap_sig, cap, 1e-4 * sum);
      ck_assert_double_le(fabs(L - R), 2.0 * cap_sig * (1.0 + 1e-9) + 1e-9);
      if (dg_sim_signal(sim, ilk) == 0.0) { /* slipping: exactly the capacity */
        ck_assert_double_eq_tol(fabs(L - R), 2.0 * cap_sig, 1e-9 * sum);
        r.slipped++;
      }
    }
  }
  r.v = h.s.vx;
  host_free(&h);
  dg_graph_free(g);
  return r;
}

START_TEST(split_mu_differentials) {
  dg_override open[2] = {{"diff.inertia", "0"}, {"diff.kind", "open"}};
  dg_override locked[2] = {{"diff.inertia", "0"}, {"diff.kind", "locked"}};
  dg_override lsd[5] = {{"diff.inertia", "0"}, {"diff.kind", "clutch_lsd"}, {"diff.preload", "40"},
                        {"diff.power_ramp", "0.15"}, {"diff.coast_ramp", "0.1"}};
  split_result o = split_mu(2, open, 0), l = split_mu(2, locked, 1), s = split_mu(5, lsd, 2);
  printf("split mu at 0.9 s: open %.3f m/s (|TL-TR|/sum %.2e), locked %.3f m/s (%.3f), "
         "LSD %.3f m/s (%.3f, slipping %g steps); balance residuals %.1e %.1e %.1e\n",
         o.v, o.diff_max, l.v, l.diff_max, s.v, s.diff_max, s.slipped, o.balance, l.balance,
         s.balance);
  ck_assert_double_gt(l.diff_max, 0.3);   /* the high-µ side takes more */
  ck_assert_double_gt(s.slipped, 100.0);  /* the pack slips at its capacity */
  ck_assert_double_gt(s.diff_max, 0.1);
  ck_assert_double_lt(s.diff_max, l.diff_max);
  /* both get more drive to the road than the open one (the locked axle
   * spins both wheels at full throttle: the LSD, whose high-µ side keeps
   * near its peak slip, gets the most) */
  ck_assert_double_gt(s.v, o.v);
  ck_assert_double_gt(l.v, o.v);
}
END_TEST

/* ---- a constant-radius turn ---------------------------------------------- */

/* The sedan (open differential) driven on a circle to the left: a speed
 * controller on the throttle toward 12 m/s, a steering controller toward
 * the yaw rate v/R (R = 40 m). After 30 s the car turns steadily. The rear
 * wheels (not steered) at y = ±t/2 see contact velocities vx ∓ r·t/2, so a
 * rolling pair turns at the geometric ratio
 *   ω_outer/ω_inner = (vx + r t/2)/(vx − r t/2) = (R' + t/2)/(R' − t/2),
 * R' = vx/r the turn's radius at the rear axle, times (1 + κ_o)/(1 + κ_i)
 * for their slips; the open differential's side torques are equal and sum
 * to what its input gives (ratio 1). */
START_TEST(turn_open_diff) {
  dg_graph *g = load("examples/host/sedan_rwd_hubs.json", 0, NULL);
  host_car car;
  host_car_sedan(&car);
  host h;
  init(&h, &car, g, HOST_HUB);
  const double Rt = 40.0, v_target = 12.0, L = car.wheelbase, t = car.track_rear;
  double integ = 0.0, w_prev = 0.0;
  for (long k = 1; k <= 30000; k++) {
    /* PI on the speed, at most 0.3 throttle (a RWD car at full throttle
     * in a turn spins), integrating only while not saturated */
    double e = v_target - h.s.vx, th = 0.2 * e + 0.05 * integ;
    if (th > 0.0 && th < 0.3)
      integ += e * DT;
    h.throttle = th < 0.0 ? 0.0 : (th > 0.3 ? 0.3 : th);
    h.steer = L / Rt + 0.5 * (h.s.vx / Rt - h.s.r);
    w_prev = sig(h.sim, "diff.omega");
    step(&h);
  }
  const dg_sim *sim = h.sim;
  double vx = h.s.vx, r = h.s.r;
  double wi = sig(sim, "hub_rl.omega"), wo = sig(sim, "hub_rr.omega");
  double ki = sig(sim, "hub_rl.slip"), ko = sig(sim, "hub_rr.slip");
  double geom = (vx + r * t / 2.0) / (vx - r * t / 2.0);
  double Rr = vx / r;
  printf("turn: v %.4f m/s, yaw rate %.5f rad/s, radius %.3f m at the rear axle; "
         "outer/inner %.7f, geometry %.7f, slips %.2e %.2e\n",
         vx, r, Rr, wo / wi, geom, ko, ki);
  ck_assert_double_eq_tol(vx, v_target, 0.05);
  ck_assert_double_eq_tol(Rr, Rt, 4.0);
  /* to the tyre's slip */
  ck_assert_double_eq_tol(wo / wi, geom, 2.0 * fmax(fabs(ko), fabs(ki)));
  ck_assert_double_eq_tol(wo / wi, geom * (1.0 + ko) / (1.0 + ki), 1e-6);
  /* the open differential: equal sides, summing to the input (ratio 1,
   * carrier inertia 0.05 on the input shaft) */
  double TL = sig(sim, "diff.left.torque"), TR = sig(sim, "diff.right.torque");
  double Tin = sig(sim, "diff.in.torque"), alpha = (sig(sim, "diff.omega") - w_prev) / DT;
  printf("turn: diff.left.torque %.6f, diff.right.torque %.6f, diff.in.torque %.6f N m, "
         "residual %.2e N m (I alpha %.2e)\n",
         TL, TR, Tin, TL + TR + Tin, 0.05 * alpha);
  ck_assert_double_eq_tol(TL, TR, 1e-9 * fabs(TL));
  ck_assert_double_eq_tol(TL + TR, -(Tin + 0.05 * alpha), 1e-9 * fabs(Tin) + 1e-6);
  host_free(&h);
  dg_graph_free(g);
}
END_TEST

/* ---- AWD ------------------------------------------------------------------ */

/* examples/host/awd_lsd_hubs.json on split µ (left µ 0.3): the open front
 * differential splits equally, the rear clutch-pack LSD (preload 60, power
 * ramp 0.4) within its capacity; the car gets going (above 2 m/s: at full
 * throttle on split µ, with no driver steering against it, it then yaws
 * and spins out after ~2 s, 1.6 rad by 3 s with the rigid shifts' torque
 * interrupts, 2.3 rad through friction, where its forward speed in its
 * own frame falls through zero, so the speed it reached is checked). */
START_TEST(awd_split_mu) {
  dg_graph *g = load("examples/host/awd_lsd_hubs.json", 0, NULL);
  host_car car;
  host_car_awd(&car);
  car.tyre[HOST_FL].D = car.tyre[HOST_FL].Dy = 0.3;
  car.tyre[HOST_RL].D = car.tyre[HOST_RL].Dy = 0.3;
  host h;
  init(&h, &car, g, HOST_HUB);
  h.throttle = 1.0;
  double top = 0.0;
  for (long k = 1; k <= 3000; k++) {
    step(&h);
    top = fmax(top, h.s.vx);
    const dg_sim *sim = h.sim;
    double fl = sig(sim, "diff_f.left.torque"), fr = sig(sim, "diff_f.right.torque");
    double rl = sig(sim, "diff_r.left.torque"), rr = sig(sim, "diff_r.right.torque");
    ck_assert_double_eq_tol(fl, fr, 1e-9 * (fabs(fl) + fabs(fr)) + 1e-9);
    double cap = sig(sim, "diff_r.capacity");
    ck_assert_double_le(fabs(rl - rr), 2.0 * cap * (1.0 + 1e-9) + 1e-9);
  }
  printf("awd split mu: %.3f m/s at most, %.3f m/s after 3 s, yaw %.2f rad\n", top, h.s.vx,
         h.s.yaw);
  ck_assert_double_gt(top, 2.0);
  host_free(&h);
  dg_graph_free(g);
}
END_TEST

/* ---- the host's own tyre and loads --------------------------------------- */

START_TEST(tyre_and_loads) {
  host_tyre t;
  host_tyre_default(&t);
  t.damping_ratio = 0.0;
  double peak = host_tyre_peak(&t);
  /* pure slip: the magic formula at κ = 0.05, by hand */
  double x = 10.0 * 0.05, mf = sin(1.9 * atan(x - 0.97 * (x - atan(x))));
  ck_assert_double_eq_tol(host_tyre_fx(&t, peak, 0.05, 0.0, 4000.0, 0.0, 1.3, 0.32), 4000.0 * mf,
                          1e-9);
  /* combined: α = 0.05 rad reduces Fx by cos(atan(0.6)) = 1/sqrt(1.36) */
  ck_assert_double_eq_tol(host_tyre_fx(&t, peak, 0.05, 0.0, 4000.0, 0.05, 1.3, 0.32),
                          4000.0 * mf / sqrt(1.36), 1e-9);
  /* lateral: −Fz sin(1.3 atan(10 α)), reduced by cos(atan(10 κ)) */
  ck_assert_double_eq_tol(host_tyre_fy(&t, 0.05, 0.0, 4000.0), -4000.0 * sin(1.3 * atan(0.5)),
                          1e-9);
  ck_assert_double_eq_tol(host_tyre_fy(&t, 0.05, 0.1, 4000.0),
                          -4000.0 * sin(1.3 * atan(0.5)) / sqrt(2.0), 1e-9);
  /* the peak: C atan(φ) = π/2 at φ = tan(π/3.3) */
  ck_assert_double_eq_tol(peak, 1.0, 1e-12);
  /* loads: static 1500·g·(1.6, 1.2)/2.8 per axle; ax = 3 moves 1500·3·0.5/2.8;
   * ay = 2 moves 1500·2·0.5·(1.6/2.8)/1.55 at the front */
  host_car c;
  host_car_sedan(&c);
  double fz[4];
  host_loads(&c, 3.0, 2.0, fz);
  double W = 1500.0 * 9.80665, dx = 1500.0 * 3.0 * 0.5 / 2.8;
  double front = W * 1.6 / 2.8 - dx, dyf = 1500.0 * 2.0 * 0.5 * (1.6 / 2.8) / 1.55;
  ck_assert_double_eq_tol(fz[HOST_FL], front / 2.0 - dyf, 1e-9);
  ck_assert_double_eq_tol(fz[HOST_FR], front / 2.0 + dyf, 1e-9);
  ck_assert_double_eq_tol(fz[0] + fz[1] + fz[2] + fz[3], W, 1e-9);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("host");
  TCase *c = tcase_create("host");
  tcase_set_timeout(c, 600);
  tcase_add_test(c, tyre_and_loads);
  tcase_add_test(c, launch_against_all_in);
  tcase_add_test(c, split_mu_differentials);
  tcase_add_test(c, turn_open_diff);
  tcase_add_test(c, awd_split_mu);
  suite_add_tcase(s, c);
  return s;
}

int main(void) { return dg_test_run(suite()); }
