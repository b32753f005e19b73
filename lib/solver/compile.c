/* The compile room: the stages of a simulation's modes as C, compiled by
 * the system's C compiler together with the blocks' own sources, and
 * loaded (issue 19, part 7).
 *
 * The generic stage (rk4.c) walks the plan's lists and calls each block's
 * torque_downstream through its class table; measured on the axle, that
 * is 2.2x a hand-written step, and a stage written out for the mode with
 * the hooks still called through their tables is 1.9x (bench/floor.c).
 * What closes the gap is the compiler seeing the blocks' code: here each
 * built-in class used by the mode is compiled from its source file in a
 * unit of its own (blocks/TYPE.c, whose const class table lets the
 * compiler call the hook directly), each mode's stage is written out with
 * its plan as literals (SPEEDS row by row, the ACCEL stage's B = M⁻¹ Gᵀ or
 * M⁻¹ and Gᵀ entry by entry, or the tree's eliminations one by one, in the
 * generic stage's order of operations), and the units are linked with
 * link-time optimization, which inlines the hooks into the stage. Each
 * torque hook's parameters are constants of the unit (their bytes: the
 * compiler folds a mode, a count, a coefficient); the blocks read their
 * data and inputs through their dg_block at run time, and each simulation
 * passes its own arrays (dgc_env).
 *
 * Which modes: the current one and the others the mode cache keeps (the
 * modes the simulation visited, up to 8), in one unit. A simulation finds
 * the unit's mode for each new plan once (match_mode): by the cache's key
 * of the mode's declarations (which fix its plan), or, for the compiling
 * simulation, by the plan's number. The graph keeps the unit: simulations
 * made of it later take it (dgp_compile_attach, when their hook lists are
 * the unit's). A parameter tuned in place (the graph's tune count,
 * dgp_sim_tune) sends every user back to the generic stage, until
 * dg_sim_compile makes a unit with the new values.
 *
 * Bit for bit: the same operations in the same order, compiled with the
 * same floating-point semantics (no fast-math, -ffp-contract=off), give
 * the same values; tests/test_compile.c holds the compiled stages to the
 * generic ones bit for bit.
 *
 * A plain mode (plain(): nothing around its stages but the commit) gets
 * its whole step segment written out too (dgc_segment_<m>). A hooked mode
 * (pre_step, post_step hooks and event functions around its stages, all
 * of built-in classes, its bound inputs evaluated in the unit) gets its
 * segment between those hooks (dgc_run_<m>: the first stage, with a
 * mode's tie forces and the hold pass, the event functions at the start,
 * stages 2-4, the end's speeds, slots and
 * functions, the crossing test and the commit), and the unit the two hook
 * lists (dgc_pre, dgc_post); a run whose event functions cross returns
 * to step.c, which locates the event from there. Each hook runs
 * on a copy of its block with the port nodes, state offset and index as
 * constants, and the stage functions are flattened: the hooks inlined,
 * the stage's speeds and torques in registers.
 *
 * Experimental: on the axle (plain) it takes the step from 2,653 to about
 * 1,000 instructions and from 2.2x to 1.4x the hand-written step's time;
 * the sedan's launch through its gears, every mode a hooked mode's
 * compiled run, from 15,088 to 9,141 instructions (1.74x the hand-written
 * step's; docs/performance.md, "Compiled stages").
 *
 * What it writes out and what it calls: the SPEEDS stage, the dense ACCEL
 * stage, and the tree room's solve where its factor is kept (write_tree)
 * are written out; the tree's other stages (a segment's first, which takes
 * the meshes' directions), the lossy meshes' losses on the dense stage
 * (loss.c) and the inputs bound to signals (bind.c) are called, on the
 * simulation's arrays and context (which they read). A mode without those
 * runs stages 2-4 on arrays and a context of its own. Refused
 * (dgp_compile_why_not, for the current mode; other modes are left out):
 * variable ratios, prescribed speeds, a torque hook of a class that is not
 * built in, a mode without DOFs, more than 4096 nodes or, on the dense
 * stage, 64 DOFs. States, ties, pre/post hooks, events and timed inputs
 * are fine: around the stages of a mode with a hook of a class that is
 * not built in, the step stays the generic one. A stage that
 * must also give tie forces (sv.lam.want) runs dgc_stage_lam_<m>: the
 * stage, then λ written out (write_stage_lam). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "solver.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef DG_SOURCE_ROOT
#define DG_SOURCE_ROOT ""
#endif
#ifndef DG_INSTALLED_SOURCE
#define DG_INSTALLED_SOURCE ""
#endif

#define MAX_NODES 4096
#define MAX_DOFS 64
#define MAX_CLASSES 64
#define MAX_CC_WORDS 16 /* in DG_CC */
#define MAX_MODES DGP_CACHE_SLOTS /* the current mode and the mode cache's others */

#define DGC_STR_(...) #__VA_ARGS__
#define DGC_STR(...) DGC_STR_(__VA_ARGS__)

/* What the generated stage receives: one list of members, compiled here
 * and written into the unit as text (DGC_STR), so the two cannot differ.
 * In order: the simulation's context; the torque hooks' blocks, in hook
 * order; the stage's node speeds and torques; the simulation and
 * dgp_inputs_at; RK4's arrays (sv.rk); the node angles' quadrature
 * (sv.mot); the energy audit's powers (sv.audit); the stages it calls
 * rather than writes out (bind.c's slots, tree.c's solve, loss.c's
 * losses); the meshes' powers (sv.loss.p) and stage 4's (p4); what a
 * plain mode's segment commits: the DOF speeds and states (sv.q, sv.s),
 * the committed node speeds (sv.x), the node angles (sv.mot.theta), the
 * audit's work per block and the efficiency losses; whether a hook
 * failed the simulation (dg_ctx_fail: nothing is committed then); for
 * the tree's solve written out (write_tree): whether the segment holds the
 * meshes' directions, whether the factor is held, factored, its
 * structure's hash, the factor's values (live arrays: their addresses
 * never change), and the meshes' multipliers and powers (the solve's z
 * is the stage's locals: nothing reads it after the stage); for a hooked
 * mode's run (write_run), the event functions at the segment's start and
 * end (sv.ev.g0, g1) and which meshes are watched (sv.loss.watch). */
#define DGC_ENV_MEMBERS                                                    \
  dg_ctx *ctx;                                                             \
  dg_block *const *blk;                                                    \
  double *xw, *tau;                                                        \
  void *sim;                                                               \
  void (*inputs_at)(void *sim, double t);                                  \
  const double *y0, *k1;                                                   \
  double *k2, *k3, *k4, *yt;                                               \
  const double *x1;                                                        \
  double *xsum, *pw, **pcur;                                               \
  void (*bind_eval)(void *sim);                                            \
  double (*tree_accel)(void *sim, double *dq, double *w);                  \
  double (*loss_apply)(void *sim, const double *q, double *dq, double *w); \
  double *p;                                                               \
  double *p4;                                                              \
  double *q, *s, *x, *theta, *work, *eff_loss;                             \
  const bool *failed;                                                      \
  bool *loss_hold;                                                         \
  const bool *tree_factored;                                               \
  bool *tree_held;                                                         \
  const uint64_t *tree_shape;                                              \
  const double *t_os, *t_of, *t_ob, *t_pa, *t_pb, *t_ub, *t_uf, *t_ag;     \
  const double *t_fic;                                                     \
  double *t_kap, *lam;                                                     \
  const int *dir;                                                          \
  const double *kf, *kb, *t_kfac;                                          \
  double *slot_val;                                                        \
  double *g0, *g1;                                                         \
  unsigned char *watch;                                                    \
  double *lam_value, *lam_factor;                                          \
  bool *lam_valid;                                                         \
  double *lam_t;                                                           \
  const double **lam_y;                                                    \
  bool (*hold_pass)(void *sim, double t, double h);                        \
  const unsigned *keep;

typedef struct dgc_env {
  DGC_ENV_MEMBERS
} dgc_env;

typedef void (*dgc_stage_fn)(const dgc_env *e, double t, const double *y, double *dy, double *de);
typedef int (*dgc_stages_fn)(const dgc_env *e, double t, double h, int first);
typedef int (*dgc_segment_fn)(const dgc_env *e, double t, double h);
typedef int (*dgc_run_fn)(const dgc_env *e, double t, double h, double tb);
typedef void (*dgc_pre_fn)(const dgc_env *e);
typedef void (*dgc_post_fn)(const dgc_env *e, int slots_done);

/* One mode of a unit: how a simulation recognizes it (the mode cache's key
 * of its declarations, which fix its plan; and for the simulation that
 * compiled it, while that one lives, its plan's number) and its
 * functions. */
typedef struct dgc_mode {
  unsigned char *key; /* NULL: a mode the cache keeps no key of */
  size_t key_len;
  const dg_sim *owner; /* with gen: the compiling simulation's plan */
  uint64_t gen;
  dgc_stage_fn stage;
  dgc_stage_fn stage_lam; /* stage with the tie forces (a mode with ties), or NULL */
  dgc_stages_fn stages;
  dgc_segment_fn segment; /* a plain mode's whole segment, or NULL */
  dgc_segment_fn segment_lean; /* ... keeping neither work nor angles */
  dgc_run_fn run;         /* a hooked mode's segment between its hooks, or NULL */
} dgc_mode;

/* A compiled unit: the modes one dg_sim_compile wrote, shared by the graph
 * (the latest: simulations made later take it) and each simulation using
 * it. What its code takes as constants beside the plans, checked when a
 * simulation takes it: the graph and its parameters (tune count), the
 * hook lists (the torque hooks' blocks, the other lists' sizes), the bound
 * inputs' count. */
struct dgp_unit {
  _Atomic int refs;
  void *so;
  const dg_graph *g;
  unsigned long tunes;
  int n_torque, n_pre, n_post, n_hold, n_events, n_slots, n_evb;
  int *torque_index; /* per torque hook: its block */
  int *hook_index;   /* per hook (hook_block's order): its block */
  dgc_pre_fn pre;    /* the pre_step hooks (write_hooks), or NULL */
  dgc_post_fn post;  /* the post_step hooks, or NULL */
  void (*slots)(const dgc_env *e); /* the bound inputs' slots, or NULL */
  int nlist;         /* blocks its code copies: the torque hooks', then the
                      * sources of the slots it evaluates (in slot order) */
  int nmodes;
  bool from_cache; /* loaded from the cache on disk (unitcache.c), not compiled */
  dgc_mode mode[MAX_MODES];
};

/* A simulation's use of a unit: its own arrays in env, and the unit's mode
 * that serves its current plan (matched once per plan). */
struct dgp_compiled {
  dgp_serve serve; /* first: what step.c calls (solver.h) */
  dgp_unit *unit;
  dgc_env env;
  dg_block **blk;
  uint64_t gen; /* the plan `cur` was matched for (0: none yet) */
  int cur;      /* the unit's mode for it, -1: none */
};

extern const dg_block_class *const dg_builtin_classes[];

static bool is_builtin(const dg_block_class *k) {
  for (int i = 0; dg_builtin_classes[i]; i++)
    if (dg_builtin_classes[i] == k)
      return true;
  return false;
}

/* Why the mode whose solver is sv cannot be compiled, or NULL. */
static const char *why_not_mode(const dg_sim *sim, const dg_solver *sv) {
  if (sim->failed)
    return "the simulation has failed";
  if (sv->variable_kinematics)
    return "its mode has variable ratios (not compiled yet)";
  if (sv->mot.np > 0 || sim->n_motion > 0)
    return "it prescribes speeds (not compiled yet)";
  if (sim->nn > MAX_NODES || (!sv->tree.on && sv->ndof > MAX_DOFS))
    return "its mode has more than 4096 nodes, or more than 64 DOFs on the dense stage";
  if (sv->ndof < 1)
    return "its mode has no DOF";
  for (int i = 0; i < sim->n_torque; i++)
    if (!is_builtin(sim->torque[i].b->klass))
      return "a torque hook is not a built-in block's (its source is not known)";
  return NULL;
}

/* Whether a mode's whole segment can run compiled (dgc_segment): no step
 * of it depends on anything but the stages: no pre/post/hold hooks, no
 * event functions (blocks' or lossy meshes'), no timed inputs, no inputs
 * bound to signals, no ties (whose forces a hook could ask for), the
 * dense ACCEL stage. Checked when compiling and at each segment (a
 * schedule or a binding may come later). */
static bool plain(const dg_sim *sim, const dg_solver *sv) {
  return sim->n_pre == 0 && sim->n_post == 0 && sim->n_hold == 0 && sim->n_events == 0 &&
         sv->ws.nmesh == 0 && sim->n_timed == 0 && sim->n_slots == 0 && sv->ws.nactive == 0 &&
         !sv->tree.on && !sv->variable_kinematics && sv->mot.np == 0 && sim->n_motion == 0;
}

/* ------------------------------------------------------------------------ */
/* Writing the units                                                        */

/* The library's functions a torque hook may call, which the compiled unit
 * reaches through pointers (the program need not export them): name,
 * return type, parameters, arguments. A hook calling anything else makes
 * the load fail with the symbol's name. dg_ctx_fail is variadic: its thunk
 * formats the message and passes it on as "%s". */
