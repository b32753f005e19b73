/* drivegraph sim: run a graph with a scenario or a preset driver, write a
 * CSV and a plot, print a summary.
 *
 * Presets (--preset launch, coast, brake) drive the car the graph describes
 * without a scenario file; the drivers are the library's (dg_preset,
 * lib/run/preset.c, which describes them), shared with the Python
 * package. */
#include "output.h"
#include "plot.h"
#include "plugin.h"
#include "summary.h"
#include "tool.h"

#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RPM_PER_RAD_S (30.0 / 3.14159265358979323846)

/* ------------------------------------------------------------------------ */
/* Presets: constants                                                       */

enum { PRESET_NONE, PRESET_LAUNCH, PRESET_COAST, PRESET_BRAKE, NUM_PRESETS };
static const char *const preset_names[NUM_PRESETS + 1] = {"", "launch", "coast", "brake", NULL};
static const char *const preset_what[NUM_PRESETS] = {
    "", "full throttle from rest", "closed throttle coast-down", "full braking to rest"};
/* ------------------------------------------------------------------------ */
/* Options                                                                  */

static void out_of_memory(void) { fprintf(stderr, "drivegraph sim: out of memory\n"); }

typedef struct sim_opts {
  const char *graph;
  const char *scenario; /* NULL: no inputs, duration from --duration */
  int preset;           /* PRESET_* */
  double from_speed;    /* km/h, NaN unless given */
  const char *csv;      /* NULL: no CSV */
  const char *plot;     /* NULL: no plot */
  plot_format plot_fmt;
  const char *signals;  /* NULL: every signal */
  const char *plot_signals; /* NULL: the panels the graph's blocks call for */
  bool json;
  double dt, duration;  /* NaN unless given */
  opt_list plugins;     /* --plugin LIB.so */
  opt_list inputs;      /* --input NAME=VALUE */
  bool force;           /* run even when RK4 cannot take dt in the start mode */
  bool compile;         /* compile the start mode's RK4 stage (dg_sim_compile) */
  long digits;          /* significant digits of the CSV's numbers */
  double max_steps;     /* runs of more steps are refused */
} sim_opts;

static bool parse_plot(const char *value, void *dest, char *why, size_t size) {
  if (plot_format_of(value) == PLOT_UNKNOWN) {
    snprintf(why, size, "expected a file name ending in .png or .svg");
    return false;
  }
  *(const char **)dest = value;
  return true;
}

static const option_def sim_options[] = {
    {.name = "scenario", OPT_STRING_AT(sim_opts, scenario), .arg = "FILE",
     .help = "driver inputs, initial values, stop condition, timing"},
    {.name = "preset", OPT_CHOICE_AT(sim_opts, preset), .arg = "NAME", .expect = "preset",
     .choices = preset_names + 1,
     .help = "a built-in driver for a graph with a vehicle block\n"
             "(instead of --scenario):\n"
             "  launch  full throttle from rest (engine at idle, gear 1,\n"
             "          pedal clutch released over 1 s, manual upshifts\n"
             "          near the redline) until 400 m are covered at\n"
             "          100 km/h or more (limit 60 s)\n"
             "  coast   closed throttle from --from-speed in the highest\n"
             "          sensible gear until below 1 km/h or creeping\n"
             "          steadily (limit 300 s)\n"
             "  brake   full brake from --from-speed to rest (limit 30 s)"},
    {.name = "from-speed", OPT_NUMBER_AT(sim_opts, from_speed), .arg = "KMH",
     .expect = "a speed in km/h > 0", .help = "start speed of coast and brake (default 100)"},
    {.name = "csv", OPT_STRING_AT(sim_opts, csv), .arg = "OUT",
     .help = "write 't,<block>.<signal>,...' rows every output\n"
             "interval (the scenario's, else max(dt, 0.01) s);\n"
             "'-' writes them to stdout (the summary goes to stderr)"},
    {.name = "digits", OPT_INT_AT(sim_opts, digits), .arg = "N", .min = 1, .max = 17,
     .help = "significant digits of the CSV's numbers (default 10;\n"
             "17 writes every double exactly: it reads back bit for bit)"},
    {.name = "plot", OPT_CALL_AT(sim_opts, plot, const char *), .arg = "FILE", .parse = parse_plot,
     .help = "draw engine speed, vehicle speed, gear, clutch and wheel\n"
             "slip, throttle and brake over time (panels for the blocks\n"
             "the graph has, or --plot-signals); FILE.png or FILE.svg"},
    {.name = "json", OPT_FLAG_AT(sim_opts, json),
     .help = "print the summary as one JSON object instead of text\n"
             "(its keys: docs/cli.md, \"Output keys\")"},
    {.name = "dt", OPT_SECONDS_AT(sim_opts, dt), .arg = "s",
     .help = "step size, overrides the scenario (default 0.001)"},
    {.name = "duration", OPT_SECONDS_AT(sim_opts, duration), .arg = "s",
     .help = "simulated time, overrides the scenario or the preset's\n"
             "limit (without a preset, required from one of them)"},
    {.name = "plot-signals", OPT_STRING_AT(sim_opts, plot_signals), .arg = "LIST",
     .help = "the plot's panels instead: signals and channels, panels\n"
             "separated by ',', lines sharing a panel joined by '+'\n"
             "(engine.rpm+gearbox.rpm,body.speed,throttle+brake)"},
    {.name = "signals", OPT_STRING_AT(sim_opts, signals), .arg = "LIST",
     .help = "comma-separated signals and channels for the CSV\n"
             "(default: every signal, then every channel)"},
    {.name = "input", OPT_LIST_AT(sim_opts, inputs), .arg = "NAME=VALUE",
     .help = "holds channel NAME at VALUE for the whole run (any\n"
             "channel the graph reads: \"range=2\"; with a scenario it\n"
             "replaces the scenario's schedule; with a preset, for\n"
             "the channels the preset does not drive)"},
    OPT_PLUGIN_AT(sim_opts, plugins),
    OPT_MAX_STEPS_AT(sim_opts, max_steps),
    {.name = "force", OPT_FLAG_AT(sim_opts, force),
     .help = "run even when the step size is too large for RK4 in the\n"
             "start mode (the check names the shafts and a dt that\n"
             "works; without --force such a run is refused)"},
    {.name = "compile", OPT_FLAG_AT(sim_opts, compile),
     .help = "compile the start mode's RK4 stage to machine code with\n"
             "the system's C compiler (experimental; the same results,\n"
             "bit for bit; refused for a mode it does not cover yet)"},
    {0},
};

