/* Importer for FASTSim's vehicle table (FASTSim_py_veh_db.csv: one vehicle
 * a row, 79 columns, list fields such as fc_eff_map written as quoted
 * "[0.10, 0.12, ...]" strings). FASTSim's data only: the model it describes is
 * rebuilt from blocks, following FASTSim's documented conventions and
 * checked against its published results (docs/import.md, "FASTSim
 * vehicles"; tests/test_import_fastsim.c).
 *
 * Reading. The CSV reader (RFC 4180: quoted fields, "" inside quotes, LF or
 * CRLF line ends) keeps each field's line and column, so every problem is
 * reported as FILE:line:column with the column's name and what is
 * expected. Columns are read when the vehicle needs them (a conventional
 * car never reads its motor's columns), each through one entry of the
 * column table below, which says what the column must hold and what it
 * becomes; `drivegraph import fastsim --columns` prints the same table. A
 * cycle given for the driver's trace is read by the cycle loader
 * (lib/run/cycle.c).
 *
 * The graph (docs/import.md has it in full):
 *   conventional  driver -> engine (efficiency over the fraction of
 *                 fc_max_kw, accessories at aux_kw) -> trans (gear of
 *                 trans_eff) -> front_axle -> body, rear_axle -> body
 *   electric      driver -> motor (efficiency over the fraction of
 *                 mc_max_kw) -> trans -> axles -> body; aux (aux_kw) and the
 *                 motor on a bus; battery (ess_max_kwh, ess_max_kw,
 *                 √ess_round_trip_eff each way, min_soc..max_soc)
 * FASTSim's conventional car has no gears: its engine's efficiency depends
 * on the output power alone. So the engine is geared to the wheels at one
 * fixed ratio and runs from 0 rpm with the car (no clutch, no converter:
 * nothing slips, no launch loss FASTSim does not have), the speed never
 * enters its fuel, and its accessories are a power on its fuel, so the car
 * fuels them at rest as FASTSim does.
 *
 * Hybrids (HEV, PHEV and the fuel-cell rows FASTSim files as HEV) are
 * refused: their behaviour is FASTSim's supervisory controller, which no
 * block reproduces. */
#include "import.h"

#include <drivegraph/cycle.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define PI 3.14159265358979323846

/* FASTSim's conventions (docs/import.md, "FASTSim vehicles", with sources). */
#define FS_AIR_DENSITY 1.2 /* kg/m³ */
#define FS_GRAVITY 9.81    /* m/s² */
#define FS_VOLTAGE 360.0   /* V: the battery's constant open-circuit voltage (FASTSim has none) */
/* The fixed ratio from the engine or motor to the wheels: the engine turns
 * at 2000 rpm at 100 km/h, the motor at 6000 rpm (rpm per m/s of road
 * speed, times the wheel radius, gives the ratio). */
#define ENGINE_RPM_AT_100 2000.0
#define MOTOR_RPM_AT_100 6000.0
#define ENGINE_REDLINE_RPM 6000.0
#define MOTOR_MAX_RPM 18000.0
/* FASTSim's regeneration fraction f(v) rises from 0 at rest to max_regen
 * over a few m/s (a logistic in the speed): a stop loses to friction
 * ∫(max_regen − f(v))·m·v dv = m·v*²/6 with v* = REGEN_LOSS_SPEED. The
 * motor's regen torque fades linearly below regen_fade_rpm (road speed
 * v_f); on the brake it regenerates first, so in a stop at deceleration a
 * the friction brakes take over below v* = v_f·a/a_env (a_env the
 * deceleration of full regen torque) and lose the same m·v*²/6 when
 * v_f = v*·a_env/a, placed for the cycles' stops at REGEN_DECEL
 * (docs/import.md). */
#define REGEN_LOSS_SPEED 4.28 /* m/s */
#define REGEN_DECEL 1.3       /* m/s²: fitted to the Bolt's UDDS consumption */

/* FASTSim's fuel converter power fractions, the x axis of every fc_eff_map
 * (not a column of this table; FASTSim's vehicle files carry it as
 * fc_pwr_out_perc). */
static const double fc_pwr_out_perc[12] = {0,    0.005, 0.015, 0.04, 0.06, 0.10,
                                           0.14, 0.20,  0.40,  0.60, 0.80, 1.00};

/* FASTSim's defaults for empty cells (its own file of this table's 2012
 * Ford Fusion, row 29, whose cells are empty: fastsim-2_2012_Ford_Fusion.yaml
 * in fastsim-core): the spark-ignition efficiency map and the motor's power
 * fractions. */
static const double fc_si_default[12] = {0.10, 0.12, 0.16, 0.22, 0.28, 0.33,
                                         0.35, 0.36, 0.35, 0.34, 0.32, 0.30};
static const double mc_pwr_out_perc_default[11] = {0,    0.02, 0.04, 0.06, 0.08, 0.10,
                                                   0.20, 0.40, 0.60, 0.80, 1.00};

/* FASTSim's motor maps for a row without mc_eff_map: the baseline maps of a
 * small (7.5 kW) and a large (75 kW) motor over mc_pwr_out_perc, blended
 * linearly in mc_max_kw and scaled by 0.95 over the large map's peak 0.94
 * (its "modern" maximum): FASTSim's motor energy over the benchmark's
 * cycles (mcElecKjInAch) to 0.1 % for motors of 75 kW and more and 0.3 %
 * for the 49 kW i-MiEV (scaling the blend to a peak of 0.95: 0.7 %). */
static const double mc_small_baseline[11] = {0.12, 0.16, 0.21, 0.29, 0.35, 0.42,
                                             0.75, 0.92, 0.93, 0.93, 0.92};
static const double mc_large_baseline[11] = {0.83, 0.85, 0.87, 0.89, 0.90, 0.91,
                                             0.93, 0.94, 0.94, 0.93, 0.92};
#define MC_SMALL_KW 7.5
#define MC_LARGE_KW 75.0
#define MC_MODERN_MAX 0.95

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */

typedef struct csv_cell {
  const char *s; /* unquoted, NUL-terminated (in the table's buffer) */
  size_t at;     /* its offset in the buffer, while the buffer grows */
  int line, col; /* where the field starts in the file, 1-based */
  bool quoted;
} csv_cell;

typedef struct csv_table {
  char *buf;       /* the fields' text, unquoted */
  csv_cell *cells; /* rows × ncols, row 0 the header */
  int ncols, nrows;
  int *row_line; /* the line each row starts on */
} csv_table;

static void csv_free(csv_table *t) {
  free(t->buf);
  free(t->cells);
  free(t->row_line);
  memset(t, 0, sizeof *t);
}

static const csv_cell *csv_at(const csv_table *t, int row, int col) {
  return &t->cells[(size_t)row * (size_t)t->ncols + (size_t)col];
}

/* Splits text (len bytes) into rows of fields; every row must have as many
 * fields as the header. Blank lines are skipped. Returns false with err
 * filled. */
