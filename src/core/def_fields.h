/* The settings of a world def (pbf_world_def, include/pbf/pbf.h), declared once.
 *
 * PBF_DEF_FIELDS(X) calls X(kind, member, since, old, dflt, range, expected) for every member of
 * pbf_world_def, in the order of the checkpoint's WORLDDEF section. Made from this list:
 *   - the WORLDDEF section (src/io/checkpoint.c): what is written, what is read back from a file
 *     of each format version, and the section's size in each version;
 *   - the defaults, pbf_default_world_def and pbf_default_solver_def (src/core/defs.c);
 *   - the range checks of single members in validate_def (src/core/world.c), in this order and
 *     before the hand-written checks there (finite vectors, the domain and the walls' motion,
 *     checks across members, the phases, what the backend runs).
 * A new setting is its member with its documentation in pbf.h, one row here (at the end: the
 * newest version's bytes follow the older ones), PBF_CHECKPOINT_VERSION raised
 * (include/pbf/checkpoint.h), its scene key (src/io/scene_keys.c; tests/test_scene_def_ranges.c
 * checks that the key takes what the row's range takes) and its Python field (python/src/fields.c,
 * whose build counts its tables against these rows).
 *
 * The columns:
 *   kind      how it is stored in WORLDDEF: F32 (a float), I32 (an int or an enum, as int32),
 *             VEC3 (three floats), and the two arrays of three floats per entry: WALLS
 *             (wall_motion[PBF_WALL_COUNT]: amplitude, period, phase) and PHASES
 *             (phases[PBF_MAX_PHASES]: density, xsph, gravity_scale)
 *   member    its path in pbf_world_def; its name in the error messages (#member)
 *   since     the checkpoint format version that added it to WORLDDEF
 *   old       what a file of an older version reads it as: the value that version ran with
 *             (unused when since is 1; for PHASES, each entry's)
 *   dflt      its default (for WALLS and PHASES, each entry's)
 *   range     the values validate_def takes: CLOSED(lo, hi) [lo, hi], OPEN(lo, hi) (lo, hi),
 *             ABOVE_UP_TO(lo, hi) (lo, hi], HALF_OPEN(lo, hi) [lo, hi), EITHER(a, b) one of the
 *             two, or UNCHECKED (vectors, arrays and members checked across others, by hand in
 *             world.c). A float bound is a float literal: the comparison is in float.
 *   expected  the range as the error message states it: "world def: <member> must be
 *             <expected>, got <value>" */
#ifndef PBF_DEF_FIELDS_H
#define PBF_DEF_FIELDS_H

#include "pbf/pbf.h"

/* Each fluid's default (pbf_default_phase_def, src/core/defs.c, returns it): written here as a
 * value, so that this table names nothing defs.c defines (defs.c includes it). */
#define PBF_DEF_PHASE_DEFAULT                                                                      \
    ((pbf_phase_def){.density = 1000.0f, .xsph = 0.01f, .gravity_scale = 1.0f})

