/* Input bindings: where each block input takes its value from.
 *
 * A class declares its inputs in a table (dg_input_def: name, unit, range,
 * doc, default source). A graph binds any of them in the block's "inputs"
 * object to a named channel ("c1"), to another block's signal
 * ("driver.throttle") or to a number; the others follow their default
 * source (block.h describes the forms). At load, dgp_bind_parse reads the
 * object and dgp_bind_resolve resolves every binding once, lists the
 * channels the file names (a scenario must give them) and orders the
 * evaluation of signal-bound inputs: block B's input reading a
 * DG_SIGNAL_FEEDTHROUGH signal of block A needs A's inputs first, and a
 * cycle of such dependencies is an algebraic loop, refused.
 *
 * In a simulation every input is a pointer to its value (dg_block.in): a
 * channel's slot in sim->input, a constant in the graph or the class table,
 * or a slot of its own that dgp_bind_eval fills from the bound signal at the
 * current point. The solver calls dgp_bind_eval wherever the context moves
 * to a new point (each RK4 stage, the committed state before pre_step and
 * post_step, an event evaluation), so no string, lookup or allocation is
 * left for the step. */
#include "sim.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int input_find(const dg_block_class *k, const char *name) {
  for (int i = 0; k->inputs && k->inputs[i].name; i++)
    if (strcmp(k->inputs[i].name, name) == 0)
      return i;
  return -1;
}

static int signal_find(const dg_block_class *k, const char *name, size_t len) {
  for (int i = 0; k->signals && k->signals[i].name; i++)
    if (strlen(k->signals[i].name) == len && strncmp(k->signals[i].name, name, len) == 0)
      return i;
  return -1;
}

/* "a, b, c" of a class's input names into buf. */
static void input_list(const dg_block_class *k, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; k->inputs && k->inputs[i].name && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", k->inputs[i].name);
}

static void signal_list(const dg_block_class *k, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; k->signals && k->signals[i].name && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", k->signals[i].name);
}

/* ------------------------------------------------------------------------ */
/* Kinds and ranges                                                         */

void dgp_input_limits(const dg_gblock *b, int i, dg_range *r) {
  const dg_input_def *in = &b->klass->inputs[i];
  *r = (dg_range){-INFINITY, INFINITY, 0.0};
  if (in->flags & DG_P_MIN)
    r->min = in->min;
  if (in->flags & DG_P_MAX)
    r->max = in->max;
  if (in->flags & DG_INPUT_BOOL) {
    r->min = fmax(r->min, 0.0);
    r->max = fmin(r->max, 1.0);
  }
  if (b->klass->input_range && b->params)
    b->klass->input_range(b->params, i, r);
}

void dgp_signal_limits(const dg_gblock *b, int s, dg_range *r) {
  const dg_signal_def *sd = &b->klass->signals[s];
  *r = (dg_range){-INFINITY, INFINITY, 0.0};
  if (sd->flags & DG_SIGNAL_BOOL) {
    r->min = 0.0;
    r->max = 1.0;
  }
  if (sd->port == DG_SIGNAL_HOOK && b->klass->signal_range && b->params)
    b->klass->signal_range(b->params, s, r);
}

bool dgp_input_accepts(const dg_input_def *in, const dg_range *r, double v) {
  if (!isfinite(v) || v < r->min || v > r->max)
    return false;
  if ((in->flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL)) && v != floor(v))
    return false;
  return true;
}

void dgp_input_describe(const dg_input_def *in, const dg_range *r, char *buf, size_t size) {
  bool lo = isfinite(r->min), hi = isfinite(r->max);
  if (in->flags & DG_INPUT_BOOL)
    snprintf(buf, size, "0 or 1");
  else if ((in->flags & DG_INPUT_INTEGER) && lo && hi)
    snprintf(buf, size, "an integer from %g to %g", r->min, r->max);
  else if (in->flags & DG_INPUT_INTEGER)
    snprintf(buf, size, lo ? "an integer >= %g" : hi ? "an integer <= %g" : "an integer",
             lo ? r->min : r->max);
  else if (lo && hi)
    snprintf(buf, size, "a value in [%g, %g]", r->min, r->max);
  else if (lo || hi)
    snprintf(buf, size, lo ? "a value >= %g" : "a value <= %g", lo ? r->min : r->max);
  else
    snprintf(buf, size, "a finite value");
}

static bool in_range(const dg_input_def *in, double v) {
  return isfinite(v) && !((in->flags & DG_P_MIN) && v < in->min) &&
         !((in->flags & DG_P_MAX) && v > in->max);
}

static bool channel_name_ok(const char *s) {
  if (!s[0])
    return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
          *c == '_' || *c == '-'))
      return false;
  return true;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

