/* Plots of a `drivegraph sim` run (plot.h), drawn with PLplot's C API on the
 * cairo drivers (pngcairo, svgcairo).
 *
 * What is plotted follows the graph: panels are picked from the block types
 * (dg_graph_block_type), in this order, each only when the graph has such a
 * block:
 *   shaft speed (rpm)     engines, else motors, else torque sources (and, in
 *                         a test rig without a vehicle, the loads); with a
 *                         gearbox, its input shaft too (dashed): the gap to
 *                         the engine is the clutch's or converter's slip
 *   vehicle speed (km/h)  the first vehicle, with 100 km/h marked
 *   gear                  the first gearbox, as steps
 *   clutch slip (rpm)     every clutch (in − out) and torque converter
 *                         (pump − turbine)
 *   wheel slip (%)        every wheel's kinematic slip `slip_ratio`,
 *                         (ωR − v)/max(|v|, 0.1 m/s), in percent (wheels
 *                         that never slip, i.e. rolling tyres, are left out
 *                         when drawing); percent keeps the tick labels
 *                         short. Not the tyre's slip state `slip`: that is
 *                         limited to ±1 and sits at 100 % while the tread
 *                         turns 1.5 times faster than the road passes. A
 *                         wheel class without `slip_ratio` plots `slip`.
 *   driver inputs (0..1)  the channels throttle, brake and clutch (the
 *                         pedal, when a clutch reads it), with an engine
 *                         or a motor: what the driver did
 * Or panels from a user's list (plot_trace_new_list): any signal or
 * channel, as recorded, labelled with its name and unit.
 * Shifts (the first gearbox's `shifting`) are shaded on every panel. The
 * rows are recorded during the run at the output interval, at most
 * max_rows of them: longer runs keep every k-th row. */
#include "plot.h"
#include "tool.h"

#include <math.h>
#include <plplot.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(sizeof(PLFLT) == sizeof(double), "PLplot must be built with double precision");

/* A user's list may ask for up to MAX_PANELS panels of MAX_LINES lines (one
 * colour each); the default plot has at most six panels. */
#define MAX_PANELS 12
#define MAX_LINES 8
#define LABEL_LEN 96
#define YLABEL_LEN 256

enum {
  PANEL_RPM, PANEL_SPEED, PANEL_GEAR, PANEL_SLIP_RPM, PANEL_WHEEL_SLIP, PANEL_INPUTS,
  PANEL_USER /* one of a user's list (each its own) */
};

/* cmap0 colour indices (set in plot_trace_render). */
enum { C_BG, C_FG, C_GRID, C_SHADE, C_REF, C_LINE0 };
static const int palette[][3] = {
    {255, 255, 255}, /* background */
    {0, 0, 0},       /* axes, text */
    {215, 215, 215}, /* grid */
    {226, 232, 244}, /* shift shading */
    {110, 110, 110}, /* reference lines */
    {31, 119, 180},  /* lines: blue, orange, green, red, purple, brown, pink, olive */
    {255, 127, 14},  {44, 160, 44}, {214, 39, 40}, {148, 103, 189}, {140, 86, 75},
    {227, 119, 194}, {188, 189, 34},
};
enum { NUM_COLORS = sizeof palette / sizeof palette[0], NUM_LINE_COLORS = NUM_COLORS - C_LINE0 };
/* Every line of a full panel has a colour of its own. */
_Static_assert(NUM_LINE_COLORS >= MAX_LINES, "a colour per line");

typedef struct series {
  int id, id_minus; /* value = scale · (signal id − signal id_minus); id_minus may be -1 */
  int channel;      /* >= 0: the value is this input (channel) instead; id is -1 */
  double scale;
  int style;        /* PLplot line style: 1 solid, 2 dashed */
  bool steps;       /* integer values (gears): drawn as steps */
  char label[LABEL_LEN];
  PLFLT *y;
} series;

typedef struct panel {
  int kind;
  char ylabel[YLABEL_LEN];
  int nlines;
  series lines[MAX_LINES];
} panel;

struct plot_trace {
  const dg_sim *sim;
  long cap, n;       /* rows allocated, rows recorded */
  long stride, seen; /* keep every stride-th offered row */
  long max_rows;
  PLFLT *t;
  int id_shifting;   /* -1 without a gearbox */
  PLFLT *shifting;
  int npanels;
  panel panels[MAX_PANELS];
};

plot_format plot_format_of(const char *path) {
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
    return PLOT_UNKNOWN;
  if (strcasecmp(dot, ".png") == 0)
    return PLOT_PNG;
  if (strcasecmp(dot, ".svg") == 0)
    return PLOT_SVG;
  return PLOT_UNKNOWN;
}

/* ------------------------------------------------------------------------ */
/* Choosing the signals                                                     */

static int signal_of(const dg_sim *sim, const char *block, const char *name) {
  char full[256];
  if (snprintf(full, sizeof full, "%s.%s", block, name) >= (int)sizeof full)
    return -1;
  return dg_sim_signal_find(sim, full);
}

