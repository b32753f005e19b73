/* The JSON Schema of graph files, generated from a registry's parameter
 * tables (the same tables that drive parsing, validation and `drivegraph
 * blocks`), so the schema cannot drift from the loader. */
#ifndef DG_TOOL_SCHEMA_GEN_H
#define DG_TOOL_SCHEMA_GEN_H

#include <drivegraph/drivegraph.h>
#include <jansson.h>

/* The JSON Schema (draft-07) of a graph file whose blocks are the classes of
 * `reg` (not NULL; dg_registry_new() gives the built-in classes). A new
 * reference, or NULL when out of memory. Dump it with
 * JSON_REAL_PRECISION(15) so that 0.2 prints as 0.2. */
json_t *dg_schema_build(const dg_registry *reg);

#endif
