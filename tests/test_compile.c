/* Compiled stages (lib/solver/compile.c): a mode's RK4 stage written out as
 * C, compiled with the blocks' own sources by the system's C compiler, and
 * loaded.
 *
 * Every comparison is exact: a simulation with its stage compiled gives
 * every signal after every step bit for bit as the same simulation without
 * (dg_test_record), since the written-out stage does the generic stage's
 * operations in its order. The counts show that the compiled stage did run
 * (and only in the mode it was made for). The refusals leave the
 * simulation as it was, and say why. */
#define _DEFAULT_SOURCE /* setenv, mkdtemp */
#include "run/simstate.h"
#include "solver/solver.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DT 0.001

/* The step counts; with DG_SOAK_SHORT set (the sanitizer and valgrind
 * runs) fewer. */
static long steps_of(long full, long short_run) {
  const char *s = getenv("DG_SOAK_SHORT");
  return s && *s ? short_run : full;
}

static void compile_ok(dg_sim *sim, const char *what) {
  dg_error err;
  int rc = dg_sim_compile(sim, &err);
  ck_assert_msg(rc == DG_OK, "%s: dg_sim_compile: %s", what, err.text);
  ck_assert_int_eq(dg_sim_compiled_stage_count(sim), 0);
}

/* Two simulations of g from their start, a with its stage compiled, both
 * at full throttle when asked. */
static void twins(const dg_graph *g, const char *what, bool throttle, dg_sim **a, dg_sim **b) {
  dg_error err;
  *a = dg_test_sim(g);
  *b = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_start(*a, &err), DG_OK);
  ck_assert_int_eq(dg_sim_start(*b, &err), DG_OK);
  compile_ok(*a, what);
  if (throttle) {
    dg_test_set_input(*a, "throttle", 1.0);
    dg_test_set_input(*b, "throttle", 1.0);
  }
}

static void twins_free(dg_graph *g, dg_sim *a, dg_sim *b) {
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(g);
}

/* The energy audit the same to the bit: each block's work and the whole
 * balance. A compiled stage sums each hook's power from -0.0 where the
 * generic one starts from 0.0 (compile.c's write_mode): the powers then
 * differ in the signs of zeros only, which the work's sums take back. */
static void same_audit(const dg_sim *a, const dg_sim *b) {
  for (int i = 0, n = dg_graph_block_count(dg_sim_graph(a)); i < n; i++) {
    double wa = dg_sim_block_work(a, i), wb = dg_sim_block_work(b, i);
    ck_assert_msg(memcmp(&wa, &wb, sizeof wa) == 0, "block %d: work %.17g vs %.17g", i, wa, wb);
  }
  dg_energy ea, eb;
  dg_sim_energy(a, &ea);
  dg_sim_energy(b, &eb);
  ck_assert_msg(memcmp(&ea, &eb, sizeof ea) == 0,
                "energy: balance %.17g vs %.17g, work in %.17g vs %.17g", ea.balance_error,
                eb.balance_error, ea.work_in, eb.work_in);
  printf("%s: work in %.6g J, out %.6g J, balance %.3g J\n", dg_graph_file(dg_sim_graph(a)),
         ea.work_in, ea.work_out, ea.balance_error);
}

/* Graphs that stay in the start mode a compiled stage covers, run from
 * their start with the launch's full throttle: a lossless final drive into
 * an open differential (no states, the stage on arrays of its own), four
 * braked magic-formula wheels on a body (a state each), spring-dampers
 * (states, a stiff chain), 64 lossy gears (the tree room's solve, called),
 * a differential tree with a lossy mesh, an EV with lossy meshes on the
 * dense stage (their losses called). */
static const char *const plain[] = {
    "graphs/bench/axle_baseline.json", "graphs/brake_per_wheel.json",
    "graphs/compliant_driveline.json", "graphs/bench/chain_64.json",
    "graphs/bench/diff_tree_4.json",
};
#define NPLAIN ((int)(sizeof plain / sizeof plain[0]))

