/* Simulations: creation from a graph, inputs, signals, initial values,
 * and the validation of every reachable mode. The numerics live in
 * solver.c. */
#include "sim.h"
#include "solver/solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dg_init {
  dg_sim *sim;
  dg_block *block;
  dg_diag *diag;
  bool failed;
};

void dgp_sim_fail(dg_sim *sim, int code, const char *fmt, ...) {
  if (sim->failed)
    return;
  char text[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  dgp_error_set(&sim->err, code, sim->g->file, "", "%s", text);
  sim->failed = true;
}

void dg_ctx_fail(dg_ctx *ctx, const dg_block *b, const char *fmt, ...) {
  dg_sim *sim = ctx->sim;
  if (sim->failed)
    return;
  char text[DG_ERROR_TEXT_LEN], path[DG_ERROR_PATH_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  dgp_pointer_append(path, sizeof path, "/blocks", b->id);
  dgp_error_set(&sim->err, DG_ERR_BLOCK, sim->g->file, path, "at t = %.6g s: block \"%s\" (%s): %s",
               ctx->t, b->id, b->klass->type, text);
  sim->failed = true;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

static const char *const std_inputs[DG_NUM_STD_INPUTS] = {"throttle", "brake", "clutch", "gear"};

/* Finds or appends `name` in a growing list of names with values. */
static int named_add(char ***names, double **values, int *n, int *cap, const char *name) {
  for (int i = 0; i < *n; i++)
    if (strcmp((*names)[i], name) == 0)
      return i;
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 8;
    char **nn = realloc(*names, sizeof *nn * (size_t)c);
    if (!nn)
      return -1;
    *names = nn;
    double *vv = realloc(*values, sizeof *vv * (size_t)c);
    if (!vv)
      return -1;
    *values = vv;
    *cap = c;
  }
  char *copy = strdup(name);
  if (!copy)
    return -1;
  (*names)[*n] = copy;
  (*values)[*n] = 0.0;
  return (*n)++;
}

int dgp_sim_channel_add(dg_sim *sim, const char *name) {
  return named_add(&sim->input_names, &sim->input, &sim->n_inputs, &sim->cap_inputs, name);
}

bool dg_sim_input_is_integer(const dg_sim *sim, int i) {
  return sim && i >= 0 && i < sim->n_inputs && sim->input_integer && sim->input_integer[i];
}

int dg_init_channel(dg_init *init, const char *name) {
  dg_sim *sim = init->sim;
  int id = named_add(&sim->channel_names, &sim->channel, &sim->n_channels, &sim->cap_channels,
                     name);
  if (id < 0)
    dg_init_error(init, "out of memory registering channel \"%s\"", name);
  return id;
}

int dg_init_input(dg_init *init, const char *name) {
  dg_sim *sim = init->sim;
  int id = named_add(&sim->input_names, &sim->input, &sim->n_inputs, &sim->cap_inputs, name);
  if (id < 0)
    dg_init_error(init, "out of memory registering input \"%s\"", name);
  return id;
}

double *dg_init_state(dg_init *init) { return init->sim->sv.s + init->block->state; }

void dg_init_idle(dg_init *init, unsigned hooks) {
  const dg_block_class *c = init->block->klass;
  if ((hooks & DG_HOOK_TORQUE) && c->num_states > 0) {
    dg_init_error(init, "a block with states keeps torque_downstream (it writes their rates)");
    return;
  }
  init->sim->idle[init->block->index] |= hooks;
}

void dg_init_error(dg_init *init, const char *fmt, ...) {
  char path[DG_ERROR_PATH_LEN];
  dgp_pointer_append(path, sizeof path, "/blocks", init->block->id);
  va_list ap;
  va_start(ap, fmt);
  if (init->diag)
    dgp_diag_vadd(init->diag, DG_ERR_BLOCK, path, 0, 0, fmt, ap);
  va_end(ap);
  init->failed = true;
}

int dg_sim_input_count(const dg_sim *sim) { return sim->n_inputs; }
const char *dg_sim_input_name(const dg_sim *sim, int i) {
  return i >= 0 && i < sim->n_inputs ? sim->input_names[i] : NULL;
}
int dg_sim_input_find(const dg_sim *sim, const char *name) {
  for (int i = 0; name && i < sim->n_inputs; i++)
    if (strcmp(sim->input_names[i], name) == 0)
      return i;
  return -1;
}
/* The slot holding input i's schedule or callback, or NULL. */
dg_timed_input *dgp_sim_timed_find(const dg_sim *sim, int i) {
  for (int k = 0; k < sim->n_timed; k++)
    if (sim->timed[k].input == i)
      return &sim->timed[k];
  return NULL;
}

/* Removes input i's schedule or callback (the slots stay packed). */
static void timed_clear(dg_sim *sim, int i) {
  sim->input_epoch++; /* an input changes: caches of the state's values go */
  dg_timed_input *ti = dgp_sim_timed_find(sim, i);
  if (!ti)
    return;
  free(ti->t);
  free(ti->v);
  *ti = sim->timed[--sim->n_timed];
  sim->timed[sim->n_timed] = (dg_timed_input){.input = -1};
}

void dg_sim_set_input(dg_sim *sim, int i, double value) {
  if (i < 0 || i >= sim->n_inputs)
    return;
  if (!isfinite(value)) { /* refused: the next step says so, naming the input */
    if (sim->bad_input < 0) {
      sim->bad_input = i;
      sim->bad_value = value;
    }
    return;
  }
  /* the value it has, to the bit, and no schedule or callback anywhere:
   * nothing changes (a driver loop sets its inputs at every step) */
  if (sim->n_timed == 0 && memcmp(&sim->input[i], &value, sizeof value) == 0)
    return;
  timed_clear(sim, i);
  sim->input[i] = value;
}
double dg_sim_get_input(const dg_sim *sim, int i) {
  return i >= 0 && i < sim->n_inputs ? sim->input[i] : NAN;
}

static int input_arg_error(const dg_sim *sim, int i, dg_error *err) {
  if (i >= 0 && i < sim->n_inputs)
    return DG_OK;
  dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "", "no input with index %d (the simulation has %d)",
               i, sim->n_inputs);
  return DG_ERR_USAGE;
}

int dg_sim_set_input_schedule(dg_sim *sim, int i, int n, const double *t, const double *v,
                              bool stepped, dg_error *err) {
  dgp_error_clear(err);
  if (input_arg_error(sim, i, err) != DG_OK)
    return DG_ERR_USAGE;
  const char *name = sim->input_names[i];
  if (n < 1 || !t || !v) {
    dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "",
                 "schedule of input \"%s\" needs at least one breakpoint", name);
    return DG_ERR_USAGE;
  }
  for (int k = 0; k < n; k++) {
    if (!isfinite(t[k]) || !isfinite(v[k])) {
      dgp_error_set(err, DG_ERR_RANGE, sim->g->file, "",
                   "schedule of input \"%s\": breakpoint %d must be finite (got t = %g, v = %g)",
                   name, k, t[k], v[k]);
      return DG_ERR_RANGE;
    }
    if (k > 0 && t[k] < t[k - 1]) {
      dgp_error_set(err, DG_ERR_RANGE, sim->g->file, "",
                   "schedule of input \"%s\": times must not decrease (breakpoint %d at %g s "
                   "after %g s)",
                   name, k, t[k], t[k - 1]);
      return DG_ERR_RANGE;
    }
  }
  double *tc = malloc(sizeof(double) * (size_t)n), *vc = malloc(sizeof(double) * (size_t)n);
  if (!tc || !vc) {
    free(tc);
    free(vc);
    dgp_error_set(err, DG_ERR_NOMEM, sim->g->file, "", "out of memory");
    return DG_ERR_NOMEM;
  }
  memcpy(tc, t, sizeof(double) * (size_t)n);
  memcpy(vc, v, sizeof(double) * (size_t)n);
  timed_clear(sim, i);
  sim->timed[sim->n_timed++] =
      (dg_timed_input){.input = i, .stepped = stepped, .n = n, .t = tc, .v = vc, .piece = -1};
  dg_sim_apply_inputs(sim, sim->t);
  return DG_OK;
}

