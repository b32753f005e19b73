/* lib/run/batch.c: parameter overrides, the launch input pattern and batch runs.
 *
 * The central property: a variant run in a batch, on any number of threads,
 * gives bit for bit what a single run of that variant gives — the single
 * run written out here with the public API, from a graph whose JSON was
 * edited by hand. Results are compared with memcmp and ==, no tolerance. */
#include "testutil.h"

#include "run/batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECONDS 3.0
#define DT 0.001

/* `text` with the first `from` replaced by `to` (malloc'ed). */
static char *replace(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  ck_assert_msg(at != NULL, "'%s' not in the graph", from);
  size_t n = strlen(text) - strlen(from) + strlen(to);
  char *out = malloc(n + 1);
  ck_assert_ptr_nonnull(out);
  size_t head = (size_t)(at - text);
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  return out;
}

typedef struct single {
  dg_batch_result r;
  double finals[3];
} single;

static const char *const final_signals[] = {"body.speed", "engine.rpm", "gearbox.gear"};

/* One run exactly as dg_batch_run documents it, from a graph text. */
static single single_run(const char *json, const dg_scenario *scn) {
  single s;
  memset(&s, 0, sizeof s);
  s.r.t_0_100 = s.r.top_speed = NAN;
  dg_graph *g = dg_test_graph(json);
  dg_sim *sim = dg_test_sim(g);
  dg_driver *drv = NULL;
  if (scn) {
    dg_error err;
    drv = dg_driver_new(scn, sim, &err);
    ck_assert_msg(drv != NULL, "%s", err.text);
  } else {
    dg_batch_launch_inputs(sim, 0.0);
  }
  long total = (long)ceil(SECONDS / DT - 1e-9);
  int sp = dg_sim_signal_find(sim, "body.speed");
  double v_prev = dg_sim_signal(sim, sp), t_prev = 0.0;
  s.r.top_speed = v_prev;
  bool stopped = dg_driver_should_stop(drv);
  for (long k = 0; k < total && !stopped; k++) {
    if (drv)
      dg_driver_apply(drv, (double)k * DT);
    else
      dg_batch_launch_inputs(sim, (double)k * DT);
    ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    s.r.steps = k + 1;
    double v = dg_sim_signal(sim, sp), t = dg_sim_time(sim);
    if (v > s.r.top_speed)
      s.r.top_speed = v;
    if (isnan(s.r.t_0_100) && v >= 100.0 / 3.6)
      s.r.t_0_100 = t_prev + (t - t_prev) * ((100.0 / 3.6 - v_prev) / (v - v_prev));
    v_prev = v;
    t_prev = t;
    stopped = dg_driver_should_stop(drv);
  }
  s.r.final_time = dg_sim_time(sim);
  s.r.topology_changes = dg_sim_topology_changes(sim);
  dg_energy e;
  dg_sim_energy(sim, &e);
  s.r.balance_error = e.balance_error;
  s.r.work_in = e.work_in;
  for (int k = 0; k < 3; k++)
    s.finals[k] = dg_test_signal(sim, final_signals[k]);
  dg_driver_free(drv);
  dg_sim_free(sim);
  dg_graph_free(g);
  return s;
}

static void assert_same(const dg_batch_result *b, const double *finals, const single *s) {
  ck_assert_int_eq(b->code, DG_OK);
  ck_assert_int_eq(b->steps, s->r.steps);
  ck_assert_int_eq(b->topology_changes, s->r.topology_changes);
  ck_assert(memcmp(&b->final_time, &s->r.final_time, sizeof(double)) == 0);
  ck_assert(memcmp(&b->top_speed, &s->r.top_speed, sizeof(double)) == 0);
  ck_assert(memcmp(&b->balance_error, &s->r.balance_error, sizeof(double)) == 0);
  ck_assert(memcmp(&b->work_in, &s->r.work_in, sizeof(double)) == 0);
  ck_assert(isnan(b->t_0_100) == isnan(s->r.t_0_100));
  if (!isnan(b->t_0_100))
    ck_assert(b->t_0_100 == s->r.t_0_100);
  ck_assert(memcmp(finals, s->finals, sizeof s->finals) == 0);
}

/* Four variants: engine inertia × final drive, as overrides and as files
 * edited by hand. */
static const char *const inertias[2] = {"0.15", "0.31"};
static const char *const finals_ratio[2] = {"3.7", "4.5"};

static void make_variants(dg_override ov[4][2], dg_batch_variant v[4]) {
  for (int i = 0; i < 4; i++) {
    ov[i][0] = (dg_override){"engine.inertia", inertias[i / 2]};
    ov[i][1] = (dg_override){"final.ratio", finals_ratio[i % 2]};
    v[i] = (dg_batch_variant){2, ov[i]};
  }
}

static char *edited_graph(const char *base, int i) {
  char a[64], b[64];
  snprintf(a, sizeof a, "\"inertia\": %s,", inertias[i / 2]);
  char *t1 = replace(base, "\"inertia\": 0.20,", a);
  snprintf(b, sizeof b, "\"ratio\": %s,", finals_ratio[i % 2]);
  char *t2 = replace(t1, "\"ratio\": 4.10,", b);
  free(t1);
  return t2;
}

/* The options of a batch of the sedan baseline's variants (base: its
 * text) over SECONDS at DT, on `threads` threads, with n final signals. */
static void sedan_options(dg_batch_options *o, const char *base, int threads, int n,
                          const char *const *signals) {
  dg_batch_options_init(o);
  o->graph_json = base;
  o->graph_name = "sedan_baseline.json";
  o->duration = SECONDS;
  o->dt = DT;
  o->threads = threads;
  o->n_signals = n;
  o->signals = signals;
}

static const int thread_counts[] = {1, 2, 3, 8};