START_TEST(test_same_as_generic) {
  dg_graph *g = dg_test_graph_file(plain[_i]);
  dg_sim *a, *b;
  twins(g, plain[_i], true, &a, &b);
  long n = steps_of(3000, 300);
  double *ra = dg_test_record(a, n, DT), *rb = dg_test_record(b, n, DT);
  dg_test_same_records(ra, rb, a, n);
  same_audit(a, b);
  long stages = dg_sim_stage_count(a), compiled = dg_sim_compiled_stage_count(a);
  printf("%s: %ld of %ld stages compiled\n", plain[_i], compiled, stages);
  /* these stay in their start mode: every RK4 stage the compiled one (the
   * generic stage gives the tie forces a block asks for, at a few points) */
  ck_assert_int_ge(stages, 4 * n);
  ck_assert_int_ge(compiled, 4 * n - (stages - 4 * n));
  ck_assert_int_le(compiled, stages);
  long segments = dgp_compiled_segment_count(a);
  printf("%s: %ld of %ld segments compiled whole\n", plain[_i], segments, n);
  if (_i == 0) { /* the axle: no ties, nothing else: each step one plain segment */
    ck_assert_int_eq(compiled, stages);
    ck_assert_int_eq(segments, n);
  } else { /* hooks, events or ties: the step around the stages is generic */
    ck_assert_int_eq(segments, 0);
  }
  ck_assert_int_eq(dg_sim_compiled_stage_count(b), -1);
  ck_assert_int_eq(dg_sim_stage_count(b), stages);
  free(ra);
  free(rb);
  twins_free(g, a, b);
}
END_TEST

/* With a scenario: schedules read between the stages (timed inputs): a
 * front wheel braked from 20 m/s, and the spring-dampers' tip-in, whose
 * backlash leaves the mode and comes back to it (the mode cache gives the
 * same plan again, and the compiled stage serves it again). */
typedef struct drive_case {
  const char *graph, *scenario;
  long steps, short_steps;
  int warm;         /* steps before the compile: the mode it is made in */
  long min_runs;    /* segments at least run compiled between their hooks */
  long min_crossed; /* ... of which at least this many had an event crossing */
  int min_pct;      /* stages compiled, at least this percentage */
} drive_case;

static const drive_case drives[] = {
    {"graphs/brake_per_wheel.json", "graphs/scenarios/brake_front_left.json", 4000, 1500, 0, 1500,
     0, 99},
    {"graphs/compliant_driveline.json", "graphs/scenarios/compliant_tipin.json", 3000, 800, 0, 800,
     0, 99},
    /* the tree room with lossy meshes and inputs bound to signals (the
     * automatic's), compiled in first gear; the other gears generic */
    /* a compiled run's event crossing (a mesh's power reversing at a
     * shift), located by the generic step from where the run left it */
    {"graphs/sedan_rwd_automatic.json", "graphs/scenarios/launch.json", 3000, 1200, 600, 100, 1,
     30},
    {"graphs/ev_single_speed.json", "graphs/scenarios/ev_launch_brake.json", 3000, 1200, 600, 1200,
     0, 99},
};
#define NDRIVES ((int)(sizeof drives / sizeof drives[0]))

START_TEST(test_scenarios_same_as_generic) {
  const drive_case *c = &drives[_i];
  dg_test_drive a = dg_test_start(c->graph, c->scenario), b = dg_test_start(c->graph, c->scenario);
  dg_test_step(a.sim, c->warm, DT);
  dg_test_step(b.sim, c->warm, DT);
  long before = dg_sim_stage_count(a.sim);
  compile_ok(a.sim, c->graph);
  long n = steps_of(c->steps, c->short_steps);
  double *ra = dg_test_record(a.sim, n, DT), *rb = dg_test_record(b.sim, n, DT);
  dg_test_same_records(ra, rb, a.sim, n);
  same_audit(a.sim, b.sim);
  long stages = dg_sim_stage_count(a.sim) - before, compiled = dg_sim_compiled_stage_count(a.sim);
  long crossed, runs = dgp_compiled_run_count(a.sim, &crossed);
  printf("%s with %s: %ld of %ld stages compiled, %ld mode changes, %ld compiled runs (%ld "
         "crossed), %ld events\n",
         c->graph, c->scenario, compiled, stages, dg_sim_topology_changes(a.sim), runs, crossed,
         dg_sim_event_count(a.sim));
  ck_assert_int_eq(dg_sim_event_count(a.sim), dg_sim_event_count(b.sim));
  ck_assert_int_ge(runs, c->min_runs);
  ck_assert_int_ge(crossed, c->min_crossed);
  ck_assert_int_gt(compiled, stages / 10);
  ck_assert_int_ge(100 * compiled, c->min_pct * stages);
  ck_assert_int_le(compiled, stages);
  ck_assert_int_eq(stages, dg_sim_stage_count(b.sim) - before);
  free(ra);
  free(rb);
  dg_test_finish(&a);
  dg_test_finish(&b);
}
END_TEST

