/* pbf — Position Based Fluids (Macklin & Müller, SIGGRAPH 2013) in C11.
 *
 * The public API. A world is opaque; it is created from a def struct whose defaults come from
 * pbf_default_world_def() (zero is a legal value for many fields, so "zero means default" is
 * never used). All quantities are SI: metres, seconds, kilograms.
 *
 * Hello world:
 *
 *     pbf_world_def def = pbf_default_world_def();
 *     def.domain_max = (pbf_vec3){1.0f, 1.0f, 0.5f};
 *     pbf_world *w = NULL;
 *     char err[PBF_ERROR_SIZE];
 *     if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK) { puts(err); return 1; }
 *     pbf_block_def block = pbf_default_block_def();
 *     block.max = (pbf_vec3){0.3f, 0.5f, 0.5f};
 *     pbf_world_add_block(w, &block);
 *     for (int i = 0; i < 60; ++i) pbf_world_step(w, 1.0f / 60.0f);
 *     pbf_world_destroy(w);
 *
 * Errors: every fallible function returns a pbf_status. World functions keep the human message
 * of the last failure in pbf_world_error(). The library never prints and never exits.
 *
 * Threads: the CPU solver runs its per-particle passes with OpenMP. Every pass is a Jacobi pass
 * that writes only its own particle, and all reductions run in a fixed order, so the same scene
 * gives bit-identical results for any thread count. */
#ifndef PBF_PBF_H
#define PBF_PBF_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Status */

typedef enum pbf_status {
    PBF_OK = 0,
    PBF_ERR_INVALID_ARG,  /* a parameter is out of its documented range */
    PBF_ERR_OUT_OF_MEMORY,
    PBF_ERR_IO,           /* a file could not be read or written */
    PBF_ERR_PARSE,        /* a scene or data file is malformed */
    PBF_ERR_UNSTABLE,     /* the simulation produced NaN/Inf or ran away */
    PBF_ERR_NO_DEVICE,    /* the requested backend has no device here */
    PBF_ERR_UNSUPPORTED   /* the feature is not built into this library */
} pbf_status;

/* Buffer size that always holds a pbf error message. */
#define PBF_ERROR_SIZE 512

PBF_API const char *pbf_status_string(pbf_status status);
PBF_API const char *pbf_version(void);

/* ---------------------------------------------------------------------------------------------
 * Definitions */

typedef struct pbf_vec3 {
    float x, y, z;
} pbf_vec3;

/* How the solver reaches a particle's neighbours (DESIGN.md §5, measured in docs/performance.md). */
typedef enum pbf_neighbor_mode {
    PBF_NEIGHBOR_LIST = 0,  /* a compact neighbour list built once per substep (default: faster) */
    PBF_NEIGHBOR_CELLS = 1  /* walk the 27 surrounding cell ranges in every pass */
} pbf_neighbor_mode;

typedef enum pbf_backend {
    PBF_BACKEND_CPU = 0,  /* OpenMP on the host */
    PBF_BACKEND_CUDA = 1  /* NVIDIA GPU; fails with PBF_ERR_NO_DEVICE where none is present */
} pbf_backend;

/* The six walls of the domain box. */
typedef enum pbf_wall {
    PBF_WALL_X_MIN = 0,
    PBF_WALL_X_MAX,
    PBF_WALL_Y_MIN,
    PBF_WALL_Y_MAX,
    PBF_WALL_Z_MIN,
    PBF_WALL_Z_MAX,
    PBF_WALL_COUNT
} pbf_wall;

/* Scripted motion of one domain wall along its own axis:
 *     offset(t) = amplitude * sin(2*pi*t/period + phase)
 * added to the wall's rest coordinate. amplitude 0 is a static wall. */
typedef struct pbf_wall_motion {
    float amplitude; /* m, >= 0; default 0 (static) */
    float period;    /* s, > 0; default 1 */
    float phase;     /* rad; default 0 */
} pbf_wall_motion;

/* Solver parameters. Defaults follow Macklin & Müller 2013 and the seeds. */
typedef struct pbf_solver_def {
    /* Jacobi iterations of the density constraint per substep. Default 4, range [1, 1000]. */
    int iterations;
    /* Constraint relaxation ε (CFM) as a fraction of Σ|∇C|² of a particle inside a rest lattice,
     * so the same value works at any particle size. Larger is softer and more stable.
     * Default 0.05, range [0, 100]. */
    float relaxation;
    /* Only push particles apart (C = max(ρ/ρ0 − 1, 0)): no clustering at the free surface.
     * Default 1. With 0 the constraint is bilateral as in the paper. */
    int unilateral;
    /* Tensile instability correction s_corr = −k (W(r)/W(Δq))^n, expressed as an equivalent
     * relative compression so it is independent of particle size. k default 0.1, range [0, 1]. */
    float scorr_k;
    /* s_corr exponent n. Default 4, range [1, 8]. */
    int scorr_n;
    /* s_corr reference distance Δq as a fraction of h. Default 0.2, range [0, 1). */
    float scorr_dq;
    /* Vorticity confinement ε in m/s: acceleration = ε (N × ω). Default 0.02, range [0, 10]. */
    float vorticity;
    /* XSPH viscosity c (dimensionless): v += c Σ (m/ρ0)(v_j − v_i) W. Default 0.01, range [0, 1]. */
    float xsph;
    /* Speed limit (CFL rule of seed 000 / FleX): |v| <= cfl * h / dt_substep.
     * Default 0.5 (half a kernel radius per substep); 0 disables the limit. Range [0, 10]. */
    float cfl;
} pbf_solver_def;

