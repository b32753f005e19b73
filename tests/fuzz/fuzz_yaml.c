/* Fuzz target: the YAML vehicle-config importer (dg_import_yaml_to_json).
 *
 * The input is a YAML file. Properties: no crash, leak or hang; a failure
 * is a well-formed error naming the file; notes are "note: " or
 * "warning: " with code DG_OK; a success is graph JSON that loads (or
 * fails to load with a well-formed error) and runs. */
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = fuzz_write(0, "config.yaml", data, size);
  dg_error err;
  char *json = dg_import_yaml_to_json(path, fuzz_check_note, NULL, &err);
  if (!json) {
    fuzz_check_error(&err, "yaml import");
    FUZZ_CHECK(strcmp(err.file, path) == 0, "yaml error names file '%s', not %s", err.file, path);
    return 0;
  }
  fuzz_check_imported(json, "yaml import");
  free(json);
  return 0;
}
