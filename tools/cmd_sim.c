/* drivegraph sim: run a graph with a scenario, write a CSV, print a summary. */
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* sim: options                                                             */

typedef struct sim_opts {
  const char *graph;
  const char *scenario; /* NULL: no inputs, duration from --duration */
  const char *csv;      /* NULL: no CSV */
  const char *signals;  /* NULL: every signal */
  double dt, duration;  /* NaN unless given */
} sim_opts;

/* Parses `sim` arguments into o: EXIT_OK, EXIT_USAGE or HELP_SHOWN. */
static int sim_parse_args(const command *cmd, int argc, char **argv, sim_opts *o) {
  static const struct option longopts[] = {
      {"scenario", required_argument, NULL, 's'}, {"csv", required_argument, NULL, 'o'},
      {"dt", required_argument, NULL, 'd'},       {"duration", required_argument, NULL, 'T'},
      {"signals", required_argument, NULL, 'S'},  {"help", no_argument, NULL, 'h'},
      {0, 0, 0, 0}};
  *o = (sim_opts){.dt = NAN, .duration = NAN};
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    switch (c) {
    case 's': o->scenario = optarg; break;
    case 'o': o->csv = optarg; break;
    case 'S': o->signals = optarg; break;
    case 'd':
      if (!parse_seconds(optarg, &o->dt))
        return usage_error(cmd, "--dt: expected a number of seconds > 0 (got '%s')", optarg);
      break;
    case 'T':
      if (!parse_seconds(optarg, &o->duration))
        return usage_error(cmd, "--duration: expected a number of seconds > 0 (got '%s')",
                           optarg);
      break;
    case 'h': print_help(cmd); return HELP_SHOWN;
    default: return option_error(cmd, c, argv);
    }
  }
  if (optind >= argc)
    return usage_error(cmd, "no graph file given");
  if (optind + 1 < argc)
    return usage_error(cmd, "one graph file expected (got '%s' too)", argv[optind + 1]);
  o->graph = argv[optind];
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* sim: the run                                                             */

#define MAX_SUMMARY_SIGNALS 8

typedef struct sim_run {
  const sim_opts *o;
  dg_graph *graph;
  dg_scenario *scn;
  dg_sim *sim;
  dg_driver *drv;

  double dt, duration, interval; /* interval: an exact multiple of dt */
  long total_steps, steps_per_row;

  int ncols; /* CSV columns after t: signal ids */
  int *cols;

  FILE *csv;
  char *tmp_path; /* the CSV is written here and renamed on success */
  long rows;

  long steps;
  bool stopped; /* by the scenario's stop condition */
  double wall, step_seconds;
} sim_run;

static int sim_load(sim_run *r) {
  dg_error err;
  r->graph = dg_graph_load_file(NULL, r->o->graph, &err);
  if (!r->graph) {
    print_error(stderr, &err, r->o->graph);
    return EXIT_INVALID;
  }
  if (r->o->scenario) {
    r->scn = dg_scenario_load_file(r->o->scenario, &err);
    if (!r->scn) {
      print_error(stderr, &err, r->o->scenario);
      return EXIT_INVALID;
    }
  }
  return EXIT_OK;
}

/* dt, duration and output interval: options override the scenario. Rows are
 * written every steps_per_row steps, so the interval is rounded to a whole
 * number of steps (with a note when that changes it). */
static int sim_timing(const command *cmd, sim_run *r) {
  double s_dt = dg_scenario_dt(r->scn), s_dur = dg_scenario_duration(r->scn);
  double s_out = dg_scenario_output_interval(r->scn);
  r->dt = !isnan(r->o->dt) ? r->o->dt : !isnan(s_dt) ? s_dt : 0.001;
  r->duration = !isnan(r->o->duration) ? r->o->duration : s_dur;
  if (isnan(r->duration))
    return usage_error(cmd, "no duration: give --duration or \"duration\" in the scenario");
  double steps = ceil(r->duration / r->dt - 1e-9);
  if (steps > 1e12)
    return usage_error(cmd, "duration %g s at dt %g s is too many steps", r->duration, r->dt);
  r->total_steps = (long)steps;
  double interval = !isnan(s_out) ? s_out : fmax(r->dt, 0.01);
  r->steps_per_row = lround(interval / r->dt);
  if (r->steps_per_row < 1)
    r->steps_per_row = 1;
  r->interval = interval;
  if (fabs((double)r->steps_per_row * r->dt - interval) > 1e-9 * interval) {
    r->interval = (double)r->steps_per_row * r->dt;
    fprintf(stderr,
            "drivegraph sim: note: output interval %g s is not a multiple of dt %g s; using %g s\n",
            interval, r->dt, r->interval);
  }
  return EXIT_OK;
}

