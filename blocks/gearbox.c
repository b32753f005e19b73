/* gearbox — a stepped gearbox: forward ratios, reverse, neutral, timed shifts
 * and a shift policy (manual, auto_rpm, shift_map or a user C callback).
 *
 * Ports: `in` is the input shaft (engine or clutch side), `out` the output
 * shaft (road side). The input-shaft inertia `inertia` sits on `in`.
 *
 * Kinematics, with gear g engaged:
 *   forward g = 1..N:  ω_in = r_g · ω_out        (r_g = ratios[g−1])
 *   reverse (−1):      ω_in = −reverse · ω_out  (the output turns backwards)
 *   neutral (0) and every shift in progress: `in` is a DOF of its own, no
 *   torque crosses the box (torque interrupt).
 * The signed ratio r of the engaged gear is the `ratio` signal (0 in neutral
 * and while shifting). By virtual work a torque T at `in` reaches `out` as
 * r·η·T when it drives and r·T/η when power flows back (the solver's
 * efficiency path factor, η = `efficiency`).
 *
 * Shifts. Any change of gear (into or out of neutral too) starts a shift
 * in pre_step: for `shift_time` seconds (rounded up to whole steps) the box
 * is decoupled, the signal "throttle_cut" is 1 (the engine driving the box
 * follows it by default and cuts its throttle; it is 0 the rest of the
 * time) and the policy is not consulted
 * (lock-out). The shift ends in the post_step of the step that reaches
 * shift_end: the new gear engages, a topology change, and the solver
 * projects the speeds conserving generalized momentum (a plastic impact
 * through the synchronizer; with a slipping clutch upstream only the
 * clutch's output side is pulled to the new ratio). The policy is next
 * asked at the following step, so it sees the re-engaged speeds; a request
 * made during the lock-out (a manual lever moved on) is honoured then, after
 * the gear being shifted into has engaged. shift_time = 0 shifts within the
 * step, without interrupt, cut or lock-out.
 *
 * Policies ("shift": { "mode": ... }), consulted once per step in pre_step:
 *   manual     the input `gear` rounded to the nearest integer
 *              (halves away from zero): −1 R, 0 neutral, 1..N. The input
 *              is a level: moving it on and back during a lock-out does
 *              nothing.
 *   auto_rpm   in forward gear g: upshift when the input speed reaches
 *              upshift_rpm (g < N), downshift when it falls to downshift_rpm
 *              (g > 1), one gear per shift. After an upshift the input speed
 *              drops by the ratio step to upshift_rpm·r_{g+1}/r_g, so check
 *              requires ratios decreasing and downshift_rpm <
 *              upshift_rpm·r_{g+1}/r_g for every step: the box cannot hunt.
 *   shift_map  the same with per-gear speeds, either as arrays
 *                "upshift_map":   [rpm in gear 1, ..., gear N]
 *                "downshift_map": [rpm in gear 1, ..., gear N]
 *              (the top gear's upshift and first gear's downshift entries
 *              are unused; write 0), or throttle-dependent as tables with one
 *              row of per-gear speeds per throttle breakpoint, bilinear in
 *              (gear, throttle) and clamped:
 *                "upshift_table": { "gear": [1, 2, ..., N],
 *                                   "throttle": [0, ..., 1],
 *                                   "rpm": [[gear 1 .. N] per throttle] }
 *              (one of upshift_map/upshift_table and one of
 *              downshift_map/downshift_table; the gear axis must be 1..N).
 *              check requires down_{g+1}(θ) < up_g(θ)·r_{g+1}/r_g at every
 *              throttle breakpoint of either table (the difference is
 *              piecewise linear in θ, so that covers every throttle).
 *   In the automatic modes the box drives in the forward gears and the gear
 *   input is only a reverse selector: −1 (<= −0.5) selects R while it is
 *   held, any other value means drive (so a scenario that leaves it at 0
 *   drives). Neutral is only reached through start_gear 0, and then the
 *   policy engages first at the first step.
 *   "auto_reverse": true (automatic modes, needs `reverse`): arcade-style
 *   reverse. At standstill (|vehicle_speed| < 0.1 m/s and |ω_out| < 1 rad/s)
 *   holding the brake (> 0.05) with the throttle released (<= 0.05) for
 *   `auto_reverse_delay` seconds selects R; in R, throttle (> 0.05) at
 *   standstill selects first. Driving backwards with the pedals is out of
 *   scope: in R the throttle does not mean "go backwards", it selects first
 *   (at standstill); the gear input still selects R while held at −1, and
 *   releasing it leaves R only through the throttle as above.
 *   A callback installed with dg_sim_set_shift_policy overrides the mode
 *   and auto_reverse. It sees a dg_shift_context (engine_rpm = input shaft
 *   rpm, output_rpm, current_gear, num_gears, vehicle_speed, throttle and brake from its
 *   inputs,
 *   time at the start of the step) once per step except during a shift's
 *   lock-out, and returns the gear it wants.
 * Gears out of range from the gear input or a callback are clamped to
 * −1..N (0..N without `reverse`); a NaN gear input keeps the current gear.
 *
 * start_gear: the gear engaged at t = 0, without a shift. Default: 1 in the
 * automatic modes; in manual mode the gear input at the first step is
 * engaged directly (without a shift) and the box is in neutral before it.
 * A manual box given a start_gear follows the gear input from the first
 * step like any other time: set the input to the start gear to keep it.
 *
 * Modes for validate: every gear (start gear first, then R, neutral, 1..N),
 * named "R", "neutral", "1", ...; a shift is kinematically neutral. */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