/* Only in the mode it was made for: clutch_ramp's clutch slips from the
 * start (compiled there) and locks as the pedal comes up; the locked mode
 * has a plan of its own, where the generic stage runs. */
START_TEST(test_only_its_mode) {
  dg_test_drive a = dg_test_start("graphs/clutch_ramp.json", "graphs/scenarios/clutch_ramp.json");
  dg_test_drive b = dg_test_start("graphs/clutch_ramp.json", "graphs/scenarios/clutch_ramp.json");
  compile_ok(a.sim, "clutch_ramp");
  long n = steps_of(4000, 2500);
  double *ra = dg_test_record(a.sim, n, DT / 2), *rb = dg_test_record(b.sim, n, DT / 2);
  dg_test_same_records(ra, rb, a.sim, n);
  long changes = dg_sim_topology_changes(a.sim);
  long compiled = dg_sim_compiled_stage_count(a.sim), stages = dg_sim_stage_count(a.sim);
  printf("clutch_ramp: %ld of %ld stages compiled, %ld mode changes\n", compiled, stages, changes);
  ck_assert_int_gt(changes, 0);
  ck_assert_int_gt(compiled, 0);
  ck_assert_int_lt(compiled, stages);
  free(ra);
  free(rb);
  dg_test_finish(&a);
  dg_test_finish(&b);
}
END_TEST

/* A plain mode's whole segment (the axle's) when it blows up: a torque
 * source of 1e10 N*m on two light shafts passes the speed limit in about
 * 0.1 s. The compiled segment commits nothing past the limit, and the
 * step fails as the generic one does: at the same step, with the same
 * code and message (the block and time), the state left the same. */
static const char *const runaway =
    "{\"drivegraph\":1,\"blocks\":{"
    "\"motor\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":1e10},"
    "\"shaft\":{\"type\":\"load\",\"inertia\":0.5,\"c1\":1}},"
    "\"connections\":[[\"motor.out\",\"shaft.in\"]]}";

/* Both end the same way: at the same step, with the same error (code and
 * message: the block and time), the state left the same. */
static void same_blowup(dg_sim *a, dg_sim *b, long *steps) {
  int ra = DG_OK, rb = DG_OK;
  long k = 0;
  for (; k < 1000 && ra == DG_OK && rb == DG_OK; k++) {
    ra = dg_sim_step(a, DT);
    rb = dg_sim_step(b, DT);
  }
  ck_assert_int_eq(ra, DG_ERR_NUMERIC);
  ck_assert_int_eq(rb, DG_ERR_NUMERIC);
  ck_assert_int_gt(k, 50); /* it ran a while first, compiled */
  ck_assert_str_eq(dg_sim_last_error(a)->text, dg_sim_last_error(b)->text);
  printf("runaway, step %ld: %s\n", k, dg_sim_last_error(a)->text);
  ck_assert_ptr_nonnull(strstr(dg_sim_last_error(a)->text, "motor"));
  double ta = dg_sim_time(a), tb = dg_sim_time(b);
  ck_assert_mem_eq(&ta, &tb, sizeof ta);
  for (int s = 0, n = dg_sim_signal_count(a); s < n; s++) {
    double va = dg_sim_signal(a, s), vb = dg_sim_signal(b, s);
    ck_assert_msg(memcmp(&va, &vb, sizeof va) == 0, "%s: %.17g vs %.17g", dg_sim_signal_name(a, s),
                  va, vb);
  }
  *steps = k;
}

/* The same runaway on a shaft with Coulomb friction (c0): the load's
 * pre_step and post_step hooks and its event function (the slip's sign)
 * around the stages, so each segment is a hooked mode's compiled run
 * (dgc_run), which also commits nothing past the limit. */
static const char *const runaway_hooked =
    "{\"drivegraph\":1,\"blocks\":{"
    "\"motor\":{\"type\":\"torque_source\",\"inertia\":0.5,\"torque\":1e10},"
    "\"shaft\":{\"type\":\"load\",\"inertia\":0.5,\"c0\":1,\"c1\":1}},"
    "\"connections\":[[\"motor.out\",\"shaft.in\"]]}";

