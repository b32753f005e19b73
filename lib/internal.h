/* Private declarations shared by lib/ files. Not installed. */
#ifndef DG_INTERNAL_H
#define DG_INTERNAL_H

#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>
#include <jansson.h>
#include <stdarg.h>

#if defined(__GNUC__)
#define DG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DG_PRINTF(a, b)
#endif

#ifdef NDEBUG
#define DG_ASSERT(x) ((void)0)
#else
#include <assert.h>
#define DG_ASSERT(x) assert(x)
#endif

/* ---- arena: many small allocations freed together (util.c) ------------- */
typedef struct dg_arena dg_arena;
dg_arena *dgp_arena_new(void);
/* Zeroed, aligned for double; NULL on out of memory. */
void *dgp_arena_alloc(dg_arena *a, size_t size);
char *dgp_arena_strdup(dg_arena *a, const char *s);
void dgp_arena_free(dg_arena *a);

/* ---- error collection (util.c) ------------------------------------------ */
/* Collects problems: keeps the first in `first`, counts all, and passes each
 * to `fn` when set (validate prints every problem). */
typedef struct dg_diag {
  const char *file;
  dg_diag_fn fn;
  void *user;
  int count;
  dg_error first;
  /* Warnings: things that load but that the graph probably does not mean
   * (an element that can never act, a locked start). They go to `fn` as
   * a dg_error with code DG_OK and a text starting "warning: ", are not
   * counted in `count`, and are kept in `graph` when it is set (the graph
   * being loaded: dg_graph_warning). */
  int warnings;
  dg_graph *graph;
} dg_diag;

void dgp_diag_init(dg_diag *d, const char *file, dg_diag_fn fn, void *user);
void dgp_diag_add(dg_diag *d, int code, const char *path, const char *fmt, ...) DG_PRINTF(4, 5);
void dgp_diag_vadd(dg_diag *d, int code, const char *path, int line, int column, const char *fmt,
                  va_list ap);
void dgp_diag_warn(dg_diag *d, const char *path, const char *fmt, ...) DG_PRINTF(3, 4);
void dgp_diag_vwarn(dg_diag *d, const char *path, const char *fmt, va_list ap);
/* Copies d->first into err (if err and a problem was recorded). */
void dgp_diag_to_error(const dg_diag *d, dg_error *err);

/* Fills an error directly (used where there is no collector); overwrites
 * whatever err held. */
void dgp_error_set(dg_error *err, int code, const char *file, const char *path, const char *fmt,
                  ...) DG_PRINTF(5, 6);
void dgp_error_clear(dg_error *err);

/* JSON pointer `base` + "/" + escaped token into buf ("~" -> "~0", "/" -> "~1"). */
void dgp_pointer_append(char *buf, size_t size, const char *base, const char *token);
void dgp_pointer_index(char *buf, size_t size, const char *base, size_t index);

/* How dgp_range_text writes a range. */
typedef enum dg_range_style {
  /* The bounds joined by " and ": "> 0", ">= 0 and <= 1", "> 0 and < 2";
   * "" when there is no bound (the importers' "must be %s (got %g)"). */
  DG_RANGE_BOUNDS,
  /* As DG_RANGE_BOUNDS, except that two inclusive bounds are written
   * "in [0, 1]" and no bound "finite" (block inputs' constants, bind.c). */
  DG_RANGE_INTERVAL
} dg_range_style;

/* The range of `flags` for a message "must be %s": the lower bound from
 * DG_P_MIN_EXCL ("> min", which wins over DG_P_MIN) or DG_P_MIN (">= min"),
 * the upper from DG_P_MAX_EXCL ("< max", which wins over DG_P_MAX) or
 * DG_P_MAX ("<= max"), numbers as %g, other flags ignored; written into buf
 * (truncated like snprintf, always terminated when size > 0). Returns buf. */
const char *dgp_range_text(char *buf, size_t size, unsigned flags, double min, double max,
                          dg_range_style style);

/* Edit distance (dg_suggest, the public "did you mean", is built on it). */
int dgp_edit_distance(const char *a, const char *b);

/* ---- untrusted text (util.c) --------------------------------------------- */
/* Whether text has a character dg_text_escape changes. */
bool dgp_text_needs_escape(const char *text);
/* The offset of the first byte of text[0..len) that does not start a valid
 * UTF-8 sequence, or len when all of it is valid UTF-8. */
