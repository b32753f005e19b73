/* drivegraph dot: the graph as Graphviz DOT.
 *
 * Power flows left to right (rankdir=LR). Each block is an HTML-like table:
 * its connected `in` ports on the left, its id, type and a few telling
 * parameters in the middle, its connected `out` ports on the right; every
 * connection is an edge from the out port's cell to the in port's cell, so
 * both port names sit at the ends of the edge. Shafts (rotational ports)
 * are solid blue, ground contacts (linear ports) dashed brown. Fill colours
 * say a block's role, read from its port table: source (no in port),
 * transmission (rotational in and out), wheel (rotational and linear),
 * body (linear only), load (in ports only).
 *
 * Which parameters a node shows is decided from the parameter tables alone,
 * in this order, up to MAX_PARAMS lines: enum parameters (given or their
 * default: "kind open", "shift.mode auto_rpm"), then required parameters,
 * then the other parameters the file gives, in table order. Arrays are cut
 * to a few values, tables summarised by their size and value range.
 *
 * Escaping: labels are HTML-like (<...>) with &amp; &lt; &gt; &quot; and
 * numeric entities for backslashes, so any id prints as written; node names
 * are quoted ids (quote escaped), or "block.N" for an id with a backslash or
 * a control character, which a DOT quoted string cannot always carry (a
 * '.' never appears in an id, so "block.N" cannot clash with one). */
#include "output.h"
#include "plugin.h"
#include "tool.h"

#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

#include <jansson.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 4     /* parameter lines per node */
#define MAX_ARRAY_SHOWN 4 /* arrays longer than this show 3 values, "…", the last */

/* ------------------------------------------------------------------------ */
/* Escaping                                                                 */

/* Text for an HTML-like label. UTF-8 passes through; control characters
 * (which cannot be shown) become U+FFFD. */
static void put_html(FILE *out, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\\': fputs("&#92;", out); break;
    default:
      if (c < 0x20 || c == 0x7f)
        fputs("&#xFFFD;", out);
      else
        fputc(c, out);
    }
  }
}

/* Whether a DOT quoted string can carry `s` with only `"` escaped: a
 * backslash could join the closing quote and a control character would
 * break the line. */