static panel *add_panel(plot_trace *tr, int kind, const char *ylabel) {
  for (int i = 0; i < tr->npanels; i++)
    if (tr->panels[i].kind == kind)
      return &tr->panels[i];
  if (tr->npanels == MAX_PANELS)
    return NULL;
  panel *p = &tr->panels[tr->npanels++];
  memset(p, 0, sizeof *p);
  p->kind = kind;
  snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel);
  return p;
}

/* Adds a line scale·(block.name − block.minus) to the panel of `kind`;
 * NULL when a signal is missing or the panel is full. */
static series *add_line(plot_trace *tr, int kind, const char *ylabel, const char *block,
                     const char *name, const char *minus, double scale, int style,
                     const char *label) {
  int id = signal_of(tr->sim, block, name);
  int id_minus = minus ? signal_of(tr->sim, block, minus) : -1;
  if (id < 0 || (minus && id_minus < 0))
    return NULL;
  panel *p = add_panel(tr, kind, ylabel);
  if (!p || p->nlines == MAX_LINES)
    return NULL;
  series *s = &p->lines[p->nlines++];
  *s = (series){.id = id, .id_minus = id_minus, .channel = -1, .scale = scale, .style = style};
  snprintf(s->label, sizeof s->label, "%s", label);
  return s;
}

/* Adds the channel `name` (labelled by its name) to the panel of `kind`. */
static void add_channel(plot_trace *tr, int kind, const char *ylabel, const char *name) {
  int channel = dg_sim_input_find(tr->sim, name);
  if (channel < 0)
    return;
  panel *p = add_panel(tr, kind, ylabel);
  if (!p || p->nlines == MAX_LINES)
    return;
  series *s = &p->lines[p->nlines++];
  *s = (series){.id = -1, .id_minus = -1, .channel = channel, .scale = 1.0, .style = 1,
                .steps = dg_sim_input_is_integer(tr->sim, channel)};
  snprintf(s->label, sizeof s->label, "%s", name);
}

static int count_type(const dg_graph *g, const char *type) {
  int n = 0;
  for (int i = 0; i < dg_graph_block_count(g); i++)
    n += strcmp(dg_graph_block_type(g, i), type) == 0;
  return n;
}

static const char *first_of(const dg_graph *g, const char *type) {
  for (int i = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), type) == 0)
      return dg_graph_block_id(g, i);
  return NULL;
}

/* rpm lines: the sources of one type, labelled by the type when there is
 * only one of them ("engine"), else by block id. */
static void add_sources(plot_trace *tr, const char *type) {
  const dg_graph *g = dg_sim_graph(tr->sim);
  bool one = count_type(g, type) == 1;
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), type) != 0)
      continue;
    const char *id = dg_graph_block_id(g, i);
    char label[LABEL_LEN];
    if (one && strcmp(id, type) == 0)
      snprintf(label, sizeof label, "%s", type);
    else if (one)
      snprintf(label, sizeof label, "%s (%s)", type, id);
    else
      snprintf(label, sizeof label, "%s", id);
    char ylabel[LABEL_LEN];
    snprintf(ylabel, sizeof ylabel, "%s speed (rpm)",
             strcmp(type, "engine") == 0 || strcmp(type, "motor") == 0 ? type : "shaft");
    add_line(tr, PANEL_RPM, ylabel, id, "rpm", NULL, 1.0, 1, label);
  }
}

