/* pbf — inlets and outlets: emitters that add fluid through a nozzle, sinks that take it out,
 * and the particle capacity that bounds the count (docs/scenes.md, "Inflow and outflow").
 *
 *     pbf_world_set_capacity(w, 200000);              // allocated once, now
 *     pbf_emitter_def e = pbf_default_emitter_def();
 *     e.position = (pbf_vec3){0.05f, 0.2f, 0.2f};      // the nozzle's centre
 *     e.direction = (pbf_vec3){1.0f, 0.0f, 0.0f};
 *     e.speed = 1.0f;                                  // m/s: volume rate = speed · area
 *     e.radius = 0.05f;
 *     pbf_world_add_emitter(w, &e);
 *     pbf_sink_def k = pbf_default_sink_def();
 *     k.min = (pbf_vec3){1.9f, -1.0f, -1.0f};          // may reach past the domain
 *     k.max = (pbf_vec3){3.0f, 2.0f, 2.0f};
 *     pbf_world_add_sink(w, &k);
 *
 * Emission. A nozzle is a disc or a rectangle across its direction. Its particles lie on a
 * square lattice of spacing s = 2r in the nozzle plane, n = ceil(area / s²) of them (the
 * lattice points nearest the centre in the nozzle's shape); each carries the volume s³. A layer
 * is emitted each time the previous one has travelled the pitch d = n s³ / area (>= s; = s when
 * the area is a whole number of s²) out of the nozzle plane at the nozzle's speed; the distance
 * left over is carried to the next substep, so over any time T the emitted volume is
 * speed · area · T to within one layer, for any nozzle size, and the layers never overlap. New particles leave at the nozzle's velocity, and the fluid within one spacing of the
 * nozzle plane (inside its outline) is driven at that velocity while the emitter runs: the
 * nozzle pushes what blocks it instead of stacking particles into it.
 *
 * Removal. A particle whose position is inside a sink box at the end of a substep is removed.
 * Removal keeps the order of the remaining particles (deterministic for any thread count).
 *
 * Ids. Every particle ever added gets the next id, 0, 1, 2, ..., and keeps it; an id is never
 * given twice, so after removals the ids have gaps. The read-back functions
 * (pbf_world_get_positions, ...) give the particles in increasing id order, and
 * pbf_world_get_ids gives their ids in that order.
 *
 * Capacity. With a capacity set, the particle arrays are allocated for it at once and never
 * grow; a step whose emitters would add more particles than the capacity leaves room for
 * (counted before the step's removals) fails with PBF_ERR_CAPACITY before it changes anything:
 * the world stays as after the last step, and the message names the scene key flow.capacity.
 * Without one the arrays grow as needed.
 *
 * On a CUDA world they run on the host between device substeps (docs/cuda.md), `unverified`
 * until their parity test passes on a GPU: refused (PBF_ERR_UNSUPPORTED) without
 * PBF_ALLOW_UNVERIFIED=1 (docs/features.md). */
#ifndef PBF_FLOW_H
#define PBF_FLOW_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PBF_MAX_EMITTERS 16
#define PBF_MAX_SINKS 16

typedef enum pbf_emitter_shape {
    PBF_EMITTER_DISC = 0, /* a disc of `radius` */
    PBF_EMITTER_RECTANGLE = 1 /* width × height, see pbf_emitter_def */
} pbf_emitter_shape;

typedef struct pbf_emitter_def {
    pbf_emitter_shape shape; /* default PBF_EMITTER_DISC */
    /* The nozzle's centre, m. Every nozzle particle must lie inside the domain, at least r from
     * its walls, and outside the colliders. Default (0.5, 0.5, 0.5). */
    pbf_vec3 position;
    /* Where the fluid goes (normalized; not zero). The space one kernel radius ahead of every
     * nozzle particle must be inside the domain and outside the colliders. Default (1, 0, 0). */
    pbf_vec3 direction;
    /* Exit speed, m/s, (0, 1000]. Volume rate = speed · area. Default 1. */
    float speed;
    /* Disc radius, m, > 0. Default 0.05. */
    float radius;
    /* Rectangle sizes, m, > 0: width along the horizontal axis across the direction (u = y ×
     * direction, normalized; x for a vertical nozzle), height along direction × u. Defaults 0.1. */
    float width;
    float height;
    /* Emits from start to stop, s: 0 <= start < stop. Defaults 0 and 3.4e38 (never stops). */
    float start;
    float stop;
    /* The fluid it emits: an index into pbf_world_def.phases (0 when the world has none).
     * Default 0. */
    int phase;
} pbf_emitter_def;

/* An axis-aligned box that removes the particles entering it. It may reach past the domain
 * (an outflow end for a channel: cover the end wall). min below max on every axis. */
typedef struct pbf_sink_def {
    pbf_vec3 min; /* m; default (0, 0, 0) */
    pbf_vec3 max; /* m; default (0.1, 0.1, 0.1) */
} pbf_sink_def;

/* Counters since the world was created (checkpoints carry them). */
typedef struct pbf_flow_state {
    int64_t emitted; /* particles added by emitters */
    int64_t removed; /* particles removed by sinks */
    int32_t next_id; /* the id the next particle gets (= particles ever added) */
    int capacity; /* the capacity set, 0 when none */
} pbf_flow_state;

PBF_API pbf_emitter_def pbf_default_emitter_def(void);
PBF_API pbf_sink_def pbf_default_sink_def(void);

/* Adds an emitter (at most PBF_MAX_EMITTERS). Checks the def (messages name the field): a nozzle
 * outside the domain or in a collider, or aimed into a wall or a collider, is refused. Add the
 * colliders first. */
PBF_API pbf_status pbf_world_add_emitter(pbf_world *world, const pbf_emitter_def *def);
/* Adds a sink (at most PBF_MAX_SINKS). */
PBF_API pbf_status pbf_world_add_sink(pbf_world *world, const pbf_sink_def *def);
PBF_API int pbf_world_emitter_count(const pbf_world *world);
PBF_API int pbf_world_sink_count(const pbf_world *world);
/* Particles one layer of emitter `index` holds (ceil(area / (2r)²), at least 1); 0 for a bad
 * index. */
PBF_API int pbf_world_emitter_layer_size(const pbf_world *world, int index);

/* Fixes the particle capacity: allocates every per-particle array for `capacity` particles now.
 * capacity must be at least the current count and at most 2^29 (INT32_MAX / 4), and the memory
 * must be available (PBF_ERR_OUT_OF_MEMORY with the estimate otherwise). */
PBF_API pbf_status pbf_world_set_capacity(pbf_world *world, int capacity);
PBF_API pbf_flow_state pbf_world_get_flow(const pbf_world *world);

#ifdef __cplusplus
}
#endif

#endif /* PBF_FLOW_H */
