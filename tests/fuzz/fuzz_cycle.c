/* Fuzz target: the drive-cycle CSV loader (lib/run/cycle.c) and the trace
 * tolerance check over what it loads.
 *
 * The input is a cycle file (bytes, NULs included). Properties:
 * - loading never crashes, leaks or hangs; a failure is a well-formed error
 *   naming the file, with a line and column within the text;
 * - a cycle that loads has at least two points, times from 0 strictly
 *   increasing, finite speeds in [0, 150] m/s and grades within ±1; its
 *   distance is finite and >= 0; its trace JSON is text;
 * - the EPA check of the trace itself, sampled over its duration, finds no
 *   violation, and a window's extremes bracket the trace. */
#include "fuzz_common.h"

#include <drivegraph/cycle.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dg_error err;
  dg_cycle *c = dg_cycle_load_string((const char *)data, size, "fuzz_cycle.csv", &err);
  if (!c) {
    fuzz_check_error(&err, "cycle load");
    FUZZ_CHECK(strcmp(err.file, "fuzz_cycle.csv") == 0, "error names file '%s'", err.file);
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
      lines += data[i] == '\n';
    FUZZ_CHECK(err.line >= 0 && (size_t)err.line <= lines, "line %d of %zu", err.line, lines);
    FUZZ_CHECK(err.column >= 1 && (size_t)err.column <= size + 1, "column %d", err.column);
    return 0;
  }
  int n = dg_cycle_length(c);
  const double *t = dg_cycle_time(c), *v = dg_cycle_speed(c), *g = dg_cycle_grade(c);
  FUZZ_CHECK(n >= 2, "%d points", n);
  FUZZ_CHECK(t[0] == 0.0, "first time %g", t[0]);
  for (int k = 0; k < n; k++) {
    FUZZ_CHECK(k == 0 || t[k] > t[k - 1], "time %g after %g", t[k], k ? t[k - 1] : 0.0);
    FUZZ_CHECK(isfinite(v[k]) && v[k] >= 0.0 && v[k] <= 150.0, "speed %g", v[k]);
    FUZZ_CHECK(fabs(g[k]) <= 1.0, "grade %g", g[k]);
  }
  double d = dg_cycle_distance(c);
  FUZZ_CHECK(d >= 0.0 && d < INFINITY, "distance %g", d);
  char *json = dg_cycle_trace_json(c);
  FUZZ_CHECK(json && json[0] == '{', "trace json");
  free(json);
  double T = dg_cycle_duration(c);
  dg_trace_check chk;
  dg_trace_check_init(&chk);
  for (int k = 0; k <= 200 && isfinite(T); k++) {
    double tk = T * k / 200.0, s = dg_cycle_speed_at(c, tk);
    dg_trace_check_sample(&chk, c, tk, s, 1.0);
    double lo, hi;
    dg_cycle_window(c, tk - 1.0, tk + 1.0, &lo, &hi);
    FUZZ_CHECK(lo <= s && s <= hi, "window %g..%g misses %g at %g", lo, hi, s, tk);
  }
  FUZZ_CHECK(chk.violations == 0, "the trace violates itself %ld times", chk.violations);
  dg_cycle_free(c);
  return 0;
}
