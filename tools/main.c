/* drivegraph: the command-line tool (`drivegraph --help` lists the
 * subcommands, `drivegraph COMMAND --help` their options).
 *
 * Each subcommand is a `const command` in its own tools/cmd_NAME.c (a name,
 * its operands, help and option table, and a function taking the arguments
 * after the command name, which it reads with parse_options), listed in
 * `commands` below. Exit codes are the same everywhere: 0 ok, 1 invalid
 * input (with messages), 2 usage error. Unlike the library, the tool prints: problems found in the
 * user's files go to stdout for `validate` (they are its output) and to
 * stderr otherwise. */
#include "output.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The command table and main                                               */

#define DG_COMMAND(name) extern const command dg_cmd_##name;
#include "tool_commands.h"
#undef DG_COMMAND

static const command *const commands[] = {
#define DG_COMMAND(name) &dg_cmd_##name,
#include "tool_commands.h"
#undef DG_COMMAND
};enum { NUM_COMMANDS = sizeof commands / sizeof commands[0] };

static void print_main_usage(FILE *out) {
  fprintf(out, "usage: drivegraph COMMAND [ARGS...]\n\nCommands:\n");
  for (int i = 0; i < NUM_COMMANDS; i++)
    fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(out, "\nRun 'drivegraph COMMAND --help' for the options of a command.\n");
}

static const command *find_command(const char *name) {
  for (int i = 0; i < NUM_COMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0)
      return commands[i];
  return NULL;
}

static int unknown_command(const char *name) {
  const char *names[NUM_COMMANDS];
  for (int i = 0; i < NUM_COMMANDS; i++)
    names[i] = commands[i]->name;
  const char *close = dg_suggest(name, names, NUM_COMMANDS);
  if (close)
    fprintf(stderr, "drivegraph: unknown command '%s'; did you mean '%s'?\n", name, close);
  else
    fprintf(stderr, "drivegraph: unknown command '%s'\n", name);
  print_main_usage(stderr);
  return EXIT_USAGE;
}

/* `drivegraph help [COMMAND]`. */
static int main_help(int argc, char **argv) {
  if (argc < 3) {
    print_main_usage(stdout);
    return EXIT_OK;
  }
  const command *cmd = find_command(argv[2]);
  if (!cmd)
    return unknown_command(argv[2]);
  print_help(cmd);
  return EXIT_OK;
}

/* rc, or EXIT_INVALID when stdout could not take what was printed. */
static int stdout_written(const char *cmd, int rc) {
  return out_flush_stdout(cmd) != 0 && rc == EXIT_OK ? EXIT_INVALID : rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_main_usage(stderr);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
    return stdout_written("help", main_help(argc, argv));
  if (strcmp(name, "--version") == 0) {
    printf("drivegraph %s\n", DG_VERSION_STRING);
    return stdout_written("--version", EXIT_OK);
  }
  const command *cmd = find_command(name);
  if (!cmd)
    return unknown_command(name);
  /* what a command printed and did not flush itself (bench, --help) is
   * checked here: a full stdout is a failure, never a silent exit 0 */
  return stdout_written(cmd->name, cmd->run(cmd, argc - 1, argv + 1));
}
