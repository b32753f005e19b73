/* Registry: JSON "type" → block class. The built-in classes are a const
 * table; a dg_registry adds user classes on top, so there is no process-wide
 * mutable list. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DG_BUILTIN(name) extern const dg_block_class dg_block_##name;
#include "builtin_classes.h"
#undef DG_BUILTIN

const dg_block_class *const dg_builtin_classes[] = {
#define DG_BUILTIN(name) &dg_block_##name,
#include "builtin_classes.h"
#undef DG_BUILTIN
    NULL,
};

static int builtin_count(void) {
  int n = 0;
  while (dg_builtin_classes[n])
    n++;
  return n;
}

int dgp_class_count(const dg_registry *reg) { return reg ? reg->count : builtin_count(); }

const dg_block_class *dgp_class_at(const dg_registry *reg, int i) {
  if (i < 0 || i >= dgp_class_count(reg))
    return NULL;
  return reg ? reg->classes[i] : dg_builtin_classes[i];
}

const dg_block_class *dgp_class_find(const dg_registry *reg, const char *type) {
  int n = dgp_class_count(reg);
  for (int i = 0; i < n; i++) {
    const dg_block_class *k = dgp_class_at(reg, i);
    if (strcmp(k->type, type) == 0)
      return k;
  }
  return NULL;
}

int dgp_class_num_ports(const dg_block_class *k) {
  int n = 0;
  while (k->ports && k->ports[n].name)
    n++;
  return n;
}

int dgp_class_num_signals(const dg_block_class *k) {
  int n = 0;
  while (k->signals && k->signals[n].name)
    n++;
  return n;
}

int dgp_class_num_inputs(const dg_block_class *k) {
  int n = 0;
  while (k->inputs && k->inputs[n].name)
    n++;
  return n;
}

int dgp_class_port_find(const dg_block_class *k, const char *name) {
  for (int i = 0; k->ports && k->ports[i].name; i++)
    if (strcmp(k->ports[i].name, name) == 0)
      return i;
  return -1;
}

dg_registry *dg_registry_new(void) {
  dg_registry *reg = calloc(1, sizeof *reg);
  if (!reg)
    return NULL;
  for (int i = 0; dg_builtin_classes[i]; i++) {
    if (dg_registry_add(reg, dg_builtin_classes[i], NULL) != DG_OK) {
      dg_registry_free(reg);
      return NULL;
    }
  }
  return reg;
}

void dg_registry_free(dg_registry *reg) {
  if (!reg)
    return;
  free(reg->classes);
  free(reg);
}

/* Structural checks of a class table, so that a plugin with a broken table
 * fails at registration instead of inside a simulation. */
static int check_class(const dg_block_class *k, char *why, size_t n) {
  if (k->abi != DG_BLOCK_ABI) {
    snprintf(why, n, "built for block ABI %d, this library has %d", k->abi, DG_BLOCK_ABI);
    return -1;
  }
  if (!k->type || !k->type[0]) {
    snprintf(why, n, "class has no type name");
    return -1;
  }
  for (const char *c = k->type; *c; c++) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
      snprintf(why, n, "type \"%s\" must use only a-z, 0-9 and _", k->type);
      return -1;
    }
  }
  int np = dgp_class_num_ports(k);
  for (int i = 0; i < np; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(k->ports[i].name, k->ports[j].name) == 0) {
        snprintf(why, n, "port \"%s\" declared twice", k->ports[i].name);
        return -1;
      }
  int ns = dgp_class_num_signals(k);
  for (int i = 0; i < ns; i++) {
    const dg_signal_def *s = &k->signals[i];
    if (s->port >= np || s->port < DG_SIGNAL_HOOK) {
      snprintf(why, n, "signal \"%s\" refers to port %d of %d", s->name, s->port, np);
      return -1;
    }
    if (s->port == DG_SIGNAL_HOOK && !k->signal) {
      snprintf(why, n, "signal \"%s\" needs the class's signal hook", s->name);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(s->name, k->signals[j].name) == 0) {
        snprintf(why, n, "signal \"%s\" declared twice", s->name);
        return -1;
      }
  }
  int ni = dgp_class_num_inputs(k);
  for (int i = 0; i < ni; i++) {
    const dg_input_def *in = &k->inputs[i];
    const char *src = in->source;
    if (!in->name[0] || strchr(in->name, '.') || strchr(in->name, '/')) {
      snprintf(why, n, "input \"%s\": a name must be non-empty, without '.' or '/'", in->name);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(in->name, k->inputs[j].name) == 0) {
        snprintf(why, n, "input \"%s\" declared twice", in->name);
        return -1;
      }
    if (src && src[0] == '@' && !strchr(src, '.')) {
      snprintf(why, n, "input \"%s\": default source \"%s\" must be \"@type.signal\"",
               in->name, src);
      return -1;
    }
    if (src && src[0] == '>' && !src[1]) {
      snprintf(why, n, "input \"%s\": default source \">\" names no signal", in->name);
      return -1;
    }
    if (!isfinite(in->def) || ((in->flags & DG_P_MIN) && in->def < in->min) ||
        ((in->flags & DG_P_MAX) && in->def > in->max)) {
      snprintf(why, n, "input \"%s\": default %g outside its range", in->name, in->def);
      return -1;
    }
  }
  if (k->num_events < 0 || (k->num_events > 0 && !k->event_values)) {
    snprintf(why, n, "num_events needs event_values");
    return -1;
  }
  if (k->num_states < 0 || (k->num_states > 0 && !k->torque_downstream)) {
    snprintf(why, n, "num_states needs torque_downstream (which writes the states' rates)");
    return -1;
  }
  if (k->params && dgp_params_check_defs(k->params, k->params_size, why, n) != 0)
    return -1;
  return 0;
}

int dg_registry_add(dg_registry *reg, const dg_block_class *klass, dg_error *err) {
  char why[256];
  dgp_error_clear(err);
  if (!reg || !klass) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "registry and class must not be NULL");
    return DG_ERR_USAGE;
  }
  if (check_class(klass, why, sizeof why) != 0) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "block class %s: %s",
                 klass->type ? klass->type : "?", why);
    return DG_ERR_USAGE;
  }
  if (dgp_class_find(reg, klass->type)) {
    dgp_error_set(err, DG_ERR_USAGE, "", "", "block type \"%s\" is already registered",
                 klass->type);
    return DG_ERR_USAGE;
  }
  if (reg->count == reg->cap) {
    int cap = reg->cap ? 2 * reg->cap : 16;
    const dg_block_class **c = realloc(reg->classes, (size_t)cap * sizeof *c);
    if (!c) {
      dgp_error_set(err, DG_ERR_NOMEM, "", "", "out of memory");
      return DG_ERR_NOMEM;
    }
    reg->classes = c;
    reg->cap = cap;
  }
  reg->classes[reg->count++] = klass;
  return DG_OK;
}

const dg_block_class *dg_registry_find(const dg_registry *reg, const char *type) {
  return reg ? dgp_class_find(reg, type) : NULL;
}
int dg_registry_count(const dg_registry *reg) { return reg ? reg->count : 0; }
const dg_block_class *dg_registry_at(const dg_registry *reg, int index) {
  return reg ? dgp_class_at(reg, index) : NULL;
}
