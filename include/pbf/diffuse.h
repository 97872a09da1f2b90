/* pbf — spray, foam and bubbles: diffuse particles after Ihmsen et al. 2012, "Unified spray,
 * foam and bubbles for particle-based fluids" (docs/physics.md, "Spray, foam and bubbles").
 *
 *     pbf_diffuse_def d = pbf_default_diffuse_def();
 *     d.max_count = 100000;
 *     pbf_world_enable_diffuse(w, &d);
 *     pbf_world_step(w, 1.0f / 60.0f);
 *     int n = pbf_world_diffuse_count(w);
 *     pbf_world_get_diffuse(w, positions, velocities, kinds, lifetimes);
 *
 * Generation. Every substep each fluid particle i gets three potentials, each clamped to [0, 1]
 * between a lower and an upper threshold, Φ(I, lo, hi) = (min(I, hi) − min(I, lo)) / (hi − lo):
 *  - trapped air: I_ta = Σ_j |v_ij| (1 − v̂_ij · x̂_ij) W̃(x_ij) (m/s), large where neighbours
 *    move towards each other: air is folded into the fluid;
 *  - wave crest: I_wc = Σ_j (1 − n̂_i · n̂_j) W̃(x_ij) over the neighbours behind i's surface
 *    normal n̂_i, only for a surface particle moving along its normal (v̂_i · n̂_i >= 0.6): a
 *    convex, rising crest;
 *  - kinetic energy per mass: I_k = |v_i|² / 2 (J/kg);
 * with W̃(x) = 1 − |x| / h. It spawns Φ_k (k_ta Φ_ta + k_wc Φ_wc) dt diffuse particles (the
 * fraction by a hash of its id and the substep: the same for any thread count), placed in a
 * cylinder of radius r around it along its velocity, at its velocity.
 *
 * Motion. Each substep a diffuse particle counts the fluid particles within h of it and takes
 * their velocity averaged with W̃:
 *  - fewer than spray_neighbors: spray, ballistic (gravity only);
 *  - more than bubble_neighbors: a bubble, v += dt (−buoyancy g) + (v_f − v)(1 − e^(−drag dt));
 *  - in between: foam, carried at the fluid's velocity; its lifetime runs down and it dies at 0.
 * Solids: the move is walked against the colliders and mesh solids (no tunnelling through a
 * thin part) and projected out of them and into the domain like a fluid particle's; spray that
 * touches a solid or a wall dies (it joins the surface), foam and bubbles slide along it.
 * The set is kept in a deterministic order:
 * survivors in their order, then the new ones in the solver's particle order. They do not act
 * on the fluid. Off by default. On a CUDA world the set lives and moves on the device
 * (docs/cuda.md), `unverified` until its parity test passes on a GPU (docs/features.md). */
#ifndef PBF_DIFFUSE_H
#define PBF_DIFFUSE_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pbf_diffuse_kind {
    PBF_DIFFUSE_SPRAY = 0,
    PBF_DIFFUSE_FOAM = 1,
    PBF_DIFFUSE_BUBBLE = 2
} pbf_diffuse_kind;

typedef struct pbf_diffuse_def {
    /* k_ta: diffuse particles per fluid particle per second at full trapped-air and kinetic
     * potential, 1/s. Default 100, range [0, 1e6]. */
    float trapped_air_rate;
    /* k_wc: the same for the wave-crest potential, 1/s. Default 100, range [0, 1e6]. */
    float wave_crest_rate;
    /* Thresholds of the trapped-air potential I_ta, m/s. Default [1, 6]; 0 <= min < max. */
    float trapped_air_min, trapped_air_max;
    /* Thresholds of the wave-crest potential I_wc (dimensionless). Default [0.3, 2]. */
    float wave_crest_min, wave_crest_max;
    /* Thresholds of the kinetic energy per mass |v|²/2, J/kg. Default [0.2, 2]
     * (speeds of 0.6 to 2 m/s: a tank of a metre or less). */
    float energy_min, energy_max;
    /* Lifetime of a foam particle, s (it runs down only while the particle is foam). Default 2,
     * range (0, 1e6]. */
    float lifetime;
    /* Bubble buoyancy k_b: a bubble accelerates by −k_b g. Default 2, range [0, 100]. */
    float buoyancy;
    /* Bubble drag towards the fluid's velocity, 1/s. Default 20, range [0, 1e6]. */
    float drag;
    /* Spray: fewer fluid neighbours than this; bubble: more than bubble_neighbors. Defaults 6
     * and 20, 0 <= spray_neighbors <= bubble_neighbors <= 1000. */
    int spray_neighbors, bubble_neighbors;
    /* Most diffuse particles at once; generation stops while the set is full. Default 200000,
     * range [1, 100000000]. */
    int max_count;
} pbf_diffuse_def;

PBF_API pbf_diffuse_def pbf_default_diffuse_def(void);
/* Checks def; PBF_ERR_INVALID_ARG with the field named in err. */
PBF_API pbf_status pbf_diffuse_def_check(const pbf_diffuse_def *def, char *err, size_t err_size);

/* Turns diffuse particles on (or replaces the def, keeping the particles). */
PBF_API pbf_status pbf_world_enable_diffuse(pbf_world *world, const pbf_diffuse_def *def);
/* 1 when the world has diffuse particles enabled; *def (may be NULL) gets the def. */
PBF_API int pbf_world_get_diffuse_def(const pbf_world *world, pbf_diffuse_def *def);
PBF_API int pbf_world_diffuse_count(const pbf_world *world);
/* Copies the diffuse particles in their order; any pointer may be NULL. positions, velocities:
 * 3 floats each (m, m/s); kinds: pbf_diffuse_kind as a byte; lifetimes: s left. */
PBF_API void pbf_world_get_diffuse(const pbf_world *world, float *positions, float *velocities,
                                   uint8_t *kinds, float *lifetimes);
/* Diffuse particles generated over the world's life (for tests and statistics). */
PBF_API int64_t pbf_world_diffuse_generated(const pbf_world *world);

#ifdef __cplusplus
}
#endif

#endif
