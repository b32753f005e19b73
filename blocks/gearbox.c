/* gearbox — a stepped gearbox: forward ratios, reverse, neutral, timed shifts
 * and a shift policy (manual, auto_rpm, shift_map or a user C callback).
 *
 * Ports: `in` is the input shaft (engine or clutch side), `out` the output
 * shaft (road side). The input-shaft inertia `inertia` sits on `in`.
 *
 * Kinematics, with gear g engaged:
 *   forward g = 1..N:  ω_in = r_g · ω_out        (r_g = ratios[g−1])
 *   reverse (−1):      ω_in = −reverse · ω_out  (the output turns backwards)
 *   neutral (0), a rigid shift's interrupt and a friction shift's inertia
 *   phase: `in` is a DOF of its own, no gear couples it to `out`.
 * The signed ratio r of the engaged gear is the `ratio` signal (0 in neutral
 * and while no gear is engaged during a shift). The engaged gear is a lossy
 * mesh (η = `efficiency`): it loses (1 − η) of the power it passes, either
 * way, so a torque T at `in` reaches `out` as r·η·T when it drives and r·T/η
 * when power flows back.
 *
 * Shifts. Any change of gear (into or out of neutral too) starts a shift
 * in pre_step; the policy is not consulted again until the shift is over
 * (lock-out). How the new ratio takes over is "shift": { "engagement": ... }:
 *
 * "friction" (the default): the ratio changes through a friction element
 * of capacity C (kinetic, N·m at the input shaft), as in a real box. The
 * element ("shift": { "element": ... }) is
 *   "clutch"        a powershift (clutch-to-clutch) automatic's oncoming
 *                   clutch; the default of the automatic modes;
 *   "synchronizer"  a manual box's synchronizer, which brings the input
 *                   shaft to the new gear's speed before the dog teeth
 *                   engage; the default of mode "manual".
 * C = shift.capacity (N·m), or capacity_factor · T_ref with T_ref the input
 * `torque_reference`, by default the peak full-throttle torque of the
 * graph's engine (its signal max_torque); capacity_factor defaults to 1.5
 * for a clutch and 0.5 for a synchronizer. A graph without an engine gives
 * capacity (or binds torque_reference); a friction shift without either
 * stops the simulation with a message saying so.
 *
 * The oncoming element couples `in` to `out` at the new ratio r_n (the
 * offgoing gear's ratio is r_o). Its slip is Δ = ω_in − r_n·ω_out and its
 * direction s = sign(Δ) is fixed at the shift's start (s = +1: the input
 * must slow down, an upshift in forward drive). While it slips it
 * transmits T = C(t)·s from `in` toward `out`: −T at `in` and T·r_n·f at
 * `out`, f = η when that torque drives the output (s·r_n·ω_out >= 0) and
 * 1/η when the output drives it, so the slip loses T·Δ and the mesh
 * (1 − η) of the power it passes; both are booked to the gearbox's work.
 * A clutch's capacity rises linearly from 0 at the shift's start to C at
 * torque_phase_time (0.1 s by default) and stays there; a synchronizer's is
 * C from the start.
 *
 *   Torque phase (clutch, from an engaged gear): the offgoing gear stays
 *     engaged, as a lossy tie ω_in − r_o·ω_out = 0 whose multiplier λ is the
 *     torque it applies at `in`, while the oncoming clutch takes torque
 *     over. The offgoing element lets go (a mode change without a jump) as
 *     soon as it no longer holds the input away from the new gear's speed,
 *     λ·(−s) <= 0: in a power-on upshift, where it holds the engine back
 *     (λ < 0), that is where the oncoming clutch carries the whole input
 *     torque, located inside the step (event); in a power-off upshift or a
 *     power-on downshift it lets go at once, so the input moves toward the
 *     new speed on its own torque (decided at the request, by hold_check
 *     with the tie's λ at the segment's start; likewise where another
 *     element's switch turns λ at a segment's start); at the latest when the capacity
 *     ramp ends (an element with C below the input torque: the engine
 *     flares until its torque falls below C — its rev limiter, a converter
 *     unlocking).
 *   Inertia phase: `in` is a DOF of its own; the oncoming element slips
 *     (the input speed moves toward r_n·ω_out at the rate its torques give,
 *     e.g. (T_in − C)/J_in for the engine side of an upshift) until Δ
 *     reaches 0, located inside the step (event), where the new gear
 *     engages: ω_in = r_n·ω_out, with nothing left to project (no impact
 *     loss). A clutch holds it as a lossy tie (multiplier λ at `in`) up to
 *     its capacity until the lock-out ends, and at least to the next
 *     segment's start: one that must carry more (|λ| > C(t), at the
 *     segment's start after sync — hold_check — or located inside a
 *     segment, event g0 = C(t) − |λ|) lets go there and slips on, the
 *     way λ pushed (s = −sign λ), as a real clutch too weak for the input
 *     torque does (a power-on downshift with T_in > C flares past the new
 *     speed). At the lock-out's end the tie becomes the gear's link (the
 *     same constraint: a mode change without a jump); the gear is then in
 *     (the clutch at full pressure). A synchronizer's dog teeth engage
 *     rigidly at sync. A synchronizer's shift starts here: the
 *     old gear is pulled out at once (a manual box cannot shift under load).
 *     An element too weak for the torque it meets (a synchronizer against
 *     an engine still coupled by its clutch) slips until that torque
 *     changes: the shift then shows as shift_phase 2 with slip_rpm, and the
 *     gearbox's work books the heat. A manual lever moved while the
 *     synchronizer slips is followed at once (into neutral, or toward the
 *     new gear); the lock-out holds otherwise.
 * A shift whose slip is already zero (at rest) engages at once. The shift
 * lasts at least shift_time: after the engagement the box stays "shifting"
 * (lock-out) until shift_time has passed since the request. The ramp's end
 * and the output's speed passing zero (which swaps f) end step segments
 * too, so the torques are smooth within each segment.
 * The signal throttle_cut (1 cuts the throttle of the engine driving the
 * box, which follows it by default; else 0): a synchronizer's shift cuts
 * during the whole shift (the driver lifts, an automated manual's control
 * unit cuts the engine and an in-line motor until the gear is in), except
 * with shift_time = 0, which, as with "rigid", asks for no cut (a
 * dual-clutch box's preselection on its open side while the other clutch
 * drives); a clutch's only with "cut_throttle": true, and then during an
 * inertia phase with s = +1 (the input must slow down: torque reduction of
 * an upshift).
 *
 * "rigid": version 1's shift, kept for graphs that want it: for
 * shift_time seconds (rounded up to whole steps) the box is decoupled, the
 * signal throttle_cut is 1, and the shift ends in the post_step of the step
 * that reaches shift_end: the new gear engages, a topology change, and the
 * solver projects the speeds conserving generalized momentum (a plastic
 * impact; with a slipping clutch upstream only the clutch's output side is
 * pulled to the new ratio), booked as impact loss.
 *
 * Either way a shift into neutral just decouples for shift_time (the cut
 * and lock-out of a rigid shift). The policy is next asked at the step
 * after the shift is over, so it sees the engaged speeds; a request made
 * during the lock-out (a manual lever moved on) is honoured then.
 * shift_time = 0 with "rigid" shifts within the step, without interrupt,
 * cut or lock-out; with "friction" it only removes the minimum duration.
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
 * named "R", "neutral", "1", ...; a shift is kinematically neutral (its
 * inertia phase, a rigid interrupt) or the gear it leaves (its torque
 * phase: the same constraint as a tie). */