static int sim_start(sim_run *r) {
  dg_error err;
  r->sim = dg_sim_new(r->graph, &err);
  if (!r->sim) {
    print_error(stderr, &err, r->o->graph);
    return EXIT_INVALID;
  }
  if (r->scn) {
    r->drv = dg_driver_new(r->scn, r->sim, &err);
    if (!r->drv) {
      print_error(stderr, &err, r->o->scenario);
      return EXIT_INVALID;
    }
  }
  return EXIT_OK;
}

/* Names the closest signal when `name` is unknown. */
static void report_unknown_signal(const dg_sim *sim, const char *name) {
  int n = dg_sim_signal_count(sim);
  const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
  const char *close = NULL;
  if (names) {
    for (int i = 0; i < n; i++)
      names[i] = dg_sim_signal_name(sim, i);
    close = tool_suggest(name, names, n);
  }
  if (close)
    fprintf(stderr, "drivegraph sim: --signals: unknown signal \"%s\"; did you mean \"%s\"?\n",
            name, close);
  else
    fprintf(stderr, "drivegraph sim: --signals: unknown signal \"%s\"\n", name);
  free(names);
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  char *end = s + strlen(s);
  while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
    *--end = '\0';
  return s;
}

/* Columns from --signals "a.b,c.d": EXIT_OK or EXIT_INVALID. */
static int select_listed(sim_run *r, const char *list) {
  char *copy = strdup(list);
  r->cols = malloc((strlen(list) / 2 + 1) * sizeof *r->cols); /* >= the number of names */
  if (!copy || !r->cols) {
    free(copy);
    fprintf(stderr, "drivegraph sim: out of memory\n");
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *name = trim(tok);
    if (!*name)
      continue;
    int id = dg_sim_signal_find(r->sim, name);
    if (id < 0) {
      report_unknown_signal(r->sim, name);
      rc = EXIT_INVALID;
      break;
    }
    r->cols[r->ncols++] = id;
  }
  free(copy);
  if (rc == EXIT_OK && r->ncols == 0) {
    fprintf(stderr, "drivegraph sim: --signals: no signal names in '%s'\n", list);
    rc = EXIT_INVALID;
  }
  return rc;
}

static int select_columns(sim_run *r) {
  if (r->o->signals)
    return select_listed(r, r->o->signals);
  int n = dg_sim_signal_count(r->sim);
  r->cols = malloc((size_t)(n > 0 ? n : 1) * sizeof *r->cols);
  if (!r->cols) {
    fprintf(stderr, "drivegraph sim: out of memory\n");
    return EXIT_INVALID;
  }
  for (int i = 0; i < n; i++)
    r->cols[i] = i;
  r->ncols = n;
  return EXIT_OK;
}

/* Opens OUT.tmp and writes the header. The file is renamed to OUT only when
 * the run succeeds, so a failed run never leaves a partial CSV behind. */
static int csv_open(sim_run *r) {
  const char *out = r->o->csv;
  r->tmp_path = malloc(strlen(out) + 5);
  if (!r->tmp_path) {
    fprintf(stderr, "drivegraph sim: out of memory\n");
    return EXIT_INVALID;
  }
  sprintf(r->tmp_path, "%s.tmp", out);
  r->csv = fopen(r->tmp_path, "w");
  if (!r->csv) {
    fprintf(stderr, "drivegraph sim: cannot write %s: %s\n", out, strerror(errno));
    free(r->tmp_path);
    r->tmp_path = NULL;
    return EXIT_INVALID;
  }
  fputs("t", r->csv);
  for (int i = 0; i < r->ncols; i++)
    fprintf(r->csv, ",%s", dg_sim_signal_name(r->sim, r->cols[i]));
  fputc('\n', r->csv);
  return EXIT_OK;
}

