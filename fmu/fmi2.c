/* The FMI 2.0 Co-Simulation interface of a drivegraph FMU: every function
 * of fmi2Functions.h, the ones of Co-Simulation mapped onto
 * fmu/runtime.c (with input interpolation: fmi2SetRealInputDerivatives),
 * the ones of Model Exchange refusing with a message. Built into
 * libdgfmu2.so, which links libdrivegraph statically and exports only
 * these functions (fmu/export.map). The FMU allocates with the C library
 * (canNotUseMemoryManagementFunctions="true"). */
#define DG_FMU_BUILD
#include "fmi2.h"

#include "runtime.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The logger is printf-like: the message goes in as "%s"'s argument. */
static void log_fmi2(void *env, const char *instance, fmu_status status, const char *category,
                     const char *message) {
  fmu_instance *in = env;
  fmi2CallbackLogger cb = (fmi2CallbackLogger)in->host_log;
  if (cb)
    cb(in->host_env, instance, (fmi2Status)status, category, "%s", message);
}

typedef struct early_log {
  fmi2CallbackLogger cb;
  fmi2ComponentEnvironment env;
} early_log;

static void log_early(void *env, const char *instance, fmu_status status, const char *category,
                      const char *message) {
  early_log *e = env;
  if (e->cb)
    e->cb(e->env, instance, (fmi2Status)status, category, "%s", message);
}

#define INST(x) fmu_instance *in = (fmu_instance *)(x)
#define CHECK_INST \
  if (!in)         \
  return fmi2Error

const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[]) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_set_debug_logging(in, loggingOn != fmi2False, nCategories, categories);
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                              fmi2Boolean loggingOn) {
  (void)visible;
  early_log e = {functions ? functions->logger : NULL,
                 functions ? functions->componentEnvironment : NULL};
  const char *name = instanceName ? instanceName : "";
  if (fmuType != fmi2CoSimulation) {
    log_early(&e, name, FMU_ERROR, "logStatusError",
              "this FMU is for Co-Simulation only (no Model Exchange)");
    return NULL;
  }
  char path[4096];
  if (!fmu_uri_to_path(fmuResourceLocation, path, sizeof path)) {
    log_early(&e, name, FMU_ERROR, "logStatusError",
              "the resource location must be a file: URI of the resources folder (\"file:///"
              "path/resources\")");
    return NULL;
  }
  fmu_instance *in =
      fmu_instantiate(2, instanceName, fmuGUID, path, log_early, &e, loggingOn != fmi2False);
  if (!in)
    return NULL;
  in->log = log_fmi2;
  in->log_env = in;
  in->host_log = (void (*)(void))e.cb;
  in->host_env = e.env;
  return in;
}

void fmi2FreeInstance(fmi2Component c) { fmu_free((fmu_instance *)c); }

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
  INST(c);
  CHECK_INST;
  (void)toleranceDefined;
  (void)tolerance;
  if (!fmu_allowed(in, "fmi2SetupExperiment", IN_MODE(MODE_INSTANTIATED)))
    return fmi2Error;
  in->start_time = startTime;
  in->stop_defined = stopTimeDefined != fmi2False;
  in->stop_time = stopTime;
  return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  INST(c);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi2EnterInitializationMode");
  return (fmi2Status)fmu_enter_init(in, in->start_time, in->stop_defined, in->stop_time);
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  INST(c);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi2ExitInitializationMode");
  return (fmi2Status)fmu_exit_init(in);
}

fmi2Status fmi2Terminate(fmi2Component c) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_terminate(in);
}

fmi2Status fmi2Reset(fmi2Component c) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_reset(in);
}

/* ---- values ---------------------------------------------------------------- */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[]) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_get(in, vr, nvr, value, false);
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[]) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_set(in, vr, nvr, value, false);
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[]) {
  INST(c);
  CHECK_INST;
  if (nvr > 0 && (!vr || !value))
    return fmi2Error;
  for (size_t i = 0; i < nvr; i++) {
    double v;
    fmu_status st = fmu_get(in, &vr[i], 1, &v, true);
    if (st != FMU_OK)
      return (fmi2Status)st;
    value[i] = (fmi2Integer)v;
  }
  return fmi2OK;
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[]) {
  INST(c);
  CHECK_INST;
  if (nvr > 0 && (!vr || !value))
    return fmi2Error;
  for (size_t i = 0; i < nvr; i++) {
    double v = value[i];
    fmu_status st = fmu_set(in, &vr[i], 1, &v, true);
    if (st != FMU_OK)
      return (fmi2Status)st;
  }
  return fmi2OK;
}

