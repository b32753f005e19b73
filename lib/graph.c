/* Graph files: parsing, structural checks, nodes and block order.
 *
 * A graph is { "drivegraph": 1, "name": ..., "blocks": { id: {type, params} },
 * "connections": [ ["a.out", "b.in"], ... ] }. Parsing checks, in order:
 * the document, each block (type, parameters, the class's own check), each
 * connection (endpoints, directions, domains, ports used twice), required
 * ports, isolated blocks, directed cycles. Every problem is reported, not
 * only the first, so `validate` can list them all. The check of every
 * reachable mode, which needs the blocks' instances and the solver's
 * topology builder, is not made here: lib/check.c composes the two. */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dg_check {
  dg_diag *diag;
  const char *base; /* "/blocks/<id>" */
};

void dg_check_error(dg_check *chk, const char *path, const char *fmt, ...) {
  /* `path` is already a relative pointer ("ratios/2"), so it is joined as is */
  char full[DG_ERROR_PATH_LEN];
  size_t len = strlen(chk->base);
  memcpy(full, chk->base, len < sizeof full ? len + 1 : sizeof full);
  full[sizeof full - 1] = '\0';
  if (path && path[0] && len + 1 < sizeof full) {
    full[len] = '/';
    full[len + 1] = '\0';
    strncat(full, path, sizeof full - len - 2);
  }
  va_list ap;
  va_start(ap, fmt);
  dgp_diag_vadd(chk->diag, DG_ERR_RANGE, full, 0, 0, fmt, ap);
  va_end(ap);
}

/* "$schema" lets editors find the JSON Schema (drivegraph schema). */
static const char *const top_keys[] = {"drivegraph", "name",        "description",
                                       "blocks",     "connections", "$schema"};
#define NUM_TOP_KEYS ((int)(sizeof top_keys / sizeof top_keys[0]))

static int block_find_exact(const dg_graph *g, const char *id, size_t len) {
  for (int i = 0; i < g->num_blocks; i++)
    if (g->blocks[i].id && strlen(g->blocks[i].id) == len && memcmp(g->blocks[i].id, id, len) == 0)
      return i;
  return -1;
}

/* Ids are kept in NFC (parse_block), and a reference is normalized the
 * same way before it is compared: "cafe\u0301" finds "caf\u00e9". */
int dgp_graph_block_find_n(const dg_graph *g, const char *id, size_t len) {
  int found = block_find_exact(g, id, len);
  bool ascii = true;
  for (size_t i = 0; i < len && ascii; i++)
    ascii = (unsigned char)id[i] < 0x80;
  if (found >= 0 || ascii || len > 4096)
    return found;
  char *copy = malloc(len + 1);
  if (!copy)
    return -1;
  memcpy(copy, id, len);
  copy[len] = '\0';
  char *nfc = dgp_text_nfc(copy);
  free(copy);
  if (nfc)
    found = block_find_exact(g, nfc, strlen(nfc));
  free(nfc);
  return found;
}

/* " (differs at character 2: U+043E where the id has U+006F)" when `id`
 * only looks like the block `sug`, else "". */
void dgp_lookalike_note(const char *id, const char *sug, char *buf, size_t size) {
  buf[0] = '\0';
  if (sug && dgp_text_lookalike(id, sug)) {
    char diff[128];
    dgp_text_difference(id, sug, diff, sizeof diff);
    snprintf(buf, size, " (%s)", diff);
  }
}

const char *dgp_graph_suggest_block(const dg_graph *g, const char *id) {
  const char *names[512];
  int n = g->num_blocks < 512 ? g->num_blocks : 512;
  for (int i = 0; i < n; i++)
    names[i] = g->blocks[i].id;
  return dg_suggest(id, names, n);
}

static const char *port_dir_name(dg_port_dir d) {
  return d == DG_PORT_IN ? "in" : d == DG_PORT_OUT ? "out" : d == DG_PORT_ANY ? "any" : "internal";
}

static const char *domain_name(dg_domain d) { return d == DG_LINEAR ? "linear" : "rotational"; }

