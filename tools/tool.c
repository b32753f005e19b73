/* Helpers shared by the subcommands (tool.h): the option parser and the
 * help printed from the option tables, errors, graph files. */
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Help from the option tables                                              */

/* The option list's help column: at least this, more for a long option. */
#define HELP_COLUMN 20
#define USAGE_WIDTH 79

/* The argument name an option takes, or NULL for a flag. */
static const char *arg_name(const option_def *o) {
  if (o->kind == OPT_FLAG)
    return NULL;
  return o->arg ? o->arg : "VALUE";
}

/* "-o, --output FILE" or "--dt s" into buf. */
static int option_label(const option_def *o, char *buf, size_t size) {
  const char *arg = arg_name(o);
  char s[8] = "";
  if (o->short_name)
    snprintf(s, sizeof s, "-%c, ", o->short_name);
  return snprintf(buf, size, "%s--%s%s%s", s, o->name, arg ? " " : "", arg ? arg : "");
}

/* How usage lines and messages name the command: "drivegraph NAME", or
 * the program's own name. */
static const char *command_title(const command *cmd, char *buf, size_t size) {
  if (cmd->program)
    return cmd->program;
  snprintf(buf, size, "drivegraph %s", cmd->name);
  return buf;
}

void print_usage(const command *cmd, FILE *out) {
  char buf[128];
  const char *title = command_title(cmd, buf, sizeof buf);
  char line[1024];
  int len = snprintf(line, sizeof line, "usage: %s%s%s", title,
                     cmd->operands && *cmd->operands ? " " : "",
                     cmd->operands ? cmd->operands : "");
  int indent = (int)strlen("usage: ") + (int)strlen(title) + 1;
  fputs(line, out);
  /* the last line of the operands text is where the options continue */
  const char *nl = strrchr(line, '\n');
  int col = nl ? (int)strlen(nl + 1) : len;
  for (const option_def *o = cmd->options; o && o->name; o++) {
    const char *arg = arg_name(o);
    char item[128];
    int n = snprintf(item, sizeof item, "[--%s%s%s]%s", o->name, arg ? " " : "", arg ? arg : "",
                     o->kind == OPT_LIST || o->repeatable ? "..." : "");
    if (col + 1 + n > USAGE_WIDTH) {
      fprintf(out, "\n%*s%s", indent, "", item);
      col = indent + n;
    } else {
      fprintf(out, " %s", item);
      col += 1 + n;
    }
  }
  fputc('\n', out);
}

static void print_option(FILE *out, const char *label, const char *help, int column) {
  fprintf(out, "  %-*s", column - 2, label);
  if ((int)strlen(label) + 2 > column - 2) /* too long: the help starts below */
    fprintf(out, "\n%*s", column, "");
  for (const char *p = help; *p; p++) {
    fputc(*p, out);
    if (*p == '\n')
      fprintf(out, "%*s", column, "");
  }
  fputc('\n', out);
}

void print_help(const command *cmd) {
  print_usage(cmd, stdout);
  printf("\n%s\n\n", cmd->summary);
  if (cmd->help && *cmd->help)
    printf("%s\n", cmd->help);
  int column = HELP_COLUMN;
  char label[128];
  for (const option_def *o = cmd->options; o && o->name; o++) {
    int n = option_label(o, label, sizeof label) + 4; /* 2 before, 2 after */
    if (n > column && n <= HELP_COLUMN + 4)
      column = n;
  }
  printf("Options:\n");
  for (const option_def *o = cmd->options; o && o->name; o++) {
    option_label(o, label, sizeof label);
    print_option(stdout, label, o->help ? o->help : "", column);
  }
  print_option(stdout, "-h, --help", "show this help", column);
  if (cmd->footer && *cmd->footer)
    printf("\n%s", cmd->footer);
}

/* ------------------------------------------------------------------------ */
/* The parser                                                               */

int usage_error(const command *cmd, const char *fmt, ...) {
  char buf[128];
  const char *title = command_title(cmd, buf, sizeof buf);
  va_list ap;
  va_start(ap, fmt);
  char raw[1024], shown[2048]; /* it quotes arguments: escaped (docs/errors.md) */
  vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  dg_text_escape(shown, sizeof shown, raw);
  fprintf(stderr, "%s: %s\n", title, shown);
  print_usage(cmd, stderr);
  fprintf(stderr, "Try '%s --help' for more information.\n", title);
  return EXIT_USAGE;
}

/* The help option, a part of every table. */
static const option_def help_option = {.name = "help", .short_name = 'h', .kind = OPT_FLAG};

