/* The run summary of `drivegraph sim` (summary.h): printing the figures the
 * library collects (dg_summary, lib/run/summary.c) as text or JSON. */
#include "summary.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *column_name(const dg_sim *sim, int c) {
  return c >= 0 ? dg_sim_signal_name(sim, c) : dg_sim_input_name(sim, -c - 1);
}
double column_value(const dg_sim *sim, int c) {
  return c >= 0 ? dg_sim_signal(sim, c) : dg_sim_get_input(sim, -c - 1);
}

static double read(const summary *s, int id) { return id >= 0 ? dg_sim_signal(s->sim, id) : NAN; }

/* ------------------------------------------------------------------------ */
/* Text                                                                     */

#define MAX_TEXT_SIGNALS 8

static const char *gear_name(int g, char *buf, size_t n) {
  if (g < 0)
    snprintf(buf, n, "R");
  else if (g == 0)
    snprintf(buf, n, "N");
  else
    snprintf(buf, n, "%d", g);
  return buf;
}

/* Mode-change impacts (speeds projected onto a new mode: a gearbox with
 * "engagement": "rigid", a gear engaged at speed, a lock decided past its
 * slip's zero) that took more than this share of the work in are a visible
 * part of it, and the text summary warns; below, they are round-off or a
 * detail. */
#define IMPACT_WARN_SHARE 1e-3

/* The impact loss as a share of the work in (of the start's kinetic energy
 * when nothing did work). */
static double impact_share(const dg_energy *e) {
  double scale = e->work_in > 0.0 ? e->work_in : fmax(fabs(e->kinetic_start), 1.0);
  return fabs(e->impact_loss) / scale;
}

static void print_energy(const dg_sim *sim, FILE *out) {
  const dg_graph *g = dg_sim_graph(sim);
  dg_energy e;
  dg_sim_energy(sim, &e);
  fprintf(out, "energy:      kinetic %.6g J (start %.6g J)\n", e.kinetic, e.kinetic_start);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    double w = dg_sim_block_work(sim, i);
    if (w != 0.0)
      fprintf(out, "  %-24s %12.6g J\n", dg_graph_block_id(g, i), w);
  }
  if (e.efficiency_loss != 0.0)
    fprintf(out, "  %-24s %12.6g J\n", "(gear efficiency)", e.efficiency_loss);
  if (e.impact_loss != 0.0)
    fprintf(out, "  %-24s %12.6g J\n", "(mode-change impacts)", e.impact_loss);
  if (impact_share(&e) > IMPACT_WARN_SHARE)
    fprintf(out,
            "  warning: mode-change impacts took %.2g %% of the work in: speeds jumped where "
            "modes changed (a gearbox with \"engagement\": \"rigid\", a gear engaged at "
            "speed, a lock past its slip's zero)\n",
            100.0 * impact_share(&e));
  double scale = e.work_in > 0.0 ? e.work_in : fmax(fabs(e.kinetic_start), 1.0);
  fprintf(out, "  balance error            %12.3g J (%.2g of the work in)\n", e.balance_error,
          fabs(e.balance_error) / scale);
}

/* A block's signal by name, NaN when it has none. */
static double block_signal(const dg_sim *sim, const char *block, const char *name) {
  char full[256];
  snprintf(full, sizeof full, "%s.%s", block, name);
  int id = dg_sim_signal_find(sim, full);
  return id >= 0 ? dg_sim_signal(sim, id) : NAN;
}

/* The audit from the fuel and the batteries to the road
 * (dg_sim_energy_ledger), printed when some block keeps a ledger: where
 * the energy came from (positive), where it went (negative). */
