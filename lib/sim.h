/* The simulation's private layout, shared by sim.c (API, signals, inputs)
 * and solver.c (topology, coupled inertia, RK4). Cold data (names, graph)
 * is kept apart from the arrays the step touches, which are allocated once
 * in dg_sim_new at their largest size so the step never allocates. */
#ifndef DG_SIM_H
#define DG_SIM_H

#include "internal.h"

#include <stdint.h>

typedef void (*dg_ctx_hook)(dg_block *self, dg_ctx *ctx);

typedef struct dg_hook_entry {
  dg_ctx_hook fn;
  dg_block *b;
} dg_hook_entry;

typedef struct dg_signal_entry {
  char *name;       /* "block.signal" */
  const char *unit;
  int block;
  int index;        /* in the class's signal table */
  int node;         /* >= 0: scale · speed[node] */
  double scale;
  int port_kind;    /* port signals: DG_PORT_SIGNAL_ANGLE or _TORQUE of port `index` */
} dg_signal_entry;

enum { DG_PORT_SIGNAL_ANGLE = 1, DG_PORT_SIGNAL_TORQUE };

/* An input bound to a signal: evaluated into sim->slot_val at each point. */
typedef struct dg_slot {
  const dg_block *src;
  int signal;       /* in src's class table */
  int node;         /* >= 0: a speed signal, scale · speed[node] */
  double scale;
} dg_slot;

/* A tie as declared in the current mode. */
typedef struct dg_tie {
  int block;        /* declaring block */
  int first, n;     /* node terms in tie_node / tie_coef */
  bool ground;      /* one term: holds a node at rest */
  int active;       /* row in the multiplier map, or -1 when redundant */
  int mesh;         /* lossy (dg_topo_tie_lossy, a lossy link closing a loop): its mesh, else -1 */
  int presc;        /* rheonomic (dg_topo_prescribe on a shaft that had a speed): x = q[raw presc] */
  bool yields;      /* a hold that gives way to another on its shaft (dg_topo_tie_yielding) */
} dg_tie;

/* An input that varies with time: a piecewise-linear schedule or a
 * callback, evaluated by the solver at every substep's time (stepped
 * schedules only at the start of each step segment). */
typedef struct dg_timed_input {
  int input;          /* index in sim->input */
  bool stepped;       /* hold v_k over a segment (integer inputs: gear) */
  int n;              /* breakpoints; 0 for a callback */
  double *t, *v;      /* owned */
  int piece;          /* last breakpoint with t_k <= segment start, -1 before the first */
  dg_input_fn fn;
  void *user;
} dg_timed_input;

/* Topology workspace: sizes are bounds fixed at creation. */
typedef struct dg_topo_ws {
  int nraw;          /* raw DOFs declared in this build */
  double *R;         /* nn × nraw: node rows over raw DOFs (row stride nraw: dgp_rst) */
  double *Rd;        /* nn × nraw: their time derivatives (variable kinematics only, else 0 bytes) */
  unsigned char *has_row;
  int *raw_owner;    /* block that declared raw DOF k */
  int *raw_node;     /* node of raw DOF k */
  int *raw_presc;    /* 1: raw DOF k is prescribed (dg_topo_prescribe), never a pivot */
  double *T;         /* nraw × nred: raw DOFs from reduced DOFs (stride nraw) */
  int *col_raw;      /* raw DOF each reduced column came from */
  int nties, max_ties;
  dg_tie *ties;
  int nterms, max_terms;
  int *tie_node;
  double *tie_coef;
  double *C;         /* nties × nraw: ties over raw DOFs (stride nraw; sized max_ties × nn) */
  double *P;         /* nactive × nraw (stride nraw): multiplier map (CCᵀ)⁻¹C of the active ties */
  double *A;         /* nactive × nactive scratch (stride nactive): C Cᵀ of the active ties and its factor */
  int *active_tie;   /* active row → tie index */
  double *tie_acoef; /* max_terms: side a's share of each lossy tie's coefficients */
  int nactive;
  /* variable kinematics: the links of the build, in order, so a substep
   * can recompute the rows that depend on a changing coefficient */
  int nlinks, max_links;
  int *link_dst, *link_first, *link_n, *link_block;
  unsigned char *link_var;   /* coefficients come from a variable-kinematics block */
  bool links_complete;       /* every link of the build is recorded */
  /* lossy meshes declared in this build: a link (mesh_link >= 0) or a tie
   * (mesh_tie >= 0), with its efficiency */
  int nmesh;
  int *mesh_link, *mesh_tie; /* nn each */
  double *mesh_eta;          /* nn: while side a (dst) drives */
  double *mesh_eta_b;        /* nn: while side b (the sources) drives */
  /* nn each: efficiency over the speed of side a (|a·x|, rad/s) while side
   * a / side b drives, or NULL (the constants above) */
  const dg_table1d **mesh_tab_a, **mesh_tab_b;
  int *link_src;             /* max_terms: source nodes */
  double *link_coef, *link_rate; /* max_terms */
  unsigned char *row_dirty;  /* nn: the node's row depends on a variable link */
  unsigned char *row_own;    /* nn: raw DOF k writes its node's row (dgp_topo_rows) */
  int refresh_cursor;        /* links visited while refreshing */
  bool refreshing;           /* state_upstream runs to read new coefficients */
  bool refresh_bad;          /* a refresh found another structure: build in full */
  int error;         /* first error while building (DG_ERR_*) */
  char errmsg[DG_ERROR_TEXT_LEN];
  int errblock;
  bool err_ratio_loop; /* the error is a loop of contradicting ratios (check.c's tie-ups) */
} dg_topo_ws;

