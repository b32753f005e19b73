/* hub — a driven wheel whose road contact belongs to a host vehicle model.
 *
 * The drivetrain owns the wheel's spin: `hub` (in, rotational) carries the
 * wheel's inertia J and radius R. The host owns the chassis: it gives the
 * contact patch's longitudinal velocity `vx` (m/s, in the wheel's heading)
 * and the normal load `fz` (N) as inputs, and applies the tyre force the
 * block reports (`fx`, N, forward positive) to its chassis. The force is
 * evaluated at every RK4 stage from the drivetrain's own wheel speed, so a
 * stiff tyre is integrated together with the driveline (implicitly in the
 * wheel's spin), not one host step late.
 *
 * Slip is a relaxation state, as the wheel block's magic-formula tyre:
 *     σ dκ/dt = ω R − vx − |vx| κ        (κ held within ±1),
 * steady κ = (ωR − vx)/|vx| (SAE slip ratio), and nothing divides by vx at
 * rest. The force
 *     Fx = fz · D sin(C atan(Bκ − E(Bκ − atan Bκ))) + c σ dκ/dt
 * with the tread damping c of the wheel block (tyre.damping_ratio, critical
 * for J by default), within ±fz·max|MF|; or, with a host tyre model
 * installed (dg_sim_set_tyre), Fx = fn(κ, fz, vx, ω, R, t) as the callback
 * computes it, without the damping (the callback owns its model). The hub
 * gets −Fx·R. Brakes are separate blocks on the hub shaft (brake). */
#include "tyre.h"

#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { PORT_HUB };
enum { IN_VX, IN_FZ };
enum { SIG_OMEGA, SIG_SLIP, SIG_FX, SIG_FZ, SIG_VX, SIG_SLIP_RATIO, SIG_TORQUE };

#define KAPPA_LIMIT TYRE_KAPPA_LIMIT
#define SLIP_RATIO_MIN_SPEED 0.1
#define PI 3.14159265358979323846

typedef struct hub_tyre {
  double B, C, D, E;
  double relaxation_length;
  double damping_ratio;
} hub_tyre;

typedef struct hub_params {
  double radius;
  double inertia;
  hub_tyre tyre;
} hub_params;

typedef struct hub_data {
  dg_tyre_fn fn; /* a host's tyre model, or NULL */
  void *user;
  double mf_max; /* max |MF| over the slip range: the force limit per unit load */
} hub_data;

static const dg_port_def hub_ports[] = {
    {.name = "hub", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL,
     .doc = "the wheel's shaft (drive side)"},
    {0},
};

static const dg_param_def hub_tyre_fields[] = {
    TYRE_MF_FIELDS(hub_tyre),
    {0},
};

static const dg_param_def hub_params_table[] = {
    DG_NUMBER(hub_params, radius, .unit = "m", .required = true, .flags = DG_P_MIN_EXCL,
              .doc = "rolling radius"),
    DG_NUMBER(hub_params, inertia, .unit = "kg*m^2", .def = 1.0,
              .flags = DG_P_MIN_EXCL | DG_P_INERTIA,
              .doc = "inertia of wheel, tyre and brake disc about the hub"),
    {.key = "tyre", .kind = DG_PARAM_OBJECT, .offset = offsetof(hub_params, tyre), .unit = "",
     .doc = "magic formula: { \"B\", \"C\", \"D\", \"E\", \"relaxation_length\", "
            "\"damping_ratio\" } (a host's model replaces the formula: dg_sim_set_tyre)",
     .fields = hub_tyre_fields},
    {0},
};

static const dg_input_def hub_inputs[] = {
    {.name = "vx", .unit = "m/s",
     .doc = "the contact patch's longitudinal velocity, from the host",
     .flags = DG_INPUT_REQUIRED},
    {.name = "fz", .unit = "N", .doc = "the normal load, from the host",
     .flags = DG_INPUT_REQUIRED | DG_P_MIN, .min = 0.0},
    {0},
};