/* One row at step `step` (a multiple of steps_per_row): its time is computed
 * from the row count, never accumulated, so it is an exact multiple of the
 * interval. */
static void csv_row(sim_run *r, long step) {
  if (!r->csv)
    return;
  double t = (double)(step / r->steps_per_row) * r->interval;
  fprintf(r->csv, "%.10g", t);
  for (int i = 0; i < r->ncols; i++)
    fprintf(r->csv, ",%.10g", dg_sim_signal(r->sim, r->cols[i]));
  fputc('\n', r->csv);
  r->rows++;
}

/* Closes the CSV: renamed into place when `keep`, removed otherwise. */
static int csv_close(sim_run *r, bool keep) {
  if (!r->csv)
    return EXIT_OK;
  int why = 0; /* errno of the first failure */
  errno = 0;
  if (fflush(r->csv) != 0 || ferror(r->csv))
    why = errno ? errno : EIO;
  if (fclose(r->csv) != 0 && !why)
    why = errno ? errno : EIO;
  r->csv = NULL;
  if (keep && !why && rename(r->tmp_path, r->o->csv) != 0)
    why = errno;
  if (keep && !why)
    return EXIT_OK;
  if (keep)
    fprintf(stderr, "drivegraph sim: cannot write %s: %s\n", r->o->csv, strerror(why));
  remove(r->tmp_path);
  return keep ? EXIT_INVALID : EXIT_OK;
}

static int step_failed(sim_run *r) {
  fprintf(stderr, "drivegraph sim: step %ld (from t = %g s) failed:\n", r->steps,
          (double)(r->steps - 1) * r->dt);
  print_error(stderr, dg_sim_last_error(r->sim), r->o->graph);
  return EXIT_INVALID;
}

/* Steps to the duration or the stop condition. Inputs are applied at the
 * start of each step, at a time computed from the step count. The clock is
 * read only around runs of steps between rows, so the ns per step leaves out
 * the output and costs two clock reads per row. */
static int sim_loop(sim_run *r) {
  double start = now_seconds();
  csv_row(r, 0);
  r->stopped = dg_driver_should_stop(r->drv);
  double seg = now_seconds();
  for (long k = 0; k < r->total_steps && !r->stopped; k++) {
    dg_driver_apply(r->drv, (double)k * r->dt);
    int rc = dg_sim_step(r->sim, r->dt);
    r->steps = k + 1;
    if (rc != DG_OK) {
      r->step_seconds += now_seconds() - seg;
      r->wall = now_seconds() - start;
      return step_failed(r);
    }
    r->stopped = dg_driver_should_stop(r->drv);
    if (r->steps % r->steps_per_row == 0) {
      r->step_seconds += now_seconds() - seg;
      csv_row(r, r->steps);
      seg = now_seconds();
    }
  }
  if (r->steps % r->steps_per_row != 0)
    r->step_seconds += now_seconds() - seg;
  r->wall = now_seconds() - start;
  return EXIT_OK;
}

/* The energy audit: each block's net work, the losses, and how well
 * ΔKE = work in + work out + losses closes (relative to the work in). */
static void print_energy(const dg_sim *sim, const dg_graph *g) {
  dg_energy e;
  dg_sim_energy(sim, &e);
  printf("energy:      kinetic %.6g J (start %.6g J)\n", e.kinetic, e.kinetic_start);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    double w = dg_sim_block_work(sim, i);
    if (w != 0.0)
      printf("  %-24s %12.6g J\n", dg_graph_block_id(g, i), w);
  }
  if (e.efficiency_loss != 0.0)
    printf("  %-24s %12.6g J\n", "(gear efficiency)", e.efficiency_loss);
  if (e.impact_loss != 0.0)
    printf("  %-24s %12.6g J\n", "(mode-change impacts)", e.impact_loss);
  double scale = e.work_in > 0.0 ? e.work_in : fmax(fabs(e.kinetic_start), 1.0);
  printf("  balance error            %12.3g J (%.2g of the work in)\n", e.balance_error,
         fabs(e.balance_error) / scale);
}

