/* Soak: every example graph (graphs/NAME.json) runs for one hour of
 * simulated time at dt = 1 ms (3.6 million steps) under a randomized but
 * seeded, hence reproducible, driver: launches, cruising, coasting, braking
 * to a stop, reverse selected at speed, neutral revving, clutch play, manual
 * gear changes, throttle and brake together, grade changes. Checked:
 * - every step succeeds (no numerical guard fires in an hour of driving);
 * - every signal, the kinetic energy and the energy audit stay finite
 *   (checked every 10 ms of simulated time);
 * - the energy balance stays closed: |balance_error| stays below 1e-6 of the
 *   energy that went through the system (work in + |work out| + |losses|,
 *   the audit's own scale; see SOAK_BALANCE_TOL);
 * - memory does not grow: the heap in use (mallinfo2) is the same after the
 *   hour as before it, to the byte — the step allocates nothing.
 *
 * An hour costs 1–8 s per graph. Under a sanitizer or valgrind that is
 * minutes, so with the environment variable DG_SOAK_SHORT set (and in
 * builds with AddressSanitizer) each graph runs 60 s instead, which is
 * printed; DG_SOAK_SECONDS (a number of seconds, at most the hour) sets
 * that time itself (CI's valgrind run: 20 s, for its time limit). */
#include "testutil.h"

#include <dirent.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifndef SOAK_ASAN
#define SOAK_ASAN 0
#endif

#define SOAK_DT 0.001
#define SOAK_FULL_S 3600.0
#define SOAK_SHORT_S 60.0
/* The audit integrates every block's power with RK4 alongside the speeds;
 * its error per step is O(dt⁵) of smooth motion plus round-off, and mode
 * changes are booked exactly (impact loss). Over an hour of aggressive
 * driving the measured error stays below 1e-8 of the energy throughput
 * (see the printed values); 1e-6 leaves two decades of margin and still
 * catches any missing or double-counted term, which shows up at the
 * percent level. */
#define SOAK_BALANCE_TOL 1e-6

static char graph_names[64][128];
static int num_graphs;

static int cmp_names(const void *a, const void *b) { return strcmp(a, b); }

static void find_graphs(void) {
  char dir[1024];
  dg_test_path(dir, sizeof dir, "graphs");
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d)) && num_graphs < 64) {
    size_t len = strlen(e->d_name);
    if (len > 5 && len < sizeof graph_names[0] && strcmp(e->d_name + len - 5, ".json") == 0)
      snprintf(graph_names[num_graphs++], sizeof graph_names[0], "%s", e->d_name);
  }
  closedir(d);
  qsort(graph_names, (size_t)num_graphs, sizeof graph_names[0], cmp_names);
}

static double soak_seconds(void) {
  const char *n = getenv("DG_SOAK_SECONDS");
  if (n && n[0]) {
    char *end;
    double v = strtod(n, &end);
    if (*end == '\0' && v > 0.0 && v <= SOAK_FULL_S)
      return v;
    fprintf(stderr, "soak: DG_SOAK_SECONDS='%s' is not a number of seconds in (0, %.0f]\n", n,
            SOAK_FULL_S);
    exit(2);
  }
  const char *s = getenv("DG_SOAK_SHORT");
  return (s && s[0]) || SOAK_ASAN ? SOAK_SHORT_S : SOAK_FULL_S;
}