static const dg_signal_def hub_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "wheel speed", .port = PORT_HUB, .scale = 1},
    {.name = "slip", .unit = "", .doc = "slip state kappa (relaxed, limited to +-1)",
     .port = DG_SIGNAL_HOOK},
    {.name = "fx", .unit = "N", .doc = "tyre force on the host's chassis, forward positive",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "fz", .unit = "N", .doc = "normal load (the input)", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "vx", .unit = "m/s", .doc = "contact patch velocity (the input)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "slip_ratio", .unit = "", .doc = "kinematic slip (omega R - vx) / max(|vx|, 0.1)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "torque", .unit = "N*m", .doc = "torque the tyre applies at the hub (-fx R)",
     .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

/* The magic formula per unit load at slip k. */
static double hub_mf(const hub_tyre *t, double k) { return tyre_mf(t->B, t->C, t->D, t->E, k); }

static int hub_init(dg_block *self, dg_init *init) {
  const hub_params *p = self->params;
  hub_data *d = self->data;
  (void)init;
  /* max |MF| on [0, 1]: a fine scan (the curve has one peak) */
  double m = 0.0;
  for (int i = 1; i <= 2000; i++)
    m = dg_fmax(m, fabs(hub_mf(&p->tyre, KAPPA_LIMIT * i / 2000.0)));
  d->mf_max = m;
  return 0;
}

static void hub_state_upstream(dg_block *self, dg_topo *topo) {
  const hub_params *p = self->params;
  dg_topo_dof(topo, self, PORT_HUB);
  dg_topo_inertia(topo, self, PORT_HUB, p->inertia);
}

/* dκ/dt, held at the slip limit. */
static double hub_slip_rate(const hub_params *p, double w, double vx, double k) {
  return tyre_slip_rate(w, p->radius, vx, k, p->tyre.relaxation_length);
}

/* The tyre force at the context's point, and dκ/dt. */
static double hub_force(const dg_block *self, const dg_ctx *ctx, double *dk) {
  const hub_params *p = self->params;
  const hub_data *d = self->data;
  const hub_tyre *t = &p->tyre;
  double k = dg_block_state(ctx, self)[0];
  double w = dg_port_speed(ctx, self, PORT_HUB);
  double vx = dg_block_input(ctx, self, IN_VX), fz = dg_block_input(ctx, self, IN_FZ);
  fz = fz > 0.0 ? fz : 0.0;
  *dk = hub_slip_rate(p, w, vx, k);
  if (d->fn) {
    dg_tyre_state s = {.slip = k, .fz = fz, .vx = vx, .omega = w, .radius = p->radius,
                       .t = ctx->t};
    return d->fn(&s, d->user);
  }
  double fx = fz * hub_mf(t, k);
  if (t->damping_ratio > 0.0 && fz > 0.0) {
    double kx = fz * t->B * t->C * t->D / t->relaxation_length;
    double c = 2.0 * t->damping_ratio * sqrt(kx * p->inertia) / p->radius * t->relaxation_length;
    double lim = fz * d->mf_max;
    fx += c * *dk;
    fx = fx > lim ? lim : (fx < -lim ? -lim : fx);
  }
  return fx;
}

static void hub_torque_downstream(dg_block *self, dg_ctx *ctx) {
  const hub_params *p = self->params;
  double dk;
  double fx = hub_force(self, ctx, &dk);
  dg_block_state_rate(ctx, self)[0] = dk;
  dg_port_add_torque(ctx, self, PORT_HUB, -fx * p->radius);
}

static double hub_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  const hub_params *p = self->params;
  double dk, vx = dg_block_input(ctx, self, IN_VX);
  switch (index) {
  case SIG_SLIP:
    return dg_block_state(ctx, self)[0];
  case SIG_FX:
    return hub_force(self, ctx, &dk);
  case SIG_FZ:
    return dg_block_input(ctx, self, IN_FZ);
  case SIG_VX:
    return vx;
  case SIG_SLIP_RATIO:
    return (dg_port_speed(ctx, self, PORT_HUB) * p->radius - vx) /
           dg_fmax(fabs(vx), SLIP_RATIO_MIN_SPEED);
  case SIG_TORQUE:
    return -hub_force(self, ctx, &dk) * p->radius;
  default:
    return NAN;
  }
}

/* RK4 can carry the slip a little past the limit within a step (a stage
 * below it still moves it on): the committed state is held within ±1, as
 * the wheel block's (the rate alone holds it only once it is there). */
static void hub_post_step(dg_block *self, dg_ctx *ctx) {
  double *k = dg_block_state_commit(ctx, self);
  *k = dg_fmax(-KAPPA_LIMIT, dg_fmin(KAPPA_LIMIT, *k));
}

/* The slip state as an initial value (a host starting mid-manoeuvre). */
static int hub_set_signal(dg_block *self, dg_ctx *ctx, int index, double value) {
  if (index != SIG_SLIP || !(fabs(value) <= KAPPA_LIMIT))
    return -1;
  dg_block_state_commit(ctx, self)[0] = value;
  return 0;
}

const dg_block_class dg_block_hub = {
    .abi = DG_BLOCK_ABI,
    .type = "hub",
    .doc = "A driven wheel whose road contact belongs to a host: contact velocity vx and "
           "normal load fz in, tyre force fx out, evaluated at every RK4 stage (magic "
           "formula, or the host's model via dg_sim_set_tyre).",
    .ports = hub_ports,
    .params = hub_params_table,
    .params_size = sizeof(hub_params),
    .signals = hub_signals,
    .inputs = hub_inputs,
    .data_size = sizeof(hub_data),
    .num_states = 1,
    .init = hub_init,
    .state_upstream = hub_state_upstream,
    .torque_downstream = hub_torque_downstream,
    .post_step = hub_post_step,
    .signal = hub_signal,
    .set_signal = hub_set_signal,
};

int dg_sim_set_tyre(dg_sim *sim, const char *hub_id, dg_tyre_fn fn, void *user, dg_error *err) {
  if (err)
    memset(err, 0, sizeof *err);
  dg_block *b = sim && hub_id ? dg_sim_block(sim, hub_id) : NULL;
  if (!b || b->klass != &dg_block_hub) {
    if (err) {
      err->code = !sim || !hub_id ? DG_ERR_USAGE : !b ? DG_ERR_UNKNOWN : DG_ERR_USAGE;
      snprintf(err->text, sizeof err->text,
               !sim || !hub_id ? "no simulation or hub id given"
               : !b            ? "no block \"%s\" in the graph"
                               : "block \"%s\" is not a hub",
               hub_id ? hub_id : "");
    }
    return !sim || !hub_id ? DG_ERR_USAGE : !b ? DG_ERR_UNKNOWN : DG_ERR_USAGE;
  }
  hub_data *d = b->data;
  d->fn = fn;
  d->user = user;
  return DG_OK;
}