#include "internal.h" /* dg_error_set, dg_pointer_append: dg_sim_set_shift_policy's errors */

enum { PORT_IN, PORT_OUT };
enum { MODE_MANUAL, MODE_AUTO_RPM, MODE_SHIFT_MAP };
enum { SIG_OMEGA, SIG_RPM, SIG_OMEGA_OUT, SIG_GEAR, SIG_RATIO, SIG_SHIFTING, SIG_THROTTLE_CUT };
enum { IN_GEAR, IN_THROTTLE, IN_BRAKE, IN_VEHICLE_SPEED };

#define MAX_GEARS 24
/* Standstill for auto_reverse: below walking pace at the body and a slowly
 * turning output shaft (the body speed is 0 in graphs without a vehicle). */
#define STANDSTILL_SPEED 0.1 /* m/s */
#define STANDSTILL_OMEGA 1.0 /* rad/s */
/* A pedal counts as pressed above this (and released at or below it). */
#define PEDAL_ON 0.05
/* Times are sums of step sizes: a shift ends when the clock is within this
 * fraction of a step of its end, so round-off never adds a step. */
#define TIME_EPS 1e-6

typedef struct gearbox_shift {
  int mode;
  double upshift_rpm, downshift_rpm;
  bool has_upshift_rpm, has_downshift_rpm;
  dg_array upshift_map, downshift_map;
  dg_table2d upshift_table, downshift_table;
  bool auto_reverse;
  double auto_reverse_delay;
} gearbox_shift;

typedef struct gearbox_params {
  dg_array ratios;
  double reverse;
  bool has_reverse;
  double efficiency;
  double inertia;
  double shift_time;
  int start_gear;
  bool has_start_gear;
  gearbox_shift shift;
} gearbox_params;

typedef struct gearbox_data {
  int n;              /* forward gears */
  int lowest;         /* −1 with a reverse gear, else 0 */
  int start;          /* gear of mode 0 (init) */
  int gear;           /* engaged gear, or the target while shifting */
  bool shifting;
  bool adopt_input;   /* manual without start_gear: the first step takes the input */
  double shift_end;   /* s */
  double ratio;       /* signed ratio of the current topology; 0 = decoupled */
  bool reverse_holding; /* the auto_reverse condition holds ... */
  double reverse_since; /* ... since this time (s) */
  dg_shift_policy policy;
  void *user;
} gearbox_data;

static const char *const shift_modes[] = {"manual", "auto_rpm", "shift_map", NULL};

static const dg_port_def gearbox_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL,
     .doc = "input shaft (engine or clutch side)"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "output shaft (road side)"},
    {0},
};