#include <drivegraph/block.h>
#include <math.h>
#include <stdio.h>

#include "internal.h" /* dgp_error_set, dgp_pointer_append: dg_sim_set_shift_policy's errors */

enum { PORT_IN, PORT_OUT };
enum { MODE_MANUAL, MODE_AUTO_RPM, MODE_SHIFT_MAP };
enum { ENGAGE_FRICTION, ENGAGE_RIGID };
enum { ELEMENT_CLUTCH, ELEMENT_SYNCHRONIZER };
enum {
  SIG_OMEGA,
  SIG_RPM,
  SIG_OMEGA_OUT,
  SIG_GEAR,
  SIG_RATIO,
  SIG_SHIFTING,
  SIG_THROTTLE_CUT,
  SIG_PHASE,
  SIG_SLIP_RPM,
  SIG_ELEMENT_TORQUE
};
enum { IN_GEAR, IN_THROTTLE, IN_BRAKE, IN_VEHICLE_SPEED, IN_TORQUE_REFERENCE };
/* Phases of a shift (the signal shift_phase). */
enum {
  PHASE_NONE,      /* no shift */
  PHASE_TORQUE,    /* friction: offgoing gear tied, oncoming element taking torque over */
  PHASE_INERTIA,   /* friction: decoupled, the oncoming element slipping toward sync */
  PHASE_DECOUPLED, /* rigid (or into neutral): decoupled until shift_end */
  PHASE_HOLD       /* friction: the new gear engaged, lock-out until shift_end */
};

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
/* Default capacity_factor (C = factor × torque_reference) per element. */
#define CLUTCH_CAPACITY_FACTOR 1.5
#define SYNCHRONIZER_CAPACITY_FACTOR 0.5