static void check_header(const json_t *root, dg_diag *d) {
  const json_t *ver = json_object_get(root, "drivegraph");
  if (!ver)
    dgp_diag_add(d, DG_ERR_SCHEMA, "/drivegraph",
                "missing required format version (expected \"drivegraph\": 1)");
  else if (!json_is_integer(ver) || json_integer_value(ver) != 1)
    dgp_diag_add(d, DG_ERR_SCHEMA, "/drivegraph",
                "unsupported format version (expected 1)");
  const json_t *name = json_object_get(root, "name");
  if (name && !json_is_string(name))
    dgp_diag_add(d, DG_ERR_SCHEMA, "/name", "expected a string, got %s", dgp_json_type_name(name));
  const json_t *desc = json_object_get(root, "description");
  if (desc && !json_is_string(desc))
    dgp_diag_add(d, DG_ERR_SCHEMA, "/description", "expected a string, got %s",
                dgp_json_type_name(desc));
  const json_t *schema = json_object_get(root, "$schema");
  if (schema && !json_is_string(schema))
    dgp_diag_add(d, DG_ERR_SCHEMA, "/$schema", "expected a string (the schema's path or URI), got %s",
                dgp_json_type_name(schema));
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)root, key, v) {
    bool known = false;
    for (int i = 0; i < NUM_TOP_KEYS; i++)
      known = known || strcmp(key, top_keys[i]) == 0;
    if (!known) {
      char path[DG_ERROR_PATH_LEN];
      dgp_pointer_append(path, sizeof path, "", key);
      const char *s = dg_suggest(key, top_keys, NUM_TOP_KEYS);
      if (s)
        dgp_diag_add(d, DG_ERR_UNKNOWN, path, "unknown key; did you mean \"%s\"?", s);
      else
        dgp_diag_add(d, DG_ERR_UNKNOWN, path,
                    "unknown key (expected drivegraph, name, description, blocks, connections, "
                    "$schema)");
    }
  }
}

/* The types known to a registry, for "did you mean". */
static const char *suggest_type(const dg_registry *reg, const char *type) {
  int n = dgp_class_count(reg);
  const char *names[256];
  if (n > 256)
    n = 256;
  for (int i = 0; i < n; i++)
    names[i] = dgp_class_at(reg, i)->type;
  return dg_suggest(type, names, n);
}

static void parse_block(dg_graph *g, dg_gblock *b, const char *id, const json_t *obj,
                        dg_diag *d) {
  char path[DG_ERROR_PATH_LEN], tpath[DG_ERROR_PATH_LEN];
  dgp_pointer_append(path, sizeof path, "/blocks", id);
  /* An id is an identifier, kept in Unicode's composed form (NFC), so
   * that two spellings of one name are one id (docs/errors.md). */
  char why[96];
  char *nfc = NULL;
  if (dgp_ident_check(id, why, sizeof why) != 0)
    dgp_diag_add(d, DG_ERR_SCHEMA, path,
                "block id %s: an id is letters of any script, digits, '_' and '-' (it is used "
                "in \"block.port\" and \"block.signal\")",
                why);
  else if (!(nfc = dgp_text_nfc(id)))
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
  b->id = dgp_arena_strdup(g->arena, nfc ? nfc : id);
  free(nfc);
  if (!b->id) {
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    return;
  }
  for (dg_gblock *o = g->blocks; o < b; o++)
    if (o->id && strcmp(o->id, b->id) == 0 && strcmp(b->id, id) != 0) {
      char diff[128];
      dgp_text_difference(id, o->id, diff, sizeof diff);
      dgp_diag_add(d, DG_ERR_SCHEMA, path,
                  "block id is another block's once normalized (Unicode NFC; %s): two spellings "
                  "of one name",
                  diff);
      break;
    }
  if (!json_is_object(obj)) {
    dgp_diag_add(d, DG_ERR_SCHEMA, path, "expected an object, got %s", dgp_json_type_name(obj));
    return;
  }
  const json_t *type = json_object_get(obj, "type");
  dgp_pointer_append(tpath, sizeof tpath, path, "type");
  if (!type) {
    dgp_diag_add(d, DG_ERR_SCHEMA, tpath, "missing required block type");
    return;
  }
  if (!json_is_string(type)) {
    dgp_diag_add(d, DG_ERR_SCHEMA, tpath, "expected a string, got %s", dgp_json_type_name(type));
    return;
  }
  const char *tname = json_string_value(type);
  b->klass = dgp_class_find(g->reg, tname);
  if (!b->klass) {
    const char *s = suggest_type(g->reg, tname);
    if (s)
      dgp_diag_add(d, DG_ERR_UNKNOWN, tpath, "unknown block type \"%s\"; did you mean \"%s\"?",
                  tname, s);
    else
      dgp_diag_add(d, DG_ERR_UNKNOWN, tpath,
                  "unknown block type \"%s\" (`drivegraph blocks` lists the types)", tname);
    return;
  }
  b->num_ports = dgp_class_num_ports(b->klass);
  b->node = dgp_arena_alloc(g->arena, sizeof(int) * (size_t)(b->num_ports + 1));
  b->params = dgp_arena_alloc(g->arena, b->klass->params_size ? b->klass->params_size : 1);
  if (!b->node || !b->params) {
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    return;
  }
  dgp_bind_parse(g, b, json_object_get(obj, "inputs"), path, d);
  static const char *const skip[] = {"type", "doc", "inputs", NULL};
  int before = d->count;
  if (b->klass->params)
    dgp_params_parse(b->klass->params, obj, b->params, g->arena, path, skip, d);
  else
    dgp_params_parse((const dg_param_def[]){{0}}, obj, b->params, g->arena, path, skip, d);
  if (d->count == before && b->klass->check) {
    dg_check chk = {d, path};
    b->klass->check(b->params, &chk);
  }
}