START_TEST(test_hooked_blowup) {
  dg_graph *g = dg_test_graph(runaway_hooked);
  dg_error err;
  dg_sim *a = dg_test_sim(g), *b = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_start(a, &err), DG_OK);
  ck_assert_int_eq(dg_sim_start(b, &err), DG_OK);
  /* it starts stuck (no DOF): compiled once the drive has broken it loose */
  ck_assert_int_eq(dg_sim_step(a, DT), DG_OK);
  ck_assert_int_eq(dg_sim_step(b, DT), DG_OK);
  compile_ok(a, "runaway_hooked");
  long k = 0;
  same_blowup(a, b, &k);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 0);
  ck_assert_int_eq(dgp_compiled_run_count(a, NULL), k); /* one compiled run per step */
  twins_free(g, a, b);
}
END_TEST

START_TEST(test_plain_blowup) {
  dg_graph *g = dg_test_graph(runaway);
  dg_sim *a, *b;
  twins(g, "runaway", false, &a, &b);
  long k = 0;
  same_blowup(a, b, &k);
  ck_assert_int_eq(dgp_compiled_segment_count(a), k);
  ck_assert_int_eq(dgp_compiled_run_count(a, NULL), 0);
  twins_free(g, a, b);
}
END_TEST

/* A schedule set after the compile (a timed input, which ends segments at
 * its breakpoints): the whole segment no longer serves, the compiled
 * stages still do, bit for bit as the generic step with the same
 * schedule. */
START_TEST(test_plain_then_schedule) {
  dg_graph *g = dg_test_graph_file("graphs/bench/axle_baseline.json");
  dg_sim *a, *b;
  twins(g, "axle", true, &a, &b);
  dg_error err;
  double *r0a = dg_test_record(a, 200, DT), *r0b = dg_test_record(b, 200, DT);
  dg_test_same_records(r0a, r0b, a, 200);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 200);
  const double t[] = {0.2, 0.3505, 0.5}, v[] = {1.0, 0.2, 0.7};
  int in = dg_sim_input_find(a, "throttle");
  ck_assert_int_ge(in, 0);
  ck_assert_int_eq(dg_sim_set_input_schedule(a, in, 3, t, v, false, &err), DG_OK);
  ck_assert_int_eq(dg_sim_set_input_schedule(b, in, 3, t, v, false, &err), DG_OK);
  long before = dg_sim_compiled_stage_count(a);
  double *ra = dg_test_record(a, 500, DT), *rb = dg_test_record(b, 500, DT);
  dg_test_same_records(ra, rb, a, 500);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 200);
  ck_assert_int_ge(dg_sim_compiled_stage_count(a) - before, 4 * 500);
  free(r0a);
  free(r0b);
  free(ra);
  free(rb);
  twins_free(g, a, b);
}
END_TEST

/* A parameter tuned in place after the compile (the unit holds the
 * parameters as constants): the unit stands aside, the generic step runs
 * the new value bit for bit as a simulation tuned the same way, and a new
 * compile serves again with it. Each simulation has a graph of its own
 * (a tuning writes the graph's parameters). */
START_TEST(test_tuned_after_compile) {
  char *json = dg_test_read_source("graphs/bench/axle_baseline.json");
  dg_error err;
  dg_graph *ga = dg_graph_load_string(NULL, json, "axle.json", &err);
  dg_graph *gb = dg_graph_load_string(NULL, json, "axle.json", &err);
  ck_assert(ga && gb);
  dg_sim *a = dg_test_sim(ga), *b = dg_test_sim(gb);
  ck_assert_int_eq(dg_sim_start(a, &err), DG_OK);
  ck_assert_int_eq(dg_sim_start(b, &err), DG_OK);
  compile_ok(a, "axle");
  dg_test_set_input(a, "throttle", 1.0);
  dg_test_set_input(b, "throttle", 1.0);
  double *r[6];
  r[0] = dg_test_record(a, 300, DT);
  r[1] = dg_test_record(b, 300, DT);
  dg_test_same_records(r[0], r[1], a, 300);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 300);
  int w = dg_sim_signal_find(a, "left.omega");
  ck_assert_int_ge(w, 0);
  double w_before = dg_sim_signal(a, w);
  /* four times the left wheel's drag: it slows (the constant 20 would not) */
  const dg_override ov[] = {{"left.c1", "80"}};
  ck_assert_msg(dgp_sim_tune(a, json, "axle.json", 1, ov, &err) == DG_OK, "%s", err.text);
  ck_assert_msg(dgp_sim_tune(b, json, "axle.json", 1, ov, &err) == DG_OK, "%s", err.text);
  long stages = dg_sim_compiled_stage_count(a);
  r[2] = dg_test_record(a, 300, DT);
  r[3] = dg_test_record(b, 300, DT);
  dg_test_same_records(r[2], r[3], a, 300);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 300); /* stood aside */
  ck_assert_int_eq(dg_sim_compiled_stage_count(a), stages);
  ck_assert_msg(dg_sim_signal(a, w) < w_before, "left wheel %g after %g", dg_sim_signal(a, w),
                w_before);
  compile_ok(a, "axle, tuned"); /* the new value as a constant */
  r[4] = dg_test_record(a, 300, DT);
  r[5] = dg_test_record(b, 300, DT);
  dg_test_same_records(r[4], r[5], a, 300);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 300);
  for (int k = 0; k < 6; k++)
    free(r[k]);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_graph_free(ga);
  dg_graph_free(gb);
  free(json);
}
END_TEST