typedef struct gearbox_shift {
  int mode;
  double upshift_rpm, downshift_rpm;
  bool has_upshift_rpm, has_downshift_rpm;
  dg_array upshift_map, downshift_map;
  dg_table2d upshift_table, downshift_table;
  bool auto_reverse;
  double auto_reverse_delay;
  int engagement;          /* ENGAGE_* */
  int element;             /* ELEMENT_*; default by mode (has_element) */
  bool has_element;
  double capacity;         /* N·m at the input shaft */
  bool has_capacity;
  double capacity_factor;  /* × torque_reference; default by element */
  bool has_capacity_factor;
  double torque_phase_time; /* s: the clutch's capacity ramp */
  bool has_torque_phase_time;
  bool cut_throttle;
  bool has_cut_throttle;
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
  double shift_end;   /* s: the lock-out's end (request + shift_time) */
  double ratio;       /* signed ratio of the link of the current topology; 0 = none */
  /* A friction shift (PHASE_TORQUE, PHASE_INERTIA): */
  int element;        /* ELEMENT_*, resolved from the mode */
  int phase;          /* PHASE_* */
  int dir;            /* s: sign of the oncoming slip ω_in − r_n·ω_out at the start */
  int out_dir;        /* sign of ω_out at the segment's start (0: at rest): picks f */
  double r_new;       /* r_n, the oncoming gear's signed ratio */
  double r_off;       /* r_o, the offgoing gear's (torque phase: the tie) */
  int off_tie;        /* the offgoing tie in the torque phase, else −1 */
  double cap;         /* C, N·m, fixed at the shift's start */
  double t0;          /* s: the shift's start */
  double ramp_end;    /* s: the clutch's capacity reaches C (t0 for a synchronizer) */
  bool element_holds; /* PHASE_HOLD after sync: the clutch holds (a tie, up to its capacity) */
  bool just_engaged;  /* ... since this post_step: kept to the next segment's hold_check */
  int on_tie;         /* that tie, else −1 */
  bool ramp_done;
  bool reverse_holding; /* the auto_reverse condition holds ... */
  double reverse_since; /* ... since this time (s) */
  dg_shift_policy policy;
  void *user;
} gearbox_data;

static const char *const shift_modes[] = {"manual", "auto_rpm", "shift_map", NULL};
static const char *const engagements[] = {"friction", "rigid", NULL};
static const char *const elements[] = {"clutch", "synchronizer", NULL};

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
    DG_NUMBER(gearbox_shift, auto_reverse_delay, .unit = "s", .def = 0.5,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "auto_reverse: how long the brake must be held at standstill"),
    {.key = "engagement", .kind = DG_PARAM_ENUM, .offset = offsetof(gearbox_shift, engagement),
     .unit = "",
     .doc = "friction: the new ratio takes over through a slipping element (no jump); rigid: "
            "decoupled for shift_time, then engaged at once (a plastic impact)",
     .def = ENGAGE_FRICTION, .choices = engagements, .flags = DG_P_DYNAMICS},
    {.key = "element", .kind = DG_PARAM_ENUM, .offset = offsetof(gearbox_shift, element),
     .unit = "",
     .doc = "friction: clutch (powershift: torque phase, then inertia phase; default of the "
            "automatic modes) or synchronizer (neutral, sync, engage; default of manual)",
     .def = ELEMENT_CLUTCH, .choices = elements, .flags = DG_P_DYNAMICS,
     .present = DG_PRESENT(gearbox_shift, has_element)},
    {.key = "capacity", .kind = DG_PARAM_NUMBER, .offset = offsetof(gearbox_shift, capacity),
     .unit = "N*m",
     .doc = "friction: the shift element's slipping torque at the input shaft (instead of "
            "capacity_factor)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(gearbox_shift, has_capacity)},
    {.key = "capacity_factor", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(gearbox_shift, capacity_factor), .unit = "",
     .doc = "friction: capacity as this x the input torque_reference (the engine's peak torque); "
            "default 1.5 (clutch), 0.5 (synchronizer)",
     .flags = DG_P_MIN_EXCL | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(gearbox_shift, has_capacity_factor)},
    {.key = "torque_phase_time", .kind = DG_PARAM_NUMBER,
     .offset = offsetof(gearbox_shift, torque_phase_time), .unit = "s",
     .doc = "clutch: the oncoming clutch's capacity rises from 0 to capacity over this time "
            "(default 0.1 s)",
     .def = 0.1, .flags = DG_P_MIN | DG_P_DYNAMICS, .min = 0,
     .present = DG_PRESENT(gearbox_shift, has_torque_phase_time)},
    {.key = "cut_throttle", .kind = DG_PARAM_BOOL, .offset = offsetof(gearbox_shift, cut_throttle),
     .doc = "clutch: throttle_cut during an inertia phase that slows the input (torque "
            "reduction of an upshift)",
     .def = 0, .flags = DG_P_DYNAMICS, .present = DG_PRESENT(gearbox_shift, has_cut_throttle)},
    {0},
};

