/* drivegraph sweep: many independent simulations of one graph with
 * parameter overrides, on every core, one summary line per variant.
 *
 * Variants come from a grid (--set KEY=V1,V2,... repeated: the Cartesian
 * product, the last --set varying fastest) and/or a JSON Lines file (one
 * object of overrides per line); with both, every line is combined with
 * every grid point (index = line · grid size + grid point) and the grid's
 * values win where they name the same key. --shard i/n keeps the variants
 * whose index % n == i, so that a job array or GNU parallel can split one
 * sweep over machines and the union of the shards is the whole sweep.
 *
 * The runs are dg_batch_run's (lib/run/batch.c): one simulation per thread at a
 * time and nothing mutable shared, so every line is bit for bit what a run
 * of that variant alone gives, whatever --jobs is (numbers are printed in
 * the shortest form that reads back to the same double). Variants run in chunks
 * and are written in variant order as each chunk ends. */
#include "output.h"
#include "plugin.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Variants per thread in a chunk: output is written once per chunk, and a
 * chunk is what one dg_batch_run shares every-mode checks over, so a chunk
 * should hold many variants of each structure (a 100 x 100 grid of an
 * inertia and a ratio: 20 of each ratio in a chunk of 2 x 1024, against 2
 * or 3 with 128 per thread). MAX_CHUNK bounds the memory of many jobs
 * (about 1.5 kB a variant). */
#define CHUNK_PER_THREAD 1024
#define MAX_CHUNK 32768L
#define MAX_JOBS 1024
/* Sweeps larger than this are surely a mistake in the grid. */
#define MAX_VARIANTS 100000000L

typedef struct grid_key {
  const char *key;
  int n;
  char **values; /* canonical JSON text of each value */
} grid_key;

typedef struct jsonl_line {
  int n;
  dg_override *ov; /* key and value strings owned here */
} jsonl_line;

typedef struct sweep_grid {
  int nkeys;
  grid_key *keys;
} sweep_grid;

typedef struct sweep_shard {
  long i, n; /* this shard of n */
} sweep_shard;

typedef struct sweep_opts {
  const char *graph;
  const char *variants_file;
  const char *scenario;
  const char *signals;
  const char *output;
  double dt, duration;
  long jobs;
  sweep_shard shard;
  sweep_grid grid;
  opt_list plugins;
  double max_steps; /* per variant */
} sweep_opts;

extern const command dg_cmd_sweep;

typedef struct sweep {
  sweep_opts o;
  dg_registry *reg; /* the built-in classes plus the plugins' */
  char *graph_text;
  dg_scenario *scn;
  int nlines;
  jsonl_line *lines;
  long grid_size, total;
  int nsig;
  char **sig; /* signal names reported as final values */
  out_file *output; /* tools/output.h: --output FILE, or stdout */
  FILE *out;        /* its stream */
  long ok, failed;
} sweep;

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

/* The shortest %g form of x that reads back as x (at most 17 digits). */
static void shortest(char *buf, size_t size, double x) {
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, size, "%.*g", prec, x);
    if (strtod(buf, NULL) == x)
      return;
  }
}

/* Compact JSON of v with reals in their shortest exact form (jansson's
 * own printer always writes 17 digits: 0.15 as 0.14999999999999999). */
static bool put_json(FILE *f, const json_t *v) {
  char num[40];
  size_t i;
  const char *key;
  json_t *item;
  switch (json_typeof(v)) {
  case JSON_REAL:
    shortest(num, sizeof num, json_real_value(v));
    if (!strpbrk(num, ".eEn")) /* keep it a real: 2 → 2.0 */
      strcat(num, ".0");
    return fputs(num, f) >= 0;
  case JSON_ARRAY:
    fputc('[', f);
    json_array_foreach(v, i, item) {
      if (i)
        fputc(',', f);
      put_json(f, item);
    }
    return fputc(']', f) != EOF;
  case JSON_OBJECT: {
    bool first = true;
    fputc('{', f);
    json_object_foreach((json_t *)v, key, item) {
      json_t *k = json_string(key);
      char *kd = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
      fprintf(f, "%s%s:", first ? "" : ",", kd ? kd : "\"?\"");
      free(kd);
      json_decref(k);
      put_json(f, item);
      first = false;
    }
    return fputc('}', f) != EOF;
  }
  default: {
    char *d = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    bool ok = d && fputs(d, f) >= 0;
    free(d);
    return ok;
  }
  }
}

