/* A running simulation seen from a host that keeps it between steps (the
 * FMU runtime, fmu/): its number parameters changed in place between
 * steps, and its state written to bytes and read back. Not installed:
 * programs linking the static library (the FMU runtime, the tests) use it.
 * lib/run/simstate.c. */
#ifndef DG_SIMSTATE_H
#define DG_SIMSTATE_H

#include "sim.h" /* the state as bytes */

/* ---- parameters -------------------------------------------------------- */

/* Where the number parameter `key` ("block.param[.field...]") of graph g
 * is stored once parsed, or NULL: an unknown block or key, a parameter
 * that is not a number (DG_PARAM_NUMBER), one with a `present` flag that
 * the file leaves out, or a field of an object the file leaves out that
 * has one. *def (may be NULL) receives its table entry, *block (may be
 * NULL) the block's index. The address is in g's arena: writing it
 * changes every simulation of g. */
double *dgp_graph_param_number(dg_graph *g, const char *key, const dg_param_def **def,
                              int *block);

/* Sets number parameters of the graph `sim` runs between two steps, the
 * simulation going on from its state: `ov` lists every parameter that
 * differs from the graph's text `json` (file name `name` for messages),
 * with its value as JSON text, the ones changed now and the ones changed
 * before. Each must be a number that dgp_graph_override_effect classes as
 * DG_P_DYNAMICS (so that no mode can change) and that
 * dgp_graph_param_number finds. They are checked as loading checks them
 * (ranges, the classes' own checks: the text with the overrides is loaded
 * without the every-mode check), then written into the graph's parameters
 * in place, and what the blocks' init derives from parameters (a motor's
 * power limit, a tyre's peak slip) is taken from a new simulation's blocks
 * where it differs from what init gave with the old values: every other
 * byte of the blocks' data (modes, ties, timers, latched decisions) keeps
 * its running value. The graph must back no other simulation: its
 * parameters are written in place. Returns DG_OK, or an error with `err`
 * filled (the loader's message for a value it refuses; DG_ERR_USAGE for a
 * parameter that may not change while running), the simulation and the
 * graph then unchanged. Allocates (two simulations of the graph and a
 * load of the text). */
int dgp_sim_tune(dg_sim *sim, const char *json, const char *name, int n, const dg_override *ov,
                dg_error *err);

/* The state as bytes (dgp_sim_state_*) is the core's: lib/sim.h, lib/state.c. */

#endif
