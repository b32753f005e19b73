/* drivegraph validate: every problem of every file, one per line. */
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* validate                                                                 */

static void print_problem(const dg_error *err, void *user) { print_error(stdout, err, user); }

/* Validates one file; true when it is valid. */
static bool validate_one(const char *path) {
  dg_graph_info info = {0};
  int problems = dg_graph_validate_file(NULL, path, print_problem, (void *)path, &info);
  if (problems > 0)
    return false;
  printf("%s: ok (%d blocks, %d connections, %d DOFs in the start mode, %d modes checked)\n", path,
         info.blocks, info.connections, info.dofs, info.modes);
  return true;
}

static int cmd_validate(const command *cmd, int argc, char **argv) {
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') {
      print_help(cmd);
      return EXIT_OK;
    }
    return option_error(cmd, c, argv);
  }
  if (optind >= argc)
    return usage_error(cmd, "no graph file given");
  bool all_valid = true;
  for (int i = optind; i < argc; i++)
    all_valid &= validate_one(argv[i]);
  fflush(stdout);
  return all_valid ? EXIT_OK : EXIT_INVALID;
}

const command dg_cmd_validate = {
    .name = "validate",
        .synopsis = "GRAPH...",
        .summary = "Check graph files and report every problem.",
        .help = "Prints each problem on its own line as 'FILE: /json/pointer: message'\n"
                "(syntax errors as 'FILE:line:column: message'), or for a valid file\n"
                "'FILE: ok (N blocks, M connections, K DOFs in the start mode, J modes "
                "checked)'.\n\n"
                "Options:\n"
                "  -h, --help        show this help\n\n"
                "Exit status: 0 all files valid, 1 some file invalid, 2 usage error.\n",
        .run = cmd_validate,
};
