/* Shared services (lib/util.c): codes, error values and formatting, the
 * problem collector, the arena, JSON pointers, ranges as message text,
 * suggestions, reading files and JSON syntax errors with line and column;
 * and block.h's numeric helpers for block authors (dg_sign, dg_clamp01,
 * dg_fmax, dg_fmin),
 * which the built-in blocks share. */
#include "internal.h"
#include "testutil.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- codes and errors ---------------------------------------------------- */

START_TEST(code_names) {
  ck_assert_str_eq(dg_code_name(DG_OK), "OK");
  ck_assert_str_eq(dg_code_name(DG_ERR_SYNTAX), "ERR_SYNTAX");
  ck_assert_str_eq(dg_code_name(DG_ERR_RANGE), "ERR_RANGE");
  ck_assert_str_eq(dg_code_name(DG_ERR_USAGE), "ERR_USAGE");
  ck_assert_str_eq(dg_code_name(-1), "?");
  ck_assert_str_eq(dg_code_name(DG_CODE_COUNT), "?");
}
END_TEST

static dg_error make_error(const char *file, const char *path, int line, int column,
                           const char *text) {
  dg_error e;
  dgp_error_clear(&e);
  e.code = line ? DG_ERR_SYNTAX : DG_ERR_RANGE;
  snprintf(e.file, sizeof e.file, "%s", file);
  snprintf(e.path, sizeof e.path, "%s", path);
  e.line = line;
  e.column = column;
  snprintf(e.text, sizeof e.text, "%s", text);
  return e;
}

static const struct {
  const char *file, *path;
  int line, column;
  const char *text, *out;
} formats[] = {
    {"g.json", "", 3, 7, "duplicate object key \"a\"", "g.json:3:7: duplicate object key \"a\""},
    {"", "", 3, 7, "x", "3:7: x"},
    {"g.json", "", 3, 0, "x", "g.json:3: x"},
    {"g.json", "/blocks/clutch/max_torque", 0, 0, "must be > 0 (got -5)",
     "g.json: /blocks/clutch/max_torque: must be > 0 (got -5)"},
    {"g.json", "", 0, 0, "cannot read file", "g.json: cannot read file"},
    {"", "/blocks/a", 0, 0, "unknown parameter", "/blocks/a: unknown parameter"},
    {"", "", 0, 0, "no JSON text given", "no JSON text given"},
};

START_TEST(error_format) {
  dg_error e = make_error(formats[_i].file, formats[_i].path, formats[_i].line, formats[_i].column,
                          formats[_i].text);
  char buf[512];
  int n = dg_error_format(&e, buf, sizeof buf);
  ck_assert_str_eq(buf, formats[_i].out);
  ck_assert_int_eq(n, (int)strlen(formats[_i].out));
}
END_TEST

START_TEST(error_format_truncates_like_snprintf) {
  dg_error e = make_error("g.json", "/a", 0, 0, "text");
  char small[5];
  ck_assert_int_eq(dg_error_format(&e, small, sizeof small), 16);
  ck_assert_str_eq(small, "g.js");
  ck_assert_int_eq(dg_error_format(&e, NULL, 0), 16);
  /* An error without text still says something. */
  dg_error bare;
  dgp_error_clear(&bare);
  bare.code = DG_ERR_NOMEM;
  char buf[64];
  dg_error_format(&bare, buf, sizeof buf);
  ck_assert_str_eq(buf, "out of memory");
}
END_TEST

START_TEST(error_set_and_clear) {
  dg_error e;
  dgp_error_set(&e, DG_ERR_USAGE, "f.json", "/x", "bad %s %d", "thing", 3);
  ck_assert_int_eq(e.code, DG_ERR_USAGE);
  ck_assert_str_eq(e.file, "f.json");
  ck_assert_str_eq(e.path, "/x");
  ck_assert_str_eq(e.text, "bad thing 3");
  ck_assert_int_eq(e.line, 0);
  /* The latest call wins: callers clear once and stop at the first failure. */
  dgp_error_set(&e, DG_ERR_IO, NULL, NULL, "second");
  ck_assert_int_eq(e.code, DG_ERR_IO);
  ck_assert_str_eq(e.file, "");
  ck_assert_str_eq(e.path, "");
  dgp_error_clear(&e);
  ck_assert_int_eq(e.code, DG_OK);
  ck_assert_str_eq(e.text, "");
  dgp_error_set(NULL, DG_ERR_IO, "", "", "ignored");
  dgp_error_clear(NULL);
  /* Long texts are cut, never overflow. */
  char long_text[1000];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  dgp_error_set(&e, DG_ERR_IO, long_text, long_text, "%s", long_text);
  ck_assert_uint_eq(strlen(e.text), DG_ERROR_TEXT_LEN - 1);
  ck_assert_uint_eq(strlen(e.file), DG_ERROR_FILE_LEN - 1);
  ck_assert_uint_eq(strlen(e.path), DG_ERROR_PATH_LEN - 1);
}
END_TEST