START_TEST(test_batch_equals_single_runs) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  dg_override ov[4][2];
  dg_batch_variant v[4];
  make_variants(ov, v);
  dg_batch_options o;
  sedan_options(&o, base, thread_counts[_i], 3, final_signals);
  dg_batch_result res[4];
  double finals[4 * 3];
  dg_error err;
  dg_batch_stats st;
  ck_assert_int_eq(dgp_batch_run_stats(&o, 4, v, res, finals, &st, &err), DG_OK);
  /* final.ratio may change which modes are valid; each ratio is shared by
   * two variants, but they change the inertia to either side of the base
   * value: sharing the ratio's check would cost as many checks as it saves,
   * so every variant is checked in full */
  ck_assert_int_eq(st.mode_checks, 1);
  ck_assert_int_eq(st.full, 4);
  ck_assert_int_eq(st.reused, 0);
  for (int i = 0; i < 4; i++) {
    char *edited = edited_graph(base, i);
    single s = single_run(edited, NULL);
    assert_same(&res[i], finals + 3 * i, &s);
    free(edited);
  }
  /* the variants differ from each other: the overrides took effect */
  ck_assert(res[0].final_time == res[3].final_time);
  ck_assert(finals[0] != finals[3]);
  ck_assert(finals[0] != finals[6]);
  free(base);
}
END_TEST

/* A batch's steps keep the angles only where a final value reads one (the
 * work always: its energy figures): a shaft's angle asked for is the
 * single run's to the bit, beside a signal that needs nothing kept. */
START_TEST(test_batch_angle_final) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  dg_override ov[4][2];
  dg_batch_variant v[4];
  make_variants(ov, v);
  static const char *const sig[] = {"engine.out.angle", "body.speed"};
  dg_batch_options o;
  sedan_options(&o, base, 2, 2, sig);
  dg_batch_result res[2];
  double finals[2 * 2];
  dg_error err;
  ck_assert_int_eq(dg_batch_run(&o, 2, v, res, finals, &err), DG_OK);
  for (int i = 0; i < 2; i++) {
    char *edited = edited_graph(base, i);
    dg_graph *g = dg_test_graph(edited);
    dg_sim *sim = dg_test_sim(g);
    long total = (long)ceil(SECONDS / DT - 1e-9);
    for (long k = 0; k < total; k++) {
      dg_batch_launch_inputs(sim, (double)k * DT);
      ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    }
    double angle = dg_test_signal(sim, sig[0]), speed = dg_test_signal(sim, sig[1]);
    ck_assert_int_eq(res[i].code, DG_OK);
    ck_assert(isfinite(finals[2 * i]) && finals[2 * i] > 100.0); /* turned, not NaN */
    ck_assert(memcmp(&finals[2 * i], &angle, sizeof angle) == 0);
    ck_assert(memcmp(&finals[2 * i + 1], &speed, sizeof speed) == 0);
    dg_sim_free(sim);
    dg_graph_free(g);
    free(edited);
  }
  free(base);
}
END_TEST

/* With a scenario: initial values, stop condition, inputs from the file. */
START_TEST(test_batch_scenario) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  const char *scn_text = "{ \"inputs\": { \"throttle\": [[0, 0], [0.5, 1]] },"
                         "  \"initial\": { \"engine.rpm\": 900 },"
                         "  \"stop\": { \"signal\": \"body.speed\", \"above\": 10 } }";
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(scn_text, "stop.json", &err);
  ck_assert_msg(scn != NULL, "%s", err.text);
  dg_override ov[4][2];
  dg_batch_variant v[4];
  make_variants(ov, v);
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.scenario = scn;
  o.duration = SECONDS;
  o.dt = DT;
  o.threads = 2;
  o.n_signals = 3;
  o.signals = final_signals;
  dg_batch_result res[4];
  double finals[12];
  ck_assert_int_eq(dg_batch_run(&o, 4, v, res, finals, &err), DG_OK);
  for (int i = 0; i < 4; i++) {
    char *edited = edited_graph(base, i);
    single s = single_run(edited, scn);
    assert_same(&res[i], finals + 3 * i, &s);
    ck_assert_double_lt(res[i].final_time, SECONDS - 0.1); /* stopped above 10 m/s */
    ck_assert_double_gt(finals[3 * i], 10.0);
    free(edited);
  }
  dg_scenario_free(scn);
  free(base);
}
END_TEST

/* Every thread count gives the same bytes, and 0 means every CPU. */
START_TEST(test_batch_thread_independent) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  enum { N = 7 };
  static const char *const vals[N] = {"0.1", "0.15", "0.2", "0.25", "0.3", "0.35", "0.4"};
  dg_override ov[N];
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++) {
    ov[i] = (dg_override){"engine.inertia", vals[i]};
    v[i] = (dg_batch_variant){1, &ov[i]};
  }
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.duration = 1.0;
  o.n_signals = 1;
  o.signals = final_signals;
  dg_batch_result ref[N], res[N];
  double fref[N], fres[N];
  dg_error err;
  o.threads = 1;
  ck_assert_int_eq(dg_batch_run(&o, N, v, ref, fref, &err), DG_OK);
  for (int t = 0; t <= 4; t++) {
    o.threads = t;
    memset(res, 0xab, sizeof res);
    ck_assert_int_eq(dg_batch_run(&o, N, v, res, fres, &err), DG_OK);
    for (int i = 0; i < N; i++) {
      ck_assert_int_eq(res[i].code, DG_OK);
      ck_assert(memcmp(&res[i].final_time, &ref[i].final_time, sizeof(double)) == 0);
      ck_assert(memcmp(&res[i].balance_error, &ref[i].balance_error, sizeof(double)) == 0);
      ck_assert(memcmp(&fres[i], &fref[i], sizeof(double)) == 0);
    }
  }
  /* dt defaults to 1 ms */
  ck_assert_int_eq(ref[0].steps, 1000);
  free(base);
}
END_TEST