static bool dot_quotable(const char *s) {
  for (; *s; s++)
    if (*s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
      return false;
  return true;
}

static void put_quoted(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"')
      fputc('\\', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

/* The node name of block `index`. */
static void put_node_name(FILE *out, const char *id, int index) {
  if (dot_quotable(id))
    put_quoted(out, id);
  else
    fprintf(out, "\"block.%d\"", index);
}

/* The cell name of port `index` of a class: the port's name when it is a
 * plain word, else "p.N". */
static bool plain_word(const char *s) {
  if (!*s)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

static void put_port_name(FILE *out, const dg_port_def *p, int index) {
  if (plain_word(p->name))
    fprintf(out, "\"%s\"", p->name);
  else
    fprintf(out, "\"p.%d\"", index);
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */

/* Units as a person writes them: N*m -> N·m, kg*m^2 -> kg·m². */
static void put_unit(FILE *out, const char *unit) {
  for (const char *u = unit; *u; u++) {
    if (*u == '*')
      fputs("\xc2\xb7", out); /* · */
    else if (u[0] == '^' && u[1] == '2')
      fputs("\xc2\xb2", out), u++;
    else if (u[0] == '^' && u[1] == '3')
      fputs("\xc2\xb3", out), u++;
    else {
      char one[2] = {*u, '\0'};
      put_html(out, one);
    }
  }
}

/* " unit", left out when the key already says it ("idle_rpm"). */
static void put_value_unit(FILE *out, const dg_param_def *d) {
  if (!d->unit || !d->unit[0])
    return;
  size_t k = strlen(d->key), u = strlen(d->unit);
  if (k > u && d->key[k - u - 1] == '_' && strcmp(d->key + k - u, d->unit) == 0)
    return;
  fputc(' ', out);
  put_unit(out, d->unit);
}

static void put_number(FILE *out, double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%g", v);
  /* a real minus sign reads better than a hyphen */
  if (buf[0] == '-')
    fprintf(out, "\xe2\x88\x92%s", buf + 1);
  else
    fputs(buf, out);
}

/* Smallest and largest number anywhere in a JSON value (nested arrays). */
static void number_range(const json_t *v, double *lo, double *hi, int *count) {
  if (json_is_number(v)) {
    double x = json_number_value(v);
    if (*count == 0 || x < *lo)
      *lo = x;
    if (*count == 0 || x > *hi)
      *hi = x;
    ++*count;
  } else if (json_is_array(v)) {
    size_t i;
    const json_t *e;
    json_array_foreach(v, i, e) number_range(e, lo, hi, count);
  }
}

/* "a…b unit" over the numbers of `v`. */
static void put_range(FILE *out, const json_t *v, const dg_param_def *d) {
  double lo = 0, hi = 0;
  int count = 0;
  number_range(v, &lo, &hi, &count);
  if (count == 0)
    return;
  fputs(", ", out);
  put_number(out, lo);
  if (hi != lo) {
    fputs("\xe2\x80\xa6", out); /* … */
    put_number(out, hi);
  }
  put_value_unit(out, d);
}

/* One parameter's value (`v` from the file, NULL for the default). */
static void put_value(FILE *out, const dg_param_def *d, const json_t *v) {
  switch (d->kind) {
  case DG_PARAM_NUMBER:
  case DG_PARAM_INTEGER:
    put_number(out, v ? json_number_value(v) : d->def);
    put_value_unit(out, d);
    return;
  case DG_PARAM_BOOL:
    fputs((v ? json_is_true(v) : d->def != 0.0) ? "yes" : "no", out);
    return;
  case DG_PARAM_ENUM:
    if (v)
      put_html(out, json_string_value(v));
    else if (d->choices)
      put_html(out, d->choices[(int)d->def]);
    return;
  case DG_PARAM_ARRAY: {
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
      if (n > MAX_ARRAY_SHOWN && i == MAX_ARRAY_SHOWN - 1) {
        fputs(" \xe2\x80\xa6", out);
        i = n - 1;
      }
      if (i > 0)
        fputc(' ', out);
      put_number(out, json_number_value(json_array_get(v, i)));
    }
    put_value_unit(out, d);
    if (n > MAX_ARRAY_SHOWN)
      fprintf(out, " (%zu)", n);
    return;
  }
  case DG_PARAM_TABLE1D:
    fprintf(out, "%zu points", json_array_size(json_object_get(v, d->axis[0])));
    put_range(out, json_object_get(v, d->axis[1]), d);
    return;
  case DG_PARAM_TABLE2D:
    fprintf(out, "%zu\xc3\x97%zu table", json_array_size(json_object_get(v, d->axis[0])),
            json_array_size(json_object_get(v, d->axis[1])));
    put_range(out, json_object_get(v, d->axis[2]), d);
    return;
  case DG_PARAM_OBJECT:
    fputs("{\xe2\x80\xa6}", out);
    return;
  }
}

/* ------------------------------------------------------------------------ */
/* Choosing the parameters a node shows                                     */

typedef struct shown {
  const dg_param_def *def;
  const json_t *value; /* NULL: the default */
  char key[128];       /* "tyre.model" for nested parameters */
} shown;

typedef struct picker {
  shown items[MAX_PARAMS];
  int n;
} picker;

static bool already(const picker *pk, const dg_param_def *d) {
  for (int i = 0; i < pk->n; i++)
    if (pk->items[i].def == d)
      return true;
  return false;
}

static void pick(picker *pk, const dg_param_def *d, const json_t *v, const char *prefix) {
  if (pk->n == MAX_PARAMS || already(pk, d))
    return;
  shown *s = &pk->items[pk->n++];
  s->def = d;
  s->value = v;
  snprintf(s->key, sizeof s->key, "%s%s", prefix, d->key);
}

enum pass { PASS_ENUM, PASS_REQUIRED, PASS_GIVEN };

/* One pass over a parameter table (nested objects recursively; `obj` is
 * the JSON object the table describes, NULL when absent). */
static void pick_pass(picker *pk, const dg_param_def *defs, const json_t *obj, const char *prefix,
                      enum pass pass) {
  for (const dg_param_def *d = defs; d && d->key && pk->n < MAX_PARAMS; d++) {
    const json_t *v = obj ? json_object_get(obj, d->key) : NULL;
    if (d->kind == DG_PARAM_OBJECT) {
      /* enums inside show with their default even when the object is
       * absent ("tyre.model rolling"); the rest only when given */
      if (!v && pass != PASS_ENUM)
        continue;
      char nested[128];
      snprintf(nested, sizeof nested, "%s%s.", prefix, d->key);
      pick_pass(pk, d->fields, json_is_object(v) ? v : NULL, nested, pass);
      continue;
    }
    bool take = (pass == PASS_ENUM && d->kind == DG_PARAM_ENUM) ||
                (pass == PASS_REQUIRED && d->required && v) || (pass == PASS_GIVEN && v);
    if (take)
      pick(pk, d, v, prefix);
  }
}

/* ------------------------------------------------------------------------ */
/* Nodes and edges                                                          */

typedef enum role { ROLE_SOURCE, ROLE_TRANSMISSION, ROLE_WHEEL, ROLE_BODY, ROLE_LOAD } role;

/* Fill and border colours per role. */
static const char *const role_fill[] = {"#fde3cf", "#dde8f6", "#e0f0d9", "#ece4f5", "#eeeeee"};
static const char *const role_border[] = {"#c0702f", "#4a6fa5", "#4f8a3c", "#7d5ba6", "#777777"};

/* A block's role from its class's port table. */
static role class_role(const dg_block_class *k) {
  bool in = false, out = false, rot = false, lin = false;
  for (const dg_port_def *p = k->ports; p && p->name; p++) {
    if (p->dir == DG_PORT_INTERNAL)
      continue;
    in = in || p->dir == DG_PORT_IN;
    out = out || p->dir == DG_PORT_OUT;
    rot = rot || p->domain == DG_ROTATIONAL;
    lin = lin || p->domain == DG_LINEAR;
  }
  if (lin && !rot)
    return ROLE_BODY;
  if (lin)
    return ROLE_WHEEL;
  if (!in)
    return ROLE_SOURCE;
  if (!out)
    return ROLE_LOAD;
  return ROLE_TRANSMISSION;
}

typedef struct dot_graph {
  const dg_graph *g;
  const dg_registry *reg;
  const json_t *blocks; /* the "blocks" object of the file */
  bool **connected;     /* [block][port] */
} dot_graph;

/* A column of port cells (direction `dir`), or nothing when the block has
 * no connected port of that direction. */
static bool in_column(dg_port_dir port, dg_port_dir column) {
  /* members that may drive or be driven go with the out ports, on the right */
  return port == column || (column == DG_PORT_OUT && port == DG_PORT_ANY);
}

static void put_port_column(FILE *out, const dg_block_class *k, const bool *connected,
                            dg_port_dir dir, const char *border) {
  int n = 0;
  for (int p = 0; k->ports && k->ports[p].name; p++)
    n += in_column(k->ports[p].dir, dir) && connected[p];
  if (n == 0)
    return;
  /* Fixed-size cells: a lone port cell would otherwise stretch to the
   * height of the block. The width allows 5 pt per character of 8 pt
   * text (common sans fonts average 4 to 4.8), the same for the column. */
  size_t longest = 0;
  for (int p = 0; k->ports && k->ports[p].name; p++)
    if (in_column(k->ports[p].dir, dir) && connected[p] && strlen(k->ports[p].name) > longest)
      longest = strlen(k->ports[p].name);
  int width = (int)(5.0 * (double)longest) + 10;
  fprintf(out, "<TD><TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"3\" CELLPADDING=\"2\">");
  for (int p = 0; k->ports && k->ports[p].name; p++) {
    const dg_port_def *pd = &k->ports[p];
    if (!in_column(pd->dir, dir) || !connected[p])
      continue;
    fprintf(out, "<TR><TD PORT=");
    put_port_name(out, pd, p);
    fprintf(out,
            " FIXEDSIZE=\"TRUE\" WIDTH=\"%d\" HEIGHT=\"16\" BGCOLOR=\"white\" COLOR=\"%s\">"
            "<FONT POINT-SIZE=\"8\" COLOR=\"#444444\">",
            width, border);
    put_html(out, pd->name);
    fprintf(out, "</FONT></TD></TR>");
  }
  fprintf(out, "</TABLE></TD>");
}

static void put_node(FILE *out, const dot_graph *dg, int b) {
  const char *id = dg_graph_block_id(dg->g, b);
  const dg_block_class *k = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b));
  if (!k)
    return; /* cannot happen: the graph loaded with this registry */
  const json_t *obj = json_object_get(dg->blocks, id);
  role r = class_role(k);
  picker pk = {.n = 0};
  pick_pass(&pk, k->params, obj, "", PASS_ENUM);
  pick_pass(&pk, k->params, obj, "", PASS_REQUIRED);
  pick_pass(&pk, k->params, obj, "", PASS_GIVEN);

  fputs("  ", out);
  put_node_name(out, id, b);
  fprintf(out, " [tooltip=");
  put_quoted(out, dot_quotable(id) ? id : "");
  fprintf(out, ", label=<<TABLE BORDER=\"1\" STYLE=\"ROUNDED\" CELLBORDER=\"0\" "
               "CELLSPACING=\"0\" CELLPADDING=\"3\" COLOR=\"%s\" BGCOLOR=\"%s\"><TR>",
          role_border[r], role_fill[r]);
  put_port_column(out, k, dg->connected[b], DG_PORT_IN, role_border[r]);
  fprintf(out, "<TD><TABLE BORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">");
  fprintf(out, "<TR><TD COLSPAN=\"2\"><B>");
  put_html(out, id);
  fprintf(out, "</B></TD></TR><TR><TD COLSPAN=\"2\"><FONT POINT-SIZE=\"9\" COLOR=\"%s\">",
          role_border[r]);
  put_html(out, k->type);
  fprintf(out, "</FONT></TD></TR>");
  /* Keys and values in two columns, the gap made of no-break spaces: SVG
   * drops the leading space of a text run, so "key value" in one cell
   * would render as "keyvalue". */
  for (int i = 0; i < pk.n; i++) {
    fprintf(out, "<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\" COLOR=\"#666666\">");
    put_html(out, pk.items[i].key);
    fprintf(out, "&#160;&#160;</FONT></TD><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"8\">");
    put_value(out, pk.items[i].def, pk.items[i].value);
    fprintf(out, "</FONT></TD></TR>");
  }
  fprintf(out, "</TABLE></TD>");
  put_port_column(out, k, dg->connected[b], DG_PORT_OUT, role_border[r]);
  fprintf(out, "</TR></TABLE>>];\n");
}

/* "block.port" → block index and port index (-1 when unknown). */
static void resolve(const dot_graph *dg, const char *endpoint, int *block, int *port) {
  *block = *port = -1;
  const char *dot = strchr(endpoint, '.');
  if (!dot)
    return;
  size_t len = (size_t)(dot - endpoint);
  for (int b = 0; b < dg_graph_block_count(dg->g); b++) {
    const char *id = dg_graph_block_id(dg->g, b);
    if (strlen(id) != len || strncmp(id, endpoint, len) != 0)
      continue;
    const dg_block_class *k = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b));
    for (int p = 0; k && k->ports && k->ports[p].name; p++)
      if (strcmp(k->ports[p].name, dot + 1) == 0) {
        *block = b;
        *port = p;
      }
    return;
  }
}

/* Whether shaft `c` joins linear ports. */
static bool connection_is_linear(const dot_graph *dg, int c) {
  int b, p;
  resolve(dg, dg_graph_shaft_port(dg->g, c, 0), &b, &p);
  if (p < 0)
    return false;
  const dg_block_class *k = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b));
  return k->ports[p].domain == DG_LINEAR;
}