/* Splits "block.port" and resolves it; reports problems at `path`. */
static bool resolve_endpoint(const dg_graph *g, const json_t *v, const char *path, int *block,
                             int *port, dg_diag *d) {
  if (!json_is_string(v)) {
    dgp_diag_add(d, DG_ERR_SCHEMA, path, "expected a \"block.port\" string, got %s",
                dgp_json_type_name(v));
    return false;
  }
  const char *s = json_string_value(v);
  const char *dot = strchr(s, '.');
  if (!dot || dot == s || !dot[1]) {
    dgp_diag_add(d, DG_ERR_PORT, path, "expected \"block.port\", got \"%s\"", s);
    return false;
  }
  /* the id is compared at its full length; only the copy for messages and
   * suggestions is bounded (a longer one is named by its start) */
  size_t len = (size_t)(dot - s);
  char id[256];
  size_t shown = len < sizeof id ? len : sizeof id - 1;
  memcpy(id, s, shown);
  id[shown] = '\0';
  *block = dgp_graph_block_find_n(g, s, len);
  if (*block < 0) {
    const char *sug = dgp_graph_suggest_block(g, id);
    char note[160];
    dgp_lookalike_note(id, sug, note, sizeof note);
    if (sug)
      dgp_diag_add(d, DG_ERR_UNKNOWN, path, "unknown block \"%s\"; did you mean \"%s\"?%s", id,
                  sug, note);
    else
      dgp_diag_add(d, DG_ERR_UNKNOWN, path, "unknown block \"%s\"", id);
    return false;
  }
  const dg_gblock *b = &g->blocks[*block];
  if (!b->klass)
    return false; /* already reported */
  *port = dgp_class_port_find(b->klass, dot + 1);
  bool internal = *port >= 0 && b->klass->ports[*port].dir == DG_PORT_INTERNAL;
  if (*port < 0 || internal) {
    const char *names[64];
    char list[256] = "";
    int n = 0;
    for (int i = 0; i < b->num_ports && n < 64; i++) {
      if (b->klass->ports[i].dir == DG_PORT_INTERNAL)
        continue;
      names[n++] = b->klass->ports[i].name;
      size_t l = strlen(list);
      snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", b->klass->ports[i].name);
    }
    const char *sug = dg_suggest(dot + 1, names, n);
    if (internal)
      dgp_diag_add(d, DG_ERR_PORT, path,
                  "port \"%s\" of block \"%s\" (%s) is internal and cannot be connected "
                  "(ports: %s)",
                  dot + 1, id, b->klass->type, list);
    else if (sug)
      dgp_diag_add(d, DG_ERR_PORT, path, "block \"%s\" (%s) has no port \"%s\"; did you mean \"%s\"?",
                  id, b->klass->type, dot + 1, sug);
    else
      dgp_diag_add(d, DG_ERR_PORT, path, "block \"%s\" (%s) has no port \"%s\" (ports: %s)", id,
                  b->klass->type, dot + 1, list);
    return false;
  }
  return true;
}

typedef struct endpoint {
  int block, port;
} endpoint;

/* The shaft's out → in pairs as ordering edges (ports of direction ANY
 * give none). Returns false when out of memory. */
static bool add_edges(dg_graph *g, const dg_gshaft *sh, int *cap) {
  for (int i = 0; i < sh->n; i++) {
    if (g->blocks[sh->block[i]].klass->ports[sh->port[i]].dir != DG_PORT_OUT)
      continue;
    for (int j = 0; j < sh->n; j++) {
      if (g->blocks[sh->block[j]].klass->ports[sh->port[j]].dir != DG_PORT_IN)
        continue;
      if (g->num_conns == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        dg_gconn *c = dgp_arena_alloc(g->arena, sizeof *c * (size_t)nc);
        if (!c)
          return false;
        if (g->num_conns)
          memcpy(c, g->conns, sizeof *c * (size_t)g->num_conns);
        g->conns = c;
        *cap = nc;
      }
      g->conns[g->num_conns++] = (dg_gconn){sh->block[i], sh->port[i], sh->block[j], sh->port[j],
                                            sh->name[i], sh->name[j]};
    }
  }
  return true;
}