/* Canonical JSON text of v (malloc'ed), or NULL. */
static char *json_text(const json_t *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  bool ok = put_json(f, v);
  if (fclose(f) != 0 || !ok) {
    free(buf);
    return NULL;
  }
  return buf;
}

/* Canonical JSON text of an override value: JSON as given, else a string. */
static char *canonical_value(const char *text) {
  json_error_t je;
  json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
  if (!v)
    v = json_string(text);
  char *out = v ? json_text(v) : NULL;
  json_decref(v);
  return out;
}

/* Splits "a,b,[c,d],\"e,f\"" at the commas outside brackets and quotes. */
static int split_values(const char *list, char ***out) {
  int cap = 8, n = 0, depth = 0;
  bool quoted = false;
  char **v = malloc(sizeof *v * (size_t)cap);
  const char *start = list;
  for (const char *c = list;; c++) {
    if (*c == '\0' || (*c == ',' && depth == 0 && !quoted)) {
      if (!v)
        return -1;
      if (n == cap) {
        cap *= 2;
        char **nv = realloc(v, sizeof *v * (size_t)cap);
        if (!nv)
          break;
        v = nv;
      }
      char *piece = strndup(start, (size_t)(c - start));
      v[n] = piece ? canonical_value(piece) : NULL;
      free(piece);
      if (!v[n])
        break;
      n++;
      if (*c == '\0') {
        *out = v;
        return n;
      }
      start = c + 1;
    } else if (*c == '"' && (c == list || c[-1] != '\\')) {
      quoted = !quoted;
    } else if (!quoted && (*c == '[' || *c == '{')) {
      depth++;
    } else if (!quoted && (*c == ']' || *c == '}')) {
      depth--;
    }
  }
  for (int i = 0; v && i < n; i++)
    free(v[i]);
  free(v);
  return -1;
}

/* --set BLOCK.PARAM=V1,V2,...: a grid axis (dest: the sweep_grid). */
static bool parse_set(const char *arg, void *dest, char *why, size_t size) {
  sweep_grid *grid = dest;
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg || eq[1] == '\0') {
    snprintf(why, size, "expected BLOCK.PARAM=V1,V2,...");
    return false;
  }
  grid_key *k = realloc(grid->keys, sizeof *k * (size_t)(grid->nkeys + 1));
  if (!k) {
    snprintf(why, size, "out of memory");
    return false;
  }
  grid->keys = k;
  grid_key *g = &grid->keys[grid->nkeys];
  char *key = strndup(arg, (size_t)(eq - arg));
  g->key = key;
  g->values = NULL;
  g->n = key ? split_values(eq + 1, &g->values) : -1;
  if (g->n < 0) {
    free(key);
    snprintf(why, size, "out of memory");
    return false;
  }
  grid->nkeys++;
  return true;
}

/* --shard I/N (dest: the sweep_shard). */
static bool parse_shard(const char *text, void *dest, char *why, size_t size) {
  sweep_shard *sh = dest;
  char *end;
  errno = 0;
  long i = strtol(text, &end, 10), n = 0;
  bool ok = end != text && *end == '/' && !errno;
  if (ok) {
    const char *rest = end + 1;
    n = strtol(rest, &end, 10);
    ok = end != rest && *end == '\0' && !errno && n >= 1 && i >= 0 && i < n;
  }
  if (!ok) {
    snprintf(why, size, "expected I/N with 0 <= I < N");
    return false;
  }
  *sh = (sweep_shard){i, n};
  return true;
}

