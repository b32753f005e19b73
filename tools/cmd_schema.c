/* drivegraph schema: the JSON Schema of graph files, from the parameter
 * tables (schema_gen.c). */
#include "plugin.h"
#include "schema_gen.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PLUGINS 32

/* Writes `len` bytes to `path` through `path.tmp` and a rename, so that a
 * failure leaves nothing half-written. Returns 0, or -1 after a message. */
static int write_file_atomic(const char *cmd, const char *path, const char *data, size_t len) {
  size_t n = strlen(path) + 5;
  char *tmp = malloc(n);
  if (!tmp) {
    fprintf(stderr, "drivegraph %s: out of memory\n", cmd);
    return -1;
  }
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int rc = -1;
  if (f) {
    bool ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) == 0)
      rc = 0;
  }
  if (rc != 0) {
    fprintf(stderr, "drivegraph %s: cannot write %s: %s\n", cmd, path, strerror(errno));
    remove(tmp);
  }
  free(tmp);
  return rc;
}

static int cmd_schema(const command *cmd, int argc, char **argv) {
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"plugin", required_argument, NULL, 'p'},
                                           {"help", no_argument, NULL, 'h'},
                                           {0, 0, 0, 0}};
  const char *output = NULL;
  char *plugins[MAX_PLUGINS];
  int nplugins = 0;
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
    switch (c) {
    case 'h': print_help(cmd); return EXIT_OK;
    case 'o': output = optarg; break;
    case 'p':
      if (nplugins == MAX_PLUGINS)
        return usage_error(cmd, "at most %d --plugin options", MAX_PLUGINS);
      plugins[nplugins++] = optarg;
      break;
    default: return option_error(cmd, c, argv);
    }
  }
  if (optind < argc)
    return usage_error(cmd, "unexpected argument '%s'", argv[optind]);

  dg_registry *reg = plugin_registry(nplugins, plugins);
  if (!reg)
    return EXIT_INVALID; /* plugin_registry said why */
  json_t *schema = dg_schema_build(reg);
  char *text = schema ? json_dumps(schema, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
  json_decref(schema);
  dg_registry_free(reg);
  if (!text) {
    fprintf(stderr, "drivegraph schema: out of memory\n");
    return EXIT_INVALID;
  }
  int rc = EXIT_OK;
  size_t len = strlen(text);
  if (output) {
    /* one newline at the end, like the stdout form */
    char *full = realloc(text, len + 2);
    if (!full) {
      free(text);
      fprintf(stderr, "drivegraph schema: out of memory\n");
      return EXIT_INVALID;
    }
    text = full;
    text[len] = '\n';
    text[len + 1] = '\0';
    if (write_file_atomic(cmd->name, output, text, len + 1) != 0)
      rc = EXIT_INVALID;
  } else {
    fputs(text, stdout);
    fputc('\n', stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "drivegraph schema: cannot write the output: %s\n", strerror(errno));
      rc = EXIT_INVALID;
    }
  }
  free(text);
  return rc;
}

const command dg_cmd_schema = {
    .name = "schema",
    .synopsis = "[--output FILE] [--plugin LIB.so]...",
    .summary = "JSON Schema of graph files, for editors and validators.",
    .help = "Prints the JSON Schema (draft-07) of graph files, generated from the\n"
            "parameter tables of the block types: every parameter with its type, range,\n"
            "default, unit and meaning, required keys, and no unknown keys. Editors use\n"
            "it for completion, hover help and checks as you type (see README.md,\n"
            "\"JSON Schema and editors\"). `drivegraph validate` still checks what a\n"
            "schema cannot: increasing breakpoints, ports, cycles, inertia in every mode.\n\n"
            "Options:\n"
            "  -o, --output FILE  write the schema to FILE (through FILE.tmp and a rename)\n"
            "                     instead of stdout\n"
            "  --plugin LIB.so    include the block types of a plugin (repeatable)\n"
            "  -h, --help         show this help\n\n"
            "Exit status: 0 ok, 1 a plugin or the output failed, 2 usage error.\n",
    .run = cmd_schema,
};