static const dg_param_def gearbox_params_table[] = {
    {.key = "ratios", .kind = DG_PARAM_ARRAY, .offset = offsetof(gearbox_params, ratios),
     .unit = "", .doc = "forward ratios in/out, first gear first", .required = true,
     .flags = DG_P_MIN_EXCL, .min = 0, .min_len = 1, .max_len = MAX_GEARS},
    {.key = "reverse", .kind = DG_PARAM_NUMBER, .offset = offsetof(gearbox_params, reverse),
     .unit = "", .doc = "reverse ratio magnitude (w_in = -reverse w_out); none without it",
     .flags = DG_P_MIN_EXCL, .min = 0, .present = DG_PRESENT(gearbox_params, has_reverse)},
    DG_NUMBER(gearbox_params, efficiency, .unit = "", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_MAX | DG_P_DYNAMICS, .max = 1,
              .doc = "power efficiency of the engaged gear"),
    DG_NUMBER(gearbox_params, inertia, .unit = "kg*m^2", .def = 0.02,
              .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "input-shaft inertia (turns with `in`, also in neutral)"),
    DG_NUMBER(gearbox_params, shift_time, .unit = "s", .def = 0.2,
              .flags = DG_P_MIN | DG_P_DYNAMICS,
              .doc = "shortest shift (lock-out); with engagement rigid, its torque interrupt"),
    {.key = "start_gear", .kind = DG_PARAM_INTEGER, .offset = offsetof(gearbox_params, start_gear),
     .unit = "", .doc = "gear at t = 0 (-1 R, 0 neutral); default 1, manual: the gear input",
     .flags = DG_P_MIN, .min = -1, .present = DG_PRESENT(gearbox_params, has_start_gear)},
    {.key = "shift", .kind = DG_PARAM_OBJECT, .offset = offsetof(gearbox_params, shift),
     .doc = "shift policy and engagement: { \"mode\": \"manual\" | \"auto_rpm\" | \"shift_map\", "
            "\"engagement\": \"friction\" | \"rigid\", ... }",
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
    {.name = "ratio", .unit = "",
     .doc = "signed ratio in/out of the engaged gear; 0 while none is (neutral, a shift's "
            "inertia phase or interrupt)",
     .port = DG_SIGNAL_HOOK},
    {.name = "shifting", .unit = "", .doc = "1 from a shift's request to its end, else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "throttle_cut", .unit = "",
     .doc = "1 while the engine driving the box must cut its throttle (a shift), else 0",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_BOOL},
    {.name = "shift_phase", .unit = "",
     .doc = "0 none, 1 torque phase, 2 inertia phase (slipping), 3 decoupled (rigid, neutral), "
            "4 engaged, lock-out until shift_time",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_INTEGER},
    {.name = "slip_rpm", .unit = "rpm",
     .doc = "the shift element's slip w_in - r_new w_out while it slips, else 0",
     .port = DG_SIGNAL_HOOK},
    {.name = "element_torque", .unit = "N*m",
     .doc = "torque the slipping shift element passes from in toward out, at the input shaft",
     .port = DG_SIGNAL_HOOK},
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
    {.name = "torque_reference", .unit = "N*m",
     .doc = "torque the shift's capacity_factor multiplies: by default the peak torque of the "
            "graph's engine (0: none)",
     .source = "@engine.max_torque", .def = 0, .flags = DG_P_MIN, .min = 0},
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

/* The shift element (mode "manual": a synchronizer, else a clutch). */
static int shift_element(const gearbox_shift *s) {
  if (s->has_element)
    return s->element;
  return s->mode == MODE_MANUAL ? ELEMENT_SYNCHRONIZER : ELEMENT_CLUTCH;
}

/* The keys of a friction shift: none with "rigid", the clutch's only with
 * a clutch, capacity or capacity_factor. */
static void check_engagement(const gearbox_shift *s, dg_check *chk) {
  static const char *const friction_keys[] = {"element", "capacity", "capacity_factor",
                                              "torque_phase_time", "cut_throttle"};
  const bool given[] = {s->has_element, s->has_capacity, s->has_capacity_factor,
                        s->has_torque_phase_time, s->has_cut_throttle};
  char path[64];
  if (s->engagement == ENGAGE_RIGID) {
    for (int i = 0; i < 5; i++) {
      if (!given[i])
        continue;
      snprintf(path, sizeof path, "shift/%s", friction_keys[i]);
      dg_check_error(chk, path, "only used with engagement \"friction\" (engagement is \"rigid\")");
    }
    return;
  }
  if (s->has_capacity && s->has_capacity_factor)
    dg_check_error(chk, "shift/capacity_factor", "give only one of capacity, capacity_factor");
  if (shift_element(s) != ELEMENT_SYNCHRONIZER)
    return;
  for (int i = 3; i < 5; i++) {
    if (!given[i])
      continue;
    snprintf(path, sizeof path, "shift/%s", friction_keys[i]);
    dg_check_error(chk, path, "only used with element \"clutch\" (element is \"synchronizer\")");
  }
}

static void gearbox_check(const void *params, dg_check *chk) {
  const gearbox_params *p = params;
  const gearbox_shift *s = &p->shift;
  int n = p->ratios.n, lowest = p->has_reverse ? -1 : 0;
  check_engagement(s, chk);
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
  d->element = shift_element(&p->shift);
  d->phase = PHASE_NONE;
  d->off_tie = -1;
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
  d->phase = PHASE_NONE;
  d->element_holds = d->just_engaged = false;
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
  return (int)lround(dg_fmin(dg_fmax(input, d->lowest), d->n));
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
  double th = dg_fmin(dg_fmax(throttle, 0.0), 1.0);
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

/* ------------------------------------------------------------------------ */
/* Friction shifts                                                          */

/* "Zero" for the oncoming slip and the output speed: dg_slip_zero_tol's
 * relative and absolute parts on the speeds it compares. */
static double zero_tol(double a, double b) { return 1e-10 * (fabs(a) + fabs(b)) + 1e-12; }

/* The oncoming slip Δ = ω_in − r_n·ω_out. */
static double oncoming_slip(const gearbox_data *d, const dg_ctx *ctx, const dg_block *self) {
  return dg_port_speed(ctx, self, PORT_IN) - d->r_new * dg_port_speed(ctx, self, PORT_OUT);
}

static bool slipping(const gearbox_data *d) {
  return d->phase == PHASE_TORQUE || d->phase == PHASE_INERTIA;
}

/* The oncoming element's capacity at time t of its shift: a clutch's rises
 * linearly over torque_phase_time. */
static double ramp_capacity(const gearbox_data *d, double t) {
  if (d->ramp_done || !(d->ramp_end > d->t0))
    return d->cap;
  double x = (t - d->t0) / (d->ramp_end - d->t0);
  return d->cap * (x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x);
}

/* The torque it passes while slipping (0 outside a friction shift's
 * torque and inertia phases). */
static double element_capacity(const gearbox_data *d, double t) {
  return slipping(d) ? ramp_capacity(d, t) : 0.0;
}

/* Torque phase: the offgoing element lets go where it no longer holds the
 * input away from the new speed, λ·(−s) <= 0 (λ, the tie's torque at in,
 * to round-off of the capacity). */
static bool offgoing_lets_go(const gearbox_data *d, dg_ctx *ctx) {
  return -d->dir * dg_ctx_tie_force(ctx, d->off_tie) <= 1e-9 * d->cap;
}

/* ω_out's sign at the segment's start, 0 within round-off of rest. */
static int output_direction(const dg_block *self, const dg_ctx *ctx) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  return fabs(w) <= zero_tol(w, 0.0) ? 0 : dg_sign(w);
}

/* The oncoming element's torque at `out` per N·m at `in`: r_n·η when it
 * drives the output (or the output is at rest), r_n/η when the output
 * drives it. */
static double out_factor(const gearbox_params *p, const gearbox_data *d) {
  double eta = p->efficiency;
  return d->r_new * (d->dir * dg_sign(d->r_new) * d->out_dir >= 0 ? eta : 1.0 / eta);
}

/* The shift element's capacity C for a shift starting now; NaN when the
 * graph gives neither capacity nor a torque_reference (no engine). */
static double shift_capacity(const dg_block *self, const dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  const gearbox_shift *s = &p->shift;
  const gearbox_data *d = self->data;
  if (s->has_capacity)
    return s->capacity;
  double factor = s->has_capacity_factor                   ? s->capacity_factor
                  : d->element == ELEMENT_SYNCHRONIZER ? SYNCHRONIZER_CAPACITY_FACTOR
                                                           : CLUTCH_CAPACITY_FACTOR;
  double ref = dg_block_input(ctx, self, IN_TORQUE_REFERENCE);
  return ref > 0.0 && isfinite(ref) ? factor * ref : NAN;
}

static const char *gear_text(int g, char *buf, size_t n) {
  if (g < 0)
    snprintf(buf, n, "R");
  else if (g == 0)
    snprintf(buf, n, "neutral");
  else
    snprintf(buf, n, "%d", g);
  return buf;
}

/* Starts a friction shift from gear `from` to d->gear (not neutral). */
static void start_friction_shift(dg_block *self, dg_ctx *ctx, int from) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  d->r_new = gear_ratio(p, d->gear);
  d->r_off = gear_ratio(p, from);
  d->t0 = ctx->t;
  double slip = oncoming_slip(d, ctx, self);
  if (fabs(slip) <= dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT)) {
    /* already at the new gear's speed (at rest): engaged at once */
    d->phase = PHASE_HOLD;
    d->ratio = d->r_new;
    return;
  }
  d->cap = shift_capacity(self, ctx);
  if (!(d->cap > 0.0)) {
    char a[16], b[16];
    dg_ctx_fail(ctx, self,
                "the shift from %s to %s through friction needs the element's capacity: give "
                "\"shift\": { \"capacity\": N*m } (there is no engine whose peak torque "
                "capacity_factor could scale), bind the input torque_reference, or ask for "
                "\"engagement\": \"rigid\"",
                gear_text(from, a, sizeof a), gear_text(d->gear, b, sizeof b));
    d->cap = 0.0;
  }
  d->dir = dg_sign(slip);
  d->out_dir = output_direction(self, ctx);
  d->ramp_end = d->element == ELEMENT_CLUTCH ? d->t0 + p->shift.torque_phase_time : d->t0;
  d->ramp_done = !(d->ramp_end > d->t0);
  d->ratio = 0.0;
  if (d->element == ELEMENT_CLUTCH && from != 0) {
    d->phase = PHASE_TORQUE;
  } else {
    d->phase = PHASE_INERTIA;
  }
}