static void choose_signals(plot_trace *tr) {
  const dg_graph *g = dg_sim_graph(tr->sim);
  const char *vehicle = first_of(g, "vehicle"), *gearbox = first_of(g, "gearbox");
  const double rpm_per_rad_s = 30.0 / 3.14159265358979323846;

  if (count_type(g, "engine") > 0)
    add_sources(tr, "engine");
  else if (count_type(g, "motor") > 0)
    add_sources(tr, "motor");
  else
    add_sources(tr, "torque_source");
  if (!vehicle)
    add_sources(tr, "load");
  if (gearbox && tr->npanels > 0)
    add_line(tr, PANEL_RPM, "", gearbox, "rpm", NULL, 1.0, 2, "gearbox input");

  if (vehicle)
    add_line(tr, PANEL_SPEED, "vehicle speed (km/h)", vehicle, "speed", NULL, 3.6, 1,
             "vehicle speed");

  if (gearbox) {
    series *gear = add_line(tr, PANEL_GEAR, "gear", gearbox, "gear", NULL, 1.0, 1, "gear");
    if (gear)
      gear->steps = true;
  }

  int clutches = count_type(g, "clutch"), converters = count_type(g, "torque_converter");
  /* slip = in − out for a clutch, pump − turbine for a converter */
  const char *slip_label = !converters ? "clutch slip (rpm)"
                           : !clutches ? "converter slip (rpm)"
                                       : "clutch, converter slip (rpm)";
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    const char *type = dg_graph_block_type(g, i), *id = dg_graph_block_id(g, i);
    if (strcmp(type, "clutch") == 0) {
      add_line(tr, PANEL_SLIP_RPM, slip_label, id, "slip_rpm", NULL, 1.0, 1, id);
    } else if (strcmp(type, "torque_converter") == 0) {
      add_line(tr, PANEL_SLIP_RPM, slip_label, id, "omega", "omega_out", rpm_per_rad_s, 1, id);
    }
  }
  /* Wheels on one axle often slip alike: dashes of different lengths keep
   * lines that lie on top of each other visible. */
  for (int i = 0, k = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), "wheel") != 0)
      continue;
    const char *id = dg_graph_block_id(g, i);
    if (signal_of(tr->sim, id, "slip_ratio") >= 0)
      add_line(tr, PANEL_WHEEL_SLIP, "wheel slip (ωR − v)/|v| (%)", id, "slip_ratio", NULL, 100.0,
               1 + k++ % 4, id);
    else
      add_line(tr, PANEL_WHEEL_SLIP, "wheel slip κ (%)", id, "slip", NULL, 100.0, 1 + k++ % 4, id);
  }

  if (count_type(g, "engine") > 0 || count_type(g, "motor") > 0) {
    add_channel(tr, PANEL_INPUTS, "driver inputs (0..1)", "throttle");
    add_channel(tr, PANEL_INPUTS, "driver inputs (0..1)", "brake");
    add_channel(tr, PANEL_INPUTS, "driver inputs (0..1)", "clutch"); /* a pedal, if one reads it */
  }
}

/* ------------------------------------------------------------------------ */
/* Panels from a list                                                       */

/* Whether signal `name` is a gearbox's gear: an integer, drawn as steps. */
static bool is_gear_signal(const dg_graph *g, const char *name) {
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    if (strcmp(dg_graph_block_type(g, i), "gearbox") != 0)
      continue;
    const char *id = dg_graph_block_id(g, i);
    size_t len = strlen(id);
    if (strncmp(name, id, len) == 0 && strcmp(name + len, ".gear") == 0)
      return true;
  }
  return false;
}

/* `unknown signal or channel "x"`, with the closest signal or channel name. */
static void unknown_name(const dg_sim *sim, const char *name, char *why, size_t n) {
  int ns = dg_sim_signal_count(sim), nc = dg_sim_input_count(sim);
  const char **names = calloc((size_t)(ns + nc > 0 ? ns + nc : 1), sizeof *names);
  const char *close = NULL;
  if (names) {
    for (int i = 0; i < ns; i++)
      names[i] = dg_sim_signal_name(sim, i);
    for (int i = 0; i < nc; i++)
      names[ns + i] = dg_sim_input_name(sim, i);
    close = dg_suggest(name, names, ns + nc);
  }
  if (close)
    snprintf(why, n, "unknown signal or channel \"%s\"; did you mean \"%s\"?", name, close);
  else
    snprintf(why, n, "unknown signal or channel \"%s\"", name);
  free(names);
}

/* One line of a user panel: a signal ("block.signal") or a channel (a name
 * without '.'), plotted as recorded. Its unit goes to *unit ("" for none). */
static int add_listed_line(plot_trace *tr, panel *p, const char *name, const char **unit,
                           char *why, size_t n) {
  series *s = &p->lines[p->nlines];
  *s = (series){.id = -1, .id_minus = -1, .channel = -1, .scale = 1.0, .style = 1};
  if (strchr(name, '.')) {
    s->id = dg_sim_signal_find(tr->sim, name);
    s->steps = s->id >= 0 && is_gear_signal(dg_sim_graph(tr->sim), name);
  } else {
    s->channel = dg_sim_input_find(tr->sim, name);
    s->steps = s->channel >= 0 && dg_sim_input_is_integer(tr->sim, s->channel);
  }
  if (s->id < 0 && s->channel < 0) {
    unknown_name(tr->sim, name, why, n);
    return -1;
  }
  const char *u = s->id >= 0 ? dg_sim_signal_unit(tr->sim, s->id) : NULL;
  *unit = u ? u : "";
  snprintf(s->label, sizeof s->label, "%s", name);
  p->nlines++;
  return 0;
}

/* A panel from one item of the list, "a.b+c.d+channel" (modified in place).
 * The y label names the lines and their unit; lines of different units get
 * theirs in the legend instead. */
