/* The mode cache room: the plans of the modes a simulation visited, kept so
 * that returning to one builds nothing.
 *
 * A mode's plan is every array its build writes (dgp_buf_add_plan: R, T,
 * G, M and its factor, the tie-force map, the meshes' maps, the tree's
 * structure) and the build's scalars (sizes, flags). Each slot owns a full
 * set of the plan arrays; the solver's pointers point at the current
 * slot's. A build runs the blocks' state_upstream hooks on scratch arrays
 * (their declarations: raw DOFs, ties, links, meshes, inertias; the arrays
 * listed with dgp_buf_add_decl) and looks the declarations up among the
 * slots: on a hit the solver's pointers move to that slot and its scalars
 * are taken (no elimination, no factor, no inverse, no loss map), and no
 * slot was written; on a miss the build takes a free slot, or the least
 * recently used one, whose declaration arrays and key are swapped with the
 * scratch ones, and goes on there; that slot then holds the new mode.
 * The key is the declarations themselves (compared byte for byte with
 * each slot's: a few slots, no hash), so a tuned ratio or inertia is
 * another mode.
 *
 * Bounded: at most DGP_CACHE_SLOTS slots and DGP_CACHE_BUDGET bytes of
 * plan arrays in all (a graph whose plan is larger than half the budget
 * has no cache). Not used while a mode's kinematics vary (the plan is
 * refreshed at every stage) nor by validate's every-mode check. Anything
 * else that writes the plan arrays (a snapshot's restore) makes the
 * current slot's key void (dgp_cache_forget). */
#include "solver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DGP_CACHE_BUDGET (2 * DGP_PLAN_LARGE)

typedef struct plan_slot {
  void **val;            /* per plan array (the order of plan and dst): this slot's */
  unsigned char *key;    /* the declarations of its mode */
  size_t key_len;
  dg_solver sv;          /* the solver as its build left it (the scalars) */
  uint64_t gen;          /* its plan's number (sim->plan_gen) */
  unsigned long used;
  bool valid;
} plan_slot;

struct dgp_plan_cache {
  int nslots, cur, probe;
  size_t block;          /* bytes of a slot's block */
  size_t decl_bytes;     /* bytes of the declarations' block (scratch) */
  unsigned char *mem;    /* the blocks of slots 1…, one mapping */
  int *plan, nplan;      /* the plan arrays' places in sim->bufs */
  int ndecl;             /* the first ndecl of them: the hooks' declarations */
  void **dst;            /* per plan array: where the solver keeps its pointer */
  void **own;            /* per plan array: the solver's own (buffers.c frees them) */
  /* where a build's hooks write their declarations (ndecl arrays, after
   * the blocks of slots 1… in c->mem) and its key: a hit leaves every
   * slot as it was; a miss swaps them with the free slot's */
  void **scratch;
  unsigned char *key;
  size_t key_len; /* 0: not written (the hooks failed) */
  plan_slot slot[DGP_CACHE_SLOTS];
  size_t key_cap;
  unsigned long clock;
  long hits, misses;
  /* tests: every hit also builds the mode in full and compares */
  bool verify, bypass;
  long verify_fail;
  dg_solver start;       /* verify: the solver where the build began */
};

/* ---- the key: the declarations of the hooks, in order ------------------- */

typedef struct key_writer {
  unsigned char *p;
  size_t n, cap;
} key_writer;

static void put(key_writer *w, const void *v, size_t size) {
  if (w->n + size <= w->cap)
    memcpy(w->p + w->n, v, size);
  w->n += size;
}

#define PUT(w, x) put((w), &(x), sizeof(x))

static size_t key_bound(const dg_sim *sim) {
  const dg_topo_ws *ws = &sim->sv.ws;
  size_t nn = (size_t)sim->nn, mt = (size_t)ws->max_ties, terms = (size_t)ws->max_terms;
  size_t ml = (size_t)ws->max_links;
  return 16 * sizeof(int) + nn * 3 * sizeof(int) + mt * (5 * sizeof(int) + 2) +
         terms * (sizeof(int) + 2 * sizeof(double)) + ml * (4 * sizeof(int) + 1) +
         terms * (sizeof(int) + 2 * sizeof(double)) +
         nn * (2 * sizeof(int) + 2 * sizeof(double) + 2 * sizeof(void *)) +
         nn * sizeof(double) + (size_t)sim->n_ports * sizeof(double);
}

