/* A simulation's state as bytes, one writer and one reader for every copy
 * of it: dg_sim_snapshot / dg_sim_restore (the public snapshots),
 * dgp_sim_state_write / _read (checksummed bytes for another process: the
 * FMU runtime's serialized states) and dgp_sim_state_save / _load (the
 * same in memory: a cycle run repeating a step). What they copy: the
 * solver's scalars and arrays, every block's data, the input values and
 * their schedules' places, the channels, time and counters (lib/sim.h). */
#include "sim.h"
#include "solver/solver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t dgp_sim_data_size(const dg_sim *sim) {
  size_t n = 0;
  for (int i = 0; i < sim->nb; i++)
    n += sim->blocks[i].klass->data_size;
  return n;
}

void dgp_sim_data_copy(const dg_sim *sim, unsigned char *out) {
  for (int i = 0; i < sim->nb; i++) {
    size_t ds = sim->blocks[i].klass->data_size;
    if (ds)
      memcpy(out, sim->blocks[i].data, ds);
    out += ds;
  }
}

/* ------------------------------------------------------------------------ */
/* State as bytes                                                           */

#define STATE_MAGIC "DGSTATE1"

typedef struct state_header {
  char magic[8];
  uint32_t solver_size; /* sizeof(dg_solver) of the writer */
  int32_t nb, nn, ns, n_inputs, n_channels;
  uint64_t data_size, hot_size, total;
  /* 0: the mode's plan is in the bytes; else they lack it, and this is
   * the writer's plan_gen then (a retry's state: dgp_sim_state_save), or
   * PLAN_REBUILD (a snapshot of a large plan: built again at restore) */
  uint64_t plan_gen;
  uint64_t checksum; /* FNV-1a of everything after the header */
} state_header;

typedef struct state_scalars {
  double t, ctx_t, ctx_dt, last_event;
  int64_t steps, topo_changes, events, segments;
} state_scalars;

static size_t hot_size(dg_sim *sim) { return dgp_solver_state_bytes(sim); }

/* plan_gen of a state whose plan is built again whatever the reader has.
 * A snapshot leaves out a plan larger than DGP_PLAN_LARGE: its arrays are
 * sized for the graph's worst mode (node × node), so a whole copy of a
 * 512-gear chain's was 334 MB, most of it zeros, where a mode build takes
 * milliseconds (smaller plans are copied: a restore then builds nothing).
 * The reader's plan numbers are not trusted for it: a snapshot may be
 * restored into another simulation of the graph, whose numbers are its
 * own. */
#define PLAN_REBUILD UINT64_MAX

size_t dgp_sim_state_size(const dg_sim *csim) {
  dg_sim *sim = (dg_sim *)csim; /* the solver's list of arrays is built from a non-const sim */
  return sizeof(state_header) + sizeof(dg_solver) + sizeof(state_scalars) + hot_size(sim) +
         dgp_sim_data_size(sim) + sizeof(double) * (size_t)(sim->n_inputs + sim->n_channels) +
         sizeof(int32_t) * (size_t)sim->n_inputs;
}

uint64_t dgp_fnv1a_add(uint64_t h, const void *bytes, size_t n) {
  const unsigned char *p = bytes;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t dgp_fnv1a(const unsigned char *p, size_t n) {
  return dgp_fnv1a_add(1469598103934665603ull, p, n);
}

static void header_of(dg_sim *sim, state_header *h) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, STATE_MAGIC, sizeof h->magic);
  h->solver_size = (uint32_t)sizeof(dg_solver);
  h->nb = sim->nb;
  h->nn = sim->nn;
  h->ns = sim->ns;
  h->n_inputs = sim->n_inputs;
  h->n_channels = sim->n_channels;
  h->data_size = dgp_sim_data_size(sim);
  h->hot_size = hot_size(sim);
  h->total = dgp_sim_state_size(sim);
}

/* What a state's bytes are for: another process (checksummed), a snapshot
 * in memory (whole), or a retry of the same simulation (without the mode's
 * plan, which its reader has or builds again). */
typedef enum state_use { STATE_BYTES, STATE_SNAPSHOT, STATE_RETRY } state_use;