static int add_listed_panel(plot_trace *tr, char *item, int number, char *why, size_t n) {
  int nlines = 1;
  for (const char *c = item; *c; c++)
    nlines += *c == '+';
  if (nlines > MAX_LINES) {
    snprintf(why, n, "too many lines in panel %d (%d): at most %d lines share a panel", number,
             nlines, MAX_LINES);
    return -1;
  }
  panel *p = &tr->panels[tr->npanels++];
  memset(p, 0, sizeof *p);
  p->kind = PANEL_USER;
  const char *units[MAX_LINES];
  for (char *name = item; name;) {
    char *plus = strchr(name, '+');
    if (plus)
      *plus = '\0';
    if (add_listed_line(tr, p, tool_trim(name), &units[p->nlines], why, n) != 0)
      return -1;
    name = plus ? plus + 1 : NULL;
  }
  bool mixed = false;
  for (int l = 1; l < p->nlines; l++)
    mixed |= strcmp(units[l], units[0]) != 0;
  size_t len = 0;
  for (int l = 0; l < p->nlines; l++) {
    int w = snprintf(p->ylabel + len, sizeof p->ylabel - len, "%s%s", l ? ", " : "",
                     p->lines[l].label);
    if (w > 0)
      len += (size_t)w;
    if (len >= sizeof p->ylabel)
      len = sizeof p->ylabel - 1;
    if (mixed && *units[l]) {
      char label[LABEL_LEN];
      snprintf(label, sizeof label, "%s (%s)", p->lines[l].label, units[l]);
      memcpy(p->lines[l].label, label, sizeof label);
    }
  }
  if (mixed)
    snprintf(p->ylabel + len, sizeof p->ylabel - len, " (mixed units)");
  else if (*units[0])
    snprintf(p->ylabel + len, sizeof p->ylabel - len, " (%s)", units[0]);
  return 0;
}

/* The list's shape, before any name is looked up: an empty panel or name is
 * a slip of the typing that the message should name as such. */
static int check_shape(const char *list, char *why, size_t n) {
  int number = 1, names = 0;
  bool blank = true;
  for (const char *c = list;; c++) {
    if (*c != ',' && *c != '+' && *c != '\0') {
      blank &= *c == ' ' || *c == '\t';
      continue;
    }
    if (blank && names == 0 && *c != '+') {
      snprintf(why, n, "panel %d is empty (two ',' in a row, or one at an end)", number);
      return -1;
    }
    if (blank) {
      snprintf(why, n, "panel %d has an empty name (two '+' in a row, or one at an end)", number);
      return -1;
    }
    if (*c == '\0')
      return 0;
    number += *c == ',';
    names = *c == ',' ? 0 : names + 1;
    blank = true;
  }
}

