/* drivegraph fmu: a graph as an FMI 3.0 or 2.0 co-simulation FMU.
 *
 * The FMU's files other than its binary come from the FMU runtime itself
 * (drivegraph_fmu_describe in libdgfmu3.so / libdgfmu2.so, fmu/describe.c),
 * so that what modelDescription.xml says and what the binary runs are made
 * by the same code; this command finds the runtime, asks it, and packs the
 * answer and the runtime's binary into the zip (minizip, in memory, then
 * written through tools/output.c: a failed export leaves no file). */
#include "output.h"
#include "tool.h"

#include <drivegraph/drivegraph.h>

#include <dlfcn.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <minizip/zip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DG_FMU_LIBDIR
#define DG_FMU_LIBDIR "/usr/local/lib/drivegraph/fmu"
#endif

typedef struct fmu_opts {
  const char *graph;
  const char *output;   /* NAME.fmu */
  int fmi;              /* 1: "3", 2: "2" (index + 1 in fmi_choices) */
  const char *scenario; /* NULL: none */
  opt_list outputs;     /* --outputs, each a name or a comma-separated list */
  double dt;            /* NaN unless given */
  const char *name;     /* the model's name; NULL: the graph's */
  bool force;
} fmu_opts;

static const char *const fmi_choices[] = {"3", "2", NULL};

static const option_def fmu_options[] = {
    {.name = "output",
     .short_name = 'o',
     OPT_STRING_AT(fmu_opts, output),
     .arg = "NAME.fmu",
     .help = "the FMU to write; NAME (letters, digits and '_') is its\n"
             "model identifier and the name of its binary"},
    {.name = "fmi",
     OPT_CHOICE_AT(fmu_opts, fmi),
     .arg = "3|2",
     .expect = "FMI version",
     .choices = fmi_choices,
     .help = "FMI 3.0 (default) or FMI 2.0 co-simulation"},
    {.name = "scenario",
     OPT_STRING_AT(fmu_opts, scenario),
     .arg = "FILE",
     .help = "played inside the FMU: its initial values, its step size,\n"
             "its inputs (the channels it drives are no FMU inputs)\n"
             "and its stop condition (terminateSimulation)"},
    {.name = "outputs",
     OPT_LIST_AT(fmu_opts, outputs),
     .arg = "SIGNAL,...",
     .help = "the FMU's outputs: signals (\"engine.rpm\") and port\n"
             "torques and angles (\"hub.hub.torque\"); may be repeated\n"
             "(default: every signal of the graph's blocks)"},
    {.name = "dt",
     OPT_SECONDS_AT(fmu_opts, dt),
     .arg = "s",
     .help = "the FMU's internal step (default: the scenario's, else\n"
             "0.001); communication steps are whole numbers of it"},
    {.name = "name",
     OPT_STRING_AT(fmu_opts, name),
     .arg = "TEXT",
     .help = "the model's name (default: the graph's \"name\")"},
    {.name = "force",
     OPT_FLAG_AT(fmu_opts, force),
     .help = "export even when the internal step is too large for RK4\n"
             "in the start mode"},
    {0},
};

/* ------------------------------------------------------------------------ */
/* The runtime                                                              */

typedef char *(*describe_fn)(const char *request);
typedef void (*free_fn)(char *text);

/* The runtime library for FMI version v: $DRIVEGRAPH_FMU_DIR, the fmu/
 * directory beside this executable (a build tree), the installed one. */
static bool find_runtime(int v, char *path, size_t size, char *tried, size_t tried_size) {
  char name[32];
  snprintf(name, sizeof name, "libdgfmu%d.so", v);
  return find_shipped_file("DRIVEGRAPH_FMU_DIR", "fmu", DG_FMU_LIBDIR, name, path, size, tried,
                           tried_size);
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = cap ? 2 * cap : 1 << 16;
      char *b = realloc(buf, cap + 1);
      if (!b) {
        free(buf);
        fclose(f);
        errno = ENOMEM;
        return NULL;
      }
      buf = b;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    errno = EIO;
    return NULL;
  }
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