/* clang-format off */
#define PBF_DEF_FIELDS(X)                                                                          \
    X(F32, particle_radius, 1, 0, 0.01f, ABOVE_UP_TO(0.0f, 10.0f), "in (0, 10] m")                 \
    X(F32, kernel_scale, 1, 0, 4.0f, CLOSED(2.5f, 8.0f), "in [2.5, 8]")                            \
    /* (0, FLT_MAX]: positive and finite */                                                        \
    X(F32, rest_density, 1, 0, 1000.0f, ABOVE_UP_TO(0.0f, FLT_MAX), "positive (kg/m^3)")           \
    X(VEC3, gravity, 1, 0, ((pbf_vec3){0.0f, -9.81f, 0.0f}), UNCHECKED, "")                        \
    X(VEC3, domain_min, 1, 0, ((pbf_vec3){0.0f, 0.0f, 0.0f}), UNCHECKED, "")                       \
    X(VEC3, domain_max, 1, 0, ((pbf_vec3){1.0f, 1.0f, 1.0f}), UNCHECKED, "")                       \
    X(WALLS, wall_motion, 1, 0, ((pbf_wall_motion){0.0f, 1.0f, 0.0f}), UNCHECKED, "")              \
    X(I32, substeps, 1, 0, 4, CLOSED(1, 1000), "in [1, 1000]")                                     \
    X(I32, solver.iterations, 1, 0, 4, CLOSED(1, 1000), "in [1, 1000]")                            \
    X(F32, solver.relaxation, 1, 0, 0.05f, CLOSED(0.0f, 100.0f), "in [0, 100]")                    \
    X(I32, solver.unilateral, 1, 0, 1, EITHER(0, 1), "0 or 1")                                     \
    X(F32, solver.scorr_k, 1, 0, 0.1f, CLOSED(0.0f, 1.0f), "in [0, 1]")                            \
    X(I32, solver.scorr_n, 1, 0, 1, CLOSED(1, 8), "in [1, 8]")                                     \
    /* below the rest spacing too: world.c */                                                      \
    X(F32, solver.scorr_dq, 1, 0, 0.2f, HALF_OPEN(0.0f, 1.0f), "in [0, 1)")                        \
    /* version 1 ran without the deficit rule and with s_corr in every iteration */                \
    X(F32, solver.scorr_deficit, 2, 0.0f, 0.05f, CLOSED(0.0f, 1.0f), "in [0, 1]")                  \
    X(I32, solver.scorr_iterations, 2, 0, 4, CLOSED(0, 1000), "in [0, 1000]")                      \
    X(F32, solver.vorticity, 1, 0, 0.02f, CLOSED(0.0f, 10.0f), "in [0, 10] m/s")                   \
    X(F32, solver.xsph, 1, 0, 0.01f, CLOSED(0.0f, 1.0f), "in [0, 1]")                              \
    X(F32, solver.cfl, 1, 0, 0.5f, CLOSED(0.0f, 10.0f), "in [0, 10]")                              \
    X(F32, solver.target_error, 1, 0, 0.0f, CLOSED(0.0f, 100.0f), "in [0, 100] percent")           \
    /* in [0, solver.max_iterations]: world.c */                                                   \
    X(I32, solver.min_iterations, 1, 0, 1, UNCHECKED, "")                                          \
    X(I32, solver.max_iterations, 1, 0, 100, CLOSED(1, 10000), "in [1, 10000]")                    \
    X(I32, solver.chebyshev, 1, 0, 1, EITHER(0, 1), "0 or 1")                                      \
    X(F32, solver.chebyshev_rho, 1, 0, 0.999f, HALF_OPEN(0.0f, 1.0f), "in [0, 1)")                 \
    X(F32, solver.chebyshev_gamma, 1, 0, 0.9f, ABOVE_UP_TO(0.0f, 1.0f), "in (0, 1]")               \
    X(I32, solver.chebyshev_delay, 1, 0, 4, CLOSED(0, 100), "in [0, 100]")                         \
    X(I32, neighbor_mode, 1, 0, PBF_NEIGHBOR_LIST, EITHER(PBF_NEIGHBOR_LIST, PBF_NEIGHBOR_CELLS),  \
      "PBF_NEIGHBOR_LIST or PBF_NEIGHBOR_CELLS")                                                   \
    /* whether this build and machine have it: world.c */                                          \
    X(I32, backend, 1, 0, PBF_BACKEND_CPU, EITHER(PBF_BACKEND_CPU, PBF_BACKEND_CUDA),              \
      "PBF_BACKEND_CPU or PBF_BACKEND_CUDA")                                                       \
    X(I32, threads, 1, 0, 0, CLOSED(0, 1024), "in [0, 1024]")                                      \
    /* version 2 ran without the materials */                                                      \
    X(F32, material.surface_tension, 3, 0.0f, 0.0f, CLOSED(0.0f, 10.0f), "in [0, 10] N/m")         \
    X(F32, wall_adhesion, 3, 0.0f, 0.0f, CLOSED(0.0f, 10.0f), "in [0, 10] N/m")                    \
    X(F32, wall_friction, 3, 0.0f, 0.0f, CLOSED(0.0f, 10.0f), "in [0, 10]")                        \
    /* version 3 ran without the viscosity and the drag: the defaults, off */                      \
    X(F32, material.viscosity, 4, 0.0f, 0.0f, CLOSED(0.0f, 100.0f), "in [0, 100] m^2/s")           \
    X(I32, material.viscosity_iterations, 4, 100, 100, CLOSED(1, 10000), "in [1, 10000]")          \
    X(F32, material.viscosity_tolerance, 4, 0.001f, 0.001f, OPEN(0.0f, 1.0f), "in (0, 1)")         \
    X(F32, material.surface_drag, 4, 0.0f, 0.0f, CLOSED(0.0f, 1000.0f), "in [0, 1000] 1/s")        \
    /* version 4 ran one fluid; the phases themselves: world.c */                                  \
    X(I32, phase_count, 5, 0, 0, CLOSED(0, PBF_MAX_PHASES), "in [0, 8]")                           \
    X(PHASES, phases, 5, PBF_DEF_PHASE_DEFAULT, PBF_DEF_PHASE_DEFAULT, UNCHECKED, "")              \
    /* needs material.viscosity > 0: world.c */                                                    \
    X(I32, wall_no_slip, 6, 0, 0, EITHER(0, 1), "0 or 1")                                          \
    X(F32, solver.scorr_ratio, 7, 0.0f, 0.0f, CLOSED(0.0f, 1000.0f), "in [0, 1000]")               \
    X(F32, wall_clearance, 8, 1.0f, 1.0f, ABOVE_UP_TO(0.0f, 1.0f), "in (0, 1] particle radii")     \
    X(I32, kernel, 8, PBF_KERNEL_PAPER, PBF_KERNEL_PAPER,                                          \
      EITHER(PBF_KERNEL_PAPER, PBF_KERNEL_WENDLAND), "PBF_KERNEL_PAPER or PBF_KERNEL_WENDLAND")    \
    X(F32, solver.impulse_blend, 9, 0.0f, 0.0f, CLOSED(0.0f, 0.9f), "in [0, 0.9]")                 \
    X(I32, solver.step_weights, 10, PBF_STEP_WEIGHTS_PLAIN, PBF_STEP_WEIGHTS_PLAIN,                \
      EITHER(PBF_STEP_WEIGHTS_PLAIN, PBF_STEP_WEIGHTS_CHEBYSHEV),                                  \
      "0 (PBF_STEP_WEIGHTS_PLAIN) or 1 (PBF_STEP_WEIGHTS_CHEBYSHEV)")                              \
    /* above Δq: world.c */                                                                        \
    X(F32, solver.scorr_reach, 11, 1.0f, 1.0f, CLOSED(0.1f, 1.0f), "in [0.1, 1]")                 \
    /* the Wendland pair only: world.c */                                                          \
    X(F32, kernel_core, 12, 0.0f, 0.0f, HALF_OPEN(0.0f, 1.0f), "in [0, 1) rest spacings")
/* clang-format on */

/* Bytes of each kind in WORLDDEF. */
#define PBF_DEF_BYTES_F32 4
#define PBF_DEF_BYTES_I32 4
#define PBF_DEF_BYTES_VEC3 12
#define PBF_DEF_BYTES_WALLS (12 * PBF_WALL_COUNT)
#define PBF_DEF_BYTES_PHASES (12 * PBF_MAX_PHASES)

#endif