/* The modes a simulation visited, compiled at once (the current one and
 * those its mode cache keeps), for the simulations made of the graph
 * afterwards: a launch through the gears of an automatic sedan, every
 * stage compiled, bit for bit as a simulation of another load of the same
 * file. A simulation made before the compile keeps the generic stages. */
START_TEST(test_visited_modes) {
  /* the baseline, then cars whose lossy meshes and ties make the tree
   * room's first stages and tie forces compiled: the automatic, the 4x4
   * pickup (its front driveline at rest: meshes at rest keep their
   * direction) and the AWD car (11 modes in its launch) */
  static const char *const graphs[] = {"graphs/bench/sedan_baseline.json",
                                       "graphs/sedan_rwd_automatic.json", "graphs/pickup_4x4.json",
                                       "graphs/awd_lsd.json"};
  const char *file = graphs[_i];
  dg_graph *ga = dg_test_graph_file(file), *gb = dg_test_graph_file(file);
  dg_error err;
  dg_sim *before = dg_test_sim(ga), *w = dg_test_sim(ga);
  long n = steps_of(10000, 3000);
  dg_test_set_input(w, "throttle", 1.0);
  for (long k = 0; k < 10000; k++) /* the whole launch, also in the short runs */
    ck_assert_int_eq(dg_sim_step(w, DT), DG_OK);
  ck_assert_int_ge(dg_sim_topology_changes(w), 3); /* through the gears */
  ck_assert_msg(dg_sim_compile(w, &err) == DG_OK, "%s", err.text);
  int modes = dgp_compiled_mode_count(w);
  printf("%s: %d modes compiled after %ld topology changes\n", file, modes,
         dg_sim_topology_changes(w));
  ck_assert_int_ge(modes, 4);
  dg_sim *a = dg_test_sim(ga), *b = dg_test_sim(gb);
  ck_assert_int_eq(dgp_compiled_mode_count(a), modes); /* it took the graph's unit */
  ck_assert_int_eq(dg_sim_compiled_stage_count(before), -1);
  ck_assert_int_eq(dg_sim_compiled_stage_count(b), -1);
  dg_test_set_input(a, "throttle", 1.0);
  dg_test_set_input(b, "throttle", 1.0);
  double *ra = dg_test_record(a, n, DT), *rb = dg_test_record(b, n, DT);
  dg_test_same_records(ra, rb, a, n);
  ck_assert_int_eq(dg_sim_topology_changes(a), dg_sim_topology_changes(b));
  long stages = dg_sim_stage_count(a), compiled = dg_sim_compiled_stage_count(a);
  long crossed, runs = dgp_compiled_run_count(a, &crossed), events = dg_sim_event_count(a);
  long lam = dgp_compiled_lam_count(a);
  printf("%s: %ld of %ld stages compiled (%ld with tie forces), %ld compiled runs (%ld crossed), "
         "%ld events located\n",
         file, compiled, stages, lam, runs, crossed, events);
  ck_assert_int_eq(dg_sim_stage_count(b), stages);
  ck_assert_int_eq(dg_sim_event_count(b), events);
  ck_assert_int_eq(dg_sim_segment_count(b), dg_sim_segment_count(a));
  if (_i == 0) /* no ties: every segment between its hooks compiled but at the shifts */
    ck_assert_int_ge(runs, n - n / 20);
  /* every mode of the launch was visited by w, and its mode cache kept
   * them all (the automatic's 9). The baseline has no ties: every stage
   * compiled but a few at the shifts. The automatic's converter and
   * lock-up clutch tie shafts: the segments' first stages and the events'
   * evaluations give tie forces (dgc_stage_lam), compiled too. (With 8
   * slots its first modes had left the cache before the compile; once
   * compiled, its launch from rest found compiled runs leaving the lossy
   * meshes' directions held into the next segment: the first step after
   * the first mode change differed.) */
  ck_assert_int_ge(compiled, stages - stages / 20);
  if (_i == 1)
    ck_assert_int_gt(lam, n / 10);
  else if (_i == 0)
    ck_assert_int_eq(lam, 0);
  free(ra);
  free(rb);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_sim_free(w); /* the graph keeps the unit */
  dg_sim *c = dg_test_sim(ga);
  ck_assert_int_eq(dgp_compiled_mode_count(c), modes);
  dg_sim_free(c);
  dg_sim_free(before);
  dg_graph_free(ga);
  dg_graph_free(gb);
}
END_TEST

