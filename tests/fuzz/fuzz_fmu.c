/* Fuzz target: an FMU's resources, as the FMU runtime reads them at
 * instantiation (fmu/model.c, fmu/runtime.c): resources/fmu.json (the
 * configuration: FMI version, names, the internal step, the outputs), the
 * graph and the scenario.
 *
 * The input is either a configuration alone, run against one of the
 * example FMUs' graphs and scenarios (picked from the text's hash), or
 * "CONFIG\n====\nGRAPH[\n====\nSCENARIO]". Properties:
 * - loading never crashes, leaks or hangs; a refused resource set is
 *   reported (at least one message), an accepted one has a
 *   modelDescription.xml that is whole;
 * - an instance of an accepted set, instantiated with the token the texts
 *   give, initializes and takes a few communication steps with its inputs
 *   set, or fails with a message; its outputs read back; its FMU state is
 *   taken, serialized, deserialized and set back; nothing of it leaks. */
#include "fuzz_common.h"

#include "model.h"
#include "runtime.h"

#define SEP "\n====\n"

/* The example FMUs' graphs and scenarios (examples/fmu). */
static struct {
  char *graph[3];
  char *scenario[3];
  int n;
} ex;

static char *read_source(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", DG_SOURCE_ROOT, rel);
  return fmu_read_file(path, 1 << 24);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const char *const graphs[3][2] = {
      {"graphs/sedan_rwd_automatic.json", "examples/fmu/SedanLaunch/scenario.json"},
      {"graphs/coupled_clutches.json", "examples/fmu/CoupledClutches/scenario.json"},
      {"examples/fmu/Spindles/graph.json", "examples/fmu/Spindles/scenario.json"}};
  for (int i = 0; i < 3; i++) {
    ex.graph[ex.n] = read_source(graphs[i][0]);
    ex.scenario[ex.n] = read_source(graphs[i][1]);
    if (ex.graph[ex.n] && ex.scenario[ex.n])
      ex.n++;
  }
  FUZZ_CHECK(ex.n == 3, "the example graphs are not readable under %s", DG_SOURCE_ROOT);
  return 0;
}

typedef struct messages {
  int n;
} messages;

static void count(void *user, const char *text) {
  FUZZ_CHECK(text && *text, "an empty message");
  ((messages *)user)->n++;
}

static void count_log(void *env, const char *instance, fmu_status status, const char *category,
                      const char *message) {
  (void)instance;
  (void)status;
  FUZZ_CHECK(category && message, "a message without category or text");
  ((messages *)env)->n++;
}

/* A few steps of an instance, its state round trip. */
static void drive(fmu_instance *in, unsigned hash) {
  const fmu_model *m = in->m;
  messages *msg = in->log_env;
  if (fmu_enter_init(in, 0.0, false, 0.0) != FMU_OK)
    return;
  for (int k = 0; k < m->ninputs; k++) {
    const fmu_var *v = &m->vars[m->inputs[k]];
    double x = v->integer ? (double)(hash % 3) : (double)(hash % 7) / 6.0;
    unsigned vr = v->vr;
    fmu_set(in, &vr, 1, &x, v->integer);
  }
  int before = msg->n;
  if (fmu_exit_init(in) != FMU_OK) {
    FUZZ_CHECK(msg->n > before, "a failed start says nothing");
    return;
  }
  double h = m->dt * (double)(1 + hash % 4), t = 0.0;
  void *state = NULL;
  for (int i = 0; i < 12; i++) {
    if (i == 5 && fmu_get_state(in, &state) != FMU_OK)
      state = NULL;
    bool early, terminate;
    double last;
    before = msg->n;
    fmu_status st = fmu_do_step(in, t, h, &early, &terminate, &last);
    if (st == FMU_ERROR || st == FMU_FATAL) {
      FUZZ_CHECK(msg->n > before, "a failed step says nothing");
      break;
    }
    if (st == FMU_DISCARD)
      break;
    t = last;
    for (int k = 0; k < m->noutputs; k++) {
      unsigned vr = m->vars[m->outputs[k]].vr;
      double y;
      FUZZ_CHECK(fmu_get(in, &vr, 1, &y, false) == FMU_OK, "output %s cannot be read",
                 m->vars[m->outputs[k]].name);
    }
  }
  if (state) {
    size_t size = 0;
    if (fmu_state_size(in, state, &size) == FMU_OK) {
      unsigned char *buf = malloc(size ? size : 1);
      FUZZ_CHECK(buf != NULL, "out of memory");
      void *back = NULL;
      if (fmu_serialize_state(in, state, buf, size) == FMU_OK &&
          fmu_deserialize_state(in, buf, size, &back) == FMU_OK) {
        FUZZ_CHECK(fmu_set_state(in, back) == FMU_OK, "a deserialized state cannot be set");
        fmu_free_state(in, &back);
      }
      free(buf);
    }
    fmu_free_state(in, &state);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (ex.n == 0)
    LLVMFuzzerInitialize(NULL, NULL);
  char *text = malloc(size + 1);
  FUZZ_CHECK(text != NULL, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0';
  unsigned hash = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < size; i++)
    hash = (hash ^ data[i]) * 16777619u;
  const char *config = text, *graph, *scenario;
  char *sep = strstr(text, SEP);
  if (sep) {
    *sep = '\0';
    graph = sep + strlen(SEP);
    char *sep2 = strstr(sep + strlen(SEP), SEP);
    if (sep2)
      *sep2 = '\0';
    scenario = sep2 ? sep2 + strlen(SEP) : NULL;
  } else {
    int k = (int)(hash % (unsigned)ex.n);
    graph = ex.graph[k];
    scenario = ex.scenario[k];
  }
  messages msg = {0};
  fmu_model *m = fmu_model_load(config, graph, scenario, count, &msg);
  if (!m) {
    FUZZ_CHECK(msg.n > 0, "refused resources without a message");
    free(text);
    return 0;
  }
  char *xml = fmu_model_description(m);
  FUZZ_CHECK(xml && strstr(xml, "</fmiModelDescription>\n"), "a broken modelDescription.xml");
  free(xml);
  char token[40];
  fmu_token(config, graph, scenario, token);
  FUZZ_CHECK(strcmp(token, m->token) == 0, "the token is not the texts'");
  fmu_instance *in =
      fmu_instantiate_texts(m->fmi, "fuzz", token, config, graph, scenario, count_log, &msg, true);
  FUZZ_CHECK(in != NULL, "accepted resources do not instantiate");
  drive(in, hash);
  fmu_free(in);
  fmu_model_free(m);
  free(text);
  return 0;
}