/* ---- collector ------------------------------------------------------------ */

typedef struct seen {
  int n;
  dg_error e[8];
} seen;

static void collect(const dg_error *err, void *user) {
  seen *s = user;
  if (s->n < 8)
    s->e[s->n++] = *err;
}

START_TEST(diag_collects_every_problem) {
  seen s = {0};
  dg_diag d;
  dgp_diag_init(&d, "sedan.json", collect, &s);
  ck_assert_int_eq(d.count, 0);
  dgp_diag_add(&d, DG_ERR_RANGE, "/blocks/gear/ratio", "must be > %d (got %g)", 0, -1.0);
  dgp_diag_add(&d, DG_ERR_UNKNOWN, "", "second");
  dgp_diag_add(&d, DG_ERR_PORT, NULL, "third");
  ck_assert_int_eq(d.count, 3);
  ck_assert_int_eq(s.n, 3);
  ck_assert_str_eq(d.first.path, "/blocks/gear/ratio");
  ck_assert_str_eq(d.first.text, "must be > 0 (got -1)");
  ck_assert_int_eq(d.first.code, DG_ERR_RANGE);
  for (int i = 0; i < 3; i++)
    ck_assert_str_eq(s.e[i].file, "sedan.json");
  ck_assert_str_eq(s.e[1].text, "second");
  ck_assert_str_eq(s.e[2].path, "");

  dg_error err;
  dgp_error_clear(&err);
  dgp_diag_to_error(&d, &err);
  ck_assert_str_eq(err.text, "must be > 0 (got -1)");
  dgp_diag_to_error(&d, NULL);
}
END_TEST

START_TEST(diag_without_callback_or_problems) {
  dg_diag d;
  dgp_diag_init(&d, NULL, NULL, NULL);
  dg_error err = make_error("keep", "", 0, 0, "unchanged");
  dgp_diag_to_error(&d, &err);
  ck_assert_str_eq(err.text, "unchanged");
  dgp_diag_add(&d, DG_ERR_IO, "", "x");
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first.file, "");
  dgp_diag_add(NULL, DG_ERR_IO, "", "no collector: ignored");
}
END_TEST

/* ---- arena ---------------------------------------------------------------- */

START_TEST(arena_aligned_zeroed_and_large) {
  dg_arena *a = dgp_arena_new();
  ck_assert_ptr_nonnull(a);
  unsigned char *prev = NULL;
  for (size_t size = 0; size < 3000; size += 7) {
    unsigned char *p = dgp_arena_alloc(a, size);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
    ck_assert_ptr_ne(p, prev);
    for (size_t i = 0; i < size; i++)
      ck_assert_uint_eq(p[i], 0);
    memset(p, 0xFF, size); /* must not touch any other allocation */
    prev = p;
  }
  /* A large block gets its own chunk; small ones continue around it. */
  size_t big = 1u << 20;
  unsigned char *b = dgp_arena_alloc(a, big);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq((uintptr_t)b % 16, 0);
  ck_assert_uint_eq(b[0], 0);
  ck_assert_uint_eq(b[big - 1], 0);
  double *d = dgp_arena_alloc(a, 3 * sizeof(double));
  ck_assert_ptr_nonnull(d);
  ck_assert(d[0] == 0.0 && d[2] == 0.0);
  char *s = dgp_arena_strdup(a, "gearbox");
  ck_assert_str_eq(s, "gearbox");
  ck_assert_ptr_null(dgp_arena_strdup(a, NULL));
  ck_assert_ptr_null(dgp_arena_alloc(a, SIZE_MAX));
  dgp_arena_free(a);
  dgp_arena_free(NULL);
}
END_TEST

/* ---- JSON pointers -------------------------------------------------------- */

START_TEST(pointer_escapes) {
  char buf[DG_ERROR_PATH_LEN];
  dgp_pointer_append(buf, sizeof buf, "", "blocks");
  ck_assert_str_eq(buf, "/blocks");
  dgp_pointer_append(buf, sizeof buf, buf, "a/b~c"); /* in place */
  ck_assert_str_eq(buf, "/blocks/a~1b~0c");
  dgp_pointer_append(buf, sizeof buf, "/blocks", "");
  ck_assert_str_eq(buf, "/blocks/");
  dgp_pointer_index(buf, sizeof buf, "/connections", 3);
  ck_assert_str_eq(buf, "/connections/3");
  dgp_pointer_index(buf, sizeof buf, buf, 0);
  ck_assert_str_eq(buf, "/connections/3/0");
}
END_TEST

