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
    PBF_ERR_INVALID_ARG, /* a parameter is out of its documented range */
    PBF_ERR_OUT_OF_MEMORY,
    PBF_ERR_IO, /* a file could not be read or written */
    PBF_ERR_PARSE, /* a scene or data file is malformed */
    PBF_ERR_UNSTABLE, /* the simulation produced NaN/Inf or ran away */
    PBF_ERR_NO_DEVICE, /* the requested backend has no device here */
    PBF_ERR_UNSUPPORTED, /* the feature is not built into this library */
    PBF_ERR_CAPACITY /* the particle capacity is full (include/pbf/flow.h) */
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
    PBF_NEIGHBOR_LIST = 0, /* a compact neighbour list built once per substep (default: faster) */
    PBF_NEIGHBOR_CELLS = 1 /* walk the 27 surrounding cell ranges in every pass */
} pbf_neighbor_mode;

typedef enum pbf_backend {
    PBF_BACKEND_CPU = 0, /* OpenMP on the host */
    PBF_BACKEND_CUDA = 1 /* NVIDIA GPU; fails with PBF_ERR_NO_DEVICE where none is present */
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
    float period; /* s, > 0; default 1 */
    float phase; /* rad; default 0 */
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
    /* Tensile instability correction s_corr = −k y^n with y = (W(r) − W(s)) / (W(Δq) − W(s)),
     * s = 2r the rest spacing, and 0 from r = s on: a repulsion between particles closer than
     * the rest lattice, which the lattice itself does not feel (the paper's (W(r)/W(Δq))^n pushed
     * every free surface apart; docs/physics.md, "s_corr"). k is expressed as an equivalent
     * relative compression so it is independent of particle size. Default 0.1, range [0, 1]. */
    float scorr_k;
    /* When > 0, s_corr follows the time step: each substep uses k = scorr_ratio · |g| · dt² / r
     * in place of scorr_k. s_corr moves a surface particle by an amount proportional to k·r in
     * each substep, gravity by g·dt², so a fixed k pushes the surface apart harder the more
     * substeps a scene takes; a fixed ratio k r / (g dt²) keeps that push the same against
     * gravity at any substep count and particle size (docs/physics.md, "s_corr and the time
     * step"). No gravity: no s_corr. Default 0 (scorr_k as given), range [0, 1000]. */
    float scorr_ratio;
    /* s_corr exponent n. Default 1, range [1, 8]. */
    int scorr_n;
    /* s_corr reference distance Δq as a fraction of h, where y = 1. Default 0.2, range [0, 1),
     * and below scorr_reach times the rest spacing 2r (0.5 h at h = 4r and reach 1). */
    float scorr_dq;
    /* Where s_corr's shape reaches zero, as a fraction of the rest spacing s = 2r: s_corr acts
     * between particles closer than scorr_reach · s. Below 1 it leaves pairs near the rest
     * spacing alone (the lattice's small oscillations, a wave) and still parts pairs that come
     * much closer; with scorr_deficit 0 that is a near-field repulsion in the bulk, which a
     * kernel pair whose gradient vanishes at r = 0 (Wendland C2) needs against pairing
     * (docs/physics.md, "s_corr"). Default 1, range [0.1, 1], and above Δq = scorr_dq · h. */
    float scorr_reach;
    /* Where s_corr acts: on particles below rest density, with a weight rising from 0 at ρ0 to 1
     * at (1 − scorr_deficit) ρ0 (the free surface, splashes), and not in fluid at rest density,
     * where it would resist shear once the solve converges (docs/physics.md, "s_corr").
     * 0 applies it everywhere, as the paper does. Default 0.05, range [0, 1]. */
    float scorr_deficit;
    /* s_corr acts in the first scorr_iterations density iterations of each substep; the later
     * ones project the density constraint alone, so an error-controlled solve converges to the
     * constraint, not to a balance between it and s_corr (which stalled it above 0.01 %).
     * 0: every iteration. Default 4, range [0, 1000]. */
    int scorr_iterations;
    /* Vorticity confinement ε in m/s: acceleration = ε (N × ω). Default 0.02, range [0, 10]. */
    float vorticity;
    /* XSPH viscosity c (dimensionless): v += c Σ (m/ρ0)(v_j − v_i) W. Default 0.01, range [0, 1]. */
    float xsph;
    /* Impulse blend β: the velocity update takes (1 − β) of this substep's constraint
     * displacement d (the density solve's and the collisions' change of the predicted
     * positions) and β of the last substep's, v = v* + ((1 − β) d + β d_prev)/dt, while the
     * positions keep all of d. Plain PBF (β = 0) turns the whole correction into velocity at
     * once, an implicit Euler step of the pressure that damps every oscillation; the blend
     * is the trapezoidal mean of two steps' impulses, so a slosh keeps its energy. Fluid at rest
     * (the same d every substep) is unchanged. Default 0, range [0, 0.9]
     * (docs/physics.md, "The impulse blend"). */
    float impulse_blend;
    /* Speed limit (CFL rule of seed 000 / FleX): |v| <= cfl * h / dt_substep.
     * Default 0.5 (half a kernel radius per substep); 0 disables the limit. Range [0, 10]. */
    float cfl;

    /* Error control (docs/physics.md, "Converging faster"). With target_error > 0 the solver
     * iterates until the average density error — the mean over particles of max(ρ/ρ0 − 1, 0),
     * in percent — is at most target_error, doing at least min_iterations and at most
     * max_iterations; `iterations` is then unused. Each check costs one density pass.
     * target_error default 0 (off: exactly `iterations`), range [0, 100] percent. */
    float target_error;
    /* Default 1, range [0, max_iterations]. */
    int min_iterations;
    /* Default 100, range [1, 10000]. */
    int max_iterations;

    /* Chebyshev semi-iterative acceleration of the error-controlled solve (Wang 2015): after
     * chebyshev_delay plain iterations, p ← ω (γ (p̂ − p) + p − p_prev) + p_prev with
     * ω_{k+1} = 4 / (4 − ρ² ω_k). Default 1 (on); it applies only when target_error > 0 (a
     * fixed count stays the paper's plain Jacobi). A rise of the density error between two
     * iterations restarts the sequence at plain Jacobi (ω = 1) and lowers ρ for the rest of
     * the substep: the accelerated solver never does worse than a few plain iterations. So
     * does a pass that raised the mean deficit below rest density by more than the target (an
     * extrapolation that expands the fluid lowers the error without solving anything); such a
     * pass does not end the solve. */
    int chebyshev;
    /* ρ: estimate of the spectral radius of the plain iteration. Default 0.999, range [0, 1). */
    float chebyshev_rho;
    /* γ: under-relaxation of the Jacobi update inside the scheme. Default 0.9, range (0, 1]. */
    float chebyshev_gamma;
    /* Plain iterations before the acceleration starts (at least 1 is done). Default 4,
     * range [0, 100]. */
    int chebyshev_delay;
    /* A pbf_step_weights: how a fixed count of passes (target_error 0) weights each pass.
     * PBF_STEP_WEIGHTS_CHEBYSHEV scales pass k's λ by 1/μ_k, μ_k the Chebyshev nodes of
     * [b/11, b], b = 1.2 × the largest eigenvalue of the plain Jacobi step on the rest lattice
     * (found by a Fourier scan when the world is made), largest weight first: the same passes
     * then damp every lattice mode, where plain Jacobi overshoots the short ones (its largest
     * eigenvalue is 2.7 for the paper pair, 3.7 for Wendland at h = 5r: above 2). The error-
     * controlled solve is not weighted. Default PBF_STEP_WEIGHTS_PLAIN. */
    int step_weights;
} pbf_solver_def;