/* Notes option o as an exact match or one more prefix match of `name`. */
static void match_long(const option_def *o, const char *name, size_t len,
                       const option_def **exact, const option_def **prefix_of, int *prefixes) {
  if (strncmp(o->name, name, len) != 0)
    return;
  if (strlen(o->name) == len) {
    *exact = o;
  } else {
    *prefix_of = o;
    (*prefixes)++;
  }
}

/* The option named by the `len` characters of `name` (the table's or
 * --help): an exact match, else the only one it is a prefix of (as
 * getopt_long). *ambiguous is set when several are. */
static const option_def *find_long(const command *cmd, const char *name, size_t len,
                                   bool *ambiguous) {
  const option_def *exact = NULL, *prefix_of = NULL;
  int prefixes = 0;
  *ambiguous = false;
  if (len == 0)
    return NULL;
  for (const option_def *o = cmd->options; o && o->name; o++)
    match_long(o, name, len, &exact, &prefix_of, &prefixes);
  match_long(&help_option, name, len, &exact, &prefix_of, &prefixes);
  if (exact)
    return exact;
  *ambiguous = prefixes > 1;
  return prefixes == 1 ? prefix_of : NULL;
}

static const option_def *find_short(const command *cmd, char c) {
  if (c == 'h')
    return &help_option;
  for (const option_def *o = cmd->options; o && o->name; o++)
    if (o->short_name == c)
      return o;
  return NULL;
}

static int unknown_long(const command *cmd, const char *arg, size_t len, bool ambiguous) {
  const char *names[64];
  int n = 0;
  for (const option_def *o = cmd->options; o && o->name && n < 63; o++)
    names[n++] = o->name;
  names[n++] = "help";
  if (ambiguous) {
    char list[512] = "";
    for (int i = 0; i < n; i++)
      if (strncmp(names[i], arg + 2, len) == 0 && strlen(list) + strlen(names[i]) + 8 < sizeof list)
        strcat(strcat(strcat(list, *list ? ", " : ""), "--"), names[i]);
    return usage_error(cmd, "option '%.*s' is ambiguous (%s)", (int)len + 2, arg, list);
  }
  char word[128];
  snprintf(word, sizeof word, "%.*s", (int)len, arg + 2);
  const char *close = dg_suggest(word, names, n);
  if (close)
    return usage_error(cmd, "unknown option '--%s'; did you mean '--%s'?", word, close);
  return usage_error(cmd, "unknown option '--%s'", word);
}

static bool parse_number(const char *text, double *out) {
  char *end;
  errno = 0;
  double x = strtod(text, &end);
  if (end == text || *end != '\0' || errno == ERANGE || !isfinite(x))
    return false;
  *out = x;
  return true;
}

/* "--name" or "-x", as the user spelt the option. */
static void spelling(const option_def *o, bool as_short, char *buf, size_t size) {
  if (as_short)
    snprintf(buf, size, "-%c", o->short_name);
  else
    snprintf(buf, size, "--%s", o->name);
}

/* Stores `value` of option o into opts; EXIT_OK or EXIT_USAGE. */
static int store(const command *cmd, const option_def *o, bool as_short, const char *value,
                 void *opts, int argc) {
  char *dest = (char *)opts + o->offset;
  char who[80];
  spelling(o, as_short, who, sizeof who);
  double x;
  switch (o->kind) {
  case OPT_FLAG: *(bool *)dest = true; return EXIT_OK;
  case OPT_STRING: *(const char **)dest = value; return EXIT_OK;
  case OPT_LIST: {
    opt_list *l = (opt_list *)dest;
    if (!l->v && !(l->v = malloc(sizeof *l->v * (size_t)(argc > 0 ? argc : 1)))) {
      char buf[128];
      fprintf(stderr, "%s: out of memory\n", command_title(cmd, buf, sizeof buf));
      return EXIT_INVALID;
    }
    l->v[l->n++] = (char *)value; /* at most one value per argument: argc is room enough */
    return EXIT_OK;
  }
  case OPT_SECONDS:
    if (!parse_number(value, &x) || !(x > 0))
      return usage_error(cmd, "%s: expected %s (got '%s')", who,
                         o->expect ? o->expect : "a number of seconds > 0", value);
    *(double *)dest = x;
    return EXIT_OK;
  case OPT_NUMBER:
    if (!parse_number(value, &x) || !(x > 0))
      return usage_error(cmd, "%s: expected %s (got '%s')", who,
                         o->expect ? o->expect : "a number > 0", value);
    *(double *)dest = x;
    return EXIT_OK;
  case OPT_INT: {
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno == ERANGE || (double)v < o->min ||
        (double)v > o->max) {
      if (o->expect)
        return usage_error(cmd, "%s: expected %s (got '%s')", who, o->expect, value);
      if (o->max >= 1e9)
        return usage_error(cmd, "%s: expected a whole number >= %.0f (got '%s')", who, o->min,
                           value);
      return usage_error(cmd, "%s: expected a whole number from %.0f to %.0f (got '%s')", who,
                         o->min, o->max, value);
    }
    *(long *)dest = v;
    return EXIT_OK;
  }
  case OPT_CHOICE: {
    int n = 0;
    char all[256] = "";
    for (; o->choices[n]; n++) {
      if (strcmp(value, o->choices[n]) == 0) {
        *(int *)dest = n + 1;
        return EXIT_OK;
      }
      if (strlen(all) + strlen(o->choices[n]) + 3 < sizeof all)
        strcat(strcat(all, n ? ", " : ""), o->choices[n]);
    }
    const char *what = o->expect ? o->expect : "value";
    const char *close = dg_suggest(value, o->choices, n);
    if (close)
      return usage_error(cmd, "%s: unknown %s '%s'; did you mean '%s'? (%s)", who, what, value,
                         close, all);
    return usage_error(cmd, "%s: unknown %s '%s' (%s)", who, what, value, all);
  }
  case OPT_CALL: {
    char why[256] = "";
    if (!o->parse(value, dest, why, sizeof why))
      return usage_error(cmd, "%s: %s (got '%s')", who, why[0] ? why : "bad value", value);
    return EXIT_OK;
  }
  }
  return EXIT_USAGE;
}

