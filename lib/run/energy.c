/* The energy ledger (drivegraph.h, docs/energy.md): the shaft audit
 * (dg_sim_energy, dg_sim_block_work) extended to the fuel, the batteries,
 * the electrical buses and the converters' heat. Each block that exchanges
 * energy outside the shafts reports it as signals flagged
 * DG_SIGNAL_ENERGY_FUEL / _STORED / _ELECTRIC / _HEAT (J since the start,
 * continuous states integrated by RK4 with the mechanics); this module
 * only reads them through the public API and adds them up:
 *
 *   block:  work = fuel + stored + electric − heat
 *   graph:  ΔKE  = fuel + stored + electric − heat + work of the blocks
 *                  without a ledger + mesh losses + impact losses
 *
 * so the balance closes from the fuel and the batteries to the road, and
 * the sum of the electrical energies shows a bus that does not balance
 * (electricity drawn from outside the model). */
#include <drivegraph/block.h>
#include <drivegraph/drivegraph.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static double flagged_sum(const dg_sim *sim, const dg_block *b, unsigned flag, bool *any,
                          bool *nan) {
  double sum = 0.0;
  const dg_signal_def *sig = b->klass->signals;
  for (int k = 0; sig && sig[k].name; k++) {
    if (!(sig[k].flags & flag))
      continue;
    char name[256];
    if (snprintf(name, sizeof name, "%s.%s", b->id, sig[k].name) >= (int)sizeof name)
      continue;
    int id = dg_sim_signal_find(sim, name);
    if (id < 0)
      continue;
    double v = dg_sim_signal(sim, id);
    *any = true;
    if (isnan(v))
      *nan = true;
    else
      sum += v;
  }
  return sum;
}

int dg_sim_block_energy(const dg_sim *sim, int index, dg_block_energy *e) {
  memset(e, 0, sizeof *e);
  const dg_graph *g = dg_sim_graph(sim);
  if (index < 0 || index >= dg_graph_block_count(g))
    return DG_ERR_USAGE;
  e->work = dg_sim_block_work(sim, index);
  const dg_block *b = dg_sim_block((dg_sim *)sim, dg_graph_block_id(g, index));
  if (!b)
    return DG_ERR_USAGE;
  bool any = false, nan = false, has_flag = false;
  double keeps = flagged_sum(sim, b, DG_SIGNAL_LEDGER, &has_flag, &nan);
  if (has_flag && !(keeps > 0.5))
    return DG_OK; /* no ledger in this graph */
  nan = false;
  e->fuel = flagged_sum(sim, b, DG_SIGNAL_ENERGY_FUEL, &any, &nan);
  e->stored = flagged_sum(sim, b, DG_SIGNAL_ENERGY_STORED, &any, &nan);
  e->electric = flagged_sum(sim, b, DG_SIGNAL_ENERGY_ELECTRIC, &any, &nan);
  e->heat = flagged_sum(sim, b, DG_SIGNAL_ENERGY_HEAT, &any, &nan);
  e->ledger = any && !nan;
  if (!e->ledger) {
    e->fuel = e->stored = e->electric = e->heat = 0.0;
    return DG_OK;
  }
  e->error = e->work - (e->fuel + e->stored + e->electric - e->heat);
  return DG_OK;
}

void dg_sim_energy_ledger(const dg_sim *sim, dg_energy_ledger *l) {
  memset(l, 0, sizeof *l);
  dg_energy en;
  dg_sim_energy(sim, &en);
  const dg_graph *g = dg_sim_graph(sim);
  for (int i = 0; i < dg_graph_block_count(g); i++) {
    dg_block_energy e;
    if (dg_sim_block_energy(sim, i, &e) != DG_OK)
      continue;
    if (e.ledger) {
      l->ledger_blocks++;
      l->fuel += e.fuel;
      l->stored += e.stored;
      l->electric += e.electric;
      l->heat += e.heat;
    } else if (e.work > 0.0) {
      l->work_in_other += e.work;
    } else {
      l->work_out_other += e.work;
    }
  }
  l->efficiency_loss = en.efficiency_loss;
  l->impact_loss = en.impact_loss;
  l->kinetic_change = en.kinetic - en.kinetic_start;
  if (!(dg_sim_keep(sim) & DG_KEEP_WORK)) /* the shafts' work not kept: no plausible sums */
    l->work_in_other = l->work_out_other = NAN;
  l->energy_in = l->fuel + fmax(l->stored, 0.0) + fmax(l->electric, 0.0) + l->work_in_other;
  l->balance_error = l->kinetic_change - (l->fuel + l->stored + l->electric - l->heat +
                                          l->work_in_other + l->work_out_other +
                                          l->efficiency_loss + l->impact_loss);
}