/* The shift is over: the policy may act again at the next pre_step. A
 * clutch that held the new gear as a tie hands it to the gear's link (the
 * same constraint: nothing moves). */
static void end_shift(gearbox_data *d, dg_ctx *ctx) {
  d->shifting = false;
  d->phase = PHASE_NONE;
  if (d->element_holds) {
    d->element_holds = false;
    dg_ctx_request_topology(ctx);
  }
}

static void gearbox_pre_step(dg_block *self, dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  gearbox_data *d = self->data;
  double before = d->ratio;
  if (d->shifting) {
    /* lock-out: the policy waits, except for a lever moved while the
     * synchronizer still slips (the old gear is already out) */
    if (d->phase == PHASE_INERTIA && d->element == ELEMENT_SYNCHRONIZER) {
      int want = wanted_gear(self, ctx);
      if (want != d->gear) {
        d->gear = want;
        if (want == 0) {
          d->phase = PHASE_DECOUPLED; /* neutral: decoupled to shift_end */
          return;
        }
        start_friction_shift(self, ctx, 0);
        if (d->phase == PHASE_HOLD)
          dg_ctx_request_topology(ctx);
      }
    }
    /* a slipping element's efficiency direction follows the output's (an
     * event ends a segment where it turns) */
    if (slipping(d))
      d->out_dir = output_direction(self, ctx);
    return;
  }
  if (d->adopt_input) {
    d->adopt_input = false;
    d->gear = manual_gear(d, dg_block_input(ctx, self, IN_GEAR));
  }
  int want = wanted_gear(self, ctx);
  if (want != d->gear) {
    int from = d->gear;
    d->gear = want;
    if (p->shift.engagement == ENGAGE_FRICTION && want != 0) {
      d->shifting = true;
      d->shift_end = ctx->t + p->shift_time;
      start_friction_shift(self, ctx, from);
      if (d->phase == PHASE_HOLD && !(p->shift_time > 0.0))
        end_shift(d, ctx);
      dg_ctx_request_topology(ctx); /* the tie or the decoupling, or the new link */
      return;
    }
    if (p->shift_time > 0.0) {
      d->shifting = true;
      d->phase = PHASE_DECOUPLED;
      d->shift_end = ctx->t + p->shift_time;
    }
  }
  d->ratio = d->shifting ? 0.0 : gear_ratio(p, d->gear);
  if (d->ratio != before)
    dg_ctx_request_topology(ctx);
}

