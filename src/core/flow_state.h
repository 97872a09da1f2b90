/* The flow state (include/pbf/flow.h): emitters, sinks, the fixed particle capacity and the
 * counts of particles emitted and removed. emitter.c runs the emitters and sinks; particles.c
 * keeps the capacity; a sink mesh (geometry/meshes.c) asks for the state to exist. */
#ifndef PBF_FLOW_STATE_H
#define PBF_FLOW_STATE_H

#include "pbf/flow.h"
#include "world_state.h"

/* One emitter as the step uses it. */
typedef struct pbf_emitter {
    pbf_emitter_def def;
    pbf_v3 dir, u, v; /* unit direction and the nozzle plane's axes */
    float half_u, half_v; /* the outline's half sizes along u and v (a disc: its radius) */
    int n; /* particles per layer: ceil(area / s²) */
    double pitch; /* distance between layers, n s³ / area >= s: exact volume rate */
    float *offsets; /* 2n: each particle's (u, v) coordinates in the nozzle plane */
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

/* Creates the world's flow state if it has none (a sink mesh needs it for its counts; particles.c). */
pbf_status pbf__flow_ensure(pbf_world *w);

#endif