/* One connection at `path`: two or more "block.port" strings, the ports of
 * one shaft. Every problem goes to d; the shaft is added when it has none. */
static void parse_shaft(dg_graph *g, const json_t *c, size_t index, const char *path, int **used,
                        bool *mentioned, int *edge_cap, dg_diag *d) {
  size_t n = json_is_array(c) ? json_array_size(c) : 0;
  if (!json_is_array(c) || n < 2) {
    dgp_diag_add(d, DG_ERR_SCHEMA, path,
                "expected the ports of one shaft, [\"block.out_port\", \"block.in_port\", ...] "
                "(two or more), got %s",
                json_is_array(c) ? (n == 1 ? "one port" : "an empty array") : dgp_json_type_name(c));
    return;
  }
  endpoint *ep = dgp_arena_alloc(g->arena, sizeof *ep * n);
  char (*paths)[DG_ERROR_PATH_LEN] = malloc(sizeof *paths * n);
  if (!ep || !paths) {
    free(paths);
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    return;
  }
  bool ok = true;
  for (size_t k = 0; k < n; k++) {
    dgp_pointer_index(paths[k], sizeof paths[k], path, k);
    ep[k] = (endpoint){-1, -1};
    ok &= resolve_endpoint(g, json_array_get(c, k), paths[k], &ep[k].block, &ep[k].port, d);
    /* a block named in a faulty connection is not also "unconnected": one
     * mistake, one message */
    if (ep[k].block >= 0) {
      mentioned[ep[k].block] = true;
      if (ep[k].port >= 0 && used[ep[k].block][ep[k].port] < 0)
        used[ep[k].block][ep[k].port] = INT_MAX;
    }
  }
  if (!ok) {
    free(paths);
    return;
  }
  const char *name0 = json_string_value(json_array_get(c, 0));
  const dg_port_def *p0 = &g->blocks[ep[0].block].klass->ports[ep[0].port];
  int nin = 0, nout = 0, nany = 0;
  for (size_t k = 0; k < n && ok; k++) {
    const dg_port_def *pk = &g->blocks[ep[k].block].klass->ports[ep[k].port];
    nin += pk->dir == DG_PORT_IN;
    nout += pk->dir == DG_PORT_OUT;
    nany += pk->dir == DG_PORT_ANY;
    for (size_t j = 0; j < k && ok; j++)
      if (ep[j].block == ep[k].block) {
        dgp_diag_add(d, DG_ERR_PORT, path, "connects block \"%s\" to itself",
                    g->blocks[ep[k].block].id);
        ok = false;
      }
    if (ok && pk->domain != p0->domain) {
      dgp_diag_add(d, DG_ERR_PORT, path, "connects %s port \"%s\" to %s port \"%s\"",
                  domain_name(p0->domain), name0, domain_name(pk->domain),
                  json_string_value(json_array_get(c, k)));
      ok = false;
    }
  }
  if (ok && nany == 0 && (nin == 0 || nout == 0)) {
    if (n == 2 && p0->dir == DG_PORT_OUT)
      dgp_diag_add(d, DG_ERR_PORT, path,
                  "connects two out ports (\"%s\" and \"%s\"); a connection joins an out port to "
                  "an in port (a machine on another source's shaft, as a generator on an "
                  "engine, joins it through its in port: [\"engine.out\", \"gen.in\"])",
                  name0, json_string_value(json_array_get(c, 1)));
    else if (n == 2)
      dgp_diag_add(d, DG_ERR_PORT, path,
                  "connects two %s ports (\"%s\" and \"%s\"); a connection joins an out port to "
                  "an in port",
                  port_dir_name(p0->dir), name0, json_string_value(json_array_get(c, 1)));
    else
      dgp_diag_add(d, DG_ERR_PORT, path,
                  "joins %zu %s ports and nothing else; a shaft joins out ports (its source side) "
                  "to in ports",
                  n, port_dir_name(p0->dir));
    ok = false;
  }
  for (size_t k = 0; k < n && ok; k++) {
    int prev = used[ep[k].block][ep[k].port];
    if (prev >= 0 && prev != INT_MAX) {
      dgp_diag_add(d, DG_ERR_PORT, paths[k], "port \"%s\" is already connected by /connections/%d",
                  json_string_value(json_array_get(c, k)), prev);
      ok = false;
    }
  }
  free(paths);
  if (!ok)
    return;
  dg_gshaft *sh = &g->shafts[g->num_shafts];
  sh->n = (int)n;
  sh->block = dgp_arena_alloc(g->arena, sizeof(int) * n);
  sh->port = dgp_arena_alloc(g->arena, sizeof(int) * n);
  sh->name = dgp_arena_alloc(g->arena, sizeof(char *) * n);
  if (!sh->block || !sh->port || !sh->name) {
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
    return;
  }
  for (size_t k = 0; k < n; k++) {
    sh->block[k] = ep[k].block;
    sh->port[k] = ep[k].port;
    sh->name[k] = dgp_arena_strdup(g->arena, json_string_value(json_array_get(c, k)));
    used[ep[k].block][ep[k].port] = (int)index;
  }
  g->num_shafts++;
  if (!add_edges(g, sh, edge_cap))
    dgp_diag_add(d, DG_ERR_NOMEM, path, "out of memory");
}

