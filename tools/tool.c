/* Helpers shared by the subcommands (tool.h). */
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
/* Shared helpers                                                           */

void print_usage(const command *cmd, FILE *out) {
  fprintf(out, "usage: drivegraph %s %s\n", cmd->name, cmd->synopsis);
}

void print_help(const command *cmd) {
  print_usage(cmd, stdout);
  printf("\n%s\n\n%s", cmd->summary, cmd->help);
}

int usage_error(const command *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "drivegraph %s: ", cmd->name);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  print_usage(cmd, stderr);
  fprintf(stderr, "Try 'drivegraph %s --help' for more information.\n", cmd->name);
  return EXIT_USAGE;
}

/* The message for a getopt failure (opterr is off so that all messages have
 * our form). */
int option_error(const command *cmd, int c, char **argv) {
  const char *arg = argv[optind - 1];
  if (c == ':')
    return usage_error(cmd, "option '%s' requires an argument", arg);
  const char *eq = strchr(arg, '=');
  if (optopt && eq && strncmp(arg, "--", 2) == 0)
    return usage_error(cmd, "option '%.*s' takes no argument", (int)(eq - arg), arg);
  if (optopt && strncmp(arg, "--", 2) != 0)
    return usage_error(cmd, "unknown option '-%c'", optopt);
  return usage_error(cmd, "unknown option '%s'", arg);
}

/* Prints a library error as `file: /path: text` or `file:line:column:
 * text`, naming `fallback` when the error carries no file. */
void print_error(FILE *out, const dg_error *err, const char *fallback) {
  dg_error e = *err;
  if (!e.file[0] && fallback)
    snprintf(e.file, sizeof e.file, "%s", fallback);
  char line[DG_ERROR_FILE_LEN + DG_ERROR_PATH_LEN + DG_ERROR_TEXT_LEN + 32];
  dg_error_format(&e, line, sizeof line);
  fprintf(out, "%s\n", line);
}

/* A strictly positive, finite number of seconds from an option value. */
bool parse_seconds(const char *text, double *out) {
  char *end;
  errno = 0;
  double x = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(x) || !(x > 0))
    return false;
  *out = x;
  return true;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
