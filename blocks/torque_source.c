/* torque_source — an ideal torque on a shaft with its own inertia.
 *
 * The torque is a constant (`torque`), a table over time (`torque_vs_time`:
 * { "time": [...], "torque": [...] }) or a table over shaft speed
 * (`torque_vs_rpm`: { "rpm": [...], "torque": [...] }); tables interpolate
 * linearly and hold their end values. It acts on `out`, positive in the
 * direction of forward rotation. */
#include <drivegraph/block.h>

enum { PORT_OUT };
enum { SIG_OMEGA, SIG_RPM, SIG_TORQUE, SIG_POWER };

typedef struct source_params {
  double inertia;
  double torque;
  bool has_torque;
  dg_table1d vs_time;
  dg_table1d vs_rpm;
} source_params;

static const dg_port_def source_ports[] = {
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .doc = "driven shaft"},
    {0},
};

static const dg_param_def source_params_table[] = {
    DG_NUMBER(source_params, inertia, .unit = "kg*m^2", .flags = DG_P_MIN | DG_P_INERTIA,
              .doc = "inertia of the source's shaft"),
    {.key = "torque", .kind = DG_PARAM_NUMBER, .offset = offsetof(source_params, torque),
     .unit = "N*m", .doc = "constant torque", .present = DG_PRESENT(source_params, has_torque),
     .flags = DG_P_DYNAMICS},
    {.key = "torque_vs_time", .kind = DG_PARAM_TABLE1D, .offset = offsetof(source_params, vs_time),
     .unit = "N*m", .doc = "torque over time: { \"time\": [s...], \"torque\": [N*m...] }",
     .axis = {"time", "torque"}, .flags = DG_P_DYNAMICS},
    {.key = "torque_vs_rpm", .kind = DG_PARAM_TABLE1D, .offset = offsetof(source_params, vs_rpm),
     .unit = "N*m", .doc = "torque over shaft speed: { \"rpm\": [...], \"torque\": [N*m...] }",
     .axis = {"rpm", "torque"}, .flags = DG_P_DYNAMICS},
    {0},
};

enum { IN_COMMAND };
static const dg_input_def source_inputs[] = {
    {.name = "command", .unit = "N*m",
     .doc = "torque added to the parameters' torque (bind it to a signal or a channel to drive "
            "the source from outside)"},
    {0},
};

static const dg_signal_def source_signals[] = {
    {.name = "omega", .unit = "rad/s", .doc = "shaft speed", .port = PORT_OUT, .scale = 1},
    {.name = "rpm", .unit = "rpm", .doc = "shaft speed", .port = PORT_OUT,
     .scale = DG_RPM_PER_RAD_S},
    {.name = "torque", .unit = "N*m", .doc = "torque applied", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {.name = "power", .unit = "W", .doc = "power delivered", .port = DG_SIGNAL_HOOK,
     .flags = DG_SIGNAL_FEEDTHROUGH},
    {0},
};

static void source_check(const void *params, dg_check *chk) {
  const source_params *p = params;
  int given = p->has_torque + (p->vs_time.n > 0) + (p->vs_rpm.n > 0);
  if (given > 1)
    dg_check_error(chk, "", "give only one of torque, torque_vs_time, torque_vs_rpm");
}

static double source_torque(const dg_block *self, const dg_ctx *ctx, double w) {
  const source_params *p = self->params;
  double cmd = dg_block_input(ctx, self, IN_COMMAND);
  if (p->vs_time.n > 0)
    return dg_table1d_eval(&p->vs_time, ctx->t) + cmd;
  if (p->vs_rpm.n > 0)
    return dg_table1d_eval(&p->vs_rpm, w * DG_RPM_PER_RAD_S) + cmd;
  return p->torque + cmd;
}

static void source_state_upstream(dg_block *self, dg_topo *topo) {
  const source_params *p = self->params;
  dg_topo_inertia(topo, self, PORT_OUT, p->inertia);
}

static void source_torque_downstream(dg_block *self, dg_ctx *ctx) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  dg_port_add_torque(ctx, self, PORT_OUT, source_torque(self, ctx, w));
}

static double source_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  double w = dg_port_speed(ctx, self, PORT_OUT);
  double t = source_torque(self, ctx, w);
  return index == SIG_TORQUE ? t : t * w;
}

const dg_block_class dg_block_torque_source = {
    .abi = DG_BLOCK_ABI,
    .type = "torque_source",
    .doc = "Ideal torque source with inertia: constant, over time, or over speed.",
    .ports = source_ports,
    .params = source_params_table,
    .params_size = sizeof(source_params),
    .signals = source_signals,
    .inputs = source_inputs,
    .check = source_check,
    .state_upstream = source_state_upstream,
    .torque_downstream = source_torque_downstream,
    .signal = source_signal,
};
