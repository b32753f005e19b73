/* drivegraph cycle: a graph driven over a drive cycle (a built-in one —
 * udds, hwfet, us06, wltc3b — or a CSV file), forward with its driver block
 * or backward with the body on the trace (lib/run/cycle.c), and the report:
 * the EPA trace tolerance, fuel, electricity, the charge balance, distance
 * and every block's energies, as text or JSON, a plot and a CSV. */
#include "bench_timing.h"
#include "output.h"
#include "plot.h"
#include "plugin.h"
#include "tool.h"

#include <drivegraph/cycle.h>
#include <drivegraph/drivegraph.h>

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DG_CYCLE_DIR
#define DG_CYCLE_DIR "/usr/local/share/drivegraph/cycles"
#endif

#define KMH_PER_MS 3.6

typedef struct cycle_opts {
  const char *cycle;
  bool json;
  bool backward;
  bool iterate;
  const char *plot;
  const char *csv;
  double dt;
  double interval;
  opt_list plugins;
  double max_steps;
} cycle_opts;

static bool parse_plot(const char *value, void *dest, char *why, size_t size) {
  if (plot_format_of(value) == PLOT_UNKNOWN) {
    snprintf(why, size, "expected a file name ending in .png or .svg");
    return false;
  }
  *(const char **)dest = value;
  return true;
}

static const option_def cycle_options[] = {
    {.name = "cycle", .short_name = 'c', OPT_STRING_AT(cycle_opts, cycle), .arg = "NAME|FILE",
     .help = "the drive cycle: udds, hwfet, us06, wltc3b (shipped\n"
             "with drivegraph) or a CSV file (cycSecs,cycMps[,cycGrade])"},
    {.name = "backward", OPT_FLAG_AT(cycle_opts, backward),
     .help = "the body follows the trace exactly (a prescribed speed)\n"
             "while the driver works the pedals from the effort the\n"
             "trace needs; reports the trace enforcement"},
    {.name = "iterate", OPT_FLAG_AT(cycle_opts, iterate),
     .help = "with --backward: take each step again (up to 5 times)\n"
             "with the effort that makes the prescription's work over\n"
             "it 0, so steps as long as the cycle's points will do"},
    {.name = "json", OPT_FLAG_AT(cycle_opts, json),
     .help = "print the report as one JSON object instead of text"},
    {.name = "plot", OPT_CALL_AT(cycle_opts, plot, const char *), .arg = "FILE",
     .parse = parse_plot,
     .help = "draw the trace and the speed, the pedals, the state of\n"
             "charge, the fuel rate and the machine speeds over time;\n"
             "FILE.png or FILE.svg"},
    {.name = "csv", OPT_STRING_AT(cycle_opts, csv), .arg = "OUT",
     .help = "write 't,<block>.<signal>,...' rows every --interval"},
    {.name = "interval", OPT_SECONDS_AT(cycle_opts, interval), .arg = "s",
     .help = "time between the CSV's and the plot's rows (default 1)"},
    {.name = "dt", OPT_SECONDS_AT(cycle_opts, dt), .arg = "s",
     .help = "step size (default 0.001)"},
    OPT_PLUGIN_AT(cycle_opts, plugins),
    OPT_MAX_STEPS_AT(cycle_opts, max_steps),
    {0},
};

/* ------------------------------------------------------------------------ */
/* Finding the cycle                                                        */

/* A built-in cycle's file: $DRIVEGRAPH_CYCLE_DIR, the build tree's
 * data/cycles beside this executable, the installed directory. */
static bool find_builtin(int i, char *path, size_t size, char *tried, size_t tried_size) {
  return find_shipped_file("DRIVEGRAPH_CYCLE_DIR", "data/cycles", DG_CYCLE_DIR,
                           dg_cycle_builtin_file(i), path, size, tried, tried_size);
}

/* "udds, hwfet, us06, wltc3b" */
static void builtin_list(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < dg_cycle_builtin_count() && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
                             dg_cycle_builtin_name(i));
}

