/* Fuzz target: an example graph driven by fuzzer-chosen inputs.
 *
 * The input is a small program for a driver:
 *   byte 0      which graph of graphs/ (sorted by name, modulo their number)
 *   byte 1      step size: 1, 1, 0.5 or 2 ms (low two bits)
 *   then records of 4 bytes {op, a, b, hold}: apply op, then step
 *   1 + 2·hold times (at most MAX_STEPS steps in all; op 8 sets speeds, so
 *   "reverse at 60 km/h" needs no long launch first):
 *     0 throttle = a/255          1 brake = a/255        2 clutch = a/255
 *     3 gear = a mod 10 − 2 (−2..7: also gears the box does not have)
 *     4 reverse at speed: gear −1 with throttle a/255, whatever the speed
 *     5 gear spam: a different gear every step, throttle b/255
 *     6 a custom input (grade, lateral acceleration ...) = (b − 128)/32
 *     7 an out-of-range standard input: −1, 2, ±1e3, 1e9, NaN or Inf
 *     8 an initial value: signal a (mod count) = (b − 128)·0.5, ×100 for rpm
 *     9 throttle a/255 and brake b/255 together
 *    10 a ramp inside the steps: input a mod 3 (throttle, brake, clutch)
 *       scheduled from its value now to b/255 over 0.37·(hold + 1) steps,
 *       so its breakpoint falls inside a step
 *    11 snapshot, then the steps of the record twice (restoring in
 *       between): both runs must agree bit for bit
 * Properties: no crash, leak or sanitizer report; after every successful
 * step every signal, the kinetic energy and the energy audit are finite; a
 * failed step is a well-formed numeric or block error with the time, and
 * the simulation stays failed; a restored snapshot runs the same steps to
 * the same bits. */
#include "fuzz_common.h"

#define MAX_STEPS 2000

static fuzz_graphs graphs;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_load_graphs(&graphs);
  return 0;
}

static const double extremes[] = {-1.0, 2.0, 1e3, -1e3, 1e9, NAN, INFINITY};

/* Applies one record (gear spam, op 5, is handled by the caller). */
static void apply(dg_sim *sim, const char *gname, int op, int a, int b) {
  switch (op) {
  case 0: dg_sim_set_input(sim, DG_INPUT_THROTTLE, a / 255.0); break;
  case 1: dg_sim_set_input(sim, DG_INPUT_BRAKE, a / 255.0); break;
  case 2: dg_sim_set_input(sim, DG_INPUT_CLUTCH, a / 255.0); break;
  case 3: dg_sim_set_input(sim, DG_INPUT_GEAR, (double)(a % 10 - 2)); break;
  case 4:
    dg_sim_set_input(sim, DG_INPUT_GEAR, -1.0);
    dg_sim_set_input(sim, DG_INPUT_THROTTLE, a / 255.0);
    break;
  case 6: {
    int n = dg_sim_input_count(sim);
    if (n > DG_NUM_STD_INPUTS)
      dg_sim_set_input(sim, DG_NUM_STD_INPUTS + a % (n - DG_NUM_STD_INPUTS), (b - 128) / 32.0);
    break;
  }
  case 7:
    dg_sim_set_input(sim, a % DG_NUM_STD_INPUTS,
                     extremes[(size_t)b % (sizeof extremes / sizeof extremes[0])]);
    break;
  case 8: {
    int n = dg_sim_signal_count(sim);
    if (n == 0)
      break;
    int id = a % n;
    const char *unit = dg_sim_signal_unit(sim, id);
    double v = (b - 128) * 0.5 * (unit && strcmp(unit, "rpm") == 0 ? 100.0 : 1.0);
    dg_error err;
    if (dg_sim_set_initial(sim, 1, &id, &v, &err) != DG_OK) {
      fuzz_check_error(&err, gname);
    } else {
      double got = dg_sim_signal(sim, id);
      FUZZ_CHECK(isfinite(got), "%s: %s = %g after setting it to %g", gname,
                 dg_sim_signal_name(sim, id), got, v);
    }
    break;
  }
  case 9:
    dg_sim_set_input(sim, DG_INPUT_THROTTLE, a / 255.0);
    dg_sim_set_input(sim, DG_INPUT_BRAKE, b / 255.0);
    break;
  default: break;
  }
}