START_TEST(pointer_truncates_whole_escapes) {
  char buf[8];
  dgp_pointer_append(buf, sizeof buf, "/abc", "de/f");
  ck_assert_str_eq(buf, "/abc/de"); /* "~1" would not fit whole */
  dgp_pointer_append(buf, sizeof buf, "/abcdefghijk", "x");
  ck_assert_str_eq(buf, "/abcdef");
  char one[1];
  dgp_pointer_append(one, sizeof one, "/a", "b");
  ck_assert_str_eq(one, "");
}
END_TEST

/* ---- ranges in messages --------------------------------------------------- */

static const struct {
  unsigned flags;
  double min, max;
  dg_range_style style;
  const char *text;
} ranges[] = {
    /* the importers' form: bounds joined by " and ", "" without a bound */
    {0, 0, 0, DG_RANGE_BOUNDS, ""},
    {DG_P_MIN_EXCL, 0, 0, DG_RANGE_BOUNDS, "> 0"},
    {DG_P_MIN, 0, 0, DG_RANGE_BOUNDS, ">= 0"},
    {DG_P_MAX, 0, 1, DG_RANGE_BOUNDS, "<= 1"},
    {DG_P_MAX_EXCL, 0, 2, DG_RANGE_BOUNDS, "< 2"},
    {DG_P_MIN | DG_P_MAX, 0, 1, DG_RANGE_BOUNDS, ">= 0 and <= 1"},
    {DG_P_MIN_EXCL | DG_P_MAX, 0, 1, DG_RANGE_BOUNDS, "> 0 and <= 1"},
    {DG_P_MIN_EXCL | DG_P_MAX_EXCL, 0, 2, DG_RANGE_BOUNDS, "> 0 and < 2"},
    {DG_P_MIN | DG_P_MAX, -1, 0.5, DG_RANGE_BOUNDS, ">= -1 and <= 0.5"},
    {DG_P_MIN | DG_P_MIN_EXCL | DG_P_MAX | DG_P_MAX_EXCL, -3, 3, DG_RANGE_BOUNDS,
     "> -3 and < 3"}, /* the exclusive flag wins */
    {DG_P_MIN_EXCL | DG_P_MAX, 1e-7, 123456789, DG_RANGE_BOUNDS, "> 1e-07 and <= 1.23457e+08"},
    {DG_P_INCREASING | DG_P_DYNAMICS | DG_P_MIN, 2, 0, DG_RANGE_BOUNDS, ">= 2"}, /* ignored */
    /* block inputs' form: two inclusive bounds as an interval, none "finite" */
    {DG_P_MIN | DG_P_MAX, 0, 1, DG_RANGE_INTERVAL, "in [0, 1]"},
    {DG_P_MIN | DG_P_MAX, -1, 24, DG_RANGE_INTERVAL, "in [-1, 24]"},
    {DG_P_MIN, -1, 0, DG_RANGE_INTERVAL, ">= -1"},
    {DG_P_MAX, 0, 1, DG_RANGE_INTERVAL, "<= 1"},
    {0, 0, 0, DG_RANGE_INTERVAL, "finite"},
    {DG_INPUT_REQUIRED | DG_INPUT_INTEGER, 0, 0, DG_RANGE_INTERVAL, "finite"},
    {DG_INPUT_INTEGER | DG_P_MIN | DG_P_MAX, 0, 9, DG_RANGE_INTERVAL, "in [0, 9]"},
    /* an exclusive bound is no interval: the bounds' form */
    {DG_P_MIN_EXCL | DG_P_MAX, 0, 1, DG_RANGE_INTERVAL, "> 0 and <= 1"},
    {DG_P_MIN | DG_P_MAX | DG_P_MAX_EXCL, 0, 1, DG_RANGE_INTERVAL, ">= 0 and < 1"},
};

START_TEST(range_text) {
  char buf[64];
  memset(buf, 'x', sizeof buf);
  ck_assert_ptr_eq(dgp_range_text(buf, sizeof buf, ranges[_i].flags, ranges[_i].min,
                                 ranges[_i].max, ranges[_i].style),
                   buf);
  ck_assert_str_eq(buf, ranges[_i].text);
}
END_TEST