static bool looks_like_file(const char *arg) {
  size_t n = strlen(arg);
  return strchr(arg, '/') || (n > 4 && strcmp(arg + n - 4, ".csv") == 0) ||
         access(arg, F_OK) == 0;
}

/* Loads the cycle named by --cycle; NULL after a message (*rc set). */
static dg_cycle *load_cycle(const command *cmd, const char *arg, char *label, size_t size,
                            int *rc) {
  dg_error err;
  int i = dg_cycle_builtin_find(arg);
  if (i >= 0) {
    char path[PATH_MAX + 64], tried[3 * PATH_MAX + 64];
    if (!find_builtin(i, path, sizeof path, tried, sizeof tried)) {
      fprintf(stderr, "drivegraph %s: the built-in cycle %s is not installed (looked for %s; "
                      "DRIVEGRAPH_CYCLE_DIR names its directory)\n",
              cmd->name, arg, esc(tried));
      *rc = EXIT_INVALID;
      return NULL;
    }
    dg_cycle *c = dg_cycle_load_file(path, &err);
    if (!c) {
      print_error(stderr, &err, path);
      *rc = EXIT_INVALID;
    }
    snprintf(label, size, "%s", arg);
    return c;
  }
  if (!looks_like_file(arg)) {
    char names[128];
    builtin_list(names, sizeof names);
    const char *cands[16];
    int n = dg_cycle_builtin_count();
    for (int k = 0; k < n && k < 16; k++)
      cands[k] = dg_cycle_builtin_name(k);
    const char *close = dg_suggest(arg, cands, n < 16 ? n : 16);
    if (close)
      *rc = usage_error(cmd, "--cycle: unknown cycle '%s'; did you mean '%s'? (the cycles: %s, "
                             "or a CSV file)",
                        esc(arg), close, names);
    else
      *rc = usage_error(cmd, "--cycle: unknown cycle '%s' (the cycles: %s, or a CSV file)",
                        esc(arg), names);
    return NULL;
  }
  dg_cycle *c = dg_cycle_load_file(arg, &err);
  if (!c) {
    print_error(stderr, &err, arg);
    *rc = EXIT_INVALID;
  }
  snprintf(label, size, "%s", arg);
  return c;
}

/* ------------------------------------------------------------------------ */
/* Outputs                                                                  */

typedef struct cycle_cli {
  const cycle_opts *o;
  const char *graph_path;
  const char *cycle_label;
  const dg_cycle *cycle;
  dg_cycle_run *run;
  dg_sim *sim;
  long steps_per_row;
  double interval;
  out_file *csv_out, *plot_out;
  FILE *csv;
  plot_trace *trace;
  double wall, cpu;
} cycle_cli;

static bool has_signal(const dg_sim *sim, const char *name) {
  return dg_sim_signal_find(sim, name) >= 0;
}

/* Appends "+name" (or ",name" to start a panel) when the signal exists. */
static void add_line(const dg_sim *sim, char *list, size_t size, bool new_panel,
                     const char *block, const char *signal) {
  char name[512];
  snprintf(name, sizeof name, "%s.%s", block, signal);
  if (!has_signal(sim, name))
    return;
  size_t used = strlen(list);
  snprintf(list + used, size - used, "%s%s", used == 0 ? "" : new_panel ? "," : "+", name);
}

/* The plot's panels: trace and speed, the pedals, the state of charge, the
 * fuel rate, the machines' speeds. */
static void plot_list(const cycle_cli *c, char *list, size_t size) {
  const dg_graph *g = dg_cycle_run_graph(c->run);
  const char *drv = dg_cycle_run_driver(c->run);
  list[0] = '\0';
  add_line(c->sim, list, size, true, drv, "target_kmh");
  add_line(c->sim, list, size, false, drv, "speed_kmh");
  add_line(c->sim, list, size, true, drv, "throttle");
  add_line(c->sim, list, size, false, drv, "brake");
  const char *groups[][2] = {{"battery", "soc"}, {"engine", "fuel_rate"}, {"engine", "rpm"},
                             {"motor", "rpm"}};
  for (size_t k = 0; k < sizeof groups / sizeof groups[0]; k++) {
    bool first = true;
    for (int i = 0; i < dg_graph_block_count(g); i++)
      if (strcmp(dg_graph_block_type(g, i), groups[k][0]) == 0) {
        size_t before = strlen(list);
        add_line(c->sim, list, size, first, dg_graph_block_id(g, i), groups[k][1]);
        if (strlen(list) != before)
          first = false;
      }
  }
}

