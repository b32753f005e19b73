/* The FMI 3.0 Co-Simulation interface of a drivegraph FMU: every function
 * of the standard (section 2.5: an FMU exports all of them), the ones of
 * Co-Simulation mapped onto fmu/runtime.c, the others (Model Exchange,
 * Scheduled Execution, event mode, clocks, derivatives) refusing with a
 * message. Built into libdgfmu3.so, which links libdrivegraph statically
 * and exports only these functions (fmu/export.map). */
#define DG_FMU_BUILD
#include "fmi3.h"

#include "runtime.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void log_fmi3(void *env, const char *instance, fmu_status status, const char *category,
                     const char *message) {
  (void)instance;
  fmu_instance *in = env;
  fmi3LogMessageCallback cb = (fmi3LogMessageCallback)in->host_log;
  if (cb)
    cb(in->host_env, (fmi3Status)status, category, message);
}

#define INST(x) fmu_instance *in = (fmu_instance *)(x)
#define CHECK_INST \
  if (!in)         \
  return fmi3Error

const char *fmi3GetVersion(void) { return fmi3Version; }

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[]) {
  INST(instance);
  CHECK_INST;
  return (fmi3Status)fmu_set_debug_logging(in, loggingOn, nCategories, categories);
}

/* Only Co-Simulation is supported: the others log through their callback. */
static void refuse_instantiate(fmi3String name, fmi3InstanceEnvironment env,
                               fmi3LogMessageCallback log, const char *what) {
  (void)name;
  if (log)
    log(env, fmi3Error, "logStatusError", what);
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible,
                                          fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage) {
  (void)instantiationToken;
  (void)resourcePath;
  (void)visible;
  (void)loggingOn;
  refuse_instantiate(instanceName, instanceEnvironment, logMessage,
                     "this FMU is for Co-Simulation only (no Model Exchange)");
  return NULL;
}

fmi3Instance fmi3InstantiateScheduledExecution(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
    fmi3LockPreemptionCallback lockPreemption, fmi3UnlockPreemptionCallback unlockPreemption) {
  (void)instantiationToken;
  (void)resourcePath;
  (void)visible;
  (void)loggingOn;
  (void)clockUpdate;
  (void)lockPreemption;
  (void)unlockPreemption;
  refuse_instantiate(instanceName, instanceEnvironment, logMessage,
                     "this FMU is for Co-Simulation only (no Scheduled Execution)");
  return NULL;
}

/* The logger of an instance being made, before the instance exists. */
typedef struct early_log {
  fmi3LogMessageCallback cb;
  fmi3InstanceEnvironment env;
  bool on;
} early_log;

static void log_early(void *env, const char *instance, fmu_status status, const char *category,
                      const char *message) {
  (void)instance;
  early_log *e = env;
  if (e->cb && e->on)
    e->cb(e->env, (fmi3Status)status, category, message);
}

fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath,
    fmi3Boolean visible, fmi3Boolean loggingOn, fmi3Boolean eventModeUsed,
    fmi3Boolean earlyReturnAllowed, const fmi3ValueReference requiredIntermediateVariables[],
    size_t nRequiredIntermediateVariables, fmi3InstanceEnvironment instanceEnvironment,
    fmi3LogMessageCallback logMessage, fmi3IntermediateUpdateCallback intermediateUpdate) {
  (void)visible;
  (void)requiredIntermediateVariables;
  (void)intermediateUpdate;
  early_log e = {logMessage, instanceEnvironment, loggingOn};
  if (eventModeUsed) {
    log_early(&e, instanceName, FMU_ERROR, "logStatusError",
              "this FMU has no event mode (hasEventMode=\"false\"): instantiate it with "
              "eventModeUsed = false");
    return NULL;
  }
  if (nRequiredIntermediateVariables > 0) {
    log_early(&e, instanceName, FMU_ERROR, "logStatusError",
              "this FMU has no intermediate update: no variable can be required for it");
    return NULL;
  }
  fmu_instance *in =
      fmu_instantiate(3, instanceName, instantiationToken, resourcePath, log_early, &e, loggingOn);
  if (!in)
    return NULL;
  in->log = log_fmi3;
  in->log_env = in;
  in->host_log = (void (*)(void))logMessage;
  in->host_env = instanceEnvironment;
  in->early_return_allowed = earlyReturnAllowed;
  return in;
}

