/* drivegraph schema: the JSON Schema of graph files, from the parameter
 * tables (schema_gen.c). */
#include "output.h"
#include "plugin.h"
#include "schema_gen.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct schema_opts {
  const char *output;
  opt_list plugins;
} schema_opts;

static const option_def schema_options[] = {
    {.name = "output", .short_name = 'o', OPT_STRING_AT(schema_opts, output), .arg = "FILE",
     .help = "write the schema to FILE (through a temporary file and\n"
             "a rename; '-': stdout) instead of stdout"},
    OPT_PLUGIN_AT(schema_opts, plugins),
    {0},
};

static int cmd_schema(const command *cmd, int argc, char **argv) {
  schema_opts o = {0};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc == EXIT_OK && args.n > 0)
    rc = usage_error(cmd, "unexpected argument '%s'", args.v[0]);
  dg_registry *reg = rc == EXIT_OK ? plugin_registry(o.plugins.n, o.plugins.v) : NULL;
  if (rc == EXIT_OK && !reg)
    rc = EXIT_INVALID; /* plugin_registry said why */
  options_free(cmd, &o);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  const char *output = o.output;
  json_t *schema = dg_schema_build(reg);
  char *text = schema ? json_dumps(schema, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
  json_decref(schema);
  dg_registry_free(reg);
  if (!text) {
    fprintf(stderr, "drivegraph schema: out of memory\n");
    return EXIT_INVALID;
  }
  /* one newline at the end */
  size_t len = strlen(text);
  char *full = realloc(text, len + 2);
  if (!full) {
    free(text);
    fprintf(stderr, "drivegraph schema: out of memory\n");
    return EXIT_INVALID;
  }
  text = full;
  text[len] = '\n';
  text[len + 1] = '\0';
  if (out_write_file(cmd->name, output ? output : "-", text, len + 1) != 0)
    rc = EXIT_INVALID;
  free(text);
  return rc;
}

const command dg_cmd_schema = {
    .name = "schema",
    .operands = "",
    .summary = "JSON Schema of graph files, for editors and validators.",
    .help = "Prints the JSON Schema (draft-07) of graph files, generated from the\n"
            "parameter tables of the block types: every parameter with its type, range,\n"
            "default, unit and meaning, required keys, and no unknown keys. Editors use\n"
            "it for completion, hover help and checks as you type (see docs/cli.md,\n"
            "\"schema\"). `drivegraph validate` still checks what a schema cannot:\n"
            "increasing breakpoints, ports, cycles, inertia in every mode.\n"
            "With --plugin, the plugin's block types are in the schema too.\n",
    .options = schema_options,
    .footer = "Exit status: 0 ok, 1 a plugin or the output failed, 2 usage error.\n",
    .run = cmd_schema,
};