int dg_sim_set_input_fn(dg_sim *sim, int i, dg_input_fn fn, void *user, dg_error *err) {
  dgp_error_clear(err);
  if (input_arg_error(sim, i, err) != DG_OK)
    return DG_ERR_USAGE;
  timed_clear(sim, i);
  if (!fn)
    return DG_OK;
  sim->timed[sim->n_timed++] = (dg_timed_input){.input = i, .fn = fn, .user = user, .piece = -1};
  dg_sim_apply_inputs(sim, sim->t);
  return DG_OK;
}

void dg_sim_apply_inputs(dg_sim *sim, double t) { dgp_solver_inputs_start(sim, t); }

/* ------------------------------------------------------------------------ */
/* Creation                                                                 */

static int build_signals(dg_sim *sim) {
  int count = 0;
  for (int i = 0; i < sim->nb; i++)
    count += dgp_class_num_signals(sim->blocks[i].klass);
  sim->signals = calloc((size_t)(count ? count : 1), sizeof *sim->signals);
  if (!sim->signals)
    return -1;
  for (int i = 0; i < sim->nb; i++) {
    const dg_block *b = &sim->blocks[i];
    const dg_signal_def *defs = b->klass->signals;
    for (int k = 0; defs && defs[k].name; k++) {
      dg_signal_entry *e = &sim->signals[sim->n_signals];
      size_t len = strlen(b->id) + strlen(defs[k].name) + 2;
      e->name = malloc(len);
      if (!e->name)
        return -1;
      snprintf(e->name, len, "%s.%s", b->id, defs[k].name);
      e->unit = defs[k].unit ? defs[k].unit : "";
      e->block = i;
      e->index = k;
      e->node = defs[k].port >= 0 ? b->node[defs[k].port] : -1;
      e->scale = defs[k].scale != 0.0 ? defs[k].scale : 1.0;
      sim->n_signals++;
    }
  }
  return 0;
}

/* Every port's angle and torque, "block.port.angle" and "block.port.torque":
 * found by name (dg_sim_signal_find) with ids after the class signals', not
 * listed with them. */
static int build_port_signals(dg_sim *sim) {
  sim->port_signals = calloc((size_t)(2 * sim->n_ports + 1), sizeof *sim->port_signals);
  if (!sim->port_signals)
    return -1;
  for (int i = 0; i < sim->nb; i++) {
    const dg_block *b = &sim->blocks[i];
    for (int p = 0; p < sim->g->blocks[i].num_ports; p++)
      for (int kind = DG_PORT_SIGNAL_ANGLE; kind <= DG_PORT_SIGNAL_TORQUE; kind++) {
        dg_signal_entry *e = &sim->port_signals[sim->n_port_signals];
        const dg_port_def *pd = &b->klass->ports[p];
        const char *what = kind == DG_PORT_SIGNAL_ANGLE ? "angle" : "torque";
        size_t len = strlen(b->id) + strlen(pd->name) + strlen(what) + 3;
        e->name = malloc(len);
        if (!e->name)
          return -1;
        snprintf(e->name, len, "%s.%s.%s", b->id, pd->name, what);
        bool lin = pd->domain == DG_LINEAR;
        e->unit = kind == DG_PORT_SIGNAL_ANGLE ? (lin ? "m" : "rad") : (lin ? "N" : "N*m");
        e->block = i;
        e->index = p;
        e->node = b->node[p];
        e->scale = 1.0;
        e->port_kind = kind;
        sim->n_port_signals++;
      }
  }
  return 0;
}

/* The hook lists, from the sources to the road (graph order reversed:
 * an upstream decision, a shift, is seen by the blocks after it; torques
 * are summed, so their order does not matter), and the blocks' event
 * functions, packed in g0/g1/gt in that order. With skip_idle, without
 * what the blocks' inits said they do without (dg_init_idle; the lists
 * are first built before the inits, with every hook). The audit keeps its
 * entries (audit.ne, sized with every torque hook), those of idle ones
 * unused. */