static bool csv_parse(const char *text, size_t len, const char *file, csv_table *t, dg_error *err) {
  memset(t, 0, sizeof *t);
  if (memchr(text, '\0', len)) {
    dgp_error_set(err, DG_ERR_SYNTAX, file, "", "file contains a NUL byte; expected CSV text");
    return false;
  }
  size_t bad = dgp_utf8_invalid_at(text, len);
  if (bad < len) {
    int bline = 1, bcol = 1;
    for (size_t i = 0; i < bad; i++) {
      if (text[i] == '\n') {
        bline++;
        bcol = 1;
      } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
        bcol++;
      }
    }
    dgp_error_set(err, DG_ERR_SYNTAX, file, "", "byte 0x%02X is not UTF-8; expected UTF-8 CSV text",
                  (unsigned char)text[bad]);
    err->line = bline;
    err->column = bcol;
    return false;
  }
  size_t pos = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
    pos = 3; /* a UTF-8 byte order mark */
  t->buf = malloc(len + 1);
  size_t cap_cells = 64, cap_rows = 16, n_cells = 0;
  t->cells = malloc(cap_cells * sizeof *t->cells);
  t->row_line = malloc(cap_rows * sizeof *t->row_line);
  if (!t->buf || !t->cells || !t->row_line)
    goto nomem;
  size_t out = 0;
  int line = 1, col = 1, row_fields = 0;
  bool row_open = false;
  while (pos < len || row_open) {
    if (!row_open) {
      /* skip blank lines */
      if (text[pos] == '\n' || text[pos] == '\r') {
        if (text[pos] == '\r' && pos + 1 < len && text[pos + 1] == '\n')
          pos++;
        pos++;
        line++;
        col = 1;
        continue;
      }
      if ((size_t)t->nrows == cap_rows) {
        int *r = realloc(t->row_line, 2 * cap_rows * sizeof *r);
        if (!r)
          goto nomem;
        t->row_line = r;
        cap_rows *= 2;
      }
      t->row_line[t->nrows] = line;
      row_open = true;
      row_fields = 0;
    }
    /* one field */
    if (n_cells == cap_cells) {
      csv_cell *c = realloc(t->cells, 2 * cap_cells * sizeof *c);
      if (!c)
        goto nomem;
      t->cells = c;
      cap_cells *= 2;
    }
    csv_cell *cell = &t->cells[n_cells++];
    cell->s = NULL;
    cell->line = line;
    cell->col = col;
    cell->quoted = pos < len && text[pos] == '"';
    size_t start = out;
    if (cell->quoted) {
      int qline = line, qcol = col;
      pos++;
      col++;
      for (;;) {
        if (pos >= len) {
          dgp_error_set(err, DG_ERR_SYNTAX, file, "",
                        "unterminated quoted field; expected a closing quote");
          err->line = qline;
          err->column = qcol;
          goto fail;
        }
        char ch = text[pos];
        if (ch == '"') {
          if (pos + 1 < len && text[pos + 1] == '"') {
            t->buf[out++] = '"';
            pos += 2;
            col += 2;
            continue;
          }
          pos++;
          col++;
          break;
        }
        if (ch == '\n') {
          line++;
          col = 1;
        } else {
          col++;
        }
        t->buf[out++] = ch;
        pos++;
      }
      if (pos < len && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r') {
        dgp_error_set(err, DG_ERR_SYNTAX, file, "",
                      "text after a closing quote; expected a comma or the end of the line");
        err->line = line;
        err->column = col;
        goto fail;
      }
    } else {
      while (pos < len && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r') {
        if (text[pos] == '"') {
          dgp_error_set(err, DG_ERR_SYNTAX, file, "",
                        "a quote inside an unquoted field; quote the whole field");
          err->line = line;
          err->column = col;
          goto fail;
        }
        t->buf[out++] = text[pos++];
        col++;
      }
    }
    t->buf[out++] = '\0';
    cell->at = start;
    row_fields++;
    if (pos < len && text[pos] == ',') {
      pos++;
      col++;
      continue;
    }
    /* end of the row */
    if (t->nrows == 0) {
      t->ncols = row_fields;
    } else if (row_fields != t->ncols) {
      dgp_error_set(err, DG_ERR_SYNTAX, file, "",
                    "this row has %d field%s, the header %d; expected one field per column",
                    row_fields, row_fields == 1 ? "" : "s", t->ncols);
      err->line = t->row_line[t->nrows];
      err->column = 1;
      goto fail;
    }
    t->nrows++;
    row_open = false;
    if (pos < len) {
      if (text[pos] == '\r' && pos + 1 < len && text[pos + 1] == '\n')
        pos++;
      pos++;
      line++;
      col = 1;
    }
  }
  if (t->nrows == 0) {
    dgp_error_set(err, DG_ERR_SYNTAX, file, "", "empty file; expected a header line and rows");
    goto fail;
  }
  for (size_t i = 0; i < n_cells; i++)
    t->cells[i].s = t->buf + t->cells[i].at;
  return true;
nomem:
  dgp_error_set(err, DG_ERR_NOMEM, file, "", "out of memory");
fail:
  csv_free(t);
  return false;
}

/* Reads a whole file; NULL with err filled. */
static char *read_file(const char *path, size_t *len, dg_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    dgp_error_set(err, DG_ERR_IO, path, "", "cannot open: %s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap || n > dg_input_size_limit())
      break;
    char *b = realloc(buf, 2 * cap);
    if (!b) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = b;
    cap *= 2;
  }
  bool bad = ferror(f);
  fclose(f);
  if (!buf) {
    dgp_error_set(err, DG_ERR_NOMEM, path, "", "out of memory");
    return NULL;
  }
  if (bad) {
    free(buf);
    dgp_error_set(err, DG_ERR_IO, path, "", "read error");
    return NULL;
  }
  if (n > dg_input_size_limit()) {
    free(buf);
    dgp_error_set(err, DG_ERR_IO, path, "", "%zu bytes, over the input size limit of %zu", n,
                  dg_input_size_limit());
    return NULL;
  }
  *len = n;
  return buf;
}

static int csv_column(const csv_table *t, const char *name) {
  for (int c = 0; c < t->ncols; c++)
    if (strcmp(csv_at(t, 0, c)->s, name) == 0)
      return c;
  return -1;
}

/* ------------------------------------------------------------------------ */
/* The columns                                                              */

typedef enum { FS_NUMBER, FS_INTEGER, FS_LIST, FS_TEXT, FS_BOOL } fs_kind;

/* Range flags. */
enum { R_MIN = 1, R_MIN_EXCL = 2, R_MAX = 4 };

typedef struct fs_column {
  const char *name;
  fs_kind kind;
  unsigned range;
  double min, max;
  int len;         /* FS_LIST: the number of entries */
  const char *use; /* what it becomes (docs, --columns) */
} fs_column;

enum {
  C_SELECTION,
  C_NAME,
  C_PT_TYPE,
  C_DRAG_COEF,
  C_FRONTAL_AREA,
  C_GLIDER_KG,
  C_VEH_CG,
  C_DRIVE_AXLE_FRAC,
  C_WHEEL_BASE,
  C_CARGO_KG,
  C_OVERRIDE_KG,
  C_FS_MAX_KW,
  C_FS_KWH,
  C_FS_KWH_PER_KG,
  C_FC_MAX_KW,
  C_FC_EFF_MAP,
  C_FC_EFF_TYPE,
  C_FC_BASE_KG,
  C_FC_KW_PER_KG,
  C_MC_PWR_OUT_PERC,
  C_MC_MAX_KW,
  C_MC_PE_KG_PER_KW,
  C_MC_PE_BASE_KG,
  C_ESS_MAX_KW,
  C_ESS_MAX_KWH,
  C_ESS_KG_PER_KWH,
  C_ESS_BASE_KG,
  C_ESS_RTE,
  C_WHEEL_INERTIA,
  C_NUM_WHEELS,
  C_WHEEL_RR,
  C_WHEEL_RADIUS,
  C_WHEEL_FRIC,
  C_MIN_SOC,
  C_MAX_SOC,
  C_ALT_EFF,
  C_AUX_KW,
  C_TRANS_KG,
  C_TRANS_EFF,
  C_COMP_MASS_MULT,
  C_MAX_REGEN,
  C_STOP_START,
  C_IDLE_FC_KW,
  C_MC_EFF_MAP,
  NUM_COLUMNS
};

#define NUM(n, r, lo, hi, u) \
  { .name = n, .kind = FS_NUMBER, .range = r, .min = lo, .max = hi, .use = u }

