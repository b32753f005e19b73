/* A small FMI importer for the tests of drivegraph's FMUs (tests/test_fmu.sh):
 * it unzips an FMU with minizip, reads its modelDescription.xml, dlopens
 * its binary and runs it through the standard's calling sequence (FMI 3.0
 * or 2.0 co-simulation), writing the outputs at every communication point
 * as `drivegraph sim --digits 17` writes its CSV (--xc: with the header of
 * the cross-check files' <Model>_ref.csv), so that the two files can be
 * compared byte for byte.
 *
 *   fmu_import FMU [--in IN.csv] [--out OUT.csv] [--outputs A,B,...]
 *              [--step H] [--stop T] [--set NAME=VALUE@T]... [--derivatives]
 *              [--state-at T] [--save-state T FILE] [--load-state T FILE]
 *              [--instances N] [--companion OTHER.fmu]
 *              [--count-alloc] [--api-checks] [--xc] [--quiet]
 *
 * --in: the FMI cross-check input file ("time","u1",...; linear between
 * rows, a repeated time a jump, the later row holding from it); each input
 * is set at every communication point to its value there (and with
 * --derivatives, FMI 2 only, its slope there by fmi2SetRealInputDerivatives).
 * --set NAME=VALUE@T sets a parameter (or input) at communication time T
 * (T < 0: before initialization). --state-at T: at T the FMU state is got
 * and serialized; the run goes on to the end, the state is set back and
 * the rest run again, and a second instance deserializes the bytes and
 * runs the rest too: all three must give the same bytes (exit 1 else).
 * --save-state T FILE writes the serialized state at T to FILE;
 * --load-state T FILE (another process) starts from it and writes the rows
 * after T to --out, to compare with the first run's.
 * --instances N runs N instances side by side (each must give the same
 * rows); --companion steps a second FMU in the same process alongside.
 * --count-alloc counts the allocations made inside DoStep (must be none).
 * --api-checks exercises calls the standard forbids (each must fail with
 * a message) and prints "api-checks: N passed". Exit status 0 when all
 * holds. */
#include "fmi2.h"
#include "fmi3.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <minizip/unzip.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Allocation counting: the FMU's malloc resolves to these (the executable's
 * definitions come first in the lookup), which pass on to the C library's.
 * Not with AddressSanitizer, which owns malloc. */

#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_ALLOC 0
#endif
#endif
#ifndef COUNT_ALLOC
#define COUNT_ALLOC 1
#endif

static volatile int counting;
static volatile long allocations;

#if COUNT_ALLOC
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);
void *malloc(size_t size) {
  if (counting)
    allocations++;
  return __libc_malloc(size);
}
void *calloc(size_t n, size_t size) {
  if (counting)
    allocations++;
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t size) {
  if (counting)
    allocations++;
  return __libc_realloc(p, size);
}
void free(void *p) {
  if (counting && p)
    allocations++;
  __libc_free(p);
}
#endif

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

static bool quiet;
static int log_errors; /* messages of status Error the FMUs logged */
static char last_error[4096];

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fmu_import: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die("cannot read %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
    die("cannot read %s", path);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Unzipping                                                                */

static void mkdirs(const char *path) {
  char buf[8192];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(buf, 0755);
      *p = '/';
    }
}

static void unzip_to(const char *fmu, const char *dir) {
  unzFile z = unzOpen64(fmu);
  if (!z)
    die("%s: not a zip file", fmu);
  for (int rc = unzGoToFirstFile(z); rc == UNZ_OK; rc = unzGoToNextFile(z)) {
    char name[1024];
    unz_file_info64 info;
    if (unzGetCurrentFileInfo64(z, &info, name, sizeof name, NULL, 0, NULL, 0) != UNZ_OK)
      die("%s: bad entry", fmu);
    if (info.compression_method != 0 && info.compression_method != 8)
      die("%s: %s: compression method %lu (the standard allows 0 and 8)", fmu, name,
          info.compression_method);
    if (info.version_needed > 20)
      die("%s: %s needs version %lu to extract (the standard allows 2.0)", fmu, name,
          info.version_needed);
    if (strstr(name, "..") || name[0] == '/')
      die("%s: suspicious path %s", fmu, name);
    char path[8192];
    snprintf(path, sizeof path, "%.4000s/%s", dir, name);
    mkdirs(path);
    size_t n = strlen(name);
    if (n > 0 && name[n - 1] == '/')
      continue;
    if (unzOpenCurrentFile(z) != UNZ_OK)
      die("%s: cannot open %s", fmu, name);
    FILE *out = fopen(path, "wb");
    if (!out)
      die("cannot write %s", path);
    char buf[65536];
    int got;
    while ((got = unzReadCurrentFile(z, buf, sizeof buf)) > 0)
      fwrite(buf, 1, (size_t)got, out);
    if (got < 0)
      die("%s: %s is damaged", fmu, name);
    fclose(out);
    if (unzCloseCurrentFile(z) != UNZ_OK)
      die("%s: %s: CRC error", fmu, name);
    chmod(path, (info.external_fa >> 16) & 0777 ? (mode_t)((info.external_fa >> 16) & 0777) : 0644);
  }
  unzClose(z);
}

/* ------------------------------------------------------------------------ */
/* modelDescription.xml: what this importer needs from it                   */

typedef struct variable {
  char name[512];
  unsigned vr;
  char causality[32];
  bool integer;
} variable;

typedef struct model {
  int fmi;
  char identifier[256];
  char token[256];
  double step, stop;
  int n;
  variable *vars;
} model;

/* The value of attribute `attr` in the start tag at `tag` (entities
 * decoded), or false. */
static bool attr_of(const char *tag, const char *attr, char *buf, size_t size) {
  const char *end = strchr(tag, '>');
  char key[64];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *at = strstr(tag, key);
  if (!at || (end && at > end))
    return false;
  at += strlen(key);
  size_t o = 0;
  while (*at && *at != '"' && o + 1 < size) {
    if (*at == '&') {
      static const struct {
        const char *ent;
        char c;
      } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool done = false;
      for (size_t i = 0; i < sizeof ents / sizeof ents[0] && !done; i++)
        if (strncmp(at, ents[i].ent, strlen(ents[i].ent)) == 0) {
          buf[o++] = ents[i].c;
          at += strlen(ents[i].ent);
          done = true;
        }
      if (done)
        continue;
    }
    buf[o++] = *at++;
  }
  buf[o] = '\0';
  return true;
}