static int outputs_open(cycle_cli *c) {
  if (c->o->csv) {
    c->csv_out = out_open("cycle", c->o->csv);
    if (!c->csv_out)
      return EXIT_INVALID;
    if (out_kind_of(c->csv_out) == OUT_STDOUT && c->o->json) {
      fprintf(stderr, "drivegraph cycle: --csv %s and --json would both write to stdout: give "
                      "--csv a file\n", esc(c->o->csv));
      return EXIT_USAGE;
    }
    c->csv = out_stream(c->csv_out);
    fputs("t", c->csv);
    for (int i = 0; i < dg_sim_signal_count(c->sim); i++)
      fprintf(c->csv, ",%s", dg_sim_signal_name(c->sim, i));
    fputc('\n', c->csv);
  }
  if (c->o->plot) {
    char list[2048], why[256];
    plot_list(c, list, sizeof list);
    long rows = dg_cycle_run_total_steps(c->run) / c->steps_per_row + 2;
    c->trace = plot_trace_new_list(c->sim, list, rows, why, sizeof why);
    if (!c->trace) {
      fprintf(stderr, "drivegraph cycle: --plot %s: %s\n", esc(c->o->plot), esc(why));
      return EXIT_INVALID;
    }
    c->plot_out = out_open("cycle", c->o->plot);
    if (!c->plot_out)
      return EXIT_INVALID;
  }
  return EXIT_OK;
}

static void output_row(cycle_cli *c, long step) {
  double t = (double)(step / c->steps_per_row) * c->interval;
  if (c->trace)
    plot_trace_record(c->trace, t);
  if (!c->csv)
    return;
  fprintf(c->csv, "%.10g", t);
  for (int i = 0; i < dg_sim_signal_count(c->sim); i++)
    fprintf(c->csv, ",%.10g", dg_sim_signal(c->sim, i));
  fputc('\n', c->csv);
}

static void outputs_discard(cycle_cli *c) {
  out_discard(c->csv_out);
  out_discard(c->plot_out);
  c->csv_out = c->plot_out = NULL;
}

static int outputs_finish(cycle_cli *c) {
  int rc = EXIT_OK;
  if (c->trace) {
    char why[256], sub[512];
    snprintf(sub, sizeof sub, "%s over %s (%s)", esc(c->graph_path), esc(c->cycle_label),
             c->o->backward ? "backward: the body on the trace" : "forward: the driver");
    const char *name = dg_graph_name(dg_cycle_run_graph(c->run));
    plot_labels lab = {.title = name && *name ? name : c->graph_path, .subtitle = sub,
                       .t_100 = NAN};
    char *img = NULL;
    size_t len = 0;
    plot_format fmt = plot_format_of(c->o->plot);
    if (plot_trace_render(c->trace, &lab, fmt, &img, &len, why, sizeof why) != 0) {
      fprintf(stderr, "drivegraph cycle: cannot draw %s: %s\n", esc(c->o->plot), esc(why));
      rc = EXIT_INVALID;
    } else {
      out_write(c->plot_out, img, len);
      if (out_close(c->plot_out) != 0)
        rc = EXIT_INVALID;
    }
    free(img);
  }
  if (rc == EXIT_OK && c->csv_out && out_close(c->csv_out) != 0)
    rc = EXIT_INVALID;
  c->csv = NULL;
  if (rc != EXIT_OK) {
    outputs_discard(c);
    return rc;
  }
  int c1 = out_commit(c->csv_out), c2 = out_commit(c->plot_out);
  c->csv_out = c->plot_out = NULL;
  return c1 == 0 && c2 == 0 ? EXIT_OK : EXIT_INVALID;
}

