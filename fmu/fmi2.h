/* FMI 2.0 declarations for drivegraph's FMUs and the project's importer
 * test, written from the text of the FMI 2.0 specification (section 2.1
 * "Application Programming Interface", 3.2 for Model Exchange and 4.2 for
 * Co-Simulation): the types of fmi2TypesPlatform.h as the standard's text
 * gives them ("default" platform), the enumerations and structs, and every
 * function of fmi2Functions.h (an FMU exports all of them). Names and
 * argument orders are the standard's.
 *
 * FMI2_DECLARE(ret, name, args) declares the function `name` and the type
 * `nameTYPE` of it (for an importer's dlsym). */
#ifndef DG_FMI2_H
#define DG_FMI2_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Platform types (section 2.1.2). */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;

#define fmi2True 1
#define fmi2False 0

/* What fmi2GetTypesPlatform and fmi2GetVersion return (section 2.1.4). */
#define fmi2TypesPlatform "default"
#define fmi2Version "2.0"

/* Status returned by the functions (section 2.1.3). */
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;

typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;

typedef enum {
  fmi2DoStepStatus,
  fmi2PendingStatus,
  fmi2LastSuccessfulTime,
  fmi2Terminated
} fmi2StatusKind;

/* Callbacks the environment gives at instantiation (section 2.1.5). */
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment componentEnvironment,
                                   fmi2String instanceName, fmi2Status status,
                                   fmi2String category, fmi2String message, ...);
typedef void *(*fmi2CallbackAllocateMemory)(size_t nobj, size_t size);
typedef void (*fmi2CallbackFreeMemory)(void *obj);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment componentEnvironment,
                                 fmi2Status status);

typedef struct {
  fmi2CallbackLogger logger;
  fmi2CallbackAllocateMemory allocateMemory;
  fmi2CallbackFreeMemory freeMemory;
  fmi2StepFinished stepFinished;
  fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

/* Model Exchange's event information (section 3.2.2). */
typedef struct {
  fmi2Boolean newDiscreteStatesNeeded;
  fmi2Boolean terminateSimulation;
  fmi2Boolean nominalsOfContinuousStatesChanged;
  fmi2Boolean valuesOfContinuousStatesChanged;
  fmi2Boolean nextEventTimeDefined;
  fmi2Real nextEventTime;
} fmi2EventInfo;

#if defined(DG_FMU_BUILD)
#define FMI2_EXPORT __attribute__((visibility("default")))
#else
#define FMI2_EXPORT
#endif

#define FMI2_DECLARE(ret, name, args)                                                          \
  typedef ret name##TYPE args;                                                                 \
  FMI2_EXPORT ret name args;

/* Common functions (section 2.1). */
FMI2_DECLARE(const char *, fmi2GetTypesPlatform, (void))
FMI2_DECLARE(const char *, fmi2GetVersion, (void))
FMI2_DECLARE(fmi2Status, fmi2SetDebugLogging,
             (fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
              const fmi2String categories[]))
FMI2_DECLARE(fmi2Component, fmi2Instantiate,
             (fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
              fmi2Boolean visible, fmi2Boolean loggingOn))
FMI2_DECLARE(void, fmi2FreeInstance, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2SetupExperiment,
             (fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
              fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime))
FMI2_DECLARE(fmi2Status, fmi2EnterInitializationMode, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2ExitInitializationMode, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2Terminate, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2Reset, (fmi2Component c))

FMI2_DECLARE(fmi2Status, fmi2GetReal,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[]))
FMI2_DECLARE(fmi2Status, fmi2GetInteger,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[]))
FMI2_DECLARE(fmi2Status, fmi2GetBoolean,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[]))
FMI2_DECLARE(fmi2Status, fmi2GetString,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[]))
FMI2_DECLARE(fmi2Status, fmi2SetReal,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2Real value[]))
FMI2_DECLARE(fmi2Status, fmi2SetInteger,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2Integer value[]))
FMI2_DECLARE(fmi2Status, fmi2SetBoolean,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2Boolean value[]))
FMI2_DECLARE(fmi2Status, fmi2SetString,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2String value[]))

