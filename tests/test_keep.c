/* What a step keeps (dg_sim_set_keep, lib/sim.c; step.c's commit and
 * compile.c's write_commit): leaving out the energy audit's work, the
 * shafts' angles or both changes nothing else a step computes, to the bit,
 * in the generic step and in compiled ones (a plain mode's lean segment, a
 * hooked mode's run); what is left out reads as NaN (the audit, each
 * block's work, the ledger's sums from the work, the angles), by name as an error;
 * and what is kept is set before the first step only. */
#include "solver/solver.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

#define DT 0.001

/* Graphs: the axle (a plain mode: its compiled segment has a lean twin),
 * the sedan (hooked runs, the tree's solve, shifts). */
static const char *const graphs[] = {"graphs/bench/axle_baseline.json",
                                     "graphs/bench/sedan_baseline.json"};
#define NGRAPHS ((int)(sizeof graphs / sizeof graphs[0]))

/* A port's angle signal of the graph (the first port signal). */
static int angle_signal(const dg_sim *sim) {
  for (int i = dg_sim_signal_count(sim);; i++) {
    const char *name = dg_sim_signal_name(sim, i);
    ck_assert_msg(name != NULL, "no angle signal");
    size_t n = strlen(name);
    if (n > 6 && strcmp(name + n - 6, ".angle") == 0)
      return i;
  }
}

/* n launch steps of sim, its signals after each into rec. */
static void launch(dg_sim *sim, long n, double *rec) {
  int ns = dg_sim_signal_count(sim);
  for (long k = 0; k < n; k++) {
    dg_batch_launch_inputs(sim, (double)k * DT);
    ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    for (int i = 0; i < ns; i++)
      rec[k * ns + i] = dg_sim_signal(sim, i);
  }
}

/* Each keep against keeping all, generic (_i even) or compiled (_i odd:
 * the modes of a warm-up launch compiled, then new simulations). */
START_TEST(test_same_but_what_is_left_out) {
  const char *file = graphs[_i / 2];
  bool compiled = _i % 2;
  dg_graph *g = dg_test_graph_file(file);
  long n = 3000;
  if (compiled) {
    dg_sim *w = dg_test_sim(g);
    double *rw = malloc(sizeof(double) * (size_t)(n * dg_sim_signal_count(w)));
    launch(w, n, rw);
    dg_error err;
    ck_assert_msg(dg_sim_compile(w, &err) == DG_OK, "%s", err.text);
    free(rw);
    dg_sim_free(w);
  }
  dg_sim *all = dg_test_sim(g);
  int ns = dg_sim_signal_count(all), ia = angle_signal(all);
  double *ra = malloc(sizeof(double) * (size_t)(n * ns)),
         *rk = malloc(sizeof *rk * (size_t)(n * ns));
  launch(all, n, ra);
  if (compiled)
    ck_assert_int_eq(dg_sim_compiled_stage_count(all), dg_sim_stage_count(all));
  dg_energy ea;
  dg_sim_energy(all, &ea);
  ck_assert(ea.work_in > 0.0 && isfinite(ea.balance_error));
  dg_energy_ledger la;
  dg_sim_energy_ledger(all, &la);
  ck_assert(la.energy_in > 0.0 && isfinite(la.balance_error));
  double angle = dg_sim_signal(all, ia);
  ck_assert(isfinite(angle) && angle != 0.0);
  for (unsigned keep = 0; keep < DG_KEEP_ALL; keep++) {
    dg_sim *s = dg_test_sim(g);
    dg_error err;
    ck_assert_int_eq(dg_sim_set_keep(s, keep, &err), DG_OK);
    ck_assert_uint_eq(dg_sim_keep(s), keep);
    launch(s, n, rk);
    if (compiled) { /* the compiled stages serve it too */
      ck_assert_int_eq(dg_sim_compiled_stage_count(s), dg_sim_stage_count(s));
      /* a plain mode's (the axle's) segment keeping neither is its own */
      const dgp_serve *sa = dgp_serve_of(all), *sk = dgp_serve_of(s);
      ck_assert_int_eq(sa->segment != NULL, _i / 2 == 0);
      ck_assert_int_eq(sk->segment != NULL, _i / 2 == 0);
      if (sa->segment)
        ck_assert_int_eq(sk->segment != sa->segment, keep == 0);
    }
    /* every class signal, to the bit; the angles as kept */
    for (long k = 0; k < n; k++)
      for (int i = 0; i < dg_sim_signal_count(s); i++)
        ck_assert_msg(memcmp(&ra[k * ns + i], &rk[k * ns + i], sizeof(double)) == 0,
                      "%s keep %u step %ld: %s %.17g vs %.17g", file, keep, k,
                      dg_sim_signal_name(s, i), ra[k * ns + i], rk[k * ns + i]);
    double a = dg_sim_signal(s, ia), v = 0.0;
    int rc = dg_sim_signal_by_name(s, dg_sim_signal_name(s, ia), &v, &err);
    if (keep & DG_KEEP_ANGLES) {
      ck_assert(memcmp(&a, &angle, sizeof a) == 0);
      ck_assert_int_eq(rc, DG_OK);
    } else {
      ck_assert(isnan(a) && isnan(v));
      ck_assert_int_eq(rc, DG_ERR_USAGE);
      ck_assert_msg(strstr(err.text, "keeps no angles") && strstr(err.text, ".angle"), "%s",
                    err.text);
    }
    dg_energy e;
    dg_sim_energy(s, &e);
    ck_assert(e.kinetic == ea.kinetic && e.kinetic_start == ea.kinetic_start);
    dg_energy_ledger l;
    dg_sim_energy_ledger(s, &l);
    ck_assert(l.kinetic_change == la.kinetic_change && l.fuel == la.fuel);
    if (keep & DG_KEEP_WORK) {
      ck_assert(memcmp(&e, &ea, sizeof e) == 0);
      ck_assert(memcmp(&l, &la, sizeof l) == 0);
      for (int b = 0; b < dg_graph_block_count(g); b++) {
        double wa = dg_sim_block_work(all, b), wk = dg_sim_block_work(s, b);
        ck_assert(memcmp(&wa, &wk, sizeof wa) == 0);
      }
    } else { /* no plausible zeros */
      ck_assert(isnan(e.work_in) && isnan(e.work_out) && isnan(e.efficiency_loss) &&
                isnan(e.impact_loss) && isnan(e.balance_error));
      /* the ledger's sums from the shafts' work too (energy_in was a
       * plausible number without the work of the blocks without a ledger) */
      ck_assert(isnan(l.work_in_other) && isnan(l.work_out_other) && isnan(l.energy_in) &&
                isnan(l.balance_error));
      for (int b = 0; b < dg_graph_block_count(g); b++)
        ck_assert(isnan(dg_sim_block_work(s, b)));
    }
    dg_sim_free(s);
  }
  free(ra);
  free(rk);
  dg_sim_free(all);
  dg_graph_free(g);
}
END_TEST