static const fs_column columns[NUM_COLUMNS] = {
    [C_SELECTION] = {.name = "selection",
                     .kind = FS_INTEGER,
                     .range = R_MIN,
                     .min = 0,
                     .use = "the row's number, `--row N`"},
    [C_NAME] = {.name = "Scenario name", .kind = FS_TEXT, .use = "the graph's name, `--name`"},
    [C_PT_TYPE] = {.name = "veh_pt_type",
                   .kind = FS_TEXT,
                   .use = "Conv: engine graph; BEV: motor, bus and battery; HEV, PHEV refused"},
    [C_DRAG_COEF] = NUM("drag_coef", R_MIN_EXCL, 0, 0, "body `cda` = drag_coef x frontal_area_m2"),
    [C_FRONTAL_AREA] = NUM("frontal_area_m2", R_MIN_EXCL, 0, 0, "body `cda`"),
    [C_GLIDER_KG] = NUM("glider_kg", R_MIN, 0, 0, "body `mass` (FASTSim's mass rule)"),
    [C_VEH_CG] = NUM("veh_cg_m", 0, 0, 0, "body `cg_height` (its magnitude)"),
    [C_DRIVE_AXLE_FRAC] = NUM("drive_axle_weight_frac", R_MIN_EXCL | R_MAX, 0, 1,
                              "front (driven) axle's static load: body `cg_to_front`; the "
                              "traction limit"),
    [C_WHEEL_BASE] = NUM("wheel_base_m", R_MIN_EXCL, 0, 0, "body `wheelbase`"),
    [C_CARGO_KG] = NUM("cargo_kg", R_MIN, 0, 0, "body `mass`"),
    [C_OVERRIDE_KG] =
        NUM("veh_override_kg", R_MIN_EXCL, 0, 0, "body `mass` when given (else the mass rule)"),
    [C_FS_MAX_KW] = NUM("fs_max_kw", R_MIN, 0, 0, "mass rule: the fuel store counts when > 0"),
    [C_FS_KWH] = NUM("fs_kwh", R_MIN, 0, 0, "mass rule: fuel store"),
    [C_FS_KWH_PER_KG] = NUM("fs_kwh_per_kg", R_MIN, 0, 0, "mass rule: fuel store"),
    [C_FC_MAX_KW] =
        NUM("fc_max_kw", R_MIN_EXCL, 0, 0, "engine `rated_power` and full load (power limit)"),
    [C_FC_EFF_MAP] = {.name = "fc_eff_map",
                      .kind = FS_LIST,
                      .range = R_MIN_EXCL | R_MAX,
                      .min = 0,
                      .max = 1,
                      .len = 12,
                      .use = "engine `efficiency` over FASTSim's 12 power fractions "
                             "(fc_pwr_out_perc); empty: see fc_eff_type"},
    [C_FC_EFF_TYPE] = {.name = "fc_eff_type",
                       .kind = FS_TEXT,
                       .use = "with an empty fc_eff_map: SI takes FASTSim's spark-ignition map"},
    [C_FC_BASE_KG] = NUM("fc_base_kg", R_MIN, 0, 0, "mass rule: engine"),
    [C_FC_KW_PER_KG] = NUM("fc_kw_per_kg", R_MIN_EXCL, 0, 0, "mass rule: engine"),
    [C_MC_PWR_OUT_PERC] = {.name = "mc_pwr_out_perc",
                           .kind = FS_LIST,
                           .range = R_MIN | R_MAX,
                           .min = 0,
                           .max = 1,
                           .len = 11,
                           .use = "motor `efficiency_power` power fractions (empty: "
                                  "FASTSim's 0, 0.02, ... 1)"},
    [C_MC_MAX_KW] =
        NUM("mc_max_kw", R_MIN_EXCL, 0, 0, "motor `max_power`, `max_regen_power`; mass rule"),
    [C_MC_PE_KG_PER_KW] = NUM("mc_pe_kg_per_kw", R_MIN, 0, 0, "mass rule: motor"),
    [C_MC_PE_BASE_KG] = NUM("mc_pe_base_kg", R_MIN, 0, 0, "mass rule: motor"),
    [C_ESS_MAX_KW] =
        NUM("ess_max_kw", R_MIN_EXCL, 0, 0, "battery `max_discharge_power`, `max_charge_power`"),
    [C_ESS_MAX_KWH] =
        NUM("ess_max_kwh", R_MIN_EXCL, 0, 0, "battery `capacity` (at 360 V); mass rule"),
    [C_ESS_KG_PER_KWH] = NUM("ess_kg_per_kwh", R_MIN, 0, 0, "mass rule: battery"),
    [C_ESS_BASE_KG] = NUM("ess_base_kg", R_MIN, 0, 0, "mass rule: battery"),
    [C_ESS_RTE] = NUM("ess_round_trip_eff", R_MIN_EXCL | R_MAX, 0, 1,
                      "battery `efficiency` = its square root (each way)"),
    [C_WHEEL_INERTIA] = NUM("wheel_inertia_kg_m2", R_MIN, 0, 0,
                            "axles' `inertia`: x num_wheels, half on each axle"),
    [C_NUM_WHEELS] = {.name = "num_wheels",
                      .kind = FS_INTEGER,
                      .range = R_MIN,
                      .min = 1,
                      .use = "axles' `inertia`"},
    [C_WHEEL_RR] = NUM("wheel_rr_coef", R_MIN, 0, 0, "body `rolling_resistance` (g = 9.81)"),
    [C_WHEEL_RADIUS] = NUM("wheel_radius_m", R_MIN_EXCL, 0, 0, "axles' `radius`"),
    [C_WHEEL_FRIC] =
        NUM("wheel_coef_of_fric", R_MIN_EXCL, 0, 0, "traction limit: full-load torque, brakes"),
    [C_MIN_SOC] = NUM("min_soc", R_MIN | R_MAX, 0, 1, "battery `soc_min`"),
    [C_MAX_SOC] = NUM("max_soc", R_MIN_EXCL | R_MAX, 0, 1, "battery `soc_max` and `initial_soc`"),
    [C_ALT_EFF] = NUM("alt_eff", R_MIN_EXCL | R_MAX, 0, 1,
                      "conventional: engine `accessory_power` = aux_kw / alt_eff"),
    [C_AUX_KW] = NUM("aux_kw", R_MIN, 0, 0,
                     "engine `accessory_power` (conventional), `aux` load (electric)"),
    [C_TRANS_KG] = NUM("trans_kg", R_MIN, 0, 0, "mass rule"),
    [C_TRANS_EFF] = NUM("trans_eff", R_MIN_EXCL | R_MAX, 0, 1, "`trans` gear `efficiency`"),
    [C_COMP_MASS_MULT] = NUM("comp_mass_multiplier", R_MIN_EXCL, 0, 0, "mass rule"),
    [C_MAX_REGEN] = NUM("max_regen", R_MIN | R_MAX, 0, 1,
                        "electric: the most of the braking the motor regenerates (the rear axle's "
                        "brake takes the rest; 0: friction only)"),
    [C_STOP_START] = {.name = "stop_start",
                      .kind = FS_BOOL,
                      .use = "TRUE: a warning (the graph's engine runs at rest)"},
    [C_IDLE_FC_KW] = NUM("idle_fc_kw", R_MIN, 0, 0,
                         "not used: a conventional car's fuel at rest is its accessories'"),
    [C_MC_EFF_MAP] = {.name = "mc_eff_map",
                      .kind = FS_LIST,
                      .range = R_MIN_EXCL | R_MAX,
                      .min = 0,
                      .max = 1,
                      .len = 11,
                      .use = "motor `efficiency_power` (empty: FASTSim's baseline maps "
                             "blended by mc_max_kw)"},
};

