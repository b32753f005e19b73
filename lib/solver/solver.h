/* The solver's rooms: one file and one workspace (lib/sim.h) per concern,
 * and the private functions they call across (prefix dgp_).
 *
 *   topo.c    the dg_topo_* calls of state_upstream; ties eliminated (x = R T q)
 *   plan.c    a mode's plan: G, M and its factor, the ACCEL map, Λ; mode changes
 *   kin.c     variable kinematics: the rows that change with a ratio, refreshed
 *   loss.c    lossy meshes: maps per mode, multipliers and loss torques per stage
 *   dense.c   Cholesky, Gaussian elimination, dot products (stride nn)
 *   tree.c    the ACCEL stage, losses included, as one sparse solve over the
 *             forest of nodes and constraints (linear time; loop-free modes)
 *   rk4.c     one stage SPEEDS → FORCES → ACCEL, RK4 and its dense output, tie forces
 *   inputs.c  schedules and callbacks inside the step
 *   step.c    the step: segments, events, commit, energy audit
 *   start.c   initial speeds
 *   buffers.c every room's arrays: allocation, freeing, snapshots
 *
 * The solver's interface to the rest of the library (dg_solver_*) is in
 * lib/sim.h; nothing outside lib/solver/ includes this file. */
#ifndef DG_SOLVER_ROOMS_H
#define DG_SOLVER_ROOMS_H

#include "sim.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

/* Relative size under which a pivot counts as zero: ratios in drivetrains
 * span a few decades, so 1e-10 separates round-off from real coefficients. */
#define DGP_PIVOT_EPS 1e-10

/* A function kept out of line: the cold path of a hot one (an error's
 * report), so the hot one stays small and saves no registers for it. */
#if defined(__GNUC__)
#define DGP_NOINLINE __attribute__((noinline, cold))
#else
#define DGP_NOINLINE
#endif
/* A function inlined wherever it is called, whatever the compiler's
 * estimate (a hot path whose callers pass constants it folds). */
#if defined(__GNUC__)
#define DGP_INLINE inline __attribute__((always_inline))
#else
#define DGP_INLINE inline
#endif
/* ... and one that is not cold (a mode's less common rows), out of line
 * only so that its caller's common path keeps the registers. */
#if defined(__GNUC__)
#define DGP_OUTLINE __attribute__((noinline))
#else
#define DGP_OUTLINE
#endif

/* ---- buffers.c: each room lists its arrays with their sizes ------------ */

/* One array a room owns: the address of its pointer member (of whatever
 * pointer type; read and written with memcpy, as object pointers share one
 * representation here) and its size in bytes (a function of the graph). */
typedef struct dgp_buf {
  void *slot;
  size_t bytes;
  /* NULL, or a flag of the solver's (in sim->sv) that says whether the
   * array means anything now: a snapshot of a solver with the flag false
   * skips the array (a room the mode does not use: the tree's) */
  const bool *live;
  /* written by the mode's build alone (dgp_solver_build and what it calls)
   * and only read between builds: an in-memory state save skips it when
   * the mode's arrays are still those of the save (lib/state.c) */
  bool plan;
  /* of the plan, and written by the blocks' state_upstream hooks too
   * (their declarations: the mode cache's key): the mode cache has the
   * hooks write these in scratch arrays, which a miss swaps into the
   * slot the new mode takes (cache.c) */
  bool decl;
} dgp_buf;

typedef struct dgp_buf_list {
  dgp_buf *buf;
  int n, cap;
} dgp_buf_list;

static inline void dgp_buf_add(dgp_buf_list *l, void *slot, size_t count, size_t size) {
  DG_ASSERT(l->n < l->cap);
  l->buf[l->n++] = (dgp_buf){slot, count * size, NULL, false, false};
}