/* One end of an edge: "node":port:side. */
static void put_end(FILE *out, const dot_graph *dg, int b, int p, const char *side) {
  const dg_block_class *k = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b));
  put_node_name(out, dg_graph_block_id(dg->g, b), b);
  fputc(':', out);
  put_port_name(out, &k->ports[p], p);
  fputs(side, out);
}

static void put_attrs(FILE *out, bool linear, bool directed, const char *from, const char *to) {
  fputs(" [", out);
  if (linear)
    fputs("style=dashed, color=\"#8c6d31\", penwidth=1.5, arrowhead=empty, ", out);
  if (!directed)
    fputs("dir=none, ", out);
  fputs("tooltip=", out);
  if (from && to && dot_quotable(from) && dot_quotable(to)) {
    char text[2 * DG_ERROR_PATH_LEN + 16];
    snprintf(text, sizeof text, "%s \xe2\x86\x92 %s%s", from, to, linear ? " (ground)" : "");
    put_quoted(out, text);
  } else {
    put_quoted(out, linear ? "ground contact" : "shaft");
  }
  fputs("];\n", out);
}

/* Shaft c: two ports make one edge from the source side (an out port, or
 * a port of direction "any") to the other; more meet at a junction point,
 * with out ports drawn into it, in ports out of it, "any" ports undirected. */
