/* The block reference, written from the same tables that drive parsing and
 * validation, so the documentation cannot drift from the code. */
#include "reference.h"

#include <string.h>

static const char *kind_name(dg_param_kind k) {
  switch (k) {
  case DG_PARAM_NUMBER: return "number";
  case DG_PARAM_INTEGER: return "integer";
  case DG_PARAM_BOOL: return "boolean";
  case DG_PARAM_ENUM: return "string";
  case DG_PARAM_ARRAY: return "number array";
  case DG_PARAM_TABLE1D: return "1-D table";
  case DG_PARAM_TABLE2D: return "2-D table";
  case DG_PARAM_OBJECT: return "object";
  }
  return "?";
}

/* "> 0, <= 1" from the range flags; empty when unbounded. */
static void range_text(const dg_param_def *d, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  if (d->flags & (DG_P_MIN | DG_P_MIN_EXCL))
    len += (size_t)snprintf(buf + len, n - len, "%s %g", d->flags & DG_P_MIN_EXCL ? ">" : ">=",
                            d->min);
  if ((d->flags & (DG_P_MAX | DG_P_MAX_EXCL)) && len < n)
    len += (size_t)snprintf(buf + len, n - len, "%s%s %g", len ? ", " : "",
                            d->flags & DG_P_MAX_EXCL ? "<" : "<=", d->max);
  if ((d->flags & DG_P_INCREASING) && len < n)
    snprintf(buf + len, n - len, "%sstrictly increasing", len ? ", " : "");
}

/* Default or "required" (or "optional" for tables and arrays). */
static void default_text(const dg_param_def *d, char *buf, size_t n) {
  if (d->required) {
    snprintf(buf, n, "required");
    return;
  }
  if (d->present && (d->kind == DG_PARAM_NUMBER || d->kind == DG_PARAM_INTEGER)) {
    snprintf(buf, n, "optional"); /* given or not: the block's doc says what absence means */
    return;
  }
  switch (d->kind) {
  case DG_PARAM_NUMBER:
  case DG_PARAM_INTEGER: snprintf(buf, n, "default %g", d->def); break;
  case DG_PARAM_BOOL: snprintf(buf, n, "default %s", d->def != 0.0 ? "true" : "false"); break;
  case DG_PARAM_ENUM: snprintf(buf, n, "default \"%s\"", d->choices ? d->choices[(int)d->def] : "?"); break;
  default: snprintf(buf, n, "optional"); break;
  }
}

/* Kind with its shape: choices, table axes, units. */
static void type_text(const dg_param_def *d, char *buf, size_t n) {
  size_t len = (size_t)snprintf(buf, n, "%s", kind_name(d->kind));
  if (d->kind == DG_PARAM_ENUM && d->choices) {
    for (int i = 0; d->choices[i] && len < n; i++)
      len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? " | " : ": ", d->choices[i]);
  } else if (d->kind == DG_PARAM_TABLE1D) {
    snprintf(buf + len, n - len, " {%s, %s}", d->axis[0], d->axis[1]);
  } else if (d->kind == DG_PARAM_TABLE2D) {
    snprintf(buf + len, n - len, " {%s, %s, %s[%s][%s]}", d->axis[0], d->axis[1], d->axis[2],
             d->axis[1], d->axis[0]);
  }
}

static void print_params(FILE *out, const dg_param_def *defs, const char *prefix, bool md) {
  for (const dg_param_def *d = defs; d && d->key; d++) {
    char type[200], def[64], range[96], key[128];
    type_text(d, type, sizeof type);
    default_text(d, def, sizeof def);
    range_text(d, range, sizeof range);
    snprintf(key, sizeof key, "%s%s", prefix, d->key);
    const char *unit = d->unit && d->unit[0] ? d->unit : "";
    if (md)
      fprintf(out, "| `%s` | %s | %s | %s | %s | %s |\n", key, type, unit, def, range,
              d->doc ? d->doc : "");
    else
      fprintf(out, "  %-22s %s%s%s; %s%s%s\n      %s\n", key, type, unit[0] ? ", " : "", unit, def,
              range[0] ? "; " : "", range, d->doc ? d->doc : "");
    if (d->kind == DG_PARAM_OBJECT) {
      char nested[160];
      snprintf(nested, sizeof nested, "%s.", key);
      print_params(out, d->fields, nested, md);
    }
  }
}

