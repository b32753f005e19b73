/* Fuzz target: the Chrono::Vehicle powertrain importer
 * (dg_import_chrono_to_json).
 *
 * The input is one Chrono JSON file: a transmission when its text mentions
 * "Transmission" (then paired with the HMMWV engine of tests/data/chrono),
 * otherwise an engine (paired with the HMMWV transmission), so Chrono files
 * are seeds as they are. The vehicle is the default sedan or
 * tests/data/yaml/vehicle_awd_lsd.yaml, by the parity of the input's
 * length. Properties as for fuzz_yaml: no crash, leak or hang; well-formed
 * errors and notes; output that loads or fails cleanly, and runs. */
#include "fuzz_common.h"

static char engine_path[1024], trans_path[1024], vehicle_path[1024];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *root = fuzz_source_root();
  snprintf(engine_path, sizeof engine_path, "%s/tests/data/chrono/hmmwv_engine_shafts.json", root);
  snprintf(trans_path, sizeof trans_path,
           "%s/tests/data/chrono/hmmwv_automatic_transmission_shafts.json", root);
  snprintf(vehicle_path, sizeof vehicle_path, "%s/tests/data/yaml/vehicle_awd_lsd.yaml", root);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!engine_path[0])
    LLVMFuzzerInitialize(NULL, NULL);
  char *text = fuzz_text(data, size);
  bool is_trans = strstr(text, "Transmission") != NULL;
  free(text);
  const char *mine = fuzz_write(0, is_trans ? "transmission.json" : "engine.json", data, size);
  const char *engine = is_trans ? engine_path : mine;
  const char *trans = is_trans ? mine : trans_path;
  const char *vehicle = size % 2 ? vehicle_path : NULL;
  dg_error err;
  char *json = dg_import_chrono_to_json(engine, trans, vehicle, fuzz_check_note, NULL, &err);
  if (!json) {
    fuzz_check_error(&err, "chrono import");
    FUZZ_CHECK(strcmp(err.file, mine) == 0 || strcmp(err.file, engine) == 0 ||
                   strcmp(err.file, trans) == 0 || (vehicle && strcmp(err.file, vehicle) == 0),
               "chrono error names file '%s'", err.file);
    return 0;
  }
  fuzz_check_imported(json, "chrono import");
  free(json);
  return 0;
}
