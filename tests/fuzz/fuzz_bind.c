/* Fuzz target: the binding checks (lib/bind.c, lib/check.c's warnings,
 * dg_graph_check_step, the channel checks of dg_scenario_check).
 *
 * The input is a graph file. Properties:
 * - validating never crashes, leaks or hangs; every problem is a
 *   well-formed error and every warning a DG_OK error whose text starts
 *   "warning: "; the count returned is the number of problems;
 * - a graph that loads keeps exactly the warnings validation reported, and
 *   every binding it accepted fits its input: a number of the input's kind
 *   (an integer, 0 or 1) within its range; a signal of another block, or a
 *   block's own signal that is no feedthrough; a whole-number input fed by
 *   an integer or boolean signal; a signal whose known range meets the
 *   input's;
 * - dg_graph_check_step reports a block exactly when one of its signals
 *   oscillates faster than 1/(2 dt), at several dt;
 * - a schedule giving 2.5 to every channel that feeds an integer or
 *   boolean input is refused by dg_scenario_check, naming the scenario;
 *   and every value a channel's inputs all accept is not. */
#include "fuzz_common.h"

#include "internal.h"

typedef struct tally {
  int problems, warnings;
} tally;

static void count(const dg_error *e, void *user) {
  tally *t = user;
  fuzz_check_error(e, "validate");
  if (e->code == DG_OK)
    t->warnings++;
  else
    t->problems++;
}

static void check_binding(const dg_graph *g, int b, int i) {
  const dg_gblock *gb = &g->blocks[b];
  const dg_input_def *in = &gb->klass->inputs[i];
  const dg_gbind *bi = &gb->bind[i];
  dg_range r;
  dgp_input_limits(gb, i, &r);
  if (!bi->given)
    return;
  if (bi->kind == DG_BIND_CONST) {
    FUZZ_CHECK(dgp_input_accepts(in, &r, bi->value), "%s.%s: constant %g accepted", gb->id,
               in->name, bi->value);
    return;
  }
  if (bi->kind != DG_BIND_SIGNAL)
    return;
  const dg_gblock *src = &g->blocks[bi->block];
  const dg_signal_def *sd = &src->klass->signals[bi->signal];
  FUZZ_CHECK(bi->block != b || !(sd->flags & DG_SIGNAL_FEEDTHROUGH),
             "%s.%s follows its own feedthrough signal %s", gb->id, in->name, sd->name);
  if (in->flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL))
    FUZZ_CHECK(sd->flags & (DG_SIGNAL_INTEGER | DG_SIGNAL_BOOL),
               "%s.%s: a whole-number input fed by the continuous %s.%s", gb->id, in->name,
               src->id, sd->name);
  dg_range sr;
  dgp_signal_limits(src, bi->signal, &sr);
  FUZZ_CHECK(!(sr.max < r.min || sr.min > r.max), "%s.%s: %s.%s's range [%g, %g] misses [%g, %g]",
             gb->id, in->name, src->id, sd->name, sr.min, sr.max, r.min, r.max);
}

/* What dg_graph_check_step must say at dt: the blocks with a signal faster
 * than 1/(2 dt). */
static void check_step(const dg_graph *g, double dt) {
  int want = 0;
  for (int b = 0; b < g->num_blocks; b++) {
    const dg_gblock *gb = &g->blocks[b];
    bool fast = false;
    for (int s = 0; gb->klass->signals && gb->klass->signals[s].name; s++) {
      if (gb->klass->signals[s].port != DG_SIGNAL_HOOK || !gb->klass->signal_range)
        continue;
      dg_range r;
      dgp_signal_limits(gb, s, &r);
      fast = fast || r.frequency > 0.5 / dt || isnan(r.frequency);
    }
    want += fast;
  }
  tally t = {0};
  int got = dg_graph_check_step(g, dt, count, &t);
  FUZZ_CHECK(got == want && t.problems == got, "check_step at %g: %d problems, %d expected", dt,
             got, want);
}

/* A scenario giving `value` to every channel the graph's inputs follow. */
static int scenario_problems(const dg_graph *g, dg_sim *sim, double value) {
  char text[8192];
  size_t used = (size_t)snprintf(text, sizeof text, "{\"inputs\": {");
  int n = 0;
  for (int c = 0; c < dg_sim_input_count(sim) && used < sizeof text - 64; c++) {
    const char *name = dg_sim_input_name(sim, c);
    if (strlen(name) > 64)
      continue;
    used += (size_t)snprintf(text + used, sizeof text - used, "%s\"%s\": [[0, %.17g]]",
                             n++ ? ", " : "", name, value);
  }
  snprintf(text + used, sizeof text - used, "}}");
  dg_error err;
  dg_scenario *scn = dg_scenario_load_string(text, "fuzz_bind_scenario.json", &err);
  if (!scn)
    return -1; /* a channel named as a scenario may not hold ("gear" 2.5): not this check's */
  tally t = {0};
  int problems = dg_scenario_check(scn, sim, count, &t);
  FUZZ_CHECK(problems == t.problems, "scenario check: %d returned, %d reported", problems,
             t.problems);
  dg_scenario_free(scn);
  (void)g;
  return problems;
}

/* Whether some channel feeds a whole-number input (2.5 fits none). */
static bool has_whole_channel(const dg_graph *g) {
  for (int b = 0; b < g->num_blocks; b++)
    for (int i = 0; i < g->blocks[b].num_inputs; i++)
      if (g->blocks[b].bind[i].kind == DG_BIND_CHANNEL &&
          (g->blocks[b].klass->inputs[i].flags & (DG_INPUT_INTEGER | DG_INPUT_BOOL)))
        return true;
  return false;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  tally t = {0};
  int n = dg_graph_validate_string(NULL, text, "fuzz_bind.json", count, &t, NULL);
  FUZZ_CHECK(n == t.problems, "validate returned %d, reported %d problems", n, t.problems);
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, text, "fuzz_bind.json", &err);
  FUZZ_CHECK((g == NULL) == (n > 0), "load %s, validate found %d problems", g ? "ok" : "failed",
             n);
  if (!g) {
    fuzz_check_error(&err, "load");
    free(text);
    return 0;
  }
  FUZZ_CHECK(dg_graph_warning_count(g) == t.warnings, "%d warnings kept, %d reported",
             dg_graph_warning_count(g), t.warnings);
  for (int i = 0; i < dg_graph_warning_count(g); i++)
    fuzz_check_error(dg_graph_warning(g, i), "warning");
  for (int b = 0; b < g->num_blocks; b++)
    for (int i = 0; i < g->blocks[b].num_inputs; i++)
      check_binding(g, b, i);
  check_step(g, 1e-3);
  check_step(g, 1e-6);
  dg_sim *sim = dg_sim_new(g, &err);
  if (sim) {
    int p = scenario_problems(g, sim, 2.5);
    if (has_whole_channel(g))
      FUZZ_CHECK(p != 0, "2.5 given to a whole-number input was accepted");
    dg_sim_free(sim);
  } else {
    fuzz_check_error(&err, "sim");
  }
  dg_graph_free(g);
  free(text);
  return 0;
}