/* A mode with ties between its hooks (dgc_run with the tie forces of its
 * first stage and the hold pass): Modelica's coupled clutches, the first
 * clutch's normal force a sine, the others open. Its hold is let go by the
 * hold pass as the force falls (a run then returns after its first stage,
 * and the generic step makes the segment in the new mode from there). The
 * drive is compiled after it has visited its modes; the same signals, bit
 * for bit, as a simulation of a graph without the unit. */
START_TEST(test_ties_in_runs) {
  const char *graph = "graphs/coupled_clutches.json";
  dg_graph *ga = dg_test_graph_file(graph), *gb = dg_test_graph_file(graph);
  dg_sim *w = dg_test_sim(ga);
  long n = steps_of(10000, 3000);
  dg_test_step(w, n, DT);
  compile_ok(w, graph);
  dg_sim *a = dg_test_sim(ga), *b = dg_test_sim(gb); /* a takes the graph's unit */
  ck_assert_int_ge(dgp_compiled_mode_count(a), 2);
  double *ra = dg_test_record(a, n, DT), *rb = dg_test_record(b, n, DT);
  dg_test_same_records(ra, rb, a, n);
  long crossed, runs = dgp_compiled_run_count(a, &crossed);
  long restarts = dgp_compiled_new_mode_count(a);
  printf("%s: %ld of %ld stages compiled (%ld with tie forces), %ld compiled runs, %ld left "
         "after stage 1 for a new mode, %ld mode changes\n",
         graph, dg_sim_compiled_stage_count(a), dg_sim_stage_count(a), dgp_compiled_lam_count(a),
         runs, restarts, dg_sim_topology_changes(a));
  ck_assert_int_eq(dg_sim_stage_count(a), dg_sim_stage_count(b));
  ck_assert_int_eq(dg_sim_topology_changes(a), dg_sim_topology_changes(b));
  ck_assert_int_eq(dg_sim_event_count(a), dg_sim_event_count(b));
  ck_assert_int_gt(runs, n / 2);
  ck_assert_int_ge(restarts, 1);
  free(ra);
  free(rb);
  dg_sim_free(a);
  dg_sim_free(b);
  dg_sim_free(w);
  dg_graph_free(ga);
  dg_graph_free(gb);
}
END_TEST

/* The modes a compiled stage does not cover yet: refused with the reason,
 * the simulation unchanged. */
typedef struct refusal {
  const char *graph, *why;
} refusal;

static const refusal refusals[] = {
    {"graphs/imported/hmmwv_cvt.json", "its mode has variable ratios (not compiled yet)"},
    {"graphs/gear_train.json", "its mode has no DOF"}, /* everything at rest, held */
};
#define NREFUSALS ((int)(sizeof refusals / sizeof refusals[0]))

