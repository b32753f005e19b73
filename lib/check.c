/* Loading and validating a graph: the parse and structural checks of
 * graph.c, then, when those are clean, the check of every reachable mode
 * (dg_sim_check_modes: over-constrained ties and DOFs without inertia),
 * unless the caller knows how that check comes out (DG_LOAD_NO_MODE_CHECK:
 * batch runs, whose overrides the parameter tables say cannot change it).
 * Kept apart from graph.c so that parsing a graph does not depend on the
 * simulation: the mode check runs the blocks' topology hooks on instances
 * of them, which only a simulation of the graph has. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parses, then checks the modes if the structure is clean. */
static dg_graph *load(const dg_registry *reg, const char *text, const char *file, unsigned opts,
                      dg_diag *d, dg_graph_info *info) {
  int before = d->count;
  dg_graph *g = dg_graph_parse(reg, text, file, d, info);
  if (g && d->count == before && g->order && !(opts & DG_LOAD_NO_MODE_CHECK))
    dg_sim_check_modes(g, d, info);
  return g;
}

static dg_graph *load_checked(const dg_registry *reg, const char *text, const char *file,
                              unsigned opts, dg_error *err) {
  dg_diag d;
  dg_diag_init(&d, file, NULL, NULL);
  dg_error_clear(err);
  dg_graph *g = load(reg, text, file, opts, &d, NULL);
  if (d.count > 0) {
    dg_diag_to_error(&d, err);
    dg_graph_release(g);
    return NULL;
  }
  return g;
}

dg_graph *dg_graph_load_string_opts(const dg_registry *reg, const char *json, const char *name,
                                    unsigned opts, dg_error *err) {
  if (!json) {
    dg_error_set(err, DG_ERR_USAGE, name ? name : "<string>", "", "no JSON text given");
    return NULL;
  }
  return load_checked(reg, json, name ? name : "<string>", opts, err);
}

dg_graph *dg_graph_load_string(const dg_registry *reg, const char *json, const char *name,
                               dg_error *err) {
  return dg_graph_load_string_opts(reg, json, name, 0, err);
}

static char *read_or_report(const char *path, dg_diag *d) {
  size_t len;
  char *text = dg_read_file(path, &len);
  if (!text) {
    dg_diag_add(d, DG_ERR_IO, "", "cannot read file: %s", strerror(errno));
    return NULL;
  }
  if (strlen(text) != len) {
    dg_diag_add(d, DG_ERR_SYNTAX, "", "file contains a NUL byte; expected JSON text");
    free(text);
    return NULL;
  }
  return text;
}

dg_graph *dg_graph_load_json_file(const dg_registry *reg, const char *path, dg_error *err) {
  dg_diag d;
  dg_error_clear(err);
  if (!path) {
    dg_error_set(err, DG_ERR_USAGE, "", "", "no file name given");
    return NULL;
  }
  dg_diag_init(&d, path, NULL, NULL);
  char *text = read_or_report(path, &d);
  if (!text) {
    dg_diag_to_error(&d, err);
    return NULL;
  }
  dg_graph *g = load_checked(reg, text, path, 0, err);
  free(text);
  return g;
}

int dg_graph_validate_string(const dg_registry *reg, const char *json, const char *name,
                             dg_diag_fn fn, void *user, dg_graph_info *info) {
  dg_diag d;
  dg_diag_init(&d, name ? name : "<string>", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  dg_graph_release(load(reg, json ? json : "", name ? name : "<string>", 0, &d, info));
  return d.count;
}

int dg_graph_validate_json_file(const dg_registry *reg, const char *path, dg_diag_fn fn,
                                void *user, dg_graph_info *info) {
  dg_diag d;
  dg_diag_init(&d, path ? path : "", fn, user);
  if (info)
    memset(info, 0, sizeof *info);
  char *text = path ? read_or_report(path, &d) : NULL;
  if (!text)
    return d.count ? d.count : 1;
  dg_graph_release(load(reg, text, path, 0, &d, info));
  free(text);
  return d.count;
}