/* ------------------------------------------------------------------------ */
/* The report                                                               */

static const char *mode_text(const dg_cycle_report *r) {
  return r->backward ? "backward (the body follows the trace exactly; the driver works the pedals)"
                     : "forward (the driver follows the trace)";
}

static void print_trace_text(const dg_cycle_report *r, FILE *out) {
  const dg_trace_check *t = &r->trace;
  fprintf(out, "trace:       EPA tolerance (%.0f mph within %.0f s): ", t->speed_tol / 0.44704,
          t->time_tol);
  if (t->violations == 0) {
    fprintf(out, "met at every step (%ld)\n", t->samples);
    return;
  }
  fprintf(out, "%ld of %ld steps outside, %.3f s in all; worst at %.3f s: %.2f km/h, band "
               "%.2f..%.2f km/h (%.2f km/h outside)\n",
          t->violations, t->samples, t->violation_time, t->worst_time,
          KMH_PER_MS * t->worst_speed, KMH_PER_MS * t->worst_lo, KMH_PER_MS * t->worst_hi,
          KMH_PER_MS * t->worst_excess);
}

static void print_blocks_text(const dg_cycle_run *run, FILE *out) {
  dg_sim *sim = dg_cycle_run_sim((dg_cycle_run *)run);
  const dg_graph *g = dg_cycle_run_graph(run);
  fprintf(out, "blocks:      energy since the start (J; work: net shaft work, + delivered)\n");
  fprintf(out, "  %-14s %-16s %14s %14s %14s %14s %14s\n", "block", "type", "work", "fuel",
          "stored", "electric", "heat");
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) != DG_OK)
      continue;
    if (!e.ledger && e.work == 0.0)
      continue;
    fprintf(out, "  %-14s %-16s %14.6g", esc(dg_graph_block_id(g, i)),
            dg_graph_block_type(g, i), e.work);
    if (e.ledger)
      fprintf(out, " %14.6g %14.6g %14.6g %14.6g\n", e.fuel, e.stored, e.electric, e.heat);
    else
      fputc('\n', out);
  }
}