/* One "--name", "--name=value" or "--name value" at argv[*i]. */
static int parse_long(const command *cmd, int argc, char **argv, int *i, void *opts) {
  const char *arg = argv[*i];
  const char *eq = strchr(arg, '=');
  size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
  bool ambiguous;
  const option_def *o = find_long(cmd, arg + 2, len, &ambiguous);
  if (!o)
    return unknown_long(cmd, arg, len, ambiguous);
  if (o == &help_option) {
    print_help(cmd);
    return HELP_SHOWN;
  }
  if (o->kind == OPT_FLAG) {
    if (eq)
      return usage_error(cmd, "option '--%s' takes no argument", o->name);
    return store(cmd, o, false, NULL, opts, argc);
  }
  const char *value = eq ? eq + 1 : NULL;
  if (!value) {
    if (*i + 1 >= argc)
      return usage_error(cmd, "option '--%s' requires an argument", o->name);
    value = argv[++*i];
  }
  return store(cmd, o, false, value, opts, argc);
}

/* "-x", "-xVALUE", "-x VALUE" or grouped flags "-vh" at argv[*i]. */
static int parse_short(const command *cmd, int argc, char **argv, int *i, void *opts) {
  const char *arg = argv[*i];
  for (const char *c = arg + 1; *c; c++) {
    const option_def *o = find_short(cmd, *c);
    if (!o)
      return usage_error(cmd, "unknown option '-%c'", *c);
    if (o == &help_option) {
      print_help(cmd);
      return HELP_SHOWN;
    }
    if (o->kind == OPT_FLAG) {
      int rc = store(cmd, o, true, NULL, opts, argc);
      if (rc != EXIT_OK)
        return rc;
      continue;
    }
    const char *value = c[1] ? c + 1 : NULL;
    if (!value) {
      if (*i + 1 >= argc)
        return usage_error(cmd, "option '-%c' requires an argument", *c);
      value = argv[++*i];
    }
    return store(cmd, o, true, value, opts, argc);
  }
  return EXIT_OK;
}

int parse_options(const command *cmd, int argc, char **argv, void *opts, operands *args) {
  int n = 0;
  bool only_operands = false;
  /* operands are moved down to argv[1..n]; an option's value is always at
   * or after its option, so nothing not yet read is overwritten */
  for (int i = 1; i < argc; i++) {
    char *arg = argv[i];
    int rc = EXIT_OK;
    if (only_operands || arg[0] != '-' || arg[1] == '\0')
      argv[1 + n++] = arg;
    else if (strcmp(arg, "--") == 0)
      only_operands = true;
    else if (arg[1] == '-')
      rc = parse_long(cmd, argc, argv, &i, opts);
    else
      rc = parse_short(cmd, argc, argv, &i, opts);
    if (rc != EXIT_OK)
      return rc;
  }
  args->n = n;
  args->v = argv + 1;
  return EXIT_OK;
}

void options_free(const command *cmd, void *opts) {
  for (const option_def *o = cmd->options; o && o->name; o++)
    if (o->kind == OPT_LIST) {
      opt_list *l = (opt_list *)((char *)opts + o->offset);
      free(l->v);
      *l = (opt_list){0};
    }
}

/* ------------------------------------------------------------------------ */
/* Errors, numbers, time                                                    */

/* Prints a library error as `file: /path: text` or `file:line:column:
 * text`, naming `fallback` when the error carries no file. */