/* A time reached at a segment's end: the located event's time, or a sum
 * of step sizes, to round-off. */
static bool reached(const dg_ctx *ctx, double when) {
  return ctx->t >= when - (TIME_EPS * ctx->dt + 1e-12 * fabs(when));
}

/* Friction: the offgoing element lets go, the oncoming one engages at
 * sync (both located inside the step by the events below). */
static void friction_post_step(dg_block *self, dg_ctx *ctx) {
  gearbox_data *d = self->data;
  if (!d->ramp_done && reached(ctx, d->ramp_end))
    d->ramp_done = true;
  if (d->phase == PHASE_TORQUE) {
    /* let go where it no longer holds the input away from the new speed,
     * or at the ramp's end */
    if (offgoing_lets_go(d, ctx) || d->ramp_done) {
      d->phase = PHASE_INERTIA;
      dg_ctx_request_topology(ctx);
    }
    return;
  }
  if (d->phase != PHASE_INERTIA)
    return;
  if (oncoming_slip(d, ctx, self) * d->dir <= dg_slip_zero_tol(ctx, self, PORT_IN, PORT_OUT)) {
    d->phase = PHASE_HOLD;
    d->ratio = d->r_new;
    /* a clutch holds the new gear up to its capacity until the lock-out
     * ends (and at least to the next segment's start, where hold_check
     * reads what it must carry); a synchronizer's dog teeth are rigid */
    d->element_holds = d->element == ELEMENT_CLUTCH;
    d->just_engaged = d->element_holds;
    dg_ctx_request_topology(ctx);
    return;
  }
}

/* The engaged clutch lets go where it must carry more than its capacity:
 * it slips on the way the torque it held pushed the input (λ, at `in`,
 * resists the slip: s = −sign λ), with its capacity. */
static bool oncoming_overloaded(const gearbox_data *d, dg_ctx *ctx) {
  double lambda = dg_ctx_tie_force(ctx, d->on_tie);
  return fabs(lambda) > ramp_capacity(d, ctx->t);
}