size_t dgp_utf8_invalid_at(const char *text, size_t len);
/* NFC of a UTF-8 string, malloc'ed; NULL for invalid UTF-8 or no memory. */
char *dgp_text_nfc(const char *s);
/* Whether s is an identifier (letters of any script, combining marks after
 * the first character, decimal digits, '_', '-'): 0, or -1 with why ("has
 * '.' at character 3"). */
int dgp_ident_check(const char *s, char *why, size_t size);
/* Whether a and b differ but look alike: the same after compatibility
 * normalization, case folding, stripping marks and mapping Cyrillic and
 * Greek letters that look Latin. */
bool dgp_text_lookalike(const char *a, const char *b);
/* "differs at character 2: U+0430 where the id has U+0061" for a name
 * `yours` and the id `theirs` it looks like. */
void dgp_text_difference(const char *yours, const char *theirs, char *buf, size_t size);

/* ---- bounded input (util.c) --------------------------------------------- */
/* Graph and scenario texts above this many bytes are refused unless the
 * environment's DRIVEGRAPH_MAX_INPUT_SIZE says otherwise (docs/errors.md). */
#define DG_INPUT_LIMIT_DEFAULT ((size_t)16 << 20)
/* A text whose parsed tree would take more than DG_INPUT_MEMORY_FACTOR
 * times its size, plus DG_INPUT_MEMORY_SLACK bytes, is refused before it
 * is parsed (estimated from one scan of the text: a value takes about 48
 * bytes in jansson, an array or object 100 more). Ordinary graphs and
 * scenarios take 5 to 25 times; what is denser (hundreds of thousands of
 * empty arrays) is not a drivetrain. */
#define DG_INPUT_MEMORY_FACTOR 32
#define DG_INPUT_MEMORY_SLACK ((size_t)1 << 20)
/* 0 when `bytes` is within the limit, else -1 with why. */
int dgp_input_size_check(size_t bytes, char *why, size_t size);
/* Reads a whole graph or scenario file (refused over the limit, before it
 * is read when its size is known) into a malloc'ed NUL-terminated buffer;
 * NULL with why ("cannot read file: ...", "the file is ... bytes, over the
 * limit ...") on failure. */
char *dgp_read_input(const char *path, size_t *len, char *why, size_t why_size);

/* Loads JSON text with duplicate-key rejection and maps jansson's errors to
 * a DG_ERR_SYNTAX with line and column. */
json_t *dgp_json_parse(const char *text, const char *file, dg_diag *diag);
/* "number", "string", "array", ... of a json value, for messages. */
const char *dgp_json_type_name(const json_t *v);

/* ---- parameter tables (params.c) ---------------------------------------- */
/* Parses object `obj` (at JSON pointer `path`) into the struct at `out`
 * following `defs`: defaults, required keys, types, ranges, enum names,
 * arrays and tables (copied into `arena`), nested objects, unknown keys with
 * "did you mean". Keys listed in `skip` (NULL-terminated, may be NULL) are
 * ignored. Every problem goes to `diag`; returns the number found. */
int dgp_params_parse(const dg_param_def *defs, const json_t *obj, void *out, dg_arena *arena,
                    const char *path, const char *const *skip, dg_diag *diag);
/* Fills defaults only (no JSON), e.g. for blocks built in code. */
void dgp_params_defaults(const dg_param_def *defs, void *out);
/* Sanity check of a table when a class is registered; 0 ok, else message. */
int dgp_params_check_defs(const dg_param_def *defs, size_t params_size, char *why, size_t n);
/* Whether v is finite and within the range flags of `d` (what parsing
 * accepts for a number), without reporting. */
bool dgp_param_value_ok(const dg_param_def *d, double v);

/* ---- registry (registry.c) ---------------------------------------------- */
struct dg_registry {
  const dg_block_class **classes;
  int count, cap;
};
/* The built-in classes (one per file in blocks/), NULL-terminated. */
extern const dg_block_class *const dg_builtin_classes[];
/* Lookup in a registry, or in the built-ins when reg is NULL. */
const dg_block_class *dgp_class_find(const dg_registry *reg, const char *type);
int dgp_class_count(const dg_registry *reg);
const dg_block_class *dgp_class_at(const dg_registry *reg, int i);
/* Port, param, signal counts of a class (tables are NULL-terminated). */
int dgp_class_num_ports(const dg_block_class *k);
int dgp_class_num_signals(const dg_block_class *k);
int dgp_class_port_find(const dg_block_class *k, const char *name);