static void put_edge(FILE *out, const dot_graph *dg, int c) {
  int n = dg_graph_shaft_port_count(dg->g, c);
  int b[64], p[64];
  if (n > 64)
    n = 64;
  for (int k = 0; k < n; k++) {
    resolve(dg, dg_graph_shaft_port(dg->g, c, k), &b[k], &p[k]);
    if (p[k] < 0)
      return; /* cannot happen in a loaded graph */
  }
  const dg_block_class *k0 = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b[0]));
  bool linear = k0->ports[p[0]].domain == DG_LINEAR;
  if (n == 2) {
    const dg_block_class *k1 = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b[1]));
    int s = k0->ports[p[0]].dir == DG_PORT_IN || k1->ports[p[1]].dir == DG_PORT_OUT ? 1 : 0;
    bool directed = k0->ports[p[0]].dir != DG_PORT_ANY || k1->ports[p[1]].dir != DG_PORT_ANY;
    fputs("  ", out);
    put_end(out, dg, b[s], p[s], ":e");
    fputs(" -> ", out);
    put_end(out, dg, b[1 - s], p[1 - s], ":w");
    put_attrs(out, linear, directed, dg_graph_shaft_port(dg->g, c, s),
              dg_graph_shaft_port(dg->g, c, 1 - s));
    return;
  }
  fprintf(out, "  shaft_%d [shape=point, width=0.12, tooltip=\"shaft of %d ports\"];\n", c, n);
  for (int k = 0; k < n; k++) {
    const dg_block_class *kk = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b[k]));
    dg_port_dir dir = kk->ports[p[k]].dir;
    fputs("  ", out);
    if (dir == DG_PORT_OUT) {
      put_end(out, dg, b[k], p[k], ":e");
      fprintf(out, " -> shaft_%d", c);
    } else {
      fprintf(out, "shaft_%d -> ", c);
      put_end(out, dg, b[k], p[k], ":w");
    }
    put_attrs(out, linear, dir != DG_PORT_ANY, dg_graph_shaft_port(dg->g, c, k), "shaft");
  }
}