static const option_def sweep_options[] = {
    {.name = "set", OPT_CALL_AT(sweep_opts, grid, sweep_grid), .parse = parse_set,
     .arg = "BLOCK.PARAM=V1,V2,...", .repeatable = true,
     .help = "a grid axis (repeatable; the product of all axes, the\n"
             "last varying fastest). Values are JSON (a number,\n"
             "[an, array], \"a string\"); text that is not JSON is a\n"
             "string. Nested parameters: wheel_rl.tyre.D,\n"
             "gearbox.shift.upshift_rpm."},
    {.name = "variants", OPT_STRING_AT(sweep_opts, variants_file), .arg = "FILE",
     .help = "JSON Lines: one object {\"block.param\": value, ...} per\n"
             "line; with --set, each line times each grid point"},
    {.name = "scenario", OPT_STRING_AT(sweep_opts, scenario), .arg = "FILE",
     .help = "inputs, initial values, stop condition (default: the\n"
             "launch of `drivegraph bench`: full throttle from rest)"},
    {.name = "dt", OPT_SECONDS_AT(sweep_opts, dt), .arg = "s",
     .help = "step size (default: the scenario's, else 0.001)"},
    {.name = "duration", OPT_SECONDS_AT(sweep_opts, duration), .arg = "s",
     .help = "simulated time (default: the scenario's, else 10)"},
    {.name = "jobs", .short_name = 'j', OPT_INT_AT(sweep_opts, jobs), .arg = "N", .min = 1,
     .max = MAX_JOBS, .help = "threads (default: every online CPU)"},
    {.name = "shard", OPT_CALL_AT(sweep_opts, shard, sweep_shard), .parse = parse_shard,
     .arg = "I/N", .help = "run only the variants whose index % N == I (0 <= I < N)"},
    {.name = "signals", OPT_STRING_AT(sweep_opts, signals), .arg = "LIST",
     .help = "final values to report (default: every signal)"},
    {.name = "output", .short_name = 'o', OPT_STRING_AT(sweep_opts, output), .arg = "FILE",
     .help = "write there (complete, or not at all) instead of stdout\n"
             "('-': stdout; a device or FIFO is written in place)"},
    OPT_MAX_STEPS_AT(sweep_opts, max_steps),
    OPT_PLUGIN_AT(sweep_opts, plugins),
    {0},
};

static int sweep_parse_args(const command *cmd, int argc, char **argv, sweep_opts *o) {
  operands args;
  int rc = parse_options(cmd, argc, argv, o, &args);
  if (rc != EXIT_OK)
    return rc;
  if (args.n == 0)
    return usage_error(cmd, "no graph file given");
  if (args.n > 1)
    return usage_error(cmd, "one graph file expected (got '%s' too)", args.v[1]);
  o->graph = args.v[0];
  return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len - 1, f);
    if (ferror(f) || feof(f))
      break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  bool bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    if (bad)
      errno = EIO;
    return NULL;
  }
  buf[len] = '\0';
  return buf;
}

/* One JSON Lines line: an object of overrides. */
static int parse_line(sweep *s, const char *text, int lineno) {
  json_error_t je;
  json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  if (!obj) {
    fprintf(stderr, "%s:%d:%d: %s\n", esc(s->o.variants_file), lineno, je.column, esc(je.text));
    return EXIT_INVALID;
  }
  if (!json_is_object(obj)) {
    fprintf(stderr, "%s:%d: expected an object of overrides {\"block.param\": value, ...}\n",
            esc(s->o.variants_file), lineno);
    json_decref(obj);
    return EXIT_INVALID;
  }
  jsonl_line *l = &s->lines[s->nlines];
  l->n = 0;
  l->ov = calloc(json_object_size(obj) + 1, sizeof *l->ov);
  int rc = l->ov ? EXIT_OK : EXIT_INVALID;
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    if (rc != EXIT_OK)
      break;
    char *k = strdup(key), *val = json_text(v);
    l->ov[l->n++] = (dg_override){k, val};
    if (!k || !val)
      rc = EXIT_INVALID;
  }
  json_decref(obj);
  s->nlines++;
  if (rc != EXIT_OK)
    fprintf(stderr, "drivegraph sweep: out of memory\n");
  return rc;
}

