/* Plots of a `drivegraph sim` run with PLplot (cairo drivers: pngcairo,
 * svgcairo): stacked panels over a shared time axis — engine (or motor)
 * speed, vehicle speed, gear, clutch / converter slip, wheel slip, driver
 * inputs — chosen from the blocks the graph has, or the signals and
 * channels of a user's list; recorded during the run. */
#ifndef DG_TOOL_PLOT_H
#define DG_TOOL_PLOT_H

#include <drivegraph/drivegraph.h>
#include <stddef.h>

typedef enum plot_format { PLOT_UNKNOWN = -1, PLOT_PNG, PLOT_SVG } plot_format;

/* The format from the file name's extension (.png, .svg; any case). */
plot_format plot_format_of(const char *path);

typedef struct plot_trace plot_trace;

/* Picks the plotted signals from the graph's block types and allocates room
 * for up to max_rows rows (more rows are thinned out evenly). NULL with a
 * reason in `why` when the graph has nothing to plot or memory is short. */
plot_trace *plot_trace_new(const dg_sim *sim, long max_rows, char *why, size_t n);
/* The panels of `list` instead (as --plot-signals gives it): panels
 * separated by ',', lines sharing a panel joined by '+', each a signal
 * ("block.signal") or a channel (a name without '.'), e.g.
 * "engine.rpm+gearbox.rpm,body.speed,throttle+brake". At most 12 panels of
 * 8 lines; blanks around names are ignored. Values are plotted as recorded,
 * in the signal's unit, named with the unit on the y axis ("(mixed units)"
 * and the units in the legend when lines differ). The first gearbox's shifts
 * are shaded as in the default plot. NULL with a reason in `why` for an
 * empty list or panel, too many panels or lines, an unknown name (with the
 * closest signal or channel: `unknown signal or channel "engine.rmp"; did
 * you mean "engine.rpm"?`) or short memory. */
plot_trace *plot_trace_new_list(const dg_sim *sim, const char *list, long max_rows, char *why,
                                size_t n);
void plot_trace_free(plot_trace *tr);
/* Records the current values as the row at time t (no allocation). */
void plot_trace_record(plot_trace *tr, double t);

/* Labels of the figure (copied). NaN for a marker leaves it out. */
typedef struct plot_labels {
  const char *title;    /* top line, e.g. the graph's name */
  const char *subtitle; /* second line, e.g. "preset launch: full throttle from rest" */
  double t_100;         /* s: marks 0–100 km/h on the speed panel */
} plot_labels;

/* Draws the recorded rows in `fmt` into memory: *data (malloc'ed, *len
 * bytes), which the caller writes where it belongs (tools/output.h), so that
 * every byte of the file is written and checked there and PLplot never
 * opens a file. The image is checked to be whole (a PNG ends with its IEND
 * chunk, an SVG with </svg>). Returns 0, or -1 with a reason. PLplot's
 * fatal errors exit() the process after a message; the output module's
 * exit handler removes temporary files then. */
int plot_trace_render(const plot_trace *tr, const plot_labels *labels, plot_format fmt,
                      char **data, size_t *len, char *why, size_t n);

#endif