static void print_summary(const sim_run *r) {
  printf("graph:       %s (%d blocks, %d DOFs)\n", r->o->graph, dg_graph_block_count(r->graph),
         dg_sim_dof_count(r->sim));
  printf("steps:       %ld of %g s\n", r->steps, r->dt);
  printf("final time:  %.6g s\n", (double)r->steps * r->dt);
  if (r->stopped)
    printf("stopped:     stop condition of %s met\n", r->o->scenario);
  else
    printf("stopped:     duration %g s reached\n", r->duration);
  int n = r->ncols < MAX_SUMMARY_SIGNALS ? r->ncols : MAX_SUMMARY_SIGNALS;
  printf("final values:\n");
  for (int i = 0; i < n; i++) {
    const char *unit = dg_sim_signal_unit(r->sim, r->cols[i]);
    printf("  %-24s %12.6g %s\n", dg_sim_signal_name(r->sim, r->cols[i]),
           dg_sim_signal(r->sim, r->cols[i]), unit ? unit : "");
  }
  if (r->ncols > n)
    printf("  ... and %d more signals\n", r->ncols - n);
  print_energy(r->sim, r->graph);
  double ns = r->steps > 0 ? 1e9 * r->step_seconds / (double)r->steps : 0;
  printf("wall time:   %.3f s (%.0f ns per step)\n", r->wall, ns);
  if (r->o->csv)
    printf("csv:         %s (%ld rows every %g s, %d signals)\n", r->o->csv, r->rows, r->interval,
           r->ncols);
}

static void sim_free(sim_run *r) {
  if (r->csv)
    csv_close(r, false);
  free(r->tmp_path);
  free(r->cols);
  dg_driver_free(r->drv);
  dg_sim_free(r->sim);
  dg_scenario_free(r->scn);
  dg_graph_free(r->graph);
}

static int sim_run_all(const command *cmd, sim_run *r) {
  int rc = sim_load(r);
  if (rc == EXIT_OK)
    rc = sim_timing(cmd, r);
  if (rc == EXIT_OK)
    rc = sim_start(r);
  if (rc == EXIT_OK)
    rc = select_columns(r);
  if (rc == EXIT_OK && r->o->csv)
    rc = csv_open(r);
  if (rc == EXIT_OK)
    rc = sim_loop(r);
  if (rc == EXIT_OK)
    rc = csv_close(r, true);
  if (rc == EXIT_OK)
    print_summary(r);
  return rc;
}

static int cmd_sim(const command *cmd, int argc, char **argv) {
  sim_opts o;
  int rc = sim_parse_args(cmd, argc, argv, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  sim_run r = {.o = &o};
  rc = sim_run_all(cmd, &r);
  sim_free(&r);
  return rc;
}

const command dg_cmd_sim = {
    .name = "sim",
        .synopsis = "GRAPH [--scenario FILE] [--csv OUT] [--dt s] [--duration s] "
                    "[--signals a.b,c.d]",
        .summary = "Simulate a graph, driven by a scenario file.",
        .help = "Steps the simulation with RK4 until the duration or the scenario's stop\n"
                "condition, writes signals to a CSV file and prints a summary.\n\n"
                "Options:\n"
                "  --scenario FILE   driver inputs, initial values, stop condition, timing\n"
                "  --csv OUT         write 't,<block>.<signal>,...' rows every output\n"
                "                    interval (the scenario's, else max(dt, 0.01) s)\n"
                "  --dt s            step size, overrides the scenario (default 0.001)\n"
                "  --duration s      simulated time, overrides the scenario (required\n"
                "                    from one of them)\n"
                "  --signals LIST    comma-separated signals for the CSV (default all)\n"
                "  -h, --help        show this help\n\n"
                "Exit status: 0 ok, 1 invalid input or failed simulation, 2 usage error.\n"
                "A failed run leaves no CSV behind.\n",
        .run = cmd_sim,
};