static void fill_hook_lists(dg_sim *sim, bool skip_idle) {
  sim->n_pre = sim->n_torque = sim->n_post = sim->n_hold = sim->n_evb = sim->n_events = 0;
  for (int k = sim->nb - 1; k >= 0; k--) {
    dg_block *b = &sim->blocks[sim->g->order[k]];
    const dg_block_class *c = b->klass;
    unsigned idle = skip_idle ? sim->idle[b->index] : 0u;
    if (c->pre_step && !(idle & DG_HOOK_PRE_STEP))
      sim->pre[sim->n_pre++] = (dg_hook_entry){c->pre_step, b};
    if (c->torque_downstream && !(idle & DG_HOOK_TORQUE))
      sim->torque[sim->n_torque++] = (dg_hook_entry){c->torque_downstream, b};
    if (c->post_step && !(idle & DG_HOOK_POST_STEP))
      sim->post[sim->n_post++] = (dg_hook_entry){c->post_step, b};
    if (c->hold_check && !(idle & DG_HOOK_HOLD_CHECK))
      sim->hold[sim->n_hold++] = (dg_hook_entry){c->hold_check, b};
    if (c->num_events > 0 && !(idle & DG_HOOK_EVENTS)) {
      sim->ev_off[sim->n_evb] = sim->n_events;
      sim->evb[sim->n_evb++] = (dg_hook_entry){NULL, b};
      sim->n_events += c->num_events;
    }
  }
}

void dgp_sim_set_idle(dg_sim *sim, const unsigned *idle) {
  if (memcmp(sim->idle, idle, sizeof *idle * (size_t)sim->nb) == 0)
    return;
  memcpy(sim->idle, idle, sizeof *idle * (size_t)sim->nb);
  dgp_compile_free(sim); /* its stage calls the hooks of the lists it was written for */
  fill_hook_lists(sim, true);
}

void dgp_sim_call_idle_hooks(dg_sim *sim) {
  dgp_compile_free(sim); /* its stage calls the hooks of the lists it was written for */
  fill_hook_lists(sim, false);
}

static int build_hook_lists(dg_sim *sim) {
  sim->pre = calloc((size_t)sim->nb + 1, sizeof *sim->pre);
  sim->torque = calloc((size_t)sim->nb + 1, sizeof *sim->torque);
  sim->post = calloc((size_t)sim->nb + 1, sizeof *sim->post);
  sim->hold = calloc((size_t)sim->nb + 1, sizeof *sim->hold);
  sim->state_blocks = calloc((size_t)sim->nb + 1, sizeof *sim->state_blocks);
  sim->var_blocks = calloc((size_t)sim->nb + 1, sizeof *sim->var_blocks);
  sim->evb = calloc((size_t)sim->nb + 1, sizeof *sim->evb);
  sim->ev_off = calloc((size_t)sim->nb + 1, sizeof *sim->ev_off);
  sim->motion_blocks = calloc((size_t)sim->nb + 1, sizeof *sim->motion_blocks);
  sim->motion_slot = calloc((size_t)sim->nb + 1, sizeof *sim->motion_slot);
  sim->idle = calloc((size_t)sim->nb + 1, sizeof *sim->idle);
  if (!sim->idle || !sim->pre || !sim->torque || !sim->post || !sim->hold || !sim->state_blocks || !sim->var_blocks ||
      !sim->evb || !sim->ev_off || !sim->motion_blocks || !sim->motion_slot)
    return -1;
  for (int i = 0; i < sim->nb; i++) { /* blocks that may prescribe a speed, in graph order */
    sim->motion_slot[i] = -1;
    if (sim->blocks[i].klass->motion) {
      sim->motion_slot[i] = sim->n_motion;
      sim->motion_blocks[sim->n_motion++] = i;
    }
  }
  for (int k = sim->nb - 1; k >= 0; k--) { /* states, variable kinematics */
    dg_block *b = &sim->blocks[sim->g->order[k]];
    const dg_block_class *c = b->klass;
    if (c->num_states > 0) {
      b->state = sim->ns;
      sim->ns += c->num_states;
      sim->state_blocks[sim->n_state_blocks++] = b->index;
    }
    if (c->flags & DG_CLASS_VARIABLE_KINEMATICS) {
      sim->sv.variable_kinematics = true;
      sim->var_blocks[sim->n_var_blocks++] = b->index;
    }
  }
  fill_hook_lists(sim, false);
  return 0;
}