void dgp_bind_parse(dg_graph *g, dg_gblock *b, const json_t *inputs, const char *path,
                   dg_diag *d) {
  const dg_block_class *k = b->klass;
  b->num_inputs = dgp_class_num_inputs(k);
  b->bind = dgp_arena_alloc(g->arena, sizeof *b->bind * (size_t)(b->num_inputs + 1));
  if (!b->bind) {
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    b->num_inputs = 0;
    return;
  }
  for (int i = 0; i < b->num_inputs; i++)
    b->bind[i] = (dg_gbind){.kind = DG_BIND_CONST, .value = k->inputs[i].def, .block = -1};
  if (!inputs)
    return;
  char ipath[DG_ERROR_PATH_LEN];
  dgp_pointer_append(ipath, sizeof ipath, path, "inputs");
  if (!json_is_object(inputs)) {
    dgp_diag_add(d, DG_ERR_SCHEMA, ipath,
                "expected an object binding inputs to channels, signals or numbers "
                "({ \"pedal\": \"c1\" }), got %s",
                dgp_json_type_name(inputs));
    return;
  }
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)inputs, key, v) {
    char kpath[DG_ERROR_PATH_LEN];
    dgp_pointer_append(kpath, sizeof kpath, ipath, key);
    int i = input_find(k, key);
    if (i < 0) {
      const char *names[64];
      int n = 0;
      while (n < 64 && k->inputs && k->inputs[n].name) {
        names[n] = k->inputs[n].name;
        n++;
      }
      const char *s = dg_suggest(key, names, n);
      char list[256];
      input_list(k, list, sizeof list);
      if (s)
        dgp_diag_add(d, DG_ERR_UNKNOWN, kpath, "unknown input of a %s; did you mean \"%s\"?",
                    k->type, s);
      else if (n > 0)
        dgp_diag_add(d, DG_ERR_UNKNOWN, kpath, "unknown input of a %s (its inputs: %s)", k->type,
                    list);
      else
        dgp_diag_add(d, DG_ERR_UNKNOWN, kpath, "a %s has no inputs", k->type);
      continue;
    }
    const dg_input_def *in = &k->inputs[i];
    dg_gbind *bi = &b->bind[i];
    if (json_is_number(v)) {
      double x = json_number_value(v);
      if (!in_range(in, x)) {
        char r[64]; /* an input's range is DG_P_MIN and DG_P_MAX only (in_range) */
        dgp_range_text(r, sizeof r, in->flags & (DG_P_MIN | DG_P_MAX), in->min, in->max,
                      DG_RANGE_INTERVAL);
        dgp_diag_add(d, DG_ERR_RANGE, kpath, "must be %s, got %g", r, x);
        continue;
      }
      *bi = (dg_gbind){.kind = DG_BIND_CONST, .given = true, .value = x, .block = -1};
    } else if (json_is_string(v)) {
      const char *s = json_string_value(v);
      *bi = (dg_gbind){.kind = DG_BIND_CHANNEL, .given = true,
                       .text = dgp_arena_strdup(g->arena, s), .block = -1};
      if (!bi->text)
        dgp_diag_add(d, DG_ERR_NOMEM, kpath, "out of memory");
    } else {
      dgp_diag_add(d, DG_ERR_SCHEMA, kpath,
                  "expected a channel name, \"block.signal\" or a number, got %s",
                  dgp_json_type_name(v));
    }
  }
}

/* ------------------------------------------------------------------------ */
/* Resolution                                                               */

static void add_channel(dg_graph *g, const char *name, const char *path, dg_diag *d) {
  for (int i = 0; i < g->num_channels; i++)
    if (strcmp(g->channels[i], name) == 0)
      return;
  size_t n = (size_t)g->num_channels + 1;
  const char **c = dgp_arena_alloc(g->arena, sizeof *c * n);
  const char **p = dgp_arena_alloc(g->arena, sizeof *p * n);
  char *pc = dgp_arena_strdup(g->arena, path);
  if (!c || !p || !pc) {
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    return;
  }
  if (g->num_channels) {
    memcpy(c, g->channels, sizeof *c * (size_t)g->num_channels);
    memcpy(p, g->channel_paths, sizeof *p * (size_t)g->num_channels);
  }
  c[g->num_channels] = name;
  p[g->num_channels] = pc;
  g->channels = c;
  g->channel_paths = p;
  g->num_channels++;
}

/* "block.signal" from the file. */
static void resolve_signal_text(dg_graph *g, dg_gbind *bi, const char *path, dg_diag *d) {
  const char *s = bi->text, *dot = strchr(s, '.');
  size_t len = (size_t)(dot - s);
  int src = dgp_graph_block_find_n(g, s, len);
  if (src < 0) {
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)(len < 120 ? len : 120), s);
    const char *sug = dgp_graph_suggest_block(g, id);
    char note[160];
    dgp_lookalike_note(id, sug, note, sizeof note);
    if (sug)
      dgp_diag_add(d, DG_ERR_UNKNOWN, path,
                  "\"%s\": unknown block \"%s\"; did you mean \"%s\"?%s (a source is a channel "
                  "name, \"block.signal\" or a number)",
                  s, id, sug, note);
    else
      dgp_diag_add(d, DG_ERR_UNKNOWN, path,
                  "\"%s\": unknown block \"%s\" (a source is a channel name, \"block.signal\" "
                  "or a number)",
                  s, id);
    return;
  }
  const dg_block_class *k = g->blocks[src].klass;
  if (!k)
    return; /* its type is already reported */
  const char *sig = dot + 1;
  int si = signal_find(k, sig, strlen(sig));
  if (si < 0) {
    const char *names[64];
    int n = 0;
    while (n < 64 && k->signals && k->signals[n].name) {
      names[n] = k->signals[n].name;
      n++;
    }
    const char *sug = dg_suggest(sig, names, n);
    char list[256];
    signal_list(k, list, sizeof list);
    if (sug)
      dgp_diag_add(d, DG_ERR_UNKNOWN, path, "\"%s\": a %s has no signal \"%s\"; did you mean \"%s\"?",
                  s, k->type, sig, sug);
    else
      dgp_diag_add(d, DG_ERR_UNKNOWN, path, "\"%s\": a %s has no signal \"%s\" (its signals: %s)",
                  s, k->type, sig, list);
    return;
  }
  bi->kind = DG_BIND_SIGNAL;
  bi->block = src;
  bi->signal = si;
}

