/* The JSON Schema of graph files, walked out of the registry's parameter
 * tables (schema_gen.h).
 *
 * Shape (draft-07, which every common editor understands):
 *
 *   root         { drivegraph: const 1, name, description, $schema,
 *                  blocks: { <id without '.'>: #/definitions/block },
 *                  connections: [ #/definitions/connection ... ] }
 *   block        { type: enum of the types } plus, for each type, an
 *                if { type: const T } then { $ref: #/definitions/T }
 *   T            { type: const T, doc, <one property per parameter> },
 *                required parameters listed, additionalProperties false
 *
 * if/then rather than oneOf: an editor then reports the mistakes of the one
 * type the block names, not "matches none of 12 alternatives". Each
 * parameter kind maps to the JSON the loader accepts (lib/params.c): numbers
 * and integers with their range flags as minimum / exclusiveMinimum /
 * maximum / exclusiveMaximum, enums as string enums, arrays with their
 * length bounds and per-value ranges, tables as objects of their axis
 * arrays (at least 2 breakpoints, as the loader asks), nested objects
 * recursively. What JSON Schema cannot say (strictly increasing
 * breakpoints, equal axis lengths, a class's own `check`) is left to
 * `drivegraph validate`; the descriptions mention it. */
#include "schema_gen.h"

#include <drivegraph/block.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A builder remembers whether any jansson call ran out of memory, so the
 * many small insertions need no individual checks. */
typedef struct builder {
  bool oom;
} builder;

static json_t *put(builder *b, json_t *obj, const char *key, json_t *value) {
  if (!obj || !value) {
    b->oom = true;
    json_decref(value);
    return NULL;
  }
  if (json_object_set_new(obj, key, value) != 0) { /* value is released */
    b->oom = true;
    return NULL;
  }
  return value; /* borrowed */
}

static void push(builder *b, json_t *arr, json_t *value) {
  if (!arr || !value) {
    b->oom = true;
    json_decref(value);
  } else if (json_array_append_new(arr, value) != 0) {
    b->oom = true;
  }
}

/* Integral values as JSON integers (0, not 0.0), others as reals. */
static json_t *number(double v) {
  if (v == floor(v) && fabs(v) < 9007199254740992.0)
    return json_integer((json_int_t)v);
  return json_real(v);
}

static json_t *string_list(builder *b, const char *const *names, int n) {
  json_t *arr = json_array();
  for (int i = 0; i < n; i++)
    push(b, arr, json_string(names[i]));
  return arr;
}

/* The range flags of a parameter as JSON Schema keywords on `s` (draft-07:
 * exclusiveMinimum is a number, not a boolean). */
static void put_range(builder *b, json_t *s, const dg_param_def *d) {
  if (d->flags & DG_P_MIN_EXCL)
    put(b, s, "exclusiveMinimum", number(d->min));
  else if (d->flags & DG_P_MIN)
    put(b, s, "minimum", number(d->min));
  if (d->flags & DG_P_MAX_EXCL)
    put(b, s, "exclusiveMaximum", number(d->max));
  else if (d->flags & DG_P_MAX)
    put(b, s, "maximum", number(d->max));
}

/* A JSON number (array element or table value) with the parameter's range. */
static json_t *ranged_number(builder *b, const dg_param_def *d) {
  json_t *s = json_object();
  put(b, s, "type", json_string("number"));
  put_range(b, s, d);
  return s;
}

/* Fills `s` as an array of numbers with the range of `ranged` (NULL: any
 * number) and length bounds (0: none). */
static void fill_number_array(builder *b, json_t *s, const dg_param_def *ranged, int min_len,
                              int max_len) {
  put(b, s, "type", json_string("array"));
  put(b, s, "items", ranged ? ranged_number(b, ranged) : json_pack("{s:s}", "type", "number"));
  if (min_len > 0)
    put(b, s, "minItems", json_integer(min_len));
  if (max_len > 0)
    put(b, s, "maxItems", json_integer(max_len));
}

static json_t *described(builder *b, const char *description) {
  json_t *s = json_object();
  put(b, s, "description", json_string(description));
  return s;
}

/* " (unit)" or "". */
static void unit_suffix(const dg_param_def *d, char *buf, size_t n) {
  if (d->unit && d->unit[0])
    snprintf(buf, n, " (%s)", d->unit);
  else
    buf[0] = '\0';
}

/* Breakpoints per axis: at least 2 (the loader's floor) unless the table
 * asks for more. */
static int axis_min_len(const dg_param_def *d) { return d->min_len > 0 ? d->min_len : 2; }