dg_sim *dgp_sim_create(const dg_graph *g, dg_diag *diag) {
  dg_sim *sim = calloc(1, sizeof *sim);
  if (!sim) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    return NULL;
  }
  dgp_graph_retain(g);
  sim->g = g;
  sim->nb = g->num_blocks;
  sim->nn = g->num_nodes;
  sim->ctx.sim = sim;
  sim->last_event = NAN;
  sim->bad_input = -1;
  sim->keep = DG_KEEP_ALL;
  sim->blocks = calloc((size_t)sim->nb, sizeof *sim->blocks);
  size_t nn1 = (size_t)sim->nn + 1;
  sim->given_node = calloc(nn1, sizeof *sim->given_node);
  sim->prop_node = calloc(nn1, sizeof *sim->prop_node);
  sim->given_val = calloc(nn1, sizeof *sim->given_val);
  sim->prop_val = calloc(nn1, sizeof *sim->prop_val);
  sim->prop_why = calloc(nn1, sizeof *sim->prop_why);
  sim->choice = calloc(2 * nn1, sizeof *sim->choice);
  bool ok = sim->blocks != NULL && sim->given_node && sim->prop_node && sim->given_val &&
            sim->prop_val && sim->prop_why && sim->choice;
  for (int i = 0; ok && i < DG_NUM_STD_INPUTS; i++)
    ok = named_add(&sim->input_names, &sim->input, &sim->n_inputs, &sim->cap_inputs,
                   std_inputs[i]) == i;
  for (int i = 0; ok && i < sim->nb; i++) {
    const dg_gblock *gb = &g->blocks[i];
    dg_block *b = &sim->blocks[i];
    b->klass = gb->klass;
    b->id = gb->id;
    b->params = gb->params;
    b->node = gb->node;
    b->index = i;
    b->data = calloc(1, gb->klass->data_size ? gb->klass->data_size : 1);
    ok = b->data != NULL;
  }
  ok = ok && dgp_bind_channels(sim) == 0;
  for (int i = 0; i < sim->nb; i++)
    sim->n_ports += g->blocks[i].num_ports;
  ok = ok && build_hook_lists(sim) == 0;
  ok = ok && dgp_solver_alloc(sim) == DG_OK;
  if (!ok) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    dg_sim_free(sim);
    return NULL;
  }
  int before = diag->count;
  for (int i = 0; i < sim->nb; i++) {
    dg_block *b = &sim->blocks[i];
    if (!b->klass->init)
      continue;
    dg_init init = {sim, b, diag, false};
    if (b->klass->init(b, &init) != 0 && !init.failed)
      dg_init_error(&init, "block %s failed to initialize", b->klass->type);
  }
  fill_hook_lists(sim, true);
  if (diag->count > before || build_signals(sim) != 0 || build_port_signals(sim) != 0 || dgp_bind_sim(sim) != 0) {
    if (diag->count == before)
      dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    dg_sim_free(sim);
    return NULL;
  }
  sim->timed = calloc((size_t)sim->n_inputs, sizeof *sim->timed);
  if (!sim->timed) {
    dgp_diag_add(diag, DG_ERR_NOMEM, "", "out of memory");
    dg_sim_free(sim);
    return NULL;
  }
  for (int i = 0; i < sim->n_inputs; i++)
    sim->timed[i].input = -1;
  sim->ctx.input = sim->input;
  sim->ctx.channel = sim->channel;
  sim->ctx.normal_load = sim->sv.normal_load;
  sim->ctx.speed = sim->sv.x;
  sim->ctx.state = sim->sv.s;
  return sim;
}

/* Reports a failed topology build through diag (path at the block). */
void dgp_sim_report_build(dg_sim *sim, int rc, const char *mode_desc, dg_diag *diag) {
  char path[DG_ERROR_PATH_LEN] = "";
  if (sim->sv.ws.errblock >= 0)
    dgp_pointer_append(path, sizeof path, "/blocks", sim->g->blocks[sim->sv.ws.errblock].id);
  if (mode_desc && mode_desc[0])
    dgp_diag_add(diag, rc, path, "%s (in mode %s)", sim->sv.ws.errmsg, mode_desc);
  else
    dgp_diag_add(diag, rc, path, "%s", sim->sv.ws.errmsg);
}

dg_sim *dg_sim_new(const dg_graph *graph, dg_error *err) {
  dg_diag d;
  dgp_error_clear(err);
  if (!graph) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no graph given");
    return NULL;
  }
  dgp_diag_init(&d, graph->file, NULL, NULL);
  dg_sim *sim = dgp_sim_create(graph, &d);
  if (sim) {
    int rc = dgp_solver_build(sim);
    if (rc != DG_OK) {
      dgp_sim_report_build(sim, rc, "", &d);
      dg_sim_free(sim);
      sim = NULL;
    } else {
      dgp_solver_speeds(sim, sim->sv.q, sim->sv.x);
      dgp_solver_settle_motion(sim);
      sim->sv.audit.ke_start = dg_sim_kinetic_energy(sim);
      dgp_bind_eval(sim);
      dgp_compile_attach(sim, graph->compiled); /* a unit compiled for the graph: its modes */
    }
  }
  if (!sim)
    dgp_diag_to_error(&d, err);
  return sim;
}

void dg_sim_free(dg_sim *sim) {
  if (!sim)
    return;
  dgp_compile_free(sim);
  for (int i = 0; sim->blocks && i < sim->nb; i++) {
    dg_block *b = &sim->blocks[i];
    if (b->data && b->klass->destroy)
      b->klass->destroy(b);
    free(b->data);
  }
  for (int i = 0; i < sim->n_inputs; i++)
    free(sim->input_names[i]);
  for (int i = 0; i < sim->n_channels; i++)
    free(sim->channel_names[i]);
  free(sim->channel_names);
  free(sim->channel);
  free(sim->in_ptr);
  free(sim->given_node);
  free(sim->prop_node);
  free(sim->given_val);
  free(sim->prop_val);
  free(sim->prop_why);
  free(sim->choice);
  free(sim->slot_val);
  free(sim->slots);
  free(sim->input_integer);
  for (int i = 0; i < sim->n_signals; i++)
    free(sim->signals[i].name);
  for (int i = 0; i < sim->n_port_signals; i++)
    free(sim->port_signals[i].name);
  free(sim->port_signals);
  for (int i = 0; sim->timed && i < sim->n_timed; i++) {
    free(sim->timed[i].t);
    free(sim->timed[i].v);
  }
  free(sim->timed);
  free(sim->evb);
  free(sim->ev_off);
  free(sim->idle);
  free(sim->motion_blocks);
  free(sim->motion_slots);
  free(sim->motion_slot);
  free(sim->input_names);
  free(sim->input);
  free(sim->signals);
  free(sim->pre);
  free(sim->torque);
  free(sim->post);
  free(sim->hold);
  free(sim->state_blocks);
  free(sim->var_blocks);
  free(sim->blocks);
  dgp_solver_free(sim);
  dgp_graph_release(sim->g);
  free(sim);
}

const dg_graph *dg_sim_graph(const dg_sim *sim) { return sim->g; }

/* ------------------------------------------------------------------------ */
/* Stepping, signals and state queries                                      */

