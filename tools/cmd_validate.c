/* drivegraph validate: every problem of every file, one per line. */
#include "plugin.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <getopt.h>
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

static int cmd_validate(const command *cmd, int argc, char **argv) {
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                           {"plugin", required_argument, NULL, 'p'},
                                           {"dt", required_argument, NULL, 'd'},
                                           {0, 0, 0, 0}};
  /* at most one plugin per argument */
  char **plugins = malloc(sizeof *plugins * (size_t)(argc > 0 ? argc : 1));
  if (!plugins) {
    fprintf(stderr, "drivegraph: out of memory\n");
    return EXIT_INVALID;
  }
  int n_plugins = 0, c;
  double dt = 0.001;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') {
      free(plugins);
      print_help(cmd);
      return EXIT_OK;
    }
    if (c == 'p') {
      plugins[n_plugins++] = optarg;
      continue;
    }
    if (c == 'd') {
      if (parse_seconds(optarg, &dt))
        continue;
      free(plugins);
      return usage_error(cmd, "--dt: expected a number of seconds > 0 (got '%s')", optarg);
    }
    free(plugins);
    return option_error(cmd, c, argv);
  }
  if (optind >= argc) {
    free(plugins);
    return usage_error(cmd, "no graph file given");
  }
  /* Without plugins the built-in classes (reg NULL) do, as before. */
  dg_registry *reg = NULL;
  if (n_plugins > 0) {
    reg = plugin_registry(n_plugins, plugins);
    if (!reg) {
      free(plugins);
      return EXIT_INVALID; /* plugin_registry said why */
    }
  }
  free(plugins);
  bool all_valid = true;
  for (int i = optind; i < argc; i++)
    all_valid &= validate_one(reg, argv[i], dt);
  fflush(stdout);
  dg_registry_free(reg);
  return all_valid ? EXIT_OK : EXIT_INVALID;
}

const command dg_cmd_validate = {
    .name = "validate",
    .synopsis = "GRAPH... [--plugin LIB.so]... [--dt s]",
    .summary = "Check graph files and report every problem.",
    .help = "Prints each problem on its own line as 'FILE: /json/pointer: message'\n"
            "(syntax errors as 'FILE:line:column: message'), or for a valid file\n"
            "'FILE: ok (N blocks, M connections, K DOFs in the start mode, J modes "
            "checked)'.\n"
            "A valid graph is also linearized in its start mode to check that RK4 can\n"
            "take the step size --dt: a mode too fast for it is a problem, reported\n"
            "at the block it lives in with a step size that works.\n\n"
            "Options:\n"
            "  --plugin LIB.so   load block classes from a shared library (its\n"
            "                    drivegraph_plugin_init function registers them;\n"
            "                    see docs/writing-blocks.md); may be repeated\n"
            "  --dt s            step size to check RK4's stability at (default 0.001)\n"
            "  -h, --help        show this help\n\n"
            "Exit status: 0 all files valid, 1 some file invalid or a plugin failed\n"
            "to load, 2 usage error.\n",
    .run = cmd_validate,
};