static int read_variants(sweep *s) {
  char *text = read_text(s->o.variants_file);
  if (!text) {
    fprintf(stderr, "%s: cannot read file: %s\n", esc(s->o.variants_file), strerror(errno));
    return EXIT_INVALID;
  }
  int count = 1;
  for (const char *c = text; *c; c++)
    count += *c == '\n';
  s->lines = calloc((size_t)count, sizeof *s->lines);
  int rc = s->lines ? EXIT_OK : EXIT_INVALID;
  char *save = NULL;
  int lineno = 0;
  /* strtok_r would merge blank lines; walk them by hand to keep numbers */
  for (char *line = text; rc == EXIT_OK && line; line = save) {
    char *nl = strchr(line, '\n');
    save = nl ? nl + 1 : NULL;
    if (nl)
      *nl = '\0';
    lineno++;
    const char *p = line;
    while (*p == ' ' || *p == '\t' || *p == '\r')
      p++;
    if (*p)
      rc = parse_line(s, line, lineno);
  }
  free(text);
  if (rc == EXIT_OK && s->nlines == 0) {
    fprintf(stderr, "%s: no variants (expected one JSON object per line)\n",
            esc(s->o.variants_file));
    rc = EXIT_INVALID;
  }
  return rc;
}

/* Every grid value alone on the base graph: a bad one is named before
 * anything runs. They are loaded as the sweep loads its variants
 * (dg_batch_validate), so the every-mode check is shared the same way. */
static int check_grid(sweep *s) {
  int n = 0;
  for (int k = 0; k < s->o.grid.nkeys; k++)
    n += s->o.grid.keys[k].n;
  if (n == 0)
    return EXIT_OK;
  dg_override *ov = calloc((size_t)n, sizeof *ov);
  dg_batch_variant *vars = calloc((size_t)n, sizeof *vars);
  dg_batch_result *res = calloc((size_t)n, sizeof *res);
  int rc = ov && vars && res ? EXIT_OK : EXIT_INVALID;
  if (rc != EXIT_OK)
    fprintf(stderr, "drivegraph sweep: out of memory\n");
  for (int k = 0, i = 0; rc == EXIT_OK && k < s->o.grid.nkeys; k++)
    for (int j = 0; j < s->o.grid.keys[k].n; j++, i++) {
      ov[i] = (dg_override){s->o.grid.keys[k].key, s->o.grid.keys[k].values[j]};
      vars[i] = (dg_batch_variant){1, &ov[i]};
    }
  dg_batch_options bo;
  dg_batch_options_init(&bo);
  bo.reg = s->reg;
  bo.graph_json = s->graph_text;
  bo.graph_name = s->o.graph;
  bo.threads = (int)s->o.jobs;
  dg_error err;
  if (rc == EXIT_OK && dg_batch_validate(&bo, n, vars, res, &err) != DG_OK) {
    print_error(stderr, &err, s->o.graph);
    rc = EXIT_INVALID;
  }
  for (int i = 0; rc == EXIT_OK && i < n; i++) {
    if (res[i].code == DG_OK)
      continue;
    fprintf(stderr, "drivegraph sweep: --set %s=%s: ", esc(ov[i].key), esc(ov[i].value));
    print_error(stderr, &res[i].error, s->o.graph);
    rc = EXIT_INVALID;
  }
  free(ov);
  free(vars);
  free(res);
  return rc;
}

/* Signal names for the final values: --signals, else every signal of the
 * base graph g. */
