/* The buffers room: every array the solver owns, listed by the room that
 * owns it (each room's dgp_*_buffers, with sizes that depend only on the
 * graph), allocated once at creation, freed, and copied whole for
 * snapshots. A step never allocates.
 *
 * Memory. Many arrays are sized for the worst mode of the graph (node ×
 * node: R, T, G, M, the dense mesh maps, ...), while a large mode uses a
 * corner of them or none (a mode on the tree needs no M⁻¹, B or dense
 * mesh maps; a chain of gears has one raw DOF). An array of at least
 * DGP_MAP_MIN bytes is therefore mapped on its own: zero pages that the
 * kernel gives when first touched, so what a simulation costs in memory is
 * what its modes write, not the bound (calloc would come from the heap
 * once a freed simulation has raised malloc's mapping threshold, and clear
 * every byte). The smaller ones (every array of a car-sized graph) are
 * calloc'd as before. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS (glibc; the build asks for POSIX 2008) */
#include "solver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_SOLVER_BUFFERS 240
/* glibc's initial mapping threshold; none under AddressSanitizer, which
 * checks the bounds of calloc'd arrays and not those inside a mapping */
#if defined(__SANITIZE_ADDRESS__)
#define DGP_MAP_MIN SIZE_MAX
#else
#define DGP_MAP_MIN ((size_t)128 << 10)
#endif

void *dgp_pages_map(size_t bytes) {
  void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
#ifdef MADV_NOHUGEPAGE
  /* a mode writes a corner of the array: with transparent huge pages set
   * to "always", one write would make 2 MB resident (best effort) */
  madvise(m, bytes, MADV_NOHUGEPAGE);
#endif
  return m;
}

void dgp_pages_unmap(void *p, size_t bytes) {
  if (p)
    munmap(p, bytes);
}

void *dgp_pages_alloc(size_t bytes) {
  return bytes < DGP_MAP_MIN ? calloc(bytes ? bytes : 1, 1) : dgp_pages_map(bytes);
}

void dgp_pages_free(void *p, size_t bytes) {
  if (bytes < DGP_MAP_MIN)
    free(p);
  else
    dgp_pages_unmap(p, bytes);
}

size_t dgp_plan_bytes(const dg_sim *sim) {
  size_t n = 0;
  for (int i = 0; i < sim->n_bufs; i++)
    n += sim->bufs[i].plan ? sim->bufs[i].bytes : 0;
  return n;
}

static void *buf_get(const dgp_buf *b) {
  void *p;
  memcpy(&p, b->slot, sizeof p);
  return p;
}

static void buf_set(const dgp_buf *b, void *p) { memcpy(b->slot, &p, sizeof p); }

/* Every room's arrays, in one list. */
static int solver_buffers(dg_sim *sim, dgp_buf *out) {
  dgp_buf_list l = {out, 0, MAX_SOLVER_BUFFERS};
  dgp_topo_buffers(sim, &l);
  dgp_plan_buffers(sim, &l);
  dgp_kin_buffers(sim, &l);
  dgp_motion_buffers(sim, &l);
  dgp_ports_buffers(sim, &l);
  dgp_loss_buffers(sim, &l);
  dgp_tree_buffers(sim, &l);
  dgp_rk4_buffers(sim, &l);
  dgp_step_buffers(sim, &l);
  return l.n;
}

int dgp_solver_alloc(dg_sim *sim) {
  sim->sv.audit.ne = sim->n_torque + 1 + sim->n_motion;
  dg_topo_ws *ws = &sim->sv.ws;
  ws->max_ties = 2 * sim->nn + 4 * sim->nb + 8;
  ws->max_terms = 8 * ws->max_ties;
  ws->max_links = 2 * sim->nn + 4 * sim->nb + 8;
  dgp_buf spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  int rc = DG_OK;
  /* the list kept for the snapshots (its pointers are into sim->sv: a
   * simulation is never copied) */
  sim->bufs = malloc(sizeof *sim->bufs * (size_t)n);
  if (sim->bufs) {
    memcpy(sim->bufs, spec, sizeof *spec * (size_t)n);
    sim->n_bufs = n;
  } else {
    rc = DG_ERR_NOMEM;
  }
  sim->solver_bytes = 0;
  for (int i = 0; i < n; i++) {
    sim->solver_bytes += spec[i].bytes;
    void *p = dgp_pages_alloc(spec[i].bytes);
    buf_set(&spec[i], p);
    if (!p)
      rc = DG_ERR_NOMEM;
  }
  sim->sv.topo_state = sim->sv.s;
  if (sim->sv.ports.base) /* each block's first port */
    for (int b = 0; b < sim->nb; b++)
      sim->sv.ports.base[b + 1] = sim->sv.ports.base[b] + sim->g->blocks[b].num_ports;
  if (sim->sv.audit.pw)
    sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
  if (rc == DG_OK)
    rc = dgp_cache_alloc(sim);
  return rc;
}

