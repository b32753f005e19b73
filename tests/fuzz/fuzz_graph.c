/* Fuzz target: the JSON graph loader.
 *
 * The input is a graph file. Properties:
 * - validate and load never crash, leak or hang, whatever the bytes;
 * - every problem validate reports is a well-formed error, their number is
 *   what it returns (warnings, DG_OK reports starting "warning: ", are not
 *   problems: a graph with a misspelt vehicle type also warns that its
 *   driver has no vehicle), and load fails exactly when validate found a problem,
 *   with validate's first problem;
 * - a graph that loads can be simulated: its stiffness check at 1 ms gives
 *   a verdict or a well-formed error, and the sim, stepped a little with
 *   full throttle in first gear, stays finite or stops with an error. */
#include "fuzz_common.h"

typedef struct seen {
  int count;
  dg_error first;
} seen;

static void on_problem(const dg_error *err, void *user) {
  seen *s = user;
  if (err->code == DG_OK) { /* a warning (docs/errors.md): not a problem */
    FUZZ_CHECK(strncmp(err->text, "warning: ", 9) == 0, "a DG_OK report that is no warning: %s",
               err->text);
    return;
  }
  fuzz_check_error(err, "validate");
  if (s->count++ == 0)
    s->first = *err;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  seen s = {0};
  dg_graph_info info;
  int problems = dg_graph_validate_string(NULL, text, "fuzz.json", on_problem, &s, &info);
  FUZZ_CHECK(problems == s.count, "validate returned %d but reported %d", problems, s.count);

  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, text, "fuzz.json", &err);
  FUZZ_CHECK((g == NULL) == (problems > 0), "load %s but validate found %d problems",
             g ? "succeeded" : "failed", problems);
  if (!g) {
    fuzz_check_error(&err, "load");
    FUZZ_CHECK(err.code == s.first.code && strcmp(err.text, s.first.text) == 0 &&
                   strcmp(err.path, s.first.path) == 0,
               "load's error (%s) is not validate's first (%s)", err.text, s.first.text);
    free(text);
    return 0;
  }
  FUZZ_CHECK(info.blocks == dg_graph_block_count(g) && info.modes >= 1,
             "info: %d blocks (graph has %d), %d modes", info.blocks, dg_graph_block_count(g),
             info.modes);
  for (int i = 0; i < dg_graph_connection_count(g); i++) {
    const char *from, *to;
    dg_graph_connection(g, i, &from, &to);
    FUZZ_CHECK(from && to, "connection %d has no endpoints", i);
  }

  dg_sim *sim = dg_sim_new(g, &err);
  FUZZ_CHECK(sim != NULL, "a valid graph did not give a simulation: %s", err.text);
  FUZZ_CHECK(dg_sim_dof_count(sim) == info.dofs, "sim has %d DOFs, validate said %d",
             dg_sim_dof_count(sim), info.dofs);
  dg_stiffness st;
  int src = dg_sim_check_stiffness(sim, 0.001, &st, &err);
  if (src != DG_OK) {
    fuzz_check_error(&err, "stiffness");
    FUZZ_CHECK(src != DG_ERR_NUMERIC || (st.stiff && st.recommended_dt < 0.001),
               "stiff without a smaller dt: %s", err.text);
  } else {
    FUZZ_CHECK(!st.stiff && (st.max_rate == 0.0 || isfinite(st.max_rate)),
               "stiffness: rate %g, stiff %d", st.max_rate, st.stiff);
  }
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1.0);
  /* 200 steps; 10 for the benchmark chains of hundreds of shafts (their
   * dense loss solve costs ~1e8 operations a step under the sanitizers,
   * which would make a seed alone outlast libFuzzer's 20 s unit timeout on
   * a loaded machine; solver v3 makes it linear) */
  int steps = dg_sim_node_count(sim) > 64 ? 10 : 200;
  for (int k = 0; k < steps; k++) {
    int rc = dg_sim_step(sim, 0.001);
    if (rc != DG_OK) {
      fuzz_check_step_error(sim, rc, "fuzz.json");
      break;
    }
    fuzz_check_finite(sim, "fuzz.json");
  }
  dg_sim_free(sim);
  dg_graph_free(g);
  free(text);
  return 0;
}
