/* drivegraph import: a YAML vehicle config, a Chrono::Vehicle engine +
 * transmission pair, or a row of FASTSim's vehicle table
 * (`import fastsim FILE.csv --row N | --name NAME`), to a graph file.
 *
 * The graph is checked by loading it before anything is written, and -o
 * writes a temporary file in the target's directory that is renamed over
 * the target at the end (tools/output.h; a device or FIFO is written in
 * place): a failed import leaves nothing behind. Warnings
 * (a key that looks misspelt, a value adjusted) always go to stderr; notes
 * (keys ignored, defaults taken, conversions) only with --verbose. */
#include "output.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct import_opts {
  const char *out;     /* NULL: stdout */
  const char *vehicle; /* Chrono: the vehicle config */
  bool verbose;
  long row;            /* FASTSim: the row's selection; -1 none */
  const char *name;    /* FASTSim: the row's name */
  const char *cycle;   /* FASTSim: the driver's trace */
  bool linear;         /* FASTSim: linear efficiency maps */
  bool columns;        /* FASTSim: print the column table */
  const char *files[2];
  int n_files;
} import_opts;

static void print_note(const dg_error *e, void *user) {
  const import_opts *o = user;
  if (o->verbose || strncmp(e->text, "warning: ", 9) == 0)
    print_error(stderr, e, NULL);
}

static bool has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static const option_def import_options[] = {
    {.name = "output", .short_name = 'o', OPT_STRING_AT(import_opts, out), .arg = "FILE",
     .help = "write the graph to FILE (default: stdout); nothing is\n"
             "written when the import fails"},
    {.name = "vehicle", OPT_STRING_AT(import_opts, vehicle), .arg = "CONFIG",
     .help = "Chrono: the vehicle (mass, wheels, drive type, final\n"
             "drive...) from a YAML config"},
    {.name = "verbose", .short_name = 'v', OPT_FLAG_AT(import_opts, verbose),
     .help = "also print notes: keys ignored, defaults taken,\n"
             "conversions made (warnings are always printed)"},
    {.name = "row", OPT_INT_AT(import_opts, row), .arg = "N", .min = 0, .max = 1e9,
     .help = "fastsim: the vehicle whose 'selection' is N"},
    {.name = "name", OPT_STRING_AT(import_opts, name), .arg = "NAME",
     .help = "fastsim: the vehicle whose 'Scenario name' is NAME"},
    {.name = "cycle", OPT_STRING_AT(import_opts, cycle), .arg = "CYCLE.csv",
     .help = "fastsim: a FASTSim cycle (cycSecs, cycMps) as the\n"
             "driver's trace (default: a 45 s launch and stop)"},
    {.name = "linear", OPT_FLAG_AT(import_opts, linear),
     .help = "fastsim: interpolate the efficiency maps linearly\n"
             "(default: FASTSim's grid lookup)"},
    {.name = "columns", OPT_FLAG_AT(import_opts, columns),
     .help = "fastsim: print the columns read and what each becomes"},
    {0},
};