/* A table axis of breakpoints. */
static json_t *axis_schema(builder *b, const dg_param_def *d, int axis) {
  char text[256];
  snprintf(text, sizeof text, "\"%s\" breakpoints, strictly increasing", d->axis[axis]);
  json_t *s = described(b, text);
  fill_number_array(b, s, NULL, axis_min_len(d), d->max_len);
  return s;
}

/* { x: [...], y: [...] } */
static void fill_table1d(builder *b, json_t *s, const dg_param_def *d) {
  char text[512], unit[64];
  unit_suffix(d, unit, sizeof unit);
  put(b, s, "type", json_string("object"));
  json_t *props = put(b, s, "properties", json_object());
  put(b, props, d->axis[0], axis_schema(b, d, 0));
  snprintf(text, sizeof text, "\"%s\"%s at each \"%s\" breakpoint (as many values)", d->axis[1],
           unit, d->axis[0]);
  json_t *y = put(b, props, d->axis[1], described(b, text));
  fill_number_array(b, y, d, axis_min_len(d), d->max_len);
  const char *req[] = {d->axis[0], d->axis[1]};
  put(b, s, "required", string_list(b, req, 2));
  put(b, s, "additionalProperties", json_false());
}

/* { x: [...], y: [...], z: [[one per x] one per y] } */
static void fill_table2d(builder *b, json_t *s, const dg_param_def *d) {
  char text[512], unit[64];
  unit_suffix(d, unit, sizeof unit);
  put(b, s, "type", json_string("object"));
  json_t *props = put(b, s, "properties", json_object());
  put(b, props, d->axis[0], axis_schema(b, d, 0));
  put(b, props, d->axis[1], axis_schema(b, d, 1));
  snprintf(text, sizeof text,
           "\"%s\"%s: one row per \"%s\" breakpoint, each with one value per \"%s\" breakpoint",
           d->axis[2], unit, d->axis[1], d->axis[0]);
  json_t *rows = put(b, props, d->axis[2], described(b, text));
  put(b, rows, "type", json_string("array"));
  json_t *row = put(b, rows, "items", json_object());
  fill_number_array(b, row, d, axis_min_len(d), d->max_len);
  put(b, rows, "minItems", json_integer(axis_min_len(d)));
  if (d->max_len > 0)
    put(b, rows, "maxItems", json_integer(d->max_len));
  const char *req[] = {d->axis[0], d->axis[1], d->axis[2]};
  put(b, s, "required", string_list(b, req, 3));
  put(b, s, "additionalProperties", json_false());
}

static void put_params(builder *b, json_t *s, const dg_param_def *defs);

/* The description of a parameter: its doc, unit, and for tables and
 * arrays what the loader checks beyond the schema. */
static json_t *param_description(const dg_param_def *d) {
  char text[1024], unit[64];
  unit_suffix(d, unit, sizeof unit);
  const char *doc = d->doc && d->doc[0] ? d->doc : d->key;
  const char *extra = "";
  if (d->kind == DG_PARAM_TABLE1D)
    extra = "; 1-D table, linear between breakpoints and clamped at the ends";
  else if (d->kind == DG_PARAM_TABLE2D)
    extra = "; 2-D table, bilinear between breakpoints and clamped at the ends";
  else if (d->kind == DG_PARAM_ARRAY && (d->flags & DG_P_INCREASING))
    extra = "; strictly increasing";
  snprintf(text, sizeof text, "%s%s%s", doc, unit, extra);
  return json_string(text);
}

static json_t *param_schema(builder *b, const dg_param_def *d) {
  json_t *s = json_object();
  put(b, s, "description", param_description(d));
  switch (d->kind) {
  case DG_PARAM_NUMBER:
  case DG_PARAM_INTEGER:
    put(b, s, "type", json_string(d->kind == DG_PARAM_NUMBER ? "number" : "integer"));
    put_range(b, s, d);
    /* A parameter with a `present` flag has no meaningful default: its
     * absence means something of its own (the doc says what). */
    if (!d->required && !d->present)
      put(b, s, "default", number(d->def));
    break;
  case DG_PARAM_BOOL:
    put(b, s, "type", json_string("boolean"));
    if (!d->required)
      put(b, s, "default", json_boolean(d->def != 0.0));
    break;
  case DG_PARAM_ENUM: {
    int n = 0;
    while (d->choices && d->choices[n])
      n++;
    put(b, s, "type", json_string("string"));
    put(b, s, "enum", string_list(b, d->choices, n));
    if (!d->required && d->def >= 0 && d->def < n)
      put(b, s, "default", json_string(d->choices[(int)d->def]));
    break;
  }
  case DG_PARAM_ARRAY:
    fill_number_array(b, s, d, d->min_len, d->max_len);
    break;
  case DG_PARAM_TABLE1D:
    fill_table1d(b, s, d);
    break;
  case DG_PARAM_TABLE2D:
    fill_table2d(b, s, d);
    break;
  case DG_PARAM_OBJECT:
    put(b, s, "type", json_string("object"));
    put_params(b, s, d->fields);
    put(b, s, "additionalProperties", json_false());
    break;
  }
  return s;
}