#define DGC_API(X)                                                                        \
  X(dg_ctx_tie_force, double, (dg_ctx * ctx, int tie), (ctx, tie))                        \
  X(dg_ctx_tie_factor, double, (dg_ctx * ctx, int tie), (ctx, tie))                       \
  X(dg_ctx_motion_torque, double, (dg_ctx * ctx, const dg_block *b), (ctx, b))            \
  X(dg_block_input_derivative, double,                                                    \
    (const dg_ctx *ctx, const dg_block *b, int input, int order), (ctx, b, input, order)) \
  X(dg_sim_block, dg_block *, (dg_sim * sim, const char *id), (sim, id))

typedef struct dgc_api {
#define DGC_FIELD(name, ret, params, args) ret(*name) params;
  DGC_API(DGC_FIELD)
#undef DGC_FIELD
  void (*dg_ctx_fail)(dg_ctx *ctx, const dg_block *b, const char *fmt, ...);
} dgc_api;

static const dgc_api api_table = {
#define DGC_INIT(name, ret, params, args) .name = name,
    DGC_API(DGC_INIT)
#undef DGC_INIT
        .dg_ctx_fail = dg_ctx_fail,
};

/* The unit's copy of dgc_api and the thunks. */
static void write_api(FILE *f) {
  fprintf(f, "typedef struct dgc_api {\n");
#define DGC_DECL(name, ret, params, args) fprintf(f, "  %s(*%s)%s;\n", #ret, #name, #params);
  DGC_API(DGC_DECL)
#undef DGC_DECL
  fprintf(
      f,
      "  void (*dg_ctx_fail)(dg_ctx *ctx, const dg_block *b, const char *fmt, ...);\n"
      "} dgc_api;\n\n"
      "static const dgc_api *api;\n\n"
      "__attribute__((visibility(\"default\"))) void dgc_bind(const dgc_api *a) { api = a; }\n\n");
#define DGC_THUNK(name, ret, params, args) \
  fprintf(f, "%s %s%s { return api->%s%s; }\n", #ret, #name, #params, #name, #args);
  DGC_API(DGC_THUNK)
#undef DGC_THUNK
  /* three that only read or set a field of the simulation: at its offset
   * (the unit is loaded by the library that lays the struct out) */
  fprintf(f,
          "long dg_sim_segment_count(const dg_sim *sim) {\n"
          "  return *(const long *)((const char *)sim + %zu);\n}\n"
          "void dg_ctx_request_topology(dg_ctx *ctx) {\n"
          "  *(_Bool *)((char *)ctx->sim + %zu) = 1;\n}\n"
          "unsigned long dg_ctx_params_epoch(const dg_ctx *ctx) {\n"
          "  return *(const unsigned long *)((const char *)ctx->sim + %zu);\n}\n",
          offsetof(dg_sim, segments), offsetof(dg_sim, topo_request),
          offsetof(dg_sim, params_epoch));
  fprintf(f, "void dg_ctx_fail(dg_ctx *ctx, const dg_block *b, const char *fmt, ...) {\n"
             "  char text[512];\n  va_list ap;\n  va_start(ap, fmt);\n"
             "  vsnprintf(text, sizeof text, fmt, ap);\n  va_end(ap);\n"
             "  api->dg_ctx_fail(ctx, b, \"%%s\", text);\n}\n\n");
}

static void lit(FILE *f, double v) { fprintf(f, "%a", v); }

/* SPEEDS, x = G y over the plan's rows, in dgp_solver_speeds' order: rows
 * of one, two, more non-zeros, then the rows that copy another's (a change
 * there must be made here too: tests/test_compile.c compares the two bit
 * for bit). */
static void write_speeds(FILE *f, const dg_solver *sv, const char *y, const char *x) {
  for (int k = 0; k < sv->n_single; k++) {
    fprintf(f, "  %s[%d] = ", x, sv->single_node[k]);
    lit(f, sv->single_val[k]);
    fprintf(f, " * %s[%d];\n", y, sv->single_dof[k]);
  }
  for (int k = 0; k < sv->n_pair; k++) {
    fprintf(f, "  %s[%d] = ", x, sv->pair_node[k]);
    lit(f, sv->pair_val[2 * k]);
    fprintf(f, " * %s[%d] + ", y, sv->pair_dof[2 * k]);
    lit(f, sv->pair_val[2 * k + 1]);
    fprintf(f, " * %s[%d];\n", y, sv->pair_dof[2 * k + 1]);
  }
  for (int k = 0; k < sv->n_multi; k++) {
    int n = sv->multi_node[k];
    fprintf(f, "  { double v = 0.0;");
    for (int a = sv->row_start[n]; a < sv->row_start[n + 1]; a++) {
      fprintf(f, " v += ");
      lit(f, sv->gs_val[a]);
      fprintf(f, " * %s[%d];", y, sv->gs_dof[a]);
    }
    fprintf(f, " %s[%d] = v; }\n", x, n);
  }
  for (int k = 0; k < sv->n_copy; k++) /* rows the same as another's: its bits */
    fprintf(f, "  %s[%d] = %s[%d];\n", x, sv->copy_node[k], x, sv->copy_src[k]);
}

/* dgc_stages' (and a segment's) start: the context and the node arrays,
 * its own or the simulation's. */
static void write_prologue(FILE *f, const dg_sim *sim, bool own) {
  int nn = sim->nn;
  if (own)
    fprintf(f,
            "  /* the context's fields that no stage writes, one by one (a copy of the\n"
            "   * whole would read the fields the first stage just wrote) */\n"
            "  dg_ctx cl;\n"
            "  cl.dt = e->ctx->dt;\n  cl.input = e->ctx->input;\n  cl.channel = e->ctx->channel;\n"
            "  cl.normal_load = e->ctx->normal_load;\n  cl.sim = e->ctx->sim;\n"
            "  dg_ctx *c = &cl;\n"
            "  double x[%d], tau[%d];\n",
            nn, nn);
  else
    fprintf(f, "  dg_ctx *c = e->ctx;\n  double *x = e->xw, *tau = e->tau;\n");
  fprintf(f, "  DGC_BLOCKS\n");
}

typedef struct unit_layout unit_layout;
static void write_lam(FILE *f, const dg_solver *sv, const char *dy, const char *w);
static void write_event_values(FILE *f, const dg_sim *sim, const dg_solver *sv,
                               const unit_layout *ul, const char *g, const char *p);

/* RK4's stages from s0 (an expression: 0, stage 1, from y0 into k1, as
 * dgp_rk4_derivative at the segment's start; 1, stages 2-4 and the
 * combination, as dgp_rk4_stages) to 4; with `own`, the stage's node
 * speeds and torques and the context written back. One copy of the
 * stage's code in a loop over the stages, not one per stage: the sedan's
 * step then runs about 35 kB of the unit's code instead of 60 kB, which
 * the instruction cache (32 kB) holds better. The same operations as
 * dgp_rk4_stages: (a h) k with a = 1 is h k, t + 1.0 h is t + h. After
 * stage 1, what dgc_stage leaves that is read (its speeds in the
 * simulation's array, the context: nothing reads the stage's torques
 * after it), and with `run` (a hooked mode's
 * run, write_run) the meshes watched and the event functions at the
 * start, into `events`. */
static void write_rest(FILE *f, const dg_sim *sim, const dg_solver *sv, int mi, bool own,
                       bool inputs, const char *s0, const unit_layout *run, bool local) {
  /* the angles' node sums only where the commit cannot take them from
   * the DOFs' (dgp_angles_linear): else the loops over 0 nodes vanish */
  bool lin = dgp_angles_linear(sv);
  int nn = lin ? 0 : sim->nn, nd = sv->ndof, ny = nd + sim->ns, ne = sv->audit.ne;
  int nev = sim->n_events + sv->ws.nmesh;
  fprintf(f,
          "  double xs[%d + 1];\n"
          "%s"
          "  const double *kin[3] = {k1, k2, k3};\n"
          "  double *kout[3] = {k2, k3, k4};\n"
          "  static const double a[3] = {0.5, 0.5, 1.0}, wx[3] = {2.0, 2.0, 1.0};\n"
          "  for (int s = %s; s < 4; s++) {\n"
          "    const double *ys = y0;\n    double *dy = (double *)k1, *de = pw, ts = t;\n"
          "    if (s > 0) {\n"
          "      double as = a[s - 1] * h;\n"
          "      double *restrict ytr = yt;\n"
          "      const double *restrict y0r = y0, *restrict kp = kin[s - 1];\n"
          "      for (int i = 0; i < %d; i++)\n        ytr[i] = y0r[i] + as * kp[i];\n"
          "%s"
          "      ys = yt;\n      dy = kout[s - 1];\n      de = pw + %d * s;\n      ts = t + as;\n"
          "    }\n"
          "    body%d(e, blk, c, x, tau, ts, ys, dy, de);\n"
          "    if (s > 0) {\n"
          "      for (int n = 0; n < %d; n++)\n"
          "        xs[n] = (s == 1 ? x1[n] : xs[n]) + wx[s - 1] * x[n];\n"
          "      continue;\n    }\n",
          nn,
          local ? "  const double *y0 = ly0, *k1 = lk1, *x1 = e->x1;\n"
                  "  double *yt = lyt, *k2 = lk2, *k3 = lk3, *k4 = lk4, *pw = lpw;\n"
                : "  const double *y0 = e->y0, *k1 = e->k1, *x1 = e->x1;\n"
                  "  double *yt = e->yt, *k2 = e->k2, *k3 = e->k3, *k4 = e->k4, *pw = e->pw;\n",
          s0, ny, inputs ? "      if (s != 2)\n        e->inputs_at(e->sim, t + as);\n" : "", ne,
          mi, nn);
  /* after stage 1 */
  if (own && run)
    fprintf(f,
            "    for (int n = 0; n < %d; n++)\n      e->xw[n] = x[n];\n"
            "    { dg_ctx *g = e->ctx;\n      g->t = t;\n      g->speed = e->xw;\n"
            "      g->torque = e->tau;\n      g->power = cl.power;\n      g->state = y0 + %d;\n"
            "      g->state_rate = 0;\n      g->state_commit = 0; }\n",
            sim->nn, nd);
  if (!lin)
    fprintf(f, "    for (int n = 0; n < %d; n++)\n      ((double *)x1)[n] = x[n];\n", sim->nn);
  if (run) {
    fprintf(f, "    *e->pcur = pw + %d;\n", 4 * ne);
    if (nev > 0 && sv->ws.nactive > 0) {
      /* the tie forces of stage 1 (segment_stages wants them where
       * events are located), and the hold pass: a hold they overload
       * lets go, and step.c makes stage 1 again in the new mode (-1) */
      write_lam(f, sv, "k1", "tau");
      if (sim->n_hold > 0) {
        if (own) /* the stage's torques where the generic stage leaves them */
          fprintf(f, "    for (int n = 0; n < %d; n++)\n      e->tau[n] = tau[n];\n", sim->nn);
        fprintf(f, "    if (e->hold_pass(e->sim, t, h))\n      return -1;\n");
      }
    }
    fprintf(f, "    *e->loss_hold = 1;\n");
    for (int j = 0; j < sv->ws.nmesh; j++)
      fprintf(f, "    e->watch[%d] = 0;\n", j);
    if (nev > 0) {
      fprintf(f, "    {\n    dg_ctx *c = e->ctx;\n    c->t = t;\n");
      for (int j = 0; j < sv->ws.nmesh; j++) {
        fprintf(f, "    e->watch[%d] = e->dir[%d] != 0 && fabs(e->p[%d]) > ", j, j, j);
        lit(f, DGP_MESH_WATCH_POWER);
        fprintf(f, ";\n");
      }
      write_event_values(f, sim, sv, run, "e->g0", "e->p");
      fprintf(f, "    events = active > 0;\n    }\n");
    }
  }
  fprintf(f, "  }\n");
  if (sv->ws.nmesh > 0)
    fprintf(f, "  for (int j = 0; j < %d; j++)\n    e->p4[j] = e->p[j];\n", sv->ws.nmesh);
  if (!local) /* a local pw: step.c points pcur past the solver's own */
    fprintf(f, "  *e->pcur = pw + %d;\n", 4 * ne);
  fprintf(f,
          "  double cc = h / 6.0;\n"
          "  for (int i = 0; i < %d; i++)\n"
          "    yt[i] = y0[i] + cc * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);\n"
          "  for (int n = 0; n < %d; n++)\n    e->xsum[n] = xs[n];\n",
          ny, nn);
  /* the stage's speeds and torques stay its own: what follows the stages
   * computes them anew before reading them (the end's speeds, a stage at
   * an event's point, the commit's x = G q) */
  if (own && local) /* step.c's compiled_step sets the context's others */
    fprintf(f, "  if (keep & %uu)\n    e->ctx->power = cl.power;\n", (unsigned)DG_KEEP_WORK);
  else if (own)
    fprintf(f, "  dg_ctx *g = e->ctx;\n  g->t = cl.t;\n  g->speed = e->xw;\n  g->torque = e->tau;\n"
               "  g->power = cl.power;\n  g->state = cl.state;\n  g->state_rate = 0;\n"
               "  g->state_commit = 0;\n");
}

/* The commit of yt as step.c's segment_commit for a mode without motion:
 * false (0 returned) when yt fails check_finite; q and s, each torque
 * hook's work and the efficiency losses with RK4's weights, the node
 * angles, and the committed speeds: from xe (the end's, when `end`
 * names them), else x = G q. */
static void write_commit(FILE *f, const dg_sim *sim, const dg_solver *sv, const char *end,
                         bool local, const char *keep) {
  int nn = sim->nn, nd = sv->ndof, ns = sim->ns, ne = sv->audit.ne;
  /* step.c's check_finite: |a DOF speed| below the limit, the states
   * finite (a NaN fails both); nothing is committed past a failure */
  fprintf(f, "  if (!(1");
  for (int i = 0; i < nd; i++) {
    fprintf(f, " && fabs(yt[%d]) < ", i);
    lit(f, DGP_SPEED_LIMIT);
  }
  for (int i = nd; i < nd + ns; i++)
    fprintf(f, " && fabs(yt[%d]) <= DBL_MAX", i);
  if (local) /* step.c's report of a blow-up reads the solver's yt */
    fprintf(f,
            ") || *e->failed) {\n    for (int i = 0; i < %d; i++)\n      e->yt[i] = yt[i];\n"
            "    return 0;\n  }\n",
            nd + ns);
  else
    fprintf(f, ") || *e->failed)\n    return 0;\n");
  fprintf(f, "  double *q = e->q;\n");
  fprintf(f, "  for (int i = 0; i < %d; i++)\n    q[i] = yt[i];\n", nd);
  if (ns > 0)
    fprintf(f, "  for (int i = 0; i < %d; i++)\n    e->s[i] = yt[%d + i];\n", ns, nd);
  /* what the simulation keeps (dg_sim_set_keep): the work, the angles */
  fprintf(f, "  if (%s & %uu) {\n", keep, (unsigned)DG_KEEP_WORK);
  for (int i = 0; i < sim->n_torque; i++)
    fprintf(f, "  e->work[%d] += h / 6.0 * (pw[%d] + 2.0 * pw[%d] + 2.0 * pw[%d] + pw[%d]);\n",
            sim->torque[i].b->index, i, ne + i, 2 * ne + i, 3 * ne + i);
  /* without meshes the losses' column is +0 at every stage: adding
   * h/6 (+0) leaves the sum (+0 at the start, never -0) as it is */
  int ie = sim->n_torque;
  if (sv->ws.nmesh > 0)
    fprintf(f, "  *e->eff_loss += h / 6.0 * (pw[%d] + 2.0 * pw[%d] + 2.0 * pw[%d] + pw[%d]);\n", ie,
            ne + ie, 2 * ne + ie, 3 * ne + ie);
  fprintf(f, "  }\n  if (%s & %uu) {\n", keep, (unsigned)DG_KEEP_ANGLES);
  if (dgp_angles_linear(sv)) { /* dgp_commit_angles: G times the DOFs' quadrature */
    fprintf(f,
            "  {\n    const double *a0 = %s;\n"
            "    double c2 = h * h / 6.0, qa[%d], xa[%d];\n"
            "    for (int j = 0; j < %d; j++)\n"
            "      qa[j] = h * a0[j] + c2 * (a1[j] + a2[j] + a3[j]);\n",
            local ? "y0, *a1 = k1, *a2 = k2, *a3 = k3"
                  : "e->y0, *a1 = e->k1, *a2 = e->k2, *a3 = e->k3",
            nd + 1, nn, nd);
    write_speeds(f, sv, "qa", "xa");
    fprintf(f, "    for (int n = 0; n < %d; n++)\n      e->theta[n] = e->theta[n] + xa[n];\n  }\n",
            nn);
  } else {
    fprintf(f,
            "  { double c6 = h / 6.0;\n    for (int n = 0; n < %d; n++)\n"
            "      e->theta[n] = e->theta[n] + c6 * e->xsum[n]; }\n",
            nn);
  }
  fprintf(f, "  }\n");
  fprintf(f, "  double *xc = e->x;\n");
  if (end)
    fprintf(f, "  if (%s) {\n    for (int n = 0; n < %d; n++)\n      xc[n] = xe[n];\n  } else {\n",
            end, nn);
  write_speeds(f, sv, "q", "xc");
  if (end)
    fprintf(f, "  }\n");
}

/* dgc_segment, a plain mode's whole segment (plain()): step_segment's
 * operations for such a mode (step.c, compiled_segment), in its order. It
 * gathers y0 = [q; s], runs stage 1 and what dgc_stages runs, on arrays
 * and a context of its own, into yt; returns 0 when yt fails check_finite
 * or a hook failed the simulation (nothing committed), else commits yt
 * and returns 1: q and s, each
 * torque hook's work and the efficiency losses with RK4's weights (the
 * audit), the node angles, and the committed speeds x = G q. */
static void write_segment(FILE *f, const dg_sim *sim, const dg_solver *sv, int mi) {
  int nd = sv->ndof, ns = sim->ns;
  /* keep (dg_sim_set_keep) a parameter: dgc_segment_<mi> reads the
   * simulation's, dgc_segment_<mi>_lean is the segment keeping neither the
   * work nor the angles, whose powers the compiler then leaves out */
  fprintf(f,
          "\nstatic inline __attribute__((always_inline)) int segment%d(const dgc_env *e, double "
          "t, double h, const unsigned keep) {\n",
          mi);
  write_prologue(f, sim, true);
  /* RK4's arrays its own: nothing reads a plain segment's stages after it
   * (no events, no tie forces), so they can stay in registers */
  fprintf(f,
          "  double ly0[%d], lk1[%d], lk2[%d], lk3[%d], lk4[%d], lyt[%d], lpw[%d];\n"
          "  {\n    double *y0w = ly0, *x1w = (double *)e->x1;\n"
          "    for (int i = 0; i < %d; i++)\n      y0w[i] = e->q[i];\n",
          nd + ns + 1, nd + ns + 1, nd + ns + 1, nd + ns + 1, nd + ns + 1, nd + ns + 1,
          4 * sv->audit.ne + 1, nd);
  if (ns > 0)
    fprintf(f, "    for (int i = 0; i < %d; i++)\n      y0w[%d + i] = e->s[i];\n", ns, nd);
  /* stage 1 on its own before the loop of the others: a plain mode's
   * code is small, and the loop from stage 1 costs it 70 instructions a
   * step (the axle) */
  fprintf(f,
          "    body%d(e, blk, c, x, tau, t, y0w, lk1, lpw);\n"
          "    for (int n = 0; n < %d; n++)\n      x1w[n] = x[n];\n  }\n",
          mi, dgp_angles_linear(sv) ? 0 : sim->nn);
  write_rest(f, sim, sv, mi, true, false, "1", NULL, true);
  write_commit(f, sim, sv, NULL, true, "keep");
  fprintf(f, "  return 1;\n}\n");
  fprintf(f,
          "\n__attribute__((visibility(\"default\"), flatten)) int dgc_segment_%d(const dgc_env "
          "*e, double t, double h) {\n  return segment%d(e, t, h, *e->keep);\n}\n"
          "\n__attribute__((visibility(\"default\"), flatten)) int dgc_segment_%d_lean(const "
          "dgc_env *e, double t, double h) {\n  return segment%d(e, t, h, 0u);\n}\n",
          mi, mi, mi, mi);
}

/* What a unit is written with: the block classes it compiles (each once),
 * and its blocks as constants: the torque hooks' blocks, in hook order,
 * then the sources of the inputs bound to signals (their signal hooks
 * called in the stage, when every such class is built in: `slots`). */
typedef struct unit_layout {
  int ntypes;
  const dg_block_class *cls[MAX_CLASSES];
  int nlist;             /* blocks: n_torque, then the slots' sources */
  const dg_block **list; /* nlist */
  int *type_of;          /* per listed block: its class in cls */
  int *slot_at;          /* per slot: its source in list, -1 for a speed */
  bool slots;            /* the slots evaluated in the stage */
  /* the hooks around the stages (pre_step, post_step, event functions),
   * their blocks in list, when every such class is built in (`hooked`) */
  bool hooked;
  unsigned uses[MAX_CLASSES]; /* per class: USE_PRE | USE_POST | USE_EVENTS */
  int *hook_at;               /* per hook (hook_block's order): its block in list */
} unit_layout;

enum { USE_PRE = 1u, USE_POST = 2u, USE_EVENTS = 4u };

/* A pointer among a block's parameters to `n` doubles (an array's or a
 * table's values), at byte `off` of its params struct. */
typedef struct param_reloc {
  size_t off;
  const double *v;
  long n;
} param_reloc;

#define MAX_RELOCS 64

static void add_reloc(param_reloc *r, int *nr, size_t off, const double *v, long n) {
  if (v && n > 0 && *nr < MAX_RELOCS)
    r[(*nr)++] = (param_reloc){off, v, n};
}

/* The arrays' and tables' value pointers of the params struct at `base`
 * (and its nested objects, at `off` within the whole), from the class's
 * parameter table. */
static void find_relocs(const dg_param_def *defs, const unsigned char *base, size_t off,
                        param_reloc *r, int *nr) {
  for (const dg_param_def *d = defs; d && d->key; d++) {
    const unsigned char *at = base + d->offset;
    size_t o = off + d->offset;
    if (d->kind == DG_PARAM_ARRAY) {
      const dg_array *a = (const dg_array *)(const void *)at;
      add_reloc(r, nr, o + offsetof(dg_array, v), a->v, a->n);
    } else if (d->kind == DG_PARAM_TABLE1D) {
      const dg_table1d *t = (const dg_table1d *)(const void *)at;
      add_reloc(r, nr, o + offsetof(dg_table1d, x), t->x, t->n);
      add_reloc(r, nr, o + offsetof(dg_table1d, y), t->y, t->n);
    } else if (d->kind == DG_PARAM_TABLE2D) {
      const dg_table2d *t = (const dg_table2d *)(const void *)at;
      add_reloc(r, nr, o + offsetof(dg_table2d, x), t->x, t->nx);
      add_reloc(r, nr, o + offsetof(dg_table2d, y), t->y, t->ny);
      add_reloc(r, nr, o + offsetof(dg_table2d, z), t->z, (long)t->nx * t->ny);
    } else if (d->kind == DG_PARAM_OBJECT) {
      find_relocs(d->fields, at, o, r, nr);
    }
  }
}

static int by_off(const void *a, const void *b) {
  size_t x = ((const param_reloc *)a)->off, y = ((const param_reloc *)b)->off;
  return (x > y) - (x < y);
}

/* Whether each pointer (in offset order) can be a struct member of its
 * own within a params struct of n bytes: after some bytes, aligned, apart
 * from the next. */
static bool relocs_fit(const param_reloc *r, int nr, size_t n) {
  for (int k = 0; k < nr; k++)
    if (r[k].off == 0 || r[k].off % _Alignof(const double *) != 0 ||
        r[k].off + sizeof(double *) > n ||
        (k + 1 < nr && r[k + 1].off < r[k].off + sizeof(double *)))
      return false;
  return true;
}

static void write_bytes(FILE *f, const unsigned char *p, size_t from, size_t to) {
  fprintf(f, "{");
  for (size_t k = from; k < to; k++)
    fprintf(f, "%s%u,", (k - from) % 24 == 0 ? "\n  " : "", p[k]);
  fprintf(f, "}");
}

/* A torque hook's parameters as a constant of the unit: the bytes of its
 * block's params struct (the compiler folds the hook's reads of them, so
 * a mode, a count or a coefficient is known when it compiles). The values
 * of its arrays and tables (found through the class's parameter table)
 * are constants of the unit too, and their pointers point at them, so the
 * unit's text holds no address of the process that wrote it and the
 * cache on disk (unitcache.c) serves it to the next process. Any other
 * pointer among them stays the address it is, in the graph the simulation
 * holds (correct in this process; a text with it is another process's
 * only if that pointer is the same there). A tuning changes them in
 * place: the unit then stands aside (the serve table, dgp_compiled_resolve). */
static void write_params(FILE *f, int i, const dg_block *b) {
  size_t n = b->klass->params_size ? b->klass->params_size : 1;
  static const unsigned char none[1];
  const unsigned char *p = b->klass->params_size ? b->params : none;
  param_reloc r[MAX_RELOCS];
  int nr = 0;
  if (b->klass->params_size)
    find_relocs(b->klass->params, p, 0, r, &nr);
  qsort(r, (size_t)nr, sizeof *r, by_off);
  if (!relocs_fit(r, nr, n))
    nr = 0; /* the bytes alone */
  for (int k = 0; k < nr; k++) {
    fprintf(f, "static const double dgc_v%d_%d[%ld] = {", i, k, r[k].n);
    for (long j = 0; j < r[k].n; j++) {
      fprintf(f, "%s", j % 4 == 0 ? "\n  " : " ");
      lit(f, r[k].v[j]);
      fprintf(f, ",");
    }
    fprintf(f, "};\n");
  }
  /* the struct: byte runs between the pointers, each pointer a member */
  fprintf(f, "static const struct {\n  _Alignas(max_align_t) unsigned char a0[%zu];\n",
          nr > 0 ? r[0].off : n);
  size_t at = nr > 0 ? r[0].off : n;
  for (int k = 0; k < nr; k++) {
    size_t next = k + 1 < nr ? r[k + 1].off : n;
    fprintf(f, "  const double *p%d;\n", k);
    at = r[k].off + sizeof(double *);
    if (next > at)
      fprintf(f, "  unsigned char a%d[%zu];\n", k + 1, next - at);
  }
  fprintf(f, "} dgc_param%d = {", i);
  write_bytes(f, p, 0, nr > 0 ? r[0].off : n);
  for (int k = 0; k < nr; k++) {
    size_t next = k + 1 < nr ? r[k + 1].off : n;
    at = r[k].off + sizeof(double *);
    fprintf(f, ", dgc_v%d_%d", i, k);
    if (next > at) {
      fprintf(f, ", ");
      write_bytes(f, p, at, next);
    }
  }
  fprintf(f, "};\n");
}

/* A mesh's multiplier after the solve, from the locals z<v> (mesh_lambda). */
static void write_mesh_lambda(FILE *f, const dg_sim *sim, const dg_tree_ws *t, int j) {
  int c = t->mesh_con[j], a = t->mesh_alias[j];
  if (c >= 0)
    fprintf(f, "z%d", sim->nn + c);
  else if (a < 0)
    fprintf(f, "0.0");
  else
    fprintf(f, "e->t_fic[%d] * z%d - z%d", j, t->fm_root[j], t->mesh_node[t->mesh_first[j]]);
}

/* Mesh j's side a dotted with the node speeds x (mesh_dot's value). */
static void write_mesh_dot(FILE *f, const dg_tree_ws *t, int j) {
  if (t->all_folded) {
    lit(f, t->mesh_ab[j]);
    fprintf(f, " * x[%d]", t->mesh_node[j]);
    return;
  }
  fprintf(f, "0.0");
  for (int q = t->mesh_first[j]; q < t->mesh_first[j + 1]; q++) {
    fprintf(f, " + ");
    lit(f, t->mesh_ab[q]);
    fprintf(f, " * x[%d]", t->mesh_node[q]);
  }
}

/* The ACCEL stage on the tree (tree.c's dgp_tree_accel) where it solves
 * with the factor it has: inside a segment whose lossy meshes hold their
 * directions (held), at a segment's first stage when the directions it
 * has are confirmed at once (the factor is of their κ, and the solution
 * keeps each one: dgp_mesh_direction, mesh_dot; then κ and held are left
 * as the generic stage's one pass leaves them), or, without lossy meshes,
 * factored. Written out with the mode's structure as literals and z in
 * locals: the right side and the aliases' folds (tree_stage_solve), the
 * eliminations forward, those without updates, back (dgp_tree_solve), q̇
 * at the DOFs' nodes, and per mesh its multiplier, power and loss torques
 * (tree_accel_held, mesh_pass); the factor's values read from its arrays,
 * in the same operations and order, so the same bits. Nothing is written
 * before the stage knows it serves; anything else (directions that
 * change, a mesh at rest, efficiency tables, a factor to be made, a
 * structure other than this one) calls the generic stage, which does it
 * all from the start. Graphs of more than 512 vertices call it always. */
static void write_tree(FILE *f, const dg_sim *sim, const dg_solver *sv, const bool *written) {
  const dg_tree_ws *t = &sv->tree;
  int nn = sim->nn, nv = t->nv, m = sv->ws.nmesh, nt = sim->n_torque;
  if (nv > 512 || !t->factored) {
    fprintf(f, "  de[%d] = e->tree_accel(e->sim, dy, tau);\n", nt);
    return;
  }
  bool first = m > 0 && !t->tables; /* a segment's first stage may be written out */
  fprintf(f, "  {\n    int first = %s, ok = *e->tree_shape == %lluull;\n",
          first ? "!*e->loss_hold" : "0", (unsigned long long)t->shape);
  if (m == 0)
    fprintf(f, "    ok = ok && *e->tree_factored;\n");
  else if (!first)
    fprintf(f, "    ok = ok && *e->loss_hold && *e->tree_held;\n");
  else {
    fprintf(f, "    ok = ok && (first ? *e->tree_factored : *e->tree_held);\n");
    for (int j = 0; j < m; j++)
      fprintf(f, "    double k%d = 0.0;\n", j);
    fprintf(f, "    if (first) {\n");
    for (int j = 0; j < m; j++) /* κ of the directions it has, the factor's? */
      fprintf(f,
              "      k%d = e->dir[%d] > 0 ? e->kf[%d] : e->dir[%d] < 0 ? e->kb[%d] : 0.0;\n"
              "      ok = ok && k%d == e->t_kfac[%d];\n",
              j, j, j, j, j, j, j);
    fprintf(f, "    }\n");
  }
  fprintf(f, "    const double *os = e->t_os, *of = e->t_of, *ob = e->t_ob, *pa = e->t_pa, "
             "*pb = e->t_pb, *ub = e->t_ub, *uf = e->t_uf, *ag = e->t_ag;\n"
             "    (void)pa; (void)pb; (void)ub; (void)uf; (void)ag; (void)first;\n");
  for (int v = 0; v < nv; v++) /* tau is 0 where no hook writes (as in write_mode) */
    fprintf(f, v < nn && written[v] ? "    double z%d = tau[%d];\n" : "    double z%d = 0.0;\n", v,
            v);
  for (int j = 0; j < m; j++)
    fprintf(f, "    double l%d = 0.0;\n", j);
  fprintf(f, "    if (ok) {\n");
  for (int i = 0; i < t->nalias; i++)
    fprintf(f, "    z%d += ag[%d] * z%d;\n", t->al_up[i], i, t->al_node[i]);
  int nops = t->nops, nmain = t->nmain;
  for (int k = 0; k < nmain; k++) { /* forward */
    fprintf(f, "    { double zt = z%d * os[%d]; z%d = zt; z%d -= of[%d] * zt;", t->op_v[k], k,
            t->op_v[k], t->op_r[k], k);
    if (t->op_u[k] >= 0) /* a pair: its other updates */
      for (int i = t->op_x[k]; i < t->op_first[k + 1]; i++)
        fprintf(f, " z%d -= uf[%d] * zt;", t->upd_r[i], i);
    fprintf(f, " }\n");
  }
  for (int k = nmain; k < nops; k++) /* without updates */
    fprintf(f,
            "    { double zt = z%d * os[%d]; zt -= of[%d] * zt; zt -= ob[%d] * zt; z%d = zt; }\n",
            t->op_v[k], k, k, k, t->op_v[k]);
  for (int k = nmain - 1; k >= 0; k--) { /* back */
    int v = t->op_v[k], u = t->op_u[k];
    if (u < 0) {
      fprintf(f, "    z%d -= ob[%d] * z%d;\n", v, k, t->op_r[k]);
      continue;
    }
    fprintf(f, "    { double sum = z%d * pa[%d] - z%d * pb[%d]; sum -= ob[%d] * z%d;", u, k, v, k,
            k, t->op_r[k]);
    for (int i = t->op_x[k]; i < t->op_first[k + 1]; i++)
      fprintf(f, " sum -= ub[%d] * z%d;", i, t->upd_r[i]);
    fprintf(f, " z%d = z%d; z%d = sum; }\n", u, v, v);
  }
  for (int j = 0; j < m; j++) {
    fprintf(f, "    l%d = ", j);
    write_mesh_lambda(f, sim, t, j);
    fprintf(f, ";\n");
  }
  /* the directions confirmed (dgp_mesh_direction). A mesh at rest (v 0)
   * takes the power about to flow from the accelerations (dgp_tree_accel
   * unfolds z), whose product with a multiplier of 0 is 0 again: its
   * direction is then the one it has, as here; with a multiplier, the
   * generic stage decides */
  if (first) {
    fprintf(f, "    if (first) {\n");
    for (int j = 0; j < m; j++) {
      fprintf(f, "      { double v = ");
      write_mesh_dot(f, t, j);
      fprintf(f,
              "; double pj = l%d * v; int d = pj > 0.0 ? 1 : pj < 0.0 ? -1 : (l%d == 0.0 ? "
              "e->dir[%d] : 0);\n"
              "        ok = ok && (v != 0.0 || l%d == 0.0) && d == e->dir[%d]; }\n",
              j, j, j, j, j);
    }
    fprintf(f, "    }\n");
  }
  fprintf(f, "    }\n    if (ok) {\n");
  if (first) { /* what the generic stage's one pass leaves: κ, and the factor held */
    fprintf(f, "    if (first) {\n");
    for (int j = 0; j < m; j++)
      fprintf(f, "      e->t_kap[%d] = k%d;\n", j, j);
    fprintf(f, "      *e->tree_held = 1;\n    }\n");
  }
  for (int j = 0; j < sv->ndof; j++)
    fprintf(f, "    dy[%d] = z%d;\n", j, t->dof_node[j]);
  fprintf(f, "    double pl = 0.0;\n");
  for (int j = 0; j < m; j++) { /* mesh j: its multiplier, power, loss torques */
    if (t->all_folded) { /* as tree_accel_held's chain */
      int n = t->mesh_node[j], src = t->mesh_bnode[j];
      fprintf(f, "    { double l = l%d; e->lam[%d] = l; e->p[%d] = l * x[%d]; ", j, j, j, n);
      fprintf(f, "double fk = e->t_kap[%d] * l; if (fk != 0.0) { double bx = ", j);
      lit(f, t->mesh_b[j]);
      fprintf(f, " * x[%d]; tau[%d] += fk * ", src, src);
      lit(f, t->mesh_b[j]);
      fprintf(f, "; pl += fk * bx; } }\n");
      continue;
    }
    fprintf(f, "    { double l = l%d; e->lam[%d] = l; double ax = ", j, j);
    write_mesh_dot(f, t, j); /* from 0.0, term after term: mesh_pass's sum */
    fprintf(f,
            "; e->p[%d] = l * ax; double fk = e->t_kap[%d] * l; if (fk != 0.0) { double bx = 0.0;",
            j, j);
    for (int q = t->mesh_bfirst[j]; q < t->mesh_bfirst[j + 1]; q++) {
      fprintf(f, " bx += ");
      lit(f, t->mesh_b[q]);
      fprintf(f, " * x[%d]; tau[%d] += fk * ", t->mesh_bnode[q], t->mesh_bnode[q]);
      lit(f, t->mesh_b[q]);
      fprintf(f, ";");
    }
    fprintf(f, " pl += fk * bx; } }\n");
  }
  fprintf(f, "    de[%d] = pl;\n    } else {\n", nt);
  /* the generic stage reads the stage's speeds from the simulation's
   * array: a stage on arrays of its own writes them there first */
  fprintf(
      f,
      "      if (x != e->xw)\n        for (int n = 0; n < %d; n++)\n          e->xw[n] = x[n];\n"
      "      de[%d] = e->tree_accel(e->sim, dy, tau);\n    }\n  }\n",
      sim->nn, nt);
}

/* The unit's start, shared by its modes: the environment's type, the
 * library's functions the hooks call (write_api), the listed blocks (the
 * torque hooks', the slots' sources) as constants (DGC_BLOCKS: nodes,
 * state offsets, indices, parameters). */
static void write_head(FILE *f, const unit_layout *ul, int nmodes) {
  fprintf(f,
          "/* Generated by drivegraph (lib/solver/compile.c): the stages of %d modes. */\n"
          "#include <drivegraph/block.h>\n\n"
          "#include <float.h>\n#include <math.h>\n#include <stdarg.h>\n"
          "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n\n"
          "typedef struct dgc_env { %s } dgc_env;\n\n",
          nmodes, DGC_STR(DGC_ENV_MEMBERS));
  write_api(f);
  for (int k = 0; k < ul->ntypes; k++) {
    if (ul->cls[k]->torque_downstream)
      fprintf(f, "void dgc_torque_%s(dg_block *b, dg_ctx *ctx);\n", ul->cls[k]->type);
    if (ul->cls[k]->signal)
      fprintf(f, "double dgc_signal_%s(const dg_block *b, const dg_ctx *ctx, int i);\n",
              ul->cls[k]->type);
    if (ul->uses[k] & USE_PRE)
      fprintf(f, "void dgc_pre_%s(dg_block *b, dg_ctx *ctx);\n", ul->cls[k]->type);
    if (ul->uses[k] & USE_POST)
      fprintf(f, "void dgc_post_%s(dg_block *b, dg_ctx *ctx);\n", ul->cls[k]->type);
    if (ul->uses[k] & USE_EVENTS)
      fprintf(f, "int dgc_events_%s(const dg_block *b, dg_ctx *ctx, double *g);\n",
              ul->cls[k]->type);
  }
  /* the torque hooks' blocks, each a copy of the simulation's with its
   * nodes, state offset and index as constants (they never change in a
   * simulation), so that the compiler resolves the ports' nodes and keeps
   * the stage's speeds and torques in registers; params, data and inputs
   * stay the block's (a hook's self is the copy: the library's functions
   * read a block's index, inputs and id, never its address) */
  for (int i = 0; i < ul->nlist; i++) {
    const dg_block *b = ul->list[i];
    int np = dgp_class_num_ports(b->klass);
    fprintf(f, "static const int dgc_node%d[] = {", i);
    for (int p = 0; p < np; p++)
      fprintf(f, "%d, ", b->node[p]);
    fprintf(f, "-1};\n");
    write_params(f, i, b);
  }
  fprintf(f, "#define DGC_BLOCKS \\\n");
  for (int i = 0; i < ul->nlist; i++)
    fprintf(f,
            "  dg_block b%d = *e->blk[%d]; b%d.node = dgc_node%d; b%d.state = %d; b%d.index = %d; "
            "b%d.params = &dgc_param%d; \\\n",
            i, i, i, i, i, ul->list[i]->state, i, ul->list[i]->index, i, i);
  fprintf(f, "  dg_block *const blk[%d] = {", ul->nlist + 1);
  for (int i = 0; i < ul->nlist; i++)
    fprintf(f, "&b%d, ", i);
  fprintf(f, "0};\n");
}

/* Whether stages 2-4 run on arrays and a context of their own: unless
 * something they call reads the simulation's (bind.c's slots and loss.c's
 * losses read sv.xw and the context; the tree's generic stage, which a
 * written-out solve falls back to, is given the speeds first). */
static bool own_arrays(const dg_sim *sim, const dg_solver *sv, const unit_layout *ul) {
  return (sim->n_slots == 0 || ul->slots) && (sv->tree.on || sv->ws.nmesh == 0);
}

/* The inputs bound to signals at the context c's point, whose node speeds
 * are the array x, as dgp_bind_eval_slots (when the layout has them). */
static void write_slots(FILE *f, const dg_sim *sim, const unit_layout *ul, const char *x) {
  for (int k = 0; ul->slots && k < sim->n_slots; k++) {
    const dg_slot *sl = &sim->slots[k];
    int at = ul->slot_at[k];
    if (at < 0) {
      fprintf(f, "  e->slot_val[%d] = ", k);
      lit(f, sl->scale);
      fprintf(f, " * %s[%d];\n", x, sl->node);
    } else {
      fprintf(f, "  e->slot_val[%d] = dgc_signal_%s(blk[%d], c, %d);\n", k,
              ul->cls[ul->type_of[at]]->type, at, sl->signal);
    }
  }
}

/* The pre_step or post_step hooks (step.c's run_hooks): the committed
 * states readable and writable, the slots evaluated first (post_step: when
 * not already, `slots_done`), each hook while none has failed the
 * simulation. */
static void write_hook_list(FILE *f, const dg_sim *sim, const unit_layout *ul, bool post) {
  int n = post ? sim->n_post : sim->n_pre;
  const int *at = ul->hook_at + (post ? sim->n_pre : 0);
  fprintf(f,
          "\n__attribute__((visibility(\"default\"), flatten)) void dgc_%s(const dgc_env *e%s) "
          "{\n  dg_ctx *c = e->ctx;\n  DGC_BLOCKS\n  c->state = e->s;\n  c->state_rate = 0;\n",
          post ? "post" : "pre", post ? ", int slots_done" : "");
  if (n == 0 && sim->n_slots == 0) {
    fprintf(f, "  c->state_commit = 0;\n}\n");
    return;
  }
  fprintf(f, "  c->state_commit = e->s;\n%s", post ? "  if (!slots_done) {\n" : "  {\n");
  write_slots(f, sim, ul, "c->speed");
  fprintf(f, "  }\n");
  for (int i = 0; i < n; i++) {
    int k = at[i];
    fprintf(f, "  if (*e->failed)\n    goto done;\n  dgc_%s_%s(blk[%d], c);\n",
            post ? "post" : "pre", ul->cls[ul->type_of[k]]->type, k);
  }
  fprintf(f, "done:\n  c->state_commit = 0;\n}\n");
}

/* The event functions into g (step.c's event_values): the blocks', then
 * each lossy mesh's from the powers p (1 where it is not watched); counts
 * the active ones in `active`. */
static void write_event_values(FILE *f, const dg_sim *sim, const dg_solver *sv,
                               const unit_layout *ul, const char *g, const char *p) {
  fprintf(f, "  active = 0;\n");
  for (int i = 0; i < sim->n_evb; i++) {
    int k = ul->hook_at[sim->n_pre + sim->n_post + i];
    fprintf(f, "  active += dgc_events_%s(blk[%d], c, %s + %d) != 0;\n",
            ul->cls[ul->type_of[k]]->type, k, g, sim->ev_off[i]);
  }
  for (int j = 0; j < sv->ws.nmesh; j++)
    fprintf(f,
            "  { int on = e->watch[%d]; %s[%d] = on ? e->dir[%d] * %s[%d] : 1.0; active += on; "
            "}\n",
            j, g, sim->n_events + j, j, p, j);
}

/* dgc_run_<mi>, a hooked mode's segment between its pre_step and its
 * post_step hooks (step.c's segment_stages, segment_events and
 * segment_commit for a mode without motion or variable ratios, with
 * events located), in their order: y0 = [q; s], stage 1 into k1 (with a
 * mode's tie forces, and its hold pass: write_rest), the meshes watched
 * and the event functions at the start, stages 2-4 into yt; where any
 * function is active, the end's speeds, slots and functions (the tie
 * forces there computed when asked, as end_values leaves them). Returns
 * 4 when the hold pass asked for a new mode after stage 1 (step.c makes
 * the segment again from there), 2 when a function crossed (step.c
 * locates it from there), 0 when a hook failed the simulation or yt fails
 * check_finite; else commits yt and returns 1, or 3 when the end's values
 * were made. The stages are
 * calls of dgc_stage_<mi> and dgc_stages_<mi> (noinline): inlined here as
 * well, the four stages' hooks in one function took the compiler 30 times
 * as long (20 s for the sedan's four modes), for 3 % fewer instructions. */
static void write_run(FILE *f, const dg_sim *sim, const dg_solver *sv, int mi,
                      const unit_layout *ul) {
  int nd = sv->ndof, ns = sim->ns;
  int nev = sim->n_events + sv->ws.nmesh;
  fprintf(f,
          "\n__attribute__((visibility(\"default\"), flatten)) int dgc_run_%d(const dgc_env *e, "
          "double t, double h, double tb) {\n"
          "  double *y0w = (double *)e->y0;\n"
          "  for (int i = 0; i < %d; i++)\n    y0w[i] = e->q[i];\n",
          mi, nd);
  if (ns > 0)
    fprintf(f, "  for (int i = 0; i < %d; i++)\n    y0w[%d + i] = e->s[i];\n", ns, nd);
  /* the four stages, and the event functions at the start after the first */
  fprintf(f, "  int events = dgc_stages_%d(e, t, h, 1), active = 0;\n  (void)active;\n", mi);
  if (nev > 0 && sv->ws.nactive > 0 && sim->n_hold > 0)
    fprintf(f, "  if (events < 0)\n    return 4;\n");
  fprintf(f, "  if (*e->failed)\n    return 0;\n"
             "  dg_ctx *c = e->ctx;\n  DGC_BLOCKS\n"
             "  const double *yt = e->yt, *pw = e->pw;\n  double *xe = e->xw;\n");
  if (nev > 0) {
    fprintf(f, "  if (events) {\n");
    write_speeds(f, sv, "yt", "xe");
    fprintf(f, "  c->t = tb;\n  c->speed = xe;\n  c->state = yt + %d;\n", nd);
    if (sv->ws.nactive > 0) /* dgp_lambda_at(sim, tb, yt): computed when asked */
      fprintf(f, "  *e->lam_t = tb;\n  *e->lam_y = yt;\n  *e->lam_valid = 0;\n");
    write_slots(f, sim, ul, "xe");
    write_event_values(f, sim, sv, ul, "e->g1", "e->p4");
    fprintf(f, "  if (*e->failed)\n    return 0;\n"
               "  const double *ga = e->g0, *gb = e->g1;\n");
    /* step.c's crosses(): from > 0 to <= 0, or from exactly 0 to < 0 */
    for (int i = 0; i < nev; i++)
      fprintf(f,
              "  if (gb[%d] <= 0.0 && ((ga[%d] > 0.0 && gb[%d] <= 0.0) || (ga[%d] == 0.0 && "
              "gb[%d] < 0.0)))\n    return 2;\n",
              i, i, i, i, i);
    fprintf(f, "  }\n");
  }
  write_commit(f, sim, sv, nev > 0 ? "events" : NULL, false, "*e->keep");
  fprintf(f, "  return events ? 3 : 1;\n}\n");
}

/* dgc_stage_lam_<mi>: the stage with the tie forces after it, as
 * dgp_rk4_derivative gives them when sv.lam.want: λ = Λ (I ẍ − w) row by
 * row (ẍ = G q̇, each sum from 0.0 in the plan's order, the plan's
 * numbers as constants), w the stage's torques after the losses (tau, in
 * place, as the generic stage leaves them), factor 1, or 1 + κ of a lossy
 * mesh's tie. */
static void write_lam(FILE *f, const dg_solver *sv, const char *dy, const char *w) {
  fprintf(f,
          "  {\n  const double *lw = %s, *ldy = %s;\n"
          "  double *lv = e->lam_value, *lf = e->lam_factor;\n",
          w, dy);
  for (int a = 0; a < sv->ws.nactive; a++) {
    fprintf(f, "  { double v = 0.0;\n");
    for (int k = sv->lam.start[a]; k < sv->lam.start[a + 1]; k++) {
      int n = sv->lam.node[k];
      fprintf(f, "    { double acc = 0.0;");
      for (int z = sv->row_start[n]; z < sv->row_start[n + 1]; z++) {
        fprintf(f, " acc += ");
        lit(f, sv->gs_val[z]);
        fprintf(f, " * ldy[%d];", sv->gs_dof[z]);
      }
      fprintf(f, " v += ");
      lit(f, sv->lam.coef[k]);
      fprintf(f, " * (");
      lit(f, sv->inertia[n]);
      fprintf(f, " * acc - lw[%d]); }\n", n);
    }
    fprintf(f, "    lv[%d] = v;\n    lf[%d] = 1.0;\n  }\n", a, a);
  }
  for (int j = 0; j < sv->ws.nmesh; j++) {
    int t = sv->ws.mesh_tie[j];
    if (t >= 0 && sv->ws.ties[t].active >= 0)
      fprintf(f, "  lf[%d] = 1.0 + e->t_kap[%d];\n", sv->ws.ties[t].active, j);
  }
  fprintf(f, "  *e->lam_valid = 1;\n  }\n");
}

static void write_stage_lam(FILE *f, const dg_solver *sv, int mi) {
  fprintf(f,
          "__attribute__((visibility(\"default\"), flatten, noinline)) void dgc_stage_lam_%d("
          "const dgc_env *e, double t, const double *y, double *dy, double *de) {\n"
          "  DGC_BLOCKS\n  body%d(e, blk, e->ctx, e->xw, e->tau, t, y, dy, de);\n",
          mi, mi);
  write_lam(f, sv, "dy", "e->tau");
  fprintf(f, "}\n\n");
}

/* Mode mi's functions (its solver sv): body<mi>, one RK4 stage,
 * dgp_rk4_derivative for the mode operation for operation (see there),
 * into the node speeds x and torques tau it is given and through the
 * context c;
 * dgc_stage_<mi> (stage 1), dgc_stages_<mi> (stages 2-4, as dgp_rk4_stages
 * does, on arrays and a context of its own, leaving behind what that
 * leaves), and for a plain mode dgc_segment_<mi> (write_segment). */
static void write_mode(FILE *f, const dg_sim *sim, const dg_solver *sv, int mi,
                       const unit_layout *ul) {
  int nn = sim->nn, nd = sv->ndof, ns = sim->ns, ny = nd + ns;
  fprintf(f,
          "\n/* mode %d */\nstatic inline __attribute__((always_inline)) void body%d(const dgc_env "
          "*e, dg_block *const *blk, dg_ctx *c, double *x, double *tau, double t, "
          "const double *y, double *dy, double *de) {\n",
          mi, mi);
  write_speeds(f, sv, "y", "x");
  /* FORCES. A sum from -0.0 differs from one from 0.0 only in the sign of
   * a zero (-0 + c is c; from 0.0, -0 + ... gives +0), and -0 + c costs
   * no addition. Where only the rows' sums below read tau, each from 0.0,
   * those take its zeros to +0 as before: the rows are the same to the
   * bit. The tree's solve, the losses, the tie forces and a hold read
   * tau itself: there it starts from 0.0, as dgp_rk4_derivative's. */
  bool rows_only = !sv->tree.on && sv->ws.nmesh == 0 && sv->ws.nactive == 0 && sim->n_hold == 0;
  fprintf(f, "  for (int n = 0; n < %d; n++)\n    tau[n] = %s;\n", nn, rows_only ? "-0.0" : "0.0");
  fprintf(f,
          "  c->t = t;\n  c->speed = x;\n  c->torque = tau;\n  c->state = y + %d;\n"
          "  c->state_rate = dy + %d;\n  c->state_commit = 0;\n",
          nd, nd);
  if (sim->n_slots > 0 && !ul->slots) /* inputs bound to signals: at this point */
    fprintf(f, "  e->bind_eval(e->sim);\n");
  write_slots(f, sim, ul, "x");
  if (ns > 0)
    fprintf(f, "  for (int i = %d; i < %d; i++)\n    dy[i] = 0.0;\n", nd, ny);
  /* each hook's power from -0.0, as tau: its zeros' signs may differ
   * from dgp_rk4_derivative's, and the audit's sum of the four stages'
   * powers then too, but a work (from 0.0, never -0) plus a zero stays
   * the same to the bit; nothing else reads the powers */
  for (int i = 0; i < sim->n_torque; i++)
    fprintf(f, "  c->power = -0.0;\n  dgc_torque_%s(blk[%d], c);\n  de[%d] = c->power;\n",
            ul->cls[ul->type_of[i]]->type, i, i);
  /* the nodes a torque hook can write (its ports'): on the others tau
   * stays 0, and a sum from 0.0 (never -0) is the same without their
   * terms, to the bit */
  bool written[MAX_NODES] = {false};
  for (int i = 0; i < sim->n_torque; i++) {
    const dg_block *b = sim->torque[i].b;
    for (int p = 0, np = dgp_class_num_ports(b->klass); p < np; p++)
      if (b->node[p] >= 0 && b->node[p] < nn)
        written[b->node[p]] = true;
  }
  /* ACCEL: each row's sum in its plain order, from 0.0 (rk4.c's mat_vec);
   * on the tree, its solve (losses included) */
  if (sv->tree.on) {
    write_tree(f, sim, sv, written);
  } else if (sv->use_B) {
    for (int i = 0; i < nd; i++) {
      fprintf(f, "  { double s = 0.0;");
      for (int j = 0; j < nn; j++) {
        if (!written[j]) /* tau[j] is 0: s, never -0, stays as it is */
          continue;
        fprintf(f, " s += ");
        lit(f, sv->B[(size_t)i * (size_t)nn + (size_t)j]);
        fprintf(f, " * tau[%d];", j);
      }
      fprintf(f, " dy[%d] = s; }\n", i);
    }
  } else { /* f = Gᵀ w over the non-zeros, then M⁻¹ f */
    fprintf(f, "  double g[%d];\n", nd);
    for (int d = 0; d < nd; d++)
      fprintf(f, "  g[%d] = 0.0;\n", d);
    for (int a = 0; a < sv->nnz; a++) {
      if (!written[sv->gs_node[a]])
        continue;
      fprintf(f, "  g[%d] += ", sv->gs_dof[a]);
      lit(f, sv->gs_val[a]);
      fprintf(f, " * tau[%d];\n", sv->gs_node[a]);
    }
    size_t mst = (size_t)sv->ndof; /* dgp_mst, for this mode */
    for (int i = 0; i < nd; i++) {
      fprintf(f, "  { double s = 0.0;");
      for (int j = 0; j < nd; j++) {
        fprintf(f, " s += ");
        lit(f, sv->Minv[(size_t)i * mst + (size_t)j]);
        fprintf(f, " * g[%d];", j);
      }
      fprintf(f, " dy[%d] = s; }\n", i);
    }
  }
  if (!sv->tree.on) {
    if (sv->ws.nmesh > 0) /* the lossy meshes' loss torques (loss.c) */
      fprintf(f, "  de[%d] = e->loss_apply(e->sim, y, dy, tau);\n", sim->n_torque);
    else
      fprintf(f, "  de[%d] = 0.0;\n", sim->n_torque);
  }
  fprintf(f, "  c->state_rate = 0;\n}\n\n");
  fprintf(f,
          "__attribute__((visibility(\"default\"), flatten, noinline)) void dgc_stage_%d(const "
          "dgc_env *e, "
          "double t, const double *y, double *dy, double *de) {\n"
          "  DGC_BLOCKS\n  body%d(e, blk, e->ctx, e->xw, e->tau, t, y, dy, de);\n}\n\n",
          mi, mi);
  if (sv->ws.nactive > 0)
    write_stage_lam(f, sv, mi);
  /* dgp_rk4_stages: out = a + c b as dgp_axpy (each element alone). */
  bool own = own_arrays(sim, sv, ul);
  fprintf(f,
          "__attribute__((visibility(\"default\"), flatten, noinline)) int dgc_stages_%d(const "
          "dgc_env *e, "
          "double t, double h, int first) {\n"
          "  int events = 0, active = 0;\n  (void)active;\n",
          mi);
  write_prologue(f, sim, own);
  bool run = ul->hooked && !plain(sim, sv);
  write_rest(f, sim, sv, mi, own, true, run ? "(first ? 0 : 1)" : "1", run ? ul : NULL, false);
  fprintf(f, "  return events;\n}\n");
  if (plain(sim, sv))
    write_segment(f, sim, sv, mi);
  else if (ul->hooked)
    write_run(f, sim, sv, mi, ul);
}

/* A class's unit: its source, and its torque and signal hooks under names
 * of their own (the const class table lets the compiler call the hook
 * directly). */
static void write_class(FILE *f, const dg_block_class *k, unsigned uses) {
  const char *type = k->type;
  fprintf(f, "/* Generated by drivegraph (lib/solver/compile.c). */\n#include \"%s.c\"\n\n", type);
  if (k->torque_downstream)
    fprintf(f,
            "void dgc_torque_%s(dg_block *b, dg_ctx *ctx);\n"
            "void dgc_torque_%s(dg_block *b, dg_ctx *ctx) { "
            "dg_block_%s.torque_downstream(b, ctx); }\n",
            type, type, type);
  if (k->signal)
    fprintf(f,
            "double dgc_signal_%s(const dg_block *b, const dg_ctx *ctx, int i);\n"
            "double dgc_signal_%s(const dg_block *b, const dg_ctx *ctx, int i) { "
            "return dg_block_%s.signal(b, ctx, i); }\n",
            type, type, type);
  if (uses & USE_PRE)
    fprintf(f,
            "void dgc_pre_%s(dg_block *b, dg_ctx *ctx);\n"
            "void dgc_pre_%s(dg_block *b, dg_ctx *ctx) { dg_block_%s.pre_step(b, ctx); }\n",
            type, type, type);
  if (uses & USE_POST)
    fprintf(f,
            "void dgc_post_%s(dg_block *b, dg_ctx *ctx);\n"
            "void dgc_post_%s(dg_block *b, dg_ctx *ctx) { dg_block_%s.post_step(b, ctx); }\n",
            type, type, type);
  if (uses & USE_EVENTS)
    fprintf(f,
            "int dgc_events_%s(const dg_block *b, dg_ctx *ctx, double *g);\n"
            "int dgc_events_%s(const dg_block *b, dg_ctx *ctx, double *g) { "
            "return dg_block_%s.event_values(b, ctx, g); }\n",
            type, type, type);
}

/* ------------------------------------------------------------------------ */
/* Compiling and loading                                                    */

static int fail(dg_error *err, int code, const char *fmt, ...) DG_PRINTF(3, 4);
static int fail(dg_error *err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char text[DG_ERROR_TEXT_LEN];
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  dgp_error_set(err, code, "", "", "%s", text);
  return code;
}

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The source tree holding blocks/ and include/: DG_SOURCE_DIR when set
 * (and nothing else then), else the tree the library was built from, else
 * the installed copy. */
static const char *source_dir(char *buf, size_t size) {
  const char *env = getenv("DG_SOURCE_DIR");
  const char *cand[] = {env, env && env[0] ? NULL : DG_SOURCE_ROOT,
                        env && env[0] ? NULL : DG_INSTALLED_SOURCE};
  for (int i = 0; i < 3; i++) {
    if (!cand[i] || !cand[i][0])
      continue;
    snprintf(buf, size, "%s/blocks/load.c", cand[i]);
    if (is_file(buf)) {
      snprintf(buf, size, "%s", cand[i]);
      return buf;
    }
  }
  return NULL;
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t size) {
  snprintf(path, size, "%s/%s", dir, name);
  return fopen(path, "w");
}

/* The first line of the compiler's messages that says "error", else its
 * first line. */
static void first_error(const char *log, char *out, size_t size) {
  out[0] = '\0';
  FILE *f = fopen(log, "r");
  if (!f)
    return;
  char line[512];
  bool have = false;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (!have && line[0]) {
      snprintf(out, size, "%.*s", (int)size - 1, line);
      have = true;
    }
    if (strstr(line, "error")) {
      snprintf(out, size, "%.*s", (int)size - 1, line);
      break;
    }
  }
  fclose(f);
}