/* The fluid's material (docs/physics.md, "Materials"). Every default is off: a world without
 * them steps exactly as before. */
typedef struct pbf_material_def {
    /* Surface tension σ in N/m (water at 20 °C: 0.0728), by Akinci et al. 2013's cohesion and
     * curvature terms. σ sets their strength through the flat-surface energy of the cohesion
     * potential (docs/physics.md gives the conversion and how far a droplet follows it).
     * Default 0 (off), range [0, 10]. */
    float surface_tension;
    /* Kinematic viscosity ν in m²/s, solved implicitly (Weiler et al. 2018; docs/physics.md,
     * "Viscosity for thick fluids"): stable at any time step, for fluids from water (1e-6) to
     * honey (about 1e-2) and beyond. Acts on top of solver.xsph. Default 0 (off),
     * range [0, 100]. */
    float viscosity;
    /* Most conjugate-gradient iterations of the viscosity solve per substep. Default 100,
     * range [1, 10000]. */
    int viscosity_iterations;
    /* The viscosity solve stops when the residual is at most this fraction of the velocities'
     * norm. Default 0.001, range (0, 1). */
    float viscosity_tolerance;
    /* Free-surface drag c in 1/s (NVIDIA FleX's drag): particles at the free surface, found
     * from their neighbour count, are slowed towards the air at rest as dv/dt = −c s v, s in
     * [0, 1] their surface weight (docs/physics.md, "Surface drag"). Default 0 (off),
     * range [0, 1000]. */
    float surface_drag;
} pbf_material_def;