static void print_ledger(const dg_sim *sim, FILE *out) {
  dg_energy_ledger l;
  dg_sim_energy_ledger(sim, &l);
  if (l.ledger_blocks == 0)
    return;
  const dg_graph *g = dg_sim_graph(sim);
  fprintf(out, "ledger:      from the fuel and the batteries to the road\n");
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) != DG_OK || !e.ledger)
      continue;
    const char *id = dg_graph_block_id(g, i);
    if (e.fuel != 0.0) {
      double kg = block_signal(sim, id, "fuel_used"), vol = block_signal(sim, id, "fuel_volume");
      fprintf(out, "  fuel     %-15s %12.6g J", id, e.fuel);
      if (isfinite(kg) && isfinite(vol))
        fprintf(out, "  (%.6g g, %.6g L)", 1e3 * kg, vol);
      fprintf(out, "\n");
    }
    if (e.stored != 0.0) {
      double soc = block_signal(sim, id, "soc");
      fprintf(out, "  battery  %-15s %12.6g J", id, e.stored);
      if (isfinite(soc))
        fprintf(out, "  (state of charge now %.6g)", soc);
      fprintf(out, "\n");
    }
  }
  if (l.electric != 0.0)
    fprintf(out, "  %-24s %12.6g J%s\n", "electricity from outside", l.electric,
            fabs(l.electric) > 1e-9 * fmax(l.energy_in, 1.0) ? "  (a machine or load on no battery)"
                                                              : "");
  if (l.work_in_other > 0.0)
    fprintf(out, "  %-24s %12.6g J\n", "other sources' work", l.work_in_other);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) == DG_OK && e.ledger && e.heat != 0.0)
      fprintf(out, "  heat     %-15s %12.6g J\n", dg_graph_block_id(g, i), -e.heat);
  }
  fprintf(out, "  %-24s %12.6g J\n", "road, brakes, slip", l.work_out_other);
  if (l.efficiency_loss != 0.0)
    fprintf(out, "  %-24s %12.6g J\n", "(gear efficiency)", l.efficiency_loss);
  if (l.impact_loss != 0.0)
    fprintf(out, "  %-24s %12.6g J\n", "(mode-change impacts)", l.impact_loss);
  fprintf(out, "  %-24s %12.6g J\n", "kinetic energy gained", -l.kinetic_change);
  fprintf(out, "  balance error            %12.3g J (%.2g of the energy in)\n", l.balance_error,
          fabs(l.balance_error) / fmax(l.energy_in, 1.0));
}

static void print_performance(const summary *s, FILE *out) {
  double v_end = read(s, s->id_speed), x_end = read(s, s->id_x) - s->x_start;
  fprintf(out, "performance: (%s)\n", s->vehicle);
  bool from_rest = s->v_start <= SUMMARY_FROM_REST;
  if (!from_rest)
    fprintf(out, "  start speed      %.1f km/h\n", 3.6 * s->v_start);
  if (from_rest) {
    if (!isnan(s->t_100))
      fprintf(out, "  0-100 km/h       %.2f s\n", s->t_100);
    else
      fprintf(out, "  0-100 km/h       not reached\n");
    if (!isnan(s->t_400))
      fprintf(out, "  0-400 m          %.2f s at %.1f km/h\n", s->t_400, 3.6 * s->v_400);
    else
      fprintf(out, "  0-400 m          not reached\n");
  }
  fprintf(out, "  top speed        %.1f km/h at %.2f s\n", 3.6 * s->v_top, s->t_top);
  if (!from_rest) {
    char what[32];
    if (s->rest_speed <= SUMMARY_REST)
      snprintf(what, sizeof what, "to rest");
    else
      snprintf(what, sizeof what, "to %.3g km/h", 3.6 * s->rest_speed);
    if (!isnan(s->t_rest))
      fprintf(out, "  %-16s %.2f s over %.1f m (mean %.2f m/s^2)\n", what, s->t_rest, s->x_rest,
              (s->v_start - s->rest_speed) / s->t_rest);
    else
      fprintf(out, "  %-16s not reached (final speed %.1f km/h)\n", what, 3.6 * v_end);
  } else {
    fprintf(out, "  final speed      %.1f km/h\n", 3.6 * v_end);
  }
  fprintf(out, "  distance         %.1f m\n", x_end);
}

/* What the start chose for shafts no initial value fixed, and why. */
static void print_start(const dg_sim *sim, FILE *out) {
  int n = dg_sim_start_choice(sim, 0, NULL);
  if (n == 0)
    return;
  fprintf(out, "start:       speeds the start chose (no initial value fixed them):\n");
  for (int i = 0; i < n; i++) {
    dg_start_choice c;
    dg_sim_start_choice(sim, i, &c);
    const char *unit = c.linear ? "m/s" : "rad/s";
    if (c.taken)
      fprintf(out, "  %-36s %10.4g %-5s  %s (%s)\n", c.shaft, c.speed, unit,
              c.why[0] ? c.why : "proposed", c.block);
    else
      fprintf(out, "  %-36s %10.4g %-5s  %s %.4g %s of %s not taken: the speeds before fix it\n",
              c.shaft, c.speed, unit, c.why[0] ? c.why : "proposed", c.proposed, unit, c.block);
  }
}