/* An array of the mode's plan (see dgp_buf.plan). */
static inline void dgp_buf_add_plan(dgp_buf_list *l, void *slot, size_t count, size_t size) {
  DG_ASSERT(l->n < l->cap);
  l->buf[l->n++] = (dgp_buf){slot, count * size, NULL, true, false};
}

/* An array of the mode's plan that the hooks write (see dgp_buf.decl). */
static inline void dgp_buf_add_decl(dgp_buf_list *l, void *slot, size_t count, size_t size) {
  DG_ASSERT(l->n < l->cap);
  l->buf[l->n++] = (dgp_buf){slot, count * size, NULL, true, true};
}

/* An array that means something only while *live (a flag in sim->sv). */
static inline void dgp_buf_add_live(dgp_buf_list *l, void *slot, size_t count, size_t size,
                                    const bool *live) {
  DG_ASSERT(l->n < l->cap);
  l->buf[l->n++] = (dgp_buf){slot, count * size, live, false, false};
}

/* An array of the mode's plan that means something only while *live. */
static inline void dgp_buf_add_plan_live(dgp_buf_list *l, void *slot, size_t count, size_t size,
                                         const bool *live) {
  DG_ASSERT(l->n < l->cap);
  l->buf[l->n++] = (dgp_buf){slot, count * size, live, true, false};
}

/* The mode cache (cache.c): at most this many modes' plans kept. */
#define DGP_CACHE_SLOTS 16

/* The mode cache (cache.c): created after the buffers, freed before them;
 * a build begins on a free slot (true: through the cache), looks the
 * mode up after the hooks (true: a hit, the plan in place) or stores it at
 * its end; anything else writing the plan arrays forgets the current
 * slot. Tests: verify (every hit built again in full and compared) and
 * counts. */
int dgp_cache_alloc(dg_sim *sim);
void dgp_cache_free(dg_sim *sim);
bool dgp_cache_begin(dg_sim *sim);
bool dgp_cache_lookup(dg_sim *sim);
void dgp_cache_store(dg_sim *sim, int rc);
void dgp_cache_forget(dg_sim *sim);
void dgp_cache_verify(dg_sim *sim, bool on);
void dgp_cache_stats(const dg_sim *sim, long *hits, long *misses, long *verify_fail);
/* The key of the current plan's declarations when the cache keeps it (a
 * valid slot holds sim->plan_gen's plan): *key, *len; else false. */
bool dgp_cache_current_key(const dg_sim *sim, const unsigned char **key, size_t *len);
/* The other modes the cache keeps (valid slots but the current), at most
 * max: each one's solver as its build left it (its plan arrays the
 * slot's) and key. Returns how many. */
int dgp_cache_other_modes(const dg_sim *sim, const dg_solver **sv, const unsigned char **key,
                          size_t *len, int max);

/* A lossy mesh's direction of power flow from its multiplier λ and the
 * speed v it transmits at: +1 / −1 as λ·v, and where no power flows the
 * held one `dir` while λ is 0, else 0 (the loss solve, dense or on the
 * tree, iterates it to a fixed point). compile.c's write_tree writes the
 * same expression into a compiled stage: a change here goes there too. */
static inline int dgp_mesh_direction(double lam, double v, int dir) {
  double p = lam * v;
  return p > 0.0 ? 1 : p < 0.0 ? -1 : (lam == 0.0 ? dir : 0);
}
/* The node angles of a mode whose speeds are x = G q, G fixed within
 * the segment (no variable ratio, no prescribed speed): their RK4
 * quadrature h/6 (x1 + 2 x2 + 2 x3 + x4) is G times that of q, which
 * RK4's stages make h q0 + h²/6 (k1 + k2 + k3) (q2 = q0 + h/2 k1, q3 =
 * q0 + h/2 k2, q4 = q0 + h k3), so the commit computes G once instead
 * of the stages summing every node's speed (step.c, compile.c). */
static inline bool dgp_angles_linear(const dg_solver *sv) {
  return !sv->variable_kinematics && sv->mot.np == 0 && sv->mot.n_gp == 0;
}