/* Fluids per world (docs/physics.md, "Several fluids"). */
#define PBF_MAX_PHASES 8
/* The largest ratio of two fluids' rest densities a world accepts (measured in docs/physics.md,
 * "Several fluids": layers form in the right order and the solve stays stable up to it). */
#define PBF_MAX_DENSITY_RATIO 6.0f

/* One fluid of a world with several (pbf_world_def.phases). Every particle carries the index of
 * its fluid, its phase. All fluids share the particle spacing 2r: a particle's mass is its
 * fluid's rest density times the volume (2r)³ (Macklin et al. 2014's mass ratios), and the
 * density constraint is Solenthaler & Pajarola 2008's, ρ_i = m_i Σ_j W_ij against ρ0 of i's
 * fluid, with each correction weighted by the particle's inverse mass. */
typedef struct pbf_phase_def {
    /* Rest density in kg/m³, > 0. Default 1000. The ratio of the largest to the smallest rest
     * density of a world's fluids is at most PBF_MAX_DENSITY_RATIO. */
    float density;
    /* XSPH viscosity c of this fluid (replaces solver.xsph for its particles), [0, 1].
     * Default 0.01. */
    float xsph;
    /* Gravity scale (FleX's buoyancy): the fluid's particles feel gravity times this.
     * Default 1, range [-10, 10]. */
    float gravity_scale;
} pbf_phase_def;

/* The density kernel pair (docs/physics.md, "The Wendland C2 pair"). */
/* How a fixed count of density passes weights each pass's correction (pbf_solver_def.step_weights;
 * docs/physics.md, "Step weights"). */
typedef enum pbf_step_weights {
    /* every pass's correction applied whole: the paper's plain Jacobi iteration */
    PBF_STEP_WEIGHTS_PLAIN = 0,
    /* pass k's correction weighted 1/μ_k, μ_k the Chebyshev nodes of the plain step's eigenvalue
     * range on the rest lattice, largest weight first */
    PBF_STEP_WEIGHTS_CHEBYSHEV = 1
} pbf_step_weights;

typedef enum pbf_kernel_pair {
    /* poly6 for the density, the spiky gradient for its correction (Macklin & Müller 2013) */
    PBF_KERNEL_PAPER = 0,
    /* Wendland C2 for the density and its own exact gradient for the correction: a fluid that
     * stays at rest under a converged solve; use it with kernel_scale 5 and plain Jacobi */
    PBF_KERNEL_WENDLAND = 1
} pbf_kernel_pair;