/* A bad variant fails alone, naming its override; the others run. */
START_TEST(test_batch_bad_variant) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  dg_override ov[3] = {{"engine.inertia", "-1"}, {"engin.inertia", "0.2"}, {"engine.inertia", "0.3"}};
  dg_batch_variant v[3] = {{1, &ov[0]}, {1, &ov[1]}, {1, &ov[2]}};
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.graph_name = "g.json";
  o.duration = 0.5;
  dg_batch_result res[3];
  dg_error err;
  ck_assert_int_eq(dg_batch_run(&o, 3, v, res, NULL, &err), DG_OK);
  ck_assert_int_eq(res[0].code, DG_ERR_RANGE);
  ck_assert_str_eq(res[0].error.path, "/blocks/engine/inertia");
  ck_assert_str_eq(res[0].error.text, "must be > 0 (got -1) (override engine.inertia=-1)");
  ck_assert_int_eq(res[1].code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(res[1].error.path, "/blocks/engin");
  ck_assert_str_eq(res[1].error.text, "override engin.inertia=0.2: no block \"engin\" in the graph; "
                                      "did you mean \"engine\"?");
  ck_assert_int_eq(res[2].code, DG_OK);
  ck_assert_int_eq(res[2].steps, 500);
  free(base);
}
END_TEST

START_TEST(test_batch_setup_errors) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.graph_name = "g.json";
  static const char *const sig[] = {"engine.rmp"};
  o.n_signals = 1;
  o.signals = sig;
  dg_override ov = {"engine.inertia", "0.2"};
  dg_batch_variant v = {1, &ov};
  dg_batch_result r;
  double fin;
  dg_error err;
  ck_assert_int_eq(dg_batch_run(&o, 1, &v, &r, &fin, &err), DG_ERR_UNKNOWN);
  ck_assert_str_eq(err.text, "unknown signal \"engine.rmp\"; did you mean \"engine.rpm\"?");
  ck_assert_str_eq(err.file, "g.json");
  o.n_signals = 0;
  o.graph_json = "{ \"drivegraph\": 1, \"blocks\": { } ";
  ck_assert_int_ne(dg_batch_run(&o, 1, &v, &r, NULL, &err), DG_OK);
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  o.graph_json = NULL;
  ck_assert_int_eq(dg_batch_run(&o, 1, &v, &r, NULL, &err), DG_ERR_USAGE);
  free(base);
}
END_TEST

/* ---- overrides --------------------------------------------------------- */

static const char *small_graph =
    "{ \"drivegraph\": 1, \"name\": \"rig\","
    "  \"blocks\": { \"src\": { \"type\": \"torque_source\", \"inertia\": 0.5, \"torque\": 10 },"
    "              \"g\": { \"type\": \"gear\", \"ratio\": 2 },"
    "              \"diff\": { \"type\": \"differential\", \"kind\": \"open\", \"inertia\": 0.1 },"
    "              \"l\": { \"type\": \"load\", \"inertia\": 1, \"c1\": 0.1 },"
    "              \"r\": { \"type\": \"load\", \"inertia\": 1, \"c1\": 0.3 } },"
    "  \"connections\": [[\"src.out\", \"g.in\"], [\"g.out\", \"diff.in\"],"
    "                    [\"diff.left\", \"l.in\"], [\"diff.right\", \"r.in\"]] }";

START_TEST(test_override_apply) {
  dg_error err;
  dg_override ov[3] = {{"g.ratio", "3.5"}, {"diff.kind", "locked"}, {"g.ratio", "4.25"}};
  char *text = dg_override_apply(small_graph, "rig.json", 3, ov, &err);
  ck_assert_msg(text != NULL, "%s", err.text);
  ck_assert_ptr_nonnull(strstr(text, "\"ratio\":4.25")); /* the last one wins */
  ck_assert_ptr_nonnull(strstr(text, "\"kind\":\"locked\"")); /* bare text: a string */
  /* block order is kept */
  ck_assert(strstr(text, "\"src\"") < strstr(text, "\"g\"") &&
            strstr(text, "\"g\"") < strstr(text, "\"diff\""));
  dg_graph *g = dg_test_graph(text);
  dg_sim *sim = dg_test_sim(g);
  ck_assert_int_eq(dg_sim_dof_count(sim), 1); /* the locked diff ties the loads */
  dg_sim_free(sim);
  dg_graph_free(g);
  free(text);
  /* a nested field, created where absent */
  dg_override nested = {"diff.extra.deep", "1"};
  text = dg_override_apply(small_graph, "rig.json", 1, &nested, &err);
  ck_assert_ptr_nonnull(strstr(text, "\"extra\":{\"deep\":1}"));
  free(text);
}
END_TEST

START_TEST(test_override_errors) {
  dg_error err;
  dg_override through = {"g.ratio.x", "1"};
  ck_assert_ptr_null(dg_override_apply(small_graph, "rig.json", 1, &through, &err));
  ck_assert_int_eq(err.code, DG_ERR_SCHEMA);
  ck_assert_str_eq(err.file, "rig.json");
  ck_assert_str_eq(err.path, "/blocks/g/ratio");
  ck_assert_str_eq(err.text, "override g.ratio.x=1: \"ratio\" is not an object (got number), so "
                             "it has no field \"x\"");
  dg_override nodot = {"ratio", "1"};
  ck_assert_ptr_null(dg_override_apply(small_graph, "rig.json", 1, &nodot, &err));
  ck_assert_int_eq(err.code, DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "override ratio=1: the key must be BLOCK.PARAM (or BLOCK.PARAM.FIELD)");
  dg_override none = {"zz.ratio", "1"};
  ck_assert_ptr_null(dg_override_apply(small_graph, "rig.json", 1, &none, &err));
  ck_assert_str_eq(err.text, "override zz.ratio=1: no block \"zz\" in the graph");
  ck_assert_ptr_null(dg_override_apply("[1, 2]", "x.json", 1, &none, &err));
  ck_assert_int_eq(err.code, DG_ERR_SCHEMA);
  ck_assert_ptr_null(dg_override_apply("{ oops", "x.json", 1, &none, &err));
  ck_assert_int_eq(err.code, DG_ERR_SYNTAX);
  ck_assert_int_eq(err.line, 1);
}
END_TEST

