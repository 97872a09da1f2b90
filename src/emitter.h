/* Emitters, sinks and the particle capacity inside the library (include/pbf/flow.h has the
 * public side). world.c and solver.c call the hooks below; checkpoint.c saves and restores the
 * state. */
#ifndef PBF_EMITTER_H
#define PBF_EMITTER_H

#include "pbf/flow.h"
#include "world_internal.h"

/* One emitter as the step uses it. */
typedef struct pbf_emitter {
    pbf_emitter_def def;
    pbf_v3 dir, u, v;   /* unit direction and the nozzle plane's axes */
    float half_u, half_v; /* the outline's half sizes along u and v (a disc: its radius) */
    int n;              /* particles per layer: ceil(area / s²) */
    double pitch;       /* distance between layers, n s³ / area >= s: exact volume rate */
    float *offsets;     /* 2n: each particle's (u, v) coordinates in the nozzle plane */
    /* How far the newest layer has travelled past the nozzle plane, m. A layer is emitted when
     * it reaches the pitch; the rest is carried, so the rate is exact. Starts at the pitch: the
     * first layer leaves at the start time. Saved in checkpoints. */
    double travel;
} pbf_emitter;

typedef struct pbf_flow {
    int emitter_count;
    pbf_emitter emitters[PBF_MAX_EMITTERS];
    int sink_count;
    pbf_sink_def sinks[PBF_MAX_SINKS];
    int capacity; /* 0: none (the arrays grow) */
    int64_t emitted, removed;
} pbf_flow;

void pbf__flow_free(pbf_world *w);
/* Creates the world's flow state if it has none (a sink mesh needs it for its counts). */
pbf_status pbf__flow_ensure(pbf_world *w);
size_t pbf__flow_memory_bytes(const pbf_world *w);
/* Before a step of dt in `substeps` substeps: PBF_ERR_CAPACITY (the world unchanged) when the
 * emitters would add more particles than the capacity leaves room for. */
pbf_status pbf__flow_step_check(pbf_world *w, float dt, int substeps);
/* At the end of a substep that ran from t0 to w->time: removes the particles in the
 * sinks, drives the fluid in the nozzles, emits the due layers. Serial, in slot order. */
pbf_status pbf__flow_substep_end(pbf_world *w, double t0);

#endif
