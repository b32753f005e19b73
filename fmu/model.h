/* The model an FMU of a drivegraph graph exposes (fmu/model.c): its
 * configuration (resources/fmu.json), its variables (the time, the
 * inputs: the channels the graph reads that the scenario does not drive;
 * the outputs: the signals chosen; the parameters: the numbers that do not
 * change the graph's structure) with their value references, units and
 * start values, its modelDescription.xml for FMI 3.0 or 2.0, and the
 * instantiation token that ties the description to the resources.
 *
 * The same code builds the table when `drivegraph fmu` writes the FMU
 * (drivegraph_fmu_describe, fmu/describe.c) and when an importer
 * instantiates it (fmu/runtime.c), so the two cannot disagree; the token
 * (a hash of the resources) is checked at instantiation. */
#ifndef DG_FMU_MODEL_H
#define DG_FMU_MODEL_H

#include <drivegraph/drivegraph.h>
#include <stdbool.h>
#include <stddef.h>

/* The version of the FMU layout (resources/fmu.json's "drivegraph_fmu"). */
#define FMU_LAYOUT 1

typedef enum fmu_var_kind { VAR_TIME, VAR_INPUT, VAR_OUTPUT, VAR_PARAM } fmu_var_kind;

typedef struct fmu_var {
  char *name;
  unsigned vr;       /* value reference: the variable's place in model->vars */
  fmu_var_kind kind;
  bool integer;      /* an Int32 (FMI 3) / Integer (FMI 2): a gear input */
  bool tunable;      /* parameters: changeable between steps (else fixed before the start) */
  int index;         /* input: the simulation's input index; output: its signal id */
  double start;      /* inputs and parameters */
  bool has_min, has_max;
  double min, max;
  char *unit;        /* "" for none */
  char *key;         /* parameters: "block.param[.field]" (the name, unless a signal has it) */
  const struct dg_param_def *def; /* parameters: the class's table entry (static) */
  char *description;
} fmu_var;

typedef struct fmu_model {
  int fmi;                 /* 3 or 2 */
  char *model_name;
  char *model_identifier;
  char *description;
  double dt;               /* the internal step (s) */
  double stop_time;        /* the scenario's duration, NaN without */
  double step_size;        /* the communication step the description suggests (s) */
  char *config_json;       /* resources/fmu.json */
  char *graph_json;        /* resources/graph.json */
  char *scenario_json;     /* resources/scenario.json, NULL without */
  bool has_stop;           /* the scenario has a stop condition */
  char token[40];          /* "{8-4-4-4-12}" hex: a hash of the three texts */

  int nvars;
  fmu_var *vars;           /* value reference = index */
  int ninputs, noutputs, nparams;
  int *inputs, *outputs, *params; /* indices into vars, in order */
} fmu_model;

/* Problems are reported through this (a line of text each). */
typedef void (*fmu_report_fn)(void *user, const char *text);

/* Builds the model from the three texts (scenario_json may be NULL):
 * parses and checks the configuration, loads the graph and the scenario
 * and makes the variable table. NULL after reporting every problem found
 * through `report` (which may be NULL). */
fmu_model *fmu_model_load(const char *config_json, const char *graph_json,
                          const char *scenario_json, fmu_report_fn report, void *user);
void fmu_model_free(fmu_model *m);

/* The modelDescription.xml for the model's FMI version (malloc'ed). */
char *fmu_model_description(const fmu_model *m);

/* The index in m->vars of variable `vr`, or -1. */
static inline int fmu_model_var(const fmu_model *m, unsigned vr) {
  return vr < (unsigned)m->nvars ? (int)vr : -1;
}

/* The token of three texts (any of which may be NULL): into buf (40 bytes). */
void fmu_token(const char *config_json, const char *graph_json, const char *scenario_json,
               char buf[40]);

/* `scenario_json` (NULL: none) with the n channels `names` added to its
 * "inputs" as constants from t = 0 (integers where `integer` says so),
 * as compact JSON with every digit (malloc'ed), or NULL when the text is
 * not a JSON object or memory runs out. */
char *fmu_scenario_with_inputs(const char *scenario_json, int n, const char *const *names,
                               const double *values, const bool *integer);

/* Reads a file whole (malloc'ed, NUL-terminated, at most `max` bytes);
 * NULL and errno set otherwise. */
char *fmu_read_file(const char *path, size_t max);

#endif