static bool has_signal(const dg_graph *g, int block, const void *sig) {
  return signal_find(g->blocks[block].klass, sig, strlen(sig)) >= 0;
}

/* ">signal": the nearest block downstream of b (breadth first through out
 * ports) with a signal of that name. */
static void resolve_downstream(const dg_graph *g, int b, const char *sig, dg_gbind *bi) {
  int to = dgp_graph_nearest_downstream(g, b, has_signal, sig);
  if (to >= 0) {
    bi->kind = DG_BIND_SIGNAL;
    bi->block = to;
    bi->signal = signal_find(g->blocks[to].klass, sig, strlen(sig));
  }
}

/* "@type.signal": the graph's one block of that class. */
static void resolve_unique(const dg_graph *g, int b, int input, const char *src, dg_gbind *bi,
                           dg_diag *d) {
  const char *dot = strchr(src, '.');
  size_t tlen = (size_t)(dot - src - 1);
  int found = -1, count = 0;
  char others[256] = "";
  size_t used = 0;
  for (int i = 0; i < g->num_blocks; i++) {
    const dg_block_class *k = g->blocks[i].klass;
    if (!k || strlen(k->type) != tlen || strncmp(k->type, src + 1, tlen) != 0)
      continue;
    if (count++ == 0)
      found = i;
    if (used < sizeof others)
      used += (size_t)snprintf(others + used, sizeof others - used, "%s\"%s\"", count > 1 ? ", " : "",
                               g->blocks[i].id);
  }
  const dg_gblock *gb = &g->blocks[b];
  const dg_input_def *in = &gb->klass->inputs[input];
  if (count == 0 && !(in->flags & DG_INPUT_MEASURED))
    return; /* the constant default */
  if (count == 0) { /* a controller reading a constant: surely not meant */
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/blocks", gb->id);
    dgp_diag_warn(d, path,
                 "%s \"%s\": input \"%s\" follows the %s of the graph's %.*s, and the graph has "
                 "no %.*s: it reads %g throughout; add one, or bind the input (\"inputs\": { "
                 "\"%s\": \"<block>.<signal>\" })",
                 gb->klass->type, gb->id, in->name, dot + 1, (int)tlen, src + 1, (int)tlen,
                 src + 1, in->def, in->name);
    return;
  }
  if (count > 1) {
    char path[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN];
    dgp_pointer_append(ipath, sizeof ipath, "/blocks", gb->id);
    dgp_pointer_append(path, sizeof path, ipath, "inputs");
    dgp_diag_add(d, DG_ERR_TOPOLOGY, path,
                "input \"%s\" follows the %s of the graph's %.*s, but there are %d (%s): bind "
                "it, e.g. \"inputs\": { \"%s\": \"%s.%s\" }",
                in->name, dot + 1, (int)tlen, src + 1, count, others, in->name,
                g->blocks[found].id, dot + 1);
    return;
  }
  int si = signal_find(g->blocks[found].klass, dot + 1, strlen(dot + 1));
  if (si >= 0) {
    bi->kind = DG_BIND_SIGNAL;
    bi->block = found;
    bi->signal = si;
  }
}

static void resolve_default(dg_graph *g, int b, int i, dg_diag *d) {
  const dg_gblock *gb = &g->blocks[b];
  const dg_input_def *in = &gb->klass->inputs[i];
  dg_gbind *bi = &gb->bind[i];
  const char *src = in->source;
  *bi = (dg_gbind){.kind = DG_BIND_CONST, .value = in->def, .block = -1};
  if (!src || !src[0])
    return;
  if (src[0] == '>')
    resolve_downstream(g, b, src + 1, bi);
  else if (src[0] == '@')
    resolve_unique(g, b, i, src, bi, d);
  else {
    bi->kind = DG_BIND_CHANNEL;
    bi->channel = src;
  }
}

/* Whether block b's binding bi reads a feedthrough signal of another
 * block (one of its own is refused by check_given). */
static bool feeds_through(const dg_graph *g, int b, const dg_gbind *bi) {
  return bi->kind == DG_BIND_SIGNAL && bi->block != b &&
         (g->blocks[bi->block].klass->signals[bi->signal].flags & DG_SIGNAL_FEEDTHROUGH);
}

/* The evaluation order of signal-bound inputs: Kahn's algorithm on the
 * edges A → B where an input of B reads a feedthrough signal of A. What is
 * left over holds a cycle: an algebraic loop, reported with its chain. */
