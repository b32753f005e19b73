/* Test-only block classes (see testutil.h). They use block.h only, like an
 * out-of-tree block would. */
#include "testutil.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- test_coupler ---- */
enum { CPL_IN, CPL_OUT };
typedef struct coupler_params {
  double ratio;
  bool start_coupled;
  bool use_tie;
} coupler_params;
typedef struct coupler_data {
  int mode; /* 0 coupled, 1 free */
  int input;
} coupler_data;

static const dg_port_def coupler_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def coupler_params_table[] = {
    DG_NUMBER(coupler_params, ratio, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "ratio when coupled"),
    {.key = "start_coupled", .kind = DG_PARAM_BOOL, .offset = offsetof(coupler_params, start_coupled),
     .def = 1, .doc = "coupled at t = 0"},
    {.key = "use_tie", .kind = DG_PARAM_BOOL, .offset = offsetof(coupler_params, use_tie),
     .def = 0, .doc = "couple with a DOF plus a tie (as locks do) instead of a ratio link"},
    {0},
};
static const dg_signal_def coupler_signals[] = {
    {.name = "omega", .unit = "rad/s", .port = CPL_IN, .scale = 1},
    {0},
};
static int coupler_init(dg_block *self, dg_init *init) {
  coupler_data *d = self->data;
  const coupler_params *p = self->params;
  d->mode = p->start_coupled ? 0 : 1;
  d->input = dg_init_input(init, "couple");
  return 0;
}
static int coupler_modes(const dg_block *self) {
  (void)self;
  return 2;
}
static void coupler_mode_set(dg_block *self, int mode) { ((coupler_data *)self->data)->mode = mode; }
static const char *coupler_mode_name(const dg_block *self, int mode) {
  (void)self;
  return mode == 0 ? "coupled" : "free";
}
static void coupler_pre_step(dg_block *self, dg_ctx *ctx) {
  coupler_data *d = self->data;
  int want = dg_ctx_input(ctx, d->input) >= 0.5 ? 0 : 1;
  if (want != d->mode) {
    d->mode = want;
    dg_ctx_request_topology(ctx);
  }
}
static void coupler_state_upstream(dg_block *self, dg_topo *topo) {
  const coupler_data *d = self->data;
  const coupler_params *p = self->params;
  if (d->mode == 0 && p->use_tie) {
    const int ports[2] = {CPL_IN, CPL_OUT};
    const double coef[2] = {1.0, -p->ratio};
    dg_topo_dof(topo, self, CPL_IN);
    dg_topo_tie(topo, self, 2, ports, coef);
  } else if (d->mode == 0)
    dg_topo_ratio(topo, self, CPL_IN, CPL_OUT, p->ratio, 1.0);
  else
    dg_topo_dof(topo, self, CPL_IN);
}
static const dg_block_class test_coupler = {
    .abi = DG_BLOCK_ABI, .type = "test_coupler", .doc = "test: switchable coupling",
    .ports = coupler_ports, .params = coupler_params_table,
    .params_size = sizeof(coupler_params), .signals = coupler_signals,
    .data_size = sizeof(coupler_data), .init = coupler_init, .mode_count = coupler_modes,
    .mode_set = coupler_mode_set, .mode_name = coupler_mode_name,
    .pre_step = coupler_pre_step, .state_upstream = coupler_state_upstream,
};

/* ---- test_merge ---- */
enum { MRG_A, MRG_B, MRG_OUT };
typedef struct merge_params {
  double ratio_a, ratio_b;
} merge_params;
static const dg_port_def merge_ports[] = {
    {.name = "in_a", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "in_b", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def merge_params_table[] = {
    DG_NUMBER(merge_params, ratio_a, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "in_a/out"),
    DG_NUMBER(merge_params, ratio_b, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "in_b/out"),
    {0},
};
static void merge_state_upstream(dg_block *self, dg_topo *topo) {
  const merge_params *p = self->params;
  dg_topo_ratio(topo, self, MRG_A, MRG_OUT, p->ratio_a, 1.0);
  dg_topo_ratio(topo, self, MRG_B, MRG_OUT, p->ratio_b, 1.0);
}
static const dg_block_class test_merge = {
    .abi = DG_BLOCK_ABI, .type = "test_merge", .doc = "test: two inputs geared to one output",
    .ports = merge_ports, .params = merge_params_table, .params_size = sizeof(merge_params),
    .state_upstream = merge_state_upstream,
};

/* ---- test_mass ---- */
typedef struct mass_params {
  double mass;
} mass_params;
static const dg_port_def mass_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_LINEAR},
    {0},
};
static const dg_param_def mass_params_table[] = {
    DG_NUMBER(mass_params, mass, .unit = "kg", .def = 1000, .flags = DG_P_MIN_EXCL, .doc = "mass"),
    {0},
};
static const dg_signal_def mass_signals[] = {
    {.name = "speed", .unit = "m/s", .port = 0, .scale = 1},
    {0},
};
static void mass_state_upstream(dg_block *self, dg_topo *topo) {
  const mass_params *p = self->params;
  dg_topo_dof(topo, self, 0);
  dg_topo_inertia(topo, self, 0, p->mass);
}
static const dg_block_class test_mass = {
    .abi = DG_BLOCK_ABI, .type = "test_mass", .doc = "test: linear mass", .ports = mass_ports,
    .params = mass_params_table, .params_size = sizeof(mass_params), .signals = mass_signals,
    .state_upstream = mass_state_upstream,
};

