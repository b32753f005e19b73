/* drivegraph validate: every problem of every file, one per line. */
#include "output.h"
#include "plugin.h"
#include "tool.h"

#include <math.h>

#include <drivegraph/drivegraph.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* validate                                                                 */

static void print_problem(const dg_error *err, void *user) { print_error(stdout, err, user); }

/* A simulation of `g` one short step on (at most 1 µs: as
 * dg_sim_check_stiffness steps a copy of a simulation that has not
 * stepped, so that bodies have published their loads), checked here on
 * the simulation itself instead of a copy; a simulation that cannot take
 * that step is made again, unstepped, for the check to say why. */
static dg_sim *stepped_sim(const dg_graph *g, double dt, dg_error *err) {
  dg_sim *sim = dg_sim_new(g, err);
  if (sim && dg_sim_step(sim, fmin(dt, 1e-6)) != DG_OK) {
    dg_sim_free(sim);
    sim = dg_sim_new(g, err);
  }
  return sim;
}

/* The checks of a valid graph `g` that need a simulation of it, made on
 * one: the step size (dg_sim_check_stiffness at `dt`: a mode RK4 cannot
 * integrate at dt is a problem, printed like the others; a check that
 * cannot run is only a note), then the scenario against it, if any (its
 * names, the channels the graph binds, integer channels: every problem,
 * at the scenario's places; the check changes nothing). */
static bool simulation_ok(const dg_graph *g, const char *path, double dt, const dg_scenario *scn,
                          const char *scn_path) {
  dg_error err;
  dg_sim *sim = stepped_sim(g, dt, &err);
  /* a source faster than steps of dt can sample is a problem like a mode
   * RK4 cannot integrate at dt */
  bool fast = dg_graph_check_step(g, dt, print_problem, (void *)path) > 0;
  int rc = sim ? dg_sim_check_stiffness(sim, dt, NULL, &err) : err.code;
  if (rc == DG_ERR_NUMERIC) {
    print_error(stdout, &err, path);
  } else if (rc != DG_OK) {
    fprintf(stderr, "drivegraph validate: note: ");
    print_error(stderr, &err, path);
  }
  int problems = rc != DG_ERR_NUMERIC && sim && scn
                     ? dg_scenario_check(scn, sim, print_problem, (void *)scn_path)
                     : 0;
  dg_sim_free(sim);
  return !fast && rc != DG_ERR_NUMERIC && problems == 0;
}

/* A count of combinations: exact below 10^15, else to 3 digits (2^256 is
 * 1.16e+77). */
static const char *count_text(double n, char *buf, size_t size) {
  snprintf(buf, size, n < 1e15 ? "%.0f" : "%.3g", n);
  return buf;
}

/* "J modes checked" when every combination was built; "J modes checked: B
 * built, the others follow from G independent groups" when the groups
 * cover the rest; "C of T modes checked: ..." with why, when a group had
 * too many combinations to build them all (dg_graph_info). */
static void print_modes(const dg_graph_info *info) {
  char covered[32], all[32], group[32];
  count_text(info->modes_covered, covered, sizeof covered);
  count_text(info->mode_combinations, all, sizeof all);
  if (info->modes_covered < info->mode_combinations) {
    printf("%s of %s modes checked: %d built; %d switching blocks depend on each other (one "
           "group of %s combinations, %s), so ",
           covered, all, info->modes_built, info->largest_group,
           count_text(info->largest_group_modes, group, sizeof group),
           info->largest_group_modes > 4096 ? "more than the 4096 checked in full"
                                            : "past the 16384 modes built in all");
    if (info->mode_level <= 1)
      printf("each of them was checked alone");
    else
      printf("every combination with at most %d of them away from their start modes was checked",
             info->mode_level);
    if (info->partial_groups > 1)
      printf(" (and in %d more such groups)", info->partial_groups - 1);
  } else if (info->modes_built < info->mode_combinations) {
    printf("%s modes checked: %d built, the others follow from %d independent groups", all,
           info->modes_built, info->mode_groups);
  } else {
    printf("%d modes checked", info->modes_built);
  }
}

/* Validates one file against `reg` (NULL: the built-in classes); true when
 * it is valid (and RK4 can take step `dt`, and the scenario fits it). */
static bool validate_one(const dg_registry *reg, const char *path, double dt,
                         const dg_scenario *scn, const char *scn_path) {
  dg_graph_info info = {0};
  dg_graph *g = NULL;
  /* one load: the graph checked is the graph simulated */
  int problems = dg_graph_validate_load_file(reg, path, print_problem, (void *)path, &info, &g);
  bool ok = problems == 0 && g && simulation_ok(g, path, dt, scn, scn_path);
  dg_graph_free(g);
  if (!ok)
    return false;
  printf("%s: ok (%d blocks, %d connections, %d DOFs in the start mode, ", esc(path), info.blocks,
         info.connections, info.dofs);
  print_modes(&info);
  printf(")\n");
  return true;
}

typedef struct validate_opts {
  opt_list plugins;
  double dt;
  const char *scenario;
} validate_opts;

static const option_def validate_options[] = {
    OPT_PLUGIN_AT(validate_opts, plugins),
    {.name = "scenario", OPT_STRING_AT(validate_opts, scenario), .arg = "FILE",
     .help = "also check a scenario file, and check it against each graph: unknown\n"
             "channels and signals, channels the graph binds that it does not give,\n"
             "integer channels given fractions (every problem, before any run)"},
    {.name = "dt", OPT_SECONDS_AT(validate_opts, dt), .arg = "s",
     .help = "step size to check RK4's stability at (default: the scenario's dt,\n"
             "else 0.001)"},
    {0},
};

static int cmd_validate(const command *cmd, int argc, char **argv) {
  validate_opts o = {.dt = NAN}; /* NaN: not given */
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(cmd, "no graph file given");
  /* Without plugins the built-in classes (reg NULL) do, as before. */
  dg_registry *reg = NULL;
  if (rc == EXIT_OK && o.plugins.n > 0 && !(reg = plugin_registry(o.plugins.n, o.plugins.v)))
    rc = EXIT_INVALID; /* plugin_registry said why */
  if (rc != EXIT_OK) {
    options_free(cmd, &o);
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  }
  bool all_valid = true;
  dg_scenario *scn = NULL;
  if (o.scenario) {
    dg_error err;
    scn = dg_scenario_load_file(o.scenario, &err);
    if (!scn) {
      dg_scenario_validate_file(o.scenario, print_problem, (void *)o.scenario);
      all_valid = false;
    }
  }
  /* the step checked: --dt, else the one the scenario runs at (sim takes
   * it from there too), else sim's default */
  double dt = !isnan(o.dt) ? o.dt : scn && !isnan(dg_scenario_dt(scn)) ? dg_scenario_dt(scn) : 0.001;
  for (int i = 0; i < args.n; i++)
    all_valid &= validate_one(reg, args.v[i], dt, scn, o.scenario);
  dg_scenario_free(scn);
  /* the verdicts are the output: lost ones (a full disk, a closed pipe)
   * are an error naming stdout */
  if (out_flush_stdout(cmd->name) != 0)
    all_valid = false;
  options_free(cmd, &o);
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
            "take the step size --dt (default: the --scenario's dt, else 0.001 s): a\n"
            "mode too fast for it is a problem, reported at the block it lives in\n"
            "with a step size that works.\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = validate_options,
    .footer = "Exit status: 0 all files valid, 1 some file invalid, a plugin failed\n"
              "to load or stdout could not be written, 2 usage error.\n",
    .run = cmd_validate,
};