START_TEST(test_load_overrides_errors) {
  dg_error err;
  /* a misspelt parameter reaches the loader and its "did you mean" */
  dg_override typo = {"g.ratoi", "3"};
  ck_assert_ptr_null(dg_graph_load_overrides(NULL, small_graph, "rig.json", 1, &typo, &err));
  ck_assert_str_eq(err.path, "/blocks/g/ratoi");
  ck_assert_str_eq(err.text, "unknown parameter; did you mean \"ratio\"? (override g.ratoi=3)");
  /* a string where a number belongs */
  dg_override word = {"g.ratio", "fast"};
  ck_assert_ptr_null(dg_graph_load_overrides(NULL, small_graph, "rig.json", 1, &word, &err));
  ck_assert_int_eq(err.code, DG_ERR_SCHEMA);
  ck_assert_ptr_nonnull(strstr(err.text, "(override g.ratio=fast)"));
  /* an error elsewhere than the override's path: the count of overrides */
  dg_override zero = {"src.inertia", "0"}, zero2 = {"diff.inertia", "0"};
  dg_override both[2] = {zero, zero2};
  dg_override loads[2] = {{"l.inertia", "0"}, {"r.inertia", "0"}};
  dg_graph *ok = dg_graph_load_overrides(NULL, small_graph, "rig.json", 2, both, &err);
  ck_assert_ptr_nonnull(ok);
  dg_graph_free(ok);
  ck_assert_ptr_null(dg_graph_load_overrides(NULL, small_graph, "rig.json", 2, loads, &err));
  ck_assert_int_eq(err.code, DG_ERR_INERTIA);
  ck_assert_str_eq(err.path, "/blocks/diff");
  ck_assert_ptr_nonnull(strstr(err.text, "give one of them an inertia (with 2 overrides)"));
}
END_TEST

/* n = 0 and an override that rewrites a value with itself both give the
 * original graph's simulation, bit for bit. */
START_TEST(test_override_identity) {
  dg_error err;
  dg_override same = {"g.ratio", "2"};
  dg_graph *a = dg_graph_load_overrides(NULL, small_graph, "rig.json", 0, NULL, &err);
  dg_graph *b = dg_graph_load_overrides(NULL, small_graph, "rig.json", 1, &same, &err);
  ck_assert_ptr_nonnull(a);
  ck_assert_ptr_nonnull(b);
  dg_sim *sa = dg_test_sim(a), *sb = dg_test_sim(b);
  for (int k = 0; k < 500; k++) {
    ck_assert_int_eq(dg_sim_step(sa, 1e-3), DG_OK);
    ck_assert_int_eq(dg_sim_step(sb, 1e-3), DG_OK);
  }
  double x = dg_test_signal(sa, "l.omega"), y = dg_test_signal(sb, "l.omega");
  ck_assert(memcmp(&x, &y, sizeof x) == 0);
  ck_assert_double_gt(x, 0.0);
  dg_sim_free(sa);
  dg_sim_free(sb);
  dg_graph_free(a);
  dg_graph_free(b);
}
END_TEST

/* ---- the launch pattern and the summary numbers ------------------------- */

START_TEST(test_launch_inputs) {
  dg_graph *g = dg_test_graph(small_graph);
  dg_sim *sim = dg_test_sim(g);
  const double t[] = {0.0, 1.999, 2.0, 4.5, 13.0};
  const double gear[] = {1, 1, 2, 3, 7};
  for (int i = 0; i < 5; i++) {
    dg_batch_launch_inputs(sim, t[i]);
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_THROTTLE), 1.0);
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_BRAKE), 0.0);
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_CLUTCH), 0.0);
    ck_assert_double_eq(dg_sim_get_input(sim, DG_INPUT_GEAR), gear[i]);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* 0–100 km/h is interpolated between the two steps around the mark; the
 * top speed and the audit are those of the run. */
START_TEST(test_summary_numbers) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.duration = 12.0;
  dg_batch_result r;
  dg_batch_variant v = {0, NULL};
  dg_error err;
  ck_assert_int_eq(dg_batch_run(&o, 1, &v, &r, NULL, &err), DG_OK);
  ck_assert_int_eq(r.code, DG_OK);
  /* the same car as the sedan of docs/graphs.md, "Example graphs": about 8 s */
  ck_assert_double_gt(r.t_0_100, 6.0);
  ck_assert_double_lt(r.t_0_100, 10.0);
  ck_assert_double_ge(r.top_speed, 100.0 / 3.6);
  ck_assert_double_eq_tol(r.final_time, 12.0, 1e-9);
  ck_assert_int_eq(r.steps, 12000);
  ck_assert_int_ge(r.topology_changes, 6);
  /* the audit closes (see test_sedan.c for the tolerance) */
  ck_assert_double_lt(fabs(r.balance_error), 1e-6 * r.work_in);
  /* a graph without a vehicle: no speed, no 0–100 */
  o.graph_json = small_graph;
  o.duration = 0.1;
  ck_assert_int_eq(dg_batch_run(&o, 1, &v, &r, NULL, &err), DG_OK);
  ck_assert(isnan(r.t_0_100) && isnan(r.top_speed));
  o.speed_signal = "l.omega"; /* any signal can stand in */
  ck_assert_int_eq(dg_batch_run(&o, 1, &v, &r, NULL, &err), DG_OK);
  ck_assert_double_gt(r.top_speed, 0.0);
  free(base);
}
END_TEST

/* ---- one every-mode check per structure -------------------------------- */

/* Loads `base` with the overrides in full: the text a single run starts from. */
static char *overridden(const char *base, int n, const dg_override *ov) {
  dg_error err;
  char *text = dg_override_apply(base, "sedan_baseline.json", n, ov, &err);
  ck_assert_msg(text != NULL, "%s", err.text);
  return text;
}

