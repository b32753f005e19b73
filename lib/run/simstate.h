/* A running simulation seen from a host that keeps it between steps (the
 * FMU runtime, fmu/): its number parameters changed in place between
 * steps, and its state written to bytes and read back. Not installed:
 * programs linking the static library (the FMU runtime, the tests) use it.
 * lib/run/simstate.c. */
#ifndef DG_SIMSTATE_H
#define DG_SIMSTATE_H

#include "internal.h"

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

/* ---- state as bytes ---------------------------------------------------- */

/* Bytes of all blocks' instance data of a simulation. */
size_t dgp_sim_data_size(const dg_sim *sim);
/* Copies the blocks' data, in graph order, into out (dgp_sim_data_size
 * bytes). */
void dgp_sim_data_copy(const dg_sim *sim, unsigned char *out);

/* Bytes dgp_sim_state_write needs for `sim`. */
size_t dgp_sim_state_size(const dg_sim *sim);
/* Writes what dg_sim_snapshot copies (the solver's scalars and arrays,
 * every block's data, the input values and schedule places, the channels,
 * time and counters) into buf, with a header naming its sizes. Returns the
 * bytes written, or 0 when `size` is too small or the simulation has
 * failed. No allocation. */
size_t dgp_sim_state_write(dg_sim *sim, unsigned char *buf, size_t size);
/* Puts bytes dgp_sim_state_write wrote for a simulation of the same graph
 * (the same text: the sizes in the header must match) into `sim`, as
 * dg_sim_restore puts a snapshot. `keep` (dgp_sim_data_size bytes, may be
 * NULL) marks bytes of the blocks' data not to take from `buf`: those come
 * from `keep_values` (dgp_sim_data_size bytes), or from `sim`'s own data when
 * that is NULL. A host that moves a state to another process or graph
 * keeps this way what a block's init stores that is an address (a table of
 * its graph, static data): see fmu/runtime.c, which marks the bytes that
 * were still as init left them. Returns DG_OK or DG_ERR_USAGE with `err`
 * filled (wrong size, another graph's layout, bytes that are no state). No
 * allocation. */
int dgp_sim_state_read(dg_sim *sim, const unsigned char *buf, size_t size,
                      const unsigned char *keep, const unsigned char *keep_values,
                      dg_error *err);

/* The same without the checksum, for a state kept in memory by the same
 * process and read back into the same simulation (a cycle run repeating a
 * step: lib/run/cycle.c): the FNV-1a over every byte costs more than the
 * step. dgp_sim_state_save writes a header whose checksum is 0, which
 * dgp_sim_state_read refuses; dgp_sim_state_load checks the header's sizes
 * only. No allocation. */
size_t dgp_sim_state_save(dg_sim *sim, unsigned char *buf, size_t size);
int dgp_sim_state_load(dg_sim *sim, const unsigned char *buf, size_t size);

#endif