static fmi2Status no_variables(fmi2Component c, size_t nvr, const char *what) {
  INST(c);
  CHECK_INST;
  if (nvr == 0)
    return fmi2OK;
  fmu_fail(in, "%s: this FMU has no variables of that type", what);
  return fmi2Error;
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[]) {
  (void)vr;
  (void)value;
  return no_variables(c, nvr, "fmi2GetBoolean");
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[]) {
  (void)vr;
  (void)value;
  return no_variables(c, nvr, "fmi2SetBoolean");
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[]) {
  (void)vr;
  (void)value;
  return no_variables(c, nvr, "fmi2GetString");
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[]) {
  (void)vr;
  (void)value;
  return no_variables(c, nvr, "fmi2SetString");
}

/* ---- FMU states -------------------------------------------------------------- */

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_get_state(in, FMUstate);
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_set_state(in, FMUstate);
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_free_state(in, FMUstate);
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_state_size(in, FMUstate, size);
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[],
                                 size_t size) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_serialize_state(in, FMUstate, (unsigned char *)serializedState, size);
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_deserialize_state(in, (const unsigned char *)serializedState, size,
                                           FMUstate);
}

/* ---- what this FMU does not provide ----------------------------------------- */

static fmi2Status unsupported(fmi2Component c, const char *what) {
  INST(c);
  CHECK_INST;
  fmu_fail(in, "%s is not supported by this FMU (Co-Simulation)", what);
  return fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                        size_t nUnknown, const fmi2ValueReference vKnown_ref[],
                                        size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[]) {
  (void)vUnknown_ref;
  (void)nUnknown;
  (void)vKnown_ref;
  (void)nKnown;
  (void)dvKnown;
  (void)dvUnknown;
  return unsupported(c, "fmi2GetDirectionalDerivative");
}

fmi2Status fmi2EnterEventMode(fmi2Component c) {
  return unsupported(c, "fmi2EnterEventMode (Model Exchange)");
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *fmi2eventInfo) {
  (void)fmi2eventInfo;
  return unsupported(c, "fmi2NewDiscreteStates (Model Exchange)");
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
  return unsupported(c, "fmi2EnterContinuousTimeMode (Model Exchange)");
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c,
                                       fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode,
                                       fmi2Boolean *terminateSimulation) {
  (void)noSetFMUStatePriorToCurrentPoint;
  (void)enterEventMode;
  (void)terminateSimulation;
  return unsupported(c, "fmi2CompletedIntegratorStep (Model Exchange)");
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) {
  (void)time;
  return unsupported(c, "fmi2SetTime (Model Exchange)");
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx) {
  (void)x;
  (void)nx;
  return unsupported(c, "fmi2SetContinuousStates (Model Exchange)");
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx) {
  (void)derivatives;
  (void)nx;
  return unsupported(c, "fmi2GetDerivatives (Model Exchange)");
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni) {
  (void)eventIndicators;
  (void)ni;
  return unsupported(c, "fmi2GetEventIndicators (Model Exchange)");
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx) {
  (void)x;
  (void)nx;
  return unsupported(c, "fmi2GetContinuousStates (Model Exchange)");
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx) {
  (void)x_nominal;
  (void)nx;
  return unsupported(c, "fmi2GetNominalsOfContinuousStates (Model Exchange)");
}

/* ---- Co-Simulation ------------------------------------------------------------ */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[]) {
  INST(c);
  CHECK_INST;
  return (fmi2Status)fmu_set_input_derivatives(in, vr, nvr, order, value);
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[]) {
  (void)vr;
  (void)order;
  (void)value;
  if (nvr == 0)
    return c ? fmi2OK : fmi2Error;
  return unsupported(c, "fmi2GetRealOutputDerivatives (maxOutputDerivativeOrder is 0)");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
  INST(c);
  CHECK_INST;
  (void)noSetFMUStatePriorToCurrentPoint;
  fmu_log(in, FMU_OK, "fmi2DoStep(%.17g, %.17g)", currentCommunicationPoint, communicationStepSize);
  bool early, terminate;
  double last;
  return (fmi2Status)fmu_do_step(in, currentCommunicationPoint, communicationStepSize, &early,
                                 &terminate, &last);
}

fmi2Status fmi2CancelStep(fmi2Component c) {
  return unsupported(c, "fmi2CancelStep (steps are never asynchronous)");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
  INST(c);
  CHECK_INST;
  (void)s;
  (void)value;
  return fmi2Discard; /* fmi2DoStep never returns fmi2Pending */
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
  INST(c);
  CHECK_INST;
  if (s != fmi2LastSuccessfulTime || !value)
    return fmi2Discard;
  *value = in->last_successful;
  return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
  INST(c);
  CHECK_INST;
  (void)s;
  (void)value;
  return fmi2Discard;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
  INST(c);
  CHECK_INST;
  if (s != fmi2Terminated || !value)
    return fmi2Discard;
  *value = in->stopped ? fmi2True : fmi2False;
  return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
  INST(c);
  CHECK_INST;
  (void)s;
  (void)value;
  return fmi2Discard;
}