static int choose_listed(plot_trace *tr, char *list, char *why, size_t n) {
  if (*tool_trim(list) == '\0') {
    snprintf(why, n,
             "no panels: give signal or channel names, panels separated by ',' and lines "
             "sharing a panel joined by '+' (e.g. engine.rpm+gearbox.rpm,body.speed,throttle)");
    return -1;
  }
  int npanels = 1;
  for (const char *c = list; *c; c++)
    npanels += *c == ',';
  if (npanels > MAX_PANELS) {
    snprintf(why, n, "too many panels (%d): at most %d", npanels, MAX_PANELS);
    return -1;
  }
  if (check_shape(list, why, n) != 0)
    return -1;
  int number = 1;
  for (char *item = list; item; number++) {
    char *comma = strchr(item, ',');
    if (comma)
      *comma = '\0';
    if (add_listed_panel(tr, item, number, why, n) != 0)
      return -1;
    item = comma ? comma + 1 : NULL;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */

static plot_trace *trace_new(const dg_sim *sim, char *why, size_t n) {
  plot_trace *tr = calloc(1, sizeof *tr);
  if (!tr) {
    snprintf(why, n, "out of memory");
    return NULL;
  }
  tr->sim = sim;
  tr->stride = 1;
  const char *gearbox = first_of(dg_sim_graph(sim), "gearbox");
  tr->id_shifting = gearbox ? signal_of(sim, gearbox, "shifting") : -1;
  return tr;
}

static plot_trace *alloc_rows(plot_trace *tr, long max_rows, char *why, size_t n);

plot_trace *plot_trace_new(const dg_sim *sim, long max_rows, char *why, size_t n) {
  plot_trace *tr = trace_new(sim, why, n);
  if (!tr)
    return NULL;
  choose_signals(tr);
  if (tr->npanels == 0) {
    snprintf(why, n,
             "nothing to plot: the graph has no engine, motor, torque source, vehicle, gearbox, "
             "clutch or wheel");
    plot_trace_free(tr);
    return NULL;
  }
  return alloc_rows(tr, max_rows, why, n);
}

plot_trace *plot_trace_new_list(const dg_sim *sim, const char *list, long max_rows, char *why,
                                size_t n) {
  plot_trace *tr = trace_new(sim, why, n);
  if (!tr)
    return NULL;
  char *copy = strdup(list ? list : "");
  if (!copy) {
    snprintf(why, n, "out of memory");
    plot_trace_free(tr);
    return NULL;
  }
  int rc = choose_listed(tr, copy, why, n);
  free(copy);
  if (rc != 0) {
    plot_trace_free(tr);
    return NULL;
  }
  return alloc_rows(tr, max_rows, why, n);
}

/* Room for the rows; frees tr and returns NULL when memory is short. */
static plot_trace *alloc_rows(plot_trace *tr, long max_rows, char *why, size_t n) {
  /* At most PLOT_ROWS points per line: a plot is a few thousand pixels wide,
   * and the memory stays bounded for long runs. */
  enum { PLOT_ROWS = 100000 };
  tr->max_rows = max_rows < 1 ? 1 : max_rows;
  while (tr->max_rows / tr->stride > PLOT_ROWS)
    tr->stride++;
  tr->cap = tr->max_rows / tr->stride + 2;
  bool ok = (tr->t = malloc((size_t)tr->cap * sizeof *tr->t)) != NULL;
  if (ok && tr->id_shifting >= 0)
    ok = (tr->shifting = malloc((size_t)tr->cap * sizeof *tr->shifting)) != NULL;
  for (int p = 0; ok && p < tr->npanels; p++)
    for (int l = 0; ok && l < tr->panels[p].nlines; l++)
      ok = (tr->panels[p].lines[l].y = malloc((size_t)tr->cap * sizeof(PLFLT))) != NULL;
  if (!ok) {
    snprintf(why, n, "out of memory for %ld plot rows", tr->cap);
    plot_trace_free(tr);
    return NULL;
  }
  return tr;
}

void plot_trace_free(plot_trace *tr) {
  if (!tr)
    return;
  for (int p = 0; p < tr->npanels; p++)
    for (int l = 0; l < tr->panels[p].nlines; l++)
      free(tr->panels[p].lines[l].y);
  free(tr->shifting);
  free(tr->t);
  free(tr);
}

void plot_trace_record(plot_trace *tr, double t) {
  if (tr->seen++ % tr->stride != 0 || tr->n >= tr->cap)
    return;
  long i = tr->n++;
  tr->t[i] = t;
  if (tr->shifting)
    tr->shifting[i] = dg_sim_signal(tr->sim, tr->id_shifting);
  for (int p = 0; p < tr->npanels; p++)
    for (int l = 0; l < tr->panels[p].nlines; l++) {
      series *s = &tr->panels[p].lines[l];
      if (s->channel >= 0) {
        s->y[i] = s->scale * dg_sim_get_input(tr->sim, s->channel);
        continue;
      }
      double v = dg_sim_signal(tr->sim, s->id);
      if (s->id_minus >= 0)
        v -= dg_sim_signal(tr->sim, s->id_minus);
      s->y[i] = s->scale * v;
    }
}

/* ------------------------------------------------------------------------ */
/* Drawing                                                                  */

/* Character height relative to PLplot's default (which is made for small
 * pages: on a 1200 px page it would be about 28 px). */
#define TEXT_SCALE 0.55
static void text_size(double rel) { plschr(0.0, TEXT_SCALE * rel); }

/* PLplot calls this on a fatal error, then exit()s with the value returned
 * (the output module's exit handler removes temporary files). */
static int plplot_exit(const char *message) {
  fprintf(stderr, "drivegraph sim: plot: %s\n", message ? message : "PLplot failed");
  return 1;
}

/* PLplot treats '#' as its escape character: a literal one is "##". */
static void escape_text(const char *in, char *out, size_t n) {
  size_t j = 0;
  for (; *in && j + 2 < n; in++) {
    if (*in == '#')
      out[j++] = '#';
    out[j++] = *in;
  }
  out[j] = '\0';
}

static bool line_is_flat_zero(const series *s, long n) {
  for (long i = 0; i < n; i++)
    if (s->y[i] != 0.0 && !isnan(s->y[i]))
      return false;
  return true;
}

/* The lines of a panel that are worth drawing: wheels with rolling tyres
 * (slip identically 0) are left out when other wheels slip. */
static int drawn_lines(const plot_trace *tr, const panel *p, const series **out) {
  int k = 0;
  for (int l = 0; l < p->nlines; l++)
    if (p->kind != PANEL_WHEEL_SLIP || !line_is_flat_zero(&p->lines[l], tr->n))
      out[k++] = &p->lines[l];
  if (k == 0 && p->nlines > 0)
    out[k++] = &p->lines[0];
  return k;
}

/* y range of a panel: the data, padded, including 0 for speeds and slips;
 * gears get half a gear of room and whole-number ticks. */
static void panel_range(const plot_trace *tr, const panel *p, const series *const *lines, int nl,
                        double *lo, double *hi) {
  double a = INFINITY, b = -INFINITY;
  for (int l = 0; l < nl; l++)
    for (long i = 0; i < tr->n; i++) {
      double y = lines[l]->y[i];
      if (isfinite(y)) {
        a = fmin(a, y);
        b = fmax(b, y);
      }
    }
  if (!isfinite(a)) {
    a = 0.0;
    b = 1.0;
  }
  if (p->kind == PANEL_GEAR) {
    *lo = a - 0.5;
    *hi = b + 0.5;
    return;
  }
  a = fmin(a, 0.0);
  b = fmax(b, 0.0);
  if (p->kind == PANEL_SPEED && b >= 80.0)
    b = fmax(b, 100.0); /* keep the 100 km/h line in view */
  if (p->kind == PANEL_INPUTS)
    b = fmax(b, 1.0); /* a pedal's whole travel */
  double pad = 0.08 * (b - a);
  if (pad == 0.0)
    pad = 1.0;
  *lo = a < 0.0 ? a - pad : 0.0;
  *hi = b + pad;
}

static void shade_shifts(const plot_trace *tr, double lo, double hi) {
  if (!tr->shifting)
    return;
  plcol0(C_SHADE);
  for (long i = 0; i < tr->n;) {
    if (tr->shifting[i] < 0.5) {
      i++;
      continue;
    }
    long j = i;
    while (j + 1 < tr->n && tr->shifting[j + 1] >= 0.5)
      j++;
    /* A shift seen at rows i..j began after row i-1 and ended before j+1. */
    double t0 = i > 0 ? tr->t[i - 1] : tr->t[i];
    double t1 = j + 1 < tr->n ? tr->t[j + 1] : tr->t[j];
    PLFLT x[4] = {t0, t1, t1, t0}, y[4] = {lo, lo, hi, hi};
    plfill(4, x, y);
    i = j + 1;
  }
}

/* A step line for integer signals (gear): horizontal until the next row. */
static int draw_steps(const plot_trace *tr, const series *s) {
  PLFLT *x = malloc((size_t)(2 * tr->n) * sizeof *x), *y = malloc((size_t)(2 * tr->n) * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    return -1;
  }
  long k = 0;
  for (long i = 0; i < tr->n; i++) {
    if (i > 0) {
      x[k] = tr->t[i];
      y[k++] = s->y[i - 1];
    }
    x[k] = tr->t[i];
    y[k++] = s->y[i];
  }
  plline((PLINT)k, x, y);
  free(x);
  free(y);
  return 0;
}

static void draw_legend(const series *const *lines, int nl, bool shade) {
  PLINT opt[MAX_LINES + 1], tcol[MAX_LINES + 1], lcol[MAX_LINES + 1], lsty[MAX_LINES + 1];
  PLINT bcol[MAX_LINES + 1], bpat[MAX_LINES + 1];
  PLFLT lwid[MAX_LINES + 1], bscale[MAX_LINES + 1], bwid[MAX_LINES + 1];
  char text[MAX_LINES + 1][LABEL_LEN];
  const char *tp[MAX_LINES + 1];
  int n = 0;
  for (int l = 0; l < nl; l++, n++) {
    opt[n] = PL_LEGEND_LINE;
    lcol[n] = C_LINE0 + l % NUM_LINE_COLORS;
    lsty[n] = lines[l]->style;
    lwid[n] = 2.5;
    escape_text(lines[l]->label, text[n], LABEL_LEN);
  }
  if (shade) {
    opt[n] = PL_LEGEND_COLOR_BOX;
    bcol[n] = C_SHADE;
    bpat[n] = 0;
    bscale[n] = 1.2;
    bwid[n] = 1.0;
    snprintf(text[n], LABEL_LEN, "shift in progress");
    n++;
  }
  for (int i = 0; i < n; i++) {
    tcol[i] = C_FG;
    tp[i] = text[i];
    if (opt[i] == PL_LEGEND_LINE) {
      bcol[i] = bpat[i] = 0;
      bscale[i] = bwid[i] = 0;
    } else {
      lcol[i] = lsty[i] = 0;
      lwid[i] = 0;
    }
  }
  PLFLT w, h;
  /* Outside the viewport, right, centred on the panel: never over data. */
  pllegend(&w, &h, PL_LEGEND_BACKGROUND, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.015, 0.0,
           0.05, C_BG, C_FG, 1, 0, 0, n, opt, 0.8, TEXT_SCALE, 2.2, 0.0, tcol, tp, bcol, bpat,
           bscale, bwid, lcol, lsty, lwid, NULL, NULL, NULL, NULL);
}

static void reference_lines(const panel *p, const plot_labels *lab, double t0, double t1,
                            double lo, double hi) {
  if (p->kind != PANEL_SPEED)
    return;
  plcol0(C_REF);
  plwidth(1.2);
  pllsty(2);
  if (hi >= 100.0) {
    PLFLT x[2] = {t0, t1}, y[2] = {100.0, 100.0};
    plline(2, x, y);
  }
  if (isfinite(lab->t_100) && lab->t_100 >= t0 && lab->t_100 <= t1) {
    PLFLT x[2] = {lab->t_100, lab->t_100}, y[2] = {lo, 100.0};
    plline(2, x, y);
    char text[64];
    snprintf(text, sizeof text, " 0-100 km/h: %.2f s", lab->t_100);
    text_size(0.9);
    plptex(lab->t_100, lo + 0.08 * (hi - lo), 1.0, 0.0, 0.0, text);
    text_size(1.0);
  }
  pllsty(1);
}

/* PLplot has no public measure of a string (plstrl is internal): lengths
 * are estimated from the number of characters. Those of the sans font are on
 * average at most 0.62 of the character height wide. */
static double char_width(void) {
  PLFLT def, ht; /* mm, at the current size */
  plgchr(&def, &ht);
  return 0.62 * ht;
}

/* Characters of UTF-8 text (its lead bytes) in the first `bytes` bytes. */
static long chars_of(const char *s, size_t bytes) {
  long k = 0;
  for (size_t i = 0; i < bytes && s[i]; i++)
    k += ((unsigned char)s[i] & 0xC0) != 0x80;
  return k;
}

/* Smallest relative size a y label is shrunk to; below it, it is shortened. */
#define MIN_LABEL_SIZE 0.7

/* The y label along the panel, shrunk to fit its height. One that would be
 * too small to read is shortened: to its unit, the last "(...)" ("rpm",
 * "mixed units"), else to the names that fit and "…": the legend names
 * every line. */
static void draw_ylabel(const panel *p) {
  PLFLT sx0, sx1, sy0, sy1, vx0, vx1, vy0, vy1;
  plgspa(&sx0, &sx1, &sy0, &sy1);
  plgvpd(&vx0, &vx1, &vy0, &vy1);
  double room = 0.97 * (vy1 - vy0) * (sy1 - sy0) / char_width(); /* characters at size 1 */
  char label[YLABEL_LEN];
  snprintf(label, sizeof label, "%s", p->ylabel);
  size_t n = strlen(label);
  if (chars_of(label, n) > room / MIN_LABEL_SIZE) {
    char *open = strrchr(label, '(');
    if (open && open != label && label[n - 1] == ')') {
      label[n - 1] = '\0';
      memmove(label, open + 1, strlen(open + 1) + 1);
    } else {
      long keep = (long)(room / MIN_LABEL_SIZE) - 3; /* characters before ", …" */
      size_t cut = 0;
      for (long k = 0; label[cut] && k <= keep; cut++)
        k += ((unsigned char)label[cut] & 0xC0) != 0x80;
      while (cut > 0 && ((unsigned char)label[cut] & 0xC0) == 0x80)
        cut--; /* not inside a character */
      label[cut] = '\0';
      char *comma = strrchr(label, ',');
      if (comma && comma != label)
        snprintf(comma, sizeof label - (size_t)(comma - label), ", …");
      else
        snprintf(label + cut, sizeof label - cut, "…");
    }
  }
  long chars = chars_of(label, sizeof label);
  double size = chars > room ? room / (double)chars : 1.0;
  char text[2 * YLABEL_LEN];
  escape_text(label, text, sizeof text);
  text_size(size);
  /* the same distance from the axis at any size (it is in character heights) */
  plmtex("l", 5.8 / size, 0.5, 0.5, text);
  text_size(1.0);
}

/* The right end of the panels (normalized): room on the right for the
 * longest legend text, which starts 0.048 of the page right of the panel. */
static double panels_right(const plot_trace *tr) {
  PLFLT sx0, sx1, sy0, sy1;
  plgspa(&sx0, &sx1, &sy0, &sy1);
  long longest = 0;
  for (int i = 0; i < tr->npanels; i++)
    for (int l = 0; l < tr->panels[i].nlines; l++) {
      const char *label = tr->panels[i].lines[l].label;
      long k = chars_of(label, strlen(label));
      longest = k > longest ? k : longest;
    }
  /* the legend's text is drawn a little larger than the labels */
  double text = 1.15 * (double)longest * char_width() / (sx1 - sx0);
  return fmax(0.5, fmin(0.80, 0.985 - 0.048 - text));
}

static int draw_panel(const plot_trace *tr, const panel *p, const plot_labels *lab, double x1,
                      double y0, double y1, bool bottom, bool shade_legend) {
  const series *lines[MAX_LINES];
  int nl = drawn_lines(tr, p, lines);
  double t0 = tr->t[0], t1 = tr->n > 1 ? tr->t[tr->n - 1] : tr->t[0] + 1.0;
  double lo, hi;
  panel_range(tr, p, lines, nl, &lo, &hi);

  plvpor(0.09, x1, y0, y1);
  plwind(t0, t1, lo, hi);
  shade_shifts(tr, lo, hi);
  plcol0(C_GRID);
  plwidth(0.8);
  double ytick = p->kind == PANEL_GEAR ? 1.0 : 0.0;
  plbox("g", 0.0, 0, "g", ytick, 0);
  reference_lines(p, lab, t0, t1, lo, hi);
  for (int l = 0; l < nl; l++) {
    plcol0(C_LINE0 + l % NUM_LINE_COLORS);
    plwidth(2.0);
    pllsty(lines[l]->style);
    if (lines[l]->steps) {
      if (draw_steps(tr, lines[l]) != 0)
        return -1;
    } else {
      plline((PLINT)tr->n, tr->t, lines[l]->y);
    }
  }
  pllsty(1);
  plcol0(C_FG);
  plwidth(1.0);
  /* f: plain numbers, no "(x10^3)" exponent label above the axis */
  plbox(bottom ? "bcfnst" : "bcst", 0.0, 0, "bcfnstv", ytick, 0);
  draw_ylabel(p);
  if (bottom)
    plmtex("b", 3.3, 0.5, 0.5, "time (s)");
  draw_legend(lines, nl, tr->shifting != NULL && shade_legend);
  return 0;
}

/* plgDevs fills caller-provided arrays of *n entries and sets *n. */
static bool has_device(const char *name) {
  enum { MAX_DEVICES = 128 };
  const char *menu_store[MAX_DEVICES] = {0}, *name_store[MAX_DEVICES] = {0};
  const char **menu = menu_store, **names = name_store;
  int n = MAX_DEVICES;
  plgDevs(&menu, &names, &n);
  for (int i = 0; i < n; i++)
    if (names[i] && strcmp(names[i], name) == 0)
      return true;
  return false;
}

/* True when the image in data is whole: a PNG's last chunk is IEND, an
 * SVG ends with its closing tag. */
static bool image_whole(plot_format fmt, const char *data, size_t len) {
  static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  if (fmt == PLOT_PNG)
    return len > 8 + sizeof png_end && memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0 &&
           memcmp(data + len - sizeof png_end, png_end, sizeof png_end) == 0;
  while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == ' ' || data[len - 1] == '\r'))
    len--;
  return len >= 6 && memcmp(data + len - 6, "</svg>", 6) == 0;
}