/* Mesh j's κ for its direction of power flow: 1/η_b − 1 when side b
 * drives, η − 1 when side a does, 0 when none flows (compile.c's
 * write_tree writes the same expression). */
static inline double dgp_mesh_kappa(const dg_solver *sv, int j) {
  int d = sv->loss.dir[j];
  return d > 0 ? sv->loss.kf[j] : d < 0 ? sv->loss.kb[j] : 0.0;
}

/* R, Ṙ and C from the declarations of the hooks (topo.c), before the
 * elimination. */
void dgp_topo_rows(dg_sim *sim);

/* Tests: the bytes of the solver's arrays that are in memory now (a mapped
 * array's touched pages, the small ones whole; buffers.c). */
size_t dgp_solver_resident_bytes(const dg_sim *sim);

void dgp_topo_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_plan_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_kin_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_loss_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_rk4_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_step_buffers(dg_sim *sim, dgp_buf_list *l);
void dgp_tree_buffers(dg_sim *sim, dgp_buf_list *l);

/* ---- dense.c ------------------------------------------------------------ */

/* Cholesky of the leading n×n of a (lower triangle used) into l (may be a);
 * 0, or -1 - j for the first column whose pivot is not positive. */
int dgp_cholesky(const double *a, double *l, int n, size_t stride);
/* Solves L Lᵀ x = b in place. */
void dgp_cholesky_solve(const double *l, int n, size_t stride, double *x);
/* Solves S x = rhs (m × m) in place, partial pivoting; -1 when singular. */
int dgp_solve_dense(double *S, double *x, int m, size_t st);
static inline double dgp_dot(const double *a, const double *b, int n) {
  double v = 0.0;
  for (int i = 0; i < n; i++)
    v += a[i] * b[i];
  return v;
}

/* out = a + c·b over n values (out may be a). Two values at a time, both
 * loaded before either is stored: the compiler makes each pair one packed
 * SSE2 multiply and add, with each value's operations those of the plain
 * loop, so the results are the same bit for bit in half the instructions. */
static inline void dgp_axpy(double *out, const double *a, double c, const double *b, int n) {
  int i = 0;
  for (; i + 1 < n; i += 2) {
    double a0 = a[i], a1 = a[i + 1], b0 = b[i], b1 = b[i + 1];
    out[i] = a0 + c * b0;
    out[i + 1] = a1 + c * b1;
  }
  if (i < n)
    out[i] = a[i] + c * b[i];
}

/* ---- tree.c ------------------------------------------------------------- */

/* On any K whose graph (start, nbr) peels leaf by leaf, with kout[e] =
 * K[v][w] and kin[e] = K[w][v] at edge e = v→w and the diagonal diag0:
 * the factor (-1: singular, -2: a loop), and K z = b in place. */
int dgp_tree_factor(dg_tree_ws *t);
/* Where the last dgp_tree_factor recorded its eliminations (t->rt_on: a
 * mode whose ratios vary), the factor of new values of K and diag0 by the
 * same eliminations, bit for bit what dgp_tree_factor gives: 0, or -1
 * where a pivot's being zero changed (factor in full). */
int dgp_tree_factor_values(dg_tree_ws *t);
void dgp_tree_solve(const dg_tree_ws *t, double *z);
/* The mode's system and its factor (tree.on when the ACCEL stage uses it),
 * factored for the meshes' κ in kap (NULL: all 0). */
void dgp_tree_build(dg_sim *sim, const double *kap);
/* A variable-ratio mode's refresh on the tree: its values from the links'
 * new coefficients, the structure kept (dgp_tree_build where none was
 * recorded); tree.on false when it cannot be factored. */
void dgp_tree_refresh(dg_sim *sim, const double *kap);
/* The ACCEL stage: q̇ into dq, loss torques added to w; the loss power. */
double dgp_tree_accel(dg_sim *sim, double *dq, double *w);