struct dg_topo {
  dg_sim *sim;
};

/* The loss room (lib/solver/loss.c): the lossy meshes' maps. Each mesh
 * loses (1 − η) of the power it transmits. Per mode (per substep with
 * variable kinematics), for mesh j with the constraint (a_j + b_j)·x = 0
 * and multiplier λ_j: u_j (nn) with λ_j = u_j·(I ẍ − w), b_j (nn),
 * h_j = Gᵀ I u_j, d_j = M⁻¹ Gᵀ b_j, ga_j = Gᵀ a_j, gb_j = Gᵀ b_j (ndof
 * each, stride nn), and W_ij = h_i·d_j − u_i·b_j (stride nn). Loss torques
 * κ_j λ_j b_j. */
typedef struct dg_loss_ws {
  double *u, *b, *h, *d, *ga, *gb; /* nn × nn each */
  double *gap;              /* nn × nn: G_pᵀ a_j over the prescribed columns */
  double *W, *S;            /* nn × nn */
  double *lam0, *lam, *kap, *z; /* nn each */
  int *dir;                 /* nn: power direction of the last solve (+1: from side b) */
  double *p;                /* nn: power delivered to side a at the last evaluation (W) */
  double *p4;               /* nn: the same at the segment's fourth stage */
  unsigned char *watch;     /* nn: the segment locates this mesh's power reversal */
  bool hold;                /* inside a segment: the directions its first stage took */
  double *kf, *kb;          /* nn: κ when side b drives (1/η − 1), when side a does (η − 1) */
  int *un, *bn;             /* the non-zeros of u_j and b_j (nodes), mesh after mesh ... */
  double *uv, *bv;          /* ... and their values (sized nn × nn) */
  int *nu, *nb;             /* nn: how many */
  int *u0, *b0;             /* nn: mesh j's first in un/uv, bn/bv (packed: a mesh's few
                             * non-zeros, not a row of nn) */
  double *cA, *cAtA;        /* nn × nn: constraint columns over nodes, and AᵀA's factor */
} dg_loss_ws;

/* The tree room (lib/solver/tree.c): the ACCEL stage as one sparse solve
 * over nodes and constraints, for modes whose graph of nodes and
 * constraints peels leaf by leaf (a drivetrain without loops). Unknowns z = [ẍ; λ]
 * (nn node accelerations, then one multiplier per constraint: each link,
 * each active tie); equations I ẍ − Ã λ = w at the nodes and Aᵀ ẍ = 0 at
 * the constraints, Ã = A with each lossy mesh's side b scaled by 1 + κ_j.
 * Eliminated leaf by leaf (pivot d_v ≠ 0), or, where a leaf's pivot is 0 (a
 * shaft without inertia, a constraint between such shafts), with its
 * neighbour as a pair whose elimination couples nothing: no fill, O(nn + K)
 * to factor and to solve. Sizes: nv ≤ nn + max_links + max_ties vertices,
 * ne directed edges (each entry of A twice). */