static void print_shifts(const summary *s, FILE *out) {
  char g0[16];
  fprintf(out, "shifts:      %ld (%s, starting in %s)\n", s->shifts_total, s->gearbox,
          gear_name(s->gear_start, g0, sizeof g0));
  for (int i = 0; i < s->nshifts; i++) {
    char a[16], b[16];
    const summary_shift *sh = &s->shifts[i];
    fprintf(out, "  shift at %8.3f s   %s -> %s   %5.0f rpm\n", sh->t,
            gear_name(sh->from, a, sizeof a), gear_name(sh->to, b, sizeof b), sh->rpm);
  }
  if (s->shifts_total > s->nshifts)
    fprintf(out, "  ... and %ld more\n", s->shifts_total - s->nshifts);
}

void summary_print_text(const summary *s, const summary_run *run, FILE *out) {
  const dg_sim *sim = s->sim;
  const dg_graph *g = dg_sim_graph(sim);
  fprintf(out, "graph:       %s (%d blocks, %d DOFs)\n", run->graph_path, dg_graph_block_count(g),
          dg_sim_dof_count(sim));
  if (run->preset)
    fprintf(out, "preset:      %s\n", run->preset);
  print_start(sim, out);
  fprintf(out, "steps:       %ld of %g s\n", run->steps, run->dt);
  fprintf(out, "final time:  %.6g s\n", run->final_time);
  fprintf(out, "stopped:     %s\n", run->stop_reason);
  if (s->id_speed >= 0)
    print_performance(s, out);
  if (s->id_gear >= 0)
    print_shifts(s, out);
  if (s->nwheels > 0) {
    if (s->slip_wheel >= 0)
      fprintf(out, "wheel slip:  peak |(wR - v)/v| %.4g (%s at %.2f s; above 1 m/s)\n",
              s->slip_peak, s->wheel[s->slip_wheel], s->slip_t);
    else
      fprintf(out, "wheel slip:  peak |(wR - v)/v| 0 (above 1 m/s)\n");
  }
  int n = run->ncols < MAX_TEXT_SIGNALS ? run->ncols : MAX_TEXT_SIGNALS;
  fprintf(out, "final values:\n");
  for (int i = 0; i < n; i++) {
    int c = run->cols[i];
    const char *unit = c >= 0 ? dg_sim_signal_unit(sim, c) : "";
    fprintf(out, "  %-24s %12.6g %s\n", column_name(sim, c), column_value(sim, c),
            unit ? unit : "");
  }
  if (run->ncols > n)
    fprintf(out, "  ... and %d more signals and channels\n", run->ncols - n);
  print_energy(sim, out);
  print_ledger(sim, out);
  fprintf(out, "wall time:   %.3f s (%.0f ns per step)\n", run->wall, run->ns_per_step);
  if (run->csv)
    fprintf(out, "csv:         %s (%ld rows every %g s, %d signals)\n", run->csv, run->csv_rows,
            run->interval, run->ncols);
  if (run->plot)
    fprintf(out, "plot:        %s\n", run->plot);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */

/* A number, or null when it is not finite (JSON has no NaN). */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }
static json_t *str(const char *s) { return s ? json_string(s) : json_null(); }

/* Sets key to value, reporting failure through *ok (jansson steals value,
 * also on failure). */
static void put(json_t *obj, const char *key, json_t *value, bool *ok) {
  if (!value || json_object_set_new(obj, key, value) != 0)
    *ok = false;
}

/* The ledger's totals (dg_sim_energy_ledger); null when no block keeps
 * one. */
static json_t *ledger_json(const dg_sim *sim, bool *ok) {
  dg_energy_ledger l;
  dg_sim_energy_ledger(sim, &l);
  if (l.ledger_blocks == 0)
    return json_null();
  json_t *o = json_object();
  if (!o) {
    *ok = false;
    return NULL;
  }
  put(o, "fuel_J", num(l.fuel), ok);
  put(o, "stored_J", num(l.stored), ok);
  put(o, "electric_J", num(l.electric), ok);
  put(o, "heat_J", num(l.heat), ok);
  put(o, "work_in_other_J", num(l.work_in_other), ok);
  put(o, "work_out_other_J", num(l.work_out_other), ok);
  put(o, "efficiency_loss_J", num(l.efficiency_loss), ok);
  put(o, "impact_loss_J", num(l.impact_loss), ok);
  put(o, "kinetic_change_J", num(l.kinetic_change), ok);
  put(o, "energy_in_J", num(l.energy_in), ok);
  put(o, "balance_error_J", num(l.balance_error), ok);
  put(o, "balance_error_relative", num(fabs(l.balance_error) / fmax(l.energy_in, 1.0)), ok);
  return o;
}