typedef struct pbf_world_def {
    /* Particle radius r in m. Spacing at rest is 2r. Default 0.01, range (0, 10]. */
    float particle_radius;
    /* Kernel support h as a multiple of r. Default 4 (h = 4r, ~33 neighbours), range [2.5, 8]. */
    float kernel_scale;
    /* The density kernel pair. Default PBF_KERNEL_PAPER. PBF_KERNEL_WENDLAND is refused with the
     * CUDA backend, surface tension, adhesion, the tool and mesh solids, whose math is written
     * for the paper's pair. */
    pbf_kernel_pair kernel;
    /* The Wendland pair's core, as a fraction of the rest spacing s = 2r: between particles
     * closer than r0 = kernel_core · s the gradient's magnitude no longer falls with Wendland's
     * towards zero but rises linearly from its value at r0 to PBF_KERNEL_CORE_GAIN + 1 (4) times
     * that at r = 0, as the paper pair's spiky gradient rises. Wendland's own gradient vanishes
     * as two particles meet, so pairs pushed together (an impact, a splash) barely part
     * (docs/physics.md, "Pairing in the Wendland fluid"). Default 0 (off: Wendland's exact
     * gradient), range [0, 1); above 0 only with PBF_KERNEL_WENDLAND. */
    float kernel_core;
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
    /* The fluid's material: surface tension, viscosity, surface drag. */
    pbf_material_def material;
    /* Adhesion of the domain walls to the fluid (Akinci et al. 2013's adhesion kernel), as a work
     * of adhesion in N/m: the energy per area it takes to pull the fluid off the wall. By
     * Young–Dupré W = σ (1 + cos θ): 2σ wets fully, σ gives a contact angle of 90°, 0 none (the
     * walls only push). Default 0, range [0, 10]. */
    float wall_adhesion;
    /* Coulomb friction coefficient μ of the domain walls (Macklin et al. 2014's friction
     * projection: a particle's slide along a wall over a substep is shortened by μ times the
     * wall's push on it). 0 is free-slip. Default 0, range [0, 10]. */
    float wall_friction;
    /* No-slip domain walls: with a viscosity (material.viscosity > 0), the walls enter the
     * implicit viscosity solve as fluid at rest along them, so a viscous fluid sticks to them
     * (docs/physics.md, "No-slip walls"). 0 (default): the walls slip. Needs viscosity > 0. */
    int wall_no_slip;
    /* The closest a particle centre comes to a domain wall, in particle radii: the walls' collision
     * projection keeps centres wall_clearance · r inside the box. 1 (default) holds the first
     * layer exactly where the rest lattice puts it, which is right for a fixed iteration count,
     * whose density solve alone would let the walls' layer squeeze in. With a solve converged
     * to the constraint, the walls' ghost density holds the fluid off them, and a clearance of 1
     * holds the first layer against a rigid, perfectly inelastic stop: measured, it takes half
     * of a standing wave's energy loss (docs/notes/physics_log.md, "The walls' collision
     * projection").
     * Range (0, 1]. Colliders, mesh solids and the tool keep their distance r. */
    float wall_clearance;
    /* Several fluids (docs/physics.md, "Several fluids"): phase_count of them in phases, [0,
     * PBF_MAX_PHASES]. 0 (default): one fluid, rest_density and solver.xsph. With phases,
     * rest_density is the reference the masses are scaled from (set it to one fluid's density);
     * blocks and emitters name their fluid by index (pbf_block_def.phase). */
    int phase_count;
    pbf_phase_def phases[PBF_MAX_PHASES];
} pbf_world_def;

/* A box of fluid filled on a cubic lattice of spacing 2r, starting r inside its min corner. */
typedef struct pbf_block_def {
    pbf_vec3 min; /* m; default (0,0,0) */
    pbf_vec3 max; /* m; default (0.2,0.2,0.2) */
    pbf_vec3 velocity; /* initial velocity, m/s; default 0 */
    /* Random offset of each particle as a fraction of the spacing, uniform in ±jitter/2 per axis.
     * Default 0, range [0, 0.5]. */
    float jitter;
    uint32_t seed; /* seed of the jitter's generator; default 1 */
    /* The fluid of its particles: an index into pbf_world_def.phases (0 when the world has
     * none). Default 0. */
    int phase;
} pbf_block_def;

typedef enum pbf_collider_type {
    PBF_COLLIDER_SPHERE = 0,
    PBF_COLLIDER_BOX, /* axis-aligned box */
    PBF_COLLIDER_CAPSULE
} pbf_collider_type;

/* A static solid the fluid flows around. Particles are projected out of it inside every solver
 * iteration, and it adds density near its surface like the walls do. */
typedef struct pbf_collider_def {
    pbf_collider_type type;
    pbf_vec3 center; /* sphere and box centre, m */
    pbf_vec3 half_extents; /* box half sizes, m, > 0 */
    float radius; /* sphere and capsule radius, m, > 0 */
    pbf_vec3 a, b; /* capsule segment end points, m */
    /* Work of adhesion with the fluid, N/m, as pbf_world_def.wall_adhesion. Default 0, [0, 10]. */
    float adhesion;
    /* Coulomb friction coefficient, as pbf_world_def.wall_friction. Default 0, [0, 10]. */
    float friction;
} pbf_collider_def;