static void parse_connections(dg_graph *g, const json_t *arr, dg_diag *d) {
  size_t n = json_array_size(arr);
  g->shafts = dgp_arena_alloc(g->arena, sizeof *g->shafts * (n ? n : 1));
  /* which connection first used each (block, port) */
  int **used = dgp_arena_alloc(g->arena, sizeof *used * (size_t)(g->num_blocks + 1));
  bool *mentioned = dgp_arena_alloc(g->arena, sizeof *mentioned * (size_t)(g->num_blocks + 1));
  if (!g->shafts || !used || !mentioned) {
    dgp_diag_add(d, DG_ERR_NOMEM, "/connections", "out of memory");
    return;
  }
  for (int i = 0; i < g->num_blocks; i++) {
    used[i] = dgp_arena_alloc(g->arena, sizeof(int) * (size_t)(g->blocks[i].num_ports + 1));
    for (int p = 0; used[i] && p < g->blocks[i].num_ports; p++)
      used[i][p] = -1;
  }
  int edge_cap = 0;
  for (size_t i = 0; i < n; i++) {
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_index(path, sizeof path, "/connections", i);
    parse_shaft(g, json_array_get(arr, i), i, path, used, mentioned, &edge_cap, d);
  }
  for (int i = 0; i < g->num_blocks; i++) {
    const dg_gblock *b = &g->blocks[i];
    if (!b->klass)
      continue;
    char path[DG_ERROR_PATH_LEN];
    dgp_pointer_append(path, sizeof path, "/blocks", b->id);
    /* a port-less block (a controller, a source of signals) connects through its inputs */
    if (!mentioned[i] && g->num_blocks > 1 && b->num_ports > 0) {
      dgp_diag_add(d, DG_ERR_TOPOLOGY, path, "block is not connected to anything");
      continue;
    }
    for (int p = 0; p < b->num_ports; p++) {
      const dg_port_def *pd = &b->klass->ports[p];
      if (pd->dir != DG_PORT_INTERNAL && !pd->optional && used[i][p] < 0)
        dgp_diag_add(d, DG_ERR_PORT, path, "required %s port \"%s\" is not connected",
                    port_dir_name(pd->dir), pd->name);
    }
  }
}

/* Nodes: one per shaft (connection), one per unconnected or internal
 * port; each lists its ports. */
static int build_nodes(dg_graph *g) {
  int count = g->num_shafts, members = 0;
  for (int i = 0; i < g->num_blocks; i++) {
    count += g->blocks[i].num_ports;
    members += g->blocks[i].num_ports;
  }
  g->nodes = dgp_arena_alloc(g->arena, sizeof *g->nodes * (size_t)(count + 1));
  int *mb = dgp_arena_alloc(g->arena, sizeof(int) * (size_t)(members + 1));
  int *mp = dgp_arena_alloc(g->arena, sizeof(int) * (size_t)(members + 1));
  if (!g->nodes || !mb || !mp)
    return -1;
  int at = 0;
  for (int i = 0; i < g->num_blocks; i++)
    for (int p = 0; p < g->blocks[i].num_ports; p++)
      g->blocks[i].node[p] = -1;
  for (int c = 0; c < g->num_shafts; c++) {
    const dg_gshaft *sh = &g->shafts[c];
    dg_gnode *n = &g->nodes[g->num_nodes];
    *n = (dg_gnode){g->blocks[sh->block[0]].klass->ports[sh->port[0]].domain, -1, -1, -1, -1,
                    sh->n, mb + at, mp + at};
    for (int k = 0; k < sh->n; k++) {
      int b = sh->block[k], p = sh->port[k];
      dg_port_dir dir = g->blocks[b].klass->ports[p].dir;
      if (dir == DG_PORT_OUT && n->out_block < 0) {
        n->out_block = b;
        n->out_port = p;
      } else if (dir == DG_PORT_IN && n->in_block < 0) {
        n->in_block = b;
        n->in_port = p;
      }
      mb[at] = b;
      mp[at++] = p;
      g->blocks[b].node[p] = g->num_nodes;
    }
    g->num_nodes++;
  }
  for (int i = 0; i < g->num_blocks; i++) {
    dg_gblock *b = &g->blocks[i];
    for (int p = 0; p < b->num_ports; p++) {
      if (b->node[p] >= 0)
        continue;
      const dg_port_def *pd = &b->klass->ports[p];
      dg_gnode *n = &g->nodes[g->num_nodes];
      *n = (dg_gnode){pd->domain, -1, -1, -1, -1, 1, mb + at, mp + at};
      if (pd->dir == DG_PORT_OUT) {
        n->out_block = i;
        n->out_port = p;
      } else if (pd->dir != DG_PORT_ANY) {
        n->in_block = i;
        n->in_port = p;
      }
      mb[at] = i;
      mp[at++] = p;
      b->node[p] = g->num_nodes++;
    }
  }
  return 0;
}

