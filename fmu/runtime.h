/* One instance of a drivegraph FMU, the same for FMI 3.0 and 2.0
 * (fmu/runtime.c); fmu/fmi3.c and fmu/fmi2.c map the standard's functions
 * onto these.
 *
 * An instance owns everything it runs: its model (fmu/model.h), a graph
 * loaded for it alone (tunable parameters are written into it between
 * steps), its simulation and the scenario driver. Nothing is shared
 * between instances and there is no global state, so several instances
 * live in one process, each used by one thread at a time.
 *
 * Time: the simulation starts at 0 at the experiment's start time, and
 * steps `dt` (the scenario's, else the tool's --dt, else 1 ms) as
 * `drivegraph sim` does, so an FMU stepped at multiples of dt with the
 * inputs `sim` is given reproduces its CSV bit for bit. */
#ifndef DG_FMU_RUNTIME_H
#define DG_FMU_RUNTIME_H

#include "model.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The status values of both standards (same numbers in fmi2Status and
 * fmi3Status for these five). */
typedef enum fmu_status {
  FMU_OK = 0,
  FMU_WARNING = 1,
  FMU_DISCARD = 2,
  FMU_ERROR = 3,
  FMU_FATAL = 4
} fmu_status;

/* Log categories (modelDescription.xml's <LogCategories>). */
enum { LOG_WARNING, LOG_DISCARD, LOG_ERROR, LOG_FATAL, LOG_CALLS, LOG_NCAT };
extern const char *const fmu_log_category[LOG_NCAT];

/* Sends one message to the importer's logger (the wrapper knows its form). */
typedef void (*fmu_log_fn)(void *env, const char *instance, fmu_status status,
                           const char *category, const char *message);

typedef enum fmu_mode {
  MODE_INSTANTIATED,
  MODE_INIT,
  MODE_STEP,
  MODE_TERMINATED,
  MODE_ERROR /* a call failed: get, reset, set state and free remain */
} fmu_mode;

/* FMI 2's input derivatives: the input follows u0 + Σ d_k (t − t0)^k / k!
 * from time t0 (simulation time). */
#define FMU_MAX_ORDER 3
typedef struct fmu_interp {
  bool active;
  double t0, u0;
  double d[FMU_MAX_ORDER];
} fmu_interp;

typedef struct fmu_instance {
  fmu_model *m;
  char *name;
  int fmi;
  fmu_log_fn log;
  void *log_env;
  void (*host_log)(void); /* the importer's logger, as the wrapper casts it */
  void *host_env;         /* its instance environment */
  bool cat_on[LOG_NCAT];
  bool errors_always; /* FMI 2: warnings and errors are logged whatever loggingOn says */
  fmu_mode mode;
  bool early_return_allowed;
  double start_time;
  bool stop_defined;
  double stop_time;

  double *val;         /* per variable: inputs' and parameters' current values */
  fmu_interp *interp;  /* per variable (inputs) */

  /* the running simulation */
  dg_graph *graph;     /* loaded for this instance alone */
  char *run_text;      /* the text it was loaded from (fixed parameters in it) */
  dg_scenario *scn;    /* the scenario with the FMU's inputs added as constants */
  dg_sim *sim;
  dg_driver *drv;
  bool dirty;          /* before the start: a value changed since the simulation was built */
  long k;              /* steps of dt since t_base */
  double t_base;       /* simulation time of step 0 */
  bool stopped;        /* the scenario's stop condition held */
  double last_successful; /* FMI 2's fmi2LastSuccessfulTime */
} fmu_instance;

/* Instantiates: reads resources/fmu.json, graph.json and scenario.json
 * from `resource_dir` (a directory path, a trailing '/' optional), builds
 * the model and checks `token` against it. NULL after logging why (the
 * logger gets `name`). */
fmu_instance *fmu_instantiate(int fmi, const char *name, const char *token,
                              const char *resource_dir, fmu_log_fn log, void *env,
                              bool logging_on);
/* The same from the three resources' texts (scenario may be NULL): for
 * the fuzz target, which has no files. */
fmu_instance *fmu_instantiate_texts(int fmi, const char *name, const char *token,
                                    const char *config, const char *graph,
                                    const char *scenario, fmu_log_fn log, void *env,
                                    bool logging_on);
void fmu_free(fmu_instance *in);

/* "file:///abs/path", "file:/abs/path" or "file://localhost/abs/path",
 * percent escapes decoded, into buf; false for other URIs. */
bool fmu_uri_to_path(const char *uri, char *buf, size_t size);

/* Messages: `status` picks the category (OK: logCalls). Returns status. */
fmu_status fmu_log(fmu_instance *in, fmu_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error: logged, and the instance goes to MODE_ERROR. */
fmu_status fmu_fail(fmu_instance *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the call `what` is allowed in the current mode (else logged). */
bool fmu_allowed(fmu_instance *in, const char *what, unsigned modes);
#define IN_MODE(m) (1u << (m))

fmu_status fmu_set_debug_logging(fmu_instance *in, bool on, size_t n, const char *const *cats);
fmu_status fmu_reset(fmu_instance *in);
fmu_status fmu_enter_init(fmu_instance *in, double start, bool stop_defined, double stop);
fmu_status fmu_exit_init(fmu_instance *in);
fmu_status fmu_terminate(fmu_instance *in);

/* Values by value reference: Float64 / Real variables (`integer` false) or
 * the Int32 / Integer ones (`integer` true). */
fmu_status fmu_get(fmu_instance *in, const unsigned *vr, size_t n, double *out, bool integer);
fmu_status fmu_set(fmu_instance *in, const unsigned *vr, size_t n, const double *v, bool integer);
/* FMI 2: the derivatives of real inputs (orders 1..FMU_MAX_ORDER). */
fmu_status fmu_set_input_derivatives(fmu_instance *in, const unsigned *vr, size_t n,
                                     const int *order, const double *v);

/* One communication step. *early: returned before t + h (the scenario's
 * stop condition, when early returns are allowed); *last: the time
 * reached; *terminate: the scenario's stop condition holds. */
fmu_status fmu_do_step(fmu_instance *in, double t, double h, bool *early, bool *terminate,
                       double *last);

/* FMU states (opaque). */
fmu_status fmu_get_state(fmu_instance *in, void **state);
fmu_status fmu_set_state(fmu_instance *in, void *state);
fmu_status fmu_free_state(fmu_instance *in, void **state);
fmu_status fmu_state_size(fmu_instance *in, void *state, size_t *size);
fmu_status fmu_serialize_state(fmu_instance *in, void *state, unsigned char *buf, size_t size);
fmu_status fmu_deserialize_state(fmu_instance *in, const unsigned char *buf, size_t size,
                                 void **state);

#endif