/* ---- test_wheel ---- */
typedef struct wheel_params {
  double radius;
} wheel_params;
static const dg_port_def wheel_ports[] = {
    {.name = "hub", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "ground", .dir = DG_PORT_OUT, .domain = DG_LINEAR},
    {0},
};
static const dg_param_def wheel_params_table[] = {
    DG_NUMBER(wheel_params, radius, .unit = "m", .def = 0.3, .flags = DG_P_MIN_EXCL,
              .doc = "radius"),
    {0},
};
static void wheel_state_upstream(dg_block *self, dg_topo *topo) {
  const wheel_params *p = self->params;
  dg_topo_ratio(topo, self, 0, 1, 1.0 / p->radius, 1.0);
}
static const dg_block_class test_wheel = {
    .abi = DG_BLOCK_ABI, .type = "test_wheel", .doc = "test: rolling wheel", .ports = wheel_ports,
    .params = wheel_params_table, .params_size = sizeof(wheel_params),
    .state_upstream = wheel_state_upstream,
};

/* ---- test_cvt: ratio r(t) as a state, ṙ = rate ---- */
typedef struct cvt_params {
  double ratio, rate;
} cvt_params;
static const dg_port_def cvt_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def cvt_params_table[] = {
    DG_NUMBER(cvt_params, ratio, .unit = "", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "ratio at t = 0"),
    DG_NUMBER(cvt_params, rate, .unit = "1/s", .doc = "d(ratio)/dt"),
    {0},
};
static const dg_signal_def cvt_signals[] = {
    {.name = "omega", .unit = "rad/s", .port = 0, .scale = 1},
    {0},
};
static int cvt_init(dg_block *self, dg_init *init) {
  dg_init_state(init)[0] = ((const cvt_params *)self->params)->ratio;
  return 0;
}
static void cvt_rates(dg_block *self, dg_ctx *ctx) {
  dg_block_state_rate(ctx, self)[0] = ((const cvt_params *)self->params)->rate;
}
static void cvt_state_upstream(dg_block *self, dg_topo *topo) {
  const double rate = ((const cvt_params *)self->params)->rate;
  const int out = 1;
  dg_topo_link_rate(topo, self, 0, 1, &out, dg_topo_state(topo, self), &rate, 1.0);
}
static const dg_block_class test_cvt = {
    .abi = DG_BLOCK_ABI, .type = "test_cvt", .doc = "test: ratio changing at a constant rate",
    .flags = DG_CLASS_VARIABLE_KINEMATICS, .ports = cvt_ports, .params = cvt_params_table,
    .params_size = sizeof(cvt_params), .signals = cvt_signals, .num_states = 1,
    .init = cvt_init, .torque_downstream = cvt_rates, .state_upstream = cvt_state_upstream,
};

/* ---- test_speedo: a massless shaft whose signal "speed" is radius * omega ---- */
enum { SPD_IN, SPD_OUT };
typedef struct speedo_params {
  double radius;
} speedo_params;
static const dg_port_def speedo_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def speedo_params_table[] = {
    DG_NUMBER(speedo_params, radius, .unit = "m", .def = 1.0, .flags = DG_P_MIN_EXCL,
              .doc = "radius"),
    {0},
};
static const dg_signal_def speedo_signals[] = {
    {.name = "speed", .unit = "m/s", .doc = "radius * omega", .port = DG_SIGNAL_HOOK},
    {0},
};
static double speedo_signal(const dg_block *self, const dg_ctx *ctx, int index) {
  (void)index;
  return ((const speedo_params *)self->params)->radius * dg_port_speed(ctx, self, SPD_OUT);
}
static void speedo_state_upstream(dg_block *self, dg_topo *topo) {
  dg_topo_ratio(topo, self, SPD_IN, SPD_OUT, 1.0, 1.0);
}
static const dg_block_class test_speedo = {
    .abi = DG_BLOCK_ABI, .type = "test_speedo", .doc = "test: a shaft with a speed signal",
    .ports = speedo_ports, .params = speedo_params_table, .params_size = sizeof(speedo_params),
    .signals = speedo_signals, .signal = speedo_signal, .state_upstream = speedo_state_upstream,
};