typedef struct pbf_world_def {
    /* Particle radius r in m. Spacing at rest is 2r. Default 0.01, range (0, 10]. */
    float particle_radius;
    /* Kernel support h as a multiple of r. Default 4 (h = 4r, ~33 neighbours), range [2.5, 8]. */
    float kernel_scale;
    /* Rest density ρ0 in kg/m³, > 0. Default 1000. */
    float rest_density;
    /* External acceleration in m/s². Default (0, −9.81, 0). */
    pbf_vec3 gravity;
    /* The domain box at rest, m. No particle ever leaves it. Default (0,0,0)–(1,1,1). On every
     * axis the walls, at the extremes of their motion, must stay at least 4r apart:
     * (max − amplitude_max) − (min + amplitude_min) >= 4r. */
    pbf_vec3 domain_min;
    pbf_vec3 domain_max;
    /* Scripted wall motion, one per wall, indexed by pbf_wall. Default: all static. */
    pbf_wall_motion wall_motion[PBF_WALL_COUNT];
    /* Substeps per pbf_world_step call. Default 4 (with dt = 1/60 a resting 0.4 m column keeps an
     * average density error under 1%: the error grows as g·H·dt_substep², docs/physics.md).
     * Range [1, 1000]. */
    int substeps;
    pbf_solver_def solver;
    pbf_neighbor_mode neighbor_mode;
    pbf_backend backend;
    /* OpenMP threads for this world, [0, 1024]; 0 uses the OpenMP default (all cores). Default 0. */
    int threads;
} pbf_world_def;

/* A box of fluid filled on a cubic lattice of spacing 2r, starting r inside its min corner. */
typedef struct pbf_block_def {
    pbf_vec3 min;       /* m; default (0,0,0) */
    pbf_vec3 max;       /* m; default (0.2,0.2,0.2) */
    pbf_vec3 velocity;  /* initial velocity, m/s; default 0 */
    /* Random offset of each particle as a fraction of the spacing, uniform in ±jitter/2 per axis.
     * Default 0, range [0, 0.5]. */
    float jitter;
    uint32_t seed;      /* seed of the jitter's generator; default 1 */
} pbf_block_def;

typedef enum pbf_collider_type {
    PBF_COLLIDER_SPHERE = 0,
    PBF_COLLIDER_BOX,     /* axis-aligned box */
    PBF_COLLIDER_CAPSULE
} pbf_collider_type;

/* A static solid the fluid flows around. Particles are projected out of it inside every solver
 * iteration, and it adds density near its surface like the walls do. */
typedef struct pbf_collider_def {
    pbf_collider_type type;
    pbf_vec3 center;        /* sphere and box centre, m */
    pbf_vec3 half_extents;  /* box half sizes, m, > 0 */
    float radius;           /* sphere and capsule radius, m, > 0 */
    pbf_vec3 a, b;          /* capsule segment end points, m */
} pbf_collider_def;

PBF_API pbf_solver_def pbf_default_solver_def(void);
PBF_API pbf_world_def pbf_default_world_def(void);
PBF_API pbf_block_def pbf_default_block_def(void);
PBF_API pbf_collider_def pbf_default_collider_def(void);

/* ---------------------------------------------------------------------------------------------
 * World */

typedef struct pbf_world pbf_world;

/* Validates def and creates a world. On failure *out is NULL and err (if not NULL) holds the
 * message, naming the offending field. */
PBF_API pbf_status pbf_world_create(const pbf_world_def *def, pbf_world **out, char *err,
                                    size_t err_size);
PBF_API void pbf_world_destroy(pbf_world *world);

/* Message of the last failed call on this world ("" if none). */
PBF_API const char *pbf_world_error(const pbf_world *world);
PBF_API const pbf_world_def *pbf_world_get_def(const pbf_world *world);

/* Fills a block with particles. Particles get the next stable ids 0, 1, 2, ... in the order
 * they are added (x fastest, then y, then z inside a block). */
PBF_API pbf_status pbf_world_add_block(pbf_world *world, const pbf_block_def *block);
/* Adds count particles; velocities may be NULL (at rest). Arrays are xyz-interleaved. */
PBF_API pbf_status pbf_world_add_particles(pbf_world *world, int count, const float *positions,
                                           const float *velocities);