/* Kahn's algorithm on edges out-block → in-block gives sources first; the
 * solver wants the road first, so the order is stored reversed. A cycle is
 * reported with the blocks on it. */
static void order_blocks(dg_graph *g, dg_diag *d) {
  int nb = g->num_blocks;
  int *indeg = calloc((size_t)nb, sizeof *indeg);
  int *queue = malloc(sizeof *queue * (size_t)nb);
  g->order = dgp_arena_alloc(g->arena, sizeof *g->order * (size_t)(nb + 1));
  if (!indeg || !queue || !g->order) {
    free(indeg);
    free(queue);
    dgp_diag_add(d, DG_ERR_NOMEM, "", "out of memory");
    return;
  }
  for (int c = 0; c < g->num_conns; c++)
    indeg[g->conns[c].to_block]++;
  int head = 0, tail = 0;
  for (int i = 0; i < nb; i++)
    if (indeg[i] == 0)
      queue[tail++] = i;
  while (head < tail) {
    int b = queue[head++];
    for (int c = 0; c < g->num_conns; c++)
      if (g->conns[c].from_block == b && --indeg[g->conns[c].to_block] == 0)
        queue[tail++] = g->conns[c].to_block;
  }
  if (tail < nb) {
    /* Every block left over has an unprocessed predecessor, so walking
     * backwards from one must revisit a block: that closes a cycle. */
    int *seen = calloc((size_t)nb, sizeof *seen);
    int *path = malloc(sizeof *path * (size_t)(nb + 1));
    int cur = 0, len = 0;
    while (cur < nb && indeg[cur] == 0)
      cur++;
    while (seen && path && !seen[cur]) {
      seen[cur] = 1;
      path[len++] = cur;
      for (int c = 0; c < g->num_conns; c++)
        if (g->conns[c].to_block == cur && indeg[g->conns[c].from_block] > 0) {
          cur = g->conns[c].from_block;
          break;
        }
    }
    /* path[k..len-1] walked backwards from cur: print it forwards */
    char msg[DG_ERROR_TEXT_LEN] = "";
    size_t used = 0;
    int k = 0;
    while (path && k < len && path[k] != cur)
      k++;
    for (int i = len - 1; path && i >= k && used < sizeof msg; i--)
      used += (size_t)snprintf(msg + used, sizeof msg - used, "%s -> ", g->blocks[path[i]].id);
    if (used < sizeof msg)
      snprintf(msg + used, sizeof msg - used, "%s", g->blocks[path && len ? path[len - 1] : cur].id);
    dgp_diag_add(d, DG_ERR_TOPOLOGY, "/connections",
                "directed cycle %s (power must flow from the sources out to the road)", msg);
    free(seen);
    free(path);
  } else {
    for (int i = 0; i < nb; i++)
      g->order[i] = queue[nb - 1 - i];
  }
  free(indeg);
  free(queue);
}