PBF_API pbf_solver_def pbf_default_solver_def(void);
PBF_API pbf_world_def pbf_default_world_def(void);
PBF_API pbf_block_def pbf_default_block_def(void);
PBF_API pbf_phase_def pbf_default_phase_def(void);
PBF_API pbf_collider_def pbf_default_collider_def(void);

/* Whether a backend can run here, and on what (docs/cuda.md). PBF_OK with a
 * description in buf ("CPU (OpenMP, 16 threads)", "NVIDIA H100 80GB HBM3 (device 0, sm_90,
 * 132 SMs, 79.1 GiB)"), or the status pbf_world_create would fail with for that backend
 * (PBF_ERR_NO_DEVICE: no usable GPU; PBF_ERR_UNSUPPORTED: not built in) with the reason.
 * buf may be NULL. */
PBF_API pbf_status pbf_backend_info(pbf_backend backend, char *buf, size_t size);

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
/* Replaces the solver settings from the next step on (validated like pbf_world_create; on error
 * the world is unchanged). Lets a program compare solvers on the same state. */
PBF_API pbf_status pbf_world_set_solver(pbf_world *world, const pbf_solver_def *solver);

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
/* Bytes this process may use: the smallest of the physical memory, the cgroup limit and
 * ulimit -v / -d (0 when unknown). A grid or a particle count whose memory would exceed it is
 * refused before allocating (PBF_ERR_OUT_OF_MEMORY, with the estimate in the message). */
PBF_API size_t pbf_memory_limit(void);
/* What sets pbf_memory_limit(): "physical memory", "the cgroup memory limit", "ulimit -v
 * (RLIMIT_AS)" or "ulimit -d (RLIMIT_DATA)" ("unknown" when none is known). */
PBF_API const char *pbf_memory_limit_source(void);

/* Read back in increasing stable id order: out[3*k + j] for the particle of the k-th smallest
 * id, which is out[3*id + j] while no particle was ever removed (ids are then 0..count-1; sinks
 * leave gaps, include/pbf/flow.h). Each array must hold 3*count floats (densities and ids:
 * count). */
PBF_API void pbf_world_get_positions(const pbf_world *world, float *out);
PBF_API void pbf_world_get_velocities(const pbf_world *world, float *out);
/* Density of each particle in kg/m³ at the end of the last step (0 before the first step);
 * with several fluids, m_i Σ_j W_ij with the particle's own mass (compare it with its fluid's
 * rest density). */
PBF_API void pbf_world_get_densities(const pbf_world *world, float *out);
/* The stable ids, in the order of the read-back arrays above (increasing). */
PBF_API void pbf_world_get_ids(const pbf_world *world, int32_t *out);
/* Each particle's fluid (an index into def.phases; all 0 in a world of one fluid), in the
 * order of the read-back arrays above. */
PBF_API void pbf_world_get_phases(const pbf_world *world, uint8_t *out);
/* Every per-particle array the library reads back, by name: for programs and bindings that take
 * all of them without naming each (Python's World.array and World.arrays). The arrays are
 * positions, velocities, densities, ids and phases; pbf_particle_array_count and
 * pbf_particle_array_at list them, a newer library may list more. */
typedef enum pbf_value_type {
    PBF_VALUE_FLOAT32, /* float */
    PBF_VALUE_INT32, /* int32_t */
    PBF_VALUE_UINT8 /* uint8_t */
} pbf_value_type;
typedef struct pbf_particle_array_info {
    const char *name; /* "positions", ...: the name pbf_world_get_array takes */
    pbf_value_type type;
    int components; /* values per particle: 1, or 3 (xyz interleaved) */
    const char *unit; /* SI unit; "" for none */
    const char *what; /* one line */
} pbf_particle_array_info;
/* The number of arrays, and array `index` of them (NULL outside 0..count-1). */
PBF_API int pbf_particle_array_count(void);
PBF_API const pbf_particle_array_info *pbf_particle_array_at(int index);
/* Array `name` of every particle in increasing id order, as the functions above: out holds
 * components*count values of its type. PBF_ERR_INVALID_ARG, with the message in err, for a
 * name that is none of them. */
PBF_API pbf_status pbf_world_get_array(const pbf_world *world, const char *name, void *out,
                                       char *err, size_t err_size);
/* Adds count particles of fluid `phase` (pbf_world_add_particles otherwise). */
PBF_API pbf_status pbf_world_add_particles_phase(pbf_world *world, int count,
                                                 const float *positions, const float *velocities,
                                                 int phase);