/* xorshift64*: a fixed sequence per seed on every platform. */
typedef struct rng {
  uint64_t s;
} rng;
static uint64_t rng_next(rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}
static double rng_uniform(rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* The driver: a new manoeuvre every 2–40 s. */
typedef struct driver {
  rng r;
  double until; /* end of the current manoeuvre (s) */
  int grade;    /* custom input index or -1 */
  double throttle, brake, clutch, gear;
} driver;

static void next_manoeuvre(driver *d, dg_sim *sim, double t) {
  d->until = t + rng_uniform(&d->r, 2.0, 40.0);
  int kind = (int)(rng_next(&d->r) % 10);
  d->clutch = 0.0;
  d->brake = 0.0;
  switch (kind) {
  case 0: /* launch */
  case 1:
    d->gear = 1;
    d->throttle = rng_uniform(&d->r, 0.3, 1.0);
    break;
  case 2: /* cruise */
    d->throttle = rng_uniform(&d->r, 0.05, 0.4);
    if (d->gear <= 0)
      d->gear = 1;
    break;
  case 3: /* coast */
    d->throttle = 0.0;
    break;
  case 4: /* brake, maybe to a stop */
    d->throttle = 0.0;
    d->brake = rng_uniform(&d->r, 0.1, 1.0);
    break;
  case 5: /* reverse selected at whatever speed */
    d->gear = -1;
    d->throttle = rng_uniform(&d->r, 0.0, 0.6);
    break;
  case 6: /* neutral and rev */
    d->gear = 0;
    d->throttle = rng_uniform(&d->r, 0.5, 1.0);
    break;
  case 7: /* clutch play */
    d->clutch = rng_uniform(&d->r, 0.0, 1.0);
    d->throttle = rng_uniform(&d->r, 0.0, 1.0);
    break;
  case 8: /* a manual gear change, up or down */
    d->gear = (double)(1 + rng_next(&d->r) % 4);
    d->throttle = rng_uniform(&d->r, 0.2, 1.0);
    break;
  default: /* throttle and brake together */
    d->throttle = rng_uniform(&d->r, 0.5, 1.0);
    d->brake = rng_uniform(&d->r, 0.2, 0.6);
    break;
  }
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, d->throttle);
  dg_sim_set_input(sim, DG_INPUT_BRAKE, d->brake);
  dg_sim_set_input(sim, DG_INPUT_CLUTCH, d->clutch);
  dg_sim_set_input(sim, DG_INPUT_GEAR, d->gear);
  if (d->grade >= 0)
    dg_sim_set_input(sim, d->grade, rng_uniform(&d->r, -0.08, 0.08));
}

/* Energy that went through the system: the audit's natural scale. */
static double throughput(const dg_energy *e) {
  return e->work_in + fabs(e->work_out) + fabs(e->efficiency_loss) + fabs(e->impact_loss) +
         e->kinetic + e->kinetic_start;
}

/* The driver's seed comes from the graph's file name (FNV-1a), not from
 * its place in the directory listing, so that adding an example graph does
 * not hand every graph after it another driver. */
static uint64_t seed_of(const char *name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (const unsigned char *c = (const unsigned char *)name; *c; c++)
    h = (h ^ *c) * 0x100000001B3ull;
  return 0x9E3779B97F4A7C15ull ^ h * 0xD1B54A32D192ED03ull;
}

