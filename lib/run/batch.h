/* Private declarations of lib/run/batch.c (batch runs), for its suite. Not
 * installed. */
#ifndef DG_RUN_BATCH_H
#define DG_RUN_BATCH_H

#include "internal.h"

/* What dg_batch_run did about the every-mode check (see lib/run/batch.c). */
typedef struct dg_batch_stats {
  int mode_checks; /* checks run before the threads: the base graph's and the probes' */
  int full;        /* variants loaded with the check (it runs unless parsing fails first) */
  int reused;      /* variants loaded without it, reusing those checks */
} dg_batch_stats;

/* dg_batch_run, filling *stats when stats is not NULL. */
int dgp_batch_run_stats(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                       dg_batch_result *results, double *final_values, dg_batch_stats *stats,
                       dg_error *err);
/* dg_batch_validate, filling *stats when stats is not NULL. */
int dgp_batch_validate_stats(const dg_batch_options *opt, int n, const dg_batch_variant *variants,
                            dg_batch_result *results, dg_batch_stats *stats, dg_error *err);

#endif