int dg_sim_step(dg_sim *sim, double dt) {
  if (sim->failed)
    return sim->err.code;
  if (sim->bad_input >= 0) {
    dgp_error_set(&sim->err, DG_ERR_RANGE, sim->g->file, "",
                 "at t = %.6g s: input \"%s\" was set to %g; inputs must be finite", sim->t,
                 sim->input_names[sim->bad_input], sim->bad_value);
    sim->failed = true;
    return DG_ERR_RANGE;
  }
  if (!(dt > 0.0) || !isfinite(dt)) {
    dgp_error_set(&sim->err, DG_ERR_USAGE, sim->g->file, "", "step size must be > 0 (got %g)",
                 dt);
    return DG_ERR_USAGE;
  }
  return dgp_solver_step(sim, dt);
}

const dg_error *dg_sim_last_error(const dg_sim *sim) { return &sim->err; }
double dg_sim_time(const dg_sim *sim) { return sim->t; }
int dg_sim_signal_count(const dg_sim *sim) { return sim->n_signals; }
/* A signal id's entry: a class signal, or a port's angle after them. */
static const dg_signal_entry *signal_entry(const dg_sim *sim, int id) {
  if (id >= 0 && id < sim->n_signals)
    return &sim->signals[id];
  if (id >= sim->n_signals && id < sim->n_signals + sim->n_port_signals)
    return &sim->port_signals[id - sim->n_signals];
  return NULL;
}
const char *dg_sim_signal_name(const dg_sim *sim, int id) {
  const dg_signal_entry *e = signal_entry(sim, id);
  return e ? e->name : NULL;
}
const char *dg_sim_signal_unit(const dg_sim *sim, int id) {
  const dg_signal_entry *e = signal_entry(sim, id);
  return e ? e->unit : NULL;
}
int dg_sim_signal_find(const dg_sim *sim, const char *name) {
  for (int i = 0; name && i < sim->n_signals; i++)
    if (strcmp(sim->signals[i].name, name) == 0)
      return i;
  for (int i = 0; name && i < sim->n_port_signals; i++)
    if (strcmp(sim->port_signals[i].name, name) == 0)
      return sim->n_signals + i;
  return -1;
}

double dg_sim_signal(const dg_sim *sim, int id) {
  if (id >= sim->n_signals && id < sim->n_signals + sim->n_port_signals) {
    const dg_signal_entry *e = &sim->port_signals[id - sim->n_signals];
    if (e->port_kind == DG_PORT_SIGNAL_ANGLE)
      return sim->keep & DG_KEEP_ANGLES ? sim->sv.mot.theta[e->node] : NAN;
    /* the torque's cache is the solver's, not the simulation's state */
    return dgp_solver_port_torque((dg_sim *)sim, e->block, e->index);
  }
  if (id < 0 || id >= sim->n_signals)
    return NAN;
  const dg_signal_entry *e = &sim->signals[id];
  if (e->node >= 0)
    return e->scale * sim->sv.x[e->node];
  const dg_block *b = &sim->blocks[e->block];
  dg_ctx ctx = sim->ctx;
  ctx.t = sim->t;
  ctx.speed = sim->sv.x;
  ctx.state = sim->sv.s;
  ctx.state_rate = ctx.state_commit = NULL;
  return b->klass->signal(b, &ctx, e->index);
}

int dg_sim_signal_by_name(const dg_sim *sim, const char *name, double *value, dg_error *err) {
  int id = dg_sim_signal_find(sim, name);
  if (id < 0) {
    const char *names[1024];
    int n = sim->n_signals < 1024 ? sim->n_signals : 1024;
    for (int i = 0; i < n; i++)
      names[i] = sim->signals[i].name;
    const char *s = dg_suggest(name ? name : "", names, n);
    if (s)
      dgp_error_set(err, DG_ERR_UNKNOWN, "", "", "unknown signal \"%s\"; did you mean \"%s\"?",
                   name ? name : "", s);
    else
      dgp_error_set(err, DG_ERR_UNKNOWN, "", "", "unknown signal \"%s\"", name ? name : "");
    return DG_ERR_UNKNOWN;
  }
  if (id >= sim->n_signals && !(sim->keep & DG_KEEP_ANGLES) &&
      sim->port_signals[id - sim->n_signals].port_kind == DG_PORT_SIGNAL_ANGLE) {
    dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "",
                  "signal \"%s\": this simulation keeps no angles (dg_sim_set_keep without "
                  "DG_KEEP_ANGLES)",
                  name);
    if (value)
      *value = NAN;
    return DG_ERR_USAGE;
  }
  if (value)
    *value = dg_sim_signal(sim, id);
  return DG_OK;
}

/* The energy audit starts again from the current state. */
static void reset_audit(dg_sim *sim) {
  memset(sim->sv.audit.work, 0, sizeof(double) * (size_t)sim->nb);
  sim->sv.audit.eff_loss = sim->sv.audit.impact_loss = 0.0;
  sim->sv.audit.ke_start = dg_sim_kinetic_energy(sim);
}

static void remember_given(dg_sim *sim, int node, double v) {
  for (int k = 0; k < sim->n_given; k++)
    if (sim->given_node[k] == node) {
      sim->given_val[k] = v;
      return;
    }
  if (sim->n_given < sim->nn) {
    sim->given_node[sim->n_given] = node;
    sim->given_val[sim->n_given++] = v;
  }
}