/* A read-only view of the internal arrays, in the solver's (cell-sorted) order, valid until the
 * next call that changes the world. For renderers: no copy. ids[i] is the stable id of slot i. */
typedef struct pbf_particle_view {
    int count;
    const float *positions; /* xyz interleaved, 3*count */
    const float *velocities; /* xyz interleaved, 3*count */
    const float *densities; /* count; with several fluids m_ref Σ W (the reference fluid's
                                 density at that number density: compare with rest_density) */
    const int32_t *ids; /* count */
    const uint8_t *phases; /* count: each slot's fluid (pbf_world_get_phases) */
} pbf_particle_view;
PBF_API pbf_particle_view pbf_world_view(const pbf_world *world);

/* The same arrays of a CUDA world where they live, in device memory: for CUDA–OpenGL interop
 * (render/include/pbf/render_cuda.h) and CUDA code of the caller's, with no trip through host
 * memory. Layout and order as pbf_world_view; valid until the next call that changes the world
 * (a step rotates the buffers). The step that wrote them has finished. device is the CUDA
 * device ordinal; the pointers are NULL when count is 0. A CPU world: PBF_ERR_UNSUPPORTED. */
typedef struct pbf_device_view {
    int device;
    int count;
    const float *positions; /* xyz interleaved, 3*count, device memory */
    const float *velocities; /* xyz interleaved, 3*count, device memory */
    const float *densities; /* count, device memory */
} pbf_device_view;
PBF_API pbf_status pbf_world_device_view(const pbf_world *world, pbf_device_view *out, char *err,
                                         size_t err_size);

/* ---------------------------------------------------------------------------------------------
 * Tool (docs/tool.md): one rigid sphere in the fluid, two-way coupled, with the force
 * on it in newtons every step (the haptic loop of seed 004).
 *
 *     pbf_tool_def tool = pbf_default_tool_def();
 *     tool.radius = 0.05f;
 *     tool.position = (pbf_vec3){0.3f, 0.2f, 0.2f};
 *     pbf_world_set_tool(w, &tool);
 *     for (;;) {
 *         pbf_tool_set_pose(w, device_position());       // the haptic driver's hook
 *         pbf_world_step(w, 0.001f);
 *         pbf_tool_state s = pbf_tool_get_state(w);
 *         device_render_force(s.total);                  // N, the force ON the tool
 *     }
 *
 * Particles are projected out of the sphere (to R + r) in every solver iteration and see it as
 * a solid (ghost density like the colliders). The force on the tool is the reaction to those
 * corrections plus seed 004's adhesion and damping; docs/tool.md gives every formula. */

typedef enum pbf_tool_motion {
    /* Moved by its scripted path, by pbf_tool_set_pose, or not at all; forces do not move it. */
    PBF_TOOL_KINEMATIC = 0,
    /* A rigid body of def.mass moved by gravity and the fluid's force. */
    PBF_TOOL_FREE = 1
} pbf_tool_motion;

/* How a scripted path runs between its keys. */
typedef enum pbf_tool_interpolation {
    PBF_TOOL_LINEAR = 0, /* straight segments at constant speed (the experiment of seed 004) */
    PBF_TOOL_SMOOTH = 1 /* monotone cubic (PCHIP): continuous speed, at rest at the end keys and
                          * at waits, never past a key */
} pbf_tool_interpolation;

/* One key of a scripted path: the centre at a time. */
typedef struct pbf_tool_key {
    float time; /* s */
    pbf_vec3 position; /* m */
} pbf_tool_key;

#define PBF_TOOL_MAX_KEYS 128