void fmi3FreeInstance(fmi3Instance instance) { fmu_free((fmu_instance *)instance); }

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime) {
  INST(instance);
  CHECK_INST;
  (void)toleranceDefined;
  (void)tolerance;
  fmu_log(in, FMU_OK, "fmi3EnterInitializationMode(start %g)", startTime);
  return (fmi3Status)fmu_enter_init(in, startTime, stopTimeDefined, stopTime);
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance) {
  INST(instance);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi3ExitInitializationMode");
  return (fmi3Status)fmu_exit_init(in);
}

/* A function this FMU does not provide: the error, with its name. */
static fmi3Status unsupported(fmi3Instance instance, const char *what) {
  INST(instance);
  CHECK_INST;
  fmu_fail(in, "%s is not supported by this FMU (Co-Simulation without event mode)", what);
  return fmi3Error;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance) {
  return unsupported(instance, "fmi3EnterEventMode");
}

fmi3Status fmi3Terminate(fmi3Instance instance) {
  INST(instance);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi3Terminate");
  return (fmi3Status)fmu_terminate(in);
}

fmi3Status fmi3Reset(fmi3Instance instance) {
  INST(instance);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi3Reset");
  return (fmi3Status)fmu_reset(in);
}

/* ---- values ---------------------------------------------------------------- */

static fmi3Status count_check(fmu_instance *in, size_t nvr, size_t nvalues, const char *what) {
  if (nvr != nvalues) {
    fmu_fail(in, "%s: %zu values for %zu value references (every variable is a scalar)", what,
             nvalues, nvr);
    return fmi3Error;
  }
  return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float64 values[], size_t nValues) {
  INST(instance);
  CHECK_INST;
  if (count_check(in, nValueReferences, nValues, "fmi3GetFloat64") != fmi3OK)
    return fmi3Error;
  return (fmi3Status)fmu_get(in, valueReferences, nValueReferences, values, false);
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float64 values[], size_t nValues) {
  INST(instance);
  CHECK_INST;
  if (count_check(in, nValueReferences, nValues, "fmi3SetFloat64") != fmi3OK)
    return fmi3Error;
  return (fmi3Status)fmu_set(in, valueReferences, nValueReferences, values, false);
}

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Int32 values[], size_t nValues) {
  INST(instance);
  CHECK_INST;
  if (count_check(in, nValueReferences, nValues, "fmi3GetInt32") != fmi3OK)
    return fmi3Error;
  for (size_t i = 0; i < nValueReferences; i++) {
    double v;
    fmu_status st = fmu_get(in, &valueReferences[i], 1, &v, true);
    if (st != FMU_OK)
      return (fmi3Status)st;
    values[i] = (fmi3Int32)v;
  }
  return fmi3OK;
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Int32 values[], size_t nValues) {
  INST(instance);
  CHECK_INST;
  if (count_check(in, nValueReferences, nValues, "fmi3SetInt32") != fmi3OK)
    return fmi3Error;
  for (size_t i = 0; i < nValueReferences; i++) {
    double v = values[i];
    fmu_status st = fmu_set(in, &valueReferences[i], 1, &v, true);
    if (st != FMU_OK)
      return (fmi3Status)st;
  }
  return fmi3OK;
}

/* Types no variable of this FMU has: any value reference is an error. */
static fmi3Status no_variables(fmi3Instance instance, size_t nvr, const char *type,
                               const char *what) {
  INST(instance);
  CHECK_INST;
  if (nvr == 0)
    return fmi3OK;
  fmu_fail(in, "%s: this FMU has no %s variables", what, type);
  return fmi3Error;
}

#define NO_VARIABLES(T)                                                                    \
  fmi3Status fmi3Get##T(fmi3Instance instance, const fmi3ValueReference valueReferences[], \
                        size_t nValueReferences, fmi3##T values[], size_t nValues) {       \
    (void)valueReferences;                                                                 \
    (void)values;                                                                          \
    (void)nValues;                                                                         \
    return no_variables(instance, nValueReferences, #T, "fmi3Get" #T);                     \
  }                                                                                        \
  fmi3Status fmi3Set##T(fmi3Instance instance, const fmi3ValueReference valueReferences[], \
                        size_t nValueReferences, const fmi3##T values[], size_t nValues) { \
    (void)valueReferences;                                                                 \
    (void)values;                                                                          \
    (void)nValues;                                                                         \
    return no_variables(instance, nValueReferences, #T, "fmi3Set" #T);                     \
  }