/* The label of the bindings of block b's inputs to block `from`'s signals,
 * from input `first` on: "signal → input", one per input, an input after
 * another of the same signal joined as "signal → a, b", others after
 * "; ". One arrow per pair of blocks: parallel arrows between the same two
 * nodes are what Graphviz's router cannot always draw. */
static void binding_label(const dg_graph *g, int b, int first, int from, char *label,
                          size_t size) {
  size_t len = 0;
  const char *last = NULL;
  label[0] = '\0';
  for (int i = first; i < dg_graph_input_count(g, b) && len < size; i++) {
    dg_input_source src;
    if (dg_graph_input_source(g, b, i, &src) != 0 || src.kind != 2 || src.block != from)
      continue;
    const char *input = dg_graph_input_name(g, b, i);
    int n = last && strcmp(last, src.signal) == 0
                ? snprintf(label + len, size - len, ", %s", input)
                : snprintf(label + len, size - len, "%s%s \xe2\x86\x92 %s", last ? "; " : "",
                           src.signal, input);
    len += n > 0 ? (size_t)n : 0;
    last = src.signal;
  }
}

/* Whether an input of block b before `i` is bound to a signal of `from`
 * (its arrow, with i's label, is drawn already). */
static bool binding_drawn(const dg_graph *g, int b, int i, int from) {
  for (int j = 0; j < i; j++) {
    dg_input_source src;
    if (dg_graph_input_source(g, b, j, &src) == 0 && src.kind == 2 && src.block == from)
      return true;
  }
  return false;
}

/* Signal bindings as dotted arrows from the source block to the block
 * that reads it, labelled "signal → input" (one arrow per pair of blocks);
 * channels the file binds by name as small ellipses with a dotted arrow to
 * each reader. Defaults that follow a standard channel are left out (every
 * car would be a thicket). */