int dg_sim_set_initial(dg_sim *sim, int n, const int *ids, const double *values, dg_error *err) {
  dgp_error_clear(err);
  sim->input_epoch++;
  int *nodes = calloc((size_t)(n > 0 ? n : 1), sizeof *nodes);
  double *speeds = calloc((size_t)(n > 0 ? n : 1), sizeof *speeds);
  int ns = 0, rc = DG_OK;
  if (!nodes || !speeds) {
    rc = DG_ERR_NOMEM;
    dgp_error_set(err, rc, sim->g->file, "", "out of memory");
  }
  for (int i = 0; rc == DG_OK && i < n; i++) {
    if (ids[i] >= sim->n_signals && ids[i] < sim->n_signals + sim->n_port_signals &&
        sim->port_signals[ids[i] - sim->n_signals].port_kind == DG_PORT_SIGNAL_ANGLE &&
        isfinite(values[i])) { /* a port's angle: its shaft's */
      dgp_solver_set_angle(sim, sim->port_signals[ids[i] - sim->n_signals].node, values[i]);
      continue;
    }
    if (ids[i] < 0 || ids[i] >= sim->n_signals) {
      rc = DG_ERR_UNKNOWN;
      dgp_error_set(err, rc, sim->g->file, "", "unknown signal id %d", ids[i]);
      break;
    }
    if (!isfinite(values[i])) {
      rc = DG_ERR_RANGE;
      dgp_error_set(err, rc, sim->g->file, "", "initial value of %s must be finite",
                   sim->signals[ids[i]].name);
      break;
    }
    const dg_signal_entry *e = &sim->signals[ids[i]];
    if (e->node >= 0) {
      nodes[ns] = e->node;
      speeds[ns++] = values[i] / e->scale;
      continue;
    }
    dg_block *b = &sim->blocks[e->block];
    dg_ctx ctx = sim->ctx;
    ctx.t = sim->t;
    ctx.speed = sim->sv.x;
    ctx.state = ctx.state_commit = sim->sv.s;
    ctx.state_rate = NULL;
    if (!b->klass->set_signal || b->klass->set_signal(b, &ctx, e->index, values[i]) != 0) {
      rc = DG_ERR_RANGE;
      dgp_error_set(err, rc, sim->g->file, "", "signal %s cannot be set as an initial value",
                   e->name);
    }
  }
  if (rc == DG_OK) {
    char why[DG_ERROR_TEXT_LEN];
    rc = dgp_solver_set_speeds(sim, ns, nodes, speeds, why, sizeof why);
    if (rc != DG_OK) {
      dgp_error_set(err, rc, sim->g->file, "", "%s", why);
    } else {
      reset_audit(sim);
      for (int i = 0; i < ns; i++) /* kept exactly by dg_sim_start */
        remember_given(sim, nodes[i], speeds[i]);
    }
  }
  sim->ctx.speed = sim->sv.x;
  sim->ctx.state = sim->sv.s;
  dgp_bind_eval(sim);
  free(nodes);
  free(speeds);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* A consistent start                                                       */

void dg_ctx_start_speed_why(dg_ctx *ctx, const dg_block *b, int port, double speed,
                            const char *why) {
  dg_sim *sim = ctx->sim;
  if (!sim->starting || !isfinite(speed) || sim->n_prop >= sim->nn)
    return;
  sim->prop_node[sim->n_prop] = b->node[port];
  sim->prop_why[sim->n_prop] = why;
  sim->prop_val[sim->n_prop++] = speed;
}

void dg_ctx_start_speed(dg_ctx *ctx, const dg_block *b, int port, double speed) {
  dg_ctx_start_speed_why(ctx, b, port, speed, NULL);
}

/* Remembers proposal i of block b for dg_sim_start_choice. */
static void note_choice(dg_sim *sim, int b, int i, bool taken) {
  if (sim->n_choice >= 2 * (sim->nn > 0 ? sim->nn : 1))
    return;
  struct dgp_start_choice *c = &sim->choice[sim->n_choice++];
  c->block = b;
  c->node = sim->prop_node[i];
  c->proposed = sim->prop_val[i];
  c->why = sim->prop_why[i];
  c->taken = taken;
}

int dg_sim_start_choice(const dg_sim *sim, int i, dg_start_choice *out) {
  if (!sim)
    return 0;
  if (out && i >= 0 && i < sim->n_choice) {
    const struct dgp_start_choice *c = &sim->choice[i];
    out->block = sim->blocks[c->block].id;
    out->why = c->why ? c->why : "";
    dgp_node_label(sim, c->node, out->shaft, sizeof out->shaft);
    out->proposed = c->proposed;
    out->speed = c->speed;
    out->taken = c->taken;
    out->linear = sim->g->nodes[c->node].domain == DG_LINEAR;
  }
  return sim->n_choice;
}

static bool is_given(const dg_sim *sim, int node) {
  for (int k = 0; k < sim->n_given; k++)
    if (sim->given_node[k] == node)
      return true;
  return false;
}

/* Rounds of DG_START_CHECK at most (each after a mode a check took). */
#define START_CHECK_ROUNDS 4

/* The blocks' start hooks: proposals from the road back to the sources,
 * each taken when the speeds given and taken so far leave its shaft free
 * (the projection meets them all exactly, else it is dropped), then the
 * checks. The given speeds are remembered as taken for the next call. */
int dg_sim_start(dg_sim *sim, dg_error *err) {
  dgp_error_clear(err);
  if (sim->failed) {
    if (err)
      *err = sim->err;
    return sim->err.code;
  }
  dgp_solver_inputs_start(sim, sim->t);
  dg_ctx *ctx = &sim->ctx;
  ctx->t = sim->t;
  ctx->dt = 0.0;
  ctx->speed = sim->sv.x;
  ctx->torque = sim->sv.tau;
  ctx->state = ctx->state_commit = sim->sv.s;
  ctx->state_rate = NULL;
  int n_taken = sim->n_given; /* given speeds first, then what is taken */
  char why[DG_ERROR_TEXT_LEN];
  sim->starting = true;
  sim->n_choice = 0;
  for (int k = 0; k < sim->nb && !sim->failed; k++) {
    dg_block *b = &sim->blocks[sim->g->order[k]];
    if (!b->klass->start)
      continue;
    sim->n_prop = 0;
    sim->topo_request = false;
    dgp_bind_eval(sim);
    b->klass->start(b, ctx, DG_START_PROPOSE);
    if (!sim->failed && sim->topo_request) {
      if (dgp_solver_change_topology(sim) == DG_OK &&
          dgp_solver_set_speeds(sim, n_taken, sim->given_node, sim->given_val, why, sizeof why) !=
              DG_OK)
        dgp_sim_fail(sim, DG_ERR_RANGE, "the start mode of block \"%s\" contradicts the initial "
                    "values: %s", b->id, why);
    }
    for (int i = 0; i < sim->n_prop && !sim->failed; i++) {
      int node = sim->prop_node[i];
      if (is_given(sim, node) || n_taken >= sim->nn)
        continue; /* already fixed: given, or taken from another block */
      sim->given_node[n_taken] = node;
      sim->given_val[n_taken] = sim->prop_val[i];
      /* the shaft is free to turn so when the projection can meet it with
       * everything taken before; q stays as it was when it cannot */
      bool taken = dgp_solver_set_speeds(sim, n_taken + 1, sim->given_node, sim->given_val, why,
                                         sizeof why) == DG_OK;
      if (taken)
        sim->n_given = ++n_taken;
      note_choice(sim, sim->g->order[k], i, taken);
    }
  }
  sim->starting = false;
  sim->n_given = n_taken;
  ctx->speed = sim->sv.x;
  ctx->state = ctx->state_commit = sim->sv.s;
  dgp_bind_eval(sim);
  /* The checks. A check may change its block's mode where the speeds allow
   * it (a spring_damper turns rigid to read the torque a rigid line would
   * carry, then back with its static twist): the mode is built keeping
   * every speed and the checks run again, a few rounds at most. */
  for (int round = 0; !sim->failed; round++) {
    int asked = -1;
    for (int k = sim->nb - 1; k >= 0 && !sim->failed; k--) {
      dg_block *b = &sim->blocks[sim->g->order[k]];
      sim->topo_request = false;
      if (b->klass->start)
        b->klass->start(b, ctx, DG_START_CHECK);
      if (sim->topo_request)
        asked = sim->g->order[k];
    }
    if (sim->failed || asked < 0)
      break;
    const char *id = sim->blocks[asked].id;
    if (round == START_CHECK_ROUNDS - 1) {
      dgp_sim_fail(sim, DG_ERR_BLOCK, "the start checks of block \"%s\" did not settle", id);
      break;
    }
    if (dgp_solver_change_topology(sim) == DG_OK &&
        dgp_solver_set_speeds(sim, n_taken, sim->given_node, sim->given_val, why, sizeof why) !=
            DG_OK)
      dgp_sim_fail(sim, DG_ERR_RANGE, "the mode block \"%s\" took in its start check "
                  "contradicts the initial values: %s", id, why);
    ctx->speed = sim->sv.x;
    ctx->state = ctx->state_commit = sim->sv.s;
    dgp_bind_eval(sim);
  }
  sim->topo_request = false;
  ctx->state_commit = NULL;
  for (int i = 0; i < sim->n_choice; i++)
    sim->choice[i].speed = sim->sv.x[sim->choice[i].node];
  if (sim->failed) {
    if (err)
      *err = sim->err;
    return sim->err.code;
  }
  reset_audit(sim);
  return DG_OK;
}

int dg_sim_dof_count(const dg_sim *sim) { return sim->sv.ndof; }
int dg_sim_node_count(const dg_sim *sim) { return sim->nn; }
long dg_sim_topology_changes(const dg_sim *sim) { return sim->topo_changes; }
long dg_sim_step_count(const dg_sim *sim) { return sim->steps; }
long dg_sim_event_count(const dg_sim *sim) { return sim->events; }
long dg_sim_segment_count(const dg_sim *sim) { return sim->segments; }
double dg_sim_last_event_time(const dg_sim *sim) { return sim->last_event; }

double dg_sim_kinetic_energy(const dg_sim *sim) {
  double e = 0.0;
  for (int n = 0; n < sim->nn; n++)
    e += 0.5 * sim->sv.inertia[n] * sim->sv.x[n] * sim->sv.x[n];
  return e;
}

void dg_sim_energy(const dg_sim *sim, dg_energy *e) {
  memset(e, 0, sizeof *e);
  e->kinetic = dg_sim_kinetic_energy(sim);
  e->kinetic_start = sim->sv.audit.ke_start;
  if (!(sim->keep & DG_KEEP_WORK)) { /* not kept: no plausible zeros */
    e->work_in = e->work_out = e->efficiency_loss = e->impact_loss = e->balance_error = NAN;
    return;
  }
  for (int i = 0; i < sim->nb; i++) {
    if (sim->sv.audit.work[i] > 0.0)
      e->work_in += sim->sv.audit.work[i];
    else
      e->work_out += sim->sv.audit.work[i];
  }
  e->efficiency_loss = sim->sv.audit.eff_loss;
  e->impact_loss = sim->sv.audit.impact_loss;
  e->balance_error = e->kinetic - e->kinetic_start -
                     (e->work_in + e->work_out + e->efficiency_loss + e->impact_loss);
}

double dg_sim_block_work(const dg_sim *sim, int index) {
  return index >= 0 && index < sim->nb && (sim->keep & DG_KEEP_WORK) ? sim->sv.audit.work[index]
                                                                     : NAN;
}

int dg_sim_set_keep(dg_sim *sim, unsigned keep, dg_error *err) {
  if (keep & ~(unsigned)DG_KEEP_ALL) {
    dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "",
                  "what a step keeps: %#x has bits beyond DG_KEEP_WORK (1) and DG_KEEP_ANGLES (2)",
                  keep);
    return DG_ERR_USAGE;
  }
  if (sim->steps > 0) {
    dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "",
                  "what a step keeps is set before the first step (%ld steps taken): the work "
                  "and the angles are sums from the start",
                  sim->steps);
    return DG_ERR_USAGE;
  }
  sim->keep = keep;
  dgp_compiled_stale(sim); /* a plain mode's segment is chosen by what is kept */
  return DG_OK;
}

