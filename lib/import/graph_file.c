/* Graph files by name: a path ending in .yaml or .yml is a YAML vehicle
 * config (lib/import/import_yaml.c), anything else graph JSON
 * (lib/graph.c). The dispatch lives here rather than in graph.c so that
 * the core library never calls the importers (and does not need libyaml). */
#include "internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_yaml_path(const char *path) {
  size_t n = strlen(path);
  return (n >= 5 && strcmp(path + n - 5, ".yaml") == 0) ||
         (n >= 4 && strcmp(path + n - 4, ".yml") == 0);
}

dg_graph *dg_graph_load_file(const dg_registry *reg, const char *path, dg_error *err) {
  if (path && is_yaml_path(path)) {
    dgp_error_clear(err);
    return dg_graph_import_yaml(reg, path, err);
  }
  return dgp_graph_load_json_file(reg, path, err);
}

int dg_graph_validate_load_file(const dg_registry *reg, const char *path, dg_diag_fn fn, void *user,
                                dg_graph_info *info, dg_graph **graph) {
  if (path && is_yaml_path(path)) {
    if (info)
      memset(info, 0, sizeof *info);
    if (graph)
      *graph = NULL;
    dg_error e;
    char *json = dg_import_yaml_to_json(path, NULL, NULL, &e);
    if (!json) {
      if (fn)
        fn(&e, user);
      return 1;
    }
    int problems = dgp_graph_validate_text(reg, json, path, fn, user, info, graph);
    free(json);
    return problems;
  }
  return dgp_graph_validate_json_file(reg, path, fn, user, info, graph);
}

int dg_graph_validate_file(const dg_registry *reg, const char *path, dg_diag_fn fn, void *user,
                           dg_graph_info *info) {
  return dg_graph_validate_load_file(reg, path, fn, user, info, NULL);
}