static void oncoming_lets_go(dg_block *self, gearbox_data *d, dg_ctx *ctx) {
  double lambda = dg_ctx_tie_force(ctx, d->on_tie);
  d->phase = PHASE_INERTIA;
  d->dir = -dg_sign(lambda);
  d->out_dir = output_direction(self, ctx);
  d->ratio = 0.0;
  d->element_holds = d->just_engaged = false;
  dg_ctx_request_topology(ctx);
}

/* A rigid shift ends at the end of the step that reaches shift_end, so the
 * projection onto the new gear happens before the policy next looks at the
 * speeds (in pre_step they would still be the decoupled ones); a friction
 * shift's lock-out ends likewise. */
static void gearbox_post_step(dg_block *self, dg_ctx *ctx) {
  gearbox_data *d = self->data;
  if (!d->shifting)
    return;
  if (slipping(d)) {
    friction_post_step(self, ctx);
  } else if (d->element_holds) {
    d->just_engaged = false;
    if (oncoming_overloaded(d, ctx)) {
      oncoming_lets_go(self, d, ctx);
      return;
    }
  }
  if (d->phase == PHASE_HOLD) {
    if (!d->just_engaged && ctx->t >= d->shift_end - TIME_EPS * ctx->dt)
      end_shift(d, ctx);
    return;
  }
  if (d->phase != PHASE_DECOUPLED || ctx->t < d->shift_end - TIME_EPS * ctx->dt)
    return;
  end_shift(d, ctx);
  d->ratio = gear_ratio(self->params, d->gear);
  if (d->ratio != 0.0)
    dg_ctx_request_topology(ctx);
}

/* The oncoming element's friction torque (friction shift, slipping). */
static void gearbox_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const gearbox_params *p = self->params;
  const gearbox_data *d = self->data;
  if (!slipping(d))
    return;
  double t = element_capacity(d, ctx->t) * d->dir;
  dg_port_add_torque(ctx, self, PORT_IN, -t);
  dg_port_add_torque(ctx, self, PORT_OUT, t * out_factor(p, d));
}

/* Holds decided at a segment's start (hold_check), with the tie forces of
 * the mode just built: the offgoing element of a torque phase that holds
 * the input toward the new speed (a power-off upshift, a power-on
 * downshift: at the shift's request; or after another element switched)
 * lets go there; a clutch just engaged at sync, or holding the new gear
 * through the lock-out, lets go where it must carry more than its
 * capacity. Only releases. */
static void gearbox_hold_check(dg_block *self, dg_ctx *ctx) {
  gearbox_data *d = self->data;
  if (d->phase == PHASE_TORQUE && offgoing_lets_go(d, ctx)) {
    d->phase = PHASE_INERTIA;
    dg_ctx_request_topology(ctx);
  } else if (d->phase == PHASE_HOLD && d->element_holds && oncoming_overloaded(d, ctx)) {
    oncoming_lets_go(self, d, ctx);
  }
}

/* Switching conditions of a friction shift, located inside the step:
 *   g0 = λ·(−s) in the torque phase: the offgoing element's hold on the
 *        input, away from the new speed, reaching zero (it lets go);
 *   g1 = t_next − t: the torque phase's first reading of λ, then the end of
 *        the clutch's capacity ramp (its kink; the offgoing element lets go
 *        there at the latest);
 *   g2 = Δ·s in the inertia phase: the oncoming slip reaching zero (sync,
 *        the new gear engages);
 *   g3 = ω_out·sign(ω_out at the start), or tol − |ω_out| from rest: the
 *        output turning, which swaps the efficiency factor f. */
static int gearbox_event_values(const dg_block *self, dg_ctx *ctx, double *g) {
  const gearbox_data *d = self->data;
  g[0] = g[1] = g[2] = g[3] = 1.0;
  double t = ctx->t;
  if (d->phase == PHASE_HOLD && d->element_holds) {
    g[0] = ramp_capacity(d, t) - fabs(dg_ctx_tie_force(ctx, d->on_tie));
    if (!d->ramp_done)
      g[1] = d->ramp_end - t;
    return 1;
  }
  if (!slipping(d))
    return 0;
  if (d->phase == PHASE_TORQUE)
    g[0] = -d->dir * dg_ctx_tie_force(ctx, d->off_tie);
  else
    g[2] = oncoming_slip(d, ctx, self) * d->dir;
  if (!d->ramp_done)
    g[1] = d->ramp_end - t;
  double w = dg_port_speed(ctx, self, PORT_OUT);
  g[3] = d->out_dir != 0 ? w * d->out_dir : zero_tol(w, 0.0) - fabs(w);
  return 1;
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
      double th = dg_fmin(dg_fmax(dg_block_input(ctx, self, IN_THROTTLE), 0.0), 1.0);
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
  gearbox_data *d = self->data;
  d->off_tie = d->on_tie = -1;
  if (d->phase == PHASE_HOLD && d->element_holds) {
    /* the engaged clutch: the new gear as a tie, the same lossy mesh as
     * its link, whose multiplier is the torque it holds at in */
    static const int ports[2] = {PORT_IN, PORT_OUT};
    const double coef[2] = {1.0, -d->r_new}, coef_a[2] = {1.0, 0.0};
    dg_topo_dof(topo, self, PORT_IN);
    d->on_tie = dg_topo_tie_lossy(topo, self, 2, ports, coef, coef_a, p->efficiency);
  } else if (d->ratio != 0.0) {
    dg_topo_ratio(topo, self, PORT_IN, PORT_OUT, d->ratio, p->efficiency);
  } else {
    dg_topo_dof(topo, self, PORT_IN);
    if (d->phase == PHASE_TORQUE) {
      /* the offgoing gear as a tie ω_in − r_o·ω_out = 0, the same lossy
       * mesh as its link (side a: in), so λ is the torque it holds at in */
      static const int ports[2] = {PORT_IN, PORT_OUT};
      const double coef[2] = {1.0, -d->r_off}, coef_a[2] = {1.0, 0.0};
      d->off_tie = dg_topo_tie_lossy(topo, self, 2, ports, coef, coef_a, p->efficiency);
    }
  }
  dg_topo_inertia(topo, self, PORT_IN, p->inertia);
}