/* The declarations as bytes (no padding: field by field; the links'
 * fields array by array, the ties' field by field), written only when
 * they fit in cap (the length is returned either way). */
static size_t key_write(const dg_sim *sim, unsigned char *out, size_t cap) {
  const dg_topo_ws *ws = &sim->sv.ws;
  key_writer w = {out, 0, cap};
  int nl = ws->nlinks, nt = ws->nties, nm = ws->nmesh;
  int lterms = nl > 0 ? ws->link_first[nl - 1] + ws->link_n[nl - 1] : 0;
  PUT(&w, sim->tree_always); /* a build option: the same declarations on the tree */
  PUT(&w, ws->nraw);
  PUT(&w, nt);
  PUT(&w, ws->nterms);
  PUT(&w, nl);
  PUT(&w, nm);
  put(&w, ws->raw_owner, sizeof(int) * (size_t)ws->nraw);
  put(&w, ws->raw_node, sizeof(int) * (size_t)ws->nraw);
  put(&w, ws->raw_presc, sizeof(int) * (size_t)ws->nraw);
  size_t tie_bytes = (size_t)nt * (5 * sizeof(int) + 1);
  if (w.n + tie_bytes <= w.cap) {
    unsigned char *p = w.p + w.n;
    for (int t = 0; t < nt; t++) {
      const dg_tie *tie = &ws->ties[t];
      int f[5] = {tie->block, tie->first, tie->n, tie->mesh, tie->presc};
      memcpy(p, f, sizeof f);
      p[sizeof f] = (unsigned char)((tie->ground ? 1 : 0) | (tie->yields ? 2 : 0));
      p += sizeof f + 1;
    }
  }
  w.n += tie_bytes;
  put(&w, ws->tie_node, sizeof(int) * (size_t)ws->nterms);
  put(&w, ws->tie_coef, sizeof(double) * (size_t)ws->nterms);
  put(&w, ws->tie_acoef, sizeof(double) * (size_t)ws->nterms);
  put(&w, ws->link_dst, sizeof(int) * (size_t)nl);
  put(&w, ws->link_first, sizeof(int) * (size_t)nl);
  put(&w, ws->link_n, sizeof(int) * (size_t)nl);
  put(&w, ws->link_block, sizeof(int) * (size_t)nl);
  put(&w, ws->link_var, (size_t)nl);
  put(&w, ws->link_src, sizeof(int) * (size_t)lterms);
  put(&w, ws->link_coef, sizeof(double) * (size_t)lterms);
  put(&w, ws->link_rate, sizeof(double) * (size_t)lterms);
  put(&w, ws->mesh_link, sizeof(int) * (size_t)nm);
  put(&w, ws->mesh_tie, sizeof(int) * (size_t)nm);
  put(&w, ws->mesh_eta, sizeof(double) * (size_t)nm);
  put(&w, ws->mesh_eta_b, sizeof(double) * (size_t)nm);
  put(&w, ws->mesh_tab_a, sizeof(void *) * (size_t)nm);
  put(&w, ws->mesh_tab_b, sizeof(void *) * (size_t)nm);
  put(&w, sim->sv.inertia, sizeof(double) * (size_t)sim->nn);
  put(&w, sim->sv.ports.inertia, sizeof(double) * (size_t)sim->n_ports);
  return w.n;
}

/* ---- slots ---------------------------------------------------------------- */

static void *buf_ptr(const dgp_buf *b) {
  void *p;
  memcpy(&p, b->slot, sizeof p);
  return p;
}