/* ---- topo.c ------------------------------------------------------------- */

/* The first error of a build: code, message and the block it names. */
void dgp_topo_error(dg_sim *sim, int block, int code, const char *fmt, ...) DG_PRINTF(4, 5);
/* Row stride of R, Ṙ, C, T and P (rows over the raw DOFs; T's columns,
 * nred, are at most as many): the build's raw DOF count, final once the
 * hooks have declared (R and C are written after them, dgp_topo_rows). */
static inline size_t dgp_rst(const dg_sim *sim) { return (size_t)sim->sv.ws.nraw; }
/* Node `node`'s row of R over the raw DOFs. */
static inline double *dgp_row_of(const dg_sim *sim, int node) {
  return sim->sv.ws.R + (size_t)node * dgp_rst(sim);
}
/* A node without a row gets a raw DOF of its own (inline: the hooks of
 * every build call it per port). */
void dgp_topo_new_raw(dg_sim *sim, int node, int owner);
static inline void dgp_topo_ensure_row(dg_sim *sim, int node, int owner) {
  if (!sim->sv.ws.has_row[node])
    dgp_topo_new_raw(sim, node, owner);
}
/* Eliminates the ties; fills T (nraw × nred) and returns nred. */
int dgp_topo_eliminate(dg_sim *sim);
/* Row of G = R T of one node. */
void dgp_reduced_row(const dg_sim *sim, int node, int nred, double *out);
/* "block.port" of a node, for messages. */
void dgp_node_label(const dg_sim *sim, int node, char *buf, size_t size);
/* The nodes for which on(node) holds, and their blocks, for messages. */
void dgp_describe_nodes(const dg_sim *sim, bool (*on)(const dg_sim *, int, int), int arg,
                        char *nodes, size_t nsize, char *blocks, size_t bsize, int *first);

/* ---- plan.c ------------------------------------------------------------- */

/* Row stride of the mode's DOF × DOF arrays (M, its factor L, M⁻¹ and
 * kin.Mfix): the mode's DOF count, so that a mode writes n_dof² of them
 * (the arrays are sized for the largest, nn²; buffers.c maps them). */
static inline size_t dgp_mst(const dg_sim *sim) { return (size_t)sim->sv.ndof; }
/* Row stride of G and kin.Gd (nn × the mode's columns, free and
 * prescribed): those columns, nred. */
static inline size_t dgp_gst(const dg_sim *sim) {
  return (size_t)(sim->sv.ndof + sim->sv.mot.np);
}

/* M = Gᵀ diag(I) G and its factor (and M⁻¹, B for constant kinematics);
 * `refresh`: only the rows that change. */
int dgp_plan_mass(dg_sim *sim, bool refresh);
/* M⁻¹ and, for small modes (use_B), B = M⁻¹ Gᵀ: the dense ACCEL stage's. */
void dgp_plan_inverse(dg_sim *sim);
/* The SPEEDS stage's rows: one non-zero, two, more. */
void dgp_plan_speed_rows(dg_sim *sim);
/* out = Gᵀ v (ndof) over G's non-zeros. */
void dgp_g_transpose(const dg_sim *sim, const double *v, double *out);
/* q = M⁻¹ G_fᵀ I (x − G_p v): the free DOFs closest to node speeds x. */
void dgp_plan_project(dg_sim *sim, const double *x, double *q);
/* Turns the build's error into the simulation's, with the time. */
void dgp_fail_topology(dg_sim *sim, int rc);

/* ---- compile.c ---------------------------------------------------------- */

typedef struct dgp_compiled dgp_compiled;
/* Why the current mode's stage cannot be compiled, or NULL. */
const char *dgp_compile_why_not(const dg_sim *sim);
/* The compiled stage at (t, y) when it serves the current plan (and no tie
 * forces are wanted): true when it ran, else the generic stage must. */