static void read_model(const char *dir, model *m) {
  char path[8192];
  snprintf(path, sizeof path, "%s/modelDescription.xml", dir);
  char *xml = read_text(path);
  memset(m, 0, sizeof *m);
  char v[256];
  const char *root = strstr(xml, "<fmiModelDescription");
  if (!root || !attr_of(root, "fmiVersion", v, sizeof v))
    die("%s: no fmiModelDescription", path);
  m->fmi = v[0] == '3' ? 3 : 2;
  if (!attr_of(root, m->fmi == 3 ? "instantiationToken" : "guid", m->token, sizeof m->token))
    die("%s: no token", path);
  const char *cs = strstr(xml, "<CoSimulation");
  if (!cs || !attr_of(cs, "modelIdentifier", m->identifier, sizeof m->identifier))
    die("%s: no CoSimulation element", path);
  const char *de = strstr(xml, "<DefaultExperiment");
  m->step = de && attr_of(de, "stepSize", v, sizeof v) ? strtod(v, NULL) : 0.01;
  m->stop = de && attr_of(de, "stopTime", v, sizeof v) ? strtod(v, NULL) : 1.0;
  m->vars = calloc(4096, sizeof *m->vars);
  const char *open = m->fmi == 3 ? "\n    <" : "<ScalarVariable";
  for (const char *p = strstr(xml, "<ModelVariables>"); p && (p = strstr(p + 1, open));) {
    if (m->fmi == 3 && strncmp(p + 6, "Float64", 7) && strncmp(p + 6, "Int32", 5))
      continue;
    variable *var = &m->vars[m->n];
    if (!attr_of(p, "name", var->name, sizeof var->name) ||
        !attr_of(p, "valueReference", v, sizeof v))
      continue;
    var->vr = (unsigned)strtoul(v, NULL, 10);
    if (!attr_of(p, "causality", var->causality, sizeof var->causality))
      strcpy(var->causality, "local");
    if (m->fmi == 3) {
      var->integer = strncmp(p + 6, "Int32", 5) == 0;
    } else {
      const char *child = strchr(p, '>');
      var->integer = child && strncmp(strstr(child, "<") + 1, "Integer", 7) == 0;
    }
    if (++m->n == 4096)
      break;
  }
  free(xml);
}

static const variable *var_named(const model *m, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->vars[i].name, name) == 0)
      return &m->vars[i];
  die("the FMU has no variable \"%s\"", name);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The cross-check input file                                               */

typedef struct input_table {
  int ncols; /* inputs (time excluded) */
  char names[64][256];
  int nrows;
  double *t; /* nrows */
  double *v; /* nrows × ncols */
} input_table;

static void unquote(char *s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
    s[--n] = '\0';
  if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
    memmove(s, s + 1, n - 2);
    s[n - 2] = '\0';
  }
}

static void read_inputs(const char *path, input_table *in) {
  FILE *f = fopen(path, "r");
  if (!f)
    die("cannot read %s", path);
  char line[8192];
  if (!fgets(line, sizeof line, f))
    die("%s: empty", path);
  memset(in, 0, sizeof *in);
  int col = 0;
  for (char *save = NULL, *tok = strtok_r(line, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save), col++) {
    unquote(tok);
    if (col == 0) {
      if (strcmp(tok, "time"))
        die("%s: the first column must be \"time\"", path);
      continue;
    }
    snprintf(in->names[in->ncols++], sizeof in->names[0], "%s", tok);
  }
  int cap = 1024;
  in->t = malloc(sizeof *in->t * (size_t)cap);
  in->v = malloc(sizeof *in->v * (size_t)cap * (size_t)in->ncols);
  while (fgets(line, sizeof line, f)) {
    if (in->nrows == cap) {
      cap *= 2;
      in->t = realloc(in->t, sizeof *in->t * (size_t)cap);
      in->v = realloc(in->v, sizeof *in->v * (size_t)cap * (size_t)in->ncols);
    }
    char *p = line;
    in->t[in->nrows] = strtod(p, &p);
    for (int c = 0; c < in->ncols; c++) {
      if (*p != ',')
        die("%s: row %d has too few values", path, in->nrows + 2);
      in->v[in->nrows * in->ncols + c] = strtod(p + 1, &p);
    }
    if (in->nrows > 0 && in->t[in->nrows] < in->t[in->nrows - 1])
      die("%s: time goes back at row %d", path, in->nrows + 2);
    in->nrows++;
  }
  fclose(f);
}

/* Column c at time t: linear between rows, held outside, the later row at
 * a repeated time. *slope: the derivative there (0 on a jump or outside). */
static double input_at(const input_table *in, int c, double t, double *slope) {
  int k = 0;
  while (k + 1 < in->nrows && in->t[k + 1] <= t)
    k++;
  *slope = 0.0;
  if (in->nrows == 0)
    return 0.0;
  if (t < in->t[0] || k + 1 >= in->nrows)
    return in->v[(t < in->t[0] ? 0 : k) * in->ncols + c];
  double t0 = in->t[k], t1 = in->t[k + 1], v0 = in->v[k * in->ncols + c],
         v1 = in->v[(k + 1) * in->ncols + c];
  if (t1 <= t0)
    return v1;
  *slope = (v1 - v0) / (t1 - t0);
  return v0 + (v1 - v0) * ((t - t0) / (t1 - t0));
}

/* ------------------------------------------------------------------------ */
/* The binary's functions                                                   */

typedef struct api3 {
  fmi3InstantiateCoSimulationTYPE *instantiate;
  fmi3FreeInstanceTYPE *free_instance;
  fmi3EnterInitializationModeTYPE *enter_init;
  fmi3ExitInitializationModeTYPE *exit_init;
  fmi3TerminateTYPE *terminate;
  fmi3ResetTYPE *reset;
  fmi3GetFloat64TYPE *get_f64;
  fmi3SetFloat64TYPE *set_f64;
  fmi3GetInt32TYPE *get_i32;
  fmi3SetInt32TYPE *set_i32;
  fmi3DoStepTYPE *do_step;
  fmi3GetFMUStateTYPE *get_state;
  fmi3SetFMUStateTYPE *set_state;
  fmi3FreeFMUStateTYPE *free_state;
  fmi3SerializedFMUStateSizeTYPE *state_size;
  fmi3SerializeFMUStateTYPE *serialize;
  fmi3DeserializeFMUStateTYPE *deserialize;
  fmi3GetVersionTYPE *version;
  fmi3EnterEventModeTYPE *enter_event;
} api3;