static double gearbox_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const gearbox_params *p = self->params;
  const gearbox_data *d = self->data;
  switch (index) {
  case SIG_GEAR:
    return d->gear;
  case SIG_RATIO:
    return d->phase == PHASE_TORQUE ? d->r_off : d->ratio;
  case SIG_SHIFTING:
    return d->shifting ? 1.0 : 0.0;
  case SIG_THROTTLE_CUT:
    if (!d->shifting)
      return 0.0;
    if (p->shift.engagement == ENGAGE_RIGID || d->phase == PHASE_DECOUPLED)
      return 1.0;
    if (d->element == ELEMENT_SYNCHRONIZER)
      return p->shift_time > 0.0 ? 1.0 : 0.0;
    return p->shift.cut_throttle && d->phase == PHASE_INERTIA && d->dir > 0 ? 1.0 : 0.0;
  case SIG_PHASE:
    return d->phase;
  case SIG_SLIP_RPM:
    return slipping(d) ? oncoming_slip(d, ctx, self) * DG_RPM_PER_RAD_S : 0.0;
  case SIG_ELEMENT_TORQUE:
    return element_capacity(d, ctx->t) * d->dir;
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
  if (signal == SIG_GEAR) {
    gearbox_gears(params, r);
  } else if (signal == SIG_PHASE) {
    r->min = PHASE_NONE;
    r->max = PHASE_HOLD;
  }
}

const dg_block_class dg_block_gearbox = {
    .abi = DG_BLOCK_ABI,
    .type = "gearbox",
    .doc = "Stepped gearbox: forward ratios, reverse, neutral, efficiency, input-shaft inertia; "
           "shifts through a friction element of given capacity (a clutch's torque and inertia "
           "phases, or a synchronizer), or rigid (interrupt for shift_time, then a plastic "
           "impact); shift policy manual, auto_rpm, shift_map or a C callback "
           "(dg_sim_set_shift_policy).",
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
    .torque_downstream = gearbox_torque_downstream,
    .post_step = gearbox_post_step,
    .hold_check = gearbox_hold_check,
    .signal = gearbox_signal,
    .num_events = 4,
    .event_values = gearbox_event_values,
    .start = gearbox_start,
    .input_range = gearbox_input_range,
    .signal_range = gearbox_signal_range,
};

/* ------------------------------------------------------------------------ */
/* Public API: the shift callback                                           */

int dg_sim_set_shift_policy(dg_sim *sim, const char *gearbox_id, dg_shift_policy policy,
                            void *user, dg_error *err) {
  dgp_error_clear(err);
  if (!sim) {
    dgp_error_set(err, DG_ERR_USAGE, NULL, NULL, "no simulation given");
    return DG_ERR_USAGE;
  }
  const char *file = dg_graph_file(dg_sim_graph(sim));
  if (!gearbox_id) {
    dgp_error_set(err, DG_ERR_USAGE, file, NULL, "no gearbox id given");
    return DG_ERR_USAGE;
  }
  dg_block *b = dg_sim_block(sim, gearbox_id);
  if (!b) {
    dgp_error_set(err, DG_ERR_UNKNOWN, file, NULL, "no block \"%s\" in the graph", gearbox_id);
    return DG_ERR_UNKNOWN;
  }
  if (b->klass != &dg_block_gearbox) {
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/blocks", gearbox_id);
    dgp_error_set(err, DG_ERR_USAGE, file, path, "block \"%s\" (type \"%s\") is not a gearbox",
                 gearbox_id, b->klass->type);
    return DG_ERR_USAGE;
  }
  gearbox_data *d = b->data;
  d->policy = policy;
  d->user = user;
  return DG_OK;
}