/* A hash of every signal's bits and the time. */
static uint64_t signal_hash(const dg_sim *sim) {
  uint64_t h = 1469598103934665603u;
  int n = dg_sim_signal_count(sim);
  for (int i = -1; i < n; i++) {
    double v = i < 0 ? dg_sim_time(sim) : dg_sim_signal(sim, i);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 1099511628211u;
  }
  return h;
}

/* One step with the checks; false once the simulation has failed. */
static bool step(dg_sim *sim, double dt, const char *gname) {
  int rc = dg_sim_step(sim, dt);
  if (rc != DG_OK) {
    fuzz_check_step_error(sim, rc, gname);
    return false;
  }
  fuzz_check_finite(sim, gname);
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (graphs.n == 0)
    LLVMFuzzerInitialize(NULL, NULL);
  if (size < 2)
    return 0;
  int gi = data[0] % graphs.n;
  const char *gname = graphs.name[gi];
  static const double dts[] = {0.001, 0.001, 0.0005, 0.002};
  double dt = dts[data[1] & 3];
  dg_error err;
  dg_sim *sim = dg_sim_new(graphs.g[gi], &err);
  FUZZ_CHECK(sim != NULL, "%s: no simulation: %s", gname, err.text);
  long steps = 0;
  bool alive = true;
  for (size_t i = 2; alive && i + 4 <= size && steps < MAX_STEPS; i += 4) {
    int op = data[i] % 12, a = data[i + 1], b = data[i + 2];
    long n = 1 + 2L * data[i + 3];
    if (op == 10) {
      int input = a % 3;
      double t0 = dg_sim_time(sim), v0 = dg_sim_get_input(sim, input);
      const double t[2] = {t0, t0 + 0.37 * dt * (double)(data[i + 3] + 1)};
      const double v[2] = {isfinite(v0) ? v0 : 0.0, b / 255.0};
      FUZZ_CHECK(dg_sim_set_input_schedule(sim, input, 2, t, v, false, &err) == DG_OK,
                 "%s: schedule refused: %s", gname, err.text);
      for (long k = 0; alive && k < n && steps < MAX_STEPS; k++, steps++)
        alive = step(sim, dt, gname);
      continue;
    }
    if (op == 11) {
      dg_snapshot *snap = dg_sim_snapshot(sim, &err);
      FUZZ_CHECK(snap != NULL, "%s: no snapshot: %s", gname, err.text);
      uint64_t h[2] = {0, 0};
      bool ok[2] = {true, true};
      long done = 0;
      for (int run = 0; run < 2; run++) {
        if (run == 1)
          FUZZ_CHECK(dg_sim_restore(sim, snap, &err) == DG_OK, "%s: restore: %s", gname,
                     err.text);
        long k = 0;
        for (; ok[run] && k < n && steps + k < MAX_STEPS; k++) {
          ok[run] = dg_sim_step(sim, dt) == DG_OK;
          h[run] = (h[run] ^ (ok[run] ? signal_hash(sim) : 0)) * 1099511628211u;
        }
        done = k;
      }
      FUZZ_CHECK(ok[0] == ok[1] && h[0] == h[1],
                 "%s: a restored snapshot ran differently (%s then %s)", gname,
                 ok[0] ? "ok" : "failed", ok[1] ? "ok" : "failed");
      dg_snapshot_free(snap);
      steps += done;
      alive = ok[1];
      if (alive)
        fuzz_check_finite(sim, gname);
      continue;
    }
    if (op == 5) {
      dg_sim_set_input(sim, DG_INPUT_THROTTLE, b / 255.0);
      for (long k = 0; alive && k < n && steps < MAX_STEPS; k++, steps++) {
        dg_sim_set_input(sim, DG_INPUT_GEAR, (double)((k * (a | 1) + b) % 9 - 1));
        alive = step(sim, dt, gname);
      }
      continue;
    }
    apply(sim, gname, op, a, b);
    for (long k = 0; alive && k < n && steps < MAX_STEPS; k++, steps++)
      alive = step(sim, dt, gname);
  }
  if (getenv("DG_FUZZ_VERBOSE"))
    fprintf(stderr, "%s: %ld steps of %g s, %s%s\n", gname, steps, dt,
            alive ? "ok" : "stopped: ", alive ? "" : dg_sim_last_error(sim)->text);
  dg_sim_free(sim);
  return 0;
}