static void order_signals(dg_graph *g, dg_diag *d) {
  int nb = g->num_blocks;
  int *indeg = calloc((size_t)nb + 1, sizeof *indeg);
  int *queue = malloc(sizeof *queue * (size_t)(nb + 1));
  g->sig_order = dgp_arena_alloc(g->arena, sizeof *g->sig_order * (size_t)(nb + 1));
  if (!indeg || !queue || !g->sig_order) {
    free(indeg);
    free(queue);
    dgp_diag_add(d, DG_ERR_NOMEM, "", "out of memory");
    return;
  }
  for (int b = 0; b < nb; b++)
    for (int i = 0; i < g->blocks[b].num_inputs; i++)
      if (feeds_through(g, b, &g->blocks[b].bind[i]))
        indeg[b]++;
  int head = 0, tail = 0;
  for (int b = 0; b < nb; b++)
    if (indeg[b] == 0)
      queue[tail++] = b;
  while (head < tail) {
    int a = queue[head++];
    for (int b = 0; b < nb; b++)
      for (int i = 0; i < g->blocks[b].num_inputs; i++) {
        const dg_gbind *bi = &g->blocks[b].bind[i];
        if (feeds_through(g, b, bi) && bi->block == a && --indeg[b] == 0)
          queue[tail++] = b;
      }
  }
  memcpy(g->sig_order, queue, sizeof *queue * (size_t)tail);
  if (tail < nb) {
    /* walk back along unresolved feedthrough edges until a block repeats */
    int *step = malloc(sizeof *step * (size_t)(nb + 1)); /* input taken at each block */
    int *pos = malloc(sizeof *pos * (size_t)(nb + 1));
    int cur = 0;
    while (cur < nb && indeg[cur] == 0)
      cur++;
    for (int b = 0; pos && b < nb; b++)
      pos[b] = -1;
    int len = 0, *chain = malloc(sizeof *chain * (size_t)(nb + 1));
    while (step && pos && chain && pos[cur] < 0) {
      pos[cur] = len;
      chain[len] = cur;
      int next = -1;
      for (int i = 0; i < g->blocks[cur].num_inputs && next < 0; i++) {
        const dg_gbind *bi = &g->blocks[cur].bind[i];
        if (feeds_through(g, cur, bi) && indeg[bi->block] > 0) {
          next = bi->block;
          step[len] = i;
        }
      }
      len++;
      cur = next;
    }
    char msg[DG_ERROR_TEXT_LEN] = "";
    size_t used = 0;
    int first = pos && cur >= 0 ? pos[cur] : 0;
    /* chain[k] reads from chain[k+1]: print in the direction values flow */
    for (int k = len - 1; chain && step && k >= first && used < sizeof msg; k--) {
      const dg_gblock *gb = &g->blocks[chain[k]];
      const dg_gbind *bi = &gb->bind[step[k]];
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%s.%s -> %s.%s",
                               k == len - 1 ? "" : ", ", g->blocks[bi->block].id,
                               g->blocks[bi->block].klass->signals[bi->signal].name, gb->id,
                               gb->klass->inputs[step[k]].name);
    }
    char path[DG_ERROR_PATH_LEN] = "/blocks";
    if (chain && step && len > first) {
      char bpath[DG_ERROR_PATH_LEN];
      dgp_pointer_append(bpath, sizeof bpath, "/blocks", g->blocks[chain[first]].id);
      dgp_pointer_append(path, sizeof path, bpath, "inputs");
    }
    dgp_diag_add(d, DG_ERR_TOPOLOGY, path,
                "algebraic loop: %s (each signal depends on its block's inputs at the same "
                "instant; break the loop through a signal that does not, such as a speed or a "
                "controller's state)",
                msg);
    free(step);
    free(pos);
    free(chain);
  }
  free(indeg);
  free(queue);
}

/* "/blocks/<id>/inputs/<input>" into path. */
static void input_path(const dg_gblock *gb, int i, char *path, size_t size) {
  char bpath[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN];
  dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
  dgp_pointer_append(ipath, sizeof ipath, bpath, "inputs");
  dgp_pointer_append(path, size, ipath, gb->klass->inputs[i].name);
}

/* "[-1, 3]", "[0, inf)" ... of a signal's range. */
static void range_interval(const dg_range *r, char *buf, size_t size) {
  snprintf(buf, size, "%s%g, %g%s", isfinite(r->min) ? "[" : "(", r->min, r->max,
           isfinite(r->max) ? "]" : ")");
}

/* What the file binds input i of block b to must fit the input's kind
 * and range: a number (an integer for an integer input, 0 or 1 for a
 * boolean, within the range), a signal (integer or boolean signals for
 * those kinds; one whose known range misses the input's altogether can
 * never fit, one that overlaps it is clamped by the block as its doc
 * says). A block's input following its own feedthrough signal is a loop
 * through the block's own output, refused; its own speed or state is not
 * (a torque from its own shaft's speed: a damper). */