/* Engine inertia (an inertia: probed at its extremes) × the upshift speed
 * and a tyre's peak factor (dynamics): every variant reuses the base graph's
 * check, and each result is bit for bit the single run of that variant
 * loaded in full. */
START_TEST(test_reuse_equals_single_runs) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  enum { N = 6 };
  static const char *const inertia[N] = {"0.15", "0.15", "0.2", "0.25", "0.31", "0.31"};
  static const char *const upshift[N] = {"5500", "6000", "5200", "5800", "5500", "6000"};
  dg_override ov[N][3];
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++) {
    ov[i][0] = (dg_override){"engine.inertia", inertia[i]};
    ov[i][1] = (dg_override){"gearbox.shift.upshift_rpm", upshift[i]};
    ov[i][2] = (dg_override){"wheel_rl.tyre.D", i % 2 ? "0.9" : "1.05"};
    v[i] = (dg_batch_variant){3, ov[i]};
  }
  dg_batch_options o;
  sedan_options(&o, base, 2, 3, final_signals);
  dg_batch_result res[N];
  double finals[N * 3];
  dg_error err;
  dg_batch_stats st;
  ck_assert_int_eq(dgp_batch_run_stats(&o, N, v, res, finals, &st, &err), DG_OK);
  /* the base graph's check and the probes at 0.15 and 0.31 */
  ck_assert_int_eq(st.mode_checks, 3);
  ck_assert_int_eq(st.reused, N);
  ck_assert_int_eq(st.full, 0);
  for (int i = 0; i < N; i++) {
    char *text = overridden(base, 3, ov[i]);
    single s = single_run(text, NULL);
    assert_same(&res[i], finals + 3 * i, &s);
    free(text);
  }
  ck_assert(finals[0] != finals[3]); /* the overrides took effect */
  free(base);
}
END_TEST

/* Two inertias at once (the engine's and a wheel's): the probes are the
 * corners of the boxes the variants span around the base values. */
START_TEST(test_reuse_two_inertias) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  enum { N = 12 };
  static const char *const engine[4] = {"0.1", "0.15", "0.25", "0.3"};
  static const char *const wheel[3] = {"1", "1.5", "2"};
  dg_override ov[N][2];
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++) {
    ov[i][0] = (dg_override){"engine.inertia", engine[i / 3]};
    ov[i][1] = (dg_override){"wheel_rl.inertia", wheel[i % 3]};
    v[i] = (dg_batch_variant){2, ov[i]};
  }
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.duration = 1.0;
  o.dt = DT;
  o.n_signals = 3;
  o.signals = final_signals;
  dg_batch_result res[N];
  double finals[N * 3];
  dg_error err;
  dg_batch_stats st;
  ck_assert_int_eq(dgp_batch_run_stats(&o, N, v, res, finals, &st, &err), DG_OK);
  /* engine 0.1..0.3 around 0.2, wheel 1..2 around 1.3: the points of
   * {base, lo, hi}² the variants' boxes touch, here all but the base */
  ck_assert_int_eq(st.mode_checks, 1 + 8);
  ck_assert_int_eq(st.reused, N);
  for (int i = 0; i < N; i++) {
    char *text = overridden(base, 2, ov[i]);
    dg_graph *g = dg_test_graph(text);
    dg_sim *sim = dg_test_sim(g);
    dg_batch_launch_inputs(sim, 0.0);
    for (int k = 0; k < 1000; k++) {
      dg_batch_launch_inputs(sim, k * DT);
      ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    }
    double speed = dg_test_signal(sim, "body.speed");
    ck_assert_int_eq(res[i].code, DG_OK);
    ck_assert(memcmp(&finals[3 * i], &speed, sizeof speed) == 0);
    dg_sim_free(sim);
    dg_graph_free(g);
    free(text);
  }
  free(base);
}
END_TEST

/* Runs `n` variants of sedan_baseline for 1 s and compares each with the
 * run of that variant loaded in full. */
static void assert_batch_equals_full_loads(const char *base, int n, const dg_batch_variant *v,
                                           dg_batch_stats *st) {
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.duration = 1.0;
  o.dt = DT;
  o.threads = 2;
  o.n_signals = 3;
  o.signals = final_signals;
  dg_batch_result *res = calloc((size_t)n, sizeof *res);
  double *finals = calloc((size_t)n * 3, sizeof *finals);
  dg_error err;
  ck_assert_int_eq(dgp_batch_run_stats(&o, n, v, res, finals, st, &err), DG_OK);
  for (int i = 0; i < n; i++) {
    char *text = overridden(base, v[i].n_overrides, v[i].overrides);
    dg_graph *g = dg_test_graph(text);
    dg_sim *sim = dg_test_sim(g);
    for (int k = 0; k < 1000; k++) {
      dg_batch_launch_inputs(sim, k * DT);
      ck_assert_int_eq(dg_sim_step(sim, DT), DG_OK);
    }
    ck_assert_int_eq(res[i].code, DG_OK);
    ck_assert_int_eq(res[i].topology_changes, dg_sim_topology_changes(sim));
    for (int k = 0; k < 3; k++) {
      double x = dg_test_signal(sim, final_signals[k]);
      ck_assert(memcmp(&finals[3 * i + k], &x, sizeof x) == 0);
    }
    dg_sim_free(sim);
    dg_graph_free(g);
    free(text);
  }
  free(res);
  free(finals);
}

/* A structural parameter (final.ratio) × an inertia, and × a dynamics
 * parameter: each ratio is one structure, checked once, and its variants
 * reuse that check (the inertias through probes of that structure). */