static size_t state_write(dg_sim *sim, unsigned char *buf, size_t size, state_use use) {
  if (!sim || !buf || sim->failed)
    return 0;
  bool checksum = use == STATE_BYTES;
  /* with variable kinematics every stage refreshes the plan: copied */
  bool plan = use == STATE_BYTES || sim->sv.variable_kinematics ||
              (use == STATE_SNAPSHOT && dgp_plan_bytes(sim) <= DGP_PLAN_LARGE);
  size_t total = dgp_sim_state_size(sim);
  if (size < total)
    return 0;
  state_header h;
  header_of(sim, &h);
  h.plan_gen = plan ? 0 : use == STATE_RETRY ? sim->plan_gen : PLAN_REBUILD;
  unsigned char *p = buf + sizeof h;
  memcpy(p, &sim->sv, sizeof(dg_solver));
  p += sizeof(dg_solver);
  state_scalars sc = {sim->t,     sim->ctx.t,        sim->ctx.dt, sim->last_event,
                      sim->steps, sim->topo_changes, sim->events, sim->segments};
  memcpy(p, &sc, sizeof sc);
  p += sizeof sc;
  dgp_solver_save(sim, p, checksum, plan);
  p += h.hot_size;
  dgp_sim_data_copy(sim, p);
  p += h.data_size;
  memcpy(p, sim->input, sizeof(double) * (size_t)sim->n_inputs);
  p += sizeof(double) * (size_t)sim->n_inputs;
  for (int i = 0; i < sim->n_inputs; i++) {
    const dg_timed_input *ti = dgp_sim_timed_find(sim, i);
    int32_t piece = ti ? ti->piece : -1;
    memcpy(p, &piece, sizeof piece);
    p += sizeof piece;
  }
  if (sim->n_channels > 0)
    memcpy(p, sim->channel, sizeof(double) * (size_t)sim->n_channels);
  h.checksum = checksum ? dgp_fnv1a(buf + sizeof h, total - sizeof h) : 0;
  memcpy(buf, &h, sizeof h);
  return total;
}

size_t dgp_sim_state_write(dg_sim *sim, unsigned char *buf, size_t size) {
  return state_write(sim, buf, size, STATE_BYTES);
}

size_t dgp_sim_state_save(dg_sim *sim, unsigned char *buf, size_t size) {
  return state_write(sim, buf, size, STATE_RETRY);
}

static int state_refused(dg_error *err, const dg_sim *sim, const char *why) {
  dgp_error_set(err, DG_ERR_USAGE, sim ? sim->g->file : "", "", "not a state of this simulation: %s",
               why);
  return DG_ERR_USAGE;
}

/* A retry's state whose plan is not the one in the arrays: the plan built
 * again from the restored blocks (constant kinematics: a function of their
 * modes alone), then the restored scalars and arrays put back over what
 * the build wrote beside it. The build must give the saved mode (its
 * sizes are compared): a block whose topology depends on anything else is
 * refused rather than run on a plan not its own. */
static int plan_rebuild(dg_sim *sim, const state_header *h, const unsigned char *arrays,
                        dg_error *err) {
  dg_solver restored = sim->sv;
  int rc = dgp_solver_build(sim);
  bool same = rc == DG_OK && sim->sv.ndof == restored.ndof && sim->sv.nnz == restored.nnz &&
              sim->sv.ws.nties == restored.ws.nties && sim->sv.ws.nactive == restored.ws.nactive &&
              sim->sv.ws.nmesh == restored.ws.nmesh && sim->sv.tree.on == restored.tree.on;
  dgp_solver_load(sim, &restored, arrays, false); /* the arrays: the pointers are the build's */
  if (!same) {
    state_refused(&sim->err, sim, "its mode could not be built again");
    sim->failed = true;
    return state_refused(err, sim, "its mode could not be built again");
  }
  if (h->plan_gen != PLAN_REBUILD) /* a retry's: the plan is the writer's again */
    sim->plan_gen = h->plan_gen;
  return DG_OK;
}