unsigned dg_sim_keep(const dg_sim *sim) { return sim->keep; }

unsigned dg_sim_signal_keep(const dg_sim *sim, int id) {
  const dg_signal_entry *e = id >= sim->n_signals ? signal_entry(sim, id) : NULL;
  return e && e->port_kind == DG_PORT_SIGNAL_ANGLE ? (unsigned)DG_KEEP_ANGLES : 0u;
}

dg_block *dg_sim_block(dg_sim *sim, const char *id) {
  for (int i = 0; id && i < sim->nb; i++)
    if (strcmp(sim->blocks[i].id, id) == 0)
      return &sim->blocks[i];
  return NULL;
}

void dg_sim_momentum(const dg_sim *sim, double *p) {
  for (int j = 0; j < sim->sv.ndof; j++)
    p[j] = 0.0;
  for (int a = 0; a < sim->sv.nnz; a++) {
    int n = sim->sv.gs_node[a];
    p[sim->sv.gs_dof[a]] += sim->sv.gs_val[a] * sim->sv.inertia[n] * sim->sv.x[n];
  }
}

void dg_sim_mass_matrix(const dg_sim *sim, double *m) {
  for (int i = 0; i < sim->sv.ndof; i++)
    for (int j = 0; j < sim->sv.ndof; j++)
      m[i * sim->sv.ndof + j] = sim->sv.M[(size_t)i * (size_t)sim->sv.ndof + (size_t)j]; /* stride n_dof */
}

