/* The energy ledger (lib/run/energy.c): placeholder, filled below. */
#include "testutil.h"

static Suite *suite(void) {
  Suite *s = suite_create("energy");
  return s;
}

int main(void) { return dg_test_run(suite()); }
