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
 *   wheel slip (%)        every wheel's κ in percent (wheels that never
 *                         slip, i.e. rolling tyres, are left out when
 *                         drawing); percent keeps the tick labels short
 * Shifts (the first gearbox's `shifting`) are shaded on every panel. The
 * rows are recorded during the run at the output interval, at most
 * max_rows of them: longer runs keep every k-th row. */
#include "plot.h"

#include <math.h>
#include <plplot.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(sizeof(PLFLT) == sizeof(double), "PLplot must be built with double precision");

#define MAX_PANELS 6
#define MAX_LINES 6
#define LABEL_LEN 96

enum { PANEL_RPM, PANEL_SPEED, PANEL_GEAR, PANEL_SLIP_RPM, PANEL_WHEEL_SLIP };

/* cmap0 colour indices (set in plot_trace_write). */
enum { C_BG, C_FG, C_GRID, C_SHADE, C_REF, C_LINE0 };
static const int palette[][3] = {
    {255, 255, 255}, /* background */
    {0, 0, 0},       /* axes, text */
    {215, 215, 215}, /* grid */
    {226, 232, 244}, /* shift shading */
    {110, 110, 110}, /* reference lines */
    {31, 119, 180},  /* lines: blue, orange, green, red, purple, brown */
    {255, 127, 14},  {44, 160, 44}, {214, 39, 40}, {148, 103, 189}, {140, 86, 75},
};
enum { NUM_COLORS = sizeof palette / sizeof palette[0], NUM_LINE_COLORS = NUM_COLORS - C_LINE0 };

typedef struct series {
  int id, id_minus; /* value = scale · (signal id − signal id_minus); id_minus may be -1 */
  double scale;
  int style;        /* PLplot line style: 1 solid, 2 dashed */
  char label[LABEL_LEN];
  PLFLT *y;
} series;

typedef struct panel {
  int kind;
  char ylabel[LABEL_LEN];
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

/* Adds a line scale·(block.name − block.minus) to the panel of `kind`. */
static void add_line(plot_trace *tr, int kind, const char *ylabel, const char *block,
                     const char *name, const char *minus, double scale, int style,
                     const char *label) {
  int id = signal_of(tr->sim, block, name);
  int id_minus = minus ? signal_of(tr->sim, block, minus) : -1;
  if (id < 0 || (minus && id_minus < 0))
    return;
  panel *p = add_panel(tr, kind, ylabel);
  if (!p || p->nlines == MAX_LINES)
    return;
  series *s = &p->lines[p->nlines++];
  *s = (series){.id = id, .id_minus = id_minus, .scale = scale, .style = style};
  snprintf(s->label, sizeof s->label, "%s", label);
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
    add_line(tr, PANEL_GEAR, "gear", gearbox, "gear", NULL, 1.0, 1, "gear");
    tr->id_shifting = signal_of(tr->sim, gearbox, "shifting");
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
  for (int i = 0, k = 0; i < dg_graph_block_count(g); i++)
    if (strcmp(dg_graph_block_type(g, i), "wheel") == 0)
      add_line(tr, PANEL_WHEEL_SLIP, "wheel slip κ (%)", dg_graph_block_id(g, i), "slip", NULL,
               100.0, 1 + k++ % 4, dg_graph_block_id(g, i));
}

/* ------------------------------------------------------------------------ */
/* Recording                                                                */

plot_trace *plot_trace_new(const dg_sim *sim, long max_rows, char *why, size_t n) {
  plot_trace *tr = calloc(1, sizeof *tr);
  if (!tr) {
    snprintf(why, n, "out of memory");
    return NULL;
  }
  tr->sim = sim;
  tr->id_shifting = -1;
  tr->stride = 1;
  choose_signals(tr);
  if (tr->npanels == 0) {
    snprintf(why, n,
             "nothing to plot: the graph has no engine, motor, torque source, vehicle, gearbox, "
             "clutch or wheel");
    plot_trace_free(tr);
    return NULL;
  }
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

static void (*abort_hook)(void);

void plot_set_abort_hook(void (*hook)(void)) { abort_hook = hook; }

/* PLplot calls this on a fatal error, then exit()s with the value returned. */
static int plplot_exit(const char *message) {
  fprintf(stderr, "drivegraph sim: plot: %s\n", message ? message : "PLplot failed");
  if (abort_hook)
    abort_hook();
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

static int draw_panel(const plot_trace *tr, const panel *p, const plot_labels *lab, double y0,
                      double y1, bool bottom) {
  const series *lines[MAX_LINES];
  int nl = drawn_lines(tr, p, lines);
  double t0 = tr->t[0], t1 = tr->n > 1 ? tr->t[tr->n - 1] : tr->t[0] + 1.0;
  double lo, hi;
  panel_range(tr, p, lines, nl, &lo, &hi);

  plvpor(0.09, 0.80, y0, y1);
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
    if (p->kind == PANEL_GEAR) {
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
  char ylabel[2 * LABEL_LEN];
  escape_text(p->ylabel, ylabel, sizeof ylabel);
  plmtex("l", 5.8, 0.5, 0.5, ylabel);
  if (bottom)
    plmtex("b", 3.3, 0.5, 0.5, "time (s)");
  draw_legend(lines, nl, tr->shifting != NULL && p->kind == PANEL_GEAR);
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

int plot_trace_write(const plot_trace *tr, const plot_labels *lab, plot_format fmt,
                     const char *file, char *why, size_t n) {
  const char *dev = fmt == PLOT_SVG ? "svgcairo" : "pngcairo";
  if (tr->n == 0) {
    snprintf(why, n, "no rows were recorded");
    return -1;
  }
  if (!has_device(dev)) {
    snprintf(why, n, "PLplot has no %s driver (install plplot-driver-cairo)", dev);
    return -1;
  }
  plsexit(plplot_exit);
  /* Page: 1200 px wide, 230 px per panel plus the title and time axis. */
  const int width = 1200, panel_px = 230, top_px = 90, bottom_px = 70, gap_px = 14;
  int height = top_px + bottom_px + tr->npanels * panel_px;
  plsdev(dev);
  plsfnam(file);
  plspage(0.0, 0.0, width, height, 0, 0);
  plscmap0n(NUM_COLORS);
  for (int i = 0; i < NUM_COLORS; i++)
    plscol0(i, palette[i][0], palette[i][1], palette[i][2]);
  plinit();
  pladv(0);
  text_size(1.0);

  int rc = 0;
  for (int i = 0; i < tr->npanels && rc == 0; i++) {
    double y1 = 1.0 - (double)(top_px + i * panel_px) / height;
    double y0 = 1.0 - (double)(top_px + (i + 1) * panel_px - gap_px) / height;
    rc = draw_panel(tr, &tr->panels[i], lab, y0, y1, i == tr->npanels - 1);
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
  if (rc != 0)
    snprintf(why, n, "out of memory");
  return rc;
}