/* Truncated like snprintf, always terminated; nothing written to no room. */
START_TEST(range_text_truncates) {
  char buf[6];
  dgp_range_text(buf, sizeof buf, DG_P_MIN | DG_P_MAX, 0, 1, DG_RANGE_BOUNDS);
  ck_assert_str_eq(buf, ">= 0 ");
  dgp_range_text(buf, 3, DG_P_MIN | DG_P_MAX, 0, 1, DG_RANGE_BOUNDS);
  ck_assert_str_eq(buf, ">=");
  dgp_range_text(buf, 5, DG_P_MIN | DG_P_MAX, 0, 1, DG_RANGE_INTERVAL);
  ck_assert_str_eq(buf, "in [");
  dgp_range_text(buf, 3, 0, 0, 0, DG_RANGE_INTERVAL);
  ck_assert_str_eq(buf, "fi");
  dgp_range_text(buf, 1, DG_P_MIN, 0, 0, DG_RANGE_BOUNDS);
  ck_assert_str_eq(buf, "");
  buf[0] = 'x';
  ck_assert_ptr_eq(dgp_range_text(buf, 0, DG_P_MIN, 0, 0, DG_RANGE_BOUNDS), buf);
  ck_assert_int_eq(buf[0], 'x');
  ck_assert_ptr_null(dgp_range_text(NULL, 8, DG_P_MIN, 0, 0, DG_RANGE_BOUNDS));
}
END_TEST

/* ---- block.h's numeric helpers -------------------------------------------- */

static const struct {
  double x;
  int sign;
  double clamped;
} numbers[] = {
    {2.5, 1, 1.0},
    {1.0, 1, 1.0},
    {0.25, 1, 0.25},
    {0.0, 0, 0.0},
    {-0.0, 0, 0.0},
    {-0.25, -1, 0.0},
    {-1.0, -1, 0.0},
    {-2.5, -1, 0.0},
    {INFINITY, 1, 1.0},
    {-INFINITY, -1, 0.0},
    {DBL_TRUE_MIN, 1, DBL_TRUE_MIN}, /* the smallest subnormal is > 0 */
    {-DBL_TRUE_MIN, -1, 0.0},
    {1.0 - DBL_EPSILON / 2, 1, 1.0 - DBL_EPSILON / 2}, /* the largest double below 1 */
    {1.0 + DBL_EPSILON, 1, 1.0},
    {DBL_MAX, 1, 1.0},
    {-DBL_MAX, -1, 0.0},
    {NAN, 0, 0.0},
    {-NAN, 0, 0.0},
};

START_TEST(sign_and_clamp01) {
  double x = numbers[_i].x;
  ck_assert_int_eq(dg_sign(x), numbers[_i].sign);
  double c = dg_clamp01(x);
  ck_assert_double_eq(c, numbers[_i].clamped); /* exact; never NaN */
  ck_assert(!signbit(c));                      /* +0, never -0 */
}
END_TEST

/* dg_fmax and dg_fmin: glibc's fmax and fmin, except that two zeros
 * give b (glibc: not always), the same bits through both of their paths:
 * the general one (a read at run time) and the one taken where a is a
 * constant that is not NaN (a bound written in a hook). */
static bool same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }
static double run_time(double a) {
  volatile double v = a; /* not a constant to the compiler */
  return v;
}
static double glibc_max(double a, double b) { return a == 0.0 && b == 0.0 ? b : fmax(a, b); }
static double glibc_min(double a, double b) { return a == 0.0 && b == 0.0 ? b : fmin(a, b); }

#define CHECK_BOUND(A)                                                                          \
  do {                                                                                          \
    double got_max = dg_fmax((A), b), got_min = dg_fmin((A), b);                                \
    double gen_max = dg_fmax(run_time(A), b), gen_min = dg_fmin(run_time(A), b);                \
    ck_assert_msg(same_bits(got_max, gen_max) && same_bits(gen_max, glibc_max(run_time(A), b)), \
                  "dg_fmax(%s, %g): %a, general %a, glibc %a", #A, b, got_max, gen_max,         \
                  glibc_max(run_time(A), b));                                                   \
    ck_assert_msg(same_bits(got_min, gen_min) && same_bits(gen_min, glibc_min(run_time(A), b)), \
                  "dg_fmin(%s, %g): %a, general %a, glibc %a", #A, b, got_min, gen_min,         \
                  glibc_min(run_time(A), b));                                                   \
  } while (0)

START_TEST(fmax_fmin_as_glibc) {
  double b = numbers[_i].x;
  CHECK_BOUND(0.0);
  CHECK_BOUND(-0.0);
  CHECK_BOUND(1.0);
  CHECK_BOUND(-1.0);
  CHECK_BOUND(0.25);
  CHECK_BOUND(INFINITY);
  CHECK_BOUND(-INFINITY);
  CHECK_BOUND(DBL_MAX);
  CHECK_BOUND(DBL_TRUE_MIN);
  /* the general path with a NaN: the other */
  for (size_t k = 0; k < sizeof numbers / sizeof numbers[0]; k++) {
    double a = run_time(numbers[k].x);
    ck_assert(same_bits(dg_fmax(a, b), glibc_max(a, b)) || (isnan(a) && isnan(b)));
    ck_assert(same_bits(dg_fmin(a, b), glibc_min(a, b)) || (isnan(a) && isnan(b)));
  }
}
END_TEST

/* ---- suggestions ---------------------------------------------------------- */