static int choose_signals(sweep *s, const dg_graph *g) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim) {
    print_error(stderr, &err, s->o.graph);
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  int n = dg_sim_signal_count(sim);
  s->sig = calloc((size_t)n + 1, sizeof *s->sig);
  if (!s->sig) {
    rc = EXIT_INVALID;
  } else if (!s->o.signals) {
    for (int i = 0; i < n && rc == EXIT_OK; i++)
      if (!(s->sig[s->nsig++] = strdup(dg_sim_signal_name(sim, i))))
        rc = EXIT_INVALID;
  } else {
    char *copy = strdup(s->o.signals), *save = NULL;
    rc = copy ? EXIT_OK : EXIT_INVALID;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && rc == EXIT_OK;
         tok = strtok_r(NULL, ",", &save)) {
      char *name = tool_trim(tok);
      if (!*name)
        continue;
      if (dg_sim_signal_by_name(sim, name, NULL, &err) != DG_OK) {
        fprintf(stderr, "drivegraph sweep: --signals: %s\n", err.text);
        rc = EXIT_INVALID;
      } else {
        char **grown = s->nsig < n ? s->sig : realloc(s->sig, sizeof *s->sig * (size_t)(s->nsig + 1));
        if (!grown || !(grown[s->nsig] = strdup(name))) {
          rc = EXIT_INVALID;
        } else {
          s->sig = grown;
          s->nsig++;
        }
      }
    }
    free(copy);
  }
  dg_sim_free(sim);
  return rc;
}