static const dg_param_def gearbox_shift_table[] = {
    {.key = "mode", .kind = DG_PARAM_ENUM, .offset = offsetof(gearbox_shift, mode), .unit = "",
     .doc = "manual: gear input; auto_rpm: one up/down speed; shift_map: per-gear speeds",
     .def = MODE_MANUAL, .choices = shift_modes},
    {.key = "upshift_rpm", .kind = DG_PARAM_NUMBER, .offset = offsetof(gearbox_shift, upshift_rpm),
     .unit = "rpm", .doc = "auto_rpm: input speed at which the next gear up is selected",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(gearbox_shift, has_upshift_rpm)},
    {.key = "downshift_rpm", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(gearbox_shift, downshift_rpm), .unit = "rpm",
     .doc = "auto_rpm: input speed at which the next gear down is selected",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(gearbox_shift, has_downshift_rpm)},
    {.key = "upshift_map", .kind = DG_PARAM_ARRAY, .offset = offsetof(gearbox_shift, upshift_map),
     .unit = "rpm", .doc = "shift_map: upshift input speed per forward gear (top gear unused)",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .min_len = 1, .max_len = MAX_GEARS},
    {.key = "downshift_map", .kind = DG_PARAM_ARRAY,
     .offset = offsetof(gearbox_shift, downshift_map), .unit = "rpm",
     .doc = "shift_map: downshift input speed per forward gear (first gear unused)",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .min_len = 1, .max_len = MAX_GEARS},
    {.key = "upshift_table", .kind = DG_PARAM_TABLE2D,
     .offset = offsetof(gearbox_shift, upshift_table), .unit = "rpm",
     .doc = "shift_map: upshift speed by gear and throttle: { \"gear\": [1..N], \"throttle\": "
            "[...], \"rpm\": [[per gear] per throttle] }",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .axis = {"gear", "throttle", "rpm"}},
    {.key = "downshift_table", .kind = DG_PARAM_TABLE2D,
     .offset = offsetof(gearbox_shift, downshift_table), .unit = "rpm",
     .doc = "shift_map: downshift speed by gear and throttle, shaped like upshift_table",
     .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0, .axis = {"gear", "throttle", "rpm"}},
    {.key = "auto_reverse", .kind = DG_PARAM_BOOL, .offset = offsetof(gearbox_shift, auto_reverse),
     .doc = "automatic modes: brake at standstill selects R, throttle at standstill selects 1",
     .def = 0, .flags = DG_P_DYNAMICS},
    DG_PARAM_NUM(gearbox_shift, auto_reverse_delay, "auto_reverse_delay", "s", 0.5,
                 DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "auto_reverse: how long the brake must be held at standstill"),
    {0},
};

static const dg_param_def gearbox_params_table[] = {
    {.key = "ratios", .kind = DG_PARAM_ARRAY, .offset = offsetof(gearbox_params, ratios),
     .unit = "", .doc = "forward ratios in/out, first gear first", .required = true,
     .flags = DG_P_MIN_EXCL, .min = 0, .min_len = 1, .max_len = MAX_GEARS},
    {.key = "reverse", .kind = DG_PARAM_NUMBER, .offset = offsetof(gearbox_params, reverse),
     .unit = "", .doc = "reverse ratio magnitude (w_in = -reverse w_out); none without it",
     .flags = DG_P_MIN_EXCL, .min = 0, .present = DG_PRESENT(gearbox_params, has_reverse)},
    DG_PARAM_NUM(gearbox_params, efficiency, "efficiency", "", 1.0,
                 DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, 0, 1,
                 "power efficiency of the engaged gear"),
    DG_PARAM_NUM(gearbox_params, inertia, "inertia", "kg*m^2", 0.02, DG_P_MIN | DG_P_INERTIA, 0, 0,
                 "input-shaft inertia (turns with `in`, also in neutral)"),
    DG_PARAM_NUM(gearbox_params, shift_time, "shift_time", "s", 0.2, DG_P_MIN | DG_P_DYNAMICS, 0, 0,
                 "torque interrupt and lock-out of a shift"),
    {.key = "start_gear", .kind = DG_PARAM_INTEGER, .offset = offsetof(gearbox_params, start_gear),
     .unit = "", .doc = "gear at t = 0 (-1 R, 0 neutral); default 1, manual: the gear input",
     .flags = DG_P_MIN, .min = -1, .present = DG_PRESENT(gearbox_params, has_start_gear)},
    {.key = "shift", .kind = DG_PARAM_OBJECT, .offset = offsetof(gearbox_params, shift),
     .doc = "shift policy: { \"mode\": \"manual\" | \"auto_rpm\" | \"shift_map\", ... }",
     .fields = gearbox_shift_table},
    {0},
};