int dg_import_fastsim_column(int index, const char **name, const char **use) {
  if (index < 0 || index >= NUM_COLUMNS)
    return 0;
  if (name)
    *name = columns[index].name;
  if (use)
    *use = columns[index].use;
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Reading a row                                                            */

typedef struct fs_ctx {
  const char *file;
  const csv_table *t;
  int row;              /* the vehicle's row in t */
  int map[NUM_COLUMNS]; /* column index in the file, −1 absent */
  dg_error *err;
  bool failed;
  dg_diag_fn notes;
  void *user;
} fs_ctx;

static void fs_fail_at(fs_ctx *c, int line, int col, const char *fmt, ...) DG_PRINTF(4, 5);
static void fs_fail_at(fs_ctx *c, int line, int col, const char *fmt, ...) {
  if (c->failed)
    return;
  c->failed = true;
  char msg[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dgp_error_set(c->err, DG_ERR_SCHEMA, c->file, "", "%s", msg);
  if (c->err) {
    c->err->line = line;
    c->err->column = col;
  }
}

static void fs_note(fs_ctx *c, int column, bool warning, const char *fmt, ...) DG_PRINTF(4, 5);
static void fs_note(fs_ctx *c, int column, bool warning, const char *fmt, ...) {
  char msg[DG_ERROR_TEXT_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  int line = c->t->row_line[c->row], col = 1;
  if (column >= 0 && c->map[column] >= 0) {
    const csv_cell *cell = csv_at(c->t, c->row, c->map[column]);
    line = cell->line;
    col = cell->col;
  }
  dgp_import_notify(c->notes, c->user, c->file, line, col, warning, "%s", msg);
}

static const char *kind_text(const fs_column *d) {
  switch (d->kind) {
  case FS_INTEGER:
    return "an integer";
  case FS_LIST:
    return "a list of numbers \"[a, b, ...]\"";
  case FS_BOOL:
    return "TRUE or FALSE";
  case FS_TEXT:
    return "text";
  default:
    return "a number";
  }
}

static void range_text(const fs_column *d, char *buf, size_t size) {
  buf[0] = '\0';
  if (d->range & R_MIN_EXCL)
    snprintf(buf, size, "> %g", d->min);
  else if (d->range & R_MIN)
    snprintf(buf, size, ">= %g", d->min);
  if (d->range & R_MAX) {
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s<= %g", n ? " and " : "", d->max);
  }
}

static bool in_range(const fs_column *d, double x) {
  if ((d->range & R_MIN_EXCL) && !(x > d->min))
    return false;
  if ((d->range & R_MIN) && !(x >= d->min))
    return false;
  if ((d->range & R_MAX) && !(x <= d->max))
    return false;
  return isfinite(x);
}

/* The cell of column k in the vehicle's row, or NULL (failing, when
 * `required`) when the file has no such column or the cell is blank. */
static const csv_cell *fs_cell(fs_ctx *c, int k, bool required, const char *why) {
  if (c->failed)
    return NULL;
  const fs_column *d = &columns[k];
  if (c->map[k] < 0) {
    if (required)
      fs_fail_at(c, 1, 1, "no column \"%s\" in the header; expected it (%s)", d->name,
                 why ? why : d->use);
    return NULL;
  }
  const csv_cell *cell = csv_at(c->t, c->row, c->map[k]);
  const char *s = cell->s;
  while (*s == ' ' || *s == '\t')
    s++;
  if (*s == '\0') {
    if (required) {
      char r[64];
      range_text(d, r, sizeof r);
      fs_fail_at(c, cell->line, cell->col, "%s: empty; expected %s%s%s (%s)", d->name, kind_text(d),
                 r[0] ? " " : "", r, why ? why : d->use);
    }
    return NULL;
  }
  return cell;
}

/* Parses one number at s (leading and trailing blanks allowed up to `end`
 * characters); false when it is not one. */
static bool parse_number(const char *s, size_t n, double *out) {
  char tmp[64];
  while (n > 0 && (*s == ' ' || *s == '\t')) {
    s++;
    n--;
  }
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    n--;
  if (n == 0 || n >= sizeof tmp)
    return false;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  char *end;
  errno = 0;
  double v = strtod(tmp, &end);
  if (*end != '\0' || errno == ERANGE || !isfinite(v))
    return false;
  /* strtod takes "nan", "inf", hex: only decimal numbers are data here */
  for (const char *p = tmp; *p; p++)
    if (!strchr("0123456789+-.eE", *p))
      return false;
  *out = v;
  return true;
}

static void quote_text(const char *s, char *buf, size_t size) {
  size_t n = strlen(s);
  if (n + 3 <= size)
    snprintf(buf, size, "\"%s\"", s);
  else
    snprintf(buf, size, "\"%.*s...\"", (int)(size > 8 ? size - 8 : 0), s);
}

/* Column k as a number (or integer). Blank: *out = def and false (failing
 * when required). */
static bool fs_num(fs_ctx *c, int k, bool required, const char *why, double def, double *out) {
  *out = def;
  const csv_cell *cell = fs_cell(c, k, required, why);
  if (!cell)
    return false;
  const fs_column *d = &columns[k];
  double v;
  char r[64], q[96];
  range_text(d, r, sizeof r);
  if (!parse_number(cell->s, strlen(cell->s), &v) ||
      (d->kind == FS_INTEGER && (v != floor(v) || fabs(v) > 1e9))) {
    quote_text(cell->s, q, sizeof q);
    fs_fail_at(c, cell->line, cell->col, "%s: expected %s%s%s, got %s (%s)", d->name, kind_text(d),
               r[0] ? " " : "", r, q, why ? why : d->use);
    return false;
  }
  if (!in_range(d, v)) {
    fs_fail_at(c, cell->line, cell->col, "%s: must be %s, got %g (%s)", d->name, r, v,
               why ? why : d->use);
    return false;
  }
  *out = v;
  return true;
}

/* Column k as a list "[a, b, ...]" of exactly columns[k].len numbers. */
static bool fs_list(fs_ctx *c, int k, bool required, double *out) {
  const csv_cell *cell = fs_cell(c, k, required, NULL);
  if (!cell)
    return false;
  const fs_column *d = &columns[k];
  const char *s = cell->s;
  int off = cell->quoted ? 1 : 0; /* the text starts after the quote */
  size_t i = 0, n = strlen(s);
  while (i < n && (s[i] == ' ' || s[i] == '\t'))
    i++;
  if (s[i] != '[' || n == 0) {
    fs_fail_at(c, cell->line, cell->col + off + (int)i, "%s: expected %s of %d, got %.40s", d->name,
               kind_text(d), d->len, s);
    return false;
  }
  size_t close = n;
  while (close > 0 && s[close - 1] != ']')
    close--;
  if (close == 0) {
    fs_fail_at(c, cell->line, cell->col + off + (int)n, "%s: missing the closing ']'", d->name);
    return false;
  }
  for (size_t j = close; j < n; j++)
    if (s[j] != ' ' && s[j] != '\t') {
      fs_fail_at(c, cell->line, cell->col + off + (int)j, "%s: text after the closing ']'",
                 d->name);
      return false;
    }
  close--; /* at ']' */
  int count = 0;
  size_t p = i + 1;
  char r[64];
  range_text(d, r, sizeof r);
  for (;;) {
    size_t q = p;
    while (q < close && s[q] != ',')
      q++;
    double v;
    while (p < q && (s[p] == ' ' || s[p] == '\t'))
      p++;
    if (count == d->len) {
      fs_fail_at(c, cell->line, cell->col + off + (int)p, "%s: more than %d entries; expected %d",
                 d->name, d->len, d->len);
      return false;
    }
    if (!parse_number(s + p, q - p, &v)) {
      fs_fail_at(c, cell->line, cell->col + off + (int)p,
                 "%s[%d]: expected a number %s, got \"%.*s\"", d->name, count, r,
                 (int)(q - p > 30 ? 30 : q - p), s + p);
      return false;
    }
    if (!in_range(d, v)) {
      fs_fail_at(c, cell->line, cell->col + off + (int)p, "%s[%d]: must be %s, got %g", d->name,
                 count, r, v);
      return false;
    }
    out[count++] = v;
    if (q >= close)
      break;
    p = q + 1;
  }
  if (count != d->len) {
    fs_fail_at(c, cell->line, cell->col + off, "%s: %d entries; expected %d (%s)", d->name, count,
               d->len, d->use);
    return false;
  }
  return true;
}

static bool fs_bool(fs_ctx *c, int k, bool *out) {
  *out = false;
  const csv_cell *cell = fs_cell(c, k, false, NULL);
  if (!cell)
    return false;
  if (strcasecmp(cell->s, "TRUE") == 0 || strcmp(cell->s, "1") == 0)
    *out = true;
  else if (!(strcasecmp(cell->s, "FALSE") == 0 || strcmp(cell->s, "0") == 0)) {
    char q[96];
    quote_text(cell->s, q, sizeof q);
    fs_fail_at(c, cell->line, cell->col, "%s: expected TRUE or FALSE, got %s", columns[k].name, q);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------------------ */
/* The vehicle                                                              */

typedef enum { PT_CONV, PT_BEV } fs_pt;

typedef struct fs_vehicle {
  const char *name;
  int selection;
  fs_pt pt;
  double mass, cda, crr, cg_height, drive_frac, wheelbase;
  double wheel_radius, wheel_inertia_total, mu;
  double trans_eff, aux_w;
  /* conventional */
  double fc_max_w, fc_eff[12], accessory_w;
  bool stop_start;
  /* electric */
  double mc_max_w, mc_x[11], mc_eff[11], max_regen;
  double ess_max_w, ess_kwh, ess_eta, soc_min, soc_max;
} fs_vehicle;

/* FASTSim's vehicle mass from its components (or veh_override_kg):
 *   cargo + glider + trans_kg · m
 *   + (fc_max_kw / fc_kw_per_kg + fc_base_kg) · m          when fc_max_kw > 0
 *   + fs_kwh / fs_kwh_per_kg · m                           when fs_max_kw > 0
 *   + (mc_pe_base_kg + mc_pe_kg_per_kw · mc_max_kw) · m     when mc_max_kw > 0
 *   + (ess_base_kg + ess_kg_per_kwh · ess_max_kwh) · m      when ess_max_kwh > 0
 * with m = comp_mass_multiplier. */
static double fs_mass(fs_ctx *c, const fs_vehicle *v) {
  double over;
  if (fs_num(c, C_OVERRIDE_KG, false, NULL, 0.0, &over)) {
    fs_note(c, C_OVERRIDE_KG, false, "mass %g kg from veh_override_kg", over);
    return over;
  }
  double m, glider, cargo, trans, x, y;
  fs_num(c, C_COMP_MASS_MULT, true, "the mass rule, without veh_override_kg", 0, &m);
  fs_num(c, C_GLIDER_KG, true, "the mass rule, without veh_override_kg", 0, &glider);
  fs_num(c, C_CARGO_KG, true, "the mass rule, without veh_override_kg", 0, &cargo);
  fs_num(c, C_TRANS_KG, true, "the mass rule, without veh_override_kg", 0, &trans);
  double mass = cargo + glider + trans * m;
  if (v->pt == PT_CONV) {
    fs_num(c, C_FC_KW_PER_KG, true, "the engine's mass, without veh_override_kg", 0, &x);
    fs_num(c, C_FC_BASE_KG, true, "the engine's mass, without veh_override_kg", 0, &y);
    if (x > 0.0)
      mass += (v->fc_max_w / 1e3 / x + y) * m;
    double fs_kw, fs_kwh;
    fs_num(c, C_FS_MAX_KW, true, "the fuel store's mass, without veh_override_kg", 0, &fs_kw);
    if (fs_kw > 0.0) {
      fs_num(c, C_FS_KWH, true, "the fuel store's mass, without veh_override_kg", 0, &fs_kwh);
      fs_num(c, C_FS_KWH_PER_KG, true, "the fuel store's mass, without veh_override_kg", 0, &x);
      if (fs_kwh > 0.0 && !c->failed && !(x > 0.0)) {
        const csv_cell *cell = fs_cell(c, C_FS_KWH_PER_KG, true, NULL);
        fs_fail_at(c, cell->line, cell->col,
                   "fs_kwh_per_kg: must be > 0 with fs_kwh %g > 0 (the mass rule)", fs_kwh);
      }
      if (x > 0.0)
        mass += fs_kwh / x * m;
    }
  } else {
    fs_num(c, C_MC_PE_KG_PER_KW, true, "the motor's mass, without veh_override_kg", 0, &x);
    fs_num(c, C_MC_PE_BASE_KG, true, "the motor's mass, without veh_override_kg", 0, &y);
    mass += (y + x * v->mc_max_w / 1e3) * m;
    fs_num(c, C_ESS_KG_PER_KWH, true, "the battery's mass, without veh_override_kg", 0, &x);
    fs_num(c, C_ESS_BASE_KG, true, "the battery's mass, without veh_override_kg", 0, &y);
    mass += (y + x * v->ess_kwh) * m;
  }
  if (!c->failed && !(mass > 0.0))
    fs_fail_at(c, c->t->row_line[c->row], 1,
               "the mass rule gives %g kg; expected a positive mass (give veh_override_kg)", mass);
  return mass;
}

/* The motor's map for a row without mc_eff_map. */
static void mc_default_map(double max_kw, double *eff) {
  double f = (max_kw - MC_SMALL_KW) / (MC_LARGE_KW - MC_SMALL_KW);
  f = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
  double peak = 0.0;
  for (int i = 0; i < 11; i++)
    peak = mc_large_baseline[i] > peak ? mc_large_baseline[i] : peak;
  for (int i = 0; i < 11; i++)
    eff[i] = (mc_small_baseline[i] + f * (mc_large_baseline[i] - mc_small_baseline[i])) *
             MC_MODERN_MAX / peak;
}

static void fs_read(fs_ctx *c, fs_vehicle *v) {
  const csv_cell *pt = fs_cell(c, C_PT_TYPE, true, NULL);
  if (!pt)
    return;
  if (strcasecmp(pt->s, "Conv") == 0) {
    v->pt = PT_CONV;
  } else if (strcasecmp(pt->s, "BEV") == 0) {
    v->pt = PT_BEV;
  } else if (strcasecmp(pt->s, "HEV") == 0 || strcasecmp(pt->s, "PHEV") == 0) {
    fs_fail_at(c, pt->line, pt->col,
               "veh_pt_type: %s: hybrids are not imported: a FASTSim hybrid is its supervisory "
               "controller (engine on and off, the battery's charge held), which no block "
               "reproduces; Conv and BEV rows import",
               pt->s);
    return;
  } else {
    char q[96];
    quote_text(pt->s, q, sizeof q);
    fs_fail_at(c, pt->line, pt->col, "veh_pt_type: expected Conv, BEV, HEV or PHEV, got %s", q);
    return;
  }
  double x, y;
  fs_num(c, C_DRAG_COEF, true, NULL, 0, &x);
  fs_num(c, C_FRONTAL_AREA, true, NULL, 0, &y);
  v->cda = x * y;
  fs_num(c, C_WHEEL_RR, true, NULL, 0, &v->crr);
  fs_num(c, C_WHEEL_RADIUS, true, NULL, 0, &v->wheel_radius);
  fs_num(c, C_WHEEL_INERTIA, true, NULL, 0, &x);
  fs_num(c, C_NUM_WHEELS, true, NULL, 0, &y);
  v->wheel_inertia_total = x * y;
  fs_num(c, C_WHEEL_FRIC, true, NULL, 0, &v->mu);
  fs_num(c, C_VEH_CG, true, NULL, 0, &x);
  v->cg_height = fabs(x);
  fs_num(c, C_DRIVE_AXLE_FRAC, true, NULL, 0, &v->drive_frac);
  fs_num(c, C_WHEEL_BASE, true, NULL, 0, &v->wheelbase);
  fs_num(c, C_TRANS_EFF, true, NULL, 0, &v->trans_eff);
  fs_num(c, C_AUX_KW, true, NULL, 0, &x);
  v->aux_w = 1e3 * x;
  if (v->pt == PT_CONV) {
    fs_num(c, C_FC_MAX_KW, true, "a conventional car's engine", 0, &x);
    v->fc_max_w = 1e3 * x;
    if (!fs_list(c, C_FC_EFF_MAP, false, v->fc_eff) && !c->failed) {
      /* FASTSim fills an empty map from its default for the engine type;
       * the spark-ignition one is in FASTSim's own file of this table's
       * 2012 Ford Fusion (row 29, an empty map): the others are not here */
      const csv_cell *type = fs_cell(c, C_FC_EFF_TYPE, false, NULL);
      const csv_cell *map = c->map[C_FC_EFF_MAP] >= 0 ? csv_at(c->t, c->row, c->map[C_FC_EFF_MAP])
                                                      : NULL;
      if (type && map && strcasecmp(type->s, "SI") == 0) {
        memcpy(v->fc_eff, fc_si_default, sizeof fc_si_default);
        fs_note(c, C_FC_EFF_MAP, false,
                "fc_eff_map empty: FASTSim's spark-ignition (SI) map, as FASTSim fills it");
      } else if (map) {
        fs_fail_at(c, map->line, map->col,
                   "fc_eff_map: empty; FASTSim fills it from its default map for fc_eff_type "
                   "%s, which this table does not carry: give the 12 efficiencies",
                   type ? type->s : "(none)");
      } else {
        fs_list(c, C_FC_EFF_MAP, true, v->fc_eff); /* reports the missing column */
      }
    }
    fs_num(c, C_ALT_EFF, false, NULL, 1.0, &x);
    v->accessory_w = v->aux_w / x;
    if (fs_bool(c, C_STOP_START, &v->stop_start) && v->stop_start)
      fs_note(c, C_STOP_START, true,
              "stop_start: FASTSim turns this engine off at rest; the graph's engine fuels its "
              "accessories at rest (aux_kw) as a car without stop-start does");
  } else {
    fs_num(c, C_MC_MAX_KW, true, "a battery-electric car's motor", 0, &x);
    v->mc_max_w = 1e3 * x;
    if (!fs_list(c, C_MC_PWR_OUT_PERC, false, v->mc_x) && !c->failed) {
      memcpy(v->mc_x, mc_pwr_out_perc_default, sizeof mc_pwr_out_perc_default);
      fs_note(c, C_MC_PWR_OUT_PERC, false, "mc_pwr_out_perc empty: FASTSim's default fractions");
    }
    for (int i = 1; i < 11 && !c->failed; i++)
      if (!(v->mc_x[i] > v->mc_x[i - 1])) {
        const csv_cell *cell = fs_cell(c, C_MC_PWR_OUT_PERC, true, NULL);
        fs_fail_at(c, cell->line, cell->col,
                   "mc_pwr_out_perc[%d]: power fractions must increase (%g after %g)", i,
                   v->mc_x[i], v->mc_x[i - 1]);
      }
    if (!fs_list(c, C_MC_EFF_MAP, false, v->mc_eff) && !c->failed) {
      mc_default_map(x, v->mc_eff);
      fs_note(c, C_MC_EFF_MAP, false,
              "mc_eff_map empty: FASTSim's baseline motor maps blended for %g kW", x);
    }
    fs_num(c, C_ESS_MAX_KW, true, "a battery-electric car's battery", 0, &x);
    v->ess_max_w = 1e3 * x;
    fs_num(c, C_ESS_MAX_KWH, true, "a battery-electric car's battery", 0, &v->ess_kwh);
    fs_num(c, C_ESS_RTE, true, NULL, 0, &x);
    v->ess_eta = sqrt(x);
    fs_num(c, C_MIN_SOC, true, NULL, 0, &v->soc_min);
    fs_num(c, C_MAX_SOC, true, NULL, 0, &v->soc_max);
    if (!c->failed && !(v->soc_max > v->soc_min)) {
      const csv_cell *cell = fs_cell(c, C_MAX_SOC, true, NULL);
      fs_fail_at(c, cell->line, cell->col, "max_soc: must be > min_soc %g, got %g", v->soc_min,
                 v->soc_max);
    }
    fs_num(c, C_MAX_REGEN, false, NULL, 1.0, &v->max_regen);
  }
  if (!c->failed)
    v->mass = fs_mass(c, v);
}

/* ------------------------------------------------------------------------ */
/* Finding the row                                                          */

/* Whether `needle` occurs in `hay`, ignoring ASCII case. */
static bool contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (strncasecmp(hay, needle, n) == 0)
      return true;
  return n == 0;
}

static bool fs_find_row(fs_ctx *c, const dg_fastsim_options *o) {
  const csv_table *t = c->t;
  int ksel = c->map[C_SELECTION], kname = c->map[C_NAME];
  if (o->name) {
    if (kname < 0) {
      fs_fail_at(c, 1, 1, "no column \"Scenario name\" in the header; expected it (--name)");
      return false;
    }
    for (int r = 1; r < t->nrows; r++)
      if (strcasecmp(csv_at(t, r, kname)->s, o->name) == 0) {
        c->row = r;
        return true;
      }
    /* not found: suggest the rows whose name contains the words given */
    char hint[400] = "";
    int shown = 0;
    for (int r = 1; r < t->nrows && shown < 3; r++) {
      const char *n = csv_at(t, r, kname)->s;
      if (contains_nocase(n, o->name)) {
        size_t len = strlen(hint);
        snprintf(hint + len, sizeof hint - len, "%s\"%s\"", shown ? ", " : "; did you mean ", n);
        shown++;
      }
    }
    dgp_error_set(c->err, DG_ERR_USAGE, c->file, "",
                  "no vehicle named \"%s\" (column \"Scenario name\", %d rows)%s", o->name,
                  t->nrows - 1, hint);
    c->failed = true;
    return false;
  }
  if (ksel < 0) {
    fs_fail_at(c, 1, 1, "no column \"selection\" in the header; expected it (--row)");
    return false;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (int r = 1; r < t->nrows; r++) {
    double v;
    const char *s = csv_at(t, r, ksel)->s;
    if (!parse_number(s, strlen(s), &v))
      continue;
    if (v == (double)o->row) {
      c->row = r;
      return true;
    }
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  if (lo <= hi)
    dgp_error_set(c->err, DG_ERR_USAGE, c->file, "",
                  "no row with selection %d (the file's selections run from %g to %g)", o->row, lo,
                  hi);
  else
    dgp_error_set(c->err, DG_ERR_USAGE, c->file, "", "no row with selection %d (no rows)", o->row);
  c->failed = true;
  return false;
}

/* ------------------------------------------------------------------------ */
/* The drive cycle                                                          */

typedef struct fs_trace {
  const double *t, *mps; /* s, m/s */
  int n;
} fs_trace;

/* The default trace when no cycle is given: standstill, 0 to 50 km/h in
 * 10 s, 20 s at 50 km/h, to rest in 10 s, standstill. */
static const double default_t[] = {0, 2, 12, 32, 42, 45};
static const double default_mps[] = {0, 0, 50 / 3.6, 50 / 3.6, 0, 0};

/* ------------------------------------------------------------------------ */
/* The graph                                                                */

/* FASTSim's efficiency lookup, as a table the engine and the motor
 * interpolate: FASTSim evaluates its map on a grid of power fractions and
 * uses, for a power, the efficiency at the grid point at or below it. The
 * grid is `ngrid` fractions; the table holds each point's efficiency up to
 * just before the next (a step 1e-9 of a fraction wide). */
static json_t *lookup_table(const char *xname, const double *grid, int ngrid, const double *mx,
                            const double *my, int nm, bool linear) {
  if (linear)
    return dgp_import_table1d(xname, mx, "efficiency", my, nm);
  double x[2 * 128], y[2 * 128];
  int n = 0;
  for (int i = 0; i < ngrid; i++) {
    double e;
    /* linear interpolation of the map at the grid point */
    int j = 0;
    while (j + 2 < nm && grid[i] > mx[j + 1])
      j++;
    double f = (grid[i] - mx[j]) / (mx[j + 1] - mx[j]);
    f = f < 0.0 ? 0.0 : (f > 1.0 ? 1.0 : f);
    e = my[j] + f * (my[j + 1] - my[j]);
    x[n] = grid[i];
    y[n++] = e;
    if (i + 1 < ngrid) {
      x[n] = grid[i + 1] - 1e-9;
      y[n++] = e;
    }
  }
  return dgp_import_table1d(xname, x, "efficiency", y, n);
}

/* FASTSim's fuel converter grid: fractions 0 to 3 % in steps of 0.1 %, to
 * 7 % in 0.5 %, to 60 % in 1 %, to 100 % in 5 %. */
static int fc_grid(double *g) {
  int n = 0;
  for (int i = 0; i < 30; i++)
    g[n++] = i / 1000.0;
  for (int i = 0; i < 8; i++)
    g[n++] = (30 + 5 * i) / 1000.0;
  for (int i = 0; i < 53; i++)
    g[n++] = (7 + i) / 100.0;
  for (int i = 0; i < 9; i++)
    g[n++] = (60 + 5 * i) / 100.0;
  return n;
}

/* The motor's grid: 0 to 100 % in 1 %. */
static int mc_grid(double *g) {
  for (int i = 0; i <= 100; i++)
    g[i] = i / 100.0;
  return 101;
}

/* The driver: the feed-forward gives the pedal the trace's acceleration
 * needs at low speed, where full pedal is the traction limit μ·f·g·η_t
 * (m/s² per unit pedal); the proportional and integral terms, stiff enough
 * to hold the trace within a few tenths of a km/h (docs/import.md). */
static void build_driver(dg_import_graph *g, const fs_vehicle *v, const fs_trace *tr) {
  json_t *d = dgp_import_block(g, "driver", "driver",
                               "follows the trace (a FASTSim cycle when imported with --cycle)");
  double *kmh = malloc((size_t)tr->n * sizeof *kmh);
  if (!kmh) {
    g->nomem = true;
    return;
  }
  for (int i = 0; i < tr->n; i++)
    kmh[i] = 3.6 * tr->mps[i];
  dgp_import_set(g, d, "trace", dgp_import_table1d("time", tr->t, "speed_kmh", kmh, tr->n));
  free(kmh);
  dgp_import_set_num(g, d, "kp", 1.0);
  dgp_import_set_num(g, d, "ki", 0.5);
  dgp_import_set_num(g, d, "accel_gain", 1.0 / (v->mu * v->drive_frac * FS_GRAVITY * v->trans_eff));
  dgp_import_set_num(g, d, "brake_gain", 1.0);
  /* the friction brakes' force at the road at full pedal (build_chassis):
   * the scale of brake_power, what a motor regenerates first */
  dgp_import_set_num(g, d, "brake_force", v->mu * v->mass * FS_GRAVITY);
}

/* The axles (single-track wheels, rolling, half the wheels' inertia each)
 * and their friction brakes, and the body. The brakes hold μ·m·g at full
 * pedal, split between the axles on the driver's pedal; with blended
 * braking (an electric car that regenerates) they are all on the front
 * axle, on the motor's friction_brake, and the rear axle's brake acts on
 * the pedal in parallel, sized to take 1 − max_regen of the braking
 * (FASTSim's max_regen: the most of the braking regeneration takes). */
static void build_chassis(dg_import_graph *g, const fs_vehicle *v, const char *drive,
                          bool blended) {
  double brake = v->mu * v->mass * FS_GRAVITY * v->wheel_radius; /* N·m, all wheels */
  const char *axles[2] = {"front_axle", "rear_axle"};
  const char *ports[2] = {"body.front", "body.rear"};
  for (int i = 0; i < 2; i++) {
    json_t *w = dgp_import_block(g, axles[i], "wheel",
                                 i == 0 ? "driven axle: its wheels together (rolling tyres)"
                                        : "free axle: its wheels together (rolling tyres)");
    dgp_import_set_num(g, w, "radius", v->wheel_radius);
    dgp_import_set_num(g, w, "inertia", 0.5 * v->wheel_inertia_total);
    double torque = 0.5 * brake;
    const char *pedal = "driver.brake";
    if (blended && i == 0) {
      torque = brake;
      pedal = "motor.friction_brake";
    } else if (blended) {
      torque = brake * (1.0 - v->max_regen) / v->max_regen;
    }
    if (torque > 0.0) {
      dgp_import_set_num(g, w, "brake_torque", torque);
      json_t *in = json_object();
      if (in && json_object_set_new(in, "brake", json_string(pedal)) == 0)
        dgp_import_set(g, w, "inputs", in);
      else
        g->nomem = true;
    }
    char ground[32];
    snprintf(ground, sizeof ground, "%s.ground", axles[i]);
    dgp_import_connect(g, ground, ports[i]);
  }
  dgp_import_connect(g, drive, "front_axle.hub");
  json_t *b = dgp_import_block(g, "body", "vehicle", NULL);
  dgp_import_set_num(g, b, "mass", v->mass);
  dgp_import_set_num(g, b, "wheelbase", v->wheelbase);
  dgp_import_set_num(g, b, "cg_to_front", v->wheelbase * (1.0 - v->drive_frac));
  dgp_import_set_num(g, b, "cg_height", v->cg_height);
  dgp_import_set_num(g, b, "cda", v->cda);
  dgp_import_set_num(g, b, "air_density", FS_AIR_DENSITY);
  dgp_import_set_num(g, b, "rolling_resistance", v->crr);
  dgp_import_set_num(g, b, "gravity", FS_GRAVITY);
}

static void set_inputs(dg_import_graph *g, json_t *block, const char *const *kv, int n) {
  json_t *in = json_object();
  if (!in) {
    g->nomem = true;
    return;
  }
  for (int i = 0; i + 1 < n; i += 2)
    if (json_object_set_new(in, kv[i], json_string(kv[i + 1])) != 0)
      g->nomem = true;
  dgp_import_set(g, block, "inputs", in);
}

/* The traction limit at the wheels: μ times the driven axle's static load
 * times the wheel radius (N·m). */
static double traction_torque(const fs_vehicle *v) {
  return v->mu * v->drive_frac * v->mass * FS_GRAVITY * v->wheel_radius;
}

static void build_conventional(dg_import_graph *g, const fs_vehicle *v, bool linear) {
  /* rpm per (m/s of road speed) at the engine, and the ratio to the wheels */
  double ratio = ENGINE_RPM_AT_100 / (100.0 / 3.6) * v->wheel_radius * PI / 30.0;
  double t_max = traction_torque(v) / ratio; /* at the crankshaft */
  double w_corner = v->fc_max_w / t_max;     /* rad/s where the power limit takes over */
  double rpm[24], torque[24];
  int n = 0;
  rpm[n] = 0.0;
  torque[n++] = t_max;
  /* T = P/ω above the corner, sampled at ratios 1.1 apart (the line between
   * two samples is within 0.25 % of P/ω) */
  for (double w = w_corner; n < 24; w *= 1.1) {
    double r = w * 30.0 / PI;
    if (r >= ENGINE_REDLINE_RPM * 1.2 || n == 23) {
      r = ENGINE_REDLINE_RPM * 1.2;
      rpm[n] = r;
      torque[n++] = v->fc_max_w / (r * PI / 30.0);
      break;
    }
    if (r > rpm[n - 1]) {
      rpm[n] = r;
      torque[n++] = v->fc_max_w / w;
    }
  }
  json_t *e = dgp_import_block(
      g, "engine", "engine",
      "FASTSim's fuel converter: efficiency over the fraction of fc_max_kw, accessories at "
      "aux_kw; geared to the wheels at one ratio, from 0 rpm (no idle speed, no clutch)");
  dgp_import_set_num(g, e, "inertia", 0.01);
  dgp_import_set_num(g, e, "idle_rpm", 600);
  dgp_import_set_num(g, e, "redline_rpm", ENGINE_REDLINE_RPM);
  dgp_import_set_num(g, e, "idle_gain", 0);
  dgp_import_set(g, e, "full_load", dgp_import_table1d("rpm", rpm, "torque", torque, n));
  double grid[128];
  int ng = fc_grid(grid);
  dgp_import_set(g, e, "efficiency",
                 lookup_table("power_fraction", grid, ng, fc_pwr_out_perc, v->fc_eff, 12, linear));
  dgp_import_set_num(g, e, "rated_power", v->fc_max_w);
  dgp_import_set_num(g, e, "accessory_power", v->accessory_w);
  dgp_import_set_bool(g, e, "fuel_cut", false);
  static const char *const ein[] = {"throttle", "driver.throttle"};
  set_inputs(g, e, ein, 2);
  json_t *tr = dgp_import_block(g, "trans", "gear", "FASTSim's transmission: trans_eff, one ratio");
  dgp_import_set_num(g, tr, "ratio", ratio);
  dgp_import_set_num(g, tr, "efficiency", v->trans_eff);
  dgp_import_connect(g, "engine.out", "trans.in");
}

static void build_electric(dg_import_graph *g, const fs_vehicle *v, bool linear) {
  double ratio = MOTOR_RPM_AT_100 / (100.0 / 3.6) * v->wheel_radius * PI / 30.0;
  json_t *m = dgp_import_block(g, "motor", "motor",
                               "FASTSim's motor: efficiency over the fraction of mc_max_kw, "
                               "regenerating first on the brake");
  dgp_import_set_num(g, m, "inertia", 0.01);
  dgp_import_set_num(g, m, "max_torque", traction_torque(v) / ratio);
  dgp_import_set_num(g, m, "max_power", v->mc_max_w);
  dgp_import_set_num(g, m, "max_rpm", MOTOR_MAX_RPM);
  dgp_import_set_num(g, m, "max_regen_power", v->mc_max_w);
  double a_env = traction_torque(v) / (v->mass * v->wheel_radius); /* m/s² of full regen */
  double v_fade = REGEN_LOSS_SPEED * a_env / REGEN_DECEL;
  dgp_import_set_num(g, m, "regen_fade_rpm", v_fade / v->wheel_radius * ratio * 30.0 / PI);
  double grid[128];
  int ng = mc_grid(grid);
  dgp_import_set(g, m, "efficiency_power",
                 lookup_table("power_fraction", grid, ng, v->mc_x, v->mc_eff, 11, linear));
  /* series blending: the driver's brake_power to the motor, which
   * regenerates first and hands the rest to the friction brakes
   * (friction_brake, build_chassis); max_regen 0: friction only */
  static const char *const min[] = {
      "throttle",     "driver.throttle",      "brake",           "driver.brake",
      "charge_limit", "battery.charge_limit", "discharge_limit", "battery.discharge_limit",
      "brake_power",  "driver.brake_power"};
  set_inputs(g, m, min, v->max_regen > 0.0 ? 10 : 8);
  json_t *aux = dgp_import_block(g, "aux", "electric_load", "FASTSim's aux_kw");
  dgp_import_set_num(g, aux, "power", v->aux_w);
  json_t *bus = dgp_import_block(g, "bus", "bus", NULL);
  static const char *const bin[] = {"p1", "motor.electric_power", "p2", "aux.electric_power"};
  set_inputs(g, bus, bin, 4);
  json_t *bat = dgp_import_block(
      g, "battery", "battery",
      "FASTSim's battery: ess_max_kwh at a constant 360 V, sqrt(ess_round_trip_eff) each way, "
      "ess_max_kw both ways, min_soc..max_soc, starting full");
  dgp_import_set_num(g, bat, "capacity", v->ess_kwh * 1e3 / FS_VOLTAGE);
  dgp_import_set_num(g, bat, "voltage", FS_VOLTAGE);
  dgp_import_set_num(g, bat, "resistance", 0);
  dgp_import_set_num(g, bat, "efficiency", v->ess_eta);
  dgp_import_set_num(g, bat, "initial_soc", v->soc_max);
  dgp_import_set_num(g, bat, "soc_min", v->soc_min);
  dgp_import_set_num(g, bat, "soc_max", v->soc_max);
  dgp_import_set_num(g, bat, "soc_taper", 1e-4);
  dgp_import_set_num(g, bat, "max_discharge_power", v->ess_max_w);
  dgp_import_set_num(g, bat, "max_charge_power", v->ess_max_w);
  static const char *const pin[] = {"power", "bus.power"};
  set_inputs(g, bat, pin, 2);
  json_t *tr = dgp_import_block(g, "trans", "gear", "FASTSim's transmission: trans_eff, one ratio");
  dgp_import_set_num(g, tr, "ratio", ratio);
  dgp_import_set_num(g, tr, "efficiency", v->trans_eff);
  dgp_import_connect(g, "motor.out", "trans.in");
}

static char *fs_build(fs_ctx *c, const fs_vehicle *v, const fs_trace *tr, bool linear) {
  char name[300], desc[600];
  snprintf(name, sizeof name, "%s (FASTSim %s)", v->name, v->pt == PT_CONV ? "Conv" : "BEV");
  snprintf(desc, sizeof desc,
           "Imported from %s, row %d (selection %d): %.6g kg, CdA %.4g m^2, rolling resistance "
           "%.4g, %s; FASTSim's road load (air 1.2 kg/m^3, g 9.81 m/s^2)",
           c->file, c->row, v->selection, v->mass, v->cda, v->crr,
           v->pt == PT_CONV ? "engine geared to the wheels at one ratio"
                            : "motor, bus and battery");
  dg_import_graph g;
  if (!dgp_import_graph_init(&g, name, desc)) {
    dgp_error_set(c->err, DG_ERR_NOMEM, c->file, "", "out of memory");
    return NULL;
  }
  build_driver(&g, v, tr);
  if (v->pt == PT_CONV)
    build_conventional(&g, v, linear);
  else
    build_electric(&g, v, linear);
  build_chassis(&g, v, "trans.out", v->pt == PT_BEV && v->max_regen > 0.0);
  char *json = g.nomem ? NULL : dgp_import_dump(g.root);
  dgp_import_graph_free(&g);
  if (!json)
    dgp_error_set(c->err, DG_ERR_NOMEM, c->file, "", "out of memory");
  return json;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */

char *dg_import_fastsim_to_json(const char *path, const dg_fastsim_options *opt, dg_diag_fn notes,
                                void *user, dg_error *err) {
  dgp_error_clear(err);
  if (!path || !opt || (!opt->name && opt->row < 0)) {
    dgp_error_set(err, DG_ERR_USAGE, path ? path : "", "",
                  "a FASTSim vehicle table and a row (selection >= 0) or a name are needed");
    return NULL;
  }
  fs_trace tr = {default_t, default_mps, COUNT(default_t)};
  dg_cycle *cycle = NULL;
  if (opt->cycle) {
    cycle = dg_cycle_load_file(opt->cycle, err);
    if (!cycle)
      return NULL;
    tr = (fs_trace){dg_cycle_time(cycle), dg_cycle_speed(cycle), dg_cycle_length(cycle)};
  }
  size_t len;
  char *text = read_file(path, &len, err);
  char *json = NULL;
  csv_table t = {0};
  if (text && csv_parse(text, len, path, &t, err)) {
    fs_ctx c = {.file = path, .t = &t, .err = err, .notes = notes, .user = user};
    for (int k = 0; k < NUM_COLUMNS; k++)
      c.map[k] = csv_column(&t, columns[k].name);
    fs_vehicle v = {0};
    if (fs_find_row(&c, opt)) {
      double sel = 0;
      fs_num(&c, C_SELECTION, false, NULL, 0, &sel);
      v.selection = (int)sel;
      const csv_cell *nm = fs_cell(&c, C_NAME, false, NULL);
      v.name = nm ? nm->s : "FASTSim vehicle";
      fs_read(&c, &v);
      if (!c.failed)
        json = fs_build(&c, &v, &tr, opt->linear_efficiency);
    }
  }
  csv_free(&t);
  free(text);
  dg_cycle_free(cycle);
  return json;
}

dg_graph *dg_graph_import_fastsim(const dg_registry *reg, const char *path,
                                  const dg_fastsim_options *opt, dg_error *err) {
  char *json = dg_import_fastsim_to_json(path, opt, NULL, NULL, err);
  if (!json)
    return NULL;
  dg_graph *g = dgp_import_load(reg, json, path, err);
  free(json);
  return g;
}