/* NAME of .../NAME.fmu as a model identifier: false when it cannot be one. */
static bool model_identifier(const char *output, char *buf, size_t size) {
  const char *base = strrchr(output, '/');
  base = base ? base + 1 : output;
  size_t n = strlen(base);
  if (n <= 4 || strcmp(base + n - 4, ".fmu") != 0 || n - 4 >= size)
    return false;
  snprintf(buf, size, "%.*s", (int)(n - 4), base);
  if (!((buf[0] >= 'A' && buf[0] <= 'Z') || (buf[0] >= 'a' && buf[0] <= 'z') || buf[0] == '_'))
    return false;
  for (char *p = buf; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return false;
  return true;
}

/* ---- the zip, in memory ----------------------------------------------------- */

typedef struct membuf {
  unsigned char *data;
  size_t len, cap, pos;
  bool failed;
} membuf;

static voidpf mem_open(voidpf opaque, const void *filename, int mode) {
  (void)filename;
  (void)mode;
  return opaque;
}

static uLong mem_read(voidpf opaque, voidpf stream, void *buf, uLong size) {
  (void)stream;
  membuf *m = opaque;
  size_t n = m->pos < m->len ? m->len - m->pos : 0;
  n = n < size ? n : size;
  memcpy(buf, m->data + m->pos, n);
  m->pos += n;
  return (uLong)n;
}

static uLong mem_write(voidpf opaque, voidpf stream, const void *buf, uLong size) {
  (void)stream;
  membuf *m = opaque;
  if (m->pos + size > m->cap) {
    size_t cap = m->cap ? m->cap : 1 << 16;
    while (cap < m->pos + size)
      cap *= 2;
    unsigned char *d = realloc(m->data, cap);
    if (!d) {
      m->failed = true;
      return 0;
    }
    m->data = d;
    m->cap = cap;
  }
  memcpy(m->data + m->pos, buf, size);
  m->pos += size;
  if (m->pos > m->len)
    m->len = m->pos;
  return size;
}

static ZPOS64_T mem_tell(voidpf opaque, voidpf stream) {
  (void)stream;
  return ((membuf *)opaque)->pos;
}

static long mem_seek(voidpf opaque, voidpf stream, ZPOS64_T offset, int origin) {
  (void)stream;
  membuf *m = opaque;
  size_t base = origin == ZLIB_FILEFUNC_SEEK_CUR   ? m->pos
                : origin == ZLIB_FILEFUNC_SEEK_END ? m->len
                                                   : 0;
  m->pos = base + (size_t)offset;
  return 0;
}

static int mem_close(voidpf opaque, voidpf stream) {
  (void)opaque;
  (void)stream;
  return 0;
}

static int mem_error(voidpf opaque, voidpf stream) {
  (void)stream;
  return ((membuf *)opaque)->failed;
}

/* Adds one file (deflated; fixed date so that an FMU's bytes depend on its
 * contents only; Unix mode bits). */
static bool zip_add(zipFile z, const char *name, const void *data, size_t len, unsigned mode) {
  zip_fileinfo info;
  memset(&info, 0, sizeof info);
  info.tmz_date = (tm_zip){0, 0, 0, 1, 0, 2024};
  info.external_fa = (uLong)(0100000u | mode) << 16;
  if (zipOpenNewFileInZip4_64(z, name, &info, NULL, 0, NULL, 0, NULL, Z_DEFLATED, 9, 0, -MAX_WBITS,
                              DEF_MEM_LEVEL, Z_DEFAULT_STRATEGY, NULL, 0,
                              (3u << 8) | 20u /* made by Unix, zip 2.0 */, 0, 0) != ZIP_OK)
    return false;
  bool ok = len == 0 || zipWriteInFileInZip(z, data, (unsigned)len) == ZIP_OK;
  return zipCloseFileInZip(z) == ZIP_OK && ok;
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */

static int fmu_parse_args(const command *cmd, int argc, char **argv, fmu_opts *o) {
  *o = (fmu_opts){.dt = NAN};
  operands args;
  int rc = parse_options(cmd, argc, argv, o, &args);
  if (rc != EXIT_OK)
    return rc;
  if (args.n == 0)
    return usage_error(cmd, "no graph file given");
  if (args.n > 1)
    return usage_error(cmd, "one graph file expected (got '%s' too)", args.v[1]);
  o->graph = args.v[0];
  if (!o->output)
    return usage_error(cmd, "no FMU to write: give -o NAME.fmu");
  return EXIT_OK;
}

/* --outputs values: names, or lists of them separated by commas. */
static json_t *output_list(const fmu_opts *o) {
  if (o->outputs.n == 0)
    return json_null();
  json_t *list = json_array();
  for (int i = 0; list && i < o->outputs.n; i++) {
    char *copy = strdup(o->outputs.v[i]), *save = NULL;
    if (!copy) {
      json_decref(list);
      return NULL;
    }
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      char *name = tool_trim(tok);
      if (*name)
        json_array_append_new(list, json_string(name));
    }
    free(copy);
  }
  return list;
}

typedef struct fmu_job {
  const fmu_opts *o;
  int fmi;
  char ident[256];
  char *graph_text;
  char *scenario_text;
  char runtime[PATH_MAX];
  void *lib;
  describe_fn describe;
  free_fn release;
  json_t *answer;
  unsigned char *binary;
  size_t binary_len;
  membuf zip;
} fmu_job;

static void print_messages(json_t *messages) {
  size_t i;
  json_t *m;
  json_array_foreach(messages, i, m) {
    const char *level = json_string_value(json_object_get(m, "level"));
    const char *text = json_string_value(json_object_get(m, "text"));
    char shown[4096];
    dg_text_escape(shown, sizeof shown, text ? text : "");
    fprintf(stderr, "drivegraph fmu: %s%s\n", level && strcmp(level, "error") ? "warning: " : "",
            shown);
  }
}

static int load_inputs(const command *cmd, fmu_job *j) {
  const fmu_opts *o = j->o;
  if (!model_identifier(o->output, j->ident, sizeof j->ident))
    return usage_error(cmd,
                       "-o %s: expected NAME.fmu with NAME a C identifier (letters, digits "
                       "and '_', not starting with a digit): it is the model identifier",
                       esc(o->output));
  dg_error err;
  j->graph_text = graph_json_text(o->graph, &err);
  if (!j->graph_text) {
    print_error(stderr, &err, o->graph);
    return EXIT_INVALID;
  }
  if (o->scenario) {
    j->scenario_text = read_all(o->scenario, NULL);
    if (!j->scenario_text) {
      fprintf(stderr, "drivegraph fmu: cannot read %s: %s\n", esc(o->scenario), strerror(errno));
      return EXIT_INVALID;
    }
  }
  char tried[3 * PATH_MAX + 8];
  if (!find_runtime(j->fmi, j->runtime, sizeof j->runtime, tried, sizeof tried)) {
    fprintf(stderr,
            "drivegraph fmu: the FMU runtime for FMI %d is not installed (looked for "
            "%s; set DRIVEGRAPH_FMU_DIR to its directory)\n",
            j->fmi, esc(tried));
    return EXIT_INVALID;
  }
  j->lib = dlopen(j->runtime, RTLD_NOW | RTLD_LOCAL);
  if (!j->lib) {
    fprintf(stderr, "drivegraph fmu: %s: %s\n", esc(j->runtime), esc(dlerror()));
    return EXIT_INVALID;
  }
  /* ISO C has no function pointer from void*; POSIX guarantees it works */
  *(void **)&j->describe = dlsym(j->lib, "drivegraph_fmu_describe");
  *(void **)&j->release = dlsym(j->lib, "drivegraph_fmu_free");
  if (!j->describe || !j->release) {
    fprintf(stderr, "drivegraph fmu: %s is not a drivegraph FMU runtime\n", esc(j->runtime));
    return EXIT_INVALID;
  }
  j->binary = (unsigned char *)read_all(j->runtime, &j->binary_len);
  if (!j->binary) {
    fprintf(stderr, "drivegraph fmu: cannot read %s: %s\n", esc(j->runtime), strerror(errno));
    return EXIT_INVALID;
  }
  return EXIT_OK;
}

/* Asks the runtime for the FMU's files. */
static int describe(fmu_job *j) {
  const fmu_opts *o = j->o;
  json_t *req = json_pack("{s:i, s:i, s:s, s:s, s:s?, s:s?, s:o, s:o, s:s?, s:s, s:b}", "abi", 1,
                          "fmi", j->fmi, "graph", j->graph_text, "graph_name", o->graph, "scenario",
                          j->scenario_text, "scenario_name", o->scenario, "dt",
                          isnan(o->dt) ? json_null() : json_real(o->dt), "outputs", output_list(o),
                          "model_name", o->name, "model_identifier", j->ident, "force", o->force);
  char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
  json_decref(req);
  char *answer = text ? j->describe(text) : NULL;
  free(text);
  j->answer = answer ? json_loads(answer, 0, NULL) : NULL;
  if (answer)
    j->release(answer);
  if (!j->answer) {
    fprintf(stderr, "drivegraph fmu: out of memory (or a file that is not UTF-8 text)\n");
    return EXIT_INVALID;
  }
  print_messages(json_object_get(j->answer, "messages"));
  const char *version = json_string_value(json_object_get(j->answer, "version"));
  if (version && strcmp(version, DG_VERSION_STRING) != 0)
    fprintf(stderr, "drivegraph fmu: warning: the runtime %s is drivegraph %s, this tool %s\n",
            esc(j->runtime), esc(version), DG_VERSION_STRING);
  return json_is_true(json_object_get(j->answer, "ok")) ? EXIT_OK : EXIT_INVALID;
}

static const char fmu_readme[] =
    "This FMU was written by drivegraph (a library and tool for vehicle drivetrains built as\n"
    "graphs of blocks). Its binary needs, besides the C library, libjansson.so.4 (Debian and\n"
    "Ubuntu: package libjansson4); it also finds one placed next to it. See docs/fmu.md of\n"
    "drivegraph for its variables, its inputs and what is tunable.\n";

/* The zip: modelDescription.xml, the binary, the resources, a note on the
 * binary's dependency (documentation/externalDependencies.txt, which the
 * standard asks for). */
static int pack(fmu_job *j) {
  zlib_filefunc64_def io = {mem_open, mem_read,  mem_write, mem_tell,
                            mem_seek, mem_close, mem_error, &j->zip};
  zipFile z = zipOpen2_64("memory", APPEND_STATUS_CREATE, NULL, &io);
  bool ok = z != NULL;
  json_t *files = json_object_get(j->answer, "files");
  const char *order[] = {"modelDescription.xml", "resources/fmu.json", "resources/graph.json",
                         "resources/scenario.json"};
  for (size_t i = 0; ok && i < sizeof order / sizeof order[0]; i++) {
    const char *text = json_string_value(json_object_get(files, order[i]));
    if (text)
      ok = zip_add(z, order[i], text, strlen(text), 0644);
  }
  const char *bin = json_string_value(json_object_get(j->answer, "binary"));
  ok = ok && bin && zip_add(z, bin, j->binary, j->binary_len, 0755);
  ok = ok && zip_add(z, "documentation/externalDependencies.txt", fmu_readme, sizeof fmu_readme - 1,
                     0644);
  if (z && zipClose(z, NULL) != ZIP_OK)
    ok = false;
  if (!ok || j->zip.failed) {
    fprintf(stderr, "drivegraph fmu: out of memory while packing %s\n", esc(j->o->output));
    return EXIT_INVALID;
  }
  out_file *out = out_open("fmu", j->o->output);
  if (!out)
    return EXIT_INVALID;
  out_write(out, j->zip.data, j->zip.len);
  if (out_close(out) != 0 || out_commit(out) != 0)
    return EXIT_INVALID;
  return EXIT_OK;
}

static void print_done(const fmu_job *j) {
  json_t *ins = json_object_get(j->answer, "inputs");
  json_t *outs = json_object_get(j->answer, "outputs");
  long params = (long)json_integer_value(json_object_get(j->answer, "parameters"));
  long tunable = (long)json_integer_value(json_object_get(j->answer, "tunable"));
  printf("%s: FMI %s co-simulation FMU %s, %zu input%s", esc(j->o->output),
         j->fmi == 3 ? "3.0" : "2.0", j->ident, json_array_size(ins),
         json_array_size(ins) == 1 ? "" : "s");
  size_t i;
  json_t *v;
  json_array_foreach(ins, i, v) printf("%s%s", i ? ", " : " (", esc(json_string_value(v)));
  printf("%s, %zu output%s, %ld parameters (%ld tunable)\n", json_array_size(ins) ? ")" : "",
         json_array_size(outs), json_array_size(outs) == 1 ? "" : "s", params, tunable);
}

static int cmd_fmu(const command *cmd, int argc, char **argv) {
  fmu_opts o;
  int rc = fmu_parse_args(cmd, argc, argv, &o);
  if (rc == EXIT_OK) {
    fmu_job j = {.o = &o, .fmi = o.fmi == 2 ? 2 : 3};
    rc = load_inputs(cmd, &j);
    if (rc == EXIT_OK)
      rc = describe(&j);
    if (rc == EXIT_OK)
      rc = pack(&j);
    if (rc == EXIT_OK)
      print_done(&j);
    json_decref(j.answer);
    free(j.zip.data);
    free(j.binary);
    free(j.graph_text);
    free(j.scenario_text);
    if (j.lib)
      dlclose(j.lib);
  }
  options_free(cmd, &o);
  return rc == HELP_SHOWN ? EXIT_OK : rc;
}

const command dg_cmd_fmu = {
    .name = "fmu",
    .operands = "GRAPH",
    .summary = "Export a graph as an FMI 3.0 or 2.0 co-simulation FMU.",
    .help = "Writes NAME.fmu: modelDescription.xml (inputs: the channels the graph reads that\n"
            "the scenario does not drive; outputs: the signals chosen; parameters: the numbers\n"
            "that do not change the graph's structure, tunable between steps where only the\n"
            "dynamics read them), the binary for x86_64 Linux (the FMU runtime, libdrivegraph\n"
            "linked in) and the graph and scenario in resources/. In the FMU a communication\n"
            "step is whole steps of the internal step with events located inside; the inputs\n"
            "are held over a step (FMI 2: or follow the derivatives the master gives); FMU\n"
            "states can be saved, restored and serialized. docs/fmu.md describes the variables\n"
            "and how to load the FMU. GRAPH is graph JSON or a YAML vehicle config.\n",
    .options = fmu_options,
    .footer = "Exit status: 0 ok; 1 invalid graph or scenario, an unknown output, a step\n"
              "size RK4 cannot take (without --force), no FMU runtime or a file that could\n"
              "not be written; 2 usage error.\n",
    .run = cmd_fmu,
};