typedef struct api2 {
  fmi2InstantiateTYPE *instantiate;
  fmi2FreeInstanceTYPE *free_instance;
  fmi2SetupExperimentTYPE *setup;
  fmi2EnterInitializationModeTYPE *enter_init;
  fmi2ExitInitializationModeTYPE *exit_init;
  fmi2TerminateTYPE *terminate;
  fmi2ResetTYPE *reset;
  fmi2GetRealTYPE *get_real;
  fmi2SetRealTYPE *set_real;
  fmi2GetIntegerTYPE *get_int;
  fmi2SetIntegerTYPE *set_int;
  fmi2SetRealInputDerivativesTYPE *set_deriv;
  fmi2DoStepTYPE *do_step;
  fmi2GetFMUstateTYPE *get_state;
  fmi2SetFMUstateTYPE *set_state;
  fmi2FreeFMUstateTYPE *free_state;
  fmi2SerializedFMUstateSizeTYPE *state_size;
  fmi2SerializeFMUstateTYPE *serialize;
  fmi2DeSerializeFMUstateTYPE *deserialize;
  fmi2GetVersionTYPE *version;
  fmi2GetTypesPlatformTYPE *platform;
  fmi2GetBooleanStatusTYPE *bool_status;
  fmi2GetRealStatusTYPE *real_status;
} api2;

/* ISO C has no function pointer from void*; POSIX guarantees it works. */
#define BIND(lib, dst, name)                      \
  do {                                            \
    *(void **)&(dst) = dlsym(lib, name);          \
    if (!(dst))                                   \
      die("the binary does not export %s", name); \
  } while (0)

/* Every function the standard's header declares must be there. */
static const char *const all3[] = {"fmi3GetVersion",
                                   "fmi3SetDebugLogging",
                                   "fmi3InstantiateModelExchange",
                                   "fmi3InstantiateCoSimulation",
                                   "fmi3InstantiateScheduledExecution",
                                   "fmi3FreeInstance",
                                   "fmi3EnterInitializationMode",
                                   "fmi3ExitInitializationMode",
                                   "fmi3EnterEventMode",
                                   "fmi3Terminate",
                                   "fmi3Reset",
                                   "fmi3GetFloat32",
                                   "fmi3GetFloat64",
                                   "fmi3GetInt8",
                                   "fmi3GetUInt8",
                                   "fmi3GetInt16",
                                   "fmi3GetUInt16",
                                   "fmi3GetInt32",
                                   "fmi3GetUInt32",
                                   "fmi3GetInt64",
                                   "fmi3GetUInt64",
                                   "fmi3GetBoolean",
                                   "fmi3GetString",
                                   "fmi3GetBinary",
                                   "fmi3GetClock",
                                   "fmi3SetFloat32",
                                   "fmi3SetFloat64",
                                   "fmi3SetInt8",
                                   "fmi3SetUInt8",
                                   "fmi3SetInt16",
                                   "fmi3SetUInt16",
                                   "fmi3SetInt32",
                                   "fmi3SetUInt32",
                                   "fmi3SetInt64",
                                   "fmi3SetUInt64",
                                   "fmi3SetBoolean",
                                   "fmi3SetString",
                                   "fmi3SetBinary",
                                   "fmi3SetClock",
                                   "fmi3GetNumberOfVariableDependencies",
                                   "fmi3GetVariableDependencies",
                                   "fmi3GetFMUState",
                                   "fmi3SetFMUState",
                                   "fmi3FreeFMUState",
                                   "fmi3SerializedFMUStateSize",
                                   "fmi3SerializeFMUState",
                                   "fmi3DeserializeFMUState",
                                   "fmi3GetDirectionalDerivative",
                                   "fmi3GetAdjointDerivative",
                                   "fmi3EnterConfigurationMode",
                                   "fmi3ExitConfigurationMode",
                                   "fmi3GetIntervalDecimal",
                                   "fmi3GetIntervalFraction",
                                   "fmi3GetShiftDecimal",
                                   "fmi3GetShiftFraction",
                                   "fmi3SetIntervalDecimal",
                                   "fmi3SetIntervalFraction",
                                   "fmi3SetShiftDecimal",
                                   "fmi3SetShiftFraction",
                                   "fmi3EvaluateDiscreteStates",
                                   "fmi3UpdateDiscreteStates",
                                   "fmi3EnterContinuousTimeMode",
                                   "fmi3CompletedIntegratorStep",
                                   "fmi3SetTime",
                                   "fmi3SetContinuousStates",
                                   "fmi3GetContinuousStateDerivatives",
                                   "fmi3GetEventIndicators",
                                   "fmi3GetContinuousStates",
                                   "fmi3GetNominalsOfContinuousStates",
                                   "fmi3GetNumberOfEventIndicators",
                                   "fmi3GetNumberOfContinuousStates",
                                   "fmi3EnterStepMode",
                                   "fmi3GetOutputDerivatives",
                                   "fmi3DoStep",
                                   "fmi3ActivateModelPartition",
                                   NULL};
static const char *const all2[] = {"fmi2GetTypesPlatform",
                                   "fmi2GetVersion",
                                   "fmi2SetDebugLogging",
                                   "fmi2Instantiate",
                                   "fmi2FreeInstance",
                                   "fmi2SetupExperiment",
                                   "fmi2EnterInitializationMode",
                                   "fmi2ExitInitializationMode",
                                   "fmi2Terminate",
                                   "fmi2Reset",
                                   "fmi2GetReal",
                                   "fmi2GetInteger",
                                   "fmi2GetBoolean",
                                   "fmi2GetString",
                                   "fmi2SetReal",
                                   "fmi2SetInteger",
                                   "fmi2SetBoolean",
                                   "fmi2SetString",
                                   "fmi2GetFMUstate",
                                   "fmi2SetFMUstate",
                                   "fmi2FreeFMUstate",
                                   "fmi2SerializedFMUstateSize",
                                   "fmi2SerializeFMUstate",
                                   "fmi2DeSerializeFMUstate",
                                   "fmi2GetDirectionalDerivative",
                                   "fmi2EnterEventMode",
                                   "fmi2NewDiscreteStates",
                                   "fmi2EnterContinuousTimeMode",
                                   "fmi2CompletedIntegratorStep",
                                   "fmi2SetTime",
                                   "fmi2SetContinuousStates",
                                   "fmi2GetDerivatives",
                                   "fmi2GetEventIndicators",
                                   "fmi2GetContinuousStates",
                                   "fmi2GetNominalsOfContinuousStates",
                                   "fmi2SetRealInputDerivatives",
                                   "fmi2GetRealOutputDerivatives",
                                   "fmi2DoStep",
                                   "fmi2CancelStep",
                                   "fmi2GetStatus",
                                   "fmi2GetRealStatus",
                                   "fmi2GetIntegerStatus",
                                   "fmi2GetBooleanStatus",
                                   "fmi2GetStringStatus",
                                   NULL};