bool dgp_compiled_stage(dg_sim *sim, double t, const double *y, double *dy);
/* RK4's stages 2-4 and the combination (dgp_rk4_stages), likewise. */
bool dgp_compiled_stages(dg_sim *sim, double t, double h);
void dgp_compile_free(dg_sim *sim);
/* unitcache.c: the compiled units' cache on disk. A 128-bit key (two
 * independent 64-bit hashes of one stream) of what a unit's code depends
 * on, and where the unit of a key is kept. */
typedef struct dgp_hash {
  uint64_t a, b;
} dgp_hash;
void dgp_hash_init(dgp_hash *h);
void dgp_hash_bytes(dgp_hash *h, const void *data, size_t n);
void dgp_hash_str(dgp_hash *h, const char *s);
void dgp_hash_file(dgp_hash *h, const char *path, const char *name);
void dgp_hash_dir(dgp_hash *h, const char *dir, const char *suffix);
/* The cache's directory, made if missing (DG_COMPILE_CACHE, else the
 * user's cache directory): false when there is none or it is not private
 * to the user. */
bool dgp_unit_cache_dir(char *buf, size_t size);
void dgp_unit_cache_path(const char *dir, const dgp_hash *h, char *path, size_t size);
/* A cached unit that may be loaded: a non-empty regular file, owned by
 * the user, that no one else may write. */
bool dgp_unit_cache_usable(const char *path);
/* Keeps a copy of the unit `built` at `path` (a temporary file renamed:
 * atomic); silent on failure. */
void dgp_unit_cache_store(const char *path, const char *built);

typedef struct dgp_unit dgp_unit;
/* A simulation made of a graph that keeps a compiled unit takes it (when
 * its hook lists are the unit's): dg_sim_new. Allocates; on failure the
 * simulation runs the generic stages. */
void dgp_compile_attach(dg_sim *sim, dgp_unit *u);
/* Modes the simulation's unit holds (-1: none). */
int dgp_compiled_mode_count(const dg_sim *sim);
/* What the step calls of the simulation's compiled unit, resolved once per
 * plan and parameter tuning (dgp_compiled_resolve) and read inline by
 * step.c; the first member of the simulation's dgp_compiled. Each
 * function is the unit's where it serves, else NULL (step.c runs the
 * generic code then):
 *  - segment: a plain mode's whole segment from the committed state, with
 *    its commit (step.c's compiled_segment): 0 when the result fails
 *    check_finite or a hook failed the simulation (nothing committed), 1
 *    when it is committed;
 *  - run: a hooked mode's segment between its hooks (no ties, motion or
 *    variable ratios) over [t, tb] of length h, with events located
 *    (step.c's segment_rest): 0 failed (a hook, or check_finite), 1
 *    committed, 2 an event function crossed (the state as segment_events
 *    leaves it before locating it), 3 committed with the end's slots and
 *    event functions made;
 *  - pre, post: the pre_step (post_step) hooks, the same operations as
 *    step.c's run_hooks; slots: the bound inputs at the context's point
 *    (dgp_bind_eval). These serve while the unit's parameters are the
 *    graph's; segment and run also need a mode of the unit for the plan.
 * The step uses segment and run only when no stage wants tie forces
 * (sv.lam.want), and segment only without timed or bound inputs. */
typedef struct dgc_env dgc_env;
typedef struct dgp_serve {
  uint64_t gen;        /* the plan it was resolved for */
  unsigned long tunes; /* the graph's tune count then */
  const dgc_env *env;
  int (*segment)(const dgc_env *e, double t, double h);
  int (*run)(const dgc_env *e, double t, double h, double tb);
  void (*pre)(const dgc_env *e);
  void (*post)(const dgc_env *e, int slots_done);
  void (*slots)(const dgc_env *e);
  bool mode;           /* a mode of the unit serves the plan (its stages) */
  long calls;          /* stages the unit ran (tests) */
  long segments, runs; /* whole segments, hooked runs it ran (tests) */
  long crossed;        /* ... runs an event function crossed in */
  long lam;            /* ... stages with the tie forces (dgc_stage_lam) */
  long new_modes;      /* runs whose hold pass asked for a new mode */
} dgp_serve;
void dgp_compiled_resolve(dg_sim *sim);
/* The serve table resolved again at its next use (what it chose depends
 * on something that changed: what the simulation keeps). */
