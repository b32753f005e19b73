/* Shared pieces of the drivegraph command: one file per subcommand
 * (tools/cmd_*.c) defines a `const command`; drivegraph.c lists them. */
#ifndef DG_TOOL_H
#define DG_TOOL_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

/* Returned by option parsers when --help was printed: exit 0. */
#define HELP_SHOWN (-1)

typedef struct command {
  const char *name;
  const char *synopsis; /* arguments after "drivegraph NAME" */
  const char *summary;  /* one line for the command list */
  const char *help;     /* description and options for NAME --help */
  int (*run)(const struct command *cmd, int argc, char **argv);
} command;

void print_usage(const command *cmd, FILE *out);
void print_help(const command *cmd);
/* "drivegraph CMD: message", the usage line, and exit status 2. */
int usage_error(const command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The message for a getopt failure (opterr is off). */
int option_error(const command *cmd, int c, char **argv);
/* A library error as `file: /path: text` or `file:line:column: text`. */
void print_error(FILE *out, const dg_error *err, const char *fallback);
/* A strictly positive, finite number of seconds from an option value. */
bool parse_seconds(const char *text, double *out);
double now_seconds(void);

#endif