/* Runs the compiler; its output goes to `log`. */
static int run_cc(char *const *argv, const char *log, char *why, size_t size) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    snprintf(why, size, "cannot run the C compiler '%s' (set DG_CC)", argv[0]);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(why, size, "waiting for the C compiler: %s", strerror(errno));
      return -1;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127) { /* the exec failed (so valgrind says) */
    snprintf(why, size, "cannot run the C compiler '%s' (set DG_CC)", argv[0]);
    return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char msg[300];
    first_error(log, msg, sizeof msg);
    snprintf(why, size, "the C compiler '%s' failed: %s", argv[0], msg[0] ? msg : "(no message)");
    return -1;
  }
  return 0;
}

/* ---- the unit and its users ----------------------------------------- */

void dgp_unit_release(dgp_unit *u) {
  if (!u || --u->refs > 0)
    return;
  if (u->so)
    dlclose(u->so);
  for (int i = 0; i < u->nmodes; i++)
    free(u->mode[i].key);
  free(u->torque_index);
  free(u->hook_index);
  free(u);
}

void dgp_compile_free(dg_sim *sim) {
  dgp_compiled *c = sim->compiled;
  if (!c)
    return;
  for (int i = 0; c->unit && i < c->unit->nmodes; i++)
    if (c->unit->mode[i].owner == sim) /* its plan numbers mean nothing once it is gone */
      c->unit->mode[i].owner = NULL;
  dgp_unit_release(c->unit);
  free(c->blk);
  free(c);
  sim->compiled = NULL;
}