/* The FMU state (section 2.1.8). */
FMI2_DECLARE(fmi2Status, fmi2GetFMUstate, (fmi2Component c, fmi2FMUstate *FMUstate))
FMI2_DECLARE(fmi2Status, fmi2SetFMUstate, (fmi2Component c, fmi2FMUstate FMUstate))
FMI2_DECLARE(fmi2Status, fmi2FreeFMUstate, (fmi2Component c, fmi2FMUstate *FMUstate))
FMI2_DECLARE(fmi2Status, fmi2SerializedFMUstateSize,
             (fmi2Component c, fmi2FMUstate FMUstate, size_t *size))
FMI2_DECLARE(fmi2Status, fmi2SerializeFMUstate,
             (fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size))
FMI2_DECLARE(fmi2Status, fmi2DeSerializeFMUstate,
             (fmi2Component c, const fmi2Byte serializedState[], size_t size,
              fmi2FMUstate *FMUstate))

/* Partial derivatives (section 2.1.9). */
FMI2_DECLARE(fmi2Status, fmi2GetDirectionalDerivative,
             (fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
              const fmi2ValueReference vKnown_ref[], size_t nKnown, const fmi2Real dvKnown[],
              fmi2Real dvUnknown[]))

/* Model Exchange (section 3.2). */
FMI2_DECLARE(fmi2Status, fmi2EnterEventMode, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2NewDiscreteStates, (fmi2Component c, fmi2EventInfo *fmi2eventInfo))
FMI2_DECLARE(fmi2Status, fmi2EnterContinuousTimeMode, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2CompletedIntegratorStep,
             (fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
              fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation))
FMI2_DECLARE(fmi2Status, fmi2SetTime, (fmi2Component c, fmi2Real time))
FMI2_DECLARE(fmi2Status, fmi2SetContinuousStates,
             (fmi2Component c, const fmi2Real x[], size_t nx))
FMI2_DECLARE(fmi2Status, fmi2GetDerivatives,
             (fmi2Component c, fmi2Real derivatives[], size_t nx))
FMI2_DECLARE(fmi2Status, fmi2GetEventIndicators,
             (fmi2Component c, fmi2Real eventIndicators[], size_t ni))
FMI2_DECLARE(fmi2Status, fmi2GetContinuousStates, (fmi2Component c, fmi2Real x[], size_t nx))
FMI2_DECLARE(fmi2Status, fmi2GetNominalsOfContinuousStates,
             (fmi2Component c, fmi2Real x_nominal[], size_t nx))

/* Co-Simulation (section 4.2). */
FMI2_DECLARE(fmi2Status, fmi2SetRealInputDerivatives,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2Integer order[], const fmi2Real value[]))
FMI2_DECLARE(fmi2Status, fmi2GetRealOutputDerivatives,
             (fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
              const fmi2Integer order[], fmi2Real value[]))
FMI2_DECLARE(fmi2Status, fmi2DoStep,
             (fmi2Component c, fmi2Real currentCommunicationPoint,
              fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint))
FMI2_DECLARE(fmi2Status, fmi2CancelStep, (fmi2Component c))
FMI2_DECLARE(fmi2Status, fmi2GetStatus,
             (fmi2Component c, const fmi2StatusKind s, fmi2Status *value))
FMI2_DECLARE(fmi2Status, fmi2GetRealStatus,
             (fmi2Component c, const fmi2StatusKind s, fmi2Real *value))
FMI2_DECLARE(fmi2Status, fmi2GetIntegerStatus,
             (fmi2Component c, const fmi2StatusKind s, fmi2Integer *value))
FMI2_DECLARE(fmi2Status, fmi2GetBooleanStatus,
             (fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value))
FMI2_DECLARE(fmi2Status, fmi2GetStringStatus,
             (fmi2Component c, const fmi2StatusKind s, fmi2String *value))

#ifdef __cplusplus
}
#endif
#endif