static int state_read(dg_sim *sim, const unsigned char *buf, size_t size, const unsigned char *keep,
                      const unsigned char *keep_values, bool checksum, dg_error *err) {
  dgp_error_clear(err);
  if (!sim || !buf)
    return state_refused(err, sim, "no bytes given");
  state_header want, h;
  header_of(sim, &want);
  if (size < sizeof h)
    return state_refused(err, sim, "too short");
  memcpy(&h, buf, sizeof h);
  if (memcmp(h.magic, STATE_MAGIC, sizeof h.magic) != 0)
    return state_refused(err, sim, "no state header");
  if (h.solver_size != want.solver_size || h.nb != want.nb || h.nn != want.nn || h.ns != want.ns ||
      h.n_inputs != want.n_inputs || h.n_channels != want.n_channels ||
      h.data_size != want.data_size || h.hot_size != want.hot_size || h.total != want.total)
    return state_refused(err, sim, "written for another graph or build");
  if (size != want.total)
    return state_refused(err, sim, "wrong size");
  if (checksum && dgp_fnv1a(buf + sizeof h, size - sizeof h) != h.checksum)
    return state_refused(err, sim, "checksum mismatch (damaged bytes)");
  if (h.plan_gen != 0 && (checksum || keep))
    return state_refused(err, sim, "a retry's state (without its mode's plan)");
  const unsigned char *p = buf + sizeof h;
  dg_solver saved;
  memcpy(&saved, p, sizeof saved);
  p += sizeof saved;
  if (saved.ndof < 0 || saved.ndof > sim->nn)
    return state_refused(err, sim, "bad degree-of-freedom count");
  state_scalars sc;
  memcpy(&sc, p, sizeof sc);
  p += sizeof sc;
  /* a retry's state lacks the plan: the one in the arrays is it, or the
   * plan is built again below, once the blocks are restored */
  bool plan_here = h.plan_gen == 0 || (h.plan_gen != PLAN_REBUILD && h.plan_gen == sim->plan_gen);
  const unsigned char *arrays = p;
  dgp_solver_load(sim, &saved, p, h.plan_gen == 0);
  if (h.plan_gen == 0) { /* whole bytes, from a snapshot or elsewhere: */
    sim->plan_gen = ++sim->plan_builds; /* the arrays hold a plan no build numbered */
    dgp_cache_forget(sim);
  }
  if (h.plan_gen == 0 || h.plan_gen == PLAN_REBUILD)
    sim->params_epoch++; /* maybe another simulation's: the blocks' memos are not trusted */
  p += h.hot_size;
  for (int b = 0; b < sim->nb; b++) {
    size_t ds = sim->blocks[b].klass->data_size;
    unsigned char *d = sim->blocks[b].data;
    if (!keep) {
      if (ds)
        memcpy(d, p, ds);
    } else {
      for (size_t k = 0; k < ds; k++)
        if (!keep[k])
          d[k] = p[k];
        else if (keep_values)
          d[k] = keep_values[k];
    }
    p += ds;
    if (keep)
      keep += ds;
    if (keep_values)
      keep_values += ds;
  }
  memcpy(sim->input, p, sizeof(double) * (size_t)sim->n_inputs);
  p += sizeof(double) * (size_t)sim->n_inputs;
  for (int i = 0; i < sim->n_inputs; i++) {
    int32_t piece;
    memcpy(&piece, p, sizeof piece);
    p += sizeof piece;
    dg_timed_input *ti = dgp_sim_timed_find(sim, i);
    if (ti && !ti->fn)
      ti->piece = piece < ti->n ? piece : ti->n - 1;
  }
  if (sim->n_channels > 0)
    memcpy(sim->channel, p, sizeof(double) * (size_t)sim->n_channels);
  /* as dg_sim_restore leaves a simulation */
  sim->t = sc.t;
  sim->last_event = sc.last_event;
  sim->steps = (long)sc.steps;
  sim->topo_changes = (long)sc.topo_changes;
  sim->events = (long)sc.events;
  sim->segments = (long)sc.segments;
  sim->ctx.t = sc.ctx_t;
  sim->ctx.dt = sc.ctx_dt;
  sim->ctx.speed = sim->sv.x;
  sim->ctx.torque = sim->sv.tau;
  sim->ctx.normal_load = sim->sv.normal_load;
  sim->ctx.state = sim->sv.s;
  sim->ctx.state_rate = sim->ctx.state_commit = NULL;
  sim->topo_request = false;
  sim->failed = false;
  dgp_error_clear(&sim->err);
  sim->sv.ports.valid = false;
  if (!plan_here) {
    int rc = plan_rebuild(sim, &h, arrays, err);
    if (rc != DG_OK)
      return rc;
  }
  dgp_bind_eval(sim);
  return DG_OK;
}

int dgp_sim_state_read(dg_sim *sim, const unsigned char *buf, size_t size, const unsigned char *keep,
                      const unsigned char *keep_values, dg_error *err) {
  return state_read(sim, buf, size, keep, keep_values, true, err);
}

int dgp_sim_state_load(dg_sim *sim, const unsigned char *buf, size_t size) {
  return state_read(sim, buf, size, NULL, NULL, false, NULL);
}

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                */

struct dg_snapshot {
  const dg_graph *g;
  size_t size;
  unsigned char *bytes; /* dgp_sim_state_save's */
};

dg_snapshot *dg_sim_snapshot(dg_sim *sim, dg_error *err) {
  dgp_error_clear(err);
  if (!sim || sim->failed) {
    dgp_error_set(err, DG_ERR_USAGE, sim ? sim->g->file : "", "",
                 "cannot take a snapshot of a simulation that has failed");
    return NULL;
  }
  size_t size = dgp_sim_state_size(sim);
  dg_snapshot *snap = calloc(1, sizeof *snap);
  /* mapped when large: the parts a snapshot does not write (a large plan,
   * the arrays of a room the mode does not use) take no memory */
  unsigned char *bytes = snap ? dgp_pages_alloc(size) : NULL;
  if (!bytes) {
    free(snap);
    dgp_error_set(err, DG_ERR_NOMEM, sim->g->file, "", "out of memory");
    return NULL;
  }
  state_write(sim, bytes, size, STATE_SNAPSHOT);
  dgp_graph_retain(sim->g);
  *snap = (dg_snapshot){.g = sim->g, .size = size, .bytes = bytes};
  return snap;
}

int dg_sim_restore(dg_sim *sim, const dg_snapshot *snap, dg_error *err) {
  dgp_error_clear(err);
  if (!sim || !snap) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "no simulation or snapshot given");
    return DG_ERR_USAGE;
  }
  if (snap->g != sim->g) {
    dgp_error_set(err, DG_ERR_USAGE, sim->g->file, "",
                 "the snapshot is of a simulation of another graph (%s)", snap->g->file);
    return DG_ERR_USAGE;
  }
  return state_read(sim, snap->bytes, snap->size, NULL, NULL, false, err);
}

void dg_snapshot_free(dg_snapshot *snap) {
  if (!snap)
    return;
  dgp_graph_release(snap->g);
  dgp_pages_free(snap->bytes, snap->size);
  free(snap);
}
