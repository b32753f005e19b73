/* Shared pieces of the fuzz targets (tests/fuzz/fuzz_*.c).
 *
 * Each target defines LLVMFuzzerTestOneInput (and, when it needs set-up,
 * LLVMFuzzerInitialize). Built with clang -fsanitize=fuzzer,address,undefined
 * (meson -Dfuzz=true) they are libFuzzer binaries; linked with replay.c in
 * every build they replay the checked-in corpus as a regression test.
 *
 * A property that fails calls FUZZ_FAIL, which prints what went wrong and
 * aborts, so libFuzzer saves the input as a crash. */
#ifndef DG_FUZZ_COMMON_H
#define DG_FUZZ_COMMON_H

#include <drivegraph/drivegraph.h>

#include <dirent.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DG_SOURCE_ROOT
#define DG_SOURCE_ROOT "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FAIL(...)                                                                           \
  do {                                                                                           \
    fprintf(stderr, "fuzz property failed at %s:%d: ", __FILE__, __LINE__);                      \
    fprintf(stderr, __VA_ARGS__);                                                                \
    fputc('\n', stderr);                                                                         \
    abort();                                                                                     \
  } while (0)

#define FUZZ_CHECK(cond, ...)                                                                    \
  do {                                                                                           \
    if (!(cond))                                                                                 \
      FUZZ_FAIL(__VA_ARGS__);                                                                    \
  } while (0)

/* The input as a NUL-terminated string (the loaders take C strings, so an
 * embedded NUL ends the text as it would for any caller). */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  if (size)
    memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/* An error the library returned must be well-formed: a known code and a
 * non-empty, terminated text. */
static inline void fuzz_check_error(const dg_error *err, const char *what) {
  FUZZ_CHECK((err->code > DG_OK && err->code < DG_CODE_COUNT) ||
                 (err->code == DG_OK && strncmp(err->text, "warning: ", 9) == 0),
             "%s: bad error code %d", what, err->code);
  FUZZ_CHECK(memchr(err->text, '\0', sizeof err->text) != NULL, "%s: text not terminated", what);
  FUZZ_CHECK(memchr(err->path, '\0', sizeof err->path) != NULL, "%s: path not terminated", what);
  FUZZ_CHECK(memchr(err->file, '\0', sizeof err->file) != NULL, "%s: file not terminated", what);
  char line[DG_ERROR_FILE_LEN + DG_ERROR_PATH_LEN + DG_ERROR_TEXT_LEN + 32];
  dg_error_format(err, line, sizeof line);
  FUZZ_CHECK(line[0] != '\0', "%s: empty message", what);
}

/* The source tree (for the example graphs): $DG_SOURCE_ROOT, else the
 * directory the build was configured from. */
static inline const char *fuzz_source_root(void) {
  const char *root = getenv("DG_SOURCE_ROOT");
  return root && root[0] ? root : DG_SOURCE_ROOT;
}

/* After a successful step every signal, the kinetic energy and the energy
 * audit must be finite: the solver's guard turns a blow-up into an error,
 * so a non-finite value with DG_OK is a missed guard. */
static inline void fuzz_check_finite(const dg_sim *sim, const char *graph) {
  int n = dg_sim_signal_count(sim);
  for (int i = 0; i < n; i++) {
    double v = dg_sim_signal(sim, i);
    FUZZ_CHECK(isfinite(v), "%s: signal %s is %g at t = %g s after a successful step", graph,
               dg_sim_signal_name(sim, i), v, dg_sim_time(sim));
  }
  double ke = dg_sim_kinetic_energy(sim);
  FUZZ_CHECK(isfinite(ke), "%s: kinetic energy %g at t = %g s", graph, ke, dg_sim_time(sim));
  dg_energy e;
  dg_sim_energy(sim, &e);
  FUZZ_CHECK(isfinite(e.balance_error), "%s: energy balance %g at t = %g s", graph,
             e.balance_error, dg_sim_time(sim));
}

/* A step that failed must say why: a numeric or block error (or a usage
 * error for a bad dt) with the time in it, and later steps keep failing. */
static inline void fuzz_check_step_error(dg_sim *sim, int rc, const char *graph) {
  const dg_error *err = dg_sim_last_error(sim);
  FUZZ_CHECK(rc == err->code, "%s: step returned %d but last error has code %d", graph, rc,
             err->code);
  FUZZ_CHECK(rc == DG_ERR_NUMERIC || rc == DG_ERR_BLOCK || rc == DG_ERR_INERTIA ||
                 rc == DG_ERR_OVERCONSTRAINED || rc == DG_ERR_RANGE,
             "%s: unexpected step error %s: %s", graph, dg_code_name(rc), err->text);
  fuzz_check_error(err, graph);
  FUZZ_CHECK(strstr(err->text, "t = ") != NULL, "%s: step error without the time: %s", graph,
             err->text);
  FUZZ_CHECK(dg_sim_step(sim, 0.001) == rc, "%s: stepping after an error did not fail again",
             graph);
}