void dgp_solver_free(dg_sim *sim) {
  if (sim->bufs)
    dgp_cache_free(sim);
  dgp_buf spec[MAX_SOLVER_BUFFERS];
  int n = solver_buffers(sim, spec);
  for (int i = 0; i < n; i++) {
    dgp_pages_free(buf_get(&spec[i]), spec[i].bytes);
    buf_set(&spec[i], NULL);
  }
  free(sim->bufs);
  sim->bufs = NULL;
  sim->n_bufs = 0;
}

/* Tests: the bytes of the solver's arrays in memory now (the mode cache's
 * slots aside): a mapped array's pages that have been touched, the
 * calloc'd ones whole; 0 where the system cannot say. */
size_t dgp_solver_resident_bytes(const dg_sim *sim) {
  long pg = sysconf(_SC_PAGESIZE);
  if (pg <= 0 || DGP_MAP_MIN == SIZE_MAX)
    return 0;
  size_t page = (size_t)pg, total = 0;
  unsigned char vec[256];
  for (int i = 0; i < sim->n_bufs; i++) {
    size_t bytes = sim->bufs[i].bytes;
    if (bytes < DGP_MAP_MIN) {
      total += bytes;
      continue;
    }
    unsigned char *p = buf_get(&sim->bufs[i]); /* page-aligned: mapped */
    size_t pages = (bytes + page - 1) / page;
    for (size_t at = 0; at < pages; at += sizeof vec) {
      size_t n = pages - at < sizeof vec ? pages - at : sizeof vec;
      if (mincore(p + at * page, n * page, vec) != 0)
        return 0;
      for (size_t k = 0; k < n; k++)
        total += (vec[k] & 1) ? page : 0;
    }
  }
  return total;
}

/* Snapshots: the solver's arrays, copied whole but for those of a room the
 * mode does not use (dgp_buf_add_live) and, when `plan` is false, those of
 * the mode's plan (dgp_buf_add_plan: the state saved for a retry, whose
 * reader has them or builds them again). */
size_t dgp_solver_state_bytes(dg_sim *sim) { return sim->solver_bytes; }

static bool buf_copied(const dgp_buf *b, bool plan) {
  return (!b->live || *b->live) && (plan || !b->plan);
}

void dgp_solver_save(dg_sim *sim, unsigned char *out, bool zero_dead, bool plan) {
  const dgp_buf *spec = sim->bufs;
  int n = sim->n_bufs;
  for (int i = 0; i < n; i++) {
    if (buf_copied(&spec[i], plan))
      memcpy(out, buf_get(&spec[i]), spec[i].bytes);
    else if (zero_dead) /* bytes that are written out: defined */
      memset(out, 0, spec[i].bytes);
    out += spec[i].bytes;
  }
}

void dgp_solver_load(dg_sim *sim, const dg_solver *saved, const unsigned char *in, bool plan) {
  dg_solver keep = sim->sv;
  sim->sv = *saved; /* the scalars; the pointers are put back below */
  const dgp_buf *spec = sim->bufs;
  int n = sim->n_bufs;
  for (int i = 0; i < n; i++) {
    size_t off = (size_t)((char *)spec[i].slot - (char *)&sim->sv);
    memcpy(spec[i].slot, (char *)&keep + off, sizeof(void *));
    /* the live flags are the saved solver's now */
    if (buf_copied(&spec[i], plan))
      memcpy(buf_get(&spec[i]), in, spec[i].bytes);
    in += spec[i].bytes;
  }
  sim->sv.audit.pcur = sim->sv.audit.pw + 4 * sim->sv.audit.ne;
  sim->sv.topo_state = sim->sv.s;
  sim->sv.topo.sim = sim;
  /* tie forces saved at the committed state stay valid; any other point's
   * are computed again when asked for */
  if (saved->lam.y != NULL)
    sim->sv.lam.valid = false;
  sim->sv.lam.y = NULL;
}
