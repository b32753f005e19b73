/* lib/run/cycle.c: the cycle CSV loader (every error with its line and
 * column), the trace's window and distance, the EPA trace tolerance on
 * hand-made traces, and runs over a cycle (forward and backward). */
#include "testutil.h"

#include <drivegraph/cycle.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dg_cycle *load(const char *text, dg_error *err) {
  return dg_cycle_load_string(text, strlen(text), "c.csv", err);
}

START_TEST(test_load_fastsim) {
  dg_error err;
  dg_cycle *c = load("cycSecs,cycMps,cycGrade,cycRoadType\n0,0,0,0\n1,2,0.01,0\n3,4,0,0\n", &err);
  ck_assert_msg(c, "%s", err.text);
  ck_assert_int_eq(dg_cycle_length(c), 3);
  ck_assert_double_eq(dg_cycle_time(c)[2], 3.0);
  ck_assert_double_eq(dg_cycle_speed(c)[1], 2.0);
  ck_assert_double_eq(dg_cycle_grade(c)[1], 0.01);
  /* ∫ v dt of the linear trace: 1 + 6 = 7 m */
  ck_assert_double_eq(dg_cycle_distance(c), 7.0);
  dg_cycle_free(c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("cycle");
  TCase *tc = tcase_create("load");
  tcase_add_test(tc, test_load_fastsim);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return dg_test_run(suite()); }
