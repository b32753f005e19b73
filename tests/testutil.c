#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef DG_SOURCE_ROOT
#define DG_SOURCE_ROOT "."
#endif

void dg_test_path(char *buf, size_t size, const char *relative) {
  const char *root = getenv("DG_SOURCE_ROOT");
  snprintf(buf, size, "%s/%s", root ? root : DG_SOURCE_ROOT, relative);
}

dg_graph *dg_test_graph(const char *json) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "test.json", &err);
  if (!g) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("graph did not load: %s", msg);
  }
  return g;
}

dg_error dg_test_graph_error(const char *json) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "test.json", &err);
  if (g) {
    dg_graph_free(g);
    ck_abort_msg("graph loaded but should have failed");
  }
  return err;
}

dg_sim *dg_test_sim(const dg_graph *g) {
  dg_error err;
  dg_sim *sim = dg_sim_new(g, &err);
  if (!sim) {
    char msg[1024];
    dg_error_format(&err, msg, sizeof msg);
    ck_abort_msg("simulation not created: %s", msg);
  }
  return sim;
}

double dg_test_signal(const dg_sim *sim, const char *name) {
  int id = dg_sim_signal_find(sim, name);
  ck_assert_msg(id >= 0, "unknown signal %s", name);
  return dg_sim_signal(sim, id);
}

int dg_test_run(Suite *suite) {
  SRunner *sr = srunner_create(suite);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