static const dg_signal_def gearbox_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "input shaft speed", .port = PORT_IN, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "input shaft speed", .port = PORT_IN,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "omega_out", .unit = "rad/s", .doc = "output shaft speed", .port = PORT_OUT,
     .scale = 1},
    {.name = "gear", .unit = "", .doc = "engaged gear (-1 R, 0 neutral), the target while shifting",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_INTEGER},
    {.name = "ratio", .unit = "", .doc = "signed ratio in/out engaged; 0 in neutral and shifting",
     .port = DG_SIGNAL_HOOK},
    {.name = "shifting", .unit = "", .doc = "1 during a shift's torque interrupt, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "throttle_cut", .unit = "",
     .doc = "1 while the engine driving the box must cut its throttle (a shift), else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {0},
};

static const dg_input_def gearbox_inputs[] = {
    {.name = "gear", .unit = "",
     .doc = "selected gear (manual: -1 R, 0 neutral, 1..N; automatic: -1 selects R)",
     .source = "gear", .flags = DG_INPUT_INTEGER},
    {.name = "throttle", .unit = "", .doc = "throttle 0..1 the shift map and auto_reverse read",
     .source = "throttle", .flags = DG_P_MIN | DG_P_MAX, .min = -1, .max = 1},
    {.name = "brake", .unit = "", .doc = "brake 0..1 auto_reverse reads", .source = "brake",
     .flags = DG_P_MIN | DG_P_MAX, .min = 0, .max = 1},
    {.name = "vehicle_speed", .unit = "m/s",
     .doc = "vehicle speed for auto_reverse and the shift callback: by default the speed of the "
            "graph's vehicle",
     .source = "@vehicle.speed"},
    {0},
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static double gear_ratio(const gearbox_params *p, int gear) {
  if (gear > 0)
    return p->ratios.v[gear - 1];
  return gear < 0 ? -p->reverse : 0.0;
}

static int clamp_gear(const gearbox_data *d, int gear) {
  return gear < d->lowest ? d->lowest : gear > d->n ? d->n : gear;
}

/* Shift speed of forward gear `gear` from a per-gear array or a table. */
static double shift_rpm(const dg_array *map, const dg_table2d *table, int gear, double throttle) {
  if (map->n > 0)
    return map->v[gear - 1];
  return dg_table2d_eval(table, gear, throttle);
}

static double upshift_rpm(const gearbox_shift *s, int gear, double throttle) {
  if (s->mode == MODE_AUTO_RPM)
    return s->upshift_rpm;
  return shift_rpm(&s->upshift_map, &s->upshift_table, gear, throttle);
}

static double downshift_rpm(const gearbox_shift *s, int gear, double throttle) {
  if (s->mode == MODE_AUTO_RPM)
    return s->downshift_rpm;
  return shift_rpm(&s->downshift_map, &s->downshift_table, gear, throttle);
}

/* ------------------------------------------------------------------------ */
/* check                                                                    */

static void check_unused(const gearbox_shift *s, dg_check *chk, bool given, const char *key,
                         int owner) {
  if (given && s->mode != owner)
    dg_check_error(chk, key, "only used by mode \"%s\" (mode is \"%s\")", shift_modes[owner],
                   shift_modes[s->mode]);
}

/* One direction of a shift map: exactly one of the array and the table,
 * shaped for n gears. Returns true when it is usable. */
static bool check_map(dg_check *chk, const char *dir, const dg_array *map, const dg_table2d *table,
                      int n) {
  char path[64];
  if (map->n > 0 && table->nx > 0) {
    snprintf(path, sizeof path, "shift/%s_table", dir);
    dg_check_error(chk, path, "give only one of %s_map and %s_table", dir, dir);
    return false;
  }
  if (map->n == 0 && table->nx == 0) {
    dg_check_error(chk, "shift", "mode \"shift_map\" needs %s_map or %s_table", dir, dir);
    return false;
  }
  if (map->n > 0) {
    if (map->n == n)
      return true;
    snprintf(path, sizeof path, "shift/%s_map", dir);
    dg_check_error(chk, path, "must have %d %s, one per forward gear (got %d)", n,
                   n == 1 ? "element" : "elements", map->n);
    return false;
  }
  if (table->nx != n) {
    snprintf(path, sizeof path, "shift/%s_table/gear", dir);
    dg_check_error(chk, path, "must list the %d forward gears 1..%d (got %d values)", n, n,
                   table->nx);
    return false;
  }
  bool ok = true;
  for (int i = 0; i < n; i++) {
    if (table->x[i] == i + 1)
      continue;
    snprintf(path, sizeof path, "shift/%s_table/gear/%d", dir, i);
    dg_check_error(chk, path, "must be %d (the forward gears 1..%d in order) (got %g)", i + 1, n,
                   table->x[i]);
    ok = false;
  }
  return ok;
}

/* down_{g+1}(θ) < up_g(θ)·r_{g+1}/r_g at every throttle breakpoint. */
static void check_map_hysteresis(const gearbox_params *p, dg_check *chk) {
  const gearbox_shift *s = &p->shift;
  const double *r = p->ratios.v;
  const dg_table2d *tabs[2] = {&s->upshift_table, &s->downshift_table};
  for (int g = 1; g < p->ratios.n; g++) {
    double step = r[g] / r[g - 1];
    bool bad = false;
    for (int k = 0; k < 2 && !bad; k++) {
      int nt = tabs[k]->nx > 0 ? tabs[k]->ny : 1;
      for (int i = 0; i < nt && !bad; i++) {
        double th = tabs[k]->nx > 0 ? tabs[k]->y[i] : 0.0;
        double up = upshift_rpm(s, g, th), down = downshift_rpm(s, g + 1, th);
        double bound = up * step;
        if (down < bound)
          continue;
        bad = true;
        if (s->downshift_map.n > 0 && s->upshift_map.n > 0) {
          char path[64];
          snprintf(path, sizeof path, "shift/downshift_map/%d", g);
          dg_check_error(chk, path,
                         "must be < %g (gear %d's upshift %g rpm x %g/%g) so that gear %d does "
                         "not shift straight back down (got %g)",
                         bound, g, up, r[g], r[g - 1], g + 1, down);
        } else {
          dg_check_error(chk,
                         s->downshift_map.n > 0 ? "shift/upshift_table" : "shift/downshift_table",
                         "at throttle %g: gear %d's downshift speed %g rpm must be < %g (gear %d's "
                         "upshift %g rpm x %g/%g) so that it does not shift straight back down",
                         th, g + 1, down, bound, g, up, r[g], r[g - 1]);
        }
      }
    }
  }
}

static void gearbox_check(const void *params, dg_check *chk) {
  const gearbox_params *p = params;
  const gearbox_shift *s = &p->shift;
  int n = p->ratios.n, lowest = p->has_reverse ? -1 : 0;
  if (p->has_start_gear && (p->start_gear < lowest || p->start_gear > n)) {
    if (p->start_gear == -1)
      dg_check_error(chk, "start_gear", "must be between 0 and %d without a reverse ratio (got -1)",
                     n);
    else
      dg_check_error(chk, "start_gear", "must be between %d and %d (got %d)", lowest, n,
                     p->start_gear);
  }
  check_unused(s, chk, s->has_upshift_rpm, "shift/upshift_rpm", MODE_AUTO_RPM);
  check_unused(s, chk, s->has_downshift_rpm, "shift/downshift_rpm", MODE_AUTO_RPM);
  check_unused(s, chk, s->upshift_map.n > 0, "shift/upshift_map", MODE_SHIFT_MAP);
  check_unused(s, chk, s->downshift_map.n > 0, "shift/downshift_map", MODE_SHIFT_MAP);
  check_unused(s, chk, s->upshift_table.nx > 0, "shift/upshift_table", MODE_SHIFT_MAP);
  check_unused(s, chk, s->downshift_table.nx > 0, "shift/downshift_table", MODE_SHIFT_MAP);
  if (s->mode == MODE_MANUAL) {
    if (s->auto_reverse)
      dg_check_error(chk, "shift/auto_reverse",
                     "only used by modes \"auto_rpm\" and \"shift_map\" (mode is \"manual\")");
    return;
  }
  if (s->auto_reverse && !p->has_reverse)
    dg_check_error(chk, "shift/auto_reverse", "needs a reverse gear (give \"reverse\")");
  /* Automatic shifting needs the ratios to fall from gear to gear. */
  bool decreasing = true;
  for (int i = 1; i < n; i++) {
    if (p->ratios.v[i] < p->ratios.v[i - 1])
      continue;
    char path[32];
    snprintf(path, sizeof path, "ratios/%d", i);
    dg_check_error(chk, path, "must be < ratios/%d (%g) for automatic shifting (got %g)", i - 1,
                   p->ratios.v[i - 1], p->ratios.v[i]);
    decreasing = false;
  }
  if (s->mode == MODE_AUTO_RPM) {
    if (!s->has_upshift_rpm)
      dg_check_error(chk, "shift/upshift_rpm",
                     "missing required number (rpm) for mode \"auto_rpm\"");
    if (!s->has_downshift_rpm)
      dg_check_error(chk, "shift/downshift_rpm",
                     "missing required number (rpm) for mode \"auto_rpm\"");
    if (!s->has_upshift_rpm || !s->has_downshift_rpm)
      return;
    if (s->downshift_rpm >= s->upshift_rpm) {
      dg_check_error(chk, "shift/downshift_rpm", "must be < upshift_rpm (%g) (got %g)",
                     s->upshift_rpm, s->downshift_rpm);
      return;
    }
    if (!decreasing || n < 2)
      return;
    /* the largest ratio step (smallest r_{g+1}/r_g) binds; g is 0-based */
    const double *r = p->ratios.v;
    int g = 1;
    for (int k = 2; k < n; k++)
      if (r[k] / r[k - 1] < r[g] / r[g - 1])
        g = k;
    double bound = s->upshift_rpm * r[g] / r[g - 1];
    if (s->downshift_rpm >= bound)
      dg_check_error(chk, "shift/downshift_rpm",
                     "must be < %g (upshift_rpm %g x %g/%g, the step from gear %d to %d) so that "
                     "an upshift does not shift straight back down (got %g)",
                     bound, s->upshift_rpm, r[g], r[g - 1], g, g + 1, s->downshift_rpm);
    return;
  }
  bool up_ok = check_map(chk, "upshift", &s->upshift_map, &s->upshift_table, n);
  bool down_ok = check_map(chk, "downshift", &s->downshift_map, &s->downshift_table, n);
  if (up_ok && down_ok && decreasing)
    check_map_hysteresis(p, chk);
}

/* ------------------------------------------------------------------------ */
/* Hooks                                                                    */

static int gearbox_init(dg_block *self, dg_init *init) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  bool manual = p->shift.mode == MODE_MANUAL;
  d->n = p->ratios.n;
  d->lowest = p->has_reverse ? -1 : 0;
  d->start = p->has_start_gear ? p->start_gear : manual ? 0 : 1;
  d->adopt_input = manual && !p->has_start_gear;
  d->gear = d->start;
  d->shifting = false;
  d->ratio = gear_ratio(p, d->start);
  (void)init;
  return 0;
}