int plot_trace_render(const plot_trace *tr, const plot_labels *lab, plot_format fmt,
                      char **data, size_t *len, char *why, size_t n) {
  *data = NULL;
  *len = 0;
  const char *dev = fmt == PLOT_SVG ? "svgcairo" : "pngcairo";
  if (tr->n == 0) {
    snprintf(why, n, "no rows were recorded");
    return -1;
  }
  if (!has_device(dev)) {
    snprintf(why, n, "PLplot has no %s driver (install plplot-driver-cairo)", dev);
    return -1;
  }
  /* The driver writes to this stream (plsfile): the image ends up in memory.
   * The file name "-" keeps PLplot from closing it (plCloseFile closes any
   * other), and from opening a file itself. */
  char *buf = NULL;
  size_t size = 0;
  FILE *mem = open_memstream(&buf, &size);
  if (!mem) {
    snprintf(why, n, "out of memory");
    return -1;
  }
  plsexit(plplot_exit);
  /* Page: 1200 px wide, 230 px per panel plus the title and time axis. */
  const int width = 1200, panel_px = 230, top_px = 90, bottom_px = 70, gap_px = 14;
  int height = top_px + bottom_px + tr->npanels * panel_px;
  plsdev(dev);
  plsfnam("-"); /* first: it clears the stream plsfile sets */
  plsfile(mem);
  plspage(0.0, 0.0, width, height, 0, 0);
  plscmap0n(NUM_COLORS);
  for (int i = 0; i < NUM_COLORS; i++)
    plscol0(i, palette[i][0], palette[i][1], palette[i][2]);
  plinit();
  pladv(0);
  text_size(1.0);

  /* The shading is explained once: next to the gear, else on the top panel. */
  int shade_legend = 0;
  for (int i = tr->npanels - 1; i >= 0; i--)
    if (tr->panels[i].kind == PANEL_GEAR)
      shade_legend = i;
  double x1 = panels_right(tr);
  int rc = 0;
  for (int i = 0; i < tr->npanels && rc == 0; i++) {
    double y1 = 1.0 - (double)(top_px + i * panel_px) / height;
    double y0 = 1.0 - (double)(top_px + (i + 1) * panel_px - gap_px) / height;
    rc = draw_panel(tr, &tr->panels[i], lab, x1, y0, y1, i == tr->npanels - 1, i == shade_legend);
    if (rc == 0 && i == 0) {
      char text[2 * LABEL_LEN + 64];
      plcol0(C_FG);
      if (lab->title) {
        escape_text(lab->title, text, sizeof text);
        text_size(1.35);
        plmtex("t", 3.0, 0.0, 0.0, text);
        text_size(1.0);
      }
      if (lab->subtitle) {
        escape_text(lab->subtitle, text, sizeof text);
        plmtex("t", 1.0, 0.0, 0.0, text);
      }
    }
  }
  plend();
  plsexit(NULL);
  bool written = fclose(mem) == 0;
  if (rc == 0 && !(written && image_whole(fmt, buf, size))) {
    rc = -1;
    snprintf(why, n, "%s", written ? "PLplot's image is incomplete" : "out of memory");
  } else if (rc != 0) {
    snprintf(why, n, "out of memory");
  }
  if (rc != 0) {
    free(buf);
    return -1;
  }
  *data = buf;
  *len = size;
  return 0;
}