/* ---- graphs (graph.c) --------------------------------------------------- */
/* Where a block input takes its value from (lib/bind.c). */
typedef enum dg_bind_kind {
  DG_BIND_CONST,   /* value */
  DG_BIND_CHANNEL, /* channel: a sim-wide named input */
  DG_BIND_SIGNAL   /* signal `signal` of block `block` */
} dg_bind_kind;

typedef struct dg_gbind {
  dg_bind_kind kind;
  bool given;          /* bound in the graph file (else the class default) */
  const char *text;    /* the file's string, NULL for a number or a default */
  double value;        /* DG_BIND_CONST */
  const char *channel; /* DG_BIND_CHANNEL */
  int block, signal;   /* DG_BIND_SIGNAL */
} dg_gbind;

typedef struct dg_gblock {
  const dg_block_class *klass;
  char *id;
  void *params;  /* klass->params_size, in the graph's arena */
  int num_ports;
  int *node;     /* node index per port */
  int num_inputs;
  dg_gbind *bind; /* per input, in input-table order */
} dg_gblock;

/* An edge from an out port to an in port of one shaft: what orders the
 * blocks (a shaft of k ports gives every out × in pair of them). */
typedef struct dg_gconn {
  int from_block, from_port; /* an out port */
  int to_block, to_port;     /* an in port */
  char *from, *to;           /* "block.port" */
} dg_gconn;

/* A connection of the file: the ports of one shaft. */
typedef struct dg_gshaft {
  int n;
  int *block, *port;
  char **name; /* "block.port" as written */
} dg_gshaft;

typedef struct dg_gnode {
  dg_domain domain;
  int out_block, out_port; /* the first out port on it, -1 if none */
  int in_block, in_port;   /* the first in port on it, -1 if none */
  int n;                   /* every port on it: n >= 1 */
  const int *block, *port;
} dg_gnode;

struct dg_graph {
  _Atomic int refs;
  dg_arena *arena;
  const dg_registry *reg;
  char *file;
  char *name;
  int num_blocks;
  dg_gblock *blocks;
  int num_conns;
  dg_gconn *conns;
  int num_shafts;
  dg_gshaft *shafts;
  int num_nodes;
  dg_gnode *nodes;
  int *order; /* blocks from the road back to the sources */
  int *sig_order; /* blocks in the order their inputs bound to signals are evaluated */
  int num_channels; /* channels named by the file's bindings */
  const char **channels;
  const char **channel_paths; /* the first binding of each */
  int num_warnings, cap_warnings; /* what loading warned about (dg_graph_warning) */
  dg_error *warnings;             /* malloc'ed */
  unsigned long tunes; /* parameter changes in place (dgp_sim_tune): compiled units stand aside */
  struct dgp_unit *compiled; /* the last dg_sim_compile's unit: simulations made later take it */
};

/* Drops a reference to a compiled unit (lib/solver/compile.c). */
void dgp_unit_release(struct dgp_unit *u);

/* Keeps a warning of the graph being loaded (dgp_diag_warn). */
void dgp_graph_keep_warning(dg_graph *g, const dg_error *e);

/* The block whose id is the first `len` bytes of `id` (any length), or -1;
 * the closest id for "did you mean", or NULL (graph.c). */
int dgp_graph_block_find_n(const dg_graph *g, const char *id, size_t len);
const char *dgp_graph_suggest_block(const dg_graph *g, const char *id);
/* " (differs at character 2: U+043E where the id has U+006F)" when `id`
 * only looks like the block id `sug` (dgp_text_lookalike), else "". */
void dgp_lookalike_note(const char *id, const char *sug, char *buf, size_t size);

/* The nearest block downstream of `from` (breadth first along the
 * power-flow edges) for which match holds, or -1 (graph.c). */
int dgp_graph_nearest_downstream(const dg_graph *g, int from,
                                bool (*match)(const dg_graph *g, int block, const void *arg),
                                const void *arg);

/* ---- input bindings (bind.c) -------------------------------------------- */
/* Reads a block's "inputs" object (at `path`, the block's pointer) into
 * b->bind: input names, value types, constants' ranges. */
void dgp_bind_parse(dg_graph *g, dg_gblock *b, const json_t *inputs, const char *path, dg_diag *d);
/* After connections: resolves every binding (sources, defaults), lists the
 * channels the file names and orders signal evaluation; algebraic loops
 * and unknown or ambiguous sources go to d. */