double dg_sim_port_speed(const dg_sim *sim, const char *block_port) {
  const char *dot = block_port ? strchr(block_port, '.') : NULL;
  if (!dot)
    return NAN;
  for (int i = 0; i < sim->nb; i++) {
    const dg_block *b = &sim->blocks[i];
    if (strlen(b->id) != (size_t)(dot - block_port) ||
        strncmp(b->id, block_port, (size_t)(dot - block_port)) != 0)
      continue;
    int p = dgp_class_port_find(b->klass, dot + 1);
    return p >= 0 ? sim->sv.x[b->node[p]] : NAN;
  }
  return NAN;
}

/* ------------------------------------------------------------------------ */
/* The boundary a host sees                                                 */

int dg_sim_boundary_motion(dg_sim *sim, int n, const char *const *ids, double *inertia,
                           double *dforce_dspeed, dg_error *err) {
  dgp_error_clear(err);
  if (!sim || n < 0 || (n > 0 && !ids)) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no simulation or block ids given");
    return DG_ERR_USAGE;
  }
  int *blocks = calloc((size_t)(n > 0 ? n : 1), sizeof *blocks);
  if (!blocks) {
    dgp_error_set(err, DG_ERR_NOMEM, "", "", "out of memory");
    return DG_ERR_NOMEM;
  }
  int rc = DG_OK;
  for (int i = 0; i < n && rc == DG_OK; i++) {
    blocks[i] = ids[i] ? dgp_graph_block_find_n(sim->g, ids[i], strlen(ids[i])) : -1;
    if (blocks[i] < 0) {
      rc = DG_ERR_UNKNOWN;
      dgp_error_set(err, rc, sim->g->file, "", "no block \"%s\" in the graph",
                   ids[i] ? ids[i] : "");
    }
  }
  char why[DG_ERROR_TEXT_LEN];
  if (rc == DG_OK &&
      (rc = dgp_solver_motion_boundary(sim, n, blocks, inertia, dforce_dspeed, why, sizeof why)) !=
          DG_OK)
    dgp_error_set(err, rc, sim->g->file, "", "%s", why);
  free(blocks);
  return rc;
}

int dg_sim_boundary_ports(dg_sim *sim, int n, const char *const *ports, double *mobility,
                          dg_error *err) {
  dgp_error_clear(err);
  if (!sim || n < 0 || (n > 0 && (!ports || !mobility))) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no simulation, ports or output given");
    return DG_ERR_USAGE;
  }
  int *nodes = calloc((size_t)(n > 0 ? n : 1), sizeof *nodes);
  if (!nodes) {
    dgp_error_set(err, DG_ERR_NOMEM, "", "", "out of memory");
    return DG_ERR_NOMEM;
  }
  int rc = DG_OK;
  for (int i = 0; i < n && rc == DG_OK; i++) {
    const char *dot = ports[i] ? strchr(ports[i], '.') : NULL;
    int b = dot ? dgp_graph_block_find_n(sim->g, ports[i], (size_t)(dot - ports[i])) : -1;
    int p = b >= 0 ? dgp_class_port_find(sim->blocks[b].klass, dot + 1) : -1;
    if (p < 0 || p >= sim->g->blocks[b].num_ports) {
      rc = DG_ERR_UNKNOWN;
      dgp_error_set(err, rc, sim->g->file, "", "no port \"%s\" in the graph (\"block.port\")",
                   ports[i] ? ports[i] : "");
    } else {
      nodes[i] = sim->blocks[b].node[p];
    }
  }
  if (rc == DG_OK)
    rc = dgp_solver_port_mobility(sim, n, nodes, mobility);
  if (rc == DG_ERR_NOMEM)
    dgp_error_set(err, rc, "", "", "out of memory");
  free(nodes);
  return rc;
}

int dg_sim_check_coupling(dg_sim *sim, const char *port, double dtorque_dspeed, double dt,
                          dg_error *err) {
  dgp_error_clear(err);
  if (!(dt > 0.0) || !isfinite(dtorque_dspeed) || !isfinite(dt)) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "the slope must be finite and the step > 0");
    return DG_ERR_USAGE;
  }
  double y;
  const char *ports[1] = {port};
  int rc = dg_sim_boundary_ports(sim, 1, ports, &y, err);
  if (rc != DG_OK)
    return rc;
  if (!(y > 0.0)) {
    dgp_error_set(err, DG_ERR_RANGE, sim->g->file, "",
                 "the shaft at %s does not move in the current mode: nothing to couple", port);
    return DG_ERR_RANGE;
  }
  double j = 1.0 / y, ratio = dtorque_dspeed * dt * y;
  if (ratio >= 0.0 && ratio < 2.0)
    return DG_OK;
  dgp_error_set(err, DG_ERR_RANGE, sim->g->file, "",
               "an explicit coupling at %s cannot be stable at dt = %g s: inertia J = %g kg*m^2 "
               "there, slope c = %g N*m*s/rad, error x %g per step (1 - c*dt/J); evaluate the "
               "force inside the step (a hub block) or take dt below 2J/c = %g s",
               port, dt, j, dtorque_dspeed, 1.0 - ratio,
               dtorque_dspeed > 0.0 ? 2.0 * j / dtorque_dspeed : 0.0);
  return DG_ERR_RANGE;
}