/* The example graphs (every graphs/NAME.json, sorted by name so that a byte picks the
 * same graph on every machine), loaded once. Aborts if one does not load:
 * the examples must be valid. */
typedef struct fuzz_graphs {
  int n;
  dg_graph *g[64];
  char name[64][128];
} fuzz_graphs;

static inline int fuzz_name_cmp(const void *a, const void *b) {
  return strcmp((const char *)a, (const char *)b);
}

static inline void fuzz_load_graphs(fuzz_graphs *out) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/graphs", fuzz_source_root());
  DIR *d = opendir(dir);
  FUZZ_CHECK(d != NULL, "cannot open %s (set DG_SOURCE_ROOT)", dir);
  out->n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && out->n < 64) {
    size_t len = strlen(e->d_name);
    if (len > 5 && len < sizeof out->name[0] && strcmp(e->d_name + len - 5, ".json") == 0)
      snprintf(out->name[out->n++], sizeof out->name[0], "%s", e->d_name);
  }
  closedir(d);
  qsort(out->name, (size_t)out->n, sizeof out->name[0], fuzz_name_cmp);
  for (int i = 0; i < out->n; i++) {
    char path[1200];
    dg_error err;
    snprintf(path, sizeof path, "%s/%s", dir, out->name[i]);
    out->g[i] = dg_graph_load_file(NULL, path, &err);
    FUZZ_CHECK(out->g[i] != NULL, "example graph %s does not load: %s", path, err.text);
  }
  FUZZ_CHECK(out->n > 0, "no graphs in %s", dir);
}

/* Importers read files: a private directory for the inputs, made once and
 * removed at exit. fuzz_write puts the bytes in DIR/name and returns the
 * path (static storage, one per name slot). */
static char fuzz_tmpdir[64];
static char fuzz_paths[4][128];

static inline void fuzz_tmp_cleanup(void) {
  for (int i = 0; i < 4; i++)
    if (fuzz_paths[i][0])
      remove(fuzz_paths[i]);
  if (fuzz_tmpdir[0])
    remove(fuzz_tmpdir);
}

static inline const char *fuzz_write(int slot, const char *name, const uint8_t *data,
                                     size_t size) {
  if (!fuzz_tmpdir[0]) {
    snprintf(fuzz_tmpdir, sizeof fuzz_tmpdir, "/tmp/dg_fuzz_XXXXXX");
    FUZZ_CHECK(mkdtemp(fuzz_tmpdir) != NULL, "cannot make a temporary directory");
    atexit(fuzz_tmp_cleanup);
  }
  snprintf(fuzz_paths[slot], sizeof fuzz_paths[slot], "%s/%s", fuzz_tmpdir, name);
  FILE *f = fopen(fuzz_paths[slot], "wb");
  FUZZ_CHECK(f != NULL, "cannot write %s", fuzz_paths[slot]);
  if (size)
    FUZZ_CHECK(fwrite(data, 1, size, f) == size, "cannot write %s", fuzz_paths[slot]);
  FUZZ_CHECK(fclose(f) == 0, "cannot write %s", fuzz_paths[slot]);
  return fuzz_paths[slot];
}

/* Notes of the importers: code DG_OK and "note: " or "warning: " text. */
static inline void fuzz_check_note(const dg_error *note, void *user) {
  (void)user;
  FUZZ_CHECK(note->code == DG_OK, "a note with code %d: %s", note->code, note->text);
  FUZZ_CHECK(strncmp(note->text, "note: ", 6) == 0 || strncmp(note->text, "warning: ", 9) == 0,
             "a note that is neither a note nor a warning: %s", note->text);
}

/* What an importer returns is graph JSON that loads, or fails to load with a
 * well-formed error (the importer checks less than the loader); a graph
 * that loads runs a few steps. */
static inline void fuzz_check_imported(char *json, const char *what) {
  dg_error err;
  dg_graph *g = dg_graph_load_string(NULL, json, "imported.json", &err);
  if (!g) {
    fuzz_check_error(&err, what);
    return;
  }
  dg_sim *sim = dg_sim_new(g, &err);
  FUZZ_CHECK(sim != NULL, "%s: imported graph gives no simulation: %s", what, err.text);
  dg_sim_set_input(sim, DG_INPUT_THROTTLE, 1.0);
  dg_sim_set_input(sim, DG_INPUT_GEAR, 1.0);
  for (int k = 0; k < 50; k++) {
    int rc = dg_sim_step(sim, 0.001);
    if (rc != DG_OK) {
      fuzz_check_step_error(sim, rc, what);
      break;
    }
    fuzz_check_finite(sim, what);
  }
  dg_sim_free(sim);
  dg_graph_free(g);
}

#endif