void dgp_compiled_stale(dg_sim *sim);
/* The simulation's serve table, current; NULL without a compiled unit. */
static inline dgp_serve *dgp_serve_of(dg_sim *sim) {
  dgp_serve *s = (dgp_serve *)(void *)sim->compiled;
  if (s && (s->gen != sim->plan_gen || s->tunes != sim->g->tunes))
    dgp_compiled_resolve(sim);
  return s;
}
/* step.c: one RK4 step with events, in segments (to each event or input
 * break), with the mode's serve sv (NULL: none); and a plain mode's step
 * by its compiled segment (compile.c's plain(): no hooks around the
 * stages, no events, no ties). */
int dgp_step_segments(dg_sim *sim, dgp_serve *sv, double dt);
int dgp_compiled_step(dg_sim *sim, dgp_serve *sv, double t_end);
/* One RK4 step with events; the body of dg_sim_step. A plain mode's
 * compiled step is chosen here, in the caller, so that it does not pay for
 * the registers the segments' loop saves: no timed or bound inputs (they
 * may come and go without a new plan), no tie forces wanted. */
static inline int dgp_solver_step(dg_sim *sim, double dt) {
  dgp_serve *sv = dgp_serve_of(sim);
  if (sv && sv->segment && sim->n_timed == 0 && sim->n_slots == 0 && !sim->sv.lam.want)
    return dgp_compiled_step(sim, sv, sim->t + dt);
  return dgp_step_segments(sim, sv, dt);
}
/* step.c's hold pass at a segment's start (t, h), after its first stage:
 * the hold_check hooks on the tie forces of that stage; whether one asked
 * for a new mode. */
bool dgp_hold_pass(dg_sim *sim, double t, double h);
/* The whole segments it ran (tests), or -1 without a compiled unit. */
long dgp_compiled_segment_count(const dg_sim *sim);
/* The hooked modes' runs it made (tests), or -1 without a compiled unit;
 * *crossed (unless NULL): those an event function crossed in. */
long dgp_compiled_run_count(const dg_sim *sim, long *crossed);
/* The stages it ran with the tie forces (tests), or -1 without a unit. */
long dgp_compiled_lam_count(const dg_sim *sim);
/* The runs it left after stage 1 for a new mode (tests), or -1. */
long dgp_compiled_new_mode_count(const dg_sim *sim);

/* ---- kin.c -------------------------------------------------------------- */

/* A link's new coefficients during a refresh (dg_topo_link_rate). */
void dgp_kin_refresh_link(dg_sim *sim, const dg_block *b, int dst, int n, const double *coef,
                          const double *coef_rate);
/* Λ's entries at the changed rows. */
void dgp_kin_refresh_lambda(dg_sim *sim);
/* The kinematics at the point a substep evaluates: refresh, or build. */
int dgp_kin_update(dg_sim *sim);
/* w −= I Ġ q at the rows that change. */
void dgp_kin_bias(dg_sim *sim, const double *q, double *w);

/* ---- motion.c ----------------------------------------------------------- */

/* The mode's prescribed columns (after the ndof free ones of nred). */
void dgp_motion_plan(dg_sim *sim, int nred);
/* Prescribed speeds and rates at t (inputs already at t). */
void dgp_motion_eval(dg_sim *sim, double t);
/* x += G_p v */
void dgp_motion_add_speeds(const dg_sim *sim, double *x);
/* w −= I G_p v̇ */
void dgp_motion_inertial(const dg_sim *sim, double *w);
/* Each prescription's force from the stage's q̇ and torques. */
void dgp_motion_forces(const dg_sim *sim, const double *dq, const double *w, double *f);
/* A segment's start: prescribed speeds that jumped move the free DOFs. */
void dgp_motion_segment_start(dg_sim *sim, double t);
void dgp_motion_buffers(dg_sim *sim, dgp_buf_list *l);