void print_error(FILE *out, const dg_error *err, const char *fallback) {
  dg_error e = *err;
  if (!e.file[0] && fallback)
    dg_text_escape(e.file, sizeof e.file, fallback);
  char line[DG_ERROR_FILE_LEN + DG_ERROR_PATH_LEN + DG_ERROR_TEXT_LEN + 32];
  dg_error_format(&e, line, sizeof line);
  fprintf(out, "%s\n", line);
}

void print_warnings(FILE *out, const dg_graph *g, const char *fallback) {
  for (int i = 0; i < dg_graph_warning_count(g); i++)
    print_error(out, dg_graph_warning(g, i), fallback);
}

const char *esc(const char *text) {
  static char bufs[4][1024];
  static int next;
  char *b = bufs[next++ % 4];
  dg_text_escape(b, sizeof bufs[0], text);
  return b;
}

/* A strictly positive, finite number of seconds from an option value. */
bool parse_seconds(const char *text, double *out) {
  double x;
  if (!parse_number(text, &x) || !(x > 0))
    return false;
  *out = x;
  return true;
}

bool parse_step_count(const char *value, void *dest, char *why, size_t size) {
  double x;
  if (!parse_number(value, &x) || x < 1 || x > MAX_MAX_STEPS || x != floor(x)) {
    snprintf(why, size, "expected a whole number of steps from 1 to %.0e", MAX_MAX_STEPS);
    return false;
  }
  *(double *)dest = x;
  return true;
}

int refuse_steps(const command *cmd, double steps, double duration, double dt, double max_steps) {
  if (steps > MAX_MAX_STEPS) {
    fprintf(stderr,
            "drivegraph %s: %.3g steps (%g s at dt %g s) are more than any run may take "
            "(%.0e): give a larger --dt or a shorter --duration\n",
            cmd->name, steps, duration, dt, MAX_MAX_STEPS);
    return EXIT_USAGE;
  }
  fprintf(stderr,
          "drivegraph %s: %.0f steps (%g s at dt %g s) are more than --max-steps %.0f: give a "
          "larger --dt or a shorter --duration, or --max-steps %.0f to run them anyway\n",
          cmd->name, steps, duration, dt, max_steps, steps);
  return EXIT_USAGE;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double process_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Graph files                                                              */

bool is_yaml_graph(const char *path) {
  size_t n = strlen(path);
  return (n >= 5 && strcmp(path + n - 5, ".yaml") == 0) ||
         (n >= 4 && strcmp(path + n - 4, ".yml") == 0);
}

static char *read_file_text(const char *path, dg_error *err) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int why = f ? 0 : errno;
  while (f && !why) {
    if (len + 1 >= cap) {
      cap = cap ? 2 * cap : 1 << 16;
      char *nb = realloc(buf, cap);
      if (!nb) {
        why = ENOMEM;
        break;
      }
      buf = nb;
    }
    len += fread(buf + len, 1, cap - len - 1, f);
    if (ferror(f))
      why = EIO;
    else if (feof(f))
      break;
  }
  if (f)
    fclose(f);
  if (why) {
    free(buf);
    *err = (dg_error){.code = DG_ERR_IO};
    snprintf(err->file, sizeof err->file, "%s", path);
    snprintf(err->text, sizeof err->text, "cannot read file: %s", strerror(why));
    return NULL;
  }
  buf[len] = '\0';
  return buf;
}

char *graph_json_text(const char *path, dg_error *err) {
  if (is_yaml_graph(path))
    return dg_import_yaml_to_json(path, NULL, NULL, err);
  return read_file_text(path, err);
}

char *tool_trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  char *end = s + strlen(s);
  while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
    *--end = '\0';
  return s;
}

/* The directory of the running executable. */
static bool exe_dir(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size - 1);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (!slash)
    return false;
  *slash = '\0';
  return true;
}

bool find_shipped_file(const char *env_var, const char *build_subdir, const char *installed_dir,
                       const char *name, char *path, size_t size, char *tried,
                       size_t tried_size) {
  char dirs[3][PATH_MAX];
  int nd = 0;
  const char *env = getenv(env_var);
  if (env && *env)
    snprintf(dirs[nd++], PATH_MAX, "%s", env);
  char exe[PATH_MAX];
  if (exe_dir(exe, sizeof exe))
    snprintf(dirs[nd++], PATH_MAX, "%.*s/%s", PATH_MAX - 64, exe, build_subdir);
  snprintf(dirs[nd++], PATH_MAX, "%s", installed_dir);
  tried[0] = '\0';
  for (int k = 0; k < nd; k++) {
    snprintf(path, size, "%.4000s/%s", dirs[k], name);
    if (access(path, R_OK) == 0)
      return true;
    size_t len = strlen(tried);
    snprintf(tried + len, tried_size - len, "%s%s", len ? ", " : "", path);
  }
  return false;
}