/* The mapping: the blocks of slots 1…, then the declarations' scratch. */
static size_t mem_bytes(const dgp_plan_cache *c, size_t decl) {
  return c->block * (size_t)(c->nslots - 1) + (decl ? decl : 64);
}

/* The solver's plan arrays (~110) become slot s's, the current one: a
 * pointer written per array, from two flat lists. */
static void point_at(dg_sim *sim, int s) {
  dgp_plan_cache *c = sim->cache;
  void *const *dst = c->dst, *const *val = c->slot[s].val;
  int n = c->nplan;
#pragma GCC unroll 4
  for (int k = 0; k < n; k++)
    memcpy(dst[k], &val[k], sizeof(void *));
  c->cur = s;
}

int dgp_cache_alloc(dg_sim *sim) {
  sim->cache = NULL;
  size_t plan_bytes = dgp_plan_bytes(sim);
  size_t fit = plan_bytes ? DGP_CACHE_BUDGET / plan_bytes : DGP_CACHE_SLOTS;
  int n = fit < DGP_CACHE_SLOTS ? (int)fit : DGP_CACHE_SLOTS;
  if (n < 2 || sim->sv.variable_kinematics)
    return DG_OK; /* no cache: every build in full */
  dgp_plan_cache *c = calloc(1, sizeof *c);
  if (!c)
    return DG_ERR_NOMEM;
  sim->cache = c;
  c->nslots = n;
  c->plan = malloc(sizeof *c->plan * ((size_t)sim->n_bufs + 1));
  if (!c->plan)
    return DG_ERR_NOMEM;
  /* the hooks' declarations first (the arrays a build's start points
   * at the free slot), then the rest of the plan */
  for (int i = 0; i < sim->n_bufs; i++)
    if (sim->bufs[i].decl)
      c->plan[c->nplan++] = i;
  c->ndecl = c->nplan;
  for (int i = 0; i < sim->n_bufs; i++)
    if (sim->bufs[i].plan && !sim->bufs[i].decl)
      c->plan[c->nplan++] = i;
  c->dst = calloc((size_t)c->nplan + 1, sizeof *c->dst);
  c->own = calloc((size_t)c->nplan + 1, sizeof *c->own);
  c->scratch = malloc(sizeof *c->scratch * ((size_t)c->ndecl + 1));
  c->key_cap = key_bound(sim);
  c->key = malloc(c->key_cap);
  if (!c->dst || !c->own || !c->scratch || !c->key)
    return DG_ERR_NOMEM;
  for (int k = 0; k < c->nplan; k++) {
    c->dst[k] = sim->bufs[c->plan[k]].slot;
    c->own[k] = buf_ptr(&sim->bufs[c->plan[k]]);
  }
  /* one block per slot, all of slots 1… in one mapping (dgp_pages_map):
   * zero pages the kernel gives when first touched (a simulation that
   * never changes mode touches none; calloc would clear them all at its
   * creation) */
  size_t block = 0, decl = 0;
  for (int k = 0; k < c->nplan; k++) {
    size_t b = (sim->bufs[c->plan[k]].bytes + 63) & ~(size_t)63;
    block += b;
    decl += k < c->ndecl ? b : 0;
  }
  c->block = block ? block : 64;
  c->mem = dgp_pages_map(mem_bytes(c, decl));
  if (!c->mem)
    return DG_ERR_NOMEM;
  c->decl_bytes = decl;
  size_t sat = c->block * (size_t)(n - 1);
  for (int k = 0; k < c->ndecl; k++) {
    c->scratch[k] = c->mem + sat;
    sat += (sim->bufs[c->plan[k]].bytes + 63) & ~(size_t)63;
  }
  for (int s = 0; s < n; s++) {
    plan_slot *sl = &c->slot[s];
    sl->val = malloc(sizeof *sl->val * ((size_t)c->nplan + 1));
    sl->key = malloc(c->key_cap);
    /* slots 1…: every array in one block of c->mem (slot 0: the solver's own) */
    unsigned char *mem = s > 0 ? c->mem + c->block * (size_t)(s - 1) : NULL;
    if (!sl->val || !sl->key)
      return DG_ERR_NOMEM;
    size_t at = 0;
    for (int k = 0; k < c->nplan; k++) {
      int i = c->plan[k];
      /* slot 0's are the arrays the solver was given */
      sl->val[k] = s == 0 ? buf_ptr(&sim->bufs[i]) : mem + at;
      at += (sim->bufs[i].bytes + 63) & ~(size_t)63;
    }
  }
  c->cur = 0;
  return DG_OK;
}