typedef struct dg_tree_ws {
  bool on;                  /* this mode's ACCEL stage solves on the tree */
  bool factored;            /* the pivots are those of kap */
  bool tables;              /* a mesh's efficiency follows a table of speed: κ per stage */
  bool held;                /* kap is that of the directions a segment holds (no tables) */
  int nn;                   /* nodes (vertices 0 .. nn − 1; aliases among them are gone) */
  int nv, ne, ncon;         /* vertices (nodes, then constraints), directed edges, constraints */
  int nops;                 /* eliminations of the factor */
  bool simple;              /* none pairs two vertices or updates more than one (a chain) */
  int npair;                /* eliminations that pair two vertices (listed in parent) */
  int nmain;                /* eliminations with updates (the first nmain); the rest,
                             * a component's last vertex each, update nothing */
  uint64_t shape;           /* a hash of the eliminations' structure (vertices, partners,
                             * updates): compiled stages that wrote it out check it */
  bool no_shape;            /* shape not kept (0): a mode no stage is compiled for
                             * (variable ratios, rebuilt at every stage) */
  int *start;               /* nv + 1: vertex v's edges are [start[v], start[v+1]) */
  int *nbr;                 /* per edge: the vertex at its other end */
  double *a, *b;            /* per edge (n, c) or (c, n): A_nc and its side-b part */
  double *kout, *kin;       /* per edge v→w: K[v][w] and K[w][v] */
  int *con_mesh;            /* per constraint: its lossy mesh, -1 */
  int *mesh_con;            /* per mesh: its constraint, -1 (an idle redundant tie) */
  /* per mesh, its constraint's entries at the nodes themselves, in two
   * rows of their non-zeros (a link's side a is its dst alone, side b its
   * sources): side a's coefficients A − B in [mesh_first[j],
   * mesh_first[j+1]) of mesh_node / mesh_ab, side b's B in [mesh_bfirst[j],
   * mesh_bfirst[j+1]) of mesh_bnode / mesh_b */
  int *mesh_first, *mesh_node, *mesh_bfirst, *mesh_bnode;
  double *mesh_ab, *mesh_b;
  int *dof_node;            /* per DOF: the node whose speed it is (its row of G is e_j) */
  /* aliases: nodes a link with one source makes copies, x_n = c x_up (a
   * shaft block's far end, a gear's input; a lossy one only where nothing
   * below it but copies touches a constraint): not vertices; their
   * inertia and torque are folded into their up node, the deepest first,
   * with c and, across a lossy link, 1 + κ of its mesh (docs/solver.md,
   * "Aliases"), and z_n = C z_root after */
  int nalias;
  bool *gone;               /* per node: an alias, no vertex of the factor */
  int *al_node, *al_up;     /* per alias, the deepest first: the node, the one it copies */
  int *al_root, *al_mesh;   /* ... its root (a vertex), the mesh of its link or -1 */
  double *al_cup, *al_c;    /* ... c of its link, C the product of those up to the root */
  double *al_g;             /* ... c (1 + κ): what crosses its link, for the factor's κ */
  double *ieff;             /* per node: its inertia with what is folded into it, for κ */
  int *mesh_alias;          /* per mesh: the alias its link made, -1 */
  bool all_folded;          /* every mesh a folded link (rows of one entry each) */
  int *fm_root;             /* per folded mesh: its root (its dst and source: its rows) */
  double *fm_ic;            /* ... I_eff C of its dst, for the factor's κ */
  double *base;             /* per vertex: its inertia (0: a constraint, an alias) */
  double *diag0, *d;        /* per vertex: the diagonal (inertia, 0), the pivot */
  /* per vertex: scratch of the factor (leaves, neighbours left); after
   * it, parent lists the eliminations that pair two vertices, then nmain */
  int *order, *parent;
  int *step;                /* per vertex: the elimination that removes it */
  /* per elimination k: vertex v, its partner u (v's pivot 0: they leave
   * together) or -1, the scale of z_v (1/d_v, or 1/K[v][u]) and a pair's
   * 1/K[u][v], d_u/K[u][v]; its updates [op_first[k], op_first[k+1]):
   * z[upd_r] −= upd_f · (scaled z_v) forward, z_v −= upd_b · z[upd_r] back;
   * the first of them also inline (op_r, op_f, op_b; the rest from op_x) */
  int *op_v, *op_u, *op_first, *op_r, *op_x;
  double *op_s, *op_pa, *op_pb, *op_f, *op_b;
  int *upd_r;
  double *upd_f, *upd_b;
  double *z;                /* per vertex: the right side, then the solution */
  double *kap;              /* per mesh: κ of the factor */
  int *ent_c, *ent_n;       /* build scratch: the entries of A (constraint, node) ... */
  double *ent_a, *ent_b;    /* ... and their values */
  /* variable ratios (a CVT): how the build made A's values, so that a
   * refresh makes them again from the links' new coefficients without
   * the structure (dgp_tree_refresh; arrays of size 0 otherwise) */
  bool rt_on;            /* the build records (variable kinematics) */
  bool rt_ok;            /* a record of this mode's build is there */
  int nrt;               /* the terms the build added, in order: */
  int *rt_ent;           /* ... the entry (before the aliases move) each went to, */
  bool *rt_new;          /* ... whether it began that entry, */
  int *rt_coef;          /* ... the link term whose −c it is, or -1: */
  double *rt_a, *rt_b;   /* ... its constant values */
  int npe;               /* entries before the aliases move: */
  int *pe_n, *pe_cfirst; /* ... their nodes, each constraint's first (ncon + 1) */
  double *pe_a, *pe_b;   /* ... their values */
  int *pe_to, *pe_al;    /* ... the entry each went to, the alias whose C scaled it */
  bool *pe_new;          /* ... whether it began that entry */
  int *fe_en, *fe_ec;    /* per entry: its two edges */
  int *al_link, *al_upa; /* per alias: its link, its up node's alias or -1 */
  /* ... and the factor's eliminations as the last full factor made them
   * (in their order before the roots move last): vertex, edge to its
   * partner or the one it updates (-1), whether it pairs, its place
   * after the move, its first update (nops + 1); per update, its edge */
  bool fr_ok;
  int *fr_v, *fr_e, *fr_to, *fr_first, *fu_e;
  bool *fr_pair;
} dg_tree_ws;