typedef struct fmu {
  model m;
  char dir[512];
  void *lib;
  api3 a3;
  api2 a2;
} fmu;

static void log_fmi3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                     fmi3String message) {
  if (status >= fmi3Error) {
    log_errors++;
    snprintf(last_error, sizeof last_error, "%s", message);
  }
  if (!quiet || status >= fmi3Warning)
    fprintf(stderr, "[%s] %d %s: %s\n", (const char *)env, status, category ? category : "",
            message);
}

static void log_fmi2(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                     fmi2String category, fmi2String message, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, message);
  vsnprintf(buf, sizeof buf, message, ap);
  va_end(ap);
  (void)env;
  if (status >= fmi2Error) {
    log_errors++;
    snprintf(last_error, sizeof last_error, "%s", buf);
  }
  if (!quiet || status >= fmi2Warning)
    fprintf(stderr, "[%s] %d %s: %s\n", instance, status, category ? category : "", buf);
}

static void load_fmu(const char *path, fmu *f) {
  memset(f, 0, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/fmu_import.XXXXXX");
  if (!mkdtemp(f->dir))
    die("mkdtemp: %s", strerror(errno));
  unzip_to(path, f->dir);
  read_model(f->dir, &f->m);
  char bin[8192];
  snprintf(bin, sizeof bin, "%s/binaries/%s/%s.so", f->dir,
           f->m.fmi == 3 ? "x86_64-linux" : "linux64", f->m.identifier);
  f->lib = dlopen(bin, RTLD_NOW | RTLD_LOCAL);
  if (!f->lib)
    die("%s", dlerror());
  const char *const *all = f->m.fmi == 3 ? all3 : all2;
  for (int i = 0; all[i]; i++)
    if (!dlsym(f->lib, all[i]))
      die("%s: the binary does not export %s", path, all[i]);
  if (f->m.fmi == 3) {
    api3 *a = &f->a3;
    BIND(f->lib, a->instantiate, "fmi3InstantiateCoSimulation");
    BIND(f->lib, a->free_instance, "fmi3FreeInstance");
    BIND(f->lib, a->enter_init, "fmi3EnterInitializationMode");
    BIND(f->lib, a->exit_init, "fmi3ExitInitializationMode");
    BIND(f->lib, a->terminate, "fmi3Terminate");
    BIND(f->lib, a->reset, "fmi3Reset");
    BIND(f->lib, a->get_f64, "fmi3GetFloat64");
    BIND(f->lib, a->set_f64, "fmi3SetFloat64");
    BIND(f->lib, a->get_i32, "fmi3GetInt32");
    BIND(f->lib, a->set_i32, "fmi3SetInt32");
    BIND(f->lib, a->do_step, "fmi3DoStep");
    BIND(f->lib, a->get_state, "fmi3GetFMUState");
    BIND(f->lib, a->set_state, "fmi3SetFMUState");
    BIND(f->lib, a->free_state, "fmi3FreeFMUState");
    BIND(f->lib, a->state_size, "fmi3SerializedFMUStateSize");
    BIND(f->lib, a->serialize, "fmi3SerializeFMUState");
    BIND(f->lib, a->deserialize, "fmi3DeserializeFMUState");
    BIND(f->lib, a->version, "fmi3GetVersion");
    BIND(f->lib, a->enter_event, "fmi3EnterEventMode");
    if (strcmp(a->version(), "3.0") != 0)
      die("fmi3GetVersion gives %s", a->version());
  } else {
    api2 *a = &f->a2;
    BIND(f->lib, a->instantiate, "fmi2Instantiate");
    BIND(f->lib, a->free_instance, "fmi2FreeInstance");
    BIND(f->lib, a->setup, "fmi2SetupExperiment");
    BIND(f->lib, a->enter_init, "fmi2EnterInitializationMode");
    BIND(f->lib, a->exit_init, "fmi2ExitInitializationMode");
    BIND(f->lib, a->terminate, "fmi2Terminate");
    BIND(f->lib, a->reset, "fmi2Reset");
    BIND(f->lib, a->get_real, "fmi2GetReal");
    BIND(f->lib, a->set_real, "fmi2SetReal");
    BIND(f->lib, a->get_int, "fmi2GetInteger");
    BIND(f->lib, a->set_int, "fmi2SetInteger");
    BIND(f->lib, a->set_deriv, "fmi2SetRealInputDerivatives");
    BIND(f->lib, a->do_step, "fmi2DoStep");
    BIND(f->lib, a->get_state, "fmi2GetFMUstate");
    BIND(f->lib, a->set_state, "fmi2SetFMUstate");
    BIND(f->lib, a->free_state, "fmi2FreeFMUstate");
    BIND(f->lib, a->state_size, "fmi2SerializedFMUstateSize");
    BIND(f->lib, a->serialize, "fmi2SerializeFMUstate");
    BIND(f->lib, a->deserialize, "fmi2DeSerializeFMUstate");
    BIND(f->lib, a->version, "fmi2GetVersion");
    BIND(f->lib, a->platform, "fmi2GetTypesPlatform");
    BIND(f->lib, a->bool_status, "fmi2GetBooleanStatus");
    BIND(f->lib, a->real_status, "fmi2GetRealStatus");
    if (strcmp(a->version(), "2.0") != 0 || strcmp(a->platform(), "default") != 0)
      die("fmi2GetVersion / fmi2GetTypesPlatform give %s / %s", a->version(), a->platform());
  }
}

static void remove_tree(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "fmu_import: could not remove %s\n", dir);
}

/* ------------------------------------------------------------------------ */
/* One instance, whatever the version                                       */

typedef struct inst {
  fmu *f;
  void *c; /* fmi3Instance or fmi2Component */
  char name[64];
  fmi2CallbackFunctions cb;
} inst;

static int st_of(int s) { return s; }