static const struct {
  const char *a, *b;
  int d;
} distances[] = {
    {"", "", 0},
    {"", "abc", 3},
    {"abc", "", 3},
    {"abc", "abc", 0},
    {"kitten", "sitting", 3},
    {"ratoi", "ratio", 1}, /* a transposition is one edit */
    {"Ratio", "ratio", 0}, /* case-insensitive */
    {"efficency", "efficiency", 1},
    {"inertai", "inertia", 1},
    {"mass", "max", 2},
};

START_TEST(edit_distance) {
  ck_assert_int_eq(dgp_edit_distance(distances[_i].a, distances[_i].b), distances[_i].d);
}
END_TEST

START_TEST(edit_distance_long_words) {
  char a[201], b[201];
  memset(a, 'a', 200);
  a[200] = '\0';
  memcpy(b, a, sizeof b);
  b[100] = 'b';
  ck_assert_int_eq(dgp_edit_distance(a, b), 1);
  b[199] = '\0';
  ck_assert_int_eq(dgp_edit_distance(a, b), 2);
}
END_TEST

static const char *const params[] = {"inertia",    "ratio",    "efficiency",
                                     "max_torque", "idle_rpm", "redline_rpm"};
#define NPARAMS ((int)(sizeof params / sizeof params[0]))

static const struct {
  const char *word, *expect;
} suggestions[] = {
    {"ratoi", "ratio"},
    {"inertai", "inertia"},
    {"efficency", "efficiency"},
    {"Inertia", "inertia"},
    {"max_torq", "max_torque"},
    {"idle_rmp", "idle_rpm"},
    {"redline", "redline_rpm"}, /* the unit suffix left out */
    {"idle", "idle_rpm"},
    {"max_torque_nm", "max_torque"},
    {"red", NULL}, /* a prefix, but not a whole word of the key */
    {"redline_", NULL},
    {"colour", NULL},
    {"mass", NULL},
    {"x", NULL},
    {"", NULL},
};

START_TEST(suggest) {
  const char *got = dg_suggest(suggestions[_i].word, params, NPARAMS);
  if (suggestions[_i].expect)
    ck_assert_pstr_eq(got, suggestions[_i].expect);
  else
    ck_assert_msg(got == NULL, "\"%s\" suggested \"%s\"", suggestions[_i].word, got);
}
END_TEST

START_TEST(suggest_edge_cases) {
  static const char *const one_letter[] = {"k"};
  ck_assert_ptr_null(dg_suggest("x", one_letter, 1)); /* not a typo: a rewrite */
  static const char *const with_null[] = {NULL, "ratio"};
  ck_assert_pstr_eq(dg_suggest("rati", with_null, 2), "ratio");
  ck_assert_ptr_null(dg_suggest("ratio", params, 0));
  ck_assert_ptr_null(dg_suggest(NULL, params, NPARAMS));
  ck_assert_ptr_null(dg_suggest("ratio", NULL, 3));
  static const char *const tie[] = {"cat", "bat"};
  ck_assert_pstr_eq(dg_suggest("hat", tie, 2), "cat"); /* ties: the first */
}
END_TEST

/* ---- files ---------------------------------------------------------------- */

