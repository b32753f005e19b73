/* The figures `drivegraph sim` reports about a run: performance (0–100 km/h,
 * 0–400 m, top speed, time and distance to rest), the shift log, peak wheel
 * slip, the energy audit, and the run's bookkeeping; printed as text or as
 * one JSON object. */
#ifndef DG_TOOL_SUMMARY_H
#define DG_TOOL_SUMMARY_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>
#include <stdio.h>

/* Speeds of the standard figures (m/s) and distance (m). */
#define SUMMARY_V100 (100.0 / 3.6)
#define SUMMARY_X400 400.0
/* A run "starts from rest" below this speed (m/s), and "is at rest" below
 * SUMMARY_REST. */
#define SUMMARY_FROM_REST 0.1
#define SUMMARY_REST 0.01

typedef struct summary_shift {
  double t;      /* s, the step at which the new gear was selected */
  int from, to;  /* gears (-1 R, 0 neutral) */
  double rpm;    /* engine (else gearbox input) rpm when it was selected */
} summary_shift;

#define SUMMARY_MAX_SHIFTS 200

/* Collected step by step; fields are NaN / -1 until they are known. */
typedef struct summary {
  const dg_sim *sim;
  /* signal ids, -1 when the graph has no such block */
  int id_speed, id_x, id_gear, id_rpm;
  int nwheels;
  int *id_slip;      /* per wheel: slip_ratio */
  int *id_wheel_v;   /* per wheel: its ground speed */
  const char **wheel;   /* their block ids (owned by the graph) */
  const char *vehicle;  /* vehicle block id or NULL */
  const char *gearbox;  /* first gearbox id or NULL */
  const char *rpm_name; /* the signal behind `rpm` ("engine.rpm") or NULL */

  bool started;
  double t_prev, v_prev, x_prev, rpm_prev;
  int gear_prev;
  int gear_start;         /* after the first step's engagement; 0 without a gearbox */
  double v_start, x_start;
  double v_top, t_top;
  double t_100;           /* 0–100 km/h, from rest only */
  double t_400, v_400;    /* 0–400 m, from rest only */
  double rest_speed;      /* m/s: "at rest" below it (SUMMARY_REST unless set) */
  double t_rest, x_rest;  /* moving start, then at rest */
  double slip_peak, slip_t;
  int slip_wheel;         /* index into wheel[], -1 none */
  summary_shift shifts[SUMMARY_MAX_SHIFTS];
  int nshifts;            /* stored */
  long shifts_total;      /* including those not stored */
} summary;

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
  const int *cols;       /* the CSV columns, for "final values": signal ids, channel k as -(k + 1) */
  int ncols;
  const char *csv;       /* NULL if none */
  long csv_rows;
  double interval;
  const char *plot;      /* NULL if none */
} summary_run;

/* Resolves the signals from the blocks' types (first vehicle, first gearbox,
 * engine else motor else gearbox input for rpm, every wheel). Returns 0, or
 * -1 when out of memory. */
int summary_init(summary *s, const dg_sim *sim);
void summary_free(summary *s);
/* Records the state after a step ending at time t (call once at t = 0 too).
 * A few signal reads and comparisons; no allocation. */
void summary_sample(summary *s, double t);

/* Text on `out`: the run, performance figures, shift log, slip, final values,
 * energy audit, wall time. */
void summary_print_text(const summary *s, const summary_run *run, FILE *out);
/* One JSON object and a newline on `out`; 0 on success, -1 if it could not be
 * built (out of memory). */
int summary_print_json(const summary *s, const summary_run *run, FILE *out);

#endif