NO_VARIABLES(Float32)
NO_VARIABLES(Int8)
NO_VARIABLES(UInt8)
NO_VARIABLES(Int16)
NO_VARIABLES(UInt16)
NO_VARIABLES(UInt32)
NO_VARIABLES(Int64)
NO_VARIABLES(UInt64)
NO_VARIABLES(Boolean)
NO_VARIABLES(String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, size_t valueSizes[], fmi3Binary values[],
                         size_t nValues) {
  (void)valueReferences;
  (void)valueSizes;
  (void)values;
  (void)nValues;
  return no_variables(instance, nValueReferences, "Binary", "fmi3GetBinary");
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const size_t valueSizes[],
                         const fmi3Binary values[], size_t nValues) {
  (void)valueReferences;
  (void)valueSizes;
  (void)values;
  (void)nValues;
  return no_variables(instance, nValueReferences, "Binary", "fmi3SetBinary");
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Clock values[]) {
  (void)valueReferences;
  (void)values;
  return no_variables(instance, nValueReferences, "Clock", "fmi3GetClock");
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Clock values[]) {
  (void)valueReferences;
  (void)values;
  return no_variables(instance, nValueReferences, "Clock", "fmi3SetClock");
}

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance,
                                               fmi3ValueReference valueReference,
                                               size_t *nDependencies) {
  (void)valueReference;
  (void)nDependencies;
  return unsupported(instance, "fmi3GetNumberOfVariableDependencies");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[],
                                       fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[],
                                       fmi3DependencyKind dependencyKinds[], size_t nDependencies) {
  (void)dependent;
  (void)elementIndicesOfDependent;
  (void)independents;
  (void)elementIndicesOfIndependents;
  (void)dependencyKinds;
  (void)nDependencies;
  return unsupported(instance, "fmi3GetVariableDependencies");
}

/* ---- FMU states -------------------------------------------------------------- */

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
  INST(instance);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi3GetFMUState");
  return (fmi3Status)fmu_get_state(in, FMUState);
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState) {
  INST(instance);
  CHECK_INST;
  fmu_log(in, FMU_OK, "fmi3SetFMUState");
  return (fmi3Status)fmu_set_state(in, FMUState);
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState) {
  INST(instance);
  CHECK_INST;
  return (fmi3Status)fmu_free_state(in, FMUState);
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size) {
  INST(instance);
  CHECK_INST;
  return (fmi3Status)fmu_state_size(in, FMUState, size);
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState,
                                 fmi3Byte serializedState[], size_t size) {
  INST(instance);
  CHECK_INST;
  return (fmi3Status)fmu_serialize_state(in, FMUState, serializedState, size);
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[],
                                   size_t size, fmi3FMUState *FMUState) {
  INST(instance);
  CHECK_INST;
  return (fmi3Status)fmu_deserialize_state(in, serializedState, size, FMUState);
}

