/* What the three prescribed-motion sources (speed_source, accel_source,
 * position_source) share: a shaft passing through `in` and `out` (either
 * may be left open) whose speed the block prescribes, and the torque and
 * power it takes. A private header of blocks/. */
#ifndef DG_BLOCKS_MOTION_SOURCE_H
#define DG_BLOCKS_MOTION_SOURCE_H

#include <drivegraph/block.h>

enum { MOTION_PORT_IN, MOTION_PORT_OUT };

static const dg_port_def motion_source_ports[] = {
    {.name = "in", .dir = DG_PORT_IN, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "the shaft, toward the source"},
    {.name = "out", .dir = DG_PORT_OUT, .domain = DG_ROTATIONAL, .optional = true,
     .doc = "the shaft, toward the road"},
    {0},
};

/* The torque and power signals, and the prescribed acceleration's. */
#define MOTION_SOURCE_TORQUE_SIGNALS                                                             \
  {.name = "torque", .unit = "N*m", .doc = "torque the source applies to the shaft",              \
   .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},                                      \
      {.name = "power", .unit = "W", .doc = "power the source delivers (torque x speed)",        \
       .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH},                                  \
      {.name = "accel", .unit = "rad/s^2", .doc = "the prescribed acceleration",                 \
       .port = DG_SIGNAL_HOOK, .flags = DG_SIGNAL_FEEDTHROUGH}

/* The shaft's speed is prescribed at `out`, and `in` turns with it. */
static void motion_source_state_upstream(dg_block *self, dg_topo *topo) {
  dg_topo_prescribe(topo, self, MOTION_PORT_OUT);
  dg_topo_ratio(topo, self, MOTION_PORT_IN, MOTION_PORT_OUT, 1.0, 1.0);
}

/* The torque the prescription applies, or its power (`power`). The signal
 * hook may not change the block; the query only fills the solver's cache of
 * the point's forces. */
static inline double motion_source_torque(const dg_block *self, const dg_ctx *ctx, bool power) {
  double torque = dg_ctx_motion_torque((dg_ctx *)ctx, self);
  return power ? torque * dg_port_speed(ctx, self, MOTION_PORT_OUT) : torque;
}

#endif
