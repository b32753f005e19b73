/* Helpers shared by the Check suites. */
#ifndef DG_TESTUTIL_H
#define DG_TESTUTIL_H

#include <check.h>
#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>
#include <jansson.h>

/* Absolute path of a file in the source tree ("graphs/gear_train.json");
 * returns a static-per-call buffer owned by the caller's stack copy. */
void dg_test_path(char *buf, size_t size, const char *relative);
/* The text of a file of the source tree (malloc'ed; the caller frees). */
char *dg_test_read_source(const char *relative);

/* The first line of the file at `path`, without its newline; fails the test
 * if the file cannot be read or is empty. */
void dg_test_first_line(char *buf, size_t size, const char *path);

/* Loads the graph file at `relative` (a path in the source tree) and fails
 * the test with the error's place and text if it does not load. */
dg_graph *dg_test_graph_file(const char *relative);
/* The DOF of the current mode declared on the shaft `port` ("diff.left");
 * fails the test if there is none. */
int dg_test_dof_of(const dg_sim *sim, const char *port);
/* A framework signal compared with a twin's value (the hand-written
 * baselines): the worst relative difference |fw − twin| / max(|fw|,
 * |twin|, floor) and when it happened (a NaN is the worst). */
typedef struct dg_test_compare {
  const char *signal;
  double floor; /* the smallest scale, so a value near zero is not over-weighted */
  int id;       /* set by dg_test_compare_init */
  double worst;
  double worst_t;
} dg_test_compare;
/* Resolves the signals (fails the test on an unknown one). */
void dg_test_compare_init(const dg_sim *sim, dg_test_compare *c, int n);
/* Books the framework's and the twin's values of c at time t. */
void dg_test_compare_value(dg_test_compare *c, double fw, double twin, double t);
/* Prints each signal's worst difference (with `dt`) and asserts it <= tol. */
void dg_test_compare_check(const dg_test_compare *c, int n, double dt, double tol);
/* Loads a graph from a string and fails the test with the error text if it
 * does not load. */
dg_graph *dg_test_graph(const char *json);

/* dg_test_graph with the block classes of `reg` (NULL: the built-in ones). */
dg_graph *dg_test_graph_reg(const dg_registry *reg, const char *json);

/* dg_test_graph_reg / dg_test_graph of a printf-style text; fails the test
 * if the text does not fit an 8 KiB buffer. */
dg_graph *dg_test_graph_regf(const dg_registry *reg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define dg_test_graphf(...) dg_test_graph_regf(NULL, __VA_ARGS__)

/* The rig torque_source "src" → `type` "`id`" → load "ld"; `src`, `params`
 * and `load` are the insides of the blocks' objects after their "type"
 * (`params` may be empty). */
dg_graph *dg_test_chain(const char *src, const char *type, const char *id, const char *params,
                        const char *load);

/* A graph file and a scenario file of the source tree, bound by the
 * scenario driver (initial values and a consistent start applied); fails
 * the test with the place and text of any error. dg_test_finish frees it. */
typedef struct dg_test_drive {
  dg_graph *g;
  dg_scenario *scn;
  dg_sim *sim;
  dg_driver *drv;
} dg_test_drive;
dg_test_drive dg_test_start(const char *graph, const char *scenario);
void dg_test_finish(dg_test_drive *r);

/* Loads a graph string that must fail; returns the error. */
dg_error dg_test_graph_error(const char *json);

/* One row of a table of parameter errors: a block's parameters (the inside
 * of its object) and the path and text of the error they give. */
typedef struct dg_test_bad_param {
  const char *params, *path, *text;
} dg_test_bad_param;

/* Loads a printf-style graph text that must fail and asserts the error's
 * path and text: the body of a loop test over a dg_test_bad_param table,
 *   dg_test_graph_error_at(bad[_i].path, bad[_i].text, "...%s...", bad[_i].params); */
void dg_test_graph_error_at(const char *path, const char *text, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A dg_diag_fn that counts the problems reported in the int `user` points
 * to (for dg_graph_validate_*). */
void dg_test_count_diag(const dg_error *err, void *user);

/* Index of the block `id` in `g`; fails the test if there is none. */
int dg_test_block_index(const dg_graph *g, const char *id);

/* Creates a simulation and fails the test on error. */
dg_sim *dg_test_sim(const dg_graph *g);

/* Signal value by name; fails the test if unknown. */
double dg_test_signal(const dg_sim *sim, const char *name);
/* The shaft audit closes: |balance_error| <= rel · work_in. */
void dg_test_check_balance(const dg_sim *sim, double rel);

/* Sets the initial values of `n` (at most 8) signals given by name, in one
 * dg_sim_set_initial call; fails the test on an unknown name or an error. */
void dg_test_set_initial(dg_sim *sim, int n, const char *const *names, const double *values);

/* dg_test_set_initial of one signal. */
void dg_test_set_initial1(dg_sim *sim, const char *name, double value);

/* Sets a driver input by name; fails the test if unknown. */
void dg_test_set_input(dg_sim *sim, const char *name, double value);

/* Steps `n` times by `dt`; fails the test with the error text at the first
 * step that does not return DG_OK. */
void dg_test_step(dg_sim *sim, int n, double dt);

/* Every signal's value after each of `steps` steps of `dt` (malloc'ed,
 * steps × signal count); fails the test at a step that fails. */
double *dg_test_record(dg_sim *sim, long steps, double dt);
/* Two such records equal bit for bit; fails naming the first step and
 * signal that differ. */
void dg_test_same_records(const double *a, const double *b, const dg_sim *sim, long steps);

/* Parses `text` as JSON and frees it; fails the test if it is not JSON. */
json_t *dg_test_json_take(char *text);

/* doc["blocks"][id]; fails the test if there is no such block. */
json_t *dg_test_json_block(const json_t *doc, const char *id);

/* obj[key] as a number / a string; fails the test if it is not one. */
double dg_test_json_num(const json_t *obj, const char *key);
const char *dg_test_json_str(const json_t *obj, const char *key);

/* Whether doc["connections"] holds the connection [from, to]. */
bool dg_test_json_connected(const json_t *doc, const char *from, const char *to);

/* Runs `suite` and returns the process exit status (0 when all pass). */
int dg_test_run(Suite *suite);

/* A registry with the built-in classes plus test-only classes
 * (tests/testblocks.c):
 * - "test_coupler" (in, out): mode 0 couples in = ratio·out, mode 1 leaves
 *   `in` free; the custom input "couple" (>= 0.5 couples) switches it in
 *   pre_step. Params: ratio (default 1), start_coupled (bool, default true).
 * - "test_merge" (in_a, in_b, out): in_a = ratio_a·out, in_b = ratio_b·out.
 * - "test_mass" (in, linear): a linear body of mass `mass` (kg).
 * - "test_wheel" (hub rotational in, ground linear out): hub = ground/radius.
 * - "test_cvt" (in, out): in = r(t)·out with r a state, ṙ = `rate`
 *   (variable kinematics).
 * - "test_speedo" (in → out, ratio 1, no inertia): a shaft whose signal
 *   "speed" is radius·ω_out (`radius`, m, default 1): a speedometer to bind
 *   an input to.
 * - "test_misuse" (in, out): its state_upstream misuses the dg_topo_*
 *   calls as its param `fault` (1…11) says (tests/test_solver.c); 0 is a
 *   plain ratio 1. */
dg_registry *dg_test_registry(void);

#endif