/* ---- test_misuse: a shaft whose state_upstream misuses the dg_topo_* API ---- */
enum { MIS_IN, MIS_OUT };
typedef struct misuse_params {
  double fault;
} misuse_params;
static const dg_port_def misuse_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL},
    {0},
};
static const dg_param_def misuse_params_table[] = {
    DG_NUMBER(misuse_params, fault, .unit = "", .def = 0.0, .flags = DG_P_MIN,
              .doc = "which misuse (0: none, a plain ratio 1)"),
    {0},
};
static void misuse_state_upstream(dg_block *self, dg_topo *topo) {
  const int bad_port[2] = {MIS_IN, 7}, srcs[1] = {MIS_OUT};
  const double one[2] = {1.0, -1.0};
  switch ((int)((const misuse_params *)self->params)->fault) {
  case 1: /* a port the class does not have, as dst */
    dg_topo_ratio(topo, self, 2, MIS_OUT, 1.0, 1.0);
    break;
  case 2: /* ... as a source */
    dg_topo_ratio(topo, self, MIS_IN, -1, 1.0, 1.0);
    break;
  case 3: /* a link without sources */
    dg_topo_link(topo, self, MIS_IN, 0, srcs, one, 1.0);
    break;
  case 4: /* an efficiency above 1 */
    dg_topo_ratio(topo, self, MIS_IN, MIS_OUT, 2.0, 1.5);
    break;
  case 5: /* a driven side's efficiency of 0 */
    dg_topo_ratio_directed(topo, self, MIS_IN, MIS_OUT, 2.0, 0.9, 0.0);
    break;
  case 6: /* a negative inertia */
    dg_topo_ratio(topo, self, MIS_IN, MIS_OUT, 1.0, 1.0);
    dg_topo_inertia(topo, self, MIS_IN, -0.5);
    break;
  case 7: /* an infinite one */
    dg_topo_ratio(topo, self, MIS_IN, MIS_OUT, 1.0, 1.0);
    dg_topo_inertia(topo, self, MIS_OUT, 1.0 / 0.0);
    break;
  case 8: /* a lock on a port the class does not have */
    dg_topo_dof(topo, self, MIS_IN);
    dg_topo_lock(topo, self, MIS_IN, 3);
    break;
  case 9: /* a tie over a port the class does not have */
    dg_topo_dof(topo, self, MIS_IN);
    dg_topo_tie(topo, self, 2, bad_port, one);
    break;
  case 10: /* a lossy tie with an efficiency above 1 */
    dg_topo_dof(topo, self, MIS_IN);
    dg_topo_tie_lossy(topo, self, 2, (const int[]){MIS_IN, MIS_OUT}, one, one, 1.25);
    break;
  case 11: /* an inertia at a port the class does not have */
    dg_topo_ratio(topo, self, MIS_IN, MIS_OUT, 1.0, 1.0);
    dg_topo_inertia(topo, self, 5, 0.1);
    break;
  default:
    dg_topo_ratio(topo, self, MIS_IN, MIS_OUT, 1.0, 1.0);
  }
}
static const dg_block_class test_misuse = {
    .abi = DG_BLOCK_ABI,
    .type = "test_misuse",
    .doc = "test: misuses the topology API",
    .ports = misuse_ports,
    .params = misuse_params_table,
    .params_size = sizeof(misuse_params),
    .state_upstream = misuse_state_upstream,
};

dg_registry *dg_test_registry(void) {
  dg_registry *reg = dg_registry_new();
  const dg_block_class *extra[] = {&test_coupler, &test_merge,  &test_mass,  &test_wheel,
                                   &test_cvt,     &test_speedo, &test_misuse};
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
    dg_error err;
    if (dg_registry_add(reg, extra[i], &err) != DG_OK) {
      fprintf(stderr, "registering %s: %s\n", extra[i]->type, err.text);
      abort();
    }
  }
  return reg;
}
