/* Plugins for the tool: shared libraries that register block classes. */
#ifndef DG_TOOL_PLUGIN_H
#define DG_TOOL_PLUGIN_H

#include <drivegraph/drivegraph.h>

/* A registry with the built-in classes plus those of each plugin in
 * `paths` (dlopen, then the DG_PLUGIN_ENTRY function). On failure prints
 * "drivegraph: plugin PATH: reason" to stderr and returns NULL. The
 * libraries stay loaded until the process ends (their classes are static
 * data the registry points to). n = 0 gives the built-in registry. */
dg_registry *plugin_registry(int n, char **paths);

#endif
