/* The figures `drivegraph sim` reports about a run: performance (0–100 km/h,
 * 0–400 m, top speed, time and distance to rest), the shift log, peak wheel
 * slip, the energy audit, and the run's bookkeeping; printed as text or as
 * one JSON object. */
#ifndef DG_TOOL_SUMMARY_H
#define DG_TOOL_SUMMARY_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>
#include <stdio.h>

/* The figures are collected by the library (dg_summary); the names below
 * are the tool's for them. */
#define SUMMARY_V100 DG_SUMMARY_V100
#define SUMMARY_X400 DG_SUMMARY_X400
#define SUMMARY_FROM_REST DG_SUMMARY_FROM_REST
#define SUMMARY_REST DG_SUMMARY_REST

typedef dg_summary_shift summary_shift;
typedef dg_summary summary;

/* A CSV column (summary_run.cols): a signal id >= 0, or channel k as
 * -(k + 1); its name and current value. */
const char *column_name(const dg_sim *sim, int col);
double column_value(const dg_sim *sim, int col);

/* What the run around the summary was (filled by cmd_sim). */
typedef struct summary_run {
  const char *graph_path;
  const char *graph_name;
  const char *preset;    /* NULL for a scenario run */
  const char *scenario;  /* NULL without a scenario file */
  const char *stop_reason;
  long steps;
  double dt, duration, final_time;
  double wall, ns_per_step;
  double first_step_cpu; /* CPU time of the process when its first step began (s) */
  const int *cols;       /* the CSV columns, for "final values": signal ids, channel k as -(k + 1) */
  int ncols;
  const char *csv;       /* NULL if none */
  long csv_rows;
  double interval;
  const char *plot;      /* NULL if none */
} summary_run;

#define summary_init dg_summary_init
#define summary_free dg_summary_free
#define summary_sample dg_summary_sample

/* Text on `out`: the run, performance figures, shift log, slip, final values,
 * energy audit, wall time. */
void summary_print_text(const summary *s, const summary_run *run, FILE *out);
/* One JSON object and a newline on `out`; 0 on success, -1 if it could not be
 * built (out of memory). */
int summary_print_json(const summary *s, const summary_run *run, FILE *out);

#endif
