/* Shared pieces of the drivegraph command: one file per subcommand
 * (tools/cmd_*.c) defines a `const command`; main.c lists them.
 *
 * Options are data: each command has a table of `option_def` (long name,
 * short name, kind, destination, argument name, help text), and one parser
 * (parse_options) reads every command's arguments from its table. The
 * usage line and the option list of `--help` are printed from the same
 * table, so what the help says and what the parser accepts cannot differ. */
#ifndef DG_TOOL_H
#define DG_TOOL_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

/* Returned by parse_options when --help was printed: exit 0. */
#define HELP_SHOWN (-1)

/* ------------------------------------------------------------------------ */
/* Option tables                                                            */

typedef enum opt_kind {
  OPT_FLAG,    /* bool: true when given */
  OPT_STRING,  /* const char *: the argument (the last one when repeated) */
  OPT_LIST,    /* opt_list: every argument, in order (repeatable) */
  OPT_SECONDS, /* double: a finite number of seconds > 0 */
  OPT_NUMBER,  /* double: a finite number > 0 (`expect` names the unit) */
  OPT_INT,     /* long: a whole number in [min, max] */
  OPT_CHOICE,  /* int: 1 + the index of the argument in `choices` (0: not given) */
  OPT_CALL,    /* `parse` reads the argument into the destination */
} opt_kind;

/* The arguments of a repeatable option (they point into argv). */
typedef struct opt_list {
  int n;
  char **v;
} opt_list;

typedef struct option_def {
  const char *name;  /* long name without "--"; NULL ends a table */
  char short_name;   /* 0: none */
  opt_kind kind;
  size_t offset;     /* of the destination in the command's options struct */
  const char *arg;   /* the argument's name in the help ("FILE", "s"); NULL for a flag */
  const char *help;  /* one line per '\n', aligned in the option list */
  double min, max;   /* OPT_INT: the range */
  const char *expect; /* a bad value: "expected EXPECT (got 'x')"; OPT_CHOICE: the noun */
  const char *const *choices; /* OPT_CHOICE: NULL-terminated */
  bool repeatable;   /* OPT_CALL: each use adds (shown as "..."); OPT_LIST always is */
  /* OPT_CALL: reads `value` into `dest`; false with `why` ("expected ...")
   * for a bad value. */
  bool (*parse)(const char *value, void *dest, char *why, size_t size);
} option_def;

/* Destinations, checked at compile time: `field` of struct S must have
 * type T (comparing distinct pointer types is an error with -Werror). */
#define OPT_AT(S, field, T) (offsetof(S, field) + 0 * sizeof(&((S *)0)->field == (T *)0))
#define OPT_FLAG_AT(S, f) .kind = OPT_FLAG, .offset = OPT_AT(S, f, bool)
#define OPT_STRING_AT(S, f) .kind = OPT_STRING, .offset = OPT_AT(S, f, const char *)
#define OPT_LIST_AT(S, f) .kind = OPT_LIST, .offset = OPT_AT(S, f, opt_list)
#define OPT_SECONDS_AT(S, f) .kind = OPT_SECONDS, .offset = OPT_AT(S, f, double)
#define OPT_NUMBER_AT(S, f) .kind = OPT_NUMBER, .offset = OPT_AT(S, f, double)
#define OPT_INT_AT(S, f) .kind = OPT_INT, .offset = OPT_AT(S, f, long)
#define OPT_CHOICE_AT(S, f) .kind = OPT_CHOICE, .offset = OPT_AT(S, f, int)
#define OPT_CALL_AT(S, f, T) .kind = OPT_CALL, .offset = OPT_AT(S, f, T)

/* The `--plugin LIB.so` entry, the same in every command that has it. */
#define OPT_PLUGIN_AT(S, f)                                                                   \
  {.name = "plugin", OPT_LIST_AT(S, f), .arg = "LIB.so",                                      \
   .help = "load block classes from a shared library (its\n"                                  \
           "drivegraph_plugin_init function registers them;\n"                                \
           "see docs/writing-blocks.md); may be repeated"}

/* `--max-steps N`: runs of more steps than N are refused before they start,
 * with the remedy (docs/output.md, "Long runs"). The default, and the
 * largest N (the library's limit). */
#define DEFAULT_MAX_STEPS 1e8
#define MAX_MAX_STEPS 1e12
/* Reads a whole number of steps from 1 to MAX_MAX_STEPS, as digits or in
 * e-notation ("1e9"), into a double (the OPT_CALL parser of --max-steps). */