/* Mode 0 is the start gear, then the other gears from the lowest up. */
static int mode_gear(const gearbox_data *d, int mode) {
  int k = 0;
  if (mode == 0)
    return d->start;
  for (int g = d->lowest; g <= d->n; g++)
    if (g != d->start && ++k == mode)
      return g;
  return d->start;
}

static int gearbox_mode_count(const dg_block *self) {
  const gearbox_data *d = self->data;
  return d->n + 1 - d->lowest;
}

static void gearbox_mode_set(dg_block *self, int mode) {
  gearbox_data *d = self->data;
  d->gear = mode_gear(d, mode);
  d->shifting = false;
  d->ratio = gear_ratio(self->params, d->gear);
}

static const char *gearbox_mode_name(const dg_block *self, int mode) {
  static const char *const names[MAX_GEARS] = {"1",  "2",  "3",  "4",  "5",  "6",  "7",  "8",
                                               "9",  "10", "11", "12", "13", "14", "15", "16",
                                               "17", "18", "19", "20", "21", "22", "23", "24"};
  int g = mode_gear(self->data, mode);
  return g < 0 ? "R" : g == 0 ? "neutral" : names[g - 1];
}

static int manual_gear(const gearbox_data *d, double input) {
  if (!isfinite(input))
    return d->gear;
  return (int)lround(fmin(fmax(input, d->lowest), d->n));
}

