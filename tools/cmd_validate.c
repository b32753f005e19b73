/* drivegraph validate: every problem of every file, one per line. */
#include "plugin.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* validate                                                                 */

static void print_problem(const dg_error *err, void *user) { print_error(stdout, err, user); }

/* The step-size check of a valid graph (dg_sim_check_stiffness at `dt`): a
 * mode RK4 cannot integrate at dt is a problem, printed like the others. A
 * check that cannot run is only a note. */
static bool stiffness_ok(const dg_registry *reg, const char *path, double dt) {
  dg_error err;
  dg_graph *g = dg_graph_load_file(reg, path, &err);
  dg_sim *sim = g ? dg_sim_new(g, &err) : NULL;
  int rc = sim ? dg_sim_check_stiffness(sim, dt, NULL, &err) : DG_OK;
  if (rc == DG_ERR_NUMERIC) {
    print_error(stdout, &err, path);
  } else if (rc != DG_OK) {
    fprintf(stderr, "drivegraph validate: note: ");
    print_error(stderr, &err, path);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
  return rc != DG_ERR_NUMERIC;
}

/* Validates one file against `reg` (NULL: the built-in classes); true when
 * it is valid (and RK4 can take step `dt`). */
static bool validate_one(const dg_registry *reg, const char *path, double dt) {
  dg_graph_info info = {0};
  int problems = dg_graph_validate_file(reg, path, print_problem, (void *)path, &info);
  if (problems > 0 || !stiffness_ok(reg, path, dt))
    return false;
  printf("%s: ok (%d blocks, %d connections, %d DOFs in the start mode, %d modes checked)\n", path,
         info.blocks, info.connections, info.dofs, info.modes);
  return true;
}

typedef struct validate_opts {
  opt_list plugins;
  double dt;
} validate_opts;

static const option_def validate_options[] = {
    OPT_PLUGIN_AT(validate_opts, plugins),
    {.name = "dt", OPT_SECONDS_AT(validate_opts, dt), .arg = "s",
     .help = "step size to check RK4's stability at (default 0.001)"},
    {0},
};

static int cmd_validate(const command *cmd, int argc, char **argv) {
  validate_opts o = {.dt = 0.001};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(cmd, "no graph file given");
  /* Without plugins the built-in classes (reg NULL) do, as before. */
  dg_registry *reg = NULL;
  if (rc == EXIT_OK && o.plugins.n > 0 && !(reg = plugin_registry(o.plugins.n, o.plugins.v)))
    rc = EXIT_INVALID; /* plugin_registry said why */
  options_free(cmd, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  bool all_valid = true;
  for (int i = 0; i < args.n; i++)
    all_valid &= validate_one(reg, args.v[i], o.dt);
  fflush(stdout);
  dg_registry_free(reg);
  return all_valid ? EXIT_OK : EXIT_INVALID;
}

const command dg_cmd_validate = {
    .name = "validate",
    .operands = "GRAPH...",
    .summary = "Check graph files and report every problem.",
    .help = "Prints each problem on its own line as 'FILE: /json/pointer: message'\n"
            "(syntax errors as 'FILE:line:column: message'), or for a valid file\n"
            "'FILE: ok (N blocks, M connections, K DOFs in the start mode, J modes "
            "checked)'.\n"
            "A valid graph is also linearized in its start mode to check that RK4 can\n"
            "take the step size --dt: a mode too fast for it is a problem, reported\n"
            "at the block it lives in with a step size that works.\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = validate_options,
    .footer = "Exit status: 0 all files valid, 1 some file invalid or a plugin failed\n"
              "to load, 2 usage error.\n",
    .run = cmd_validate,
};