bool parse_step_count(const char *value, void *dest, char *why, size_t size);
#define OPT_MAX_STEPS_AT(S, f)                                                                \
  {.name = "max-steps", OPT_CALL_AT(S, f, double), .arg = "N", .parse = parse_step_count,     \
   .help = "refuse a run of more than N steps (duration / dt)\n"                              \
           "before it starts (default 1e8; at most 1e12)"}
/* "100000000 steps (10 s at dt 1e-07 s) are more than --max-steps N: ..."
 * on stderr, with the remedy; EXIT_USAGE. */
struct command;
int refuse_steps(const struct command *cmd, double steps, double duration, double dt,
                 double max_steps);

/* The arguments that are not options, in their order. */
typedef struct operands {
  int n;
  char **v;
} operands;

typedef struct command {
  const char *name;
  /* NULL for a subcommand of drivegraph; a program of its own that reads
   * its arguments with parse_options (bench/main.c) gives its name, which
   * usage lines and messages then show in place of "drivegraph NAME" */
  const char *program;
  const char *operands; /* what follows "drivegraph NAME" besides options */
  const char *summary;  /* one line for the command list */
  const char *help;     /* description for NAME --help, before the options */
  const option_def *options; /* the option table (--help is implicit) */
  const char *footer;   /* after the options in --help (exit status) */
  int (*run)(const struct command *cmd, int argc, char **argv);
} command;

/* Reads argv[1..argc-1] into `opts` (a struct the table's offsets point
 * into, with its defaults already set) by cmd->options. Options and
 * operands may come in any order; "--" ends the options. Accepted forms:
 * --name VALUE, --name=VALUE, a unique prefix of a long name, -x VALUE,
 * -xVALUE and grouped short flags (-vh). The operands are moved to
 * argv[1..] and returned in `args`. Returns EXIT_OK, HELP_SHOWN after
 * printing the help, or EXIT_USAGE after a message naming the option: an
 * unknown one (with the closest name), an argument missing or given to a
 * flag, a bad value (what was expected and what was given). Free the
 * lists with options_free, also after an error. */
int parse_options(const command *cmd, int argc, char **argv, void *opts, operands *args);
/* Frees the OPT_LIST destinations of opts. */
void options_free(const command *cmd, void *opts);

void print_usage(const command *cmd, FILE *out);
void print_help(const command *cmd);
/* "drivegraph CMD: message" (or "PROGRAM: message"), the usage line, and
 * exit status 2. */
int usage_error(const command *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A library error as `file: /path: text` or `file:line:column: text`
 * (`fallback`, escaped, names the file when the error has none). */
void print_error(FILE *out, const dg_error *err, const char *fallback);
/* The graph's load warnings (dg_graph_warning), one print_error line each. */
void print_warnings(FILE *out, const dg_graph *g, const char *fallback);
/* `text` with control, format and bidi characters escaped (dg_text_escape)
 * for printing: a path or name from the command line or a file. In one of
 * four rotating buffers, so up to four may be used in one printf. */
const char *esc(const char *text);
/* A file that ships with drivegraph: `name` in $`env_var` (when set), in
 * `build_subdir` beside the running executable (a build tree), or in
 * `installed_dir`, the first readable one; its path in `path`. Without one,
 * false with the paths tried, comma-separated, in `tried`. */
bool find_shipped_file(const char *env_var, const char *build_subdir, const char *installed_dir,
                       const char *name, char *path, size_t size, char *tried,
                       size_t tried_size);
/* A strictly positive, finite number of seconds from an option value. */
bool parse_seconds(const char *text, double *out);
double now_seconds(void);
/* The CPU time the process has used so far (s), from its start: loading
 * the program and its libraries included. */
double process_cpu_seconds(void);

/* ------------------------------------------------------------------------ */
/* Graph files                                                              */

/* True for a path the library reads as a YAML vehicle config (.yaml, .yml;
 * the rule of dg_graph_load_file). */
bool is_yaml_graph(const char *path);
/* The graph JSON text of a graph file of any form: the file itself, or the
 * JSON a YAML config converts to (dg_import_yaml_to_json). malloc'ed; NULL
 * with `err` filled (file, and line and column where known). */
char *graph_json_text(const char *path, dg_error *err);

/* Strips leading and trailing spaces and tabs from `s` in place; returns
 * the first kept character (a list item of --signals, --set, --plot-signals). */
char *tool_trim(char *s);

#endif