static bool at_standstill(const dg_block *self, const dg_ctx *ctx) {
  const gearbox_data *d = self->data;
  (void)d;
  return fabs(dg_block_input(ctx, self, IN_VEHICLE_SPEED)) < STANDSTILL_SPEED &&
         fabs(dg_port_speed(ctx, self, PORT_OUT)) < STANDSTILL_OMEGA;
}

/* auto_rpm and shift_map. */
static int automatic_gear(dg_block *self, const dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  const gearbox_shift *s = &p->shift;
  gearbox_data *d = self->data;
  double throttle = dg_block_input(ctx, self, IN_THROTTLE);
  double brake = dg_block_input(ctx, self, IN_BRAKE);
  int g = d->gear;
  if (d->lowest < 0 && dg_block_input(ctx, self, IN_GEAR) <= -0.5) {
    d->reverse_holding = false;
    return -1; /* the selector's R wins over everything while it is held */
  }
  if (s->auto_reverse) {
    bool still = at_standstill(self, ctx);
    if (g < 0) {
      d->reverse_holding = false;
      return still && throttle > PEDAL_ON ? 1 : -1;
    }
    if (still && brake > PEDAL_ON && !(throttle > PEDAL_ON)) {
      /* held from reverse_since to the end of this step segment (a time
       * span, not a sum of segment lengths: an event may cut a segment
       * short after its pre_step) */
      if (!d->reverse_holding) {
        d->reverse_holding = true;
        d->reverse_since = ctx->t;
      }
      double held = ctx->t + ctx->dt - d->reverse_since;
      if (held >= s->auto_reverse_delay - TIME_EPS * ctx->dt) {
        d->reverse_holding = false;
        return -1;
      }
    } else {
      d->reverse_holding = false;
    }
  }
  if (g <= 0)
    return 1;
  double th = fmin(fmax(throttle, 0.0), 1.0);
  double rpm = dg_port_speed(ctx, self, PORT_IN) * DG_RPM_PER_RAD_S;
  if (g < d->n && rpm >= upshift_rpm(s, g, th))
    return g + 1;
  if (g > 1 && rpm <= downshift_rpm(s, g, th))
    return g - 1;
  return g;
}