/* Number of particles a block would get (for memory estimates before building a world). */
PBF_API int64_t pbf_block_particle_count(const pbf_block_def *block, float particle_radius);

PBF_API pbf_status pbf_world_add_collider(pbf_world *world, const pbf_collider_def *collider);
PBF_API int pbf_world_collider_count(const pbf_world *world);
PBF_API pbf_collider_def pbf_world_get_collider(const pbf_world *world, int index);

/* Advances the world by dt seconds in def.substeps equal substeps. */
PBF_API pbf_status pbf_world_step(pbf_world *world, float dt);

PBF_API int pbf_world_particle_count(const pbf_world *world);
PBF_API double pbf_world_time(const pbf_world *world);
/* Mass of every particle in kg (ρ0 (2r)³, scaled so that a particle inside the rest lattice has
 * density exactly ρ0: see docs/physics.md). */
PBF_API float pbf_world_particle_mass(const pbf_world *world);
/* Kernel support h in m. */
PBF_API float pbf_world_kernel_radius(const pbf_world *world);
/* The domain box at the world's current time (walls may move). */
PBF_API void pbf_world_get_domain(const pbf_world *world, pbf_vec3 *min, pbf_vec3 *max);
/* Bytes the world has allocated. */
PBF_API size_t pbf_world_memory_bytes(const pbf_world *world);
/* Bytes a world of this many particles would need at most (estimate before creating it). */
PBF_API size_t pbf_world_memory_estimate(const pbf_world_def *def, int64_t particles);

/* Read back in stable id order: out[3*id + k]. Each array must hold 3*count floats
 * (densities: count floats; ids: count ints). */
PBF_API void pbf_world_get_positions(const pbf_world *world, float *out);
PBF_API void pbf_world_get_velocities(const pbf_world *world, float *out);
/* Density of each particle in kg/m³ at the end of the last step (0 before the first step). */
PBF_API void pbf_world_get_densities(const pbf_world *world, float *out);

/* A read-only view of the internal arrays, in the solver's (cell-sorted) order, valid until the
 * next call that changes the world. For renderers: no copy. ids[i] is the stable id of slot i. */
typedef struct pbf_particle_view {
    int count;
    const float *positions;   /* xyz interleaved, 3*count */
    const float *velocities;  /* xyz interleaved, 3*count */
    const float *densities;   /* count */
    const int32_t *ids;       /* count */
} pbf_particle_view;
PBF_API pbf_particle_view pbf_world_view(const pbf_world *world);

/* ---------------------------------------------------------------------------------------------
 * Profile and statistics */

typedef enum pbf_stage {
    PBF_STAGE_PREDICT = 0,  /* external forces, prediction, speed limit */
    PBF_STAGE_GRID,         /* cell index, counting sort, reorder */
    PBF_STAGE_NEIGHBORS,    /* neighbour list (PBF_NEIGHBOR_LIST only) */
    PBF_STAGE_LAMBDA,       /* density and λ, all iterations */
    PBF_STAGE_DELTA,        /* Δp with s_corr, collisions, apply, all iterations */
    PBF_STAGE_VELOCITY,     /* velocity from positions */
    PBF_STAGE_VORTICITY,    /* curl, confinement, XSPH viscosity, final density */
    PBF_STAGE_COUNT
} pbf_stage;

PBF_API const char *pbf_stage_name(pbf_stage stage);

/* Measured over the last pbf_world_step call (all its substeps). */
typedef struct pbf_profile {
    double stage_ms[PBF_STAGE_COUNT];
    double step_ms;            /* wall-clock time of the whole step */
    float avg_density_error;   /* mean over particles of max(ρ/ρ0 − 1, 0), last substep, end */
    float max_density_error;   /* max over particles of max(ρ/ρ0 − 1, 0) */
    float avg_neighbors;       /* mean neighbours per particle (the particle itself excluded) */
    int iterations;            /* solver iterations per substep */
    int substeps;
    int64_t steps;             /* pbf_world_step calls so far */
} pbf_profile;

PBF_API pbf_profile pbf_world_get_profile(const pbf_world *world);

/* Whole-state statistics, reduced in a fixed order (deterministic). */
typedef struct pbf_stats {
    int particles;
    double kinetic_energy;  /* J */
    float max_speed;        /* m/s */
    pbf_vec3 bounds_min;    /* bounding box of the particles */
    pbf_vec3 bounds_max;
} pbf_stats;

PBF_API pbf_stats pbf_world_get_stats(const pbf_world *world);

/* FNV-1a hash of positions and velocities in id order: equal hashes mean bit-identical states. */
PBF_API uint64_t pbf_world_hash(const pbf_world *world);

#ifdef __cplusplus
}
#endif

#endif /* PBF_PBF_H */