/* The solver keeps slot 0's arrays (its own, which it frees), holding the
 * current plan; the other slots' blocks go. */
void dgp_cache_free(dg_sim *sim) {
  dgp_plan_cache *c = sim->cache;
  if (!c)
    return;
  /* the current arrays copied into the solver's own (a miss swaps the
   * declarations' blocks among the slots and the scratch) */
  for (int k = 0; c->own && c->dst && k < c->nplan && c->dst[k]; k++) {
    void *now;
    memcpy(&now, c->dst[k], sizeof now);
    if (now != c->own[k] && now && c->own[k])
      memcpy(c->own[k], now, sim->bufs[c->plan[k]].bytes);
    memcpy(c->dst[k], &c->own[k], sizeof(void *));
  }
  for (int s = 0; s < c->nslots; s++) {
    free(c->slot[s].val);
    free(c->slot[s].key);
  }
  if (c->mem)
    dgp_pages_unmap(c->mem, mem_bytes(c, c->decl_bytes));
  free(c->plan);
  free(c->dst);
  free(c->own);
  free(c->scratch);
  free(c->key);
  free(c);
  sim->cache = NULL;
}

void dgp_cache_forget(dg_sim *sim) {
  if (sim->cache)
    sim->cache->slot[sim->cache->cur].valid = false;
}

/* Tests (verify): slot s's plan arrays from the first-th on zeroed, so
 * that no byte of another mode is left for a build to be compared by. */
static void clear_slot(dg_sim *sim, int s, int first) {
  const dgp_plan_cache *c = sim->cache;
  for (int k = first; k < c->nplan; k++)
    memset(c->slot[s].val[k], 0, sim->bufs[c->plan[k]].bytes);
}

/* The slot a new mode takes: the current one when it keeps no mode (the
 * first build: a simulation that never changes mode touches no other
 * slot), else a free one, else the least recently used other one. */
static int free_slot(const dgp_plan_cache *c, int other_than) {
  if (!c->slot[c->cur].valid && c->cur != other_than)
    return c->cur;
  int probe = -1;
  for (int s = 0; s < c->nslots; s++) {
    if (s == c->cur || s == other_than)
      continue;
    if (!c->slot[s].valid)
      return s;
    if (probe < 0 || c->slot[s].used < c->slot[probe].used)
      probe = s;
  }
  return probe;
}

/* At a build's start: true when it goes through the cache (the hooks'
 * declarations then go to the scratch arrays). */
bool dgp_cache_begin(dg_sim *sim) {
  dgp_plan_cache *c = sim->cache;
  if (!c)
    return false;
  if (c->bypass || sim->in_check || sim->sv.variable_kinematics) {
    if (!c->bypass)
      c->slot[c->cur].valid = false; /* written in place */
    return false;
  }
  c->key_len = 0;
  /* the hooks write their declarations in the scratch arrays; the plan
   * stays the current slot's until the lookup (a hit points at the
   * visited mode's; a miss takes the free slot, the scratch swapped in) */
  void *const *dst = c->dst;
  for (int k = 0; k < c->ndecl; k++)
    memcpy(dst[k], &c->scratch[k], sizeof(void *));
  if (c->verify) {
    c->start = sim->sv;
    for (int k = 0; k < c->ndecl; k++)
      memset(c->scratch[k], 0, sim->bufs[c->plan[k]].bytes);
  }
  return true;
}

/* A miss (or a build that stops): the free slot's mode is let go, the
 * declarations just made and their key become its own (pointers
 * swapped, nothing copied), and the build goes on there. */