static void temp_file(char *path, size_t size, const char *data, size_t len) {
  snprintf(path, size, "/tmp/dg_test_util_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq((int)write(fd, data, len), (int)len);
  close(fd);
}

START_TEST(read_file) {
  char path[64];
  static const char data[] = "{\"a\": 1}\n\0tail";
  temp_file(path, sizeof path, data, sizeof data - 1);
  size_t len = 0;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(len, sizeof data - 1); /* an embedded NUL is kept and counted */
  ck_assert_int_eq(memcmp(text, data, len), 0);
  ck_assert_int_eq(text[len], '\0');
  free(text);
  unlink(path);

  temp_file(path, sizeof path, "", 0);
  text = dgp_read_input(path, NULL, why, sizeof why);
  ck_assert_ptr_nonnull(text);
  ck_assert_str_eq(text, "");
  free(text);
  unlink(path);
}
END_TEST

START_TEST(read_file_large) {
  /* Larger than the first read block: the buffer grows. */
  size_t n = 100000;
  char *big = malloc(n);
  ck_assert_ptr_nonnull(big);
  for (size_t i = 0; i < n; i++)
    big[i] = (char)('a' + i % 26);
  char path[64];
  temp_file(path, sizeof path, big, n);
  size_t len;
  char why[DG_ERROR_TEXT_LEN];
  char *text = dgp_read_input(path, &len, why, sizeof why);
  ck_assert_ptr_nonnull(text);
  ck_assert_uint_eq(len, n);
  ck_assert_int_eq(memcmp(text, big, n), 0);
  free(text);
  free(big);
  unlink(path);
}
END_TEST

START_TEST(read_file_errors) {
  char why[DG_ERROR_TEXT_LEN];
  ck_assert_ptr_null(dgp_read_input("/nonexistent/dir/graph.json", NULL, why, sizeof why));
  ck_assert_str_eq(why, "cannot read file: No such file or directory");
  ck_assert_ptr_null(dgp_read_input("/tmp", NULL, why, sizeof why));
  ck_assert_str_eq(why, "cannot read file: Is a directory");
  ck_assert_ptr_null(dgp_read_input(NULL, NULL, why, sizeof why));
}
END_TEST

/* The size limit: a file over it is refused from its size before it is
 * read, a pipe when it passes it; DRIVEGRAPH_MAX_INPUT_SIZE sets it, and a
 * value that is not a size is named. */
START_TEST(read_file_limit) {
  char path[64], why[DG_ERROR_TEXT_LEN];
  temp_file(path, sizeof path, "0123456789", 10);
  ck_assert_uint_eq(dg_input_size_limit(), DG_INPUT_LIMIT_DEFAULT);
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "9", 1);
  ck_assert_uint_eq(dg_input_size_limit(), 9);
  ck_assert_ptr_null(dgp_read_input(path, NULL, why, sizeof why));
  ck_assert_str_eq(why, "the file is 10 bytes, over the limit of 9 bytes for graph and scenario "
                        "texts (DRIVEGRAPH_MAX_INPUT_SIZE raises it)");
  ck_assert_int_eq(dgp_input_size_check(10, why, sizeof why), -1);
  ck_assert_int_eq(dgp_input_size_check(9, why, sizeof why), 0);
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "10", 1);
  char *text = dgp_read_input(path, NULL, why, sizeof why);
  ck_assert_pstr_eq(text, "0123456789");
  free(text);
  /* a pipe has no size: it is cut off at the limit */
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "4", 1);
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  ck_assert_int_eq((int)write(fd[1], "0123456789", 10), 10);
  close(fd[1]);
  char dev[64];
  snprintf(dev, sizeof dev, "/dev/fd/%d", fd[0]);
  ck_assert_ptr_null(dgp_read_input(dev, NULL, why, sizeof why));
  ck_assert_str_eq(why, "the file is over 4 bytes, over the limit of 4 bytes for graph and "
                        "scenario texts (DRIVEGRAPH_MAX_INPUT_SIZE raises it)");
  close(fd[0]);
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "2k", 1);
  ck_assert_uint_eq(dg_input_size_limit(), 2048);
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "1M", 1);
  ck_assert_uint_eq(dg_input_size_limit(), 1u << 20);
  setenv("DRIVEGRAPH_MAX_INPUT_SIZE", "lots\x1b", 1);
  ck_assert_ptr_null(dgp_read_input(path, NULL, why, sizeof why));
  ck_assert_str_eq(why, "DRIVEGRAPH_MAX_INPUT_SIZE=\"lots\\u001B\" is not a size: expected "
                        "bytes > 0 as 1048576, 64k, 16M or 1G");
  unsetenv("DRIVEGRAPH_MAX_INPUT_SIZE");
  unlink(path);
}
END_TEST

/* ---- untrusted text -------------------------------------------------------- */

START_TEST(text_escape) {
  char out[128];
  dg_text_escape(out, sizeof out, "plain caf\xc3\xa9 \xe5\xa4\x89");
  ck_assert_str_eq(out, "plain caf\xc3\xa9 \xe5\xa4\x89"); /* letters of any script stay */
  dg_text_escape(out, sizeof out, "a\x1b[2Jb\nc\td\x7f");
  ck_assert_str_eq(out, "a\\u001B[2Jb\\u000Ac\\u0009d\\u007F");
  dg_text_escape(out, sizeof out, "x\xe2\x80\xaey"); /* RLO */
  ck_assert_str_eq(out, "x\\u202Ey");
  dg_text_escape(out, sizeof out, "\xe2\x81\xa6\xe2\x80\x8b\xef\xbb\xbf\xc2\x85"); /* LRI ZWSP BOM NEL */
  ck_assert_str_eq(out, "\\u2066\\u200B\\uFEFF\\u0085");
  dg_text_escape(out, sizeof out, "\xf3\xa0\x80\x81"); /* a tag, above the BMP */
  ck_assert_str_eq(out, "\\U000E0001");
  dg_text_escape(out, sizeof out, "bad\xff\xc3(");
  ck_assert_str_eq(out, "bad\\xFF\\xC3(");
  /* never an escape or a character cut in two */
  ck_assert_uint_eq(dg_text_escape(out, 8, "ab\x1b"), 2);
  ck_assert_str_eq(out, "ab");
  ck_assert_uint_eq(dg_text_escape(out, 4, "ab\xc3\xa9"), 2);
  ck_assert_uint_eq(dg_text_escape(out, 5, "ab\xc3\xa9"), 4);
  ck_assert_uint_eq(dg_text_escape(out, sizeof out, NULL), 0);
  /* errors are escaped wherever they come from */
  dg_error err;
  dgp_error_set(&err, DG_ERR_USAGE, "f\x1b.json", "/blocks/a\nb", "id \"%s\"", "\xe2\x80\xae");
  ck_assert_str_eq(err.file, "f\\u001B.json");
  ck_assert_str_eq(err.path, "/blocks/a\\u000Ab");
  ck_assert_str_eq(err.text, "id \"\\u202E\"");
}
END_TEST