dg_graph *dgp_graph_parse(const dg_registry *reg, const char *text, const char *file, dg_diag *d,
                         dg_graph_info *info) {
  dg_graph *g = calloc(1, sizeof *g);
  if (!g || !(g->arena = dgp_arena_new())) {
    free(g);
    dgp_diag_add(d, DG_ERR_NOMEM, "", "out of memory");
    return NULL;
  }
  atomic_init(&g->refs, 1);
  g->reg = reg;
  d->graph = g; /* its warnings are kept (load() clears this) */
  g->file = dgp_arena_strdup(g->arena, file);
  g->name = dgp_arena_strdup(g->arena, "");
  json_t *root = dgp_json_parse(text, file, d);
  if (!root)
    return g;
  if (!json_is_object(root)) {
    dgp_diag_add(d, DG_ERR_SCHEMA, "", "expected a graph object { \"drivegraph\": 1, ... }, got %s",
                dgp_json_type_name(root));
    json_decref(root);
    return g;
  }
  check_header(root, d);
  const json_t *name = json_object_get(root, "name");
  if (json_is_string(name))
    g->name = dgp_arena_strdup(g->arena, json_string_value(name));
  json_t *blocks = json_object_get(root, "blocks");
  const json_t *conns = json_object_get(root, "connections");
  if (!blocks)
    dgp_diag_add(d, DG_ERR_SCHEMA, "/blocks", "missing required object of blocks");
  else if (!json_is_object(blocks))
    dgp_diag_add(d, DG_ERR_SCHEMA, "/blocks", "expected an object of blocks, got %s",
                dgp_json_type_name(blocks));
  else if (json_object_size(blocks) == 0)
    dgp_diag_add(d, DG_ERR_SCHEMA, "/blocks", "must have at least one block");
  if (!conns)
    dgp_diag_add(d, DG_ERR_SCHEMA, "/connections", "missing required array of connections");
  else if (!json_is_array(conns))
    dgp_diag_add(d, DG_ERR_SCHEMA, "/connections", "expected an array of connections, got %s",
                dgp_json_type_name(conns));
  if (!json_is_object(blocks) || json_object_size(blocks) == 0) {
    json_decref(root);
    return g;
  }
  size_t nb = json_object_size(blocks);
  g->blocks = dgp_arena_alloc(g->arena, sizeof *g->blocks * nb);
  if (!g->blocks) {
    dgp_diag_add(d, DG_ERR_NOMEM, "", "out of memory");
    json_decref(root);
    return g;
  }
  const char *id;
  json_t *bv;
  json_object_foreach(blocks, id, bv) { parse_block(g, &g->blocks[g->num_blocks++], id, bv, d); }
  int block_errors = d->count;
  if (json_is_array(conns))
    parse_connections(g, conns, d);
  json_decref(root);
  dgp_bind_resolve(g, d);
  if (d->count > 0) {
    (void)block_errors;
    return g;
  }
  if (build_nodes(g) != 0) {
    dgp_diag_add(d, DG_ERR_NOMEM, "", "out of memory");
    return g;
  }
  order_blocks(g, d);
  if (info) {
    info->blocks = g->num_blocks;
    info->connections = g->num_shafts;
  }
  return g;
}

static void graph_destroy(dg_graph *g) {
  dgp_unit_release(g->compiled);
  free(g->warnings);
  dgp_arena_free(g->arena);
  free(g);
}

void dgp_graph_keep_warning(dg_graph *g, const dg_error *e) {
  if (g->num_warnings == g->cap_warnings) {
    int cap = g->cap_warnings ? 2 * g->cap_warnings : 4;
    dg_error *w = realloc(g->warnings, sizeof *w * (size_t)cap);
    if (!w)
      return; /* a warning lost to memory is still passed to the callback */
    g->warnings = w;
    g->cap_warnings = cap;
  }
  g->warnings[g->num_warnings++] = *e;
}

int dg_graph_warning_count(const dg_graph *g) { return g ? g->num_warnings : 0; }
const dg_error *dg_graph_warning(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_warnings ? &g->warnings[i] : NULL;
}

void dgp_graph_retain(const dg_graph *g) { atomic_fetch_add(&((dg_graph *)g)->refs, 1); }

void dgp_graph_release(const dg_graph *g) {
  if (g && atomic_fetch_sub(&((dg_graph *)g)->refs, 1) == 1)
    graph_destroy((dg_graph *)g);
}

void dg_graph_free(dg_graph *graph) { dgp_graph_release(graph); }

/* ------------------------------------------------------------------------ */
/* What an override can do to the every-mode check                          */

/* The `present` flag of `d` in the struct at `base`. */
static bool param_present(const unsigned char *base, const dg_param_def *d) {
  bool yes;
  memcpy(&yes, base + d->present - 1, sizeof yes);
  return yes;
}

/* The definition in `defs` whose key is the first `len` bytes of `key`. */
static const dg_param_def *def_named(const dg_param_def *defs, const char *key, size_t len) {
  for (const dg_param_def *d = defs; d && d->key; d++)
    if (strlen(d->key) == len && strncmp(d->key, key, len) == 0)
      return d;
  return NULL;
}