static void instantiate(inst *x, fmu *f, const char *name) {
  x->f = f;
  snprintf(x->name, sizeof x->name, "%s", name);
  char res[4200];
  if (f->m.fmi == 3) {
    snprintf(res, sizeof res, "%s/resources/", f->dir);
    x->c = f->a3.instantiate(x->name, f->m.token, res, fmi3False, fmi3True, fmi3False, fmi3False,
                             NULL, 0, x->name, log_fmi3, NULL);
  } else {
    snprintf(res, sizeof res, "file://%s/resources", f->dir);
    x->cb = (fmi2CallbackFunctions){log_fmi2, NULL, NULL, NULL, x->name};
    x->c =
        f->a2.instantiate(x->name, fmi2CoSimulation, f->m.token, res, &x->cb, fmi2False, fmi2True);
  }
  if (!x->c)
    die("instantiation of %s failed", name);
}

static int enter_init(inst *x, double stop) {
  fmu *f = x->f;
  if (f->m.fmi == 3)
    return st_of(f->a3.enter_init(x->c, fmi3False, 0.0, 0.0, fmi3True, stop));
  int s = (int)f->a2.setup(x->c, fmi2False, 0.0, 0.0, fmi2True, stop);
  return s ? s : (int)f->a2.enter_init(x->c);
}

static int exit_init(inst *x) {
  return x->f->m.fmi == 3 ? st_of(x->f->a3.exit_init(x->c)) : (int)x->f->a2.exit_init(x->c);
}

static int set_value(inst *x, const variable *v, double value) {
  fmu *f = x->f;
  if (f->m.fmi == 3) {
    if (v->integer) {
      fmi3Int32 i = (fmi3Int32)value;
      return f->a3.set_i32(x->c, &v->vr, 1, &i, 1);
    }
    return f->a3.set_f64(x->c, &v->vr, 1, &value, 1);
  }
  fmi2ValueReference vr = v->vr;
  if (v->integer) {
    fmi2Integer i = (fmi2Integer)value;
    return f->a2.set_int(x->c, &vr, 1, &i);
  }
  return f->a2.set_real(x->c, &vr, 1, &value);
}

static int get_value(inst *x, const variable *v, double *value) {
  fmu *f = x->f;
  if (f->m.fmi == 3) {
    if (v->integer) {
      fmi3Int32 i;
      int s = f->a3.get_i32(x->c, &v->vr, 1, &i, 1);
      *value = i;
      return s;
    }
    return f->a3.get_f64(x->c, &v->vr, 1, value, 1);
  }
  fmi2ValueReference vr = v->vr;
  if (v->integer) {
    fmi2Integer i;
    int s = f->a2.get_int(x->c, &vr, 1, &i);
    *value = i;
    return s;
  }
  return f->a2.get_real(x->c, &vr, 1, value);
}

static int do_step(inst *x, double t, double h) {
  fmu *f = x->f;
  if (f->m.fmi == 3) {
    fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
    fmi3Float64 last = 0.0;
    return f->a3.do_step(x->c, t, h, fmi3True, &event, &terminate, &early, &last);
  }
  return f->a2.do_step(x->c, t, h, fmi2True);
}

static void free_inst(inst *x) {
  if (!x->c)
    return;
  if (x->f->m.fmi == 3) {
    x->f->a3.terminate(x->c);
    x->f->a3.free_instance(x->c);
  } else {
    x->f->a2.terminate(x->c);
    x->f->a2.free_instance(x->c);
  }
  x->c = NULL;
}

static int get_state(inst *x, void **s) {
  return x->f->m.fmi == 3 ? x->f->a3.get_state(x->c, s) : x->f->a2.get_state(x->c, s);
}
static int set_state(inst *x, void *s) {
  return x->f->m.fmi == 3 ? x->f->a3.set_state(x->c, s) : x->f->a2.set_state(x->c, s);
}
static int free_state(inst *x, void **s) {
  return x->f->m.fmi == 3 ? x->f->a3.free_state(x->c, s) : x->f->a2.free_state(x->c, s);
}
static unsigned char *serialize(inst *x, void *s, size_t *size) {
  int st = x->f->m.fmi == 3 ? x->f->a3.state_size(x->c, s, size)
                            : x->f->a2.state_size(x->c, s, size);
  if (st != 0)
    die("SerializedFMUStateSize failed");
  unsigned char *buf = malloc(*size);
  st = x->f->m.fmi == 3 ? x->f->a3.serialize(x->c, s, buf, *size)
                        : x->f->a2.serialize(x->c, s, (fmi2Byte *)buf, *size);
  if (st != 0)
    die("SerializeFMUState failed");
  return buf;
}
static void *deserialize(inst *x, const unsigned char *buf, size_t size) {
  void *s = NULL;
  int st = x->f->m.fmi == 3 ? x->f->a3.deserialize(x->c, buf, size, &s)
                            : x->f->a2.deserialize(x->c, (const fmi2Byte *)buf, size, &s);
  if (st != 0)
    die("DeserializeFMUState failed");
  return s;
}

/* ------------------------------------------------------------------------ */
/* A run                                                                    */

typedef struct setting {
  const variable *var;
  double value, t;
  bool done;
} setting;

typedef struct run_opts {
  const char *in_path, *out_path;
  char outputs[8192];
  double step, stop;
  int nset;
  setting set[32];
  bool derivatives, count_alloc, api_checks, xc;
  double state_at;
  const char *save_state; /* serialize at save_at into this file */
  double save_at;
  const char *load_state; /* start from this file's state, at load_from */
  double load_from;
  int instances;
  const char *companion;
} run_opts;

typedef struct run {
  fmu *f;
  const run_opts *o;
  input_table in;
  const variable **inputs; /* per input column */
  int nout;
  const variable *out[256];
  long steps;
  double *rows; /* (steps + 1) × nout */
} run;

static void set_inputs(run *r, inst *x, double t) {
  for (int c = 0; c < r->in.ncols; c++) {
    double slope;
    double v = input_at(&r->in, c, t, &slope);
    int st = set_value(x, r->inputs[c], v);
    if (st != 0)
      die("%s: setting %s = %g at t = %g failed (%d)", x->name, r->inputs[c]->name, v, t, st);
    if (r->o->derivatives && x->f->m.fmi == 2 && !r->inputs[c]->integer) {
      fmi2ValueReference vr = r->inputs[c]->vr;
      fmi2Integer order = 1;
      if (x->f->a2.set_deriv(x->c, &vr, 1, &order, &slope) != fmi2OK)
        die("fmi2SetRealInputDerivatives failed");
    }
  }
}

