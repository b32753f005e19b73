/* dg_sim_step allocates nothing (DESIGN.md, hot path rules).
 *
 * This executable is linked with -Wl,--wrap=malloc (and calloc, realloc,
 * free, strdup, strndup; tests/meson.build): every call the library's
 * objects make to them lands in the __wrap_ functions below, which count
 * while `counting` is set and pass on to the real allocator (so the test
 * also runs under AddressSanitizer, whose malloc is the "real" one). Calls
 * made inside shared libraries (libc, jansson) are not seen, so the
 * positive control checks that loading a graph — which allocates through
 * the library's own calls — is counted.
 *
 * Each example and bench graph is driven through a launch (shifts, clutch
 * and converter lock-ups) and then full braking to rest (wheel and body
 * holds: ties, constraint multipliers), every step counted on its own. */
#include "testutil.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_bool counting;
static atomic_long calls;

static void count(void) {
  if (atomic_load(&counting))
    atomic_fetch_add(&calls, 1);
}

void *__wrap_malloc(size_t size) {
  count();
  return __real_malloc(size);
}
void *__wrap_calloc(size_t n, size_t size) {
  count();
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
  count();
  return __real_realloc(p, size);
}
void __wrap_free(void *p) {
  if (p)
    count();
  __real_free(p);
}
char *__wrap_strdup(const char *s) {
  count();
  return __real_strdup(s);
}
char *__wrap_strndup(const char *s, size_t n) {
  count();
  return __real_strndup(s, n);
}

static void start_counting(void) {
  atomic_store(&calls, 0);
  atomic_store(&counting, true);
}

static long stop_counting(void) {
  atomic_store(&counting, false);
  return atomic_load(&calls);
}

/* The wrapping is in effect: the library's own allocations are seen. */
START_TEST(test_counter_works) {
  start_counting();
  dg_graph *g = dg_test_graph("{ \"drivegraph\": 1, \"blocks\": { \"m\": { \"type\": "
                              "\"inertia\", \"inertia\": 1 } }, \"connections\": [] }");
  dg_sim *sim = dg_test_sim(g);
  long n = stop_counting();
  ck_assert_int_gt(n, 10);
  start_counting();
  dg_sim_free(sim);
  dg_graph_free(g);
  ck_assert_int_gt(stop_counting(), 10);
}
END_TEST

static const char *const graphs[] = {
    "graphs/sedan_rwd_automatic.json",   "graphs/hatchback_fwd_manual.json",
    "graphs/awd_lsd.json",               "graphs/ev_single_speed.json",
    "graphs/gear_train.json",            "graphs/open_diff_axle.json",
    "graphs/bench/sedan_baseline.json",  "graphs/bench/awd_3diff.json",
    "graphs/bench/truck_8x8.json",       "graphs/bench/chain_16.json",
    "graphs/bench/diff_tree_16.json",
};

#define DT 0.001
#define LAUNCH_STEPS 8000
#define BRAKE_STEPS 6000

START_TEST(test_step_allocates_nothing) {
  char path[1024];
  dg_test_path(path, sizeof path, graphs[_i]);
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s: %s", graphs[_i], err.text);
  dg_sim *sim = dg_test_sim(g);
  int speed = dg_sim_signal_find(sim, "engine.rpm");
  long worst = 0, worst_step = -1, changes_before_brake = 0;
  for (long k = 0; k < LAUNCH_STEPS + BRAKE_STEPS; k++) {
    double t = (double)k * DT;
    start_counting(); /* no ck_assert inside: Check allocates to record a location */
    if (k < LAUNCH_STEPS) {
      dg_batch_launch_inputs(sim, t);
    } else {
      dg_sim_set_input(sim, DG_INPUT_THROTTLE, 0.0);
      dg_sim_set_input(sim, DG_INPUT_BRAKE, 1.0);
    }
    int rc = dg_sim_step(sim, DT);
    (void)dg_sim_signal(sim, speed); /* reading a signal by id is free too */
    long n = stop_counting();
    ck_assert_msg(rc == DG_OK, "%s: %s", graphs[_i], dg_sim_last_error(sim)->text);
    if (n > worst) {
      worst = n;
      worst_step = k;
    }
    if (k == LAUNCH_STEPS - 1)
      changes_before_brake = dg_sim_topology_changes(sim);
  }
  long changes = dg_sim_topology_changes(sim);
  printf("%-36s %ld topology changes (%ld braking), %ld allocations\n", graphs[_i], changes,
         changes - changes_before_brake, worst);
  ck_assert_msg(worst == 0, "%s: %ld allocations in step %ld", graphs[_i], worst, worst_step);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The scenario driver's per-step calls allocate nothing either. */
START_TEST(test_driver_allocates_nothing) {
  char path[1024], spath[1024];
  dg_test_path(path, sizeof path, "graphs/sedan_rwd_automatic.json");
  dg_test_path(spath, sizeof spath, "graphs/scenarios/launch.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_ptr_nonnull(g);
  dg_scenario *scn = dg_scenario_load_file(spath, &err);
  ck_assert_ptr_nonnull(scn);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = dg_driver_new(scn, sim, &err);
  ck_assert_ptr_nonnull(drv);
  for (long k = 0; k < 5000; k++) {
    start_counting(); /* no ck_assert inside: Check allocates to record a location */
    dg_driver_apply(drv, (double)k * DT);
    int rc = dg_sim_step(sim, DT);
    (void)dg_driver_should_stop(drv);
    long n = stop_counting();
    ck_assert_int_eq(rc, DG_OK);
    ck_assert_msg(n == 0, "%ld allocations in step %ld", n, k);
  }
  ck_assert_int_gt(dg_sim_topology_changes(sim), 0);
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_scenario_free(scn);
  dg_graph_free(g);
}
END_TEST

static Suite *alloc_suite(void) {
  Suite *s = suite_create("alloc");
  TCase *tc = tcase_create("step");
  tcase_set_timeout(tc, 240);
  tcase_add_test(tc, test_counter_works);
  tcase_add_loop_test(tc, test_step_allocates_nothing, 0,
                      (int)(sizeof graphs / sizeof graphs[0]));
  tcase_add_test(tc, test_driver_allocates_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(alloc_suite()); }