/* The variable-kinematics room (lib/solver/kin.c): what a refresh of the
 * rows that change with a ratio needs. */
typedef struct dg_kin_ws {
  double *Gd;               /* nn × nred (stride nred, as G): Ġ; variable kinematics only */
  double *Mfix;             /* M of the rows that do not change */
  bool refreshable;         /* the mode's variable links can be refreshed in place */
  bool lam_stale;           /* Λ predates a refresh of the rows */
} dg_kin_ws;

/* Prescribed motion (dg_topo_prescribe): the mode's prescribed columns of
 * G (after the free ones), their speeds and rates at the point evaluated
 * (the blocks' motion hooks), and the node angles, integrated with RK4's
 * weights from the stages' node speeds. */
typedef struct dg_motion_ws {
  int np;                   /* prescribed columns in this mode */
  int *block;               /* nn: the block prescribing column i */
  double *v, *vd;           /* nn: speed and rate of column i at the last evaluation */
  double *force;            /* nn: the force column i applies, at the last evaluation */
  double *lam_force;        /* nn: the same at the tie forces' point (dg_ctx_motion_torque) */
  double vt;                /* the time v and vd are of (NaN: none yet) */
  bool frozen;              /* the stage keeps v and vd as they are (boundary.c) */
  int n_gp;                 /* non-zeros of G's prescribed columns: */
  int *gp_node, *gp_col;    /* nn × nn: node, column i */
  double *gp_val;
  double *theta;            /* nn: node angles (rad, or m on a linear node) */
  double *x1, *xsum;        /* nn: stage 1's node speeds; Σ w_i x_i of a segment's stages */
} dg_motion_ws;

/* The ports room (lib/solver/ports.c): every port's torque at the committed
 * state, on demand. Ports are numbered base[block] + port. */
typedef struct dg_port_ws {
  int *base;                /* nb + 1 */
  double *inertia;          /* per port: the inertia its block declared there (this mode) */
  double *applied;          /* per port: its block's hook (and mesh loss) torques */
  double *torque;           /* per port: the torque its block applies to the shaft */
  double *cA, *cAtA;        /* nn × nn: the mode's constraints over nodes, AᵀA's factor */
  int *owner;               /* nn: the block of each constraint */
  double *rate;             /* ns: scratch for the hooks' state rates */
  double *acc;              /* nn: node accelerations */
  bool valid;               /* for (t, segments, topo_changes, inputs): */
  double t;
  long segments, topo_changes, inputs;
} dg_port_ws;

/* The RK4 room (lib/solver/rk4.c): stage arrays over y = [q; s]. */
typedef struct dg_rk4_ws {
  double *y0, *yt, *k1, *k2, *k3, *k4;
  double *ydense;           /* a state on the step's dense output */
  double *ysave;            /* the segment's end state while locating */
} dg_rk4_ws;