START_TEST(test_structures_shared) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  static const char *const ratio[3] = {"3.7", "4.1", "4.5"};
  static const char *const inertia[4] = {"0.15", "0.18", "0.25", "0.3"};
  static const char *const upshift[3] = {"5200", "5600", "6000"};
  dg_override ov[12][2];
  dg_batch_variant v[12];
  for (int i = 0; i < 12; i++) {
    ov[i][0] = (dg_override){"final.ratio", ratio[i / 4]};
    ov[i][1] = (dg_override){"engine.inertia", inertia[i % 4]};
    v[i] = (dg_batch_variant){2, ov[i]};
  }
  dg_batch_stats st;
  assert_batch_equals_full_loads(base, 12, v, &st);
  /* the base graph; per ratio its check and the probes at 0.15 and 0.3
   * (4.1 is the base graph's ratio, but written in the override it is
   * a structure of its own) */
  ck_assert_int_eq(st.mode_checks, 1 + 3 * 3);
  ck_assert_int_eq(st.reused, 12);
  for (int i = 0; i < 9; i++) {
    ov[i][0] = (dg_override){"final.ratio", ratio[i / 3]};
    ov[i][1] = (dg_override){"gearbox.shift.upshift_rpm", upshift[i % 3]};
    v[i] = (dg_batch_variant){2, ov[i]};
  }
  assert_batch_equals_full_loads(base, 9, v, &st);
  ck_assert_int_eq(st.mode_checks, 1 + 3);
  ck_assert_int_eq(st.reused, 9);
  /* overlapping keys do not commute: such a variant is checked in full */
  dg_override overlap[2] = {{"gearbox.shift.upshift_rpm", "5500"},
                            {"gearbox.shift", "{\"mode\": \"auto_rpm\", \"upshift_rpm\": 5800, "
                                              "\"downshift_rpm\": 2000}"}};
  dg_batch_variant both[3] = {{2, overlap}, {2, overlap}, {2, overlap}};
  assert_batch_equals_full_loads(base, 3, both, &st);
  ck_assert_int_eq(st.full, 3);
  free(base);
}
END_TEST

/* A rig whose clutch plate is the only inertia behind a slipping clutch:
 * clutch.inertia = 0 leaves that side without inertia. */
static const char *clutch_rig =
    "{ \"drivegraph\": 1, \"blocks\": {"
    "  \"src\": {\"type\": \"torque_source\", \"inertia\": 0.5, \"torque\": 10},"
    "  \"clutch\": {\"type\": \"clutch\", \"max_torque\": 50, \"inertia\": 0.2},"
    "  \"ld\": {\"type\": \"load\", \"c1\": 0.1}},"
    " \"connections\": [[\"src.out\", \"clutch.in\"], [\"clutch.out\", \"ld.in\"]] }";

/* Runs the clutch rig with one clutch.inertia override per variant. */
static void clutch_batch(int n, const char *const *values, dg_batch_result *res,
                         dg_batch_stats *st) {
  dg_override ov[8];
  dg_batch_variant v[8];
  ck_assert_int_le(n, 8);
  for (int i = 0; i < n; i++) {
    ov[i] = (dg_override){"clutch.inertia", values[i]};
    v[i] = (dg_batch_variant){1, &ov[i]};
  }
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = clutch_rig;
  o.graph_name = "rig.json";
  o.duration = 0.05;
  dg_error err;
  ck_assert_int_eq(dgp_batch_run_stats(&o, n, v, res, NULL, st, &err), DG_OK);
}

/* A variant refused with exactly the error of loading it in full. */
static void assert_refused_as_full(const dg_batch_result *r, const char *base, const char *key,
                                   const char *value) {
  dg_override ov = {key, value};
  dg_error full;
  ck_assert_ptr_null(dg_graph_load_overrides(NULL, base, "rig.json", 1, &ov, &full));
  ck_assert_int_ne(r->code, DG_OK);
  ck_assert_int_eq(r->code, full.code);
  ck_assert_int_eq(r->error.code, full.code);
  ck_assert_str_eq(r->error.file, full.file);
  ck_assert_str_eq(r->error.path, full.path);
  ck_assert_str_eq(r->error.text, full.text);
  /* and it is the file's own error, the override named after it */
  dg_error err;
  char *text = dg_override_apply(base, "rig.json", 1, &ov, &err);
  ck_assert_ptr_nonnull(text);
  dg_error direct = dg_test_graph_error(text);
  free(text);
  ck_assert_int_eq(direct.code, full.code);
  ck_assert_str_eq(direct.path, full.path);
  ck_assert(strncmp(full.text, direct.text, strlen(direct.text)) == 0);
  ck_assert_str_eq(full.text + strlen(direct.text), " (with 1 override)");
}

/* 0.2 → 0.3 reuses the check; 0.2 → 0 does not, and is refused. */
START_TEST(test_inertia_zero_not_reused) {
  dg_batch_result res[4];
  dg_batch_stats st;
  static const char *const up[3] = {"0.3", "0.25", "0.35"};
  clutch_batch(3, up, res, &st);
  ck_assert_int_eq(st.mode_checks, 2); /* the base graph and the probe at 0.35 */
  ck_assert_int_eq(st.reused, 3);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(res[i].code, DG_OK);
  /* alone, a probe would cost what the variant's own check does */
  static const char *const zero[1] = {"0"};
  clutch_batch(1, zero, res, &st);
  ck_assert_int_eq(st.mode_checks, 1);
  ck_assert_int_eq(st.full, 1);
  assert_refused_as_full(&res[0], clutch_rig, "clutch.inertia", "0");
  ck_assert_int_eq(res[0].code, DG_ERR_INERTIA);
  /* with others: the probe at 0 fails, so the variants below the base value
   * are checked in full; those above reuse the probe at 0.3 */
  static const char *const mixed[4] = {"0", "0.3", "0.1", "0.25"};
  clutch_batch(4, mixed, res, &st);
  ck_assert_int_eq(st.mode_checks, 3);
  ck_assert_int_eq(st.full, 2);
  ck_assert_int_eq(st.reused, 2);
  assert_refused_as_full(&res[0], clutch_rig, "clutch.inertia", "0");
  ck_assert_int_eq(res[1].code, DG_OK);
  ck_assert_int_eq(res[2].code, DG_OK);
  ck_assert_int_eq(res[3].code, DG_OK);
}
END_TEST