static void check_given(const dg_graph *g, int b, int i, dg_diag *d) {
  const dg_gblock *gb = &g->blocks[b];
  const dg_input_def *in = &gb->klass->inputs[i];
  const dg_gbind *bi = &gb->bind[i];
  if (!bi->given || bi->kind == DG_BIND_CHANNEL)
    return; /* channels: against each scenario (dg_scenario_check) */
  char path[DG_ERROR_PATH_LEN], want[96];
  input_path(gb, i, path, sizeof path);
  dg_range r;
  dgp_input_limits(gb, i, &r);
  dgp_input_describe(in, &r, want, sizeof want);
  if (bi->kind == DG_BIND_CONST) {
    if (!dgp_input_accepts(in, &r, bi->value))
      dgp_diag_add(d, DG_ERR_RANGE, path, "must be %s (got %g): input \"%s\" of a %s", want,
                  bi->value, in->name, gb->klass->type);
    return;
  }
  const dg_gblock *src = &g->blocks[bi->block];
  const dg_signal_def *sd = &src->klass->signals[bi->signal];
  char spath[DG_ERROR_PATH_LEN];
  dgp_pointer_append(spath, sizeof spath, "/blocks", src->id);
  if (bi->block == b && (sd->flags & DG_SIGNAL_FEEDTHROUGH)) {
    dgp_diag_add(d, DG_ERR_TOPOLOGY, path,
                "\"%s\": input \"%s\" follows the block's own signal \"%s\", which its inputs "
                "make at the same instant: a loop through the block's own output, the input "
                "defined by itself; bind another block's signal, a channel or a number",
                bi->text, in->name, sd->name);
    return;
  }
  bool whole = in->flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL);
  if (whole && !(sd->flags & (DG_SIGNAL_INTEGER | DG_SIGNAL_BOOL))) {
    dgp_diag_add(d, DG_ERR_SCHEMA, path,
                "\"%s\": input \"%s\" takes %s, and signal \"%s\" of %s \"%s\" (%s) takes "
                "any value in between: bind %s signal, a channel or a number",
                bi->text, in->name, want, sd->name, src->klass->type, src->id, spath,
                (in->flags & DG_INPUT_BOOL) ? "a boolean (0 or 1)" : "an integer");
    return;
  }
  dg_range sr;
  dgp_signal_limits(src, bi->signal, &sr);
  bool whole_fits = true; /* an integer range holding no integer the input takes */
  if (whole && isfinite(sr.min) && isfinite(sr.max))
    whole_fits = ceil(fmax(sr.min, r.min)) <= floor(fmin(sr.max, r.max));
  if (sr.max < r.min || sr.min > r.max || !whole_fits) {
    char have[96];
    range_interval(&sr, have, sizeof have);
    dgp_diag_add(d, DG_ERR_RANGE, path,
                "\"%s\": signal \"%s\" of %s \"%s\" (%s) takes values in %s, and input "
                "\"%s\" takes %s: it can never fit",
                bi->text, sd->name, src->klass->type, src->id, spath, have, in->name, want);
  }
}

/* An input whose time derivative its block reads (DG_INPUT_RATE) must be
 * bound to something that has one: a number, a channel, or a hook signal
 * of a time source. */
static void check_rate(const dg_graph *g, int b, int i, dg_diag *d) {
  const dg_gblock *gb = &g->blocks[b];
  const dg_input_def *in = &gb->klass->inputs[i];
  const dg_gbind *bi = &gb->bind[i];
  if (!(in->flags & DG_INPUT_RATE) || bi->kind != DG_BIND_SIGNAL || bi->block < 0)
    return;
  const dg_gblock *src = &g->blocks[bi->block];
  const dg_signal_def *sd = &src->klass->signals[bi->signal];
  if ((src->klass->flags & DG_CLASS_TIME_SOURCE) && sd->port == DG_SIGNAL_HOOK)
    return;
  char bpath[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN], path[DG_ERROR_PATH_LEN];
  dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
  dgp_pointer_append(ipath, sizeof ipath, bpath, "inputs");
  dgp_pointer_append(path, sizeof path, ipath, in->name);
  dgp_diag_add(d, DG_ERR_SCHEMA, path,
              "input \"%s\" needs its time derivative, and the signal \"%s.%s\" of block "
              "\"%s\" (%s) has none the solver can take: bind a number, a channel (a schedule "
              "or a callback) or a time source's signal (sine_source)",
              in->name, src->id, sd->name, src->id, src->klass->type);
}

/* Electrical power through DG_INPUT_ELECTRIC inputs (a bus's members, a
 * battery's load): bound to a signal, it must be a DG_SIGNAL_ELECTRIC_POWER
 * one (a machine's mechanical power is a likely slip), and no such signal
 * may be drawn twice, so that every bus balances at every stage. */
static void check_electric(const dg_graph *g, dg_diag *d) {
  for (int b = 0; b < g->num_blocks; b++) {
    const dg_gblock *gb = &g->blocks[b];
    if (!gb->klass || !gb->bind)
      continue;
    for (int i = 0; i < gb->num_inputs; i++) {
      const dg_input_def *in = &gb->klass->inputs[i];
      const dg_gbind *bi = &gb->bind[i];
      if (!(in->flags & DG_INPUT_ELECTRIC) || bi->kind != DG_BIND_SIGNAL || bi->block < 0)
        continue;
      const dg_gblock *src = &g->blocks[bi->block];
      const dg_signal_def *sd = &src->klass->signals[bi->signal];
      char bpath[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN], path[DG_ERROR_PATH_LEN];
      dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
      dgp_pointer_append(ipath, sizeof ipath, bpath, "inputs");
      dgp_pointer_append(path, sizeof path, ipath, in->name);
      if (!(sd->flags & DG_SIGNAL_ELECTRIC_POWER)) {
        const char *ep = NULL;
        for (int k = 0; src->klass->signals[k].name && !ep; k++)
          if (src->klass->signals[k].flags & DG_SIGNAL_ELECTRIC_POWER)
            ep = src->klass->signals[k].name;
        if (ep)
          dgp_diag_add(d, DG_ERR_SCHEMA, path,
                      "input \"%s\" draws electrical power, and \"%s.%s\" is not one: bind "
                      "\"%s.%s\", the electrical power the %s takes from its bus",
                      in->name, src->id, sd->name, src->id, ep, src->klass->type);
        else
          dgp_diag_add(d, DG_ERR_SCHEMA, path,
                      "input \"%s\" draws electrical power, and \"%s.%s\" is not one (a %s "
                      "has no electrical power: bind a machine's, a load's or a bus's "
                      "electric_power, a channel or a number)",
                      in->name, src->id, sd->name, src->klass->type);
        continue;
      }
      /* drawn by an earlier electrical input too? */
      for (int b2 = 0; b2 <= b; b2++) {
        const dg_gblock *g2 = &g->blocks[b2];
        if (!g2->klass || !g2->bind)
          continue;
        for (int i2 = 0; i2 < (b2 == b ? i : g2->num_inputs); i2++) {
          const dg_gbind *o = &g2->bind[i2];
          if (!(g2->klass->inputs[i2].flags & DG_INPUT_ELECTRIC) || o->kind != DG_BIND_SIGNAL ||
              o->block != bi->block || o->signal != bi->signal)
            continue;
          dgp_diag_add(d, DG_ERR_TOPOLOGY, path,
                      "\"%s.%s\" is drawn twice, by %s.%s and by %s.%s: a block's electrical "
                      "power goes to one bus (bind it once; a bus sums several)",
                      src->id, sd->name, g2->id, g2->klass->inputs[i2].name, gb->id, in->name);
          b2 = b + 1; /* report once */
          break;
        }
      }
    }
  }
}