START_TEST(identifiers) {
  char why[64];
  ck_assert_int_eq(dgp_ident_check("gearbox_2-rear", why, sizeof why), 0);
  ck_assert_int_eq(dgp_ident_check("caf\xc3\xa9", why, sizeof why), 0);  /* NFC */
  ck_assert_int_eq(dgp_ident_check("cafe\xcc\x81", why, sizeof why), 0); /* NFD */
  ck_assert_int_eq(dgp_ident_check("\xe5\xa4\x89\xe9\x80\x9f", why, sizeof why), 0); /* CJK */
  ck_assert_int_eq(dgp_ident_check("\xd9\xa3x", why, sizeof why), 0); /* Arabic-Indic 3 */
  ck_assert_int_eq(dgp_ident_check("", why, sizeof why), -1);
  ck_assert_str_eq(why, "is empty");
  ck_assert_int_eq(dgp_ident_check("my.load", why, sizeof why), -1);
  ck_assert_str_eq(why, "has '.' at character 3");
  ck_assert_int_eq(dgp_ident_check("a b", why, sizeof why), -1);
  ck_assert_str_eq(why, "has ' ' at character 2");
  ck_assert_int_eq(dgp_ident_check("a\x1b[2J", why, sizeof why), -1);
  ck_assert_str_eq(why, "has U+001B at character 2");
  ck_assert_int_eq(dgp_ident_check("a\xe2\x80\xae" "b", why, sizeof why), -1);
  ck_assert_str_eq(why, "has U+202E at character 2");
  ck_assert_int_eq(dgp_ident_check("\xcc\x81" "a", why, sizeof why), -1); /* a mark first */
  ck_assert_str_eq(why, "has U+0301 at character 1");
  ck_assert_int_eq(dgp_ident_check("a\xff", why, sizeof why), -1);
  ck_assert_str_eq(why, "is not valid UTF-8 (byte 2)");
  char *nfc = dgp_text_nfc("cafe\xcc\x81");
  ck_assert_pstr_eq(nfc, "caf\xc3\xa9");
  free(nfc);
  ck_assert_ptr_null(dgp_text_nfc("a\xff"));
}
END_TEST

START_TEST(lookalikes) {
  ck_assert(dgp_text_lookalike("caf\xc3\xa9", "cafe\xcc\x81")); /* NFC, NFD */
  ck_assert(dgp_text_lookalike("box", "b\xd0\xbex"));          /* Cyrillic o */
  ck_assert(dgp_text_lookalike("Gear", "gear"));
  ck_assert(dgp_text_lookalike("boite", "bo\xc3\xaete"));
  ck_assert(dgp_text_lookalike("\xef\xbd\x87" "ear", "gear")); /* fullwidth g */
  ck_assert(!dgp_text_lookalike("gear", "gear"));
  ck_assert(!dgp_text_lookalike("gear", "bear"));
  static const char *const ids[] = {"engine", "b\xd0\xbex", "clutch"};
  ck_assert_pstr_eq(dg_suggest("box", ids, 3), "b\xd0\xbex");
  char buf[128];
  dgp_text_difference("box", "b\xd0\xbex", buf, sizeof buf);
  ck_assert_str_eq(buf, "differs at character 2: U+006F where the id has U+043E");
}
END_TEST

/* ---- JSON ------------------------------------------------------------------ */

START_TEST(json_type_names) {
  json_t *v[] = {json_object(),  json_array(), json_string("s"), json_integer(1),
                 json_real(1.5), json_true(),  json_false(),     json_null()};
  static const char *const names[] = {"object", "array",   "string",  "number",
                                      "number", "boolean", "boolean", "null"};
  for (int i = 0; i < 8; i++) {
    ck_assert_str_eq(dgp_json_type_name(v[i]), names[i]);
    json_decref(v[i]);
  }
  ck_assert_str_eq(dgp_json_type_name(NULL), "nothing");
}
END_TEST

START_TEST(json_parse_ok) {
  dg_diag d;
  dgp_diag_init(&d, "g.json", NULL, NULL);
  json_t *j = dgp_json_parse("{\"a\": [1, 2.5], \"b\": {}}", "g.json", &d);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(d.count, 0);
  json_decref(j);
  /* A byte order mark is skipped. */
  j = dgp_json_parse("\xEF\xBB\xBF{\"a\": 1}", "g.json", &d);
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(d.count, 0);
  json_decref(j);
}
END_TEST