/* Only zero matters in exact arithmetic, not in the check: a DOF's inertia
 * below 1e-10 of M's largest diagonal entry counts as none. A tiny positive
 * inertia is refused as the full check refuses it, not reused. */
START_TEST(test_inertia_tiny_not_reused) {
  dg_batch_result res[3];
  dg_batch_stats st;
  static const char *const values[3] = {"1e-12", "0.3", "0.25"};
  clutch_batch(3, values, res, &st);
  assert_refused_as_full(&res[0], clutch_rig, "clutch.inertia", "1e-12");
  ck_assert_int_eq(res[0].code, DG_ERR_INERTIA);
  ck_assert_int_eq(st.full, 1);
  ck_assert_int_eq(st.reused, 2);
}
END_TEST

/* Two driven wheels of different radii on one body: an open differential
 * is fine, a locked one contradicts the loop (the only motion left would be
 * standstill). */
static const char *axle_rig =
    "{ \"drivegraph\": 1, \"blocks\": {"
    "  \"src\": {\"type\": \"torque_source\", \"inertia\": 0.2, \"torque\": 50},"
    "  \"diff\": {\"type\": \"differential\", \"kind\": \"open\"},"
    "  \"wl\": {\"type\": \"wheel\", \"radius\": 0.30, \"inertia\": 1},"
    "  \"wr\": {\"type\": \"wheel\", \"radius\": 0.32, \"inertia\": 1},"
    "  \"body\": {\"type\": \"vehicle\", \"mass\": 1000}},"
    " \"connections\": [[\"src.out\", \"diff.in\"], [\"diff.left\", \"wl.hub\"],"
    "   [\"diff.right\", \"wr.hub\"], [\"wl.ground\", \"body.rear_left\"],"
    "   [\"wr.ground\", \"body.rear_right\"]] }";

/* Dynamics-only variants run one check between them; a ratio or a kind is
 * checked again, and a kind that makes the graph invalid is refused with
 * the message loading that graph gives. */
START_TEST(test_check_count_and_structural_refusal) {
  enum { N = 7 };
  dg_override ov[N] = {
      {"src.torque", "40"},      {"body.cda", "0.7"},     {"wl.brake_torque", "900"},
      {"body.road_load.f1", "3"}, {"src.torque", "60"},    {"diff.kind", "locked"},
      {"wl.radius", "0.31"},
  };
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++)
    v[i] = (dg_batch_variant){1, &ov[i]};
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = axle_rig;
  o.graph_name = "rig.json";
  o.duration = 0.1;
  dg_batch_result res[N];
  dg_batch_stats st;
  dg_error err;
  /* the first five: dynamics only */
  ck_assert_int_eq(dgp_batch_run_stats(&o, 5, v, res, NULL, &st, &err), DG_OK);
  ck_assert_int_eq(st.mode_checks, 1);
  ck_assert_int_eq(st.reused, 5);
  ck_assert_int_eq(st.full, 0);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(res[i].code, DG_OK);
  /* all seven: the kind and the radius are checked in full */
  ck_assert_int_eq(dgp_batch_run_stats(&o, N, v, res, NULL, &st, &err), DG_OK);
  ck_assert_int_eq(st.mode_checks, 1);
  ck_assert_int_eq(st.reused, 5);
  ck_assert_int_eq(st.full, 2);
  assert_refused_as_full(&res[5], axle_rig, "diff.kind", "locked");
  ck_assert_int_eq(res[5].code, DG_ERR_OVERCONSTRAINED);
  ck_assert_int_eq(res[6].code, DG_OK);
  /* an invalid structure shared by three variants: its check fails once,
   * then each variant is checked in full and refused with its message */
  dg_override locked[3][2];
  static const char *const torques[3] = {"40", "50", "60"};
  for (int i = 0; i < 3; i++) {
    locked[i][0] = (dg_override){"diff.kind", "locked"};
    locked[i][1] = (dg_override){"src.torque", torques[i]};
    v[i] = (dg_batch_variant){2, locked[i]};
  }
  ck_assert_int_eq(dgp_batch_run_stats(&o, 3, v, res, NULL, &st, &err), DG_OK);
  ck_assert_int_eq(st.mode_checks, 2);
  ck_assert_int_eq(st.full, 3);
  for (int i = 0; i < 3; i++) {
    dg_error full;
    ck_assert_ptr_null(dg_graph_load_overrides(NULL, axle_rig, "rig.json", 2, locked[i], &full));
    ck_assert_int_eq(res[i].code, DG_ERR_OVERCONSTRAINED);
    ck_assert_str_eq(res[i].error.path, full.path);
    ck_assert_str_eq(res[i].error.text, full.text);
  }
}
END_TEST

/* Parameters of classes whose tables carry no flags (a plugin's, the test
 * classes here) are always checked in full; so are keys that name no
 * parameter, which loading reports as before. */