static void put_bindings(FILE *out, const dot_graph *dg) {
  const dg_graph *g = dg->g;
  for (int b = 0; b < dg_graph_block_count(g); b++)
    for (int i = 0; i < dg_graph_input_count(g, b); i++) {
      dg_input_source src;
      if (dg_graph_input_source(g, b, i, &src) != 0 || src.kind == 0)
        continue;
      const char *input = dg_graph_input_name(g, b, i);
      if (src.kind == 2) {
        if (binding_drawn(g, b, i, src.block))
          continue;
        char label[512];
        binding_label(g, b, i, src.block, label, sizeof label);
        fputs("  ", out);
        put_node_name(out, dg_graph_block_id(g, src.block), src.block);
        fputs(" -> ", out);
        put_node_name(out, dg_graph_block_id(g, b), b);
        fprintf(out, " [style=dotted, color=\"#7a7a7a\", penwidth=1.2, arrowsize=0.6, "
                     "constraint=false, fontsize=8, fontcolor=\"#555555\", label=");
        put_quoted(out, dot_quotable(label) ? label : "signal");
        fputs("];\n", out);
      } else if (src.given && src.channel && dot_quotable(src.channel)) {
        fputs("  ", out);
        char node[160];
        snprintf(node, sizeof node, "channel %s", src.channel);
        put_quoted(out, node);
        fputs(" [shape=ellipse, style=dashed, fontsize=9, color=\"#7a7a7a\", label=", out);
        put_quoted(out, src.channel);
        fputs("];\n  ", out);
        put_quoted(out, node);
        fputs(" -> ", out);
        put_node_name(out, dg_graph_block_id(g, b), b);
        fputs(" [style=dotted, color=\"#7a7a7a\", arrowsize=0.6, constraint=false, fontsize=8, "
              "label=", out);
        put_quoted(out, dot_quotable(input) ? input : "input");
        fputs("];\n", out);
      }
    }
}