static int sweep_prepare(sweep *s) {
  s->reg = plugin_registry(s->o.plugins.n, s->o.plugins.v);
  if (!s->reg)
    return EXIT_INVALID; /* plugin_registry said why */
  dg_error err;
  /* graph JSON, or what a YAML config converts to: overrides apply to it */
  s->graph_text = graph_json_text(s->o.graph, &err);
  if (!s->graph_text) {
    print_error(stderr, &err, s->o.graph);
    return EXIT_INVALID;
  }
  dg_graph *g = dg_graph_load_string(s->reg, s->graph_text, s->o.graph, &err);
  if (!g) {
    print_error(stderr, &err, s->o.graph);
    return EXIT_INVALID;
  }
  print_warnings(stderr, g, s->o.graph);
  int rc = EXIT_OK;
  if (s->o.scenario) {
    s->scn = dg_scenario_load_file(s->o.scenario, &err);
    if (!s->scn) {
      print_error(stderr, &err, s->o.scenario);
      rc = EXIT_INVALID;
    }
  }
  if (rc == EXIT_OK) { /* each variant's steps, as dg_batch_run counts them */
    double dt = !isnan(s->o.dt) ? s->o.dt : !isnan(dg_scenario_dt(s->scn)) ? dg_scenario_dt(s->scn)
                                                                          : 0.001;
    double duration = !isnan(s->o.duration)                    ? s->o.duration
                      : !isnan(dg_scenario_duration(s->scn)) ? dg_scenario_duration(s->scn)
                                                              : 10.0;
    double steps = ceil(duration / dt - 1e-9);
    if (steps > s->o.max_steps)
      rc = refuse_steps(&dg_cmd_sweep, steps, duration, dt, s->o.max_steps);
  }
  if (rc == EXIT_OK && s->o.variants_file)
    rc = read_variants(s);
  s->grid_size = 1;
  for (int k = 0; rc == EXIT_OK && k < s->o.grid.nkeys; k++) {
    s->grid_size *= s->o.grid.keys[k].n;
    if (s->grid_size > MAX_VARIANTS) {
      fprintf(stderr, "drivegraph sweep: more than %ld variants\n", MAX_VARIANTS);
      rc = EXIT_INVALID;
    }
  }
  s->total = s->grid_size * (s->nlines > 0 ? s->nlines : 1);
  if (rc == EXIT_OK && s->total > MAX_VARIANTS) {
    fprintf(stderr, "drivegraph sweep: more than %ld variants\n", MAX_VARIANTS);
    rc = EXIT_INVALID;
  }
  if (rc == EXIT_OK)
    rc = check_grid(s);
  if (rc == EXIT_OK)
    rc = choose_signals(s, g);
  dg_graph_free(g);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Variants and output                                                      */

static int max_overrides(const sweep *s) {
  int m = 0;
  for (int i = 0; i < s->nlines; i++)
    m = s->lines[i].n > m ? s->lines[i].n : m;
  return m + s->o.grid.nkeys;
}

/* The overrides of variant `index` into ov (line's first, then the grid's). */
static int variant_overrides(const sweep *s, long index, dg_override *ov) {
  int n = 0;
  long point = index % s->grid_size;
  if (s->nlines > 0) {
    const jsonl_line *l = &s->lines[index / s->grid_size];
    for (int i = 0; i < l->n; i++)
      ov[n++] = l->ov[i];
  }
  /* mixed radix, the last key fastest */
  long div = s->grid_size;
  for (int k = 0; k < s->o.grid.nkeys; k++) {
    const grid_key *g = &s->o.grid.keys[k];
    div /= g->n;
    ov[n++] = (dg_override){g->key, g->values[(point / div) % g->n]};
  }
  return n;
}

static void put_number(FILE *f, double x) {
  char buf[40];
  if (isfinite(x)) {
    shortest(buf, sizeof buf, x);
    fputs(buf, f);
  } else {
    fputs("null", f);
  }
}

static void put_string(FILE *f, const char *text) {
  json_t *j = json_string(text);
  char *d = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
  fputs(d ? d : "\"?\"", f);
  free(d);
  json_decref(j);
}

static void write_line(sweep *s, long index, int n, const dg_override *ov,
                       const dg_batch_result *r, const double *finals) {
  FILE *f = s->out;
  fprintf(f, "{\"variant\":%ld,\"overrides\":{", index);
  bool first = true;
  for (int i = 0; i < n; i++) {
    /* a later override of the same key wins: print only that one */
    bool later = false;
    for (int j = i + 1; j < n && !later; j++)
      later = strcmp(ov[i].key, ov[j].key) == 0;
    if (later)
      continue;
    if (!first)
      fputc(',', f);
    first = false;
    put_string(f, ov[i].key);
    fprintf(f, ":%s", ov[i].value);
  }
  fputc('}', f);
  if (r->code != DG_OK) {
    char msg[DG_ERROR_FILE_LEN + DG_ERROR_PATH_LEN + DG_ERROR_TEXT_LEN + 32];
    dg_error e = r->error;
    if (!e.file[0])
      snprintf(e.file, sizeof e.file, "%s", s->o.graph);
    dg_error_format(&e, msg, sizeof msg);
    fputs(",\"error\":", f);
    put_string(f, msg);
    fputs("}\n", f);
    if (s->failed++ < 3)
      fprintf(stderr, "drivegraph sweep: variant %ld failed: %s\n", index, msg);
    return;
  }
  s->ok++;
  /* the names and units of `sim --json` (tools/summary.c) */
  fputs(",\"t_0_100_kmh_s\":", f);
  put_number(f, r->t_0_100);
  fputs(",\"top_speed_kmh\":", f);
  put_number(f, 3.6 * r->top_speed);
  fputs(",\"final_time_s\":", f);
  put_number(f, r->final_time);
  fprintf(f, ",\"steps\":%ld,\"topology_changes\":%ld,\"energy\":{\"work_in_J\":", r->steps,
          r->topology_changes);
  put_number(f, r->work_in);
  fputs(",\"balance_error_J\":", f);
  put_number(f, r->balance_error);
  /* relative to the work in; sim also has a scale without work in (the
   * kinetic energy at the start), which a batch result does not carry */
  fputs(",\"balance_error_relative\":", f);
  put_number(f, r->work_in > 0.0 ? fabs(r->balance_error) / r->work_in : NAN);
  fputs("},\"final_values\":{", f);
  for (int k = 0; k < s->nsig; k++) {
    if (k)
      fputc(',', f);
    put_string(f, s->sig[k]);
    fputc(':', f);
    put_number(f, finals[k]);
  }
  fputs("}}\n", f);
}

static int open_output(sweep *s) {
  s->output = out_open("sweep", s->o.output ? s->o.output : "-");
  if (!s->output)
    return EXIT_INVALID;
  s->out = out_stream(s->output);
  return EXIT_OK;
}

/* Closes the output: moved into place when `keep`, given up otherwise.
 * EXIT_INVALID after "cannot write FILE: REASON" when it was not written
 * whole. */
static int close_output(sweep *s, bool keep) {
  out_file *o = s->output;
  s->output = NULL;
  s->out = NULL;
  if (!o)
    return EXIT_OK;
  if (!keep) {
    out_discard(o);
    return EXIT_OK;
  }
  if (out_close(o) != 0) {
    out_discard(o);
    return EXIT_INVALID;
  }
  return out_commit(o) == 0 ? EXIT_OK : EXIT_INVALID;
}

static int sweep_run(sweep *s) {
  dg_batch_options bo;
  dg_batch_options_init(&bo);
  bo.reg = s->reg;
  bo.graph_json = s->graph_text;
  bo.graph_name = s->o.graph;
  bo.scenario = s->scn;
  bo.dt = s->o.dt;
  bo.duration = s->o.duration;
  bo.threads = (int)s->o.jobs;
  bo.n_signals = s->nsig;
  bo.signals = (const char *const *)s->sig;
  long selected = s->total > s->o.shard.i ? (s->total - s->o.shard.i - 1) / s->o.shard.n + 1 : 0;
  int jobs = s->o.jobs > 0 ? (int)s->o.jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
  long chunk = (long)(jobs > 0 ? jobs : 1) * CHUNK_PER_THREAD;
  if (chunk > MAX_CHUNK)
    chunk = MAX_CHUNK;
  int per = max_overrides(s);
  dg_batch_variant *vars = calloc((size_t)chunk, sizeof *vars);
  dg_override *ovs = calloc((size_t)chunk * (size_t)(per ? per : 1), sizeof *ovs);
  dg_batch_result *res = calloc((size_t)chunk, sizeof *res);
  double *finals = calloc((size_t)chunk * (size_t)(s->nsig ? s->nsig : 1), sizeof *finals);
  long *index = calloc((size_t)chunk, sizeof *index);
  int rc = vars && ovs && res && finals && index ? EXIT_OK : EXIT_INVALID;
  if (rc != EXIT_OK)
    fprintf(stderr, "drivegraph sweep: out of memory\n");
  double start = now_seconds();
  for (long done = 0; rc == EXIT_OK && done < selected; done += chunk) {
    int m = (int)(selected - done < chunk ? selected - done : chunk);
    for (int i = 0; i < m; i++) {
      index[i] = s->o.shard.i + (done + i) * s->o.shard.n;
      dg_override *ov = ovs + (size_t)i * (size_t)per;
      vars[i] = (dg_batch_variant){variant_overrides(s, index[i], ov), ov};
    }
    dg_error err;
    if (dg_batch_run(&bo, m, vars, res, finals, &err) != DG_OK) {
      print_error(stderr, &err, s->o.graph);
      rc = EXIT_INVALID;
      break;
    }
    for (int i = 0; i < m; i++)
      write_line(s, index[i], vars[i].n_overrides, vars[i].overrides, &res[i],
                 finals + (size_t)i * (size_t)s->nsig);
    if (out_error(s->output)) /* lost: the rest would be too */
      break;
  }
  double wall = now_seconds() - start;
  free(vars);
  free(ovs);
  free(res);
  free(finals);
  free(index);
  /* a variant that failed still has its line: the output is complete;
   * whether it was written is known once it is closed */
  bool complete = rc == EXIT_OK;
  char lost[512];
  if (out_kind_of(s->output) == OUT_REPLACE)
    snprintf(lost, sizeof lost, "nothing was written to %s", out_name(s->output));
  else
    snprintf(lost, sizeof lost, "what reached %s is cut", out_name(s->output));
  if (close_output(s, complete) != EXIT_OK) {
    fprintf(stderr, "drivegraph sweep: %ld of %ld variant%s ran, but their results are lost: "
                    "%s\n", s->ok + s->failed, selected, selected == 1 ? "" : "s", lost);
    return EXIT_INVALID;
  }
  if (rc == EXIT_OK) {
    fprintf(stderr,
            "drivegraph sweep: %ld variant%s (shard %ld/%ld of %ld) in %.3f s on %d thread%s: "
            "%ld ok, %ld failed\n",
            selected, selected == 1 ? "" : "s", s->o.shard.i, s->o.shard.n, s->total, wall, jobs,
            jobs == 1 ? "" : "s", s->ok, s->failed);
    if (s->failed > 0)
      rc = EXIT_INVALID;
  }
  return rc;
}

static void sweep_free(sweep *s) {
  close_output(s, false);
  options_free(&dg_cmd_sweep, &s->o);
  for (int k = 0; k < s->o.grid.nkeys; k++) {
    for (int i = 0; i < s->o.grid.keys[k].n; i++)
      free(s->o.grid.keys[k].values[i]);
    free(s->o.grid.keys[k].values);
    free((char *)s->o.grid.keys[k].key);
  }
  free(s->o.grid.keys);
  for (int i = 0; i < s->nlines; i++) {
    for (int k = 0; k < s->lines[i].n; k++) {
      free((char *)s->lines[i].ov[k].key);
      free((char *)s->lines[i].ov[k].value);
    }
    free(s->lines[i].ov);
  }
  free(s->lines);
  for (int k = 0; k < s->nsig; k++)
    free(s->sig[k]);
  free(s->sig);
  dg_scenario_free(s->scn);
  free(s->graph_text);
  dg_registry_free(s->reg);
}

static int cmd_sweep(const command *cmd, int argc, char **argv) {
  sweep s = {.o = {.dt = NAN, .duration = NAN, .shard = {0, 1}, .max_steps = DEFAULT_MAX_STEPS}};
  int rc = sweep_parse_args(cmd, argc, argv, &s.o);
  if (rc == EXIT_OK) /* SIGINT and SIGTERM leave no temporary file */
    out_catch_signals(cmd->name);
  if (rc == EXIT_OK)
    rc = sweep_prepare(&s);
  if (rc == EXIT_OK)
    rc = open_output(&s);
  if (rc == EXIT_OK)
    rc = sweep_run(&s);
  sweep_free(&s);
  return rc == HELP_SHOWN ? EXIT_OK : rc;
}

const command dg_cmd_sweep = {
    .name = "sweep",
    .operands = "GRAPH",
    .summary = "Run many variants of a graph in parallel; one JSON line per variant.",
    .help =
        "Runs every variant of GRAPH as an independent simulation, one per thread at\n"
        "a time on --jobs threads, and writes one JSON line per variant in variant\n"
        "order, with the key names and units of `sim --json`:\n"
        "  {\"variant\": 0, \"overrides\": {...}, \"t_0_100_kmh_s\": s,\n"
        "   \"top_speed_kmh\": km/h, \"final_time_s\": s, \"steps\": N,\n"
        "   \"topology_changes\": N, \"energy\": {\"work_in_J\": J, \"balance_error_J\": J,\n"
        "   \"balance_error_relative\": ...}, \"final_values\": {\"<block>.<signal>\": value}}\n"
        "or {\"variant\": 3, \"overrides\": {...}, \"error\": \"...\"} for a failed run\n"
        "(numbers in their shortest exact form, null for none). t_0_100_kmh_s and\n"
        "top_speed_kmh use the speed of the first vehicle block. A summary goes to\n"
        "stderr. GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n\n"
        "Variants come from --set (a grid) and --variants (a list). Overrides are\n"
        "applied to the graph's JSON before it is loaded, so they are validated\n"
        "like the file; a bad --set value is named before anything runs.\n",
    .options = sweep_options,
    .footer = "Exit status: 0 every variant ran and its line was written; 1 invalid input,\n"
              "a plugin failed to load, a failed variant, or an output that could not be\n"
              "written (named with the reason; --output FILE is then left as it was);\n"
              "2 usage error, or more than --max-steps steps a variant. SIGINT or SIGTERM\n"
              "end the sweep by that signal and write no file (docs/output.md).\n",
    .run = cmd_sweep,
};