START_TEST(test_unflagged_and_unknown_keys_full) {
  dg_registry *reg = dg_test_registry();
  const char *graph = "{ \"drivegraph\": 1, \"blocks\": {"
                      "  \"src\": {\"type\": \"torque_source\", \"inertia\": 0.2},"
                      "  \"w\": {\"type\": \"test_wheel\", \"radius\": 0.3},"
                      "  \"m\": {\"type\": \"test_mass\", \"mass\": 500}},"
                      " \"connections\": [[\"src.out\", \"w.hub\"], [\"w.ground\", \"m.in\"]] }";
  enum { N = 4 };
  dg_override ov[N] = {
      {"m.mass", "600"}, {"src.inertai", "0.3"}, {"src..inertia", "0.3"}, {"src.inertia", "0.3"}};
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++)
    v[i] = (dg_batch_variant){1, &ov[i]};
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.reg = reg;
  o.graph_json = graph;
  o.graph_name = "rig.json";
  o.duration = 0.01;
  o.speed_signal = "m.speed";
  dg_batch_result res[N];
  dg_batch_stats st;
  dg_error err;
  ck_assert_int_eq(dgp_batch_run_stats(&o, N, v, res, NULL, &st, &err), DG_OK);
  /* and one inertia variant alone: a probe would cost what its check does */
  ck_assert_int_eq(st.full, 4);
  ck_assert_int_eq(st.reused, 0);
  ck_assert_int_eq(res[0].code, DG_OK);
  ck_assert_int_eq(res[1].code, DG_ERR_UNKNOWN);
  ck_assert_str_eq(res[1].error.text,
                   "unknown parameter; did you mean \"inertia\"? (override src.inertai=0.3)");
  ck_assert_int_eq(res[2].code, DG_OK); /* "src..inertia" sets src/inertia */
  ck_assert_int_eq(res[3].code, DG_OK);
  /* the test class's mass, three times: three checks, however many */
  dg_override masses[3] = {{"m.mass", "600"}, {"m.mass", "700"}, {"m.mass", "800"}};
  for (int i = 0; i < 3; i++)
    v[i] = (dg_batch_variant){1, &masses[i]};
  ck_assert_int_eq(dgp_batch_run_stats(&o, 3, v, res, NULL, &st, &err), DG_OK);
  ck_assert_int_eq(st.full, 3);
  /* the built-in source's inertia, three times: one probe at 0.4 */
  dg_override inertias[3] = {
      {"src.inertia", "0.3"}, {"src.inertia", "0.4"}, {"src.inertia", "0.25"}};
  for (int i = 0; i < 3; i++)
    v[i] = (dg_batch_variant){1, &inertias[i]};
  ck_assert_int_eq(dgp_batch_run_stats(&o, 3, v, res, NULL, &st, &err), DG_OK);
  ck_assert_int_eq(st.mode_checks, 2);
  ck_assert_int_eq(st.reused, 3);
  dg_registry_free(reg);
}
END_TEST

/* dg_batch_validate loads like dg_batch_run and simulates nothing. */
START_TEST(test_validate) {
  char *base = dg_test_read_source("graphs/bench/sedan_baseline.json");
  enum { N = 5 };
  dg_override ov[N] = {{"engine.inertia", "-1"},       {"engine.inertia", "0.3"},
                       {"final.ratio", "3.9"},          {"gearbox.shift.upshift_rpm", "5000"},
                       {"engine.inertia", "0.25"}};
  dg_batch_variant v[N];
  for (int i = 0; i < N; i++)
    v[i] = (dg_batch_variant){1, &ov[i]};
  dg_batch_options o;
  dg_batch_options_init(&o);
  o.graph_json = base;
  o.graph_name = "g.json";
  static const char *const sig[] = {"not.a.signal"}; /* not looked up */
  o.n_signals = 1;
  o.signals = sig;
  dg_batch_result res[N];
  dg_batch_stats st;
  dg_error err;
  ck_assert_int_eq(dgp_batch_validate_stats(&o, N, v, res, &st, &err), DG_OK);
  ck_assert_int_eq(res[0].code, DG_ERR_RANGE);
  ck_assert_str_eq(res[0].error.text, "must be > 0 (got -1) (override engine.inertia=-1)");
  for (int i = 1; i < N; i++) {
    ck_assert_int_eq(res[i].code, DG_OK);
    ck_assert_int_eq(res[i].steps, 0);
    ck_assert(isnan(res[i].top_speed));
  }
  ck_assert_int_eq(st.mode_checks, 2); /* the base and the probe at 0.3 */
  ck_assert_int_eq(st.full, 2);        /* the ratio, and the value out of range */
  ck_assert_int_eq(st.reused, 3);
  ck_assert_int_eq(dg_batch_validate(&o, N, v, res, &err), DG_OK);
  ck_assert_int_eq(dg_batch_validate(NULL, N, v, res, &err), DG_ERR_USAGE);
  ck_assert_str_eq(err.text, "dg_batch_validate: missing options, graph or output");
  free(base);
}
END_TEST

static Suite *batch_suite(void) {
  Suite *s = suite_create("batch");
  TCase *tc = tcase_create("runs");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_batch_equals_single_runs, 0,
                      (int)(sizeof thread_counts / sizeof thread_counts[0]));
  tcase_add_test(tc, test_batch_angle_final);
  tcase_add_test(tc, test_batch_scenario);
  tcase_add_test(tc, test_batch_thread_independent);
  tcase_add_test(tc, test_batch_bad_variant);
  tcase_add_test(tc, test_batch_setup_errors);
  tcase_add_test(tc, test_summary_numbers);
  suite_add_tcase(s, tc);
  TCase *st = tcase_create("structure");
  tcase_set_timeout(st, 120);
  tcase_add_test(st, test_reuse_equals_single_runs);
  tcase_add_test(st, test_reuse_two_inertias);
  tcase_add_test(st, test_structures_shared);
  tcase_add_test(st, test_inertia_zero_not_reused);
  tcase_add_test(st, test_inertia_tiny_not_reused);
  tcase_add_test(st, test_check_count_and_structural_refusal);
  tcase_add_test(st, test_unflagged_and_unknown_keys_full);
  tcase_add_test(st, test_validate);
  suite_add_tcase(s, st);
  TCase *ov = tcase_create("overrides");
  tcase_add_test(ov, test_override_apply);
  tcase_add_test(ov, test_override_errors);
  tcase_add_test(ov, test_load_overrides_errors);
  tcase_add_test(ov, test_override_identity);
  tcase_add_test(ov, test_launch_inputs);
  suite_add_tcase(s, ov);
  return s;
}

int main(void) { return dg_test_run(batch_suite()); }