static void put_graph(FILE *out, const dot_graph *dg) {
  const char *name = dg_graph_name(dg->g);
  fprintf(out, "/* drivegraph dot: render with `dot -Tsvg` (power flows left to right) */\n"
               "digraph drivegraph {\n"
               "  graph [rankdir=LR, nodesep=0.25, ranksep=0.45, fontname=\"Helvetica\", "
               "bgcolor=\"white\", pad=0.2");
  /* the title, and a legend when there are two kinds of edge */
  bool linear = false;
  for (int c = 0; c < dg_graph_shaft_count(dg->g); c++)
    linear = linear || connection_is_linear(dg, c);
  if (name[0] || linear) {
    fputs(", labelloc=t, fontsize=16, label=<", out);
    if (name[0]) {
      fputs("<B>", out);
      put_html(out, name);
      fputs("</B>", out);
    }
    if (name[0] && linear)
      fputs("<BR/>", out);
    if (linear)
      fputs("<FONT POINT-SIZE=\"9\" COLOR=\"#666666\">solid: shafts (rotational ports)"
            "      dashed: ground contacts (linear ports)</FONT>",
            out);
    fputs(">", out);
  }
  fputs("];\n"
        "  node [shape=plain, fontname=\"Helvetica\", fontsize=11];\n"
        "  edge [color=\"#2f4f7f\", penwidth=2.2, arrowsize=0.7, fontname=\"Helvetica\"];\n\n",
        out);
  for (int b = 0; b < dg_graph_block_count(dg->g); b++)
    put_node(out, dg, b);
  fputc('\n', out);
  for (int c = 0; c < dg_graph_shaft_count(dg->g); c++)
    put_edge(out, dg, c);
  put_bindings(out, dg);
  fputs("}\n", out);
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */

static void print_problem(const dg_error *err, void *user) { print_error(stderr, err, user); }

/* Marks the ports used by connections. */
static bool **connected_ports(const dot_graph *dg) {
  int nb = dg_graph_block_count(dg->g);
  bool **conn = calloc((size_t)nb + 1, sizeof *conn);
  if (!conn)
    return NULL;
  for (int b = 0; b < nb; b++) {
    const dg_block_class *k = dg_registry_find(dg->reg, dg_graph_block_type(dg->g, b));
    int np = 0;
    while (k && k->ports && k->ports[np].name)
      np++;
    conn[b] = calloc((size_t)np + 1, sizeof **conn);
    if (!conn[b]) {
      for (int i = 0; i < b; i++)
        free(conn[i]);
      free(conn);
      return NULL;
    }
  }
  for (int c = 0; c < dg_graph_shaft_count(dg->g); c++)
    for (int e = 0; e < dg_graph_shaft_port_count(dg->g, c); e++) {
      int b, p;
      resolve(dg, dg_graph_shaft_port(dg->g, c, e), &b, &p);
      if (b >= 0 && p >= 0)
        conn[b][p] = true;
    }
  return conn;
}

static void free_connected(bool **conn, int nb) {
  for (int b = 0; conn && b < nb; b++)
    free(conn[b]);
  free(conn);
}

/* Writes the DOT of a loaded graph to `output` (NULL or "-": stdout;
 * tools/output.h: a file through a temporary file and a rename). */
static int write_dot(const command *cmd, const dot_graph *dg, const char *output) {
  out_file *out = out_open(cmd->name, output ? output : "-");
  if (!out)
    return EXIT_INVALID;
  put_graph(out_stream(out), dg);
  if (out_close(out) != 0) {
    out_discard(out);
    return EXIT_INVALID;
  }
  return out_commit(out) == 0 ? EXIT_OK : EXIT_INVALID;
}

typedef struct dot_opts {
  const char *output;
  opt_list plugins;
} dot_opts;

static const option_def dot_options[] = {
    {.name = "output", .short_name = 'o', OPT_STRING_AT(dot_opts, output), .arg = "FILE",
     .help = "write the DOT to FILE (through a temporary file and a\n"
             "rename; '-': stdout) instead of stdout"},
    OPT_PLUGIN_AT(dot_opts, plugins),
    {0},
};

static int cmd_dot(const command *cmd, int argc, char **argv) {
  dot_opts o = {0};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n == 0)
    rc = usage_error(cmd, "no graph file given");
  if (rc == EXIT_OK && args.n > 1)
    rc = usage_error(cmd, "one graph file expected (got '%s' too)", args.v[1]);
  dg_registry *reg = rc == EXIT_OK ? plugin_registry(o.plugins.n, o.plugins.v) : NULL;
  if (rc == EXIT_OK && !reg)
    rc = EXIT_INVALID; /* plugin_registry said why */
  options_free(cmd, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  const char *path = args.v[0], *output = o.output;
  /* Every problem, as `validate` reports them (on stderr: stdout is for
   * the DOT). */
  if (dg_graph_validate_file(reg, path, print_problem, (void *)path, NULL) > 0) {
    dg_registry_free(reg);
    return EXIT_INVALID;
  }
  dg_error err = {0};
  dg_graph *g = dg_graph_load_file(reg, path, &err);
  /* The loader has read and checked the file; the parameter values the
   * nodes show come from the JSON as written (or as a YAML config
   * converts to). */
  char *text = g ? graph_json_text(path, &err) : NULL;
  json_error_t jerr;
  json_t *root = text ? json_loads(text, 0, &jerr) : NULL;
  bool read = text != NULL;
  free(text);
  if (!g || !root) {
    if (!read)
      print_error(stderr, &err, path);
    else
      fprintf(stderr, "%s: cannot read again: %s\n", esc(path), esc(jerr.text));
    json_decref(root);
    dg_graph_free(g);
    dg_registry_free(reg);
    return EXIT_INVALID;
  }
  dot_graph dg = {g, reg, json_object_get(root, "blocks"), NULL};
  dg.connected = connected_ports(&dg);
  if (!dg.connected) {
    fprintf(stderr, "drivegraph dot: out of memory\n");
    rc = EXIT_INVALID;
  } else {
    rc = write_dot(cmd, &dg, output);
  }
  free_connected(dg.connected, dg_graph_block_count(g));
  json_decref(root);
  dg_graph_free(g);
  dg_registry_free(reg);
  return rc;
}

const command dg_cmd_dot = {
    .name = "dot",
    .operands = "GRAPH",
    .summary = "Graphviz DOT of a graph: blocks, ports and connections.",
    .help = "Prints the graph in Graphviz's DOT language, power flowing left to right:\n"
            "each block with its id, type and a few telling parameters (its enum\n"
            "parameters, then the required ones, then others the file gives), its\n"
            "connected in ports on the left and out ports on the right; each connection\n"
            "as an edge between the two port cells. Shafts are solid, ground contacts\n"
            "(linear ports) dashed. Render it with Graphviz:\n\n"
            "  drivegraph dot graphs/sedan_rwd_automatic.json | dot -Tsvg > sedan.svg\n\n"
            "An invalid graph prints every problem on stderr, as `validate` does, and\n"
            "nothing on stdout.\n"
            "GRAPH is graph JSON or a YAML vehicle config (.yaml, .yml).\n",
    .options = dot_options,
    .footer = "Exit status: 0 ok, 1 invalid graph or unwritable output, 2 usage error.\n",
    .run = cmd_dot,
};