START_TEST(test_refusals) {
  const refusal *r = &refusals[_i];
  dg_graph *g = dg_test_graph_file(r->graph);
  dg_sim *sim = dg_test_sim(g);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  ck_assert_int_eq(dg_sim_compile(sim, &err), DG_ERR_USAGE);
  char want[300];
  snprintf(want, sizeof want, "its current mode cannot be compiled: %s", r->why);
  ck_assert_str_eq(err.text, want);
  ck_assert_int_eq(dg_sim_compiled_stage_count(sim), -1);
  dg_test_step(sim, 10, DT);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* A compiler or sources that are not there, or a compiler that fails: the
 * error names them, and the simulation steps on generically. */
typedef struct env_case {
  const char *var, *value, *text;
} env_case;

static const env_case env_cases[] = {
    {"DG_CC", "/nonexistent/cc", "cannot run the C compiler '/nonexistent/cc' (set DG_CC)"},
    {"DG_CC", "false", "the C compiler 'false' failed: (no message)"},
    /* DG_CC's words: the program is the first */
    {"DG_CC", " /nonexistent/cc  -O2", "cannot run the C compiler '/nonexistent/cc' (set DG_CC)"},
    {"DG_SOURCE_DIR", "/nonexistent",
     "the blocks' sources are not found: DG_SOURCE_DIR ('/nonexistent') has no blocks/load.c"},
};
#define NENV ((int)(sizeof env_cases / sizeof env_cases[0]))

START_TEST(test_missing_tools) {
  const env_case *c = &env_cases[_i];
  dg_graph *g = dg_test_graph_file("graphs/bench/axle_baseline.json");
  dg_sim *sim = dg_test_sim(g);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  ck_assert_int_eq(setenv(c->var, c->value, 1), 0);
  int rc = dg_sim_compile(sim, &err);
  unsetenv(c->var);
  ck_assert_int_eq(rc, DG_ERR_IO);
  ck_assert_str_eq(err.text, c->text);
  ck_assert_int_eq(dg_sim_compiled_stage_count(sim), -1);
  dg_test_step(sim, 10, DT);
  ck_assert_int_eq(dg_sim_stage_count(sim), 40);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* DG_CC with words of its own (a wrapper and the compiler, as "ccache
 * gcc" would be): compiled with them, the same as without. */
START_TEST(test_cc_words) {
  ck_assert_int_eq(setenv("DG_CC", "env  cc\t-O3", 1), 0);
  dg_graph *g = dg_test_graph_file("graphs/bench/axle_baseline.json");
  dg_sim *a, *b;
  twins(g, "env cc -O3", true, &a, &b);
  unsetenv("DG_CC");
  double *ra = dg_test_record(a, 100, DT), *rb = dg_test_record(b, 100, DT);
  dg_test_same_records(ra, rb, a, 100);
  ck_assert_int_eq(dgp_compiled_segment_count(a), 100);
  free(ra);
  free(rb);
  twins_free(g, a, b);
}
END_TEST

/* An environment variable's value, kept to be put back by env_put_back. */
static char *env_keep(const char *name) {
  const char *v = getenv(name);
  return v ? strdup(v) : NULL;
}

static void env_put_back(const char *name, char *kept) {
  if (kept) {
    setenv(name, kept, 1);
    free(kept);
  } else {
    unsetenv(name);
  }
}

/* The scratch directory is gone afterwards; a second compile replaces the
 * first; no simulation, a failed one: usage errors. */
START_TEST(test_scratch_and_again) {
  char dir[] = "/tmp/dg-test-compile-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char *saved = env_keep("TMPDIR");
  setenv("TMPDIR", dir, 1);
  dg_graph *g = dg_test_graph_file("graphs/bench/axle_baseline.json");
  dg_sim *sim = dg_test_sim(g);
  dg_error err;
  ck_assert_int_eq(dg_sim_start(sim, &err), DG_OK);
  compile_ok(sim, "first");
  dg_test_step(sim, 5, DT);
  ck_assert_int_eq(dg_sim_compiled_stage_count(sim), 20);
  compile_ok(sim, "second"); /* replaces the first: its count starts again */
  dg_test_step(sim, 5, DT);
  ck_assert_int_eq(dg_sim_compiled_stage_count(sim), 20);
  env_put_back("TMPDIR", saved);
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int entries = 0;
  for (struct dirent *e; (e = readdir(d));)
    entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  rmdir(dir);
  ck_assert_int_eq(entries, 0);
  ck_assert_int_eq(dg_sim_compile(NULL, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "no simulation given");
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The number of units (*.so) in directory dir; with `path`, the path of
 * the last one read. */
static int units_in(const char *dir, char *path, size_t size) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len > 3 && strcmp(e->d_name + len - 3, ".so") == 0) {
      n++;
      if (path)
        snprintf(path, size, "%s/%s", dir, e->d_name);
    }
  }
  closedir(d);
  return n;
}

/* A new load of file, its simulation compiled (with the cache as the
 * environment has it); whether the unit came from the cache, and the run
 * the same as the generic twin's, bit for bit. */
static int compile_fresh(const char *file) {
  dg_graph *g = dg_test_graph_file(file);
  dg_sim *a, *b;
  twins(g, file, true, &a, &b);
  int cached = dg_sim_compiled_from_cache(a);
  double *ra = dg_test_record(a, 100, DT), *rb = dg_test_record(b, 100, DT);
  dg_test_same_records(ra, rb, a, 100);
  ck_assert_int_eq(dg_sim_compiled_stage_count(a), 400); /* every stage compiled */
  free(ra);
  free(rb);
  twins_free(g, a, b);
  return cached;
}

/* The cache on disk (unitcache.c): a unit compiled once is loaded by the
 * next load of the same graph, and runs the same; another graph has a key
 * of its own; a cached file that does not load, or that others may
 * write, is compiled again and replaced; "off" compiles. */
START_TEST(test_cache_on_disk) {
  char dir[] = "/tmp/dg-test-cache-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char sub[64], path[512];
  snprintf(sub, sizeof sub, "%s/units", dir); /* made by the library */
  char *saved = env_keep("DG_COMPILE_CACHE");
  setenv("DG_COMPILE_CACHE", sub, 1);
  const char *axle = "graphs/bench/axle_baseline.json";
  ck_assert_int_eq(compile_fresh(axle), 0);
  struct stat st;
  ck_assert_int_eq(stat(sub, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0700);
  ck_assert_int_eq(units_in(sub, NULL, 0), 1);
  ck_assert_int_eq(compile_fresh(axle), 1);                          /* loaded, the same run */
  ck_assert_int_eq(compile_fresh("graphs/brake_per_wheel.json"), 0); /* a key of its own */
  ck_assert_int_eq(units_in(sub, NULL, 0), 2);
  ck_assert_int_eq(compile_fresh("graphs/brake_per_wheel.json"), 1);

  /* a unit that does not load: compiled again, and the file replaced */
  char sub2[64];
  snprintf(sub2, sizeof sub2, "%s/again", dir);
  setenv("DG_COMPILE_CACHE", sub2, 1);
  ck_assert_int_eq(compile_fresh(axle), 0);
  ck_assert_int_eq(units_in(sub2, path, sizeof path), 1);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs("not a shared object\n", f);
  fclose(f);
  ck_assert_int_eq(compile_fresh(axle), 0);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_gt(st.st_size, 1000);
  ck_assert_int_eq(compile_fresh(axle), 1);
  /* writable by others: not loaded, compiled and replaced by a private
   * copy */
  ck_assert_int_eq(chmod(path, 0666), 0);
  ck_assert_int_eq(compile_fresh(axle), 0);
  ck_assert_int_eq(stat(path, &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0600);
  ck_assert_int_eq(compile_fresh(axle), 1);
  /* off: compiled, though the cache has it */
  setenv("DG_COMPILE_CACHE", "off", 1);
  ck_assert_int_eq(compile_fresh(axle), 0);
  ck_assert_int_eq(units_in(sub2, NULL, 0), 1);

  env_put_back("DG_COMPILE_CACHE", saved);
  const char *dirs[] = {sub, sub2};
  for (int i = 0; i < 2; i++) {
    DIR *d = opendir(dirs[i]);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));) {
      snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
      if (e->d_name[0] != '.')
        unlink(path);
    }
    closedir(d);
    rmdir(dirs[i]);
  }
  ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *compile_suite(void) {
  Suite *s = suite_create("compile");
  TCase *tc = tcase_create("compile");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_same_as_generic, 0, NPLAIN);
  tcase_add_loop_test(tc, test_scenarios_same_as_generic, 0, NDRIVES);
  tcase_add_test(tc, test_only_its_mode);
  tcase_add_test(tc, test_plain_blowup);
  tcase_add_test(tc, test_hooked_blowup);
  tcase_add_test(tc, test_plain_then_schedule);
  tcase_add_test(tc, test_tuned_after_compile);
  tcase_add_loop_test(tc, test_visited_modes, 0, 4);
  tcase_add_test(tc, test_ties_in_runs);
  tcase_add_loop_test(tc, test_refusals, 0, NREFUSALS);
  tcase_add_loop_test(tc, test_missing_tools, 0, NENV);
  tcase_add_test(tc, test_scratch_and_again);
  tcase_add_test(tc, test_cc_words);
  tcase_add_test(tc, test_cache_on_disk);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(compile_suite()); }