/* ---- ports.c ------------------------------------------------------------ */

/* The inertia a block declares at a port, by port (inline: every build's
 * hooks call it). */
static inline void dgp_ports_add_inertia(dg_sim *sim, const dg_block *b, int port, double inertia) {
  sim->sv.ports.inertia[sim->sv.ports.base[b->index] + port] += inertia;
}
void dgp_ports_buffers(dg_sim *sim, dgp_buf_list *l);

/* ---- loss.c ------------------------------------------------------------- */

/* A redundant lossy tie that moves: refused. */
void dgp_loss_check_ties(dg_sim *sim);
/* The mode's mesh maps. */
int dgp_loss_build(dg_sim *sim);
/* The ACCEL stage's losses; returns the loss power (≤ 0). */
double dgp_loss_apply(dg_sim *sim, const double *q, double *dq, double *w);
/* Below this power (W) a mesh's reversal is not located: a mesh carrying
 * round-off would end a segment at every step (compile.c writes the same
 * test into compiled runs). */
#define DGP_MESH_WATCH_POWER 1e-9
/* At a segment's first stage: the meshes whose reversal it locates. */
void dgp_loss_watch_start(dg_sim *sim);
/* Each mesh's event function from the powers p (1 when not watched) into
 * g; returns how many are watched. */
int dgp_loss_event_values(const dg_sim *sim, double *g, const double *p);

/* ---- rk4.c -------------------------------------------------------------- */

/* ẏ at (t, y), y = [q; s]: one stage. */
void dgp_rk4_derivative(dg_sim *sim, double t, const double *y, double *dy);
/* y = [q; s] of the committed state. */
void dgp_rk4_gather(dg_sim *sim, double *y);
/* Stages 2-4 from y0 and k1 over h, and the combination into yt. */
void dgp_rk4_stages(dg_sim *sim, double t, double h, int ny);
/* Tie forces (and prescription forces) at the point dgp_lambda_at set. */
void dgp_rk4_compute_lambda(dg_sim *sim);
/* The state at t + θh on the continuous extension, into ydense. */
void dgp_rk4_dense(dg_sim *sim, double theta, double h, int ny);
void dgp_commit_angles(dg_sim *sim, double h, int nd);

/* The point the next tie-force query refers to: (t, y), or the committed
 * state when y is NULL; computed when first asked for. */
static inline void dgp_lambda_at(dg_sim *sim, double t, const double *y) {
  sim->sv.lam.t = t;
  sim->sv.lam.y = y;
  sim->sv.lam.valid = false;
}

/* A DOF speed this large is a blow-up (step.c's check_finite). */
#define DGP_SPEED_LIMIT 1e9

/* ---- inputs.c ----------------------------------------------------------- */

/* Breakpoints and segment ends closer than this are the same time: a step
 * time accumulated over many steps differs from a breakpoint written in a
 * file by round-off (~1e-13 s after 10⁴ steps), never by a billionth of a
 * step. */
static inline double dgp_time_tol(double t, double h) {
  return 1e-9 * h + 8.0 * DBL_EPSILON * fabs(t);
}

/* Continuous inputs at a time inside the current segment. */
void dgp_inputs_at_timed(dg_sim *sim, double t);
/* ... without a call where there are none (constants and channels only:
 * what a stage costs then is nothing). */
static inline void dgp_inputs_at(dg_sim *sim, double t) {
  if (sim->n_timed > 0)
    dgp_inputs_at_timed(sim, t);
}
/* The end of a segment starting at ta: t_end or an earlier breakpoint. */
double dgp_inputs_next_break(const dg_sim *sim, double ta, double t_end, double tol);

#endif