void dgp_bind_resolve(dg_graph *g, dg_diag *d) {
  for (int b = 0; b < g->num_blocks; b++) {
    dg_gblock *gb = &g->blocks[b];
    if (!gb->klass || !gb->bind)
      continue;
    for (int i = 0; i < gb->num_inputs; i++) {
      dg_gbind *bi = &gb->bind[i];
      if (!bi->given) {
        resolve_default(g, b, i, d);
        continue;
      }
      if (!bi->text)
        continue; /* a number */
      char bpath[DG_ERROR_PATH_LEN], ipath[DG_ERROR_PATH_LEN], path[DG_ERROR_PATH_LEN];
      dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
      dgp_pointer_append(ipath, sizeof ipath, bpath, "inputs");
      dgp_pointer_append(path, sizeof path, ipath, gb->klass->inputs[i].name);
      if (strchr(bi->text, '.')) {
        resolve_signal_text(g, bi, path, d);
      } else if (!channel_name_ok(bi->text)) {
        dgp_diag_add(d, DG_ERR_SCHEMA, path,
                    "\"%s\": a channel name uses only letters, digits, '_' and '-' (or give "
                    "\"block.signal\" or a number)",
                    bi->text);
      } else {
        bi->kind = DG_BIND_CHANNEL;
        bi->channel = bi->text;
        add_channel(g, bi->channel, path, d);
      }
    }
    for (int i = 0; i < gb->num_inputs; i++) {
      const dg_input_def *in = &gb->klass->inputs[i];
      if ((in->flags & DG_INPUT_REQUIRED) && !gb->bind[i].given) {
        char bpath[DG_ERROR_PATH_LEN], path[DG_ERROR_PATH_LEN];
        dgp_pointer_append(bpath, sizeof bpath, "/blocks", gb->id);
        dgp_pointer_append(path, sizeof path, bpath, "inputs");
        dgp_diag_add(d, DG_ERR_SCHEMA, path,
                    "input \"%s\" (%s) must be bound: \"inputs\": { \"%s\": \"<channel>\" | "
                    "\"<block>.<signal>\" | number }",
                    in->name, in->doc ? in->doc : "", in->name);
      }
      check_rate(g, b, i, d);
      check_given(g, b, i, d);
    }
  }
  check_electric(g, d);
  order_signals(g, d);
}

/* ------------------------------------------------------------------------ */
/* The step size                                                            */

/* A signal oscillating at f is sampled by steps of dt only when f <= 1 /
 * (2 dt) (Nyquist); faster, the run sees an alias of it, or nothing (a
 * sine at a multiple of the step rate reads the same value every step). */
int dg_graph_check_step(const dg_graph *g, double dt, dg_diag_fn fn, void *user) {
  dg_diag d;
  dgp_diag_init(&d, g ? g->file : "", fn, user);
  if (!g || !(dt > 0) || !isfinite(dt)) {
    dgp_diag_add(&d, DG_ERR_USAGE, "", "no graph, or a step that is not > 0");
    return d.count;
  }
  for (int b = 0; b < g->num_blocks; b++) {
    const dg_gblock *gb = &g->blocks[b];
    if (!gb->klass || !gb->klass->signal_range)
      continue;
    double fastest = 0.0;
    const char *name = NULL;
    for (int s = 0; gb->klass->signals && gb->klass->signals[s].name; s++) {
      if (gb->klass->signals[s].port != DG_SIGNAL_HOOK)
        continue;
      dg_range r;
      dgp_signal_limits(gb, s, &r);
      if (r.frequency > fastest || isnan(r.frequency)) {
        fastest = r.frequency;
        name = gb->klass->signals[s].name;
      }
    }
    if (!name || fastest <= 0.5 / dt)
      continue;
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/blocks", gb->id);
    dgp_diag_add(&d, DG_ERR_RANGE, path,
                "signal \"%s\" oscillates at %g Hz, faster than steps of %g s can sample (at "
                "most %g Hz, half the step rate): use dt <= %g s, or a lower frequency",
                name, fastest, dt, 0.5 / dt, 0.5 / fastest);
  }
  return d.count;
}