/* Parses `sim` arguments into o: EXIT_OK, EXIT_USAGE or HELP_SHOWN. */
static int sim_parse_args(const command *cmd, int argc, char **argv, sim_opts *o) {
  *o = (sim_opts){.dt = NAN, .duration = NAN, .from_speed = NAN, .plot_fmt = PLOT_UNKNOWN,
                  .digits = 10, .max_steps = DEFAULT_MAX_STEPS};
  operands args;
  int rc = parse_options(cmd, argc, argv, o, &args);
  if (rc != EXIT_OK)
    return rc;
  if (args.n == 0)
    return usage_error(cmd, "no graph file given");
  if (args.n > 1)
    return usage_error(cmd, "one graph file expected (got '%s' too)", args.v[1]);
  o->graph = args.v[0];
  if (o->plot)
    o->plot_fmt = plot_format_of(o->plot);
  if (o->scenario && o->preset)
    return usage_error(cmd, "--scenario and --preset exclude each other");
  if (o->plot_signals && !o->plot)
    return usage_error(cmd, "--plot-signals chooses the panels of --plot FILE: give it too");
  if (!isnan(o->from_speed) && o->preset != PRESET_COAST && o->preset != PRESET_BRAKE)
    return usage_error(cmd, "--from-speed goes with --preset coast or --preset brake");
  if (o->json && o->csv && strcmp(o->csv, "-") == 0)
    return usage_error(cmd, "--csv - and --json would both write to stdout: give --csv a file");
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */

typedef struct sim_run {
  const sim_opts *o;
  dg_registry *reg; /* built-in classes plus the plugins' (outlives graph) */
  dg_graph *graph;
  dg_scenario *scn;
  dg_sim *sim;
  dg_driver *drv;
  dg_preset *ps; /* the preset driver (lib/run/preset.c), or NULL */

  double dt, duration, interval; /* interval: an exact multiple of dt */
  long total_steps, steps_per_row;

  int ncols; /* CSV columns after t: signal ids */
  int *cols;

  out_file *csv_out; /* tools/output.h: in place, or renamed into place at the end */
  FILE *csv;         /* its stream */
  bool csv_on_stdout; /* then the summary goes to stderr */
  long rows;

  plot_trace *trace;
  out_file *plot_out; /* opened before the run: a path that cannot be written
                       * is known before the run */

  summary sum;
  bool have_sum;

  long steps;
  bool stopped; /* by the scenario's stop condition or the preset's goal */
  bool locked_throughout; /* no degree of freedom after any step so far */
  char stop_reason[160];
  double wall, step_seconds;
  double first_step_cpu; /* process_cpu_seconds when the first step began */

  bool tty;            /* progress line on stderr */
  bool progress_shown;
  double last_progress;
  long next_clock;     /* the step at which the clock is read next */
  long clock_stride;   /* steps between clock reads */
  bool estimated;      /* the length of the run was estimated */
} sim_run;

/* ------------------------------------------------------------------------ */
/* Presets (the drivers are the library's: dg_preset, lib/run/preset.c)     */

/* A preset's problem: its own text after the option, or a load error as
 * the loader wrote it. */
static void print_preset_problem(const dg_error *err, void *user) {
  const sim_run *r = user;
  if (err->file[0])
    print_error(stderr, err, r->o->graph);
  else
    fprintf(stderr, "drivegraph sim: --preset %s: %s\n", preset_names[r->o->preset], err->text);
}

/* Finds the blocks, reads the parameters, checks the graph (every problem
 * printed), and for coast and brake takes the graph that starts in gear.
 * EXIT_OK or EXIT_INVALID. */
static int preset_setup(sim_run *r) {
  /* The graph loaded, so the file is valid JSON or a valid YAML config
   * (unless it changed since): its JSON text, which a YAML config
   * converts to, has the parameters. */
  dg_error err;
  char *text = graph_json_text(r->o->graph, &err);
  if (!text) {
    print_error(stderr, &err, r->o->graph);
    return EXIT_INVALID;
  }
  const char **given = calloc((size_t)r->o->inputs.n + 1, sizeof *given);
  char **names = calloc((size_t)r->o->inputs.n + 1, sizeof *names);
  int rc = given && names ? EXIT_OK : EXIT_INVALID;
  for (int i = 0; rc == EXIT_OK && i < r->o->inputs.n; i++) {
    const char *arg = r->o->inputs.v[i];
    names[i] = strndup(arg, strcspn(arg, "="));
    given[i] = names[i];
    if (!names[i])
      rc = EXIT_INVALID;
  }
  if (rc != EXIT_OK) {
    out_of_memory();
  } else {
    r->ps = dg_preset_new(r->reg, r->graph, text, preset_names[r->o->preset], r->o->from_speed,
                          r->o->inputs.n, given, print_preset_problem, r, &err);
    if (!r->ps)
      rc = EXIT_INVALID;
  }
  for (int i = 0; names && i < r->o->inputs.n; i++)
    free(names[i]);
  free(names);
  free(given);
  free(text);
  return rc;
}

static void preset_apply(sim_run *r, double t) { dg_preset_apply(r->ps, r->sim, t); }

/* True when the preset's goal is met (after a step). */
static bool preset_done(sim_run *r) {
  return dg_preset_done(r->ps, r->sim, (double)r->steps * r->dt, r->stop_reason,
                        sizeof r->stop_reason);
}

/* ------------------------------------------------------------------------ */
/* Loading and timing                                                       */

static void print_problem_stderr(const dg_error *err, void *user) {
  print_error(stderr, err, user);
}

static int sim_load(sim_run *r) {
  dg_error err;
  r->reg = plugin_registry(r->o->plugins.n, r->o->plugins.v);
  if (!r->reg)
    return EXIT_INVALID; /* plugin_registry said why */
  r->graph = dg_graph_load_file(r->reg, r->o->graph, &err);
  if (!r->graph) {
    print_error(stderr, &err, r->o->graph);
    return EXIT_INVALID;
  }
  print_warnings(stderr, r->graph, r->o->graph);
  if (r->o->scenario) {
    r->scn = dg_scenario_load_file(r->o->scenario, &err);
    if (!r->scn) { /* every problem of the file, not only the first */
      if (dg_scenario_validate_file(r->o->scenario, print_problem_stderr,
                                    (void *)r->o->scenario) == 0)
        print_error(stderr, &err, r->o->scenario);
      return EXIT_INVALID;
    }
  }
  return r->o->preset ? preset_setup(r) : EXIT_OK;
}

/* dt, duration and output interval: options override the scenario (or the
 * preset's limit). Rows are written every steps_per_row steps, so the
 * interval is rounded to a whole number of steps (with a note when that
 * changes it). */
static int sim_timing(const command *cmd, sim_run *r) {
  double s_dt = dg_scenario_dt(r->scn), s_dur = dg_scenario_duration(r->scn);
  double s_out = dg_scenario_output_interval(r->scn);
  if (r->ps)
    s_dur = dg_preset_time_limit(r->ps);
  r->dt = !isnan(r->o->dt) ? r->o->dt : !isnan(s_dt) ? s_dt : 0.001;
  r->duration = !isnan(r->o->duration) ? r->o->duration : s_dur;
  if (isnan(r->duration))
    return usage_error(cmd,
                       "no duration: give --duration, --preset or \"duration\" in the scenario");
  double steps = ceil(r->duration / r->dt - 1e-9); /* dg_run_timing_init's count */
  if (steps > r->o->max_steps)
    return refuse_steps(cmd, steps, r->duration, r->dt, r->o->max_steps);
  dg_run_timing rt;
  int rc = dg_run_timing_init(&rt, r->dt, r->duration, s_out);
  if (rc < 0)
    return usage_error(cmd, "duration %g s at dt %g s is too many steps", r->duration, r->dt);
  r->total_steps = rt.total_steps;
  r->steps_per_row = rt.steps_per_row;
  r->interval = rt.interval;
  if (rc == 1)
    fprintf(stderr,
            "drivegraph sim: note: output interval %g s is not a multiple of dt %g s; using %g s\n",
            !isnan(s_out) ? s_out : fmax(r->dt, 0.01), r->dt, r->interval);
  return EXIT_OK;
}

/* --input NAME=VALUE: channel NAME held at VALUE (replacing a scenario's
 * schedule). EXIT_OK or EXIT_INVALID, every bad one reported. */
static int apply_fixed_inputs(sim_run *r) {
  int rc = EXIT_OK;
  for (int i = 0; i < r->o->inputs.n; i++) {
    const char *arg = r->o->inputs.v[i], *eq = strchr(arg, '=');
    char name[128];
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
    char *end = NULL;
    double v = eq ? strtod(eq + 1, &end) : NAN;
    if (!eq || !name[0] || end == eq + 1 || *end || !isfinite(v)) {
      fprintf(stderr, "drivegraph sim: --input: expected NAME=VALUE with a finite number (got "
                      "'%s')\n", arg);
      rc = EXIT_INVALID;
      continue;
    }
    int ch = dg_sim_input_find(r->sim, name);
    if (ch < 0) {
      int n = dg_sim_input_count(r->sim);
      const char *names[256];
      for (int k = 0; k < n && k < 256; k++)
        names[k] = dg_sim_input_name(r->sim, k);
      const char *close = dg_suggest(name, names, n < 256 ? n : 256);
      fprintf(stderr, "drivegraph sim: --input: the graph reads no channel \"%s\"%s%s%s\n",
              esc(name), close ? "; did you mean \"" : "", close ? esc(close) : "",
              close ? "\"?" : "");
      rc = EXIT_INVALID;
      continue;
    }
    if (r->o->preset && ch < DG_NUM_STD_INPUTS) {
      fprintf(stderr, "drivegraph sim: --input %s: the preset drives that channel\n", esc(name));
      rc = EXIT_INVALID;
      continue;
    }
    if (dg_sim_input_is_integer(r->sim, ch) && v != floor(v)) {
      fprintf(stderr, "drivegraph sim: --input %s: must be an integer (a gear), got %g\n",
              esc(name), v);
      rc = EXIT_INVALID;
      continue;
    }
    dg_sim_set_input(r->sim, ch, v);
  }
  return rc;
}

static int sim_start(sim_run *r) {
  dg_error err;
  /* coast and brake: the preset's copy of the graph, starting in gear */
  r->sim = dg_sim_new(r->ps ? dg_preset_graph(r->ps) : r->graph, &err);
  if (!r->sim) {
    print_error(stderr, &err, r->o->graph);
    return EXIT_INVALID;
  }
  if (r->scn) {
    /* the scenario against this graph: every problem before the run */
    if (dg_scenario_check(r->scn, r->sim, print_problem_stderr, (void *)r->o->scenario) > 0)
      return EXIT_INVALID;
    r->drv = dg_driver_new(r->scn, r->sim, &err);
    if (!r->drv) {
      print_error(stderr, &err, r->o->scenario);
      return EXIT_INVALID;
    }
  }
  int rc = EXIT_OK;
  if (r->ps && dg_preset_start(r->ps, r->sim, &err) != DG_OK) {
    print_preset_problem(&err, r);
    rc = EXIT_INVALID;
  }
  if (rc == EXIT_OK)
    rc = apply_fixed_inputs(r);
  if (rc == EXIT_OK && (r->o->preset || r->o->inputs.n > 0)) {
    /* the inputs changed after the scenario's start: made consistent
     * again (a lever given by --input engages now, not at the first step);
     * a preset's inputs are those of its first step */
    if (r->o->preset)
      preset_apply(r, dg_sim_time(r->sim));
    dg_error serr0;
    if (dg_sim_start(r->sim, &serr0) != DG_OK) {
      print_error(stderr, &serr0, r->o->graph);
      rc = EXIT_INVALID;
    }
  }
  /* Once the initial values and first inputs are in place: a run whose dt
   * RK4 cannot take in the start mode (a stiff shaft or tyre) is refused
   * before it starts, naming the blocks and a step size that works; with
   * --force (the user knows the mode is left at once) it is a warning. */
  /* a source faster than the step can sample (a sine above 1/(2 dt)) */
  if (rc == EXIT_OK && dg_graph_check_step(dg_sim_graph(r->sim), r->dt, print_problem_stderr,
                                           (void *)r->o->graph) > 0) {
    fprintf(stderr, "drivegraph sim: not run\n");
    return EXIT_INVALID;
  }
  dg_error serr;
  if (rc == EXIT_OK && dg_sim_check_stiffness(r->sim, r->dt, NULL, &serr) == DG_ERR_NUMERIC) {
    fprintf(stderr, r->o->force ? "drivegraph sim: warning: " : "drivegraph sim: ");
    print_error(stderr, &serr, r->o->graph);
    if (!r->o->force) {
      fprintf(stderr, "drivegraph sim: not run (give --force to run it anyway)\n");
      return EXIT_INVALID;
    }
  }
  if (rc == EXIT_OK && r->o->compile && dg_sim_compile(r->sim, &serr) != DG_OK) {
    fprintf(stderr, "drivegraph sim: --compile: %s\n", serr.text);
    fprintf(stderr, "drivegraph sim: not run\n");
    return EXIT_INVALID;
  }
  return rc;
}

/* ------------------------------------------------------------------------ */
/* CSV columns                                                              */

/* Names the closest signal when `name` is unknown. */
static void report_unknown_signal(const dg_sim *sim, const char *name) {
  int n = dg_sim_signal_count(sim);
  const char **names = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
  const char *close = NULL;
  if (names) {
    for (int i = 0; i < n; i++)
      names[i] = dg_sim_signal_name(sim, i);
    close = dg_suggest(name, names, n);
  }
  if (close)
    fprintf(stderr, "drivegraph sim: --signals: unknown signal \"%s\"; did you mean \"%s\"?\n",
            esc(name), esc(close));
  else
    fprintf(stderr, "drivegraph sim: --signals: unknown signal \"%s\"\n", esc(name));
  free(names);
}

/* Columns from --signals "a.b,c.d": EXIT_OK or EXIT_INVALID. */
static int select_listed(sim_run *r, const char *list) {
  char *copy = strdup(list);
  r->cols = malloc((strlen(list) / 2 + 1) * sizeof *r->cols); /* >= the number of names */
  if (!copy || !r->cols) {
    free(copy);
    out_of_memory();
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *name = tool_trim(tok);
    if (!*name)
      continue;
    int id = dg_sim_signal_find(r->sim, name);
    if (id < 0 && !strchr(name, '.')) {
      int ch = dg_sim_input_find(r->sim, name);
      id = ch >= 0 ? -(ch + 1) : -1;
      if (ch < 0) {
        fprintf(stderr, "drivegraph sim: --signals: unknown channel \"%s\" (signals are "
                        "\"block.signal\")\n", esc(name));
        rc = EXIT_INVALID;
        break;
      }
    } else if (id < 0) {
      report_unknown_signal(r->sim, name);
      rc = EXIT_INVALID;
      break;
    }
    r->cols[r->ncols++] = id;
  }
  free(copy);
  if (rc == EXIT_OK && r->ncols == 0) {
    fprintf(stderr, "drivegraph sim: --signals: no signal names in '%s'\n", esc(list));
    rc = EXIT_INVALID;
  }
  return rc;
}

static int select_columns(sim_run *r) {
  if (r->o->signals)
    return select_listed(r, r->o->signals);
  int n = dg_sim_signal_count(r->sim), nc = dg_sim_input_count(r->sim);
  r->cols = malloc((size_t)(n + nc > 0 ? n + nc : 1) * sizeof *r->cols);
  if (!r->cols) {
    out_of_memory();
    return EXIT_INVALID;
  }
  for (int i = 0; i < n; i++)
    r->cols[i] = i;
  for (int k = 0; k < nc; k++) /* the channels: what the blocks were given */
    r->cols[n + k] = -(k + 1);
  r->ncols = n + nc;
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Output files (tools/output.h): a regular file or a new path is written to
 * a temporary file renamed into place only when the run and every write
 * succeeded, so a failed or interrupted run never leaves a partial file
 * behind; devices, FIFOs and '-' (stdout) are written in place.           */

/* Opens the CSV and writes the header. */
static int csv_open(sim_run *r) {
  r->csv_out = out_open("sim", r->o->csv);
  if (!r->csv_out)
    return EXIT_INVALID;
  r->csv_on_stdout = out_kind_of(r->csv_out) == OUT_STDOUT; /* "-", /dev/stdout */
  if (r->csv_on_stdout && r->o->json) {
    fprintf(stderr, "drivegraph sim: --csv %s and --json would both write to stdout: give "
                    "--csv a file\n", esc(r->o->csv));
    return EXIT_USAGE;
  }
  r->csv = out_stream(r->csv_out);
  fputs("t", r->csv);
  for (int i = 0; i < r->ncols; i++)
    fprintf(r->csv, ",%s", column_name(r->sim, r->cols[i]));
  fputc('\n', r->csv);
  return EXIT_OK;
}

/* The plot's signals and its output. */
static int plot_open(sim_run *r) {
  char why[256];
  long rows = r->total_steps / r->steps_per_row + 2;
  r->trace = r->o->plot_signals
                 ? plot_trace_new_list(r->sim, r->o->plot_signals, rows, why, sizeof why)
                 : plot_trace_new(r->sim, rows, why, sizeof why);
  if (!r->trace) {
    if (r->o->plot_signals)
      fprintf(stderr, "drivegraph sim: --plot-signals: %s\n", why);
    else
      fprintf(stderr, "drivegraph sim: --plot %s: %s\n", esc(r->o->plot), esc(why));
    return EXIT_INVALID;
  }
  r->plot_out = out_open("sim", r->o->plot);
  return r->plot_out ? EXIT_OK : EXIT_INVALID;
}

/* One row at step `step` (a multiple of steps_per_row): its time is computed
 * from the row count, never accumulated, so it is an exact multiple of the
 * interval. */
static void output_row(sim_run *r, long step) {
  double t = (double)(step / r->steps_per_row) * r->interval;
  if (r->trace)
    plot_trace_record(r->trace, t);
  if (!r->csv)
    return;
  int d = (int)r->o->digits;
  fprintf(r->csv, "%.*g", d, t);
  for (int i = 0; i < r->ncols; i++)
    fprintf(r->csv, ",%.*g", d, column_value(r->sim, r->cols[i]));
  fputc('\n', r->csv);
  r->rows++;
}

/* Gives the outputs up (a failed run): temporary files removed. */
static void discard_outputs(sim_run *r) {
  out_discard(r->csv_out);
  out_discard(r->plot_out);
  r->csv_out = r->plot_out = NULL;
  r->csv = NULL;
}

/* How a stopped run's outputs are left, for its message: "nothing was
 * written", or what was written in place and is cut. */
static void outputs_left(const sim_run *r, char *buf, size_t n) {
  const out_file *in_place = NULL;
  if (r->csv_out && out_kind_of(r->csv_out) != OUT_REPLACE)
    in_place = r->csv_out;
  if (in_place)
    snprintf(buf, n, "the CSV on %s is cut there, nothing else was written", out_name(in_place));
  else
    snprintf(buf, n, "nothing was written");
}

static void plot_title(const sim_run *r, char *sub, size_t n) {
  if (r->o->preset == PRESET_LAUNCH)
    snprintf(sub, n, "preset launch: %s   (%s)", preset_what[r->o->preset], r->o->graph);
  else if (r->o->preset)
    snprintf(sub, n, "preset %s: %s from %.0f km/h   (%s)", preset_names[r->o->preset],
             preset_what[r->o->preset], 3.6 * dg_preset_start_speed(r->ps), r->o->graph);
  else if (r->o->scenario)
    snprintf(sub, n, "scenario %s   (%s)", r->o->scenario, r->o->graph);
  else
    snprintf(sub, n, "no inputs, %g s   (%s)", r->duration, r->o->graph);
}

/* Draws the plot, closes both outputs and, when both were written whole,
 * moves them into place. */
static int outputs_finish(sim_run *r) {
  int rc = EXIT_OK;
  if (r->trace) {
    char why[256], sub[512];
    plot_title(r, sub, sizeof sub);
    const char *name = dg_graph_name(r->graph);
    plot_labels lab = {.title = name && *name ? name : r->o->graph,
                       .subtitle = sub,
                       .t_100 = r->have_sum ? r->sum.t_100 : NAN};
    char *img = NULL;
    size_t len = 0;
    if (plot_trace_render(r->trace, &lab, r->o->plot_fmt, &img, &len, why, sizeof why) != 0) {
      fprintf(stderr, "drivegraph sim: cannot draw %s: %s\n", esc(r->o->plot), esc(why));
      rc = EXIT_INVALID;
    } else {
      out_write(r->plot_out, img, len);
      if (out_close(r->plot_out) != 0) /* reports a failed write too */
        rc = EXIT_INVALID;
    }
    free(img);
  }
  if (rc == EXIT_OK && r->csv_out && out_close(r->csv_out) != 0)
    rc = EXIT_INVALID;
  r->csv = NULL;
  if (rc != EXIT_OK) {
    discard_outputs(r);
    return rc;
  }
  /* both whole: into place */
  int c1 = out_commit(r->csv_out), c2 = out_commit(r->plot_out);
  r->csv_out = r->plot_out = NULL;
  return c1 == 0 && c2 == 0 ? EXIT_OK : EXIT_INVALID;
}

/* ------------------------------------------------------------------------ */
/* Stepping                                                                 */

static int step_failed(sim_run *r) {
  fprintf(stderr, "drivegraph sim: step %ld (from t = %g s) failed:\n", r->steps,
          (double)(r->steps - 1) * r->dt);
  print_error(stderr, dg_sim_last_error(r->sim), r->o->graph);
  return EXIT_INVALID;
}

/* A run expected to take longer than this (wall time) is announced. */
#define LONG_RUN_SECONDS 10.0
/* The per-step time is measured over the first steps: this long, or this
 * many steps, whichever comes first. */
#define ESTIMATE_SECONDS 0.2
#define ESTIMATE_STEPS 20000
/* On a terminal, the progress line appears after this long and moves this
 * often (by the wall clock, whatever the output interval). */
#define PROGRESS_AFTER 1.0
#define PROGRESS_EVERY 0.5

static void progress_clear(sim_run *r) {
  if (r->progress_shown)
    fprintf(stderr, "\r%70s\r", "");
  r->progress_shown = false;
}

/* "1.5 s", "12 min", "3.2 h", "2.1 days". */
static void format_duration(double s, char *buf, size_t n) {
  if (s < 60)
    snprintf(buf, n, "%.2g s", s);
  else if (s < 3600)
    snprintf(buf, n, "%.0f min", s / 60);
  else if (s < 86400)
    snprintf(buf, n, "%.2g h", s / 3600);
  else
    snprintf(buf, n, "%.2g days", s / 86400);
}

/* After the first steps: the whole run's wall time from their per-step
 * time, and a note when it is long. */
static void estimate(sim_run *r, double elapsed) {
  r->estimated = true;
  double per_step = elapsed / (double)r->steps;
  double total = per_step * (double)r->total_steps;
  /* the clock is read about 20 times a second from now on */
  long stride = per_step > 0 ? (long)(0.05 / per_step) : 1024;
  r->clock_stride = stride < 1 ? 1 : stride;
  if (total < LONG_RUN_SECONDS)
    return;
  char est[32];
  format_duration(total, est, sizeof est);
  progress_clear(r);
  fprintf(stderr,
          "drivegraph sim: note: %ld steps (%g s at dt %g s) at about %.2g us a step: this "
          "run takes %sabout %s (Ctrl-C stops it and writes no file)\n",
          r->total_steps, r->duration, r->dt, 1e6 * per_step,
          r->ps || r->drv ? "up to " : "", est);
}

/* Progress on a terminal: after the first second of wall time, every half
 * second, on one line that is cleared at the end. */
static void progress(sim_run *r, double now, double start) {
  if (!r->tty || now - start < PROGRESS_AFTER || now - r->last_progress < PROGRESS_EVERY)
    return;
  double t = (double)r->steps * r->dt;
  double left = (now - start) / (double)r->steps * (double)(r->total_steps - r->steps);
  char eta[32];
  format_duration(left, eta, sizeof eta);
  fprintf(stderr, "\r  t = %.4g s / %g s  (%.0f%%), about %s left   ", t, r->duration,
          100.0 * t / r->duration, eta);
  r->progress_shown = true;
  r->last_progress = now;
}

/* The clock is read every clock_stride steps (not at output rows: with a
 * long output interval the line would not move). */
static void clock_check(sim_run *r, double start) {
  double now = now_seconds();
  r->next_clock = r->steps + r->clock_stride;
  if (!r->estimated && (now - start >= ESTIMATE_SECONDS || r->steps >= ESTIMATE_STEPS))
    estimate(r, now - start);
  progress(r, now, start);
}

static bool should_stop(sim_run *r) {
  if (r->drv && dg_driver_should_stop(r->drv)) {
    snprintf(r->stop_reason, sizeof r->stop_reason, "stop condition of %s met", r->o->scenario);
    return true;
  }
  return r->o->preset && preset_done(r);
}

/* A run stopped by SIGINT or SIGTERM: what the user is told before the
 * process ends by that signal (the outputs' temporary files removed). */
static void interrupted(sim_run *r, int sig) {
  char left[256];
  progress_clear(r);
  outputs_left(r, left, sizeof left);
  fprintf(stderr, "drivegraph sim: stopped by %s at t = %g s of %g s (step %ld of %ld); %s\n",
          out_signal_name(sig), (double)r->steps * r->dt, r->duration, r->steps,
          r->total_steps, left);
  out_die_by_signal(sig);
}

/* A CSV that cannot be written stops the run (the rest could not be
 * written either). */
static int output_lost(sim_run *r) {
  progress_clear(r);
  out_close(r->csv_out); /* "cannot write OUT: REASON" */
  char left[256];
  outputs_left(r, left, sizeof left);
  fprintf(stderr, "drivegraph sim: run stopped at t = %g s of %g s; %s\n",
          (double)r->steps * r->dt, r->duration, left);
  return EXIT_INVALID;
}

/* Steps to the duration, the stop condition or the preset's goal. Inputs are
 * applied at the start of each step, at a time computed from the step count;
 * the summary samples after every step. The clock is read only around runs
 * of steps between rows and every clock_stride steps, so the ns per step
 * leaves out the output and costs a few clock reads per row (it includes
 * the summary's few signal reads). SIGINT and SIGTERM set a flag that is
 * read after every step. */
static int sim_loop(sim_run *r) {
  double start = now_seconds();
  r->locked_throughout = true;
  r->clock_stride = 64; /* until the per-step time is known */
  r->next_clock = r->clock_stride;
  output_row(r, 0);
  summary_sample(&r->sum, 0.0);
  r->stopped = should_stop(r);
  double seg = now_seconds();
  out_poll_signals(true);
  r->first_step_cpu = process_cpu_seconds(); /* the first step follows at once */
  for (long k = 0; k < r->total_steps && !r->stopped; k++) {
    double t = (double)k * r->dt;
    if (r->drv)
      dg_driver_apply(r->drv, t);
    else if (r->o->preset)
      preset_apply(r, t);
    int rc = dg_sim_step(r->sim, r->dt);
    r->steps = k + 1;
    if (rc != DG_OK) {
      out_poll_signals(false);
      r->step_seconds += now_seconds() - seg;
      r->wall = now_seconds() - start;
      progress_clear(r);
      return step_failed(r);
    }
    summary_sample(&r->sum, (double)r->steps * r->dt);
    /* a drivetrain the blocks' decisions lock from the first step to the
     * end (a planetary with two members held) is named after the run */
    if (r->locked_throughout && dg_sim_dof_count(r->sim) > 0)
      r->locked_throughout = false;
    r->stopped = should_stop(r);
    if (out_signal_caught())
      interrupted(r, out_signal_caught());
    if (r->steps % r->steps_per_row == 0) {
      double now = now_seconds();
      r->step_seconds += now - seg;
      output_row(r, r->steps);
      if (r->csv_out && out_error(r->csv_out)) {
        out_poll_signals(false);
        return output_lost(r);
      }
      seg = now_seconds();
    }
    if (r->steps >= r->next_clock)
      clock_check(r, start);
  }
  out_poll_signals(false);
  char by[DG_ERROR_TEXT_LEN];
  if (r->steps > 0 && r->locked_throughout && dg_sim_locked_by(r->sim, by, sizeof by))
    fprintf(stderr,
            "drivegraph sim: warning: from t = %g s to the end the drivetrain was locked by %s: "
            "no shaft could turn (0 degrees of freedom)\n",
            r->dt, by);
  if (r->steps % r->steps_per_row != 0)
    r->step_seconds += now_seconds() - seg;
  r->wall = now_seconds() - start;
  progress_clear(r);
  if (!r->stopped)
    snprintf(r->stop_reason, sizeof r->stop_reason, "%s %g s reached",
             r->o->preset ? "time limit" : "duration", r->duration);
  return EXIT_OK;
}

/* The summary: on stdout, checked (a full disk or a closed pipe is an
 * error naming stdout); on stderr when the CSV goes to stdout. */
static int print_summary(sim_run *r) {
  double ns = r->steps > 0 ? 1e9 * r->step_seconds / (double)r->steps : 0;
  summary_run run = {
      .graph_path = r->o->graph,
      .graph_name = dg_graph_name(r->graph),
      .preset = r->o->preset ? preset_names[r->o->preset] : NULL,
      .scenario = r->o->scenario,
      .stop_reason = r->stop_reason,
      .steps = r->steps,
      .dt = r->dt,
      .duration = r->duration,
      .final_time = (double)r->steps * r->dt,
      .wall = r->wall,
      .ns_per_step = ns,
      .first_step_cpu = r->first_step_cpu,
      .cols = r->cols,
      .ncols = r->ncols,
      .csv = r->o->csv,
      .csv_rows = r->rows,
      .interval = r->interval,
      .plot = r->o->plot,
  };
  out_file *out = r->csv_on_stdout ? NULL : out_open("sim", "-");
  if (!r->csv_on_stdout && !out)
    return EXIT_INVALID;
  FILE *f = out ? out_stream(out) : stderr;
  int rc = EXIT_OK;
  if (r->o->json) {
    if (summary_print_json(&r->sum, &run, f) != 0) {
      out_of_memory();
      rc = EXIT_INVALID;
    }
  } else {
    summary_print_text(&r->sum, &run, f);
  }
  if (out && out_commit(out) != 0) /* "cannot write to stdout: REASON" */
    rc = EXIT_INVALID;
  return rc;
}

static void sim_free(sim_run *r) {
  discard_outputs(r);
  plot_trace_free(r->trace);
  if (r->have_sum)
    summary_free(&r->sum);
  free(r->cols);
  dg_driver_free(r->drv);
  dg_sim_free(r->sim);
  dg_scenario_free(r->scn);
  dg_graph_free(r->graph);
  dg_preset_free(r->ps);
  dg_registry_free(r->reg);
}

static int sim_run_all(const command *cmd, sim_run *r) {
  int rc = sim_load(r);
  if (rc == EXIT_OK)
    rc = sim_timing(cmd, r);
  if (rc == EXIT_OK)
    rc = sim_start(r);
  if (rc == EXIT_OK)
    rc = select_columns(r);
  if (rc == EXIT_OK) {
    if (summary_init(&r->sum, r->sim) == 0) {
      r->have_sum = true;
      if (r->ps)
        r->sum.rest_speed = dg_preset_rest_speed(r->ps);
    } else {
      out_of_memory();
      rc = EXIT_INVALID;
    }
  }
  if (rc == EXIT_OK && r->o->csv)
    rc = csv_open(r);
  if (rc == EXIT_OK && r->o->plot)
    rc = plot_open(r);
  if (rc == EXIT_OK)
    rc = sim_loop(r);
  if (rc == EXIT_OK)
    rc = outputs_finish(r);
  if (rc == EXIT_OK)
    rc = print_summary(r);
  if (rc == EXIT_OK && r->o->compile)
    fprintf(stderr, "drivegraph sim: --compile: the compiled stage ran %ld of the run's %ld RK4 "
                    "stages\n",
            dg_sim_compiled_stage_count(r->sim), dg_sim_stage_count(r->sim));
  if (rc == EXIT_OK && r->o->compile && dg_sim_compiled_from_cache(r->sim) == 1)
    fprintf(stderr, "drivegraph sim: --compile: its unit was loaded from the cache on disk (no "
                    "compiler run)\n");
  return rc;
}

static int cmd_sim(const command *cmd, int argc, char **argv) {
  sim_opts o;
  int rc = sim_parse_args(cmd, argc, argv, &o);
  if (rc == EXIT_OK) {
    /* from here on, SIGINT and SIGTERM leave no temporary file */
    out_catch_signals(cmd->name);
    sim_run r = {.o = &o, .tty = isatty(STDERR_FILENO) == 1};
    rc = sim_run_all(cmd, &r);
    sim_free(&r);
  }
  options_free(cmd, &o);
  return rc == HELP_SHOWN ? EXIT_OK : rc;
}

const command dg_cmd_sim = {
    .name = "sim",
    .operands = "GRAPH",
    .summary = "Simulate a graph, driven by a scenario file or a preset driver.",
    .help =
        "Steps the simulation with RK4 until the duration, the scenario's stop condition or\n"
        "the preset's goal, writes signals to a CSV file, draws a plot and prints a summary:\n"
        "0-100 km/h and 0-400 m times, top speed, time and distance to rest, shift log,\n"
        "peak wheel slip, energy audit, wall time.\n"
        "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = sim_options,
    .footer = "Exit status: 0 ok; 1 invalid input, a step size RK4 cannot take, a failed\n"
              "simulation or an output that could not be written (the message names the\n"
              "file and the reason); 2 usage error, or more than --max-steps steps. A run\n"
              "stopped by SIGINT or SIGTERM says at which time and ends by that signal.\n"
              "A failed or stopped run leaves no CSV or plot behind: files are written\n"
              "through a temporary file renamed at the end; devices, FIFOs and '-' are\n"
              "written in place, never replaced (docs/output.md).\n",
    .run = cmd_sim,
};