/* The step room's events (lib/solver/step.c): the event functions at the
 * segment start, its end, and a trial time. */
typedef struct dg_event_ws {
  double *g0, *g1, *gt;
  double *gend;       /* while locating: the functions at the segment's end, */
  double *glo;        /* at the bracket's left end (of the RK4 step to it), */
  unsigned char *off; /* those the dense output is not trusted for, */
  double *kf;         /* and the segment's RK4 stages k2, k3, k4 */
} dg_event_ws;

/* Tie multipliers (lib/solver/rk4.c) from the ACCEL stage: λ = Λ (I ẍ − w),
 * Λ = P Rᵀ over nodes (built by lib/solver/plan.c), stored sparse per
 * active tie. */
typedef struct dg_lambda_ws {
  int *start;               /* nactive + 1 */
  int *node;
  double *coef;
  bool valid;
  bool want;                /* the current stage computes λ */
  double t;                 /* where λ is wanted when not valid: (t, */
  const double *y;          /* y), or the committed state when NULL */
  double *value;            /* per active tie: at the end of the last segment */
  double *factor;           /* per active tie: side b's factor at the last λ (1, η, 1/η) */
} dg_lambda_ws;

/* The energy audit: net work per block, booked by dg_port_add_torque. */
typedef struct dg_audit_ws {
  double *work;             /* per block */
  double eff_loss, impact_loss, ke_start;
  int ne;                   /* one power per torque hook + the meshes' losses */
  double *pw;               /* 5 × ne: the powers of RK4's four stages, and a scratch row */
  double *pcur;             /* where the current evaluation puts its powers */
} dg_audit_ws;

/* The hot part of a simulation: everything a step reads or writes, laid
 * out for the solver's stages, one workspace per room of lib/solver/. The
 * current mode's *plan* (built between steps by dgp_solver_build: the
 * SPEEDS rows, single-term apart from multi-term, the factor or inverse of
 * M and the ACCEL map B), the state y = [q; s] the solver owns (block
 * states included), and the rooms' workspaces. Every array is allocated at
 * creation at its largest size, so a step never allocates, and the state of
 * a simulation is these arrays plus the blocks' data (dg_sim_snapshot
 * copies them). */
typedef struct dgp_plan_cache dgp_plan_cache;

typedef struct dg_solver {
  /* per node */
  double *inertia;
  double *x;                /* committed node speeds */
  double *normal_load;      /* per node, published by bodies */
  double *tau;              /* node torque accumulator, then with the meshes' loss torques */
  double *xw;               /* substep node speeds */
  bool xw_end;              /* xw holds the speeds of rk.yt at the segment's end (end_values) */
  bool xw_committed;        /* the next stage is at the committed q: its speeds are x's (step.c) */

  /* the current mode's plan (lib/solver/plan.c) */
  int ndof;
  double *G;                /* nn × nred, free and prescribed columns (stride nred: dgp_gst) */
  int nnz;
  int *gs_node, *gs_dof;    /* G's non-zeros, by node */
  double *gs_val;
  int *row_start;           /* nn + 1: G's non-zeros of node n are [row_start[n], row_start[n+1]) */
  int *single_node, *single_dof, n_single; /* SPEEDS: rows of one non-zero, x = v q[dof] */
  double *single_val;
  int *pair_node, *pair_dof, n_pair; /* SPEEDS: rows of two non-zeros */
  double *pair_val;
  int *multi_node, n_multi; /* SPEEDS: the other rows (by row_start) */
  int *copy_node, *copy_src, n_copy; /* SPEEDS: rows of three terms or more (or none) the
                                        * same as another's (a shaft's two ends): x[node] = x[src] */
  double *M, *L, *Minv;     /* ndof × ndof (stride ndof: dgp_mst) */
  double *B;                /* ACCEL: ndof × nn (stride nn), M⁻¹ Gᵀ, node torques to q̇ */
  bool use_B;               /* the ACCEL stage uses B (small modes) */
  bool variable_kinematics;
  dg_topo_ws ws;            /* lib/solver/topo.c */
  struct dg_topo topo;

  dg_kin_ws kin;
  dg_tree_ws tree;
  dg_motion_ws mot;
  dg_loss_ws loss;
  dg_lambda_ws lam;

  /* state: q (ndof) then s (ns) */
  double *q;
  double *s;
  const double *topo_state; /* the states dg_topo_state reads (committed, or a substep's) */
  double *f;                /* generalized force scratch (nn) */
  double *gvec;             /* raw generalized residual (nn) */
  double *scratch;          /* nn scratch */

  dg_port_ws ports;
  dg_rk4_ws rk;
  dg_event_ws ev;
  dg_audit_ws audit;
} dg_solver;