/* Set before the first step only, with known bits only; the error says
 * why, and what is kept stays as it was. */
START_TEST(test_set_before_the_first_step) {
  dg_graph *g = dg_test_graph_file(graphs[0]);
  dg_sim *s = dg_test_sim(g);
  dg_error err;
  ck_assert_int_eq(dg_sim_keep(s), DG_KEEP_ALL);
  ck_assert_int_eq(dg_sim_set_keep(s, 4u, &err), DG_ERR_USAGE);
  ck_assert_msg(strstr(err.text, "0x4") && strstr(err.text, "DG_KEEP_ANGLES"), "%s", err.text);
  ck_assert_int_eq(dg_sim_set_keep(s, DG_KEEP_WORK, &err), DG_OK);
  ck_assert_int_eq(dg_sim_set_keep(s, DG_KEEP_ALL, NULL), DG_OK); /* again, before a step */
  ck_assert_int_eq(dg_sim_step(s, DT), DG_OK);
  ck_assert_int_eq(dg_sim_set_keep(s, 0u, &err), DG_ERR_USAGE);
  ck_assert_msg(strstr(err.text, "before the first step") && strstr(err.text, "1 steps"), "%s",
                err.text);
  ck_assert_int_eq(dg_sim_keep(s), DG_KEEP_ALL);
  dg_sim_free(s);
  dg_graph_free(g);
}
END_TEST

/* What each signal needs kept (dg_sim_signal_keep): a port's angle the
 * angles, its torque and the class signals nothing; a scenario's stop
 * signal the same (dg_scenario_keep), refused by dg_scenario_check and
 * dg_driver_new when the simulation does not keep it (it could never
 * stop: a NaN compares false). */
START_TEST(test_what_signals_need) {
  dg_graph *g = dg_test_graph_file(graphs[0]);
  dg_sim *s = dg_test_sim(g);
  int angle = angle_signal(s), ns = dg_sim_signal_count(s);
  for (int i = 0; i < ns; i++)
    ck_assert_uint_eq(dg_sim_signal_keep(s, i), 0u);
  ck_assert_uint_eq(dg_sim_signal_keep(s, angle), DG_KEEP_ANGLES);
  int torque = dg_sim_signal_find(s, "left.in.torque");
  ck_assert_int_ge(torque, ns);
  ck_assert_uint_eq(dg_sim_signal_keep(s, torque), 0u);
  ck_assert_uint_eq(dg_sim_signal_keep(s, -1), 0u);
  ck_assert_uint_eq(dg_sim_signal_keep(s, 1 << 20), 0u);

  char text[256];
  snprintf(text, sizeof text,
           "{\"duration\": 1, \"inputs\": {}, \"stop\": {\"signal\": \"%s\", \"above\": 3}}",
           dg_sim_signal_name(s, angle));
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(text, "stop.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  ck_assert_uint_eq(dg_scenario_keep(scn, s), DG_KEEP_ANGLES);
  ck_assert_int_eq(dg_sim_set_keep(s, DG_KEEP_WORK, &err), DG_OK);
  dg_driver *drv = dg_driver_new(scn, s, &err);
  ck_assert_ptr_null(drv);
  ck_assert_str_eq(err.file, "stop.json");
  ck_assert_str_eq(err.path, "/stop/signal");
  ck_assert_msg(strstr(err.text, "keeps no angles") && strstr(err.text, "motor.out.angle"), "%s",
                err.text);
  /* kept: the run stops once the motor's shaft has turned 3 rad */
  ck_assert_int_eq(dg_sim_set_keep(s, DG_KEEP_ANGLES, &err), DG_OK);
  drv = dg_driver_new(scn, s, &err);
  ck_assert_msg(drv != NULL, "%s", err.text);
  dg_sim_set_input(s, 0, 1.0);
  long k = 0;
  while (!dg_driver_should_stop(drv) && k < 1000) {
    ck_assert_int_eq(dg_sim_step(s, DT), DG_OK);
    k++;
  }
  ck_assert_int_lt(k, 1000);
  ck_assert_double_gt(dg_sim_signal(s, angle), 3.0);
  dg_driver_free(drv);
  dg_scenario_free(scn);
  dg_sim_free(s);
  dg_graph_free(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("keep");
  TCase *tc = tcase_create("keep");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_same_but_what_is_left_out, 0, 2 * NGRAPHS);
  tcase_add_test(tc, test_set_before_the_first_step);
  tcase_add_test(tc, test_what_signals_need);
  suite_add_tcase(s, tc);
  return dg_test_run(s);
}