static void apply_settings(run *r, inst *x, double t, bool before_init) {
  for (int i = 0; i < r->o->nset; i++) {
    setting *s = (setting *)&r->o->set[i];
    if ((before_init && s->t < 0) || (!before_init && s->t >= 0 && fabs(s->t - t) < 1e-12)) {
      int st = set_value(x, s->var, s->value);
      if (st != 0)
        die("%s: setting %s = %g at t = %g failed (%d): %s", x->name, s->var->name, s->value, t, st,
            last_error);
    }
  }
}

static void record(run *r, inst *x, long row) {
  for (int k = 0; k < r->nout; k++)
    if (get_value(x, r->out[k], &r->rows[row * r->nout + k]) != 0)
      die("%s: getting %s failed", x->name, r->out[k]->name);
}

/* Steps instance x from communication point `from` to the end, recording rows. */
static void run_from(run *r, inst *x, long from, double *rows) {
  double *keep = r->rows;
  r->rows = rows;
  for (long i = from; i < r->steps; i++) {
    double t = (double)i * r->o->step;
    set_inputs(r, x, t);
    apply_settings(r, x, t, false);
    if (r->o->count_alloc)
      counting = 1;
    int st = do_step(x, t, r->o->step);
    counting = 0;
    if (st != 0)
      die("%s: the step from t = %.17g failed (%d): %s", x->name, t, st, last_error);
    record(r, x, i + 1);
  }
  r->rows = keep;
}

static void start_instance(run *r, inst *x, const char *name) {
  instantiate(x, r->f, name);
  apply_settings(r, x, 0.0, true);
  if (enter_init(x, r->o->stop) != 0)
    die("%s: entering initialization failed", name);
  set_inputs(r, x, 0.0);
  if (exit_init(x) != 0)
    die("%s: exiting initialization failed: %s", name, last_error);
}

static bool same_rows(const run *r, const double *a, const double *b, long from, const char *what) {
  for (long i = from; i <= r->steps; i++)
    for (int k = 0; k < r->nout; k++)
      if (memcmp(&a[i * r->nout + k], &b[i * r->nout + k], sizeof(double)) != 0) {
        fprintf(stderr, "fmu_import: %s: %s differs at t = %.17g (%.17g vs %.17g)\n", what,
                r->out[k]->name, (double)i * r->o->step, a[i * r->nout + k], b[i * r->nout + k]);
        return false;
      }
  return true;
}

/* As `drivegraph sim --digits 17` writes its CSV; `xc`: with the
 * cross-check files' header ("time","name",...). */
static void write_csv(const run *r, const char *path, bool xc) {
  FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
  if (!f)
    die("cannot write %s", path);
  fprintf(f, xc ? "\"time\"" : "t");
  for (int k = 0; k < r->nout; k++)
    fprintf(f, xc ? ",\"%s\"" : ",%s", r->out[k]->name);
  fprintf(f, "\n");
  for (long i = 0; i <= r->steps; i++) {
    fprintf(f, "%.17g", (double)i * r->o->step);
    for (int k = 0; k < r->nout; k++)
      fprintf(f, ",%.17g", r->rows[i * r->nout + k]);
    fprintf(f, "\n");
  }
  if (f != stdout)
    fclose(f);
}

/* What a run holds (for the leak checker). */
static void release(run *r, fmu *f) {
  free(r->in.t);
  free(r->in.v);
  free(r->inputs);
  free(f->m.vars);
}

/* ---- calls the standard forbids ------------------------------------------- */

static int checks_passed;

static void expect_fail(bool failed, const char *what) {
  if (!failed)
    die("api-checks: %s was accepted", what);
  checks_passed++;
}

static void api_checks(run *r) {
  fmu *f = r->f;
  inst x;
  int errors = log_errors;
  /* a wrong token, no resources */
  if (f->m.fmi == 3) {
    char res[4200];
    snprintf(res, sizeof res, "%s/resources/", f->dir);
    expect_fail(f->a3.instantiate("bad", "{not-the-token}", res, false, true, false, false, NULL, 0,
                                  (void *)"bad", log_fmi3, NULL) == NULL,
                "a wrong instantiation token");
    expect_fail(f->a3.instantiate("bad", f->m.token, NULL, false, true, false, false, NULL, 0,
                                  (void *)"bad", log_fmi3, NULL) == NULL,
                "no resource path");
    expect_fail(f->a3.instantiate("bad", f->m.token, res, false, true, true, false, NULL, 0,
                                  (void *)"bad", log_fmi3, NULL) == NULL,
                "eventModeUsed");
  } else {
    fmi2CallbackFunctions cb = {log_fmi2, NULL, NULL, NULL, NULL};
    char res[4200];
    snprintf(res, sizeof res, "file://%s/resources", f->dir);
    expect_fail(f->a2.instantiate("bad", fmi2CoSimulation, "{x}", res, &cb, 0, 1) == NULL,
                "a wrong GUID");
    expect_fail(f->a2.instantiate("bad", fmi2ModelExchange, f->m.token, res, &cb, 0, 1) == NULL,
                "Model Exchange");
    expect_fail(f->a2.instantiate("bad", fmi2CoSimulation, f->m.token, "http://x/y", &cb, 0, 1) ==
                    NULL,
                "an http resource location");
  }
  instantiate(&x, f, "checks");
  expect_fail(do_step(&x, 0.0, r->o->step) != 0, "a step before initialization");
  free_inst(&x);
  instantiate(&x, f, "checks");
  if (enter_init(&x, r->o->stop) != 0 || (set_inputs(r, &x, 0.0), exit_init(&x)) != 0)
    die("api-checks: initialization failed");
  const variable *out = r->out[0];
  expect_fail(set_value(&x, out, 1.0) != 0, "setting an output");
  free_inst(&x);
  instantiate(&x, f, "checks");
  enter_init(&x, r->o->stop);
  set_inputs(r, &x, 0.0);
  exit_init(&x);
  double v;
  variable bogus = {.vr = 999999};
  expect_fail(get_value(&x, &bogus, &v) != 0, "an unknown value reference");
  free_inst(&x);
  instantiate(&x, f, "checks");
  enter_init(&x, r->o->stop);
  set_inputs(r, &x, 0.0);
  exit_init(&x);
  /* a time that is not the FMU's, then a state set back recovers */
  void *s = NULL;
  if (get_state(&x, &s) != 0)
    die("api-checks: getting a state failed");
  expect_fail(do_step(&x, 5.0, r->o->step) != 0, "a communication point that is not the FMU's");
  expect_fail(do_step(&x, 0.0, r->o->step) != 0, "a step after an error");
  if (set_state(&x, s) != 0 || do_step(&x, 0.0, r->o->step) != 0)
    die("api-checks: a state set after an error did not recover the instance");
  checks_passed++;
  expect_fail(do_step(&x, r->o->step, -1.0) != 0, "a negative step");
  set_state(&x, s);
  /* a value that is not finite is refused, and nothing changes */
  for (int i = 0; i < f->m.n; i++)
    if (!strcmp(f->m.vars[i].causality, "input") && !f->m.vars[i].integer) {
      int st = set_value(&x, &f->m.vars[i], NAN);
      expect_fail(st == 2 /* Discard */, "a NaN input (not discarded)");
      break;
    }
  /* a fixed parameter while running; a tunable one out of range */
  for (int i = 0; i < f->m.n; i++)
    if (!strcmp(f->m.vars[i].causality, "parameter")) {
      char xml_path[4200];
      snprintf(xml_path, sizeof xml_path, "%s/modelDescription.xml", f->dir);
      char *xml = read_text(xml_path);
      char key[600];
      snprintf(key, sizeof key, "name=\"%s\"", f->m.vars[i].name);
      const char *at = strstr(xml, key);
      const char *end = at ? strchr(at, '>') : NULL;
      const char *var = at ? strstr(at, "variability=\"fixed\"") : NULL;
      bool fixed = var && end && var < end;
      free(xml);
      double cur;
      get_value(&x, &f->m.vars[i], &cur);
      if (fixed) {
        expect_fail(set_value(&x, &f->m.vars[i], cur) != 0, "a fixed parameter while running");
        set_state(&x, s);
        break;
      }
    }
  free_state(&x, &s);
  free_inst(&x);
  if (log_errors == errors)
    die("api-checks: the refusals logged no errors");
  checks_passed++;
  printf("api-checks: %d passed\n", checks_passed);
}

