/* pbf — what runs where: the one table of features × backends (docs/features.md).
 *
 * Every feature of the simulator is a row; the columns are the CPU backend, the CUDA backend
 * and a world split over MPI processes. A cell is
 *   - PBF_SUPPORT_YES: it runs, and a test compares it with the CPU (MPI: with one process);
 *   - PBF_SUPPORT_UNVERIFIED: the code is written but has not yet passed its parity test on a
 *     GPU; refused unless the user opts in with the environment variable
 *     PBF_ALLOW_UNVERIFIED=1;
 *   - PBF_SUPPORT_NO: refused, with the reason and what to use instead.
 * The library refuses a combination in one place only, from this table: when a world is
 * created (the def's features on its backend), when a feature is added to a world (a mesh, an
 * emitter, the tool, ...), and when a world is split over processes. `pbf features` prints the
 * table as CSV.
 *
 *     for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
 *         const pbf_feature_info *i = pbf_feature_get((pbf_feature)f);
 *         printf("%s: cuda %s\n", i->name, pbf_support_name(i->support[PBF_COLUMN_CUDA]));
 *     }
 */
#ifndef PBF_FEATURES_H
#define PBF_FEATURES_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pbf_feature {
    PBF_FEATURE_FLUID, /* the PBF solve: density, walls, colliders, vorticity, XSPH */
    PBF_FEATURE_ERROR_CONTROL, /* solver.target_error: iterate to a density error (Chebyshev) */
    PBF_FEATURE_WENDLAND, /* fluid.kernel "wendland": the Wendland C2 kernel pair */
    PBF_FEATURE_TOOL, /* the rigid tool (tool) */
    PBF_FEATURE_PROBES, /* height, front and level probes (probes) */
    PBF_FEATURE_FORCE_PROBES, /* force probes on walls and box faces (probes, type force) */
    PBF_FEATURE_MESHES, /* static and keyframed mesh solids (meshes) */
    PBF_FEATURE_BODIES, /* floating mesh bodies (meshes, motion floating) */
    PBF_FEATURE_EMITTERS, /* emitters and the particle capacity (flow.emitters) */
    PBF_FEATURE_SINKS, /* sink boxes and sink meshes (flow.sinks) */
    PBF_FEATURE_SURFACE_TENSION, /* fluid.surface_tension */
    PBF_FEATURE_ADHESION, /* domain.adhesion and colliders' adhesion */
    PBF_FEATURE_FRICTION, /* domain.friction: Coulomb wall friction */
    PBF_FEATURE_VISCOSITY, /* fluid.viscosity (implicit) and domain.no_slip */
    PBF_FEATURE_SURFACE_DRAG, /* fluid.surface_drag */
    PBF_FEATURE_PHASES, /* several fluids (materials) */
    PBF_FEATURE_DIFFUSE, /* spray, foam and bubbles (diffuse) */
    PBF_FEATURE_ENERGY_AUDIT, /* the energy audit (pbf_world_set_energy_audit) */
    PBF_FEATURE_COUNT
} pbf_feature;

typedef enum pbf_column {
    PBF_COLUMN_CPU,
    PBF_COLUMN_CUDA,
    PBF_COLUMN_MPI,
    PBF_COLUMN_COUNT
} pbf_column;

typedef enum pbf_support { PBF_SUPPORT_YES, PBF_SUPPORT_UNVERIFIED, PBF_SUPPORT_NO } pbf_support;

typedef struct pbf_feature_info {
    const char *name; /* short name, the table's first column: "meshes" */
    const char *what; /* what it is, with its scene key: "mesh solids (scene key 'meshes')" */
    pbf_support support[PBF_COLUMN_COUNT];
    /* Per column: why a cell is not PBF_SUPPORT_YES and what to use instead; "" for yes. */
    const char *reason[PBF_COLUMN_COUNT];
} pbf_feature_info;

/* The row of a feature; NULL for a value outside [0, PBF_FEATURE_COUNT). */
PBF_API const pbf_feature_info *pbf_feature_get(pbf_feature feature);
/* "cpu", "cuda", "mpi"; "yes", "unverified", "no". */
PBF_API const char *pbf_column_name(pbf_column column);
PBF_API const char *pbf_support_name(pbf_support support);

/* Whether a feature may run in a column: PBF_OK, or PBF_ERR_UNSUPPORTED with the table's
 * message in err ("<what>: not available <where> yet; <reason>"). An unverified cell is
 * PBF_ERR_UNSUPPORTED unless PBF_ALLOW_UNVERIFIED=1 is set in the environment. */
PBF_API pbf_status pbf_feature_check(pbf_feature feature, pbf_column column, char *err,
                                     size_t err_size);

/* The features a world def uses (its materials, kernel pair, error control), as bits
 * 1u << feature. The fluid itself is always among them. */
PBF_API uint32_t pbf_world_def_features(const pbf_world_def *def);
/* The features a world uses now: its def's, plus the tool, probes, meshes, bodies, emitters,
 * sinks, diffuse particles and energy audit that were added to it. */
PBF_API uint32_t pbf_world_features(const pbf_world *world);

#ifdef __cplusplus
}
#endif

#endif