/* ------------------------------------------------------------------------ */
/* Simulations                                                              */

int dgp_bind_channels(dg_sim *sim) {
  const dg_graph *g = sim->g;
  for (int b = 0; b < g->num_blocks; b++)
    for (int i = 0; i < g->blocks[b].num_inputs; i++) {
      const dg_gbind *bi = &g->blocks[b].bind[i];
      if (bi->kind != DG_BIND_CHANNEL)
        continue;
      if (dgp_sim_channel_add(sim, bi->channel) < 0)
        return -1;
    }
  return 0;
}

/* The slots the motion blocks' inputs read, with the slots their sources'
 * inputs read in turn (every input of a source counted, feedthrough or
 * not), in evaluation order: what a substep evaluates before it knows its
 * speeds, to know the prescribed ones (dgp_bind_eval_motion). */
static int motion_slots(dg_sim *sim, const int *consumer) {
  unsigned char *need = calloc((size_t)sim->nb + 1, 1), *take = calloc((size_t)sim->n_slots + 1, 1);
  if (!need || !take) {
    free(need);
    free(take);
    return -1;
  }
  for (int b = 0; b < sim->nb; b++)
    need[b] = sim->blocks[b].klass->motion != NULL;
  for (bool more = true; more;) { /* to a fixed point: any order of the slots */
    more = false;
    for (int k = sim->n_slots - 1; k >= 0; k--)
      if (need[consumer[k]] && !take[k]) {
        take[k] = 1;
        need[sim->slots[k].src->index] = 1;
        more = true;
      }
  }
  sim->n_motion_slots = 0;
  for (int k = 0; k < sim->n_slots; k++)
    if (take[k])
      sim->motion_slots[sim->n_motion_slots++] = k;
  free(need);
  free(take);
  return 0;
}

int dgp_bind_sim(dg_sim *sim) {
  const dg_graph *g = sim->g;
  int total = 0, slots = 0;
  for (int b = 0; b < g->num_blocks; b++)
    for (int i = 0; i < g->blocks[b].num_inputs; i++) {
      total++;
      slots += g->blocks[b].bind[i].kind == DG_BIND_SIGNAL;
    }
  sim->in_ptr = calloc((size_t)total + 1, sizeof *sim->in_ptr);
  sim->slot_val = calloc((size_t)slots + 1, sizeof *sim->slot_val);
  sim->slots = calloc((size_t)slots + 1, sizeof *sim->slots);
  sim->input_integer = calloc((size_t)sim->n_inputs + 1, sizeof *sim->input_integer);
  /* pointers in block order; slots in evaluation order */
  int *first = calloc((size_t)g->num_blocks + 1, sizeof *first);
  unsigned char *seen = calloc((size_t)sim->n_inputs + 1, 1);
  int *consumer = calloc((size_t)slots + 1, sizeof *consumer);
  sim->motion_slots = calloc((size_t)slots + 1, sizeof *sim->motion_slots);
  if (!sim->in_ptr || !sim->slot_val || !sim->slots || !sim->input_integer || !first || !seen ||
      !consumer || !sim->motion_slots) {
    free(first);
    free(seen);
    free(consumer);
    return -1;
  }
  int at = 0;
  for (int b = 0; b < g->num_blocks; b++) {
    first[b] = at;
    sim->blocks[b].in = sim->in_ptr + at;
    at += g->blocks[b].num_inputs;
  }
  for (int k = 0; k < g->num_blocks; k++) {
    int b = g->sig_order ? g->sig_order[k] : k;
    const dg_gblock *gb = &g->blocks[b];
    for (int i = 0; i < gb->num_inputs; i++) {
      const dg_gbind *bi = &gb->bind[i];
      const double **dst = &sim->in_ptr[first[b] + i];
      const dg_input_def *in = &gb->klass->inputs[i];
      switch (bi->kind) {
      case DG_BIND_CONST:
        *dst = &bi->value;
        break;
      case DG_BIND_CHANNEL: {
        int ch = dg_sim_input_find(sim, bi->channel);
        DG_ASSERT(ch >= 0);
        *dst = &sim->input[ch];
        if (in->flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL))
          sim->input_integer[ch] = 1;
        /* a channel not given holds the input's default (the first
         * consumer's, when several read it) */
        if (!seen[ch]) {
          sim->input[ch] = in->def;
          seen[ch] = 1;
        }
        break;
      }
      case DG_BIND_SIGNAL: {
        const dg_block *src = &sim->blocks[bi->block];
        const dg_signal_def *sd = &src->klass->signals[bi->signal];
        dg_slot *s = &sim->slots[sim->n_slots];
        *s = (dg_slot){.src = src, .signal = bi->signal,
                       .node = sd->port >= 0 ? src->node[sd->port] : -1,
                       .scale = sd->scale != 0.0 ? sd->scale : 1.0};
        consumer[sim->n_slots] = b;
        *dst = &sim->slot_val[sim->n_slots++];
        break;
      }
      }
    }
  }
  free(first);
  free(seen);
  int rc = motion_slots(sim, consumer);
  free(consumer);
  return rc;
}