/* "properties" and "required" of an object described by `defs`. */
static void put_params(builder *b, json_t *s, const dg_param_def *defs) {
  json_t *props = json_object_get(s, "properties");
  if (!props)
    props = put(b, s, "properties", json_object());
  json_t *req = json_array();
  for (const dg_param_def *d = defs; d && d->key; d++) {
    put(b, props, d->key, param_schema(b, d));
    if (d->required)
      push(b, req, json_string(d->key));
  }
  if (json_array_size(req) > 0)
    put(b, s, "required", req);
  else
    json_decref(req);
}

/* The definition name of a class: its type when that is a plain word
 * (safe in a JSON pointer and a URI fragment), else "block_<index>". */
static void def_name(const dg_block_class *k, int index, char *buf, size_t n) {
  bool plain = k->type[0] != '\0';
  for (const char *c = k->type; *c; c++)
    plain = plain && ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-');
  /* "block" and "connection" name the shared definitions */
  if (plain && strcmp(k->type, "block") != 0 && strcmp(k->type, "connection") != 0 &&
      strcmp(k->type, "endpoint") != 0)
    snprintf(buf, n, "%s", k->type);
  else
    snprintf(buf, n, "block_%d", index);
}

static json_t *class_schema(builder *b, const dg_block_class *k) {
  json_t *s = json_object();
  char title[160];
  snprintf(title, sizeof title, "%s block", k->type);
  put(b, s, "title", json_string(title));
  if (k->doc)
    put(b, s, "description", json_string(k->doc));
  put(b, s, "type", json_string("object"));
  json_t *props = put(b, s, "properties", json_object());
  json_t *type = put(b, props, "type", json_object());
  put(b, type, "const", json_string(k->type));
  json_t *doc = put(b, props, "doc", json_object());
  put(b, doc, "type", json_string("string"));
  put(b, doc, "description", json_string("free text about this block; ignored by drivegraph"));
  json_t *inputs = put(b, props, "inputs", json_object());
  put(b, inputs, "type", json_string("object"));
  put(b, inputs, "description",
      json_string("bindings of the block's inputs: a channel name, \"block.signal\" or a number"));
  json_t *iprops = put(b, inputs, "properties", json_object());
  json_t *ireq = NULL;
  for (const dg_input_def *in = k->inputs; in && in->name; in++) {
    json_t *one = put(b, iprops, in->name, json_object());
    char desc[400];
    snprintf(desc, sizeof desc, "%s%s%s", in->doc ? in->doc : "", in->unit && in->unit[0] ? " (" : "",
             in->unit && in->unit[0] ? in->unit : "");
    if (in->unit && in->unit[0])
      strncat(desc, ")", sizeof desc - strlen(desc) - 1);
    put(b, one, "description", json_string(desc));
    json_t *any = put(b, one, "oneOf", json_array());
    json_t *num = json_object();
    json_object_set_new(num, "type", json_string(in->flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL)
                                                     ? "integer"
                                                     : "number"));
    if (in->flags & DG_INPUT_BOOL)
      json_object_set_new(num, "enum", json_pack("[i, i]", 0, 1));
    if (in->flags & DG_P_MIN)
      json_object_set_new(num, "minimum", json_real(in->min));
    if (in->flags & DG_P_MAX)
      json_object_set_new(num, "maximum", json_real(in->max));
    if (json_array_append_new(any, num) != 0 ||
        json_array_append_new(any, json_pack("{s:s, s:s}", "type", "string", "pattern",
                                             "^([A-Za-z0-9_-]+|[^.]+\\.[^.]+)$")) != 0)
      b->oom = true;
    if (in->flags & DG_INPUT_REQUIRED) {
      if (!ireq)
        ireq = put(b, inputs, "required", json_array());
      if (ireq && json_array_append_new(ireq, json_string(in->name)) != 0)
        b->oom = true;
    }
  }
  put(b, inputs, "additionalProperties", json_false());
  put_params(b, s, k->params);
  if (ireq) { /* an input that must be bound makes "inputs" required */
    json_t *r = json_object_get(s, "required");
    if (!r)
      r = put(b, s, "required", json_array());
    if (r && json_array_append_new(r, json_string("inputs")) != 0)
      b->oom = true;
  }
  /* "type" is required too: put_params only lists the parameters */
  json_t *req = json_object_get(s, "required");
  if (!req)
    req = put(b, s, "required", json_array());
  if (req && json_array_insert_new(req, 0, json_string("type")) != 0)
    b->oom = true;
  put(b, s, "additionalProperties", json_false());
  return s;
}