static int wanted_gear(dg_block *self, const dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  if (d->policy) {
    const dg_shift_context sc = {
        .time = ctx->t,
        .engine_rpm = dg_port_speed(ctx, self, PORT_IN) * DG_RPM_PER_RAD_S,
        .output_rpm = dg_port_speed(ctx, self, PORT_OUT) * DG_RPM_PER_RAD_S,
        .current_gear = d->gear,
        .num_gears = d->n,
        .vehicle_speed = dg_block_input(ctx, self, IN_VEHICLE_SPEED),
        .throttle = dg_block_input(ctx, self, IN_THROTTLE),
        .brake = dg_block_input(ctx, self, IN_BRAKE),
    };
    return clamp_gear(d, d->policy(&sc, d->user));
  }
  if (p->shift.mode == MODE_MANUAL)
    return manual_gear(d, dg_block_input(ctx, self, IN_GEAR));
  return automatic_gear(self, ctx);
}

static void gearbox_pre_step(dg_block *self, dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  double before = d->ratio;
  if (d->shifting)
    return; /* lock-out: the policy waits */
  if (d->adopt_input) {
    d->adopt_input = false;
    d->gear = manual_gear(d, dg_block_input(ctx, self, IN_GEAR));
  }
  int want = wanted_gear(self, ctx);
  if (want != d->gear) {
    d->gear = want;
    if (p->shift_time > 0.0) {
      d->shifting = true;
      d->shift_end = ctx->t + p->shift_time;
    }
  }
  d->ratio = d->shifting ? 0.0 : gear_ratio(p, d->gear);
  if (d->ratio != before)
    dg_ctx_request_topology(ctx);
}

/* The shift ends at the end of the step that reaches shift_end, so the
 * projection onto the new gear happens before the policy next looks at the
 * speeds (in pre_step they would still be the decoupled ones). */
static void gearbox_post_step(dg_block *self, dg_ctx *ctx) {
  gearbox_data *d = self->data;
  if (!d->shifting || ctx->t < d->shift_end - TIME_EPS * ctx->dt)
    return;
  d->shifting = false;
  d->ratio = gear_ratio(self->params, d->gear);
  if (d->ratio != 0.0)
    dg_ctx_request_topology(ctx);
}

/* The start: a manual box without start_gear engages its lever's gear (at
 * the first step it would, with an impact); an automatic without
 * start_gear takes the gear its policy settles in at the output speed the
 * road gives (the lowest it would not upshift from), or R on the selector.
 * The engine then checks its speed. */
static void gearbox_start(dg_block *self, dg_ctx *ctx, int phase) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  if (phase != DG_START_PROPOSE || d->shifting)
    return;
  int want = d->gear;
  if (d->adopt_input) {
    d->adopt_input = false;
    want = manual_gear(d, dg_block_input(ctx, self, IN_GEAR));
  } else if (p->shift.mode != MODE_MANUAL && !p->has_start_gear && !d->policy) {
    if (d->lowest < 0 && dg_block_input(ctx, self, IN_GEAR) <= -0.5) {
      want = -1;
    } else {
      double th = fmin(fmax(dg_block_input(ctx, self, IN_THROTTLE), 0.0), 1.0);
      double w_out = fabs(dg_port_speed(ctx, self, PORT_OUT));
      want = 1;
      while (want < d->n &&
             w_out * fabs(gear_ratio(p, want)) * DG_RPM_PER_RAD_S >= upshift_rpm(&p->shift, want, th))
        want++;
    }
  }
  if (want != d->gear) {
    d->gear = want;
    d->ratio = gear_ratio(p, want);
    dg_ctx_request_topology(ctx);
  }
}