static const struct {
  const char *json;
  int line, column;
  const char *text;
} syntax[] = {
    {"", 1, 1, "empty file, expected a JSON object"},
    {"  \n\t\r\n", 1, 1, "empty file, expected a JSON object"},
    {"{\"a\":1,\"a\":2}", 1, 8, "duplicate object key \"a\""},
    {"{\n  \"b\": 1,\n  \"b\": 2\n}", 3, 3, "duplicate object key \"b\""},
    {"{\"ab\\\"c\": 1, \"ab\\\"c\": 2}", 1, 14, "duplicate object key \"ab\\\"c\""},
    {"{\"a\": 1} x", 1, 10, "unexpected text after the end of the JSON document near 'x'"},
    {"{\"a\": NaN}", 1, 7, "invalid number 'NaN': NaN and Infinity are not allowed in JSON"},
    {"{\"a\": -Infinity}", 1, 7,
     "invalid number '-Infinity': NaN and Infinity are not allowed in JSON"},
    {"\"engine\"", 1, 1, "expected a JSON object, got '\"engine\"'"},
    {"[1, 2", 1, 5, "']' expected near end of file"},
    {"{\n  \"a\": tru}", 2, 8, "invalid token near 'tru'"},
    {"{\"a\": 1,}", 1, 9, "string or '}' expected near '}'"},
    {"{\"a\": 1e999}", 1, 7, "real number overflow near '1e999'"},
    {"\xff", 1, 1, "unable to decode byte 0xff"},
};

START_TEST(json_syntax_errors) {
  seen s = {0};
  dg_diag d;
  dgp_diag_init(&d, "g.json", collect, &s);
  ck_assert_ptr_null(dgp_json_parse(syntax[_i].json, "g.json", &d));
  ck_assert_int_eq(d.count, 1);
  ck_assert_str_eq(d.first.text, syntax[_i].text);
  ck_assert_int_eq(d.first.code, DG_ERR_SYNTAX);
  ck_assert_int_eq(d.first.line, syntax[_i].line);
  ck_assert_int_eq(d.first.column, syntax[_i].column);
  ck_assert_str_eq(d.first.file, "g.json");
  ck_assert_str_eq(d.first.path, "");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("util");
  TCase *e = tcase_create("errors");
  tcase_add_test(e, code_names);
  tcase_add_loop_test(e, error_format, 0, (int)(sizeof formats / sizeof formats[0]));
  tcase_add_test(e, error_format_truncates_like_snprintf);
  tcase_add_test(e, error_set_and_clear);
  tcase_add_test(e, diag_collects_every_problem);
  tcase_add_test(e, diag_without_callback_or_problems);
  suite_add_tcase(s, e);
  TCase *m = tcase_create("memory");
  tcase_add_test(m, arena_aligned_zeroed_and_large);
  suite_add_tcase(s, m);
  TCase *p = tcase_create("names");
  tcase_add_test(p, pointer_escapes);
  tcase_add_test(p, pointer_truncates_whole_escapes);
  tcase_add_loop_test(p, edit_distance, 0, (int)(sizeof distances / sizeof distances[0]));
  tcase_add_test(p, edit_distance_long_words);
  tcase_add_loop_test(p, suggest, 0, (int)(sizeof suggestions / sizeof suggestions[0]));
  tcase_add_test(p, suggest_edge_cases);
  tcase_add_loop_test(p, range_text, 0, (int)(sizeof ranges / sizeof ranges[0]));
  tcase_add_test(p, range_text_truncates);
  suite_add_tcase(s, p);
  TCase *n = tcase_create("numbers");
  tcase_add_loop_test(n, sign_and_clamp01, 0, (int)(sizeof numbers / sizeof numbers[0]));
  tcase_add_loop_test(n, fmax_fmin_as_glibc, 0, (int)(sizeof numbers / sizeof numbers[0]));
  suite_add_tcase(s, n);
  TCase *j = tcase_create("json");
  tcase_add_test(j, read_file);
  tcase_add_test(j, read_file_large);
  tcase_add_test(j, read_file_errors);
  tcase_add_test(j, read_file_limit);
  tcase_add_test(j, text_escape);
  tcase_add_test(j, identifiers);
  tcase_add_test(j, lookalikes);
  tcase_add_test(j, json_type_names);
  tcase_add_test(j, json_parse_ok);
  tcase_add_loop_test(j, json_syntax_errors, 0, (int)(sizeof syntax / sizeof syntax[0]));
  suite_add_tcase(s, j);
  return s;
}

int main(void) { return dg_test_run(suite()); }