/* A simulation: the graph, names, inputs, outputs, errors and the lists
 * built once at creation (cold), and its solver (hot). */
struct dg_sim {
  const dg_graph *g;
  int nb, nn, ns;           /* blocks, nodes, continuous states */
  int n_ports;              /* ports of all blocks */
  long input_epoch;         /* counts changes of inputs between steps (caches) */
  unsigned long params_epoch; /* counts tunings (dg_ctx_params_epoch: the blocks' memos) */
  dg_block *blocks;
  dg_error err;
  bool failed;
  bool in_check;            /* building modes for validate's check: no step follows */
  unsigned keep;            /* DG_KEEP_*: what the steps keep beyond the state */

  /* inputs */
  int n_inputs, cap_inputs;
  char **input_names;
  double *input;

  int bad_input;            /* an input given a non-finite value, -1: none */
  double bad_value;

  /* inputs that vary with time (schedules, callbacks), by slot */
  dg_timed_input *timed;    /* n_inputs slots, `input` -1 when unused */
  int n_timed;              /* slots in use are [0, n_timed) */

  unsigned char *input_integer; /* per input: feeds an integer block input */

  /* block inputs (lib/bind.c): a pointer to each one's value, and the
   * signal-bound ones' slots in evaluation order */
  const double **in_ptr;
  double *slot_val;
  dg_slot *slots;
  int n_slots;

  /* block-to-block channels */
  int n_channels, cap_channels;
  char **channel_names;
  double *channel;

  /* signals; and every port's angle ("block.port.angle", ids after them) */
  int n_signals;
  dg_signal_entry *signals;
  int n_port_signals;
  dg_signal_entry *port_signals;

  /* blocks with a motion hook, and each block's slot among them (-1) */
  int *motion_blocks, n_motion;
  int *motion_slot;
  /* the input slots the motion blocks need, in evaluation order (bind.c) */
  int *motion_slots, n_motion_slots;

  /* hook lists, built once */
  dg_hook_entry *pre, *torque, *post, *hold;
  int n_pre, n_torque, n_post, n_hold;
  int *state_blocks, n_state_blocks;
  int *var_blocks, n_var_blocks;
  unsigned *idle;           /* per block: hooks its init said it does without (DG_HOOK_*) */
  dg_hook_entry *evb;       /* blocks with event functions */
  int n_evb;
  int *ev_off;              /* per evb entry: first of its functions in g0/g1/gt */
  int n_events;             /* functions in all */

  /* step bookkeeping */
  double t;
  long steps, topo_changes, events, segments;
  long stages;              /* RK4 right-hand sides evaluated (dg_sim_stage_count) */
  double last_event;        /* time of the last located event, NaN before */
  bool topo_request;

  /* a consistent start (dg_sim_start): the speeds dg_sim_set_initial was
   * given (kept exactly), and the proposals of the block being asked */
  int n_given, n_prop;
  int *given_node, *prop_node; /* nn each */
  double *given_val, *prop_val;
  const char **prop_why;       /* nn: each proposal's rule (NULL: none given) */
  /* what the last start chose (dg_sim_start_choice): proposals taken or
   * refused, in the order asked, at most 2 nn */
  int n_choice;
  struct dgp_start_choice {
    int block, node;
    double proposed, speed; /* speed: at the start's end */
    const char *why;
    bool taken;
  } *choice;
  bool starting;
  bool no_refresh;          /* tests: variable kinematics rebuilt in full every substep */
  bool tree_always;         /* tests: the ACCEL stage on the tree wherever the mode allows */
  bool tree_never;          /* tests: ... and on the dense stage everywhere */
  long refreshes;           /* substeps whose variable kinematics were refreshed */
  long tree_value_refreshes; /* ... of them, on the tree with its values alone */
  bool tree_rebuild;         /* tests: a refresh builds the tree's system in full */
  long tree_value_factors;   /* factors of the tree that replayed the last one's eliminations */
  size_t solver_bytes;      /* the solver's arrays in all (fixed at creation: buffers.c) */
  struct dgp_buf *bufs;     /* their list, for the snapshots (buffers.c) */
  int n_bufs;
  struct dgp_plan_cache *cache; /* the plans of visited modes (solver/cache.c), or NULL */
  /* the mode's plan in the solver's arrays: a number given by each build
   * (plan_builds counts them), so that a state saved for a retry
   * (dgp_sim_state_save) need not copy the plan when it is still there */
  uint64_t plan_gen, plan_builds;
  dg_ctx ctx;
  struct dgp_compiled *compiled; /* a compiled stage (lib/solver/compile.c), or NULL */