/* Slot s's value at the context's point. */
static inline double slot_value(const dg_ctx *ctx, const dg_slot *s) {
  return s->node >= 0 ? s->scale * ctx->speed[s->node]
                      : s->src->klass->signal(s->src, ctx, s->signal);
}

void dgp_bind_eval_motion(dg_sim *sim) {
  for (int i = 0; i < sim->n_motion_slots; i++) {
    int k = sim->motion_slots[i];
    sim->slot_val[k] = slot_value(&sim->ctx, &sim->slots[k]);
  }
}

void dgp_bind_eval_slots(dg_sim *sim) {
  const dg_slot *slots = sim->slots; /* in locals: a signal hook may write any memory */
  double *val = sim->slot_val;
  for (int k = 0, n = sim->n_slots; k < n; k++)
    val[k] = slot_value(&sim->ctx, &slots[k]);
}

/* ------------------------------------------------------------------------ */
/* Public queries                                                           */

int dg_graph_channel_count(const dg_graph *g) { return g ? g->num_channels : 0; }
const char *dg_graph_channel_name(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_channels ? g->channels[i] : NULL;
}
const char *dg_graph_channel_path(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_channels ? g->channel_paths[i] : NULL;
}

const char *dg_graph_input_channel(const dg_graph *g, int block, const char *input) {
  if (!g || block < 0 || block >= g->num_blocks || !input || !g->blocks[block].klass)
    return NULL;
  const dg_gblock *gb = &g->blocks[block];
  int i = input_find(gb->klass, input);
  if (i < 0 || !gb->bind || gb->bind[i].kind != DG_BIND_CHANNEL)
    return NULL;
  return gb->bind[i].channel;
}

int dg_graph_input_count(const dg_graph *g, int block) {
  return g && block >= 0 && block < g->num_blocks ? g->blocks[block].num_inputs : 0;
}

const char *dg_graph_input_name(const dg_graph *g, int block, int i) {
  if (i < 0 || i >= dg_graph_input_count(g, block))
    return NULL;
  return g->blocks[block].klass->inputs[i].name;
}

int dg_graph_input_source(const dg_graph *g, int block, int i, dg_input_source *src) {
  if (i < 0 || i >= dg_graph_input_count(g, block) || !src)
    return -1;
  const dg_gbind *bi = &g->blocks[block].bind[i];
  *src = (dg_input_source){.kind = (int)bi->kind, .given = bi->given, .value = bi->value,
                           .channel = bi->kind == DG_BIND_CHANNEL ? bi->channel : NULL,
                           .block = bi->kind == DG_BIND_SIGNAL ? bi->block : -1,
                           .signal = bi->kind == DG_BIND_SIGNAL
                                         ? g->blocks[bi->block].klass->signals[bi->signal].name
                                         : NULL};
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Input rates (DG_INPUT_RATE)                                              */

/* Central differences' steps: 1e-6 s for a first derivative keeps the
 * truncation error (h² f‴/6) and the cancellation error (ε |f| / h) both
 * near 1e-10 of the value; 1e-4 s for a second (h² f⁗/12 and 4 ε |f| / h²,
 * both near 1e-8). */
static double diff_step(int order, double t) { return (order == 1 ? 1e-6 : 1e-4) * fmax(1.0, fabs(t)); }

/* f' or f'' at t from f at t - h, t, t + h. */
static double central(int order, double h, double down, double mid, double up) {
  return order == 1 ? (up - down) / (2.0 * h) : (up - 2.0 * mid + down) / (h * h);
}

static double timed_derivative(const dg_timed_input *ti, double t, int order) {
  if (ti->fn) {
    double h = diff_step(order, t);
    return central(order, h, ti->fn(t - h, ti->user), order == 2 ? ti->fn(t, ti->user) : 0.0,
                   ti->fn(t + h, ti->user));
  }
  int k = ti->piece;
  if (order != 1 || ti->stepped || k < 0 || k >= ti->n - 1)
    return 0.0;
  return (ti->v[k + 1] - ti->v[k]) / (ti->t[k + 1] - ti->t[k]);
}

double dg_block_input_derivative(const dg_ctx *ctx, const dg_block *b, int input, int order) {
  const dg_sim *sim = ctx->sim;
  const dg_gbind *bi = &sim->g->blocks[b->index].bind[input];
  if (order != 1 && order != 2)
    return NAN;
  switch (bi->kind) {
  case DG_BIND_CONST:
    return 0.0;
  case DG_BIND_CHANNEL: {
    ptrdiff_t ch = b->in[input] - sim->input;
    for (int i = 0; i < sim->n_timed; i++)
      if (sim->timed[i].input == ch)
        return timed_derivative(&sim->timed[i], ctx->t, order);
    return 0.0; /* a value held (dg_sim_set_input), or not given */
  }
  case DG_BIND_SIGNAL: {
    const dg_block *src = &sim->blocks[bi->block];
    if (!(src->klass->flags & DG_CLASS_TIME_SOURCE))
      return NAN; /* refused at load (check_rate) */
    dg_ctx c = *ctx;
    double h = diff_step(order, ctx->t), f[3];
    for (int k = 0; k < 3; k++) {
      c.t = ctx->t + (k - 1) * h;
      f[k] = k == 1 && order == 1 ? 0.0 : src->klass->signal(src, &c, bi->signal);
    }
    return central(order, h, f[0], f[1], f[2]);
  }
  }
  return NAN;
}