static void print_text(const cycle_cli *c, const dg_cycle_report *r, FILE *out) {
  const char *name = dg_graph_name(dg_cycle_run_graph(c->run));
  fprintf(out, "graph:       %s%s%s%s\n", esc(c->graph_path), name && *name ? " (" : "",
          name && *name ? esc(name) : "", name && *name ? ")" : "");
  fprintf(out, "cycle:       %s, %.0f s, %.3f km; %s; dt %g s, %ld steps", esc(c->cycle_label),
          dg_cycle_duration(c->cycle), dg_cycle_distance(c->cycle) / 1000.0, mode_text(r), r->dt,
          r->steps);
  if (r->steps_tried != r->steps)
    fprintf(out, " (%ld tried)", r->steps_tried);
  fputc('\n', out);
  fprintf(out, "distance:    %.3f km (the trace: %.3f km)\n", r->distance / 1000.0,
          r->trace_distance / 1000.0);
  print_trace_text(r, out);
  if (r->engines)
    fprintf(out, "fuel:        %.1f g, %.4f L: %.3f L/100 km, %.2f mpg (US)\n", 1e3 * r->fuel_kg,
            r->fuel_L, r->fuel_L_per_100km, r->mpg);
  else
    fprintf(out, "fuel:        none (no engine with a fuel model)\n");
  if (r->batteries) {
    fprintf(out, "electricity: %.1f Wh from the batteries (%.1f Wh at their terminals): %.1f Wh/km"
                 ", %.2f kWh/100 km\n",
            r->battery_J / 3600.0, r->battery_terminal_J / 3600.0, r->electricity_Wh_per_km,
            r->electricity_Wh_per_km / 10.0);
    fprintf(out, "             state of charge %.4f -> %.4f (min %.4f, max %.4f, swing %.4f)\n",
            r->soc_start, r->soc_end, r->soc_min, r->soc_max, r->soc_max - r->soc_min);
  } else {
    fprintf(out, "electricity: none (no battery)\n");
  }
  if (r->engines && r->batteries && isfinite(r->fuel_equivalent_kg))
    fprintf(out, "charge balance: net battery energy %.1f Wh = %.2f %% of the fuel's energy%s; "
                 "as fuel at the engine's mean efficiency %.3f: %+.1f g, corrected %.3f L/100 km\n",
            r->battery_J / 3600.0, 100.0 * r->battery_share,
            r->battery_share <= 0.01 ? " (balanced: within SAE J1711's 1 %)" : "",
            r->engine_work_J / r->fuel_J, 1e3 * r->fuel_equivalent_kg,
            r->fuel_corrected_L_per_100km);
  fprintf(out, "energy:      (J)\n");
  if (r->engines)
    fprintf(out, "  fuel burnt            %14.6g\n", r->fuel_J);
  if (r->batteries)
    fprintf(out, "  battery given up      %14.6g\n", r->battery_J);
  fprintf(out, "  regenerated           %14.6g  (the machines' braking work)\n", r->regen_J + 0.0);
  fprintf(out, "  friction brakes       %14.6g  (the wheels' work: brakes and tyre slip)\n",
          r->friction_brake_J);
  fprintf(out, "  meshes                %14.6g  (gear efficiency losses)\n",
          -r->ledger.efficiency_loss);
  fprintf(out, "  heat in converters    %14.6g  (engines, machines, batteries, loads)\n",
          r->ledger.heat);
  fprintf(out, "  road                  %14.6g  (the vehicle's work: road load and grade)\n",
          -r->road_J);
  if (isfinite(r->drag_J))
    fprintf(out, "    drag %.6g, rolling %.6g, grade %.6g\n", r->drag_J, r->rolling_J, r->grade_J);
  fprintf(out, "  body kinetic energy   %14.6g  (gained; %.6g where it sped up)\n", r->kinetic_J,
          r->accel_J);
  if (r->backward)
    fprintf(out, "  trace enforcement     %14.6g in, %.6g out (peak %.1f N): the prescription's "
                 "work\n",
            r->enforcement_in_J, r->enforcement_out_J, r->enforcement_peak_N);
  fprintf(out, "  balance error         %14.6g  (%.2g of the energy in)\n",
          r->ledger.balance_error,
          r->ledger.energy_in > 0.0 ? fabs(r->ledger.balance_error) / r->ledger.energy_in : 0.0);
  print_blocks_text(c->run, out);
  fprintf(out, "time:        %.4f s CPU (%.0f ns per step; outputs included), %.3f s wall\n",
          c->cpu, r->steps ? 1e9 * c->cpu / (double)r->steps : 0.0, c->wall);
}

/* A number, or null when not finite. */
static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *trace_json(const dg_trace_check *t) {
  json_t *o = json_object();
  json_object_set_new(o, "speed_tolerance_kmh", num(KMH_PER_MS * t->speed_tol));
  json_object_set_new(o, "time_tolerance_s", num(t->time_tol));
  json_object_set_new(o, "samples", json_integer(t->samples));
  json_object_set_new(o, "violations", json_integer(t->violations));
  json_object_set_new(o, "violation_time_s", num(t->violation_time));
  json_object_set_new(o, "worst_time_s", num(t->worst_time));
  json_object_set_new(o, "worst_excess_kmh", num(KMH_PER_MS * t->worst_excess));
  json_object_set_new(o, "worst_speed_kmh", num(KMH_PER_MS * t->worst_speed));
  return o;
}

static json_t *blocks_json(const dg_cycle_run *run) {
  dg_sim *sim = dg_cycle_run_sim((dg_cycle_run *)run);
  const dg_graph *g = dg_cycle_run_graph(run);
  json_t *o = json_object();
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) != DG_OK)
      continue;
    json_t *b = json_object();
    json_object_set_new(b, "type", json_string(dg_graph_block_type(g, i)));
    json_object_set_new(b, "work_J", num(e.work));
    if (e.ledger) {
      json_object_set_new(b, "fuel_J", num(e.fuel));
      json_object_set_new(b, "stored_J", num(e.stored));
      json_object_set_new(b, "electric_J", num(e.electric));
      json_object_set_new(b, "heat_J", num(e.heat));
    }
    json_object_set_new(o, dg_graph_block_id(g, i), b);
  }
  return o;
}

