/* The mode cache (lib/solver/cache.c): a mode visited before is taken from
 * its slot instead of built.
 *
 * Every comparison is exact. With `verify` on, each hit also builds its
 * mode in full in a free slot from the solver as the build began and
 * compares every scalar of the solver and every byte of every plan array
 * (both slots zeroed before their builds): a field the hit does not take,
 * or one it takes that it must leave, shows as a difference. And a run
 * with the cache gives every signal after every step bit for bit as the
 * same run without it. The drivetrains switch often: shifts through
 * friction, converter lock-ups, clutches and brakes that stick and slip. */
#include "solver/solver.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#define DT 0.001

/* `steps`, or `short_steps` (past the first hit) with DG_SOAK_SHORT set:
 * the sanitizer and valgrind runs. */
typedef struct drive_case {
  const char *graph, *scenario;
  long steps, short_steps;
} drive_case;

static const drive_case cases[] = {
    {"graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json", 12000, 3700},
    {"graphs/dct.json", "graphs/scenarios/dct_upshifts.json", 8000, 300},
    {"graphs/coupled_clutches.json", "graphs/scenarios/coupled_clutches.json", 1500, 1100},
    {"graphs/p2_hybrid.json", "graphs/scenarios/p2_electric_then_boost.json", 8000, 4700},
    /* its first return to a mode: 2nd gear again as the 3-4 shift begins (13.15 s) */
    {"graphs/planetary_automatic.json", "graphs/scenarios/planetary_automatic.json", 14000, 13300},
    {"graphs/hatchback_fwd_manual.json", "graphs/scenarios/manual_launch.json", 8000, 6400},
    {"graphs/ev_single_speed.json", "graphs/scenarios/ev_launch_brake.json", 20000, 100},
};

static long steps_of(const drive_case *c) {
  const char *s = getenv("DG_SOAK_SHORT");
  return s && *s ? c->short_steps : c->steps;
}
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

/* Each hit against a full build of its mode. */
START_TEST(test_hits_equal_builds) {
  const drive_case *c = &cases[_i];
  dg_test_drive d = dg_test_start(c->graph, c->scenario);
  ck_assert_msg(d.sim->cache != NULL, "%s has no mode cache", c->graph);
  dgp_cache_verify(d.sim, true);
  long steps = steps_of(c);
  for (long k = 0; k < steps; k++)
    ck_assert_msg(dg_sim_step(d.sim, DT) == DG_OK, "%s step %ld: %s", c->graph, k,
                  dg_sim_last_error(d.sim)->text);
  long hits, misses, fail;
  dgp_cache_stats(d.sim, &hits, &misses, &fail);
  printf("%s: %ld mode changes taken from the cache, %ld built, %ld hits differing\n", c->graph,
         hits, misses, fail);
  ck_assert_int_eq(fail, 0);
  ck_assert_msg(hits > 0, "%s: no mode was visited twice", c->graph);
  dg_test_finish(&d);
}
END_TEST

/* The same run without the cache (freed after the start: every build in
 * place), bit for bit. */
START_TEST(test_same_run_without_cache) {
  const drive_case *c = &cases[_i];
  dg_test_drive a = dg_test_start(c->graph, c->scenario), b = dg_test_start(c->graph, c->scenario);
  dgp_cache_free(b.sim);
  ck_assert_ptr_null(b.sim->cache);
  long steps = steps_of(c);
  double *ra = dg_test_record(a.sim, steps, DT), *rb = dg_test_record(b.sim, steps, DT);
  dg_test_same_records(ra, rb, a.sim, steps); /* with the cache, without */
  long hits, misses, fail;
  dgp_cache_stats(a.sim, &hits, &misses, &fail);
  ck_assert_msg(hits > 0, "%s: no hit", c->graph);
  dgp_cache_stats(b.sim, &hits, &misses, &fail);
  ck_assert_int_eq(hits + misses, 0);
  free(ra);
  free(rb);
  dg_test_finish(&a);
  dg_test_finish(&b);
}
END_TEST

/* A clutch opened and closed again and again: two modes, built once each
 * (the start's and the other), then taken from the cache. */
START_TEST(test_two_modes_built_once) {
  dg_graph *g = dg_test_graphf(
      "{\"drivegraph\":1,\"blocks\":{\"src\":{\"type\":\"torque_source\",\"inertia\":0.5,"
      "\"torque\":5},"
      "\"c\":{\"type\":\"clutch\",\"max_torque\":100,\"inputs\":{\"engagement\":\"eng\"}},"
      "\"ld\":{\"type\":\"load\",\"inertia\":2,\"c1\":0.1}},"
      "\"connections\":[[\"src.out\",\"c.in\"],[\"c.out\",\"ld.in\"]]}");
  dg_sim *sim = dg_test_sim(g);
  int in = dg_sim_input_find(sim, "eng");
  ck_assert_int_ge(in, 0);
  long h0, m0, f;
  dgp_cache_stats(sim, &h0, &m0, &f);
  for (int k = 0; k < 20; k++) {
    dg_sim_set_input(sim, in, k % 2 ? 1.0 : 0.0);
    dg_test_step(sim, 50, DT);
  }
  long hits, misses;
  dgp_cache_stats(sim, &hits, &misses, &f);
  ck_assert_int_le(misses - m0, 2);
  ck_assert_int_ge(hits - h0, 15);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A snapshot restored writes the plan arrays in place: the slot they are
 * in is forgotten, and the run from the snapshot again is bit for bit the
 * first (every hit checked against a full build). */
START_TEST(test_restore_forgets_slot) {
  dg_test_drive a = dg_test_start("graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json");
  dg_test_step(a.sim, 3000, DT); /* before the first shift (3.6 s) */
  dg_error err;
  dg_snapshot *snap = dg_sim_snapshot(a.sim, &err);
  ck_assert_msg(snap != NULL, "%s", err.text);
  enum { N = 1500 };
  double *r1 = dg_test_record(a.sim, N, DT); /* through the shift: other modes */
  ck_assert_int_eq(dg_sim_restore(a.sim, snap, &err), DG_OK);
  dgp_cache_verify(a.sim, true);
  double *r2 = dg_test_record(a.sim, N, DT);
  dg_test_same_records(r1, r2, a.sim, N);
  long hits, misses, fail;
  dgp_cache_stats(a.sim, &hits, &misses, &fail);
  ck_assert_int_eq(fail, 0);
  ck_assert_int_gt(hits, 0);
  free(r1);
  free(r2);
  dg_snapshot_free(snap);
  dg_test_finish(&a);
}
END_TEST

Suite *cache_suite(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("cache");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_hits_equal_builds, 0, NCASES);
  tcase_add_loop_test(tc, test_same_run_without_cache, 0, NCASES);
  tcase_add_test(tc, test_two_modes_built_once);
  tcase_add_test(tc, test_restore_forgets_slot);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(cache_suite()); }