unsigned dgp_graph_override_effect(const dg_graph *g, const char *key, const dg_param_def **def,
                                  const double **value) {
  const char *dot = key ? strchr(key, '.') : NULL;
  if (!g || !dot || dot == key)
    return 0;
  const dg_gblock *b = NULL;
  size_t idlen = (size_t)(dot - key);
  for (int i = 0; i < g->num_blocks && !b; i++)
    if (strlen(g->blocks[i].id) == idlen && strncmp(g->blocks[i].id, key, idlen) == 0)
      b = &g->blocks[i];
  if (!b || !b->klass || !b->params)
    return 0;
  const dg_param_def *defs = b->klass->params;
  const unsigned char *base = b->params;
  bool dynamic_object = false; /* under an object whose presence and fields are DG_P_DYNAMICS */
  for (const char *tok = dot + 1;;) {
    const char *end = strchr(tok, '.');
    size_t len = end ? (size_t)(end - tok) : strlen(tok);
    const dg_param_def *d = len ? def_named(defs, tok, len) : NULL;
    if (!d)
      return 0;
    if (!end) {
      if (dynamic_object || (d->flags & DG_P_DYNAMICS))
        return DG_P_DYNAMICS;
      /* a parameter the file leaves out whose presence a block may read */
      if (!(d->flags & DG_P_INERTIA) || d->kind != DG_PARAM_NUMBER ||
          (d->present && !param_present(base, d)))
        return 0;
      *def = d;
      *value = (const double *)(const void *)(base + d->offset);
      return DG_P_INERTIA;
    }
    if (d->kind != DG_PARAM_OBJECT)
      return 0;
    dynamic_object = dynamic_object || (d->flags & DG_P_DYNAMICS);
    /* giving a field of an absent object makes the object present */
    if (!dynamic_object && d->present && !param_present(base, d))
      return 0;
    base += d->offset;
    defs = d->fields;
    tok = end + 1;
  }
}

const char *dg_graph_name(const dg_graph *g) { return g ? g->name : ""; }
const char *dg_graph_file(const dg_graph *g) { return g ? g->file : ""; }
int dg_graph_block_count(const dg_graph *g) { return g ? g->num_blocks : 0; }
const char *dg_graph_block_id(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_blocks ? g->blocks[i].id : NULL;
}
const char *dg_graph_block_type(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_blocks ? g->blocks[i].klass->type : NULL;
}
int dgp_graph_nearest_downstream(const dg_graph *g, int from,
                                bool (*match)(const dg_graph *g, int block, const void *arg),
                                const void *arg) {
  int nb = g->num_blocks, found = -1;
  int *queue = malloc(sizeof *queue * (size_t)(nb + 1));
  unsigned char *seen = calloc((size_t)nb + 1, 1);
  int head = 0, tail = 0;
  if (queue && seen && from >= 0 && from < nb) {
    queue[tail++] = from;
    seen[from] = 1;
  }
  while (head < tail && found < 0) {
    int cur = queue[head++];
    for (int c = 0; c < g->num_conns && found < 0; c++) {
      const dg_gconn *gc = &g->conns[c];
      if (gc->from_block != cur || seen[gc->to_block])
        continue;
      seen[gc->to_block] = 1;
      if (g->blocks[gc->to_block].klass && match(g, gc->to_block, arg))
        found = gc->to_block;
      queue[tail++] = gc->to_block;
    }
  }
  free(queue);
  free(seen);
  return found;
}

static bool is_type(const dg_graph *g, int block, const void *type) {
  return strcmp(g->blocks[block].klass->type, type) == 0;
}

int dg_graph_downstream(const dg_graph *g, int block, const char *type) {
  return g && type ? dgp_graph_nearest_downstream(g, block, is_type, type) : -1;
}

int dg_graph_shaft_count(const dg_graph *g) { return g ? g->num_shafts : 0; }
int dg_graph_shaft_port_count(const dg_graph *g, int i) {
  return g && i >= 0 && i < g->num_shafts ? g->shafts[i].n : 0;
}
const char *dg_graph_shaft_port(const dg_graph *g, int i, int k) {
  return g && i >= 0 && i < g->num_shafts && k >= 0 && k < g->shafts[i].n ? g->shafts[i].name[k]
                                                                          : NULL;
}

int dg_graph_connection_count(const dg_graph *g) { return g ? g->num_conns : 0; }
void dg_graph_connection(const dg_graph *g, int i, const char **from, const char **to) {
  bool ok = g && i >= 0 && i < g->num_conns;
  if (from)
    *from = ok ? g->conns[i].from : NULL;
  if (to)
    *to = ok ? g->conns[i].to : NULL;
}