static json_t *report_json(const cycle_cli *c, const dg_cycle_report *r) {
  json_t *o = json_object();
  json_object_set_new(o, "graph", json_string(c->graph_path));
  json_object_set_new(o, "cycle", json_string(c->cycle_label));
  json_object_set_new(o, "mode", json_string(r->backward ? "backward" : "forward"));
  json_object_set_new(o, "driver", json_string(dg_cycle_run_driver(c->run)));
  json_object_set_new(o, "vehicle", json_string(dg_cycle_run_vehicle(c->run)));
  json_object_set_new(o, "dt_s", num(r->dt));
  json_object_set_new(o, "steps", json_integer(r->steps));
  json_object_set_new(o, "steps_tried", json_integer(r->steps_tried));
  json_object_set_new(o, "time_s", num(r->time));
  json_object_set_new(o, "cycle_duration_s", num(dg_cycle_duration(c->cycle)));
  json_object_set_new(o, "distance_m", num(r->distance));
  json_object_set_new(o, "trace_distance_m", num(r->trace_distance));
  json_object_set_new(o, "trace", trace_json(&r->trace));
  json_t *f = json_null();
  if (r->engines) {
    f = json_object();
    json_object_set_new(f, "fuel_g", num(1e3 * r->fuel_kg));
    json_object_set_new(f, "fuel_L", num(r->fuel_L));
    json_object_set_new(f, "L_per_100km", num(r->fuel_L_per_100km));
    json_object_set_new(f, "mpg", num(r->mpg));
    json_object_set_new(f, "fuel_J", num(r->fuel_J));
    json_object_set_new(f, "engine_work_J", num(r->engine_work_J));
  }
  json_object_set_new(o, "fuel", f);
  json_t *e = json_null();
  if (r->batteries) {
    e = json_object();
    json_object_set_new(e, "battery_J", num(r->battery_J));
    json_object_set_new(e, "terminal_J", num(r->battery_terminal_J));
    json_object_set_new(e, "Wh_per_km", num(r->electricity_Wh_per_km));
    json_object_set_new(e, "soc_start", num(r->soc_start));
    json_object_set_new(e, "soc_end", num(r->soc_end));
    json_object_set_new(e, "soc_min", num(r->soc_min));
    json_object_set_new(e, "soc_max", num(r->soc_max));
    json_object_set_new(e, "soc_swing", num(r->soc_max - r->soc_min));
  }
  json_object_set_new(o, "electricity", e);
  json_t *cb = json_null();
  if (r->engines && r->batteries) {
    cb = json_object();
    json_object_set_new(cb, "battery_share", num(r->battery_share));
    json_object_set_new(cb, "balanced", json_boolean(r->battery_share <= 0.01));
    json_object_set_new(cb, "fuel_equivalent_g", num(1e3 * r->fuel_equivalent_kg));
    json_object_set_new(cb, "corrected_L_per_100km", num(r->fuel_corrected_L_per_100km));
  }
  json_object_set_new(o, "charge_balance", cb);
  json_t *en = json_object();
  json_object_set_new(en, "fuel_J", num(r->fuel_J));
  json_object_set_new(en, "battery_J", num(r->battery_J));
  json_object_set_new(en, "regen_J", num(r->regen_J));
  json_object_set_new(en, "friction_brake_J", num(r->friction_brake_J));
  json_object_set_new(en, "mesh_loss_J", num(-r->ledger.efficiency_loss));
  json_object_set_new(en, "heat_J", num(r->ledger.heat));
  json_object_set_new(en, "road_J", num(-r->road_J));
  json_object_set_new(en, "drag_J", num(r->drag_J));
  json_object_set_new(en, "rolling_J", num(r->rolling_J));
  json_object_set_new(en, "grade_J", num(r->grade_J));
  json_object_set_new(en, "kinetic_J", num(r->kinetic_J));
  json_object_set_new(en, "accel_J", num(r->accel_J));
  json_object_set_new(en, "energy_in_J", num(r->ledger.energy_in));
  json_object_set_new(en, "balance_error_J", num(r->ledger.balance_error));
  json_object_set_new(en, "balance_error_relative",
                      num(r->ledger.energy_in > 0.0
                              ? fabs(r->ledger.balance_error) / r->ledger.energy_in
                              : NAN));
  json_object_set_new(en, "blocks", blocks_json(c->run));
  json_object_set_new(o, "energy", en);
  json_t *b = json_null();
  if (r->backward) {
    b = json_object();
    json_object_set_new(b, "enforcement_in_J", num(r->enforcement_in_J));
    json_object_set_new(b, "enforcement_out_J", num(r->enforcement_out_J));
    json_object_set_new(b, "enforcement_peak_N", num(r->enforcement_peak_N));
  }
  json_object_set_new(o, "backward", b);
  json_object_set_new(o, "wall_time_s", num(c->wall));
  json_object_set_new(o, "cpu_time_s", num(c->cpu));
  json_object_set_new(o, "ns_per_step", num(r->steps ? 1e9 * c->cpu / (double)r->steps : NAN));
  return o;
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */

static int run_cycle(cycle_cli *c) {
  int rc = outputs_open(c);
  if (rc != EXIT_OK) {
    outputs_discard(c);
    return rc;
  }
  long total = dg_cycle_run_total_steps(c->run);
  output_row(c, 0);
  double t0 = now_seconds(), c0 = bench_cpu_seconds();
  out_poll_signals(true);
  for (long k = 1; k <= total; k++) {
    if (dg_cycle_run_step(c->run) != DG_OK) {
      out_poll_signals(false);
      fprintf(stderr, "drivegraph cycle: step %ld (from t = %g s) failed:\n", k,
              (double)(k - 1) * dg_cycle_run_dt(c->run));
      print_error(stderr, dg_sim_last_error(c->sim), c->graph_path);
      outputs_discard(c);
      return EXIT_INVALID;
    }
    if (k % c->steps_per_row == 0)
      output_row(c, k);
    int sig = out_signal_caught();
    if (sig) {
      fprintf(stderr, "drivegraph cycle: stopped by %s at t = %g s; nothing was written\n",
              out_signal_name(sig), dg_sim_time(c->sim));
      out_die_by_signal(sig);
    }
  }
  out_poll_signals(false);
  c->wall = now_seconds() - t0;
  c->cpu = bench_cpu_seconds() - c0;
  rc = outputs_finish(c);
  if (rc != EXIT_OK)
    return rc;
  dg_cycle_report r;
  dg_cycle_run_report(c->run, &r);
  if (c->o->json) {
    json_t *o = report_json(c, &r);
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(o);
    if (!text) {
      fprintf(stderr, "drivegraph cycle: out of memory\n");
      return EXIT_INVALID;
    }
    printf("%s\n", text);
    free(text);
  } else {
    print_text(c, &r, stdout);
    if (c->o->csv)
      printf("csv:         %s\n", esc(c->o->csv));
    if (c->o->plot)
      printf("plot:        %s\n", esc(c->o->plot));
  }
  return EXIT_OK;
}

static int cmd_cycle(const command *cmd, int argc, char **argv) {
  cycle_opts o = {.interval = 1.0, .max_steps = DEFAULT_MAX_STEPS};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(cmd, "no graph file given");
  if (rc == EXIT_OK && args.n > 1)
    rc = usage_error(cmd, "one graph file expected (got '%s' too)", esc(args.v[1]));
  if (rc == EXIT_OK && !o.cycle)
    rc = usage_error(cmd, "no cycle given: --cycle udds|hwfet|us06|wltc3b|FILE.csv");
  if (rc == EXIT_OK && o.iterate && !o.backward)
    rc = usage_error(cmd, "--iterate is for backward runs: give --backward too");
  char label[PATH_MAX];
  dg_cycle *cycle = rc == EXIT_OK ? load_cycle(cmd, o.cycle, label, sizeof label, &rc) : NULL;
  dg_registry *reg = rc == EXIT_OK ? plugin_registry(o.plugins.n, o.plugins.v) : NULL;
  if (rc == EXIT_OK && !reg)
    rc = EXIT_INVALID;
  if (rc != EXIT_OK) {
    options_free(cmd, &o);
    dg_cycle_free(cycle);
    dg_registry_free(reg);
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  }
  const char *graph = args.v[0];
  double dt = o.dt > 0.0 ? o.dt : 1e-3;
  double steps = ceil(dg_cycle_duration(cycle) / dt - 1e-9);
  if (steps > o.max_steps)
    rc = refuse_steps(cmd, steps, dg_cycle_duration(cycle), dt, o.max_steps);
  dg_error err;
  char *json = rc == EXIT_OK ? graph_json_text(graph, &err) : NULL;
  if (rc == EXIT_OK && !json) {
    print_error(stderr, &err, graph);
    rc = EXIT_INVALID;
  }
  dg_cycle_run *run = NULL;
  if (rc == EXIT_OK) {
    dg_cycle_options opt;
    dg_cycle_options_init(&opt);
    opt.reg = reg;
    opt.graph_json = json;
    opt.graph_name = graph;
    opt.dt = dt;
    opt.backward = o.backward;
    opt.iterate = o.iterate;
    run = dg_cycle_run_new(&opt, cycle, &err);
    if (!run) {
      print_error(stderr, &err, graph);
      rc = EXIT_INVALID;
    }
  }
  if (rc == EXIT_OK) {
    print_warnings(stderr, dg_cycle_run_graph(run), graph);
    long per_row = lround(o.interval / dt);
    cycle_cli c = {.o = &o, .graph_path = graph, .cycle_label = label, .cycle = cycle, .run = run,
                   .sim = dg_cycle_run_sim(run), .steps_per_row = per_row < 1 ? 1 : per_row};
    c.interval = (double)c.steps_per_row * dt;
    out_catch_signals("cycle");
    rc = run_cycle(&c);
    plot_trace_free(c.trace);
  }
  dg_cycle_run_free(run);
  free(json);
  dg_cycle_free(cycle);
  dg_registry_free(reg);
  options_free(cmd, &o);
  return rc;
}

const command dg_cmd_cycle = {
    .name = "cycle",
    .operands = "GRAPH --cycle NAME|FILE",
    .summary = "Drive a graph over a drive cycle: fuel, electricity, energies.",
    .help = "Drives the graph over a drive cycle: one that ships with drivegraph (udds:\n"
            "the EPA's city cycle; hwfet: highway; us06: aggressive; wltc3b: WLTC class\n"
            "3b) or a CSV file in FASTSim's layout (cycSecs,cycMps[,cycGrade]). Forward\n"
            "(the default), the graph's `driver` block follows the trace (its trace is\n"
            "replaced by the cycle) and the run is held to the EPA's tolerance (2 mph\n"
            "within 1 s); --backward puts the body on the trace exactly. The cycle's\n"
            "grade goes to the vehicle's `grade` channel.\n\n"
            "Reports the distance, the trace tolerance (steps outside, total time,\n"
            "the worst), the fuel (g, L, L/100 km, mpg), the electricity (Wh/km, the\n"
            "state of charge and its swing), the charge balance of a hybrid (the net\n"
            "battery energy as fuel at the engine's mean efficiency) and each block's\n"
            "energies from the ledger (docs/energy.md, \"Drive cycles\").\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = cycle_options,
    .footer = "Exit status: 0 ok, 1 invalid graph or cycle file, a graph without a driver\n"
              "block, a failed run or an output not written, 2 usage error (an unknown\n"
              "cycle name among them).\n",
    .run = cmd_cycle,
};