typedef struct pbf_tool_def {
    /* Sphere radius R in m, (0, 10]. Default 0.05. */
    float radius;
    /* Centre at the world's current time, m. Default (0.5, 0.5, 0.5). Ignored when the tool
     * follows a path (the path gives the centre). */
    pbf_vec3 position;
    /* Initial velocity of a free tool, m/s. Default 0. */
    pbf_vec3 velocity;
    /* Default PBF_TOOL_KINEMATIC. */
    pbf_tool_motion motion;
    /* Mass of a free tool, kg, > 0. Default 0.2618 (a sphere of R = 0.05 m at 500 kg/m³). */
    float mass;
    /* Added-mass stabilisation of a free tool: it is integrated with an extra inertia of
     * added_mass · ρ0 · (4/3)π R³, and the lagged fluid force is compensated by the same mass
     * times the last acceleration, so a body lighter than the fluid does not oscillate (the
     * equilibrium is unchanged). Default 0.5 (a sphere's added-mass coefficient), [0, 10]. */
    float added_mass;
    /* Adhesion of seed 004 (eq. 12–13): coefficients K of tool and fluid in N/m³ (the force
     * uses their mean), >= 0. Default 0 and 0: no adhesion. */
    float adhesion_k_tool;
    float adhesion_k_fluid;
    /* Where the adhesion kernel starts (A) and ends (B), as distances from the sphere's surface
     * in m: 0 <= a < b. Defaults 0 and 0.02. */
    float adhesion_a;
    float adhesion_b;
    /* Damping of seed 004 (eq. 14) in kg/(m²·s): each particle in contact (centre within 2r of
     * the surface) adds −k_damp (2r)² (v_tool − v_j) to the force. >= 0. Default 0. */
    float damping;
    /* Scripted path of a kinematic tool: key_count keys (0: none, the tool stays where it is
     * put), strictly increasing times. Before the first key the tool waits at the first, after
     * the last at the last. Default: no keys, linear. */
    int key_count;
    pbf_tool_key keys[PBF_TOOL_MAX_KEYS];
    pbf_tool_interpolation interpolation;
} pbf_tool_def;

/* What the tool did over the last pbf_world_step (forces are averages over its substeps). */
typedef struct pbf_tool_state {
    double time; /* s: the world's time */
    pbf_vec3 position; /* centre, m */
    pbf_vec3 velocity; /* m/s, over the last substep */
    float radius; /* m */
    /* Forces ON the tool in N, averaged over the step. Gravity on a free tool is not included. */
    pbf_vec3 reaction; /* −(m/dt²) Σ Δx_j: the fluid's push (buoyancy, drag, squeeze) */
    pbf_vec3 adhesion;
    pbf_vec3 damping;
    pbf_vec3 total; /* reaction + adhesion + damping */
    int contacts; /* particles within 2r of the surface at the end of the step */
    /* Smallest distance of a particle centre from the surface at the end of the step, m
     * (r when particles touch it, negative when one is inside; +inf with no particles). */
    float min_distance;
} pbf_tool_state;

PBF_API pbf_tool_def pbf_default_tool_def(void);
/* Gives the world its tool (replacing any), or removes it when def is NULL. The tool starts at
 * the path's position at the world's time (kinematic with keys), else at def->position. Messages
 * name the def field and its range. In a world split over MPI ranks (include/pbf/mpi.h) every
 * rank makes the same call (it is collective), and pbf_tool_set_pose too, with the same pose. */
PBF_API pbf_status pbf_world_set_tool(pbf_world *world, const pbf_tool_def *def);
PBF_API int pbf_world_has_tool(const pbf_world *world);
/* The tool's def, or NULL when the world has none. */
PBF_API const pbf_tool_def *pbf_world_get_tool_def(const pbf_world *world);
/* Where the tool's centre will be at the end of the next pbf_world_step: it moves there in a
 * straight line over the step's substeps, at the matching velocity. A kinematic tool stays at
 * the last pose given and no longer follows its path; a free tool is carried to it for one step
 * and then moves freely again, at the velocity it was carried with. Fails (PBF_ERR_INVALID_ARG)
 * without a tool or with a non-finite position. */
PBF_API pbf_status pbf_tool_set_pose(pbf_world *world, pbf_vec3 position);
/* The tool after the last step (all zeros when the world has no tool). */
PBF_API pbf_tool_state pbf_tool_get_state(const pbf_world *world);
/* The centre of def's scripted path at time t (def->position when it has no keys). */
PBF_API pbf_vec3 pbf_tool_path_position(const pbf_tool_def *def, double t);

/* ---------------------------------------------------------------------------------------------
 * Profile and statistics */