void dg_reference_print(FILE *out, const dg_block_class *k, bool md) {
  static const char *const dirs[] = {"in", "out", "internal", "any"};
  static const char *const domains[] = {"rotational", "linear"};
  bool ports = k->ports && k->ports[0].name;
  if (md)
    fprintf(out, "## `%s`\n\n%s\n\n%s", k->type, k->doc ? k->doc : "",
            ports ? "| port | direction | domain | |\n|---|---|---|---|\n"
                  : "No ports: a signal block, wired by its inputs and signals.\n");
  else
    fprintf(out, "%s: %s\n\n%s\n", k->type, k->doc ? k->doc : "",
            ports ? "Ports:" : "No ports: a signal block, wired by its inputs and signals.");
  for (const dg_port_def *p = k->ports; p && p->name; p++) {
    if (p->dir == DG_PORT_INTERNAL)
      continue;
    if (md)
      fprintf(out, "| `%s` | %s | %s | %s%s |\n", p->name, dirs[p->dir], domains[p->domain],
              p->optional ? "optional. " : "", p->doc ? p->doc : "");
    else
      fprintf(out, "  %-12s %-4s %-11s %s%s\n", p->name, dirs[p->dir], domains[p->domain],
              p->optional ? "(optional) " : "", p->doc ? p->doc : "");
  }
  if (md)
    fprintf(out, "\n| parameter | type | unit | default | range | |\n|---|---|---|---|---|---|\n");
  else
    fprintf(out, "\nParameters:\n");
  print_params(out, k->params, "", md);
  if (k->inputs && k->inputs[0].name) {
    if (md)
      fprintf(out, "\n| input | unit | default source | range | |\n|---|---|---|---|---|\n");
    else
      fprintf(out, "\nInputs (bind in \"inputs\": channel, \"block.signal\" or number):\n");
  }
  for (const dg_input_def *in = k->inputs; in && in->name; in++) {
    char src[96], range[96] = "";
    const char *s0 = in->source;
    if (in->flags & DG_INPUT_REQUIRED)
      snprintf(src, sizeof src, "required");
    else if (!s0 || !s0[0])
      snprintf(src, sizeof src, "constant %g", in->def);
    else if (s0[0] == '>')
      snprintf(src, sizeof src, "signal %s downstream, else %g", s0 + 1, in->def);
    else if (s0[0] == '@')
      snprintf(src, sizeof src, "%s (the one %.*s), else %g", strchr(s0, '.') + 1,
               (int)(strchr(s0, '.') - s0 - 1), s0 + 1, in->def);
    else
      snprintf(src, sizeof src, "channel %s (%g until given)", s0, in->def);
    if ((in->flags & DG_P_MIN) && (in->flags & DG_P_MAX))
      snprintf(range, sizeof range, "%g .. %g", in->min, in->max);
    else if (in->flags & DG_P_MIN)
      snprintf(range, sizeof range, ">= %g", in->min);
    else if (in->flags & DG_P_MAX)
      snprintf(range, sizeof range, "<= %g", in->max);
    if (in->flags & DG_INPUT_INTEGER)
      snprintf(range + strlen(range), sizeof range - strlen(range), "%sinteger",
               range[0] ? ", " : "");
    if (in->flags & DG_INPUT_BOOL)
      snprintf(range, sizeof range, "0 or 1");
    if (k->input_range)
      snprintf(range + strlen(range), sizeof range - strlen(range), "%sby the parameters",
               range[0] ? ", " : "");
    const char *unit = in->unit ? in->unit : "";
    if (md)
      fprintf(out, "| `%s` | %s | %s | %s | %s |\n", in->name, unit, src, range,
              in->doc ? in->doc : "");
    else
      fprintf(out, "  %-16s %-8s %s%s%s\n      %s\n", in->name, unit, src, range[0] ? "; " : "",
              range, in->doc ? in->doc : "");
  }
  if (md)
    fprintf(out, "\n| signal | unit | |\n|---|---|---|\n");
  else
    fprintf(out, "\nSignals:\n");
  for (const dg_signal_def *s = k->signals; s && s->name; s++) {
    const char *ft = (s->flags & DG_SIGNAL_FEEDTHROUGH) ? " (follows the inputs at once)"
                      : (s->flags & DG_SIGNAL_BOOL)      ? " (0 or 1)"
                      : (s->flags & DG_SIGNAL_INTEGER)   ? " (an integer)"
                                                         : "";
    if (md)
      fprintf(out, "| `%s` | %s | %s%s |\n", s->name, s->unit ? s->unit : "", s->doc ? s->doc : "",
              ft);
    else
      fprintf(out, "  %-16s %-8s %s%s\n", s->name, s->unit ? s->unit : "", s->doc ? s->doc : "", ft);
  }
  fprintf(out, "\n");
}