  dg_solver sv;
};

/* solver.c */
int dgp_solver_alloc(dg_sim *sim);
void dgp_solver_free(dg_sim *sim);
/* Rebuilds G, M and the tie map for the blocks' current modes. Returns
 * DG_OK or an error code with ws.errmsg / ws.errblock describing it. */
int dgp_solver_build(dg_sim *sim);
/* Rebuild and project the committed speeds onto the new mode. */
int dgp_solver_change_topology(dg_sim *sim);
/* ẏ at (t, y) with y = [q; s], as one RK4 substep computes it (ndof + ns
 * values; the hooks' powers go to a scratch row, not into dy). Uses the
 * solver's scratch arrays and sets ctx; sim->failed tells a failure. */
void dgp_solver_rhs(dg_sim *sim, double t, const double *y, double *dy);
/* Sets the timed inputs to their values at the start of a segment at t
 * (right-continuous at breakpoints) and picks the piece each one follows
 * through the segment. */
void dgp_solver_inputs_start(dg_sim *sim, double t);
/* Node speeds x = G q. */
void dgp_solver_speeds(const dg_sim *sim, const double *q, double *x);
/* At creation: the prescribed speeds (speed_source, ...) of the current time
 * and inputs put into the committed speeds, with no work booked. */
void dgp_solver_settle_motion(dg_sim *sim);
/* The boundary (lib/solver/boundary.c): at the prescriptions of blocks
 * `blocks`, the effective inertia (n × n, or NULL) and ∂force/∂speed
 * (n × n, or NULL); at free nodes, the mobility G_P M⁻¹ G_Pᵀ (n × n). */
int dgp_solver_motion_boundary(dg_sim *sim, int n, const int *blocks, double *inertia,
                              double *dforce, char *why, size_t why_size);
int dgp_solver_port_mobility(dg_sim *sim, int n, const int *nodes, double *y);
/* Sets the angle of `node` and of every node on one shaft with it (the same
 * row of G) as an initial value. */
void dgp_solver_set_angle(dg_sim *sim, int node, double angle);
/* The torque block `block` applies to its shaft at `port` at the committed
 * state (lib/solver/ports.c); NaN when it cannot be computed. */
double dgp_solver_port_torque(dg_sim *sim, int block, int port);
/* Sets given node speeds exactly and projects the rest (dg_sim_set_initial). */
int dgp_solver_set_speeds(dg_sim *sim, int n, const int *node, const double *value,
                         char *why, size_t why_size);

/* Snapshots: the bytes of every solver array, and their copy out and in
 * (into a simulation of the same graph; `saved` is the struct the arrays
 * were saved with). */
size_t dgp_solver_state_bytes(dg_sim *sim);
/* Zeroed memory of `bytes`: calloc'd when small, else mapped on its own
 * (its pages resident only once written; solver/buffers.c); freed with
 * its size. dgp_pages_map / _unmap: always mapped. */
void *dgp_pages_alloc(size_t bytes);
void dgp_pages_free(void *p, size_t bytes);
void *dgp_pages_map(size_t bytes);
void dgp_pages_unmap(void *p, size_t bytes);
/* The bytes of the mode's plan arrays (dgp_buf_add_plan), and the size
 * past which a plan is not copied: the mode cache keeps none (its budget
 * holds two), a snapshot leaves it out and its restore builds it again. */
size_t dgp_plan_bytes(const dg_sim *sim);
#define DGP_PLAN_LARGE ((size_t)16 << 20)
void dgp_solver_save(dg_sim *sim, unsigned char *out, bool zero_dead, bool plan);
void dgp_solver_load(dg_sim *sim, const dg_solver *saved, const unsigned char *in, bool plan);

/* bind.c: channels named by bindings (before the blocks' init), then the
 * blocks' input pointers and slots (after it), and the slots' values at the
 * context's point. */