/* Each ledger block's terms, flat: "<id>.fuel", "<id>.stored",
 * "<id>.electric", "<id>.heat" (J). */
static json_t *block_ledger_json(const dg_sim *sim, bool *ok) {
  json_t *o = json_object();
  if (!o) {
    *ok = false;
    return NULL;
  }
  static const char *const kinds[] = {"fuel", "stored", "electric", "heat"};
  const dg_graph *g = dg_sim_graph(sim);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) != DG_OK || !e.ledger)
      continue;
    double v[4] = {e.fuel, e.stored, e.electric, e.heat};
    for (int k = 0; k < 4; k++) {
      char key[256];
      snprintf(key, sizeof key, "%s.%s", dg_graph_block_id(g, i), kinds[k]);
      put(o, key, num(v[k]), ok);
    }
  }
  return o;
}

static json_t *energy_json(const dg_sim *sim, bool *ok) {
  const dg_graph *g = dg_sim_graph(sim);
  dg_energy e;
  dg_sim_energy(sim, &e);
  json_t *o = json_object(), *blocks = json_object();
  if (!o || !blocks) {
    json_decref(o);
    json_decref(blocks);
    *ok = false;
    return NULL;
  }
  put(o, "kinetic_J", num(e.kinetic), ok);
  put(o, "kinetic_start_J", num(e.kinetic_start), ok);
  put(o, "work_in_J", num(e.work_in), ok);
  put(o, "work_out_J", num(e.work_out), ok);
  put(o, "efficiency_loss_J", num(e.efficiency_loss), ok);
  put(o, "impact_loss_J", num(e.impact_loss), ok);
  put(o, "impact_loss_relative", num(impact_share(&e)), ok);
  put(o, "impact_warning", json_boolean(impact_share(&e) > IMPACT_WARN_SHARE), ok);
  put(o, "balance_error_J", num(e.balance_error), ok);
  double scale = e.work_in > 0.0 ? e.work_in : fmax(fabs(e.kinetic_start), 1.0);
  put(o, "balance_error_relative", num(fabs(e.balance_error) / scale), ok);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    double w = dg_sim_block_work(sim, i);
    if (w != 0.0)
      put(blocks, dg_graph_block_id(g, i), num(w), ok);
  }
  put(o, "block_work_J", blocks, ok);
  put(o, "ledger", ledger_json(sim, ok), ok);
  put(o, "block_ledger_J", block_ledger_json(sim, ok), ok);
  return o;
}

static json_t *shifts_json(const summary *s, bool *ok) {
  json_t *a = json_array();
  if (!a) {
    *ok = false;
    return NULL;
  }
  for (int i = 0; i < s->nshifts; i++) {
    json_t *o = json_object();
    if (!o || json_array_append_new(a, o) != 0) {
      *ok = false;
      break;
    }
    put(o, "time_s", num(s->shifts[i].t), ok);
    put(o, "from", json_integer(s->shifts[i].from), ok);
    put(o, "to", json_integer(s->shifts[i].to), ok);
    put(o, "rpm", num(s->shifts[i].rpm), ok);
  }
  return a;
}