static void take_probe(dg_sim *sim) {
  dgp_plan_cache *c = sim->cache;
  c->probe = free_slot(c, -1);
  plan_slot *pr = &c->slot[c->probe];
  pr->valid = false;
  for (int k = 0; k < c->ndecl; k++) {
    void *t = pr->val[k];
    pr->val[k] = c->scratch[k];
    c->scratch[k] = t;
  }
  unsigned char *key = pr->key;
  pr->key = c->key;
  pr->key_len = c->key_len;
  c->key = key;
  if (c->verify) /* no byte of the mode it held left for the build */
    clear_slot(sim, c->probe, c->ndecl);
  point_at(sim, c->probe);
}

/* The plan's scalars of a slot, and what a build does beside its arrays. */
static void take_scalars(dg_sim *sim, const dg_solver *b) {
  dg_solver *sv = &sim->sv;
  sv->ndof = b->ndof;
  sv->nnz = b->nnz;
  sv->n_single = b->n_single;
  sv->n_pair = b->n_pair;
  sv->n_multi = b->n_multi;
  sv->n_copy = b->n_copy;
  sv->use_B = b->use_B;
  sv->ws.nactive = b->ws.nactive;
  sv->ws.err_ratio_loop = b->ws.err_ratio_loop;
  sv->kin.refreshable = b->kin.refreshable;
  sv->kin.lam_stale = b->kin.lam_stale;
  sv->tree.on = b->tree.on;
  sv->tree.tables = b->tree.tables;
  sv->tree.ncon = b->tree.ncon;
  sv->tree.nv = b->tree.nv;
  sv->tree.nn = b->tree.nn;
  sv->tree.nalias = b->tree.nalias;
  sv->tree.all_folded = b->tree.all_folded;
  sv->tree.ne = b->tree.ne;
  sv->tree.nops = b->tree.nops;
  sv->tree.factored = false; /* its pivots are of the last mode's meshes */
  sv->tree.held = false;
  sv->mot.np = b->mot.np;
  sv->mot.n_gp = b->mot.n_gp;
  sv->mot.vt = NAN;
  if (!sv->loss.hold)
    for (int j = 0; j < sv->ws.nmesh; j++)
      sv->loss.dir[j] = 0;
}

static int verify_hit(dg_sim *sim, int hit);

/* After the hooks: the mode looked up. True on a hit (the plan is in
 * place); false on a miss, or when the hooks failed (the build goes on,
 * or stops, in the free slot: every plan array is pointed there). */
bool dgp_cache_lookup(dg_sim *sim) {
  dgp_plan_cache *c = sim->cache;
  if (sim->sv.ws.error || !sim->sv.ws.links_complete) {
    take_probe(sim);
    return false;
  }
  size_t n = key_write(sim, c->key, c->key_cap);
  if (n > c->key_cap) {
    take_probe(sim);
    return false;
  }
  c->key_len = n;
  for (int s = 0; s < c->nslots; s++) { /* a few slots: compared whole, no hash */
    plan_slot *sl = &c->slot[s];
    if (!sl->valid || sl->key_len != n || memcmp(sl->key, c->key, n) != 0)
      continue;
    point_at(sim, s);
    take_scalars(sim, &sl->sv);
    sim->plan_gen = sl->gen;
    sl->used = ++c->clock;
    c->hits++;
    if (c->verify)
      c->verify_fail += verify_hit(sim, s);
    return true;
  }
  c->misses++;
  take_probe(sim);
  return false;
}

/* At a miss's end: the free slot holds the new mode. */
void dgp_cache_store(dg_sim *sim, int rc) {
  dgp_plan_cache *c = sim->cache;
  plan_slot *sl = &c->slot[c->probe];
  if (rc != DG_OK || !sim->sv.ws.links_complete || sl->key_len == 0 || c->cur != c->probe)
    return;
  sl->sv = sim->sv;
  sl->gen = sim->plan_gen;
  sl->used = ++c->clock;
  sl->valid = true;
}

