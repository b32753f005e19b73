/* Block reference generated from the class tables (drivegraph blocks). */
#ifndef DG_TOOL_REFERENCE_H
#define DG_TOOL_REFERENCE_H

#include <drivegraph/block.h>
#include <stdbool.h>
#include <stdio.h>

/* One block type: ports, parameters (with kind, unit, default or required,
 * range, choices, table axes, nested fields), signals. */
void dg_reference_print(FILE *out, const dg_block_class *k, bool markdown);

#endif