int dgp_bind_channels(dg_sim *sim);
int dgp_bind_sim(dg_sim *sim);
void dgp_bind_eval_slots(dg_sim *sim);
/* Only the slots the motion blocks need (sim->motion_slots): the others
 * keep their values. */
void dgp_bind_eval_motion(dg_sim *sim);
static inline void dgp_bind_eval(dg_sim *sim) {
  if (sim->n_slots > 0)
    dgp_bind_eval_slots(sim);
}

/* sim.c */
/* Finds or adds a sim-wide input channel; its index, or -1 (no memory). */
int dgp_sim_channel_add(dg_sim *sim, const char *name);
void dgp_sim_fail(dg_sim *sim, int code, const char *fmt, ...) DG_PRINTF(3, 4);
dg_sim *dgp_sim_create(const dg_graph *g, dg_diag *diag);
/* Tests: every hook called again, as if no block had named any idle
 * (dg_init_idle), to check that leaving them out changes nothing. */
void dgp_sim_call_idle_hooks(dg_sim *sim);
/* The hooks the blocks' inits now say they do without (`idle`, per
 * block: a tuning's new values, dgp_sim_tune), between steps: the hook
 * lists rebuilt where they changed, and a compiled unit let go. */
void dgp_sim_set_idle(dg_sim *sim, const unsigned *idle);
/* Reports a failed topology build (ws.errmsg) through diag, at the block
 * it names, with the mode when given. */
void dgp_sim_report_build(dg_sim *sim, int rc, const char *mode_desc, dg_diag *diag);

/* ---- state as bytes (lib/state.c) --------------------------------------- */

/* Bytes of all blocks' instance data of a simulation. */
size_t dgp_sim_data_size(const dg_sim *sim);
/* Copies the blocks' data, in graph order, into out (dgp_sim_data_size
 * bytes). */
void dgp_sim_data_copy(const dg_sim *sim, unsigned char *out);

/* Bytes dgp_sim_state_write needs for `sim`. */
size_t dgp_sim_state_size(const dg_sim *sim);
/* Writes what dg_sim_snapshot copies (the solver's scalars and arrays,
 * every block's data, the input values and schedule places, the channels,
 * time and counters) into buf, with a header naming its sizes. Returns the
 * bytes written, or 0 when `size` is too small or the simulation has
 * failed. No allocation. */
size_t dgp_sim_state_write(dg_sim *sim, unsigned char *buf, size_t size);
/* Puts bytes dgp_sim_state_write wrote for a simulation of the same graph
 * (the same text: the sizes in the header must match) into `sim`, as
 * dg_sim_restore puts a snapshot. `keep` (dgp_sim_data_size bytes, may be
 * NULL) marks bytes of the blocks' data not to take from `buf`: those come
 * from `keep_values` (dgp_sim_data_size bytes), or from `sim`'s own data when
 * that is NULL. A host that moves a state to another process or graph
 * keeps this way what a block's init stores that is an address (a table of
 * its graph, static data): see fmu/runtime.c, which marks the bytes that
 * were still as init left them. Returns DG_OK or DG_ERR_USAGE with `err`
 * filled (wrong size, another graph's layout, bytes that are no state). No
 * allocation. */
int dgp_sim_state_read(dg_sim *sim, const unsigned char *buf, size_t size,
                      const unsigned char *keep, const unsigned char *keep_values,
                      dg_error *err);

/* The same without the checksum, for a state kept in memory by the same
 * process and read back into the same simulation (a cycle run repeating a
 * step: lib/run/cycle.c): the FNV-1a over every byte costs more than the
 * step. dgp_sim_state_save writes a header whose checksum is 0, which
 * dgp_sim_state_read refuses; dgp_sim_state_load checks the header's sizes
 * only. No allocation. */
size_t dgp_sim_state_save(dg_sim *sim, unsigned char *buf, size_t size);
int dgp_sim_state_load(dg_sim *sim, const unsigned char *buf, size_t size);

/* FNV-1a of n bytes (the state's checksum; the FMU runtime's too). */
uint64_t dgp_fnv1a(const unsigned char *p, size_t n);
/* The same hash h of earlier bytes, continued over n more. */
uint64_t dgp_fnv1a_add(uint64_t h, const void *bytes, size_t n);
/* Input i's schedule or callback slot, or NULL (lib/sim.c). */
dg_timed_input *dgp_sim_timed_find(const dg_sim *sim, int i);

#endif
