/* Helpers shared by the Check suites. */
#ifndef DG_TESTUTIL_H
#define DG_TESTUTIL_H

#include <check.h>
#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

/* Absolute path of a file in the source tree ("graphs/gear_train.json");
 * returns a static-per-call buffer owned by the caller's stack copy. */
void dg_test_path(char *buf, size_t size, const char *relative);

/* Loads a graph from a string and fails the test with the error text if it
 * does not load. */
dg_graph *dg_test_graph(const char *json);

/* Loads a graph string that must fail; returns the error. */
dg_error dg_test_graph_error(const char *json);

/* Creates a simulation and fails the test on error. */
dg_sim *dg_test_sim(const dg_graph *g);

/* Signal value by name; fails the test if unknown. */
double dg_test_signal(const dg_sim *sim, const char *name);

/* Runs `suite` and returns the process exit status (0 when all pass). */
int dg_test_run(Suite *suite);

#endif

/* A registry with the built-in classes plus test-only classes:
 * - "test_coupler" (in, out): mode 0 couples in = ratio·out, mode 1 leaves
 *   `in` free; the custom input "couple" (>= 0.5 couples) switches it in
 *   pre_step. Params: ratio (default 1), start_coupled (bool, default true).
 * - "test_merge" (in_a, in_b, out): in_a = ratio_a·out, in_b = ratio_b·out.
 * - "test_mass" (in, linear): a linear body of mass `mass` (kg).
 * - "test_wheel" (hub rotational in, ground linear out): hub = ground/radius.
 * - "test_cvt" (in, out): in = r(t)·out with r a state, ṙ = `rate`
 *   (variable kinematics). */
dg_registry *dg_test_registry(void);
dg_graph *dg_test_graph_reg(const dg_registry *reg, const char *json);