START_TEST(test_soak_graph) {
  const char *name = graph_names[_i];
  char rel[256], path[1024];
  snprintf(rel, sizeof rel, "graphs/%s", name);
  dg_test_path(path, sizeof path, rel);
  double seconds = soak_seconds();
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_msg(g != NULL, "%s: %s", path, err.text);
  dg_sim *sim = dg_test_sim(g);
  driver d = {.r = {seed_of(name)}, .grade = dg_sim_input_find(sim, "grade")};
  int nsig = dg_sim_signal_count(sim);
  long steps = lround(seconds / SOAK_DT);

  /* Failures are recorded and asserted after the loop: Check's assertions
   * talk to the parent process, which would disturb the heap measurement. */
  char problem[1024] = "";
  double worst_balance = 0.0, worst_at = 0.0;
  long manoeuvres = 0;
  struct mallinfo2 before = mallinfo2();
  clock_t c0 = clock();
  for (long k = 0; k < steps && !problem[0]; k++) {
    double t = (double)k * SOAK_DT;
    if (t >= d.until) {
      next_manoeuvre(&d, sim, t);
      manoeuvres++;
    }
    int rc = dg_sim_step(sim, SOAK_DT);
    if (rc != DG_OK) {
      dg_error_format(dg_sim_last_error(sim), problem, sizeof problem);
      break;
    }
    if (k % 10 != 9)
      continue;
    for (int i = 0; i < nsig; i++) {
      double v = dg_sim_signal(sim, i);
      if (!isfinite(v)) {
        snprintf(problem, sizeof problem, "%s = %g at t = %g s", dg_sim_signal_name(sim, i), v,
                 dg_sim_time(sim));
        break;
      }
    }
    if (k % 1000 != 999)
      continue;
    dg_energy e;
    dg_sim_energy(sim, &e);
    double rel_err = fabs(e.balance_error) / fmax(throughput(&e), 1.0);
    double allowed = SOAK_BALANCE_TOL * fmax(throughput(&e), 1.0);
    if (!isfinite(e.balance_error) || !(fabs(e.balance_error) <= allowed))
      snprintf(problem, sizeof problem,
               "energy balance error %g J is %g of the throughput %g J at t = %g s",
               e.balance_error, rel_err, throughput(&e), dg_sim_time(sim));
    if (rel_err > worst_balance) {
      worst_balance = rel_err;
      worst_at = dg_sim_time(sim);
    }
  }
  double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
  struct mallinfo2 after = mallinfo2();
  ck_assert_msg(!problem[0], "%s: %s", name, problem);
  ck_assert_int_eq((long)dg_sim_step_count(sim), steps);
  ck_assert_msg(after.uordblks == before.uordblks,
                "%s: heap in use grew from %zu to %zu bytes during the run", name, before.uordblks,
                after.uordblks);
  dg_energy e;
  dg_sim_energy(sim, &e);
  fprintf(stderr,
          "soak %-26s %6.0f s simulated, %ld steps, %ld manoeuvres, %ld mode changes, "
          "throughput %.3g J, worst balance error %.2g (at %.0f s), heap %zu -> %zu B, "
          "%.1f s CPU\n",
          name, seconds, steps, manoeuvres, dg_sim_topology_changes(sim), throughput(&e),
          worst_balance, worst_at, before.uordblks, after.uordblks, cpu);
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

/* The driver really drives: the manoeuvres reach speed, stop and reverse
 * (checked on the flagship so that a soak cannot pass by standing still). */
START_TEST(test_soak_driver_moves) {
  if (soak_seconds() < SOAK_FULL_S) {
    fprintf(stderr, "soak: the driver check (300 s of the sedan) is skipped in the short soak\n");
    return;
  }
  char path[1024];
  dg_test_path(path, sizeof path, "graphs/sedan_rwd_automatic.json");
  dg_error err;
  dg_graph *g = dg_graph_load_file(NULL, path, &err);
  ck_assert_ptr_nonnull(g);
  dg_sim *sim = dg_test_sim(g);
  driver d = {.r = {12345}, .grade = dg_sim_input_find(sim, "grade")};
  int speed = dg_sim_signal_find(sim, "body.speed");
  ck_assert_int_ge(speed, 0);
  double vmax = 0.0, vmin = 0.0;
  for (long k = 0; k < 300000; k++) {
    double t = (double)k * SOAK_DT;
    if (t >= d.until)
      next_manoeuvre(&d, sim, t);
    ck_assert_int_eq(dg_sim_step(sim, SOAK_DT), DG_OK);
    double v = dg_sim_signal(sim, speed);
    vmax = fmax(vmax, v);
    vmin = fmin(vmin, v);
  }
  ck_assert_double_gt(vmax, 15.0); /* above 54 km/h */
  ck_assert_double_lt(vmin, -0.5); /* and backwards */
  ck_assert_double_lt(vmax, 80.0); /* nothing unphysical */
  dg_sim_free(sim);
  dg_graph_free(g);
}
END_TEST

static Suite *suite(void) {
  find_graphs();
  if (soak_seconds() < SOAK_FULL_S)
    fprintf(stderr,
            "soak: SHORTENED to %.0f s of simulated time per graph instead of %.0f s "
            "(%s); the full soak runs in `make test`\n",
            soak_seconds(), SOAK_FULL_S,
            getenv("DG_SOAK_SECONDS") ? "DG_SOAK_SECONDS is set"
            : SOAK_ASAN               ? "AddressSanitizer build"
                                      : "DG_SOAK_SHORT is set");
  Suite *s = suite_create("soak");
  TCase *tc = tcase_create("soak");
  /* an hour of the slowest graph takes ~10 s, far more on a loaded machine */
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_soak_graph, 0, num_graphs);
  tcase_add_test(tc, test_soak_driver_moves);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
