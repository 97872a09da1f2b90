/* `pbf bench --batch` (docs/cli.md; docs/performance.md "Many small worlds"): worlds × steps per
 * second of many small worlds stepped as one batch (include/pbf/batch.h), against the same
 * worlds stepped one after another. */
#ifndef PBF_APP_BENCH_BATCH_H
#define PBF_APP_BENCH_BATCH_H

#include <stdint.h>

#include "cli.h"

typedef struct bench_batch_options {
    int worlds; /* worlds in the batch */
    int64_t particles; /* particles of each world */
    int steps, warmup;
    int threads; /* < 0: the scene's */
    const cli_overrides *sets;
} bench_batch_options;

/* Prints the table on stdout; returns an exit code (errors printed). */
int bench_batch(const bench_batch_options *o);

#endif