/* ---- what this FMU does not provide ----------------------------------------- */

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                        size_t nUnknowns, const fmi3ValueReference knowns[],
                                        size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                        fmi3Float64 sensitivity[], size_t nSensitivity) {
  (void)unknowns;
  (void)nUnknowns;
  (void)knowns;
  (void)nKnowns;
  (void)seed;
  (void)nSeed;
  (void)sensitivity;
  (void)nSensitivity;
  return unsupported(instance, "fmi3GetDirectionalDerivative");
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[],
                                    size_t nUnknowns, const fmi3ValueReference knowns[],
                                    size_t nKnowns, const fmi3Float64 seed[], size_t nSeed,
                                    fmi3Float64 sensitivity[], size_t nSensitivity) {
  (void)unknowns;
  (void)nUnknowns;
  (void)knowns;
  (void)nKnowns;
  (void)seed;
  (void)nSeed;
  (void)sensitivity;
  (void)nSensitivity;
  return unsupported(instance, "fmi3GetAdjointDerivative");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance) {
  return unsupported(instance, "fmi3EnterConfigurationMode");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance) {
  return unsupported(instance, "fmi3ExitConfigurationMode");
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)intervals;
  (void)qualifiers;
  return unsupported(instance, "fmi3GetIntervalDecimal");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[],
                                   fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)counters;
  (void)resolutions;
  (void)qualifiers;
  return unsupported(instance, "fmi3GetIntervalFraction");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)shifts;
  return unsupported(instance, "fmi3GetShiftDecimal");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[],
                                fmi3UInt64 resolutions[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)counters;
  (void)resolutions;
  return unsupported(instance, "fmi3GetShiftFraction");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)intervals;
  return unsupported(instance, "fmi3SetIntervalDecimal");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance,
                                   const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)counters;
  (void)resolutions;
  return unsupported(instance, "fmi3SetIntervalFraction");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)shifts;
  return unsupported(instance, "fmi3SetShiftDecimal");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[]) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)counters;
  (void)resolutions;
  return unsupported(instance, "fmi3SetShiftFraction");
}

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance) {
  return unsupported(instance, "fmi3EvaluateDiscreteStates");
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation,
                                    fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged,
                                    fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime) {
  (void)discreteStatesNeedUpdate;
  (void)terminateSimulation;
  (void)nominalsOfContinuousStatesChanged;
  (void)valuesOfContinuousStatesChanged;
  (void)nextEventTimeDefined;
  (void)nextEventTime;
  return unsupported(instance, "fmi3UpdateDiscreteStates");
}

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance) {
  return unsupported(instance, "fmi3EnterContinuousTimeMode (Model Exchange)");
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance,
                                       fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode,
                                       fmi3Boolean *terminateSimulation) {
  (void)noSetFMUStatePriorToCurrentPoint;
  (void)enterEventMode;
  (void)terminateSimulation;
  return unsupported(instance, "fmi3CompletedIntegratorStep (Model Exchange)");
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time) {
  (void)time;
  return unsupported(instance, "fmi3SetTime (Model Exchange)");
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
  (void)continuousStates;
  (void)nContinuousStates;
  return unsupported(instance, "fmi3SetContinuousStates (Model Exchange)");
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[],
                                             size_t nContinuousStates) {
  (void)derivatives;
  (void)nContinuousStates;
  return unsupported(instance, "fmi3GetContinuousStateDerivatives (Model Exchange)");
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[],
                                  size_t nEventIndicators) {
  (void)eventIndicators;
  (void)nEventIndicators;
  return unsupported(instance, "fmi3GetEventIndicators (Model Exchange)");
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[],
                                   size_t nContinuousStates) {
  (void)continuousStates;
  (void)nContinuousStates;
  return unsupported(instance, "fmi3GetContinuousStates (Model Exchange)");
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[],
                                             size_t nContinuousStates) {
  (void)nominals;
  (void)nContinuousStates;
  return unsupported(instance, "fmi3GetNominalsOfContinuousStates (Model Exchange)");
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators) {
  (void)nEventIndicators;
  return unsupported(instance, "fmi3GetNumberOfEventIndicators (Model Exchange)");
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates) {
  (void)nContinuousStates;
  return unsupported(instance, "fmi3GetNumberOfContinuousStates (Model Exchange)");
}

fmi3Status fmi3EnterStepMode(fmi3Instance instance) {
  return unsupported(instance, "fmi3EnterStepMode (there is no event mode to leave)");
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[],
                                    fmi3Float64 values[], size_t nValues) {
  (void)valueReferences;
  (void)nValueReferences;
  (void)orders;
  (void)values;
  (void)nValues;
  return unsupported(instance, "fmi3GetOutputDerivatives (maxOutputDerivativeOrder is 0)");
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint,
                      fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                      fmi3Boolean *eventHandlingNeeded, fmi3Boolean *terminateSimulation,
                      fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime) {
  INST(instance);
  CHECK_INST;
  (void)noSetFMUStatePriorToCurrentPoint;
  fmu_log(in, FMU_OK, "fmi3DoStep(%.17g, %.17g)", currentCommunicationPoint, communicationStepSize);
  bool early = false, terminate = false;
  double last = currentCommunicationPoint;
  fmu_status st =
      fmu_do_step(in, currentCommunicationPoint, communicationStepSize, &early, &terminate, &last);
  if (eventHandlingNeeded)
    *eventHandlingNeeded = fmi3False;
  if (terminateSimulation)
    *terminateSimulation = terminate;
  if (earlyReturn)
    *earlyReturn = early;
  if (lastSuccessfulTime)
    *lastSuccessfulTime = last;
  return (fmi3Status)st;
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime) {
  (void)clockReference;
  (void)activationTime;
  return unsupported(instance, "fmi3ActivateModelPartition (Scheduled Execution)");
}