/* Everything in the scratch directory, then the directory. */
static void remove_dir(const char *dir, char (*files)[64], int n) {
  char path[4096];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%.2000s/%.63s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

static void inputs_at(void *sim, double t) { dgp_inputs_at(sim, t); }
static void bind_eval(void *sim) { dgp_bind_eval(sim); }
static bool hold_pass(void *sim, double t, double h) { return dgp_hold_pass(sim, t, h); }
static double tree_accel(void *sim, double *dq, double *w) { return dgp_tree_accel(sim, dq, w); }
static double loss_apply(void *sim, const double *q, double *dq, double *w) {
  return dgp_loss_apply(sim, q, dq, w);
}

/* The hooks around the stages, in one order: the pre_step hooks, the
 * post_step hooks, the blocks with event functions. Hook i's block, and
 * which of the three it is in *use. */
static int hook_count(const dg_sim *sim) { return sim->n_pre + sim->n_post + sim->n_evb; }

static const dg_block *hook_block(const dg_sim *sim, int i, unsigned *use) {
  if (i < sim->n_pre) {
    *use = USE_PRE;
    return sim->pre[i].b;
  }
  i -= sim->n_pre;
  if (i < sim->n_post) {
    *use = USE_POST;
    return sim->post[i].b;
  }
  *use = USE_EVENTS;
  return sim->evb[i - sim->n_post].b;
}

/* Whether the simulation's hook lists and bound inputs are those the
 * unit's code was written for. */
static bool fits(const dg_sim *sim, const dgp_unit *u) {
  if (u->g != sim->g || u->n_torque != sim->n_torque || u->n_pre != sim->n_pre ||
      u->n_post != sim->n_post || u->n_hold != sim->n_hold || u->n_events != sim->n_events ||
      u->n_slots != sim->n_slots)
    return false;
  for (int i = 0; i < sim->n_torque; i++)
    if (u->torque_index[i] != sim->torque[i].b->index)
      return false;
  if (u->n_evb != sim->n_evb)
    return false;
  unsigned use;
  for (int i = 0; u->pre && i < hook_count(sim); i++)
    if (u->hook_index[i] != hook_block(sim, i, &use)->index)
      return false;
  return true;
}

/* The simulation's arrays and hooks' blocks for the unit's code. */
static dgp_compiled *use_unit(dg_sim *sim, dgp_unit *u) {
  dgp_compiled *c = calloc(1, sizeof *c);
  dg_block **blk = calloc((size_t)u->nlist + 1, sizeof *blk);
  if (!c || !blk) {
    free(c);
    free(blk);
    return NULL;
  }
  int n = 0;
  for (int i = 0; i < sim->n_torque; i++)
    blk[n++] = sim->torque[i].b;
  for (int k = 0; n < u->nlist && k < sim->n_slots; k++)
    if (sim->slots[k].node < 0)
      blk[n++] = (dg_block *)sim->slots[k].src; /* copied, never written through */
  dg_solver *sv = &sim->sv;
  c->blk = blk;
  c->unit = u;
  c->cur = -1;
  c->serve.tunes = sim->g->tunes + 1; /* resolved at its first use (dgp_compiled_stale) */
  c->env = (dgc_env){.ctx = &sim->ctx,
                     .blk = blk,
                     .xw = sv->xw,
                     .tau = sv->tau,
                     .sim = sim,
                     .inputs_at = inputs_at,
                     .y0 = sv->rk.y0,
                     .k1 = sv->rk.k1,
                     .k2 = sv->rk.k2,
                     .k3 = sv->rk.k3,
                     .k4 = sv->rk.k4,
                     .yt = sv->rk.yt,
                     .x1 = sv->mot.x1,
                     .xsum = sv->mot.xsum,
                     .pw = sv->audit.pw,
                     .pcur = &sv->audit.pcur,
                     .bind_eval = bind_eval,
                     .tree_accel = tree_accel,
                     .loss_apply = loss_apply,
                     .p = sv->loss.p,
                     .p4 = sv->loss.p4,
                     .q = sv->q,
                     .s = sv->s,
                     .x = sv->x,
                     .theta = sv->mot.theta,
                     .keep = &sim->keep,
                     .work = sv->audit.work,
                     .eff_loss = &sv->audit.eff_loss,
                     .failed = &sim->failed,
                     .loss_hold = &sv->loss.hold,
                     .tree_held = &sv->tree.held,
                     .tree_factored = &sv->tree.factored,
                     .tree_shape = &sv->tree.shape,
                     .t_os = sv->tree.op_s,
                     .t_of = sv->tree.op_f,
                     .t_ob = sv->tree.op_b,
                     .t_pa = sv->tree.op_pa,
                     .t_pb = sv->tree.op_pb,
                     .t_ub = sv->tree.upd_b,
                     .t_uf = sv->tree.upd_f,
                     .t_ag = sv->tree.al_g,
                     .t_fic = sv->tree.fm_ic,
                     .t_kap = sv->loss.kap,
                     .lam = sv->loss.lam,
                     .dir = sv->loss.dir,
                     .kf = sv->loss.kf,
                     .kb = sv->loss.kb,
                     .t_kfac = sv->tree.kap,
                     .slot_val = sim->slot_val,
                     .g0 = sv->ev.g0,
                     .g1 = sv->ev.g1,
                     .watch = sv->loss.watch,
                     .lam_value = sv->lam.value,
                     .lam_factor = sv->lam.factor,
                     .lam_valid = &sv->lam.valid,
                     .lam_t = &sv->lam.t,
                     .lam_y = &sv->lam.y,
                     .hold_pass = hold_pass};
  return c;
}

void dgp_compile_attach(dg_sim *sim, dgp_unit *u) {
  if (!u || sim->compiled || !fits(sim, u))
    return;
  dgp_compiled *c = use_unit(sim, u);
  if (!c)
    return;
  u->refs++;
  sim->compiled = c;
}

/* Lists block b (its class once). */
static void layout_add(unit_layout *ul, const dg_block *b) {
  int k = 0;
  while (k < ul->ntypes && ul->cls[k] != b->klass)
    k++;
  if (k == ul->ntypes && ul->ntypes < MAX_CLASSES)
    ul->cls[ul->ntypes++] = b->klass;
  ul->type_of[ul->nlist] = k < MAX_CLASSES ? k : 0;
  ul->list[ul->nlist++] = b;
}

static void layout_free(unit_layout *ul) {
  free(ul->list);
  free(ul->type_of);
  free(ul->slot_at);
  free(ul->hook_at);
}

/* Block b's place in the layout's list, added if it is not there: a hook's
 * block; `use` marks its class (-1: more classes than a unit holds). */
static int layout_hook(unit_layout *ul, const dg_block *b, unsigned use) {
  int i = 0;
  while (i < ul->nlist && ul->list[i] != b)
    i++;
  if (i == ul->nlist) {
    if (ul->ntypes == MAX_CLASSES)
      return -1;
    layout_add(ul, b);
  }
  ul->uses[ul->type_of[i]] |= use;
  return i;
}

/* The hooks around the stages into the layout (hooked), when every one is
 * a built-in class's and the slots are evaluated in the unit; their
 * blocks' indices into idx (pre_step, post_step, event hooks). */
static void layout_hooks(const dg_sim *sim, unit_layout *ul, int *idx) {
  int nlist = ul->nlist, ntypes = ul->ntypes;
  ul->hooked = sim->n_slots == 0 || ul->slots;
  for (int i = 0; ul->hooked && i < hook_count(sim); i++) {
    unsigned use;
    const dg_block *b = hook_block(sim, i, &use);
    int k = is_builtin(b->klass) ? layout_hook(ul, b, use) : -1;
    if (k < 0) {
      ul->hooked = false;
      break;
    }
    ul->hook_at[i] = k;
    idx[i] = b->index;
  }
  if (!ul->hooked) { /* the stages' blocks alone */
    ul->nlist = nlist;
    ul->ntypes = ntypes;
    memset(ul->uses, 0, sizeof ul->uses);
  }
}

/* The modes to write: the current one (sim->sv) and those the mode cache
 * keeps, each that can be compiled (the current one must be). */
typedef struct mode_list {
  int n;
  const dg_solver *sv[MAX_MODES];
  const unsigned char *key[MAX_MODES];
  size_t len[MAX_MODES];
} mode_list;

static void list_modes(const dg_sim *sim, mode_list *ml) {
  ml->n = 1;
  ml->sv[0] = &sim->sv;
  ml->key[0] = NULL;
  ml->len[0] = 0;
  dgp_cache_current_key(sim, &ml->key[0], &ml->len[0]);
  const dg_solver *sv[MAX_MODES];
  const unsigned char *key[MAX_MODES];
  size_t len[MAX_MODES];
  int n = dgp_cache_other_modes(sim, sv, key, len, MAX_MODES - 1);
  for (int i = 0; i < n; i++) {
    if (why_not_mode(sim, sv[i]))
      continue;
    ml->sv[ml->n] = sv[i];
    ml->key[ml->n] = key[i];
    ml->len[ml->n++] = len[i];
  }
}

int dg_sim_compile(dg_sim *sim, dg_error *err) {
  dg_error local;
  if (!err)
    err = &local;
  memset(err, 0, sizeof *err);
  if (!sim)
    return fail(err, DG_ERR_USAGE, "no simulation given");
  const char *why = dgp_compile_why_not(sim);
  if (why)
    return fail(err, DG_ERR_USAGE, "its current mode cannot be compiled: %s", why);
  char src[2048];
  if (!source_dir(src, sizeof src))
    return getenv("DG_SOURCE_DIR") && getenv("DG_SOURCE_DIR")[0]
               ? fail(
                     err, DG_ERR_IO,
                     "the blocks' sources are not found: DG_SOURCE_DIR ('%s') has no blocks/load.c",
                     getenv("DG_SOURCE_DIR"))
               : fail(err, DG_ERR_IO,
                      "the blocks' sources are not found (looked in '%s' and '%s'); set "
                      "DG_SOURCE_DIR to a drivegraph source tree",
                      DG_SOURCE_ROOT, DG_INSTALLED_SOURCE);
  mode_list ml;
  list_modes(sim, &ml);
  unit_layout ul = {0};
  size_t nl = (size_t)sim->n_torque + (size_t)sim->n_slots + (size_t)sim->n_pre +
              (size_t)sim->n_post + (size_t)sim->n_evb + 1;
  size_t nh = (size_t)hook_count(sim);
  ul.list = calloc(nl, sizeof *ul.list);
  ul.type_of = calloc(nl, sizeof *ul.type_of);
  ul.slot_at = calloc((size_t)sim->n_slots + 1, sizeof *ul.slot_at);
  ul.hook_at = calloc(nh + 1, sizeof *ul.hook_at);
  dgp_unit *u = calloc(1, sizeof *u);
  if (u) {
    u->torque_index = calloc((size_t)sim->n_torque + 1, sizeof *u->torque_index);
    u->hook_index = calloc(nh + 1, sizeof *u->hook_index);
  }
  if (!ul.list || !ul.type_of || !ul.slot_at || !ul.hook_at || !u || !u->torque_index ||
      !u->hook_index) {
    layout_free(&ul);
    if (u) {
      free(u->torque_index);
      free(u->hook_index);
    }
    free(u);
    return fail(err, DG_ERR_NOMEM, "out of memory");
  }
  u->refs = 1; /* this function's, until the simulation and the graph take theirs */
  u->g = sim->g;
  u->tunes = sim->g->tunes;
  u->n_torque = sim->n_torque;
  u->n_pre = sim->n_pre;
  u->n_post = sim->n_post;
  u->n_hold = sim->n_hold;
  u->n_events = sim->n_events;
  u->n_slots = sim->n_slots;
  u->n_evb = sim->n_evb;
  for (int i = 0; i < sim->n_torque; i++) {
    layout_add(&ul, sim->torque[i].b);
    u->torque_index[i] = sim->torque[i].b->index;
  }
  /* the inputs bound to signals, evaluated in the stage when every source
   * class is built in (else through bind.c) */
  ul.slots = sim->n_slots > 0;
  for (int k = 0; k < sim->n_slots; k++) {
    const dg_slot *sl = &sim->slots[k];
    ul.slot_at[k] = -1;
    if (sl->node >= 0)
      continue;
    if (!is_builtin(sl->src->klass) || !sl->src->klass->signal || ul.ntypes == MAX_CLASSES) {
      ul.slots = false;
      continue;
    }
    ul.slot_at[k] = ul.nlist;
    layout_add(&ul, sl->src);
  }
  if (!ul.slots) /* the torque hooks' blocks alone */
    ul.nlist = sim->n_torque;
  layout_hooks(sim, &ul, u->hook_index);
  u->nlist = ul.nlist;
  dgp_compiled *c = NULL;
  const char *tmp = getenv("TMPDIR");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/drivegraph-cc-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  char files[MAX_CLASSES + 4][64];
  int nfiles = 0;
  int rc = DG_OK;
  char why_buf[600] = "";
  if (!mkdtemp(dir)) {
    rc = fail(err, DG_ERR_IO, "cannot make a scratch directory '%s': %s", dir, strerror(errno));
    goto out_free;
  }
  char path[4096];
  /* the units */
  snprintf(files[nfiles++], 64, "stage.c");
  FILE *f = open_in(dir, "stage.c", path, sizeof path);
  if (f) {
    write_head(f, &ul, ml.n);
    for (int m = 0; m < ml.n; m++)
      write_mode(f, sim, ml.sv[m], m, &ul);
    if (ul.hooked) {
      write_hook_list(f, sim, &ul, false);
      write_hook_list(f, sim, &ul, true);
    }
    if (ul.slots) /* the slots at the context's point (a step's end) */
      fprintf(f, "\n__attribute__((visibility(\"default\"), flatten)) void dgc_slots(const dgc_env "
                 "*e) {\n  dg_ctx *c = e->ctx;\n  DGC_BLOCKS\n");
    if (ul.slots) {
      write_slots(f, sim, &ul, "c->speed");
      fprintf(f, "}\n");
    }
    if (fclose(f) != 0)
      f = NULL;
  }
  for (int k = 0; f && k < ul.ntypes; k++) {
    snprintf(files[nfiles++], 64, "k_%s.c", ul.cls[k]->type);
    f = open_in(dir, files[nfiles - 1], path, sizeof path);
    if (f) {
      write_class(f, ul.cls[k], ul.uses[k]);
      if (fclose(f) != 0)
        f = NULL;
    }
  }
  if (!f) {
    rc = fail(err, DG_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    goto out;
  }
  snprintf(files[nfiles++], 64, "stage.so");
  snprintf(files[nfiles++], 64, "cc.log");
  /* cc -O3 ... -o stage.so stage.c k_*.c SRC/lib/table.c -lm */
  {
    const char *cc = getenv("DG_CC");
    char inc_a[2100], inc_b[2100], inc_c[2100], table[2100], out[1100], log[1100];
    char unit[MAX_CLASSES + 1][1100]; /* dir (< 1024) / a file's name (< 64) */
    snprintf(inc_a, sizeof inc_a, "-I%s/include", src);
    snprintf(inc_b, sizeof inc_b, "-I%s/blocks", src);
    snprintf(inc_c, sizeof inc_c, "-I%s/lib", src); /* gearbox.c's internal.h */
    snprintf(table, sizeof table, "%s/lib/table.c", src);
    snprintf(out, sizeof out, "%s/stage.so", dir);
    snprintf(log, sizeof log, "%s/cc.log", dir);
    char *argv[32 + MAX_CC_WORDS + MAX_CLASSES];
    int a = 0;
    /* DG_CC's words, split at blanks as a shell would without quotes
     * ("ccache gcc", "gcc -m64") */
    char ccbuf[1024];
    if (cc && strlen(cc) >= sizeof ccbuf) {
      rc = fail(err, DG_ERR_USAGE, "DG_CC is longer than %zu characters", sizeof ccbuf - 1);
      goto out;
    }
    snprintf(ccbuf, sizeof ccbuf, "%s", cc ? cc : "");
    for (char *save = NULL, *w = strtok_r(ccbuf, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save)) {
      if (a == MAX_CC_WORDS) {
        rc = fail(err, DG_ERR_USAGE, "DG_CC has more than %d words", MAX_CC_WORDS);
        goto out;
      }
      argv[a++] = w;
    }
    if (a == 0)
      argv[a++] = "cc";
    /* -O3 inlines the hooks; the vectorizers are off because their 16-byte
     * loads of values just stored 8 bytes at a time (a stage's rates, the
     * node speeds) stall store forwarding: 30% of the axle's time. The
     * stage's short loops stay loops, not memset and memcpy calls. Global
     * CSE and code hoisting are off: they keep constants (a tyre's B, C,
     * D) in registers across the loop over the stages, and every libm
     * call of a stage then spills them to the stack and reloads them (the
     * sedan: 143 fewer instructions a step without them, the same time). */
    const char *flags[] = {"-std=c11",
                           "-O3",
                           "-fno-tree-vectorize",
                           "-fno-tree-slp-vectorize",
                           "-fno-tree-loop-distribute-patterns",
                           "-fno-gcse",
                           "-fno-code-hoisting",
                           "-fPIC",
                           "-shared",
                           "-fvisibility=hidden",
                           "-ffp-contract=off",
                           "-flto",
                           "-w",
                           "-D_POSIX_C_SOURCE=200809L"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
      argv[a++] = (char *)flags[i];
    argv[a++] = inc_a;
    argv[a++] = inc_b;
    argv[a++] = inc_c;
    argv[a++] = "-o";
    argv[a++] = out;
    for (int k = 0; k <= ul.ntypes; k++) {
      snprintf(unit[k], sizeof unit[k], "%.1024s/%.63s", dir, files[k]);
      argv[a++] = unit[k];
    }
    argv[a++] = table;
    argv[a++] = "-lm";
    argv[a] = NULL;
    /* the cache on disk (unitcache.c): a unit of the same key is loaded
     * instead of compiled; one that fails to load is compiled again */
    char cache_dir[1024], cached[1200];
    bool use_cache = dgp_unit_cache_dir(cache_dir, sizeof cache_dir);
    if (use_cache) {
      dgp_hash h;
      dgp_hash_init(&h);
      dgp_hash_str(&h, "drivegraph unit 1");
      size_t dl = strlen(dir);
      for (int i = 0; i < a; i++) /* the scratch directory's files by their names */
        dgp_hash_str(&h, strncmp(argv[i], dir, dl) == 0 ? argv[i] + dl : argv[i]);
      for (int k = 0; k <= ul.ntypes; k++)
        dgp_hash_file(&h, unit[k], files[k]);
      char sd[2100];
      const char *sub[][2] = {{"blocks", NULL}, {"include/drivegraph", NULL}, {"lib", ".h"}};
      for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
        snprintf(sd, sizeof sd, "%s/%s", src, sub[i][0]);
        dgp_hash_dir(&h, sd, sub[i][1]);
      }
      dgp_hash_file(&h, table, "lib/table.c");
      dgp_unit_cache_path(cache_dir, &h, cached, sizeof cached);
      if (dgp_unit_cache_usable(cached)) {
        u->so = dlopen(cached, RTLD_NOW | RTLD_LOCAL);
        if (u->so && dlsym(u->so, "dgc_bind"))
          u->from_cache = true;
        else {
          if (u->so)
            dlclose(u->so);
          u->so = NULL;
          unlink(cached);
        }
      }
    }
    if (!u->so) {
      if (run_cc(argv, log, why_buf, sizeof why_buf) != 0) {
        rc = fail(err, DG_ERR_IO, "%s", why_buf);
        goto out;
      }
      if (use_cache)
        dgp_unit_cache_store(cached, out);
      u->so = dlopen(out, RTLD_NOW | RTLD_LOCAL);
    }
    if (!u->so) {
      const char *e = dlerror();
      rc = fail(err, DG_ERR_IO, "cannot load the compiled stage: %s", e ? e : "?");
      goto out;
    }
    for (int m = 0; m < ml.n; m++) {
      char name[3][32];
      snprintf(name[0], sizeof name[0], "dgc_stage_%d", m);
      snprintf(name[1], sizeof name[1], "dgc_stages_%d", m);
      snprintf(name[2], sizeof name[2], "dgc_segment_%d", m);
      void *sym = dlsym(u->so, name[0]), *sym2 = dlsym(u->so, name[1]);
      if (!sym || !sym2) {
        rc = fail(err, DG_ERR_IO, "the compiled stage has no %s or %s", name[0], name[1]);
        goto out;
      }
      dgc_mode *md = &u->mode[m];
      memcpy(&md->stage, &sym, sizeof sym); /* object to function pointer (POSIX) */
      memcpy(&md->stages, &sym2, sizeof sym2);
      char lam[32];
      snprintf(lam, sizeof lam, "dgc_stage_lam_%d", m);
      void *sym6 = dlsym(u->so, lam);
      if (sym6) /* a mode with ties' */
        memcpy(&md->stage_lam, &sym6, sizeof sym6);
      void *sym4 = dlsym(u->so, name[2]);
      if (sym4) /* a plain mode's */
        memcpy(&md->segment, &sym4, sizeof sym4);
      char lean[40];
      snprintf(lean, sizeof lean, "dgc_segment_%d_lean", m);
      void *sym7 = dlsym(u->so, lean);
      if (sym7) /* ... keeping neither the work nor the angles */
        memcpy(&md->segment_lean, &sym7, sizeof sym7);
      char run[32];
      snprintf(run, sizeof run, "dgc_run_%d", m);
      void *sym5 = dlsym(u->so, run);
      if (sym5) /* a hooked mode's */
        memcpy(&md->run, &sym5, sizeof sym5);
      if (ml.key[m]) {
        md->key = malloc(ml.len[m]);
        if (!md->key) {
          rc = fail(err, DG_ERR_NOMEM, "out of memory");
          goto out;
        }
        memcpy(md->key, ml.key[m], ml.len[m]);
        md->key_len = ml.len[m];
      }
      u->nmodes = m + 1;
    }
    if (ul.hooked) {
      void *pre = dlsym(u->so, "dgc_pre"), *post = dlsym(u->so, "dgc_post");
      if (!pre || !post) {
        rc = fail(err, DG_ERR_IO, "the compiled stage has no dgc_pre or dgc_post");
        goto out;
      }
      memcpy(&u->pre, &pre, sizeof pre);
      memcpy(&u->post, &post, sizeof post);
    }
    void *slots = ul.slots ? dlsym(u->so, "dgc_slots") : NULL;
    if (slots)
      memcpy(&u->slots, &slots, sizeof slots);
    u->mode[0].owner = sim; /* the current plan: by its number too (it may have no key) */
    u->mode[0].gen = sim->plan_gen;
    void *sym3 = dlsym(u->so, "dgc_bind");
    void (*bind)(const dgc_api *) = NULL;
    if (sym3)
      memcpy(&bind, &sym3, sizeof sym3);
    if (!bind) {
      rc = fail(err, DG_ERR_IO, "the compiled stage has no dgc_bind");
      goto out;
    }
    bind(&api_table);
  }
  c = use_unit(sim, u);
  if (!c) {
    rc = fail(err, DG_ERR_NOMEM, "out of memory");
    goto out;
  }
  dgp_compile_free(sim);
  sim->compiled = c;                /* takes this function's reference */
  dg_graph *g = (dg_graph *)sim->g; /* simulations made of it from now on take the unit */
  dgp_unit_release(g->compiled);
  g->compiled = u;
  u->refs++;
  u = NULL;
out:
  if (!(getenv("DG_COMPILE_KEEP") && getenv("DG_COMPILE_KEEP")[0]))
    remove_dir(dir, files, nfiles);
out_free:
  dgp_unit_release(u);
  layout_free(&ul);
  return rc;
}

const char *dgp_compile_why_not(const dg_sim *sim) { return why_not_mode(sim, &sim->sv); }

/* The unit's mode for the current plan, matched once per plan: by the
 * mode cache's key of its declarations, or (the compiling simulation) by
 * the plan's number. */
static int match_mode(const dg_sim *sim, const dgp_unit *u) {
  const unsigned char *key = NULL;
  size_t len = 0;
  bool keyed = dgp_cache_current_key(sim, &key, &len);
  for (int i = 0; i < u->nmodes; i++) {
    const dgc_mode *m = &u->mode[i];
    if (keyed && m->key && m->key_len == len && memcmp(m->key, key, len) == 0)
      return i;
    if (m->owner == sim && m->gen == sim->plan_gen)
      return i;
  }
  return -1;
}

/* The serve table for the current plan and parameters: the unit's mode
 * matched once per plan (by the mode cache's key, or for the compiling
 * simulation by the plan's number); the hooks and slots while the unit's
 * constants are the graph's parameters (no tuning since it was compiled),
 * and the mode's functions then too. */
void dgp_compiled_resolve(dg_sim *sim) {
  dgp_compiled *c = sim->compiled;
  dgp_serve *s = &c->serve;
  if (c->gen != sim->plan_gen) {
    c->gen = sim->plan_gen;
    c->cur = match_mode(sim, c->unit);
  }
  const dgp_unit *u = c->unit;
  bool current = u->tunes == sim->g->tunes;
  const dgc_mode *m = current && c->cur >= 0 ? &u->mode[c->cur] : NULL;
  s->gen = sim->plan_gen;
  s->tunes = sim->g->tunes;
  s->env = &c->env;
  s->mode = m != NULL;
  s->segment = !m ? NULL : sim->keep == 0 && m->segment_lean ? m->segment_lean : m->segment;
  s->run = m ? m->run : NULL;
  s->pre = current ? u->pre : NULL;
  s->post = current ? u->post : NULL;
  s->slots = current ? u->slots : NULL;
}

void dgp_compiled_stale(dg_sim *sim) {
  dgp_compiled *c = sim->compiled;
  if (c) /* a tune count the graph has not reached */
    c->serve.tunes = sim->g->tunes + 1;
}

/* The unit's mode serving this stage: the current plan's, with the
 * parameter values the unit holds as constants; where tie forces are
 * wanted, only a single stage of a mode with them written out
 * (`with_lam`). */
static const dgc_mode *serving(dg_sim *sim, bool with_lam) {
  const dgp_serve *s = dgp_serve_of(sim);
  if (!s->mode)
    return NULL;
  const dgc_mode *m = &sim->compiled->unit->mode[sim->compiled->cur];
  if (sim->sv.lam.want && !(with_lam && m->stage_lam))
    return NULL;
  return m;
}

bool dgp_compiled_stages(dg_sim *sim, double t, double h) {
  dgp_compiled *c = sim->compiled;
  const dgc_mode *m = serving(sim, false);
  if (!m)
    return false;
  sim->sv.xw_end = false;
  m->stages(&c->env, t, h, 0);
  sim->stages += 3;
  c->serve.calls += 3;
  return true;
}

bool dgp_compiled_stage(dg_sim *sim, double t, const double *y, double *dy) {
  dgp_compiled *c = sim->compiled;
  const dgc_mode *m = serving(sim, true);
  if (!m)
    return false;
  sim->sv.xw_end = false;
  /* computes G q itself: the committed speeds' copy (rk4.c) is for the
   * generic stage, and its flag must not outlive this stage */
  sim->sv.xw_committed = false;
  (sim->sv.lam.want ? m->stage_lam : m->stage)(&c->env, t, y, dy, sim->sv.audit.pcur);
  c->serve.calls++;
  c->serve.lam += sim->sv.lam.want;
  return true;
}

long dgp_compiled_run_count(const dg_sim *sim, long *crossed) {
  if (crossed)
    *crossed = sim->compiled ? sim->compiled->serve.crossed : -1;
  return sim->compiled ? sim->compiled->serve.runs : -1;
}

long dgp_compiled_lam_count(const dg_sim *sim) {
  return sim->compiled ? sim->compiled->serve.lam : -1;
}

long dgp_compiled_new_mode_count(const dg_sim *sim) {
  return sim->compiled ? sim->compiled->serve.new_modes : -1;
}

int dg_sim_compiled_from_cache(const dg_sim *sim) {
  return sim && sim->compiled ? sim->compiled->unit->from_cache : -1;
}

long dgp_compiled_segment_count(const dg_sim *sim) {
  return sim->compiled ? sim->compiled->serve.segments : -1;
}

int dgp_compiled_mode_count(const dg_sim *sim) {
  return sim->compiled ? sim->compiled->unit->nmodes : -1;
}

long dg_sim_compiled_stage_count(const dg_sim *sim) {
  return sim && sim->compiled ? sim->compiled->serve.calls : -1;
}

long dg_sim_stage_count(const dg_sim *sim) { return sim ? sim->stages : 0; }