bool dgp_cache_current_key(const dg_sim *sim, const unsigned char **key, size_t *len) {
  const dgp_plan_cache *c = sim->cache;
  if (!c)
    return false;
  const plan_slot *sl = &c->slot[c->cur];
  if (!sl->valid || sl->gen != sim->plan_gen || sl->key_len == 0)
    return false;
  *key = sl->key;
  *len = sl->key_len;
  return true;
}

int dgp_cache_other_modes(const dg_sim *sim, const dg_solver **sv, const unsigned char **key,
                          size_t *len, int max) {
  const dgp_plan_cache *c = sim->cache;
  int n = 0;
  for (int s = 0; c && s < c->nslots && n < max; s++) {
    const plan_slot *sl = &c->slot[s];
    if (s == c->cur || !sl->valid || sl->key_len == 0 || sl->gen == sim->plan_gen)
      continue;
    sv[n] = &sl->sv;
    key[n] = sl->key;
    len[n++] = sl->key_len;
  }
  return n;
}

/* ---- tests: a hit against a full build ------------------------------------ */

/* The solver's struct with every array pointer cleared (they differ by slot). */
static void clear_pointers(const dg_sim *sim, dg_solver *sv) {
  for (int i = 0; i < sim->n_bufs; i++) {
    size_t off = (size_t)((const char *)sim->bufs[i].slot - (const char *)&sim->sv);
    memset((char *)sv + off, 0, sizeof(void *));
  }
}

/* The mode of slot `hit` built again in full in the free slot (from the
 * solver as the build began): 1 when the scalars or the plan arrays differ
 * from the hit's, with what differs on stderr. */
static int verify_hit(dg_sim *sim, int hit) {
  dgp_plan_cache *c = sim->cache;
  dg_solver got = sim->sv;
  int probe = free_slot(c, hit); /* any other than the hit's */
  c->slot[probe].valid = false;  /* built again there */
  clear_slot(sim, probe, 0);
  sim->sv = c->start;
  point_at(sim, probe);
  c->bypass = true;
  uint64_t gen = sim->plan_gen, builds = sim->plan_builds;
  int rc = dgp_solver_build(sim);
  c->bypass = false;
  sim->plan_gen = gen;
  sim->plan_builds = builds;
  int bad = rc != DG_OK;
  dg_solver want = sim->sv, a = got;
  clear_pointers(sim, &want);
  clear_pointers(sim, &a);
  /* the tree's factor is not of the plan: a hit factors at its first stage */
  want.tree.factored = a.tree.factored;
  want.tree.simple = a.tree.simple;
  want.tree.npair = a.tree.npair;
  want.tree.nmain = a.tree.nmain;
  want.tree.shape = a.tree.shape;
  if (memcmp(&want, &a, sizeof want) != 0) {
    const unsigned char *x = (const unsigned char *)&want, *y = (const unsigned char *)&a;
    for (size_t k = 0; k < sizeof want; k++)
      if (x[k] != y[k]) {
        fprintf(stderr, "mode cache: the solver's scalars differ at byte %zu of %zu\n", k,
                sizeof want);
        break;
      }
    bad = 1;
  }
  for (int k = 0; k < c->nplan; k++) {
    size_t bytes = sim->bufs[c->plan[k]].bytes;
    if (memcmp(c->slot[probe].val[k], c->slot[hit].val[k], bytes) != 0) {
      fprintf(stderr, "mode cache: plan array %d (%zu bytes) differs\n", c->plan[k], bytes);
      bad = 1;
    }
  }
  sim->sv = got;
  point_at(sim, hit);
  return bad;
}

void dgp_cache_verify(dg_sim *sim, bool on) {
  if (sim->cache)
    sim->cache->verify = on;
}

void dgp_cache_stats(const dg_sim *sim, long *hits, long *misses, long *verify_fail) {
  const dgp_plan_cache *c = sim->cache;
  *hits = c ? c->hits : 0;
  *misses = c ? c->misses : 0;
  *verify_fail = c ? c->verify_fail : 0;
}