/* ------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr, "usage: fmu_import FMU [--in IN.csv] [--out OUT.csv] [--outputs A,B]\n"
                  "       [--step H] [--stop T] [--set NAME=VALUE@T]... [--derivatives]\n"
                  "       [--state-at T] [--instances N] [--companion FMU] [--count-alloc]\n"
                  "       [--api-checks] [--quiet]\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 2)
    usage();
  run_opts o = {.step = NAN, .stop = NAN, .state_at = NAN, .save_at = NAN, .instances = 1};
  const char *path = argv[1];
  const char *sets[32];
  int nsets = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    if (!strcmp(a, "--in") && has)
      o.in_path = argv[++i];
    else if (!strcmp(a, "--out") && has)
      o.out_path = argv[++i];
    else if (!strcmp(a, "--outputs") && has)
      snprintf(o.outputs, sizeof o.outputs, "%s", argv[++i]);
    else if (!strcmp(a, "--step") && has)
      o.step = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--stop") && has)
      o.stop = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--set") && has && nsets < 32)
      sets[nsets++] = argv[++i];
    else if (!strcmp(a, "--state-at") && has)
      o.state_at = strtod(argv[++i], NULL);
    else if (!strcmp(a, "--save-state") && i + 2 < argc) {
      o.save_at = strtod(argv[++i], NULL);
      o.save_state = argv[++i];
    } else if (!strcmp(a, "--load-state") && i + 2 < argc) {
      o.load_from = strtod(argv[++i], NULL);
      o.load_state = argv[++i];
    } else if (!strcmp(a, "--instances") && has)
      o.instances = atoi(argv[++i]);
    else if (!strcmp(a, "--companion") && has)
      o.companion = argv[++i];
    else if (!strcmp(a, "--xc"))
      o.xc = true;
    else if (!strcmp(a, "--derivatives"))
      o.derivatives = true;
    else if (!strcmp(a, "--count-alloc"))
      o.count_alloc = true;
    else if (!strcmp(a, "--api-checks"))
      o.api_checks = true;
    else if (!strcmp(a, "--quiet"))
      quiet = true;
    else
      usage();
  }
  fmu f;
  load_fmu(path, &f);
  if (isnan(o.step))
    o.step = f.m.step;
  if (isnan(o.stop))
    o.stop = f.m.stop;
  run r = {.f = &f, .o = &o};
  r.steps = lround(o.stop / o.step);
  /* the outputs: as asked, else every output of the FMU */
  if (o.outputs[0]) {
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", o.outputs);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && r.nout < 256;
         tok = strtok_r(NULL, ",", &save))
      r.out[r.nout++] = var_named(&f.m, tok);
  } else {
    for (int i = 0; i < f.m.n && r.nout < 256; i++)
      if (!strcmp(f.m.vars[i].causality, "output"))
        r.out[r.nout++] = &f.m.vars[i];
  }
  if (r.nout == 0)
    die("no outputs");
  if (o.in_path) {
    read_inputs(o.in_path, &r.in);
    r.inputs = calloc((size_t)r.in.ncols + 1, sizeof *r.inputs);
    for (int c = 0; c < r.in.ncols; c++) {
      r.inputs[c] = var_named(&f.m, r.in.names[c]);
      if (strcmp(r.inputs[c]->causality, "input"))
        die("%s: %s is not an input of the FMU", o.in_path, r.in.names[c]);
    }
  }
  for (int i = 0; i < nsets; i++) {
    char name[512];
    double value, t = 0.0;
    const char *eq = strchr(sets[i], '='), *at = strchr(sets[i], '@');
    if (!eq)
      usage();
    snprintf(name, sizeof name, "%.*s", (int)(eq - sets[i]), sets[i]);
    value = strtod(eq + 1, NULL);
    if (at)
      t = strtod(at + 1, NULL);
    o.set[o.nset++] = (setting){var_named(&f.m, name), value, t, false};
  }
  if (o.api_checks) {
    quiet = true;
    api_checks(&r);
    remove_tree(f.dir);
    release(&r, &f);
    return 0;
  }

  size_t nrows = (size_t)(r.steps + 1) * (size_t)r.nout;
  if (o.load_state) {
    /* a state another process serialized: from it to the end */
    FILE *sf = fopen(o.load_state, "rb");
    if (!sf)
      die("cannot read %s", o.load_state);
    fseek(sf, 0, SEEK_END);
    size_t len = (size_t)ftell(sf);
    fseek(sf, 0, SEEK_SET);
    unsigned char *b = malloc(len + 1);
    if (!b || fread(b, 1, len, sf) != len)
      die("cannot read %s", o.load_state);
    fclose(sf);
    inst y;
    instantiate(&y, &f, "loaded");
    void *s = deserialize(&y, b, len);
    if (set_state(&y, s) != 0)
      die("setting the loaded state failed: %s", last_error);
    free(b);
    long from = lround(o.load_from / o.step);
    r.rows = calloc(nrows, sizeof *r.rows);
    run_from(&r, &y, from, r.rows);
    record(&r, &y, from); /* (the row at `from` is the state's own outputs, read after the rest) */
    free_state(&y, &s);
    free_inst(&y);
    if (o.out_path) {
      /* the rows after `from` only */
      FILE *out = fopen(o.out_path, "w");
      if (!out)
        die("cannot write %s", o.out_path);
      for (long i = from + 1; i <= r.steps; i++) {
        fprintf(out, "%.17g", (double)i * o.step);
        for (int k = 0; k < r.nout; k++)
          fprintf(out, ",%.17g", r.rows[i * r.nout + k]);
        fprintf(out, "\n");
      }
      fclose(out);
    }
    free(r.rows);
    remove_tree(f.dir);
    release(&r, &f);
    return 0;
  }
  int n = o.instances < 1 ? 1 : o.instances;
  inst *xs = calloc((size_t)n, sizeof *xs);
  double **rows = calloc((size_t)n, sizeof *rows);
  long made = 0; /* the control: instantiating allocates, and is seen to */
  for (int k = 0; k < n; k++) {
    char name[32];
    snprintf(name, sizeof name, "i%d", k);
    counting = k == 0 && o.count_alloc;
    start_instance(&r, &xs[k], name);
    counting = 0;
    if (k == 0) {
      made = allocations;
      allocations = 0;
    }
    rows[k] = calloc(nrows, sizeof **rows);
    double *keep = r.rows;
    r.rows = rows[k];
    record(&r, &xs[k], 0);
    r.rows = keep;
  }
  fmu other;
  inst ox = {0};
  if (o.companion) {
    load_fmu(o.companion, &other);
    instantiate(&ox, &other, "companion");
    enter_init(&ox, other.m.stop);
    exit_init(&ox);
  }
  long state_step = isnan(o.state_at) ? -1 : lround(o.state_at / o.step);
  void *state = NULL;
  unsigned char *bytes = NULL;
  size_t nbytes = 0;
  /* the instances side by side, a step each in turn */
  for (long i = 0; i < r.steps; i++) {
    double t = (double)i * o.step;
    if (i == state_step) {
      if (get_state(&xs[0], &state) != 0)
        die("getting the FMU state failed");
      bytes = serialize(&xs[0], state, &nbytes);
    }
    if (o.save_state && i == lround(o.save_at / o.step)) {
      void *saved = NULL;
      size_t len;
      if (get_state(&xs[0], &saved) != 0)
        die("getting the FMU state failed");
      unsigned char *b = serialize(&xs[0], saved, &len);
      FILE *sf = fopen(o.save_state, "wb");
      if (!sf || fwrite(b, 1, len, sf) != len || fclose(sf) != 0)
        die("cannot write %s", o.save_state);
      free(b);
      free_state(&xs[0], &saved);
    }
    for (int k = 0; k < n; k++) {
      double *keep = r.rows;
      r.rows = rows[k];
      set_inputs(&r, &xs[k], t);
      apply_settings(&r, &xs[k], t, false);
      if (o.count_alloc)
        counting = 1;
      int st = do_step(&xs[k], t, o.step);
      counting = 0;
      if (st != 0)
        die("%s: the step from t = %.17g failed (%d): %s", xs[k].name, t, st, last_error);
      record(&r, &xs[k], i + 1);
      r.rows = keep;
    }
    if (o.companion && (i % 3) == 0) {
      double tc = (double)(i / 3) * other.m.step;
      if (tc + other.m.step <= other.m.stop && do_step(&ox, tc, other.m.step) != 0)
        die("the companion's step failed: %s", last_error);
    }
  }
  int rc = 0;
  for (int k = 1; k < n; k++)
    if (!same_rows(&r, rows[0], rows[k], 0, "two instances"))
      rc = 1;
  if (state) {
    /* the state set back: the rest again */
    double *again = calloc(nrows, sizeof *again);
    if (set_state(&xs[0], state) != 0)
      die("setting the FMU state failed: %s", last_error);
    run_from(&r, &xs[0], state_step, again);
    if (!same_rows(&r, rows[0], again, state_step + 1, "after setting the state back"))
      rc = 1;
    /* the serialized state in a new instance */
    inst y;
    instantiate(&y, &f, "deserialized");
    void *s2 = deserialize(&y, bytes, nbytes);
    if (set_state(&y, s2) != 0)
      die("setting the deserialized state failed: %s", last_error);
    double *third = calloc(nrows, sizeof *third);
    run_from(&r, &y, state_step, third);
    if (!same_rows(&r, rows[0], third, state_step + 1, "from the serialized state"))
      rc = 1;
    free_state(&y, &s2);
    free_inst(&y);
    free_state(&xs[0], &state);
    free(again);
    free(third);
    free(bytes);
    if (rc == 0)
      printf("state: set back and serialized at t = %g, the rest bit for bit\n", o.state_at);
  }
  if (o.count_alloc) {
    if (!COUNT_ALLOC)
      printf("allocations: not counted (AddressSanitizer owns malloc)\n");
    else if (made == 0) {
      fprintf(stderr, "fmu_import: no allocation seen while instantiating: the count is blind\n");
      rc = 1;
    } else if (allocations > 0) {
      fprintf(stderr, "fmu_import: %ld allocations inside DoStep\n", allocations);
      rc = 1;
    } else {
      printf("allocations: none in %ld steps (%ld while instantiating)\n", r.steps * n, made);
    }
  }
  r.rows = rows[0];
  if (o.out_path)
    write_csv(&r, o.out_path, o.xc);
  for (int k = 0; k < n; k++) {
    free_inst(&xs[k]);
    free(rows[k]);
  }
  if (o.companion) {
    free_inst(&ox);
    remove_tree(other.dir);
  }
  free(rows);
  free(xs);
  remove_tree(f.dir);
  if (o.companion)
    free(other.m.vars);
  release(&r, &f);
  return rc;
}