static void gearbox_state_upstream(dg_block *self, dg_topo *topo) {
  const gearbox_params *p = self->params;
  const gearbox_data *d = self->data;
  if (d->ratio != 0.0)
    dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, d->ratio, p->efficiency);
  else
    dg_topo_dof(topo, self, PORT_IN);
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

static double gearbox_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  (void)ctx;
  const gearbox_data *d = self->data;
  switch (index) {
  case SIG_GEAR:
    return d->gear;
  case SIG_RATIO:
    return d->ratio;
  case SIG_SHIFTING:
  case SIG_THROTTLE_CUT:
    return d->shifting ? 1.0 : 0.0;
  default:
    return 0.0;
  }
}

/* The gear input takes the box's gears (-1 only with a reverse ratio);
 * the gear signal is one of them. */
static void gearbox_gears(const void *params, dg_range *r) {
  const gearbox_params *p = params;
  r->min = p->has_reverse ? -1 : 0;
  r->max = p->ratios.n;
}

static void gearbox_input_range(const void *params, int input, dg_range *r) {
  if (input == IN_GEAR)
    gearbox_gears(params, r);
}

static void gearbox_signal_range(const void *params, int signal, dg_range *r) {
  if (signal == SIG_GEAR)
    gearbox_gears(params, r);
}

const dg_block_class dg_block_gearbox = {
    .abi = DG_BLOCK_ABI,
    .type = "gearbox",
    .doc = "Stepped gearbox: forward ratios, reverse, neutral, efficiency, input-shaft inertia; "
           "shifts interrupt torque for shift_time and cut the throttle; shift policy manual, "
           "auto_rpm, shift_map or a C callback (dg_sim_set_shift_policy).",
    .ports = gearbox_ports,
    .params = gearbox_params_table,
    .params_size = sizeof(gearbox_params),
    .signals = gearbox_signals,
    .inputs = gearbox_inputs,
    .data_size = sizeof(gearbox_data),
    .check = gearbox_check,
    .init = gearbox_init,
    .mode_count = gearbox_mode_count,
    .mode_set = gearbox_mode_set,
    .mode_name = gearbox_mode_name,
    .pre_step = gearbox_pre_step,
    .state_upstream = gearbox_state_upstream,
    .post_step = gearbox_post_step,
    .signal = gearbox_signal,
    .start = gearbox_start,
    .input_range = gearbox_input_range,
    .signal_range = gearbox_signal_range,
};

/* ------------------------------------------------------------------------ */
/* Public API: the shift callback                                           */

int dg_sim_set_shift_policy(dg_sim *sim, const char *gearbox_id, dg_shift_policy policy,
                            void *user, dg_error *err) {
  dg_error_clear(err);
  if (!sim) {
    dg_error_set(err, DG_ERR_USAGE, NULL, NULL, "no simulation given");
    return DG_ERR_USAGE;
  }
  const char *file = dg_graph_file(dg_sim_graph(sim));
  if (!gearbox_id) {
    dg_error_set(err, DG_ERR_USAGE, file, NULL, "no gearbox id given");
    return DG_ERR_USAGE;
  }
  dg_block *b = dg_sim_block(sim, gearbox_id);
  if (!b) {
    dg_error_set(err, DG_ERR_UNKNOWN, file, NULL, "no block \"%s\" in the graph", gearbox_id);
    return DG_ERR_UNKNOWN;
  }
  if (b->klass != &dg_block_gearbox) {
    char path[DG_ERROR_PATH_LEN];
    dg_pointer_append(path, sizeof path, "/blocks", gearbox_id);
    dg_error_set(err, DG_ERR_USAGE, file, path, "block \"%s\" (type \"%s\") is not a gearbox",
                 gearbox_id, b->klass->type);
    return DG_ERR_USAGE;
  }
  gearbox_data *d = b->data;
  d->policy = policy;
  d->user = user;
  return DG_OK;
}
