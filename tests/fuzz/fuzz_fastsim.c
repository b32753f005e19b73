/* Fuzz target: the FASTSim importer (dg_import_fastsim_to_json) and its
 * CSV reader.
 *
 * The input is one CSV file: a drive cycle when its text starts with
 * "cycSecs" (then given as --cycle to the Corolla, row 1 of
 * tests/data/fastsim/FASTSim_py_veh_db.csv), otherwise a vehicle table,
 * from which the row by the input's length picks (selection 1, 17 or 9,
 * or the name "2017 CHEVROLET Bolt"), so FASTSim's files are seeds as they
 * are. Properties as for fuzz_yaml: no crash, leak or hang; well-formed
 * errors (naming the input or the table) and notes; output that loads or
 * fails cleanly, and runs. */
#include "fuzz_common.h"

static char table_path[1024];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  snprintf(table_path, sizeof table_path, "%s/tests/data/fastsim/FASTSim_py_veh_db.csv",
           fuzz_source_root());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!table_path[0])
    LLVMFuzzerInitialize(NULL, NULL);
  bool is_cycle = size >= 7 && memcmp(data, "cycSecs", 7) == 0;
  const char *mine = fuzz_write(0, is_cycle ? "cycle.csv" : "vehicles.csv", data, size);
  dg_fastsim_options o = {.row = 1};
  const char *table = mine;
  if (is_cycle) {
    table = table_path;
    o.cycle = mine;
  } else {
    static const int rows[3] = {1, 17, 9};
    if (size % 4 == 3)
      o.name = "2017 CHEVROLET Bolt";
    else
      o.row = rows[size % 4];
  }
  dg_error err;
  char *json = dg_import_fastsim_to_json(table, &o, fuzz_check_note, NULL, &err);
  if (!json) {
    fuzz_check_error(&err, "fastsim import");
    FUZZ_CHECK(strcmp(err.file, mine) == 0 || strcmp(err.file, table) == 0,
               "fastsim error names file '%s'", err.file);
    return 0;
  }
  fuzz_check_imported(json, "fastsim import");
  free(json);
  return 0;
}