static int cmd_import(const command *cmd, int argc, char **argv) {
  import_opts o = {.row = -1};
  operands args;
  int rc = parse_options(cmd, argc, argv, &o, &args);
  if (rc != EXIT_OK)
    return rc == HELP_SHOWN ? EXIT_OK : rc;
  bool fastsim = args.n > 0 && strcmp(args.v[0], "fastsim") == 0;
  if (!fastsim && (o.row >= 0 || o.name || o.cycle || o.linear || o.columns))
    return usage_error(cmd, "--row, --name, --cycle, --linear and --columns are for "
                            "'import fastsim FILE.csv'");
  if (fastsim && o.columns) {
    const char *name, *use;
    printf("| column | becomes |\n|---|---|\n");
    for (int i = 0; dg_import_fastsim_column(i, &name, &use); i++)
      printf("| `%s` | %s |\n", name, use);
    return EXIT_OK;
  }
  if (fastsim) {
    if (args.n != 2)
      return usage_error(cmd, "import fastsim takes one vehicle table (FILE.csv)");
    if ((o.row >= 0) == (o.name != NULL))
      return usage_error(cmd, "import fastsim needs one of --row N and --name NAME");
    if (o.vehicle)
      return usage_error(cmd, "--vehicle is for Chrono imports");
    o.files[0] = args.v[1];
    o.n_files = 1;
  }
  if (fastsim)
    args.n = 0;
  for (int i = 0; i < args.n; i++) {
    if (o.n_files == 2)
      return usage_error(cmd, "at most two input files (got '%s' too)", args.v[i]);
    o.files[o.n_files++] = args.v[i];
  }
  if (o.n_files == 0)
    return usage_error(cmd, "no input file given");
  if (fastsim)
    goto convert;
  if (o.n_files == 1 && has_suffix(o.files[0], ".json"))
    return usage_error(cmd, "a Chrono import needs the engine and the transmission file "
                            "(got only '%s')", o.files[0]);
  if (o.n_files == 1 && o.vehicle)
    return usage_error(cmd, "--vehicle is for Chrono imports (a YAML config is the vehicle)");
convert:
  if (o.out && strcmp(o.out, "-") == 0)
    o.out = NULL;

  dg_error err;
  dg_fastsim_options fo = {.row = (int)o.row, .name = o.name, .cycle = o.cycle,
                           .linear_efficiency = o.linear};
  char *json = fastsim ? dg_import_fastsim_to_json(o.files[0], &fo, print_note, &o, &err)
               : o.n_files == 1
                   ? dg_import_yaml_to_json(o.files[0], print_note, &o, &err)
                   : dg_import_chrono_to_json(o.files[0], o.files[1], o.vehicle, print_note, &o,
                                              &err);
  if (!json) {
    print_error(stderr, &err, o.files[0]);
    return EXIT_INVALID;
  }
  /* the graph must load before it is written */
  dg_graph *g = dg_graph_load_string(NULL, json, o.out ? o.out : "<output>", &err);
  if (!g) {
    fprintf(stderr, "drivegraph import: the converted graph does not load (a bug in the "
                    "importer):\n");
    print_error(stderr, &err, NULL);
    free(json);
    return EXIT_INVALID;
  }
  dg_graph_free(g);
  if (out_write_file(cmd->name, o.out ? o.out : "-", json, strlen(json)) != 0)
    rc = EXIT_INVALID;
  else if (o.out && o.verbose)
    fprintf(stderr, "drivegraph import: wrote %s\n", esc(o.out));
  free(json);
  return rc;
}

const command dg_cmd_import = {
    .name = "import",
    .operands = "CONFIG.yaml | ENGINE.json TRANSMISSION.json | fastsim FILE.csv",
    .summary = "Convert a YAML vehicle config, Chrono powertrain files or a FASTSim vehicle to a "
               "graph.",
    .help =
        "One YAML vehicle config (top-level vehicle parameters and an optional\n"
        "'powertrain:' block with engine, gearbox and shift), or a Chrono::Vehicle\n"
        "engine file and transmission file (templates EngineSimpleMap, EngineShafts,\n"
        "EngineSimple; AutomaticTransmissionSimpleMap, AutomaticTransmissionShafts,\n"
        "AutomaticTransmissionSimpleCVT, ManualTransmissionShafts), becomes the\n"
        "equivalent graph, written as pretty JSON. Values a file leaves out come\n"
        "from the default sedan (docs/import.md, 'YAML vehicle configs').\n"
        "'import fastsim FILE.csv --row N | --name NAME' reads one row of FASTSim's\n"
        "vehicle table (FASTSim_py_veh_db.csv): a conventional (Conv) or battery-\n"
        "electric (BEV) vehicle with FASTSim's mass, road load, efficiency maps,\n"
        "battery and a driver (docs/import.md, 'FASTSim vehicles'); hybrids are\n"
        "refused. Errors are 'FILE:line:column: column: message'.\n"
        "Every command that takes a graph (validate, sim, dot, bench, sweep) also\n"
        "accepts a .yaml/.yml config directly.\n\n"
        "Errors are printed as 'FILE:line:column: key.path: message'.\n",
    .options = import_options,
    .footer = "Exit status: 0 ok, 1 invalid input or an output that could not be written\n"
              "(named with the reason; FILE is then left as it was), 2 usage error.\n",
    .run = cmd_import,
};