static void performance_json(const summary *s, json_t *o, bool *ok) {
  bool has = s->id_speed >= 0, from_rest = has && s->v_start <= SUMMARY_FROM_REST;
  double v_end = read(s, s->id_speed);
  put(o, "vehicle", str(s->vehicle), ok);
  put(o, "start_speed_kmh", num(has ? 3.6 * s->v_start : NAN), ok);
  put(o, "final_speed_kmh", num(has ? 3.6 * v_end : NAN), ok);
  put(o, "top_speed_kmh", num(has ? 3.6 * s->v_top : NAN), ok);
  put(o, "top_speed_time_s", num(has ? s->t_top : NAN), ok);
  put(o, "distance_m", num(has ? read(s, s->id_x) - s->x_start : NAN), ok);
  put(o, "t_0_100_kmh_s", num(from_rest ? s->t_100 : NAN), ok);
  put(o, "t_0_400_m_s", num(from_rest ? s->t_400 : NAN), ok);
  put(o, "v_400_m_kmh", num(from_rest ? 3.6 * s->v_400 : NAN), ok);
  put(o, "rest_speed_kmh", num(has ? 3.6 * s->rest_speed : NAN), ok);
  put(o, "time_to_rest_s", num(s->t_rest), ok);
  put(o, "distance_to_rest_m", num(s->x_rest), ok);
  put(o, "peak_wheel_slip", num(s->nwheels > 0 ? s->slip_peak : NAN), ok);
  put(o, "peak_wheel_slip_wheel", str(s->slip_wheel >= 0 ? s->wheel[s->slip_wheel] : NULL), ok);
  put(o, "peak_wheel_slip_time_s", num(s->slip_t), ok);
}

int summary_print_json(const summary *s, const summary_run *run, FILE *out) {
  const dg_sim *sim = s->sim;
  const dg_graph *g = dg_sim_graph(sim);
  bool ok = true;
  json_t *o = json_object();
  if (!o)
    return -1;
  put(o, "graph", str(run->graph_path), &ok);
  put(o, "name", str(run->graph_name), &ok);
  put(o, "blocks", json_integer(dg_graph_block_count(g)), &ok);
  put(o, "dofs", json_integer(dg_sim_dof_count(sim)), &ok);
  put(o, "preset", str(run->preset), &ok);
  put(o, "scenario", str(run->scenario), &ok);
  put(o, "steps", json_integer(run->steps), &ok);
  put(o, "dt_s", num(run->dt), &ok);
  put(o, "duration_s", num(run->duration), &ok);
  put(o, "final_time_s", num(run->final_time), &ok);
  put(o, "topology_changes", json_integer(dg_sim_topology_changes(sim)), &ok);
  put(o, "stop_reason", str(run->stop_reason), &ok);
  json_t *st = json_array();
  for (int i = 0; st && i < dg_sim_start_choice(sim, 0, NULL); i++) {
    dg_start_choice c;
    dg_sim_start_choice(sim, i, &c);
    json_t *e = json_object();
    if (!e || json_array_append_new(st, e) != 0) {
      ok = false;
      break;
    }
    put(e, "shaft", str(c.shaft), &ok);
    put(e, "block", str(c.block), &ok);
    put(e, "why", str(c.why), &ok);
    put(e, "proposed", num(c.proposed), &ok);
    put(e, "speed", num(c.speed), &ok);
    put(e, "unit", str(c.linear ? "m/s" : "rad/s"), &ok);
    put(e, "taken", json_boolean(c.taken), &ok);
  }
  put(o, "start_choices", st, &ok);
  performance_json(s, o, &ok);
  put(o, "gearbox", str(s->gearbox), &ok);
  put(o, "start_gear", s->id_gear >= 0 ? json_integer(s->gear_start) : json_null(), &ok);
  put(o, "shift_rpm_signal", str(s->rpm_name), &ok);
  put(o, "shifts_total", json_integer(s->shifts_total), &ok);
  put(o, "shifts", shifts_json(s, &ok), &ok);
  json_t *fv = json_object();
  for (int i = 0; fv && i < run->ncols; i++)
    put(fv, column_name(sim, run->cols[i]), num(column_value(sim, run->cols[i])), &ok);
  put(o, "final_values", fv, &ok);
  put(o, "energy", energy_json(sim, &ok), &ok);
  put(o, "wall_time_s", num(run->wall), &ok);
  put(o, "ns_per_step", num(run->ns_per_step), &ok);
  put(o, "first_step_cpu_s", num(run->first_step_cpu), &ok);
  put(o, "csv", str(run->csv), &ok);
  put(o, "csv_rows", run->csv ? json_integer(run->csv_rows) : json_null(), &ok);
  put(o, "output_interval_s", num(run->interval), &ok);
  put(o, "plot", str(run->plot), &ok);
  char *text = ok ? json_dumps(o, JSON_REAL_PRECISION(10) | JSON_COMPACT) : NULL;
  json_decref(o);
  if (!text)
    return -1;
  fprintf(out, "%s\n", text);
  free(text);
  return 0;
}