json_t *dg_schema_build(const dg_registry *reg) {
  builder bb = {false}, *b = &bb;
  json_t *root = json_object();
  put(b, root, "$schema", json_string("http://json-schema.org/draft-07/schema#"));
  put(b, root, "$comment",
      json_string("Generated by `drivegraph schema` (drivegraph " DG_VERSION_STRING
                  ") from the block parameter tables; regenerate it rather than edit it."));
  put(b, root, "title", json_string("drivegraph graph file"));
  put(b, root, "description",
      json_string("A drivetrain as a graph of blocks joined at their ports (format version 1). "
                  "`drivegraph validate` checks what a schema cannot: table breakpoints "
                  "strictly increasing, ports and directions, cycles, inertia in every mode."));
  put(b, root, "type", json_string("object"));
  const char *top_req[] = {"drivegraph", "blocks", "connections"};
  put(b, root, "required", string_list(b, top_req, 3));

  json_t *props = put(b, root, "properties", json_object());
  put(b, props, "$schema",
      json_pack("{s:s, s:s}", "type", "string", "description",
                "the schema this file follows, for editors; drivegraph ignores it"));
  put(b, props, "drivegraph",
      json_pack("{s:s, s:i, s:s}", "type", "integer", "const", 1, "description",
                "format version of the graph file"));
  put(b, props, "name", json_pack("{s:s, s:s}", "type", "string", "description",
                                  "a name for the graph, shown by tools"));
  put(b, props, "description",
      json_pack("{s:s, s:s}", "type", "string", "description", "free text about the graph"));
  put(b, props, "blocks",
      json_pack("{s:s, s:s, s:i, s:{s:s}, s:{s:s}}", "description",
                "the blocks by id; an id is used in \"block.port\", so it has no '.'", "type",
                "object", "minProperties", 1, "propertyNames", "pattern", "^[^.]+$",
                "additionalProperties", "$ref", "#/definitions/block"));
  put(b, props, "connections",
      json_pack("{s:s, s:s, s:{s:s}}", "description",
                "each the ports of one shaft, [\"block.out_port\", \"block.in_port\", ...]: "
                "they turn at one speed",
                "type", "array", "items", "$ref", "#/definitions/connection"));
  put(b, root, "additionalProperties", json_false());

  json_t *defs = put(b, root, "definitions", json_object());
  put(b, defs, "connection",
      json_pack("{s:s, s:s, s:i, s:b, s:{s:s}}", "description",
                "a connection: the ports of one shaft (two or more, any order; out ports and "
                "in ports, or ports of direction any)",
                "type", "array", "minItems", 2, "uniqueItems", 1, "items", "$ref",
                "#/definitions/endpoint"));
  put(b, defs, "endpoint",
      json_pack("{s:s, s:s, s:s}", "description", "\"block.port\"", "type", "string", "pattern",
                "^[^.]+\\.[^.]+$"));

  /* The dispatch on "type": an enum of the types (so an editor offers
   * them), then one if/then per type. */
  json_t *block = put(b, defs, "block", json_object());
  put(b, block, "description", json_string("a block: its \"type\" and that type's parameters"));
  put(b, block, "type", json_string("object"));
  put(b, block, "required", json_pack("[s]", "type"));
  json_t *bprops = put(b, block, "properties", json_object());
  json_t *type = put(b, bprops, "type", json_object());
  put(b, type, "description", json_string("the block type (`drivegraph blocks` lists them)"));
  json_t *types = put(b, type, "enum", json_array());
  json_t *all = put(b, block, "allOf", json_array());
  int n = dg_registry_count(reg);
  for (int i = 0; i < n; i++) {
    const dg_block_class *k = dg_registry_at(reg, i);
    char name[160], ref[200];
    def_name(k, i, name, sizeof name);
    snprintf(ref, sizeof ref, "#/definitions/%s", name);
    push(b, types, json_string(k->type));
    put(b, defs, name, class_schema(b, k));
    /* "type": "object" in the `if`: for a block that is not an object the
     * condition fails, and the one "type": "object" above reports it (not
     * one error per type) */
    push(b, all,
         json_pack("{s:{s:s, s:{s:{s:s}}, s:[s]}, s:{s:s}}", "if", "type", "object", "properties",
                   "type", "const", k->type, "required", "type", "then", "$ref", ref));
  }
  if (b->oom) {
    json_decref(root);
    return NULL;
  }
  return root;
}