typedef enum pbf_stage {
    PBF_STAGE_PREDICT = 0, /* external forces, prediction, speed limit */
    PBF_STAGE_GRID, /* cell index, counting sort, reorder */
    PBF_STAGE_NEIGHBORS, /* neighbour list (PBF_NEIGHBOR_LIST only) */
    PBF_STAGE_LAMBDA, /* density and λ, all iterations */
    PBF_STAGE_DELTA, /* Δp with s_corr, collisions, apply, all iterations */
    PBF_STAGE_VELOCITY, /* velocity from positions */
    PBF_STAGE_VORTICITY, /* curl, confinement, XSPH viscosity, final density */
    PBF_STAGE_COUNT
} pbf_stage;

PBF_API const char *pbf_stage_name(pbf_stage stage);

/* Measured over the last pbf_world_step call (all its substeps). */
typedef struct pbf_profile {
    double stage_ms[PBF_STAGE_COUNT];
    double step_ms; /* wall-clock time of the whole step */
    float avg_density_error; /* mean over particles of max(ρ/ρ0 − 1, 0), last substep, end */
    float max_density_error; /* max over particles of max(ρ/ρ0 − 1, 0) */
    float avg_neighbors; /* mean neighbours per particle (the particle itself excluded) */
    int iterations; /* solver iterations (Δp passes) per substep: the mean over the
                                  step's substeps, rounded up, under error control */
    int max_iterations_used; /* the most any substep of the step needed */
    int chebyshev_restarts; /* divergence fall-backs during the step (Chebyshev) */
    int substeps;
    int64_t steps; /* pbf_world_step calls so far */
    int viscosity_iterations; /* the most conjugate-gradient iterations of the viscosity solve
                                  (material.viscosity) any substep of the step needed; 0 off */
} pbf_profile;

PBF_API pbf_profile pbf_world_get_profile(const pbf_world *world);

/* The average density error (fraction) the solver saw at each iteration of the last substep:
 * out[k] after k Δp passes. Writes at most max entries and returns how many there were; 0
 * before the first step. Recorded in every mode (a fixed count adds one reduction per
 * iteration); used for convergence plots and tests. */
PBF_API int pbf_world_get_iteration_errors(const pbf_world *world, float *out, int max);

/* Whole-state statistics, reduced in a fixed order (deterministic). */
typedef struct pbf_stats {
    int particles;
    double kinetic_energy; /* J */
    float max_speed; /* m/s */
    pbf_vec3 bounds_min; /* bounding box of the particles */
    pbf_vec3 bounds_max;
} pbf_stats;

PBF_API pbf_stats pbf_world_get_stats(const pbf_world *world);

/* Energy audit (docs/physics.md, "What dissipates energy"): kinetic plus potential energy,
 * E = Σ m (|v|²/2 − g·x), before and after each stage of every substep, summed over the last
 * step. The velocity between prediction and the velocity update is the one the positions imply,
 * (p − x)/dt. Off by default (it adds passes over the particles). On a CUDA world the sums are
 * the device's (docs/cuda.md), `unverified` until its parity test passes on a GPU. */
typedef enum pbf_energy_stage {
    PBF_ENERGY_PREDICT = 0, /* gravity, the speed limit */
    PBF_ENERGY_PROJECT, /* the density solve with its collisions */
    PBF_ENERGY_BLEND, /* the impulse blend (solver.impulse_blend) */
    PBF_ENERGY_XSPH, /* XSPH viscosity */
    PBF_ENERGY_VORTICITY, /* vorticity confinement */
    PBF_ENERGY_TOOL, /* the tool's adhesion and damping */
    PBF_ENERGY_COUNT
} pbf_energy_stage;

typedef struct pbf_energy_audit {
    double start, end; /* J, at the start and the end of the step */
    double change[PBF_ENERGY_COUNT]; /* J, each stage's change over the step's substeps */
} pbf_energy_audit;

/* Turns the audit on or off; PBF_ERR_UNSUPPORTED where the table refuses it (docs/features.md:
 * on CUDA without PBF_ALLOW_UNVERIFIED=1). */
PBF_API pbf_status pbf_world_set_energy_audit(pbf_world *world, int on);
/* The last step's audit (zeros before a step with the audit on). */
PBF_API pbf_energy_audit pbf_world_get_energy_audit(const pbf_world *world);

/* FNV-1a hash of positions and velocities in id order: equal hashes mean bit-identical states. */
PBF_API uint64_t pbf_world_hash(const pbf_world *world);

#ifdef __cplusplus
}
#endif

#endif /* PBF_PBF_H */
