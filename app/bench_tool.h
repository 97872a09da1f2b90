/* `pbf bench --tool` (docs/cli.md; docs/performance.md "Tool"): the rate the haptic loop can reach,
 * steps of 1 ms with the tool moving through the water, at several particle counts. */
#ifndef PBF_APP_BENCH_TOOL_H
#define PBF_APP_BENCH_TOOL_H

#include <stdint.h>

#include "cli.h"

typedef struct bench_tool_options {
    const int64_t *sizes; /* particle counts; NULL: 10k, 20k, 40k, 80k (the paper's figure 7) */
    int size_count;
    int steps, warmup;
    int threads; /* < 0: the scene's */
    int backend; /* pbf_backend; < 0: the scene's */
    const cli_overrides *sets;
    const char *csv; /* also write the table here; NULL: no */
} bench_tool_options;

/* Prints the table on stdout; returns an exit code (errors printed). */
int bench_tool(const bench_tool_options *o);

#endif