void dgp_bind_resolve(dg_graph *g, dg_diag *d);
/* The range input i of block b accepts (its table's bounds, 0..1 for a
 * boolean, narrowed by the class's input_range), and the range hook signal
 * s of b takes (0..1 for a boolean, narrowed by signal_range; a speed's
 * is unbounded). */
void dgp_input_limits(const dg_gblock *b, int i, dg_range *r);
void dgp_signal_limits(const dg_gblock *b, int s, dg_range *r);
/* Whether input `in` with range r takes v (finite, in range, whole for an
 * integer or boolean), and how that is said ("an integer from -1 to 5",
 * "0 or 1", "in [0, 1]"). */
bool dgp_input_accepts(const dg_input_def *in, const dg_range *r, double v);
void dgp_input_describe(const dg_input_def *in, const dg_range *r, char *buf, size_t size);
/* Number of inputs in a class's table. */
int dgp_class_num_inputs(const dg_block_class *k);

/* Parses a graph's text and makes the structural checks (graph.c), not the
 * mode check (lib/check.c adds it); problems go to d. Returns the graph
 * even with problems (NULL only when out of memory), and fills info's
 * block and connection counts. */
dg_graph *dgp_graph_parse(const dg_registry *reg, const char *text, const char *file, dg_diag *d,
                         dg_graph_info *info);
void dgp_graph_retain(const dg_graph *g);
void dgp_graph_release(const dg_graph *g);

/* dg_graph_load_string with options (DG_LOAD_*). */
enum {
  /* Skip the every-mode check (dgp_sim_check_modes) and nothing else: for a
   * graph whose check is known to come out as an already checked graph's
   * did (batch runs, lib/run/batch.c). Its blocks' init then first runs in
   * dg_sim_new. */
  DG_LOAD_NO_MODE_CHECK = 1u << 0
};
dg_graph *dgp_graph_load_string_opts(const dg_registry *reg, const char *json, const char *name,
                                    unsigned opts, dg_error *err);

/* The parameter that an override key "block.param[.field...]" sets in the
 * loaded graph g, and what overriding it can do to the every-mode check:
 *   DG_P_DYNAMICS  nothing, whatever the value;
 *   DG_P_INERTIA   a number in M only: *def and *value (the graph's parsed
 *                  value, a stable address that identifies the parameter)
 *                  are set;
 *   0              anything: an unflagged parameter, a whole object
 *                  replaced, a field that makes an absent object present
 *                  (unless the object is DG_P_DYNAMICS), an inertia the
 *                  file leaves out that has a `present` flag, or a key
 *                  that names no parameter (an unknown block or key, an
 *                  empty level, a field of something that is not an
 *                  object), which loading then reports. */
unsigned dgp_graph_override_effect(const dg_graph *g, const char *key, const dg_param_def **def,
                                  const double **value);

/* dg_graph_load_file and dg_graph_validate_file for graph JSON files only.
 * The public functions (lib/import/graph_file.c) send .yaml and .yml paths
 * to the YAML importer and every other path here, so that the core never
 * calls the importers. */
dg_graph *dgp_graph_load_json_file(const dg_registry *reg, const char *path, dg_error *err);
/* `graph` (may be NULL): the loaded graph when it is valid, else NULL. */
int dgp_graph_validate_json_file(const dg_registry *reg, const char *path, dg_diag_fn fn,
                                 void *user, dg_graph_info *info, dg_graph **graph);
/* dg_graph_validate_string, keeping the graph as above. */
int dgp_graph_validate_text(const dg_registry *reg, const char *json, const char *name,
                            dg_diag_fn fn, void *user, dg_graph_info *info, dg_graph **graph);

/* ---- simulation-level checks (sim.c) ------------------------------------ */
/* Builds a simulation of `g` and checks every reachable mode combination:
 * over-constrained ties and DOFs without inertia. Problems go to diag;
 * returns their number and fills info (dofs in the start mode, modes). */
int dgp_sim_check_modes(const dg_graph *g, dg_diag *diag, dg_graph_info *info);
/* How dgp_sim_check_modes_opts checks. */
enum {
  /* Every switching block in one group: the combinations themselves, as
   * far as MAX_MODE_COMBINATIONS allows, without the structure (tests
   * compare the two). */
  DGP_CHECK_NO_GROUPS = 1u << 0
};
int dgp_sim_check_modes_opts(const dg_graph *g, unsigned opts, dg_diag *diag, dg_graph_info *info);

#endif
