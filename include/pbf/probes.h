/* pbf — probes (docs/validation.md): what a laboratory measures, read from a running
 * world. Four kinds:
 *
 *   height  the water height at a point: the top of the highest particle in a thin vertical
 *           column (radius `radius`) above `position`, counted upwards from `position.y` only as
 *           long as the particles stay connected (no vertical gap wider than `max_gap`), so a
 *           droplet falling through the column is not read as water;
 *   level   the water level at a point as the kernels see it: along the vertical line through
 *           `position`, the SPH interpolation of the fluid fraction φ = V Σ W (1 inside the
 *           rest lattice; particles mirrored in the base plane), walked upwards from
 *           `position.y` to where it first falls below `fraction` (default 1/2). A point
 *           reading: it finds a flat or sloped lattice surface within 0.1 r at any spacing,
 *           where the height probe reads the highest particle within its column's width
 *           (docs/validation.md, "Probes");
 *   front   the leading edge of the fluid along an axis: the edge (centre + r) of the furthest
 *           particle of the fluid body, where the body is found on slabs 2r thick across the
 *           axis, walking from the back, and ends at the first gap wider than `max_gap`; splash
 *           particles beyond that gap are ignored;
 *   force   the normal force and mean pressure on a rectangular patch of a domain wall or of a
 *           box collider's face, from the constraint reaction: every solver iteration, the part
 *           of each particle's correction that the solids gave it (ghost-density push and
 *           collision projection, i.e. everything but the fluid–fluid term) is momentum
 *           m Δx / dt the wall handed the particle; F = (m/dt²) Σ Δx·n over the particles facing
 *           the patch, averaged over the step's substeps. docs/validation.md ("How the wall
 *           force is estimated") gives the derivation and the limits.
 *
 *     pbf_probe_def p[2] = {pbf_default_probe_def(), pbf_default_probe_def()};
 *     p[0].type = PBF_PROBE_HEIGHT;
 *     snprintf(p[0].name, sizeof p[0].name, "H1");
 *     p[0].position = (pbf_vec3){0.3f, 0.0f, 0.075f};
 *     p[1].type = PBF_PROBE_FORCE;
 *     snprintf(p[1].name, sizeof p[1].name, "floor");
 *     p[1].position = (pbf_vec3){0.5f, 0.0f, 0.5f};     // on the floor y = 0
 *     p[1].direction = PBF_DIR_Y_POS;                    // its normal points into the fluid
 *     p[1].size = (pbf_vec3){1.0f, 0.0f, 1.0f};          // 1 m x 1 m (0 along the normal)
 *     pbf_world_set_probes(w, p, 2);
 *     pbf_world_step(w, 1.0f / 60.0f);
 *     pbf_probe_sample s[2];
 *     pbf_world_sample_probes(w, s, 2);                  // s[1].value in N, s[1].pressure in Pa
 *
 * Probes are deterministic (serial reductions in slot order: bit-identical for any thread
 * count) and cheap: height and front read the positions once when sampled; a force probe adds,
 * per Δp pass, a test of every particle against the patches and one neighbour sum for each
 * particle within h of a patch. */
#ifndef PBF_PROBES_H
#define PBF_PROBES_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pbf_probe_type {
    PBF_PROBE_HEIGHT = 0,
    PBF_PROBE_FRONT = 1,
    PBF_PROBE_FORCE = 2,
    PBF_PROBE_LEVEL = 3
} pbf_probe_type;

/* An axis and a sense: the way a front moves, or a patch's normal (pointing out of the solid,
 * into the fluid). */
typedef enum pbf_direction {
    PBF_DIR_X_POS = 0,
    PBF_DIR_X_NEG,
    PBF_DIR_Y_POS,
    PBF_DIR_Y_NEG,
    PBF_DIR_Z_POS,
    PBF_DIR_Z_NEG
} pbf_direction;

#define PBF_PROBE_NAME_SIZE 32

typedef struct pbf_probe_def {
    pbf_probe_type type; /* default PBF_PROBE_HEIGHT */
    /* Column name in probes.csv: 1–31 characters of [A-Za-z0-9_.-], unique in a world.
     * Default "probe". */
    char name[PBF_PROBE_NAME_SIZE];
    /* height, level: the point whose water height is read; the column is vertical (y) and the
     *         height is counted from position.y (the floor, or the top of an obstacle);
     * force:  the centre of the patch, on the surface of a domain wall or a box collider face.
     * m; inside the domain. Default (0.5, 0, 0.5). */
    pbf_vec3 position;
    /* height: radius of the column, m, > 0. Default 0.02 (2r for the default r; the scene
     * loader uses 2r of the scene). */
    float radius;
    /* height, front: a gap wider than this (m, >= 0) separates the fluid body from splash.
     * Default 0.04 (h for the default r and kernel; the scene loader uses the scene's h). */
    float max_gap;
    /* front: the way the front moves; force: the patch normal, out of the solid into the fluid.
     * Default PBF_DIR_X_POS. */
    pbf_direction direction;
    /* front: a slab 2r thick across the axis belongs to the fluid body when it holds at least
     * this many particles, [1, 1000000]. Default 1. */
    int min_particles;
    /* force: the patch's extent along x, y and z, m: > 0 along the two axes of the patch, 0
     * along the normal. Default (0, 0, 0): must be given. */
    pbf_vec3 size;
    /* level: the fluid fraction that marks the surface, (0, 1). Default 0.5. */
    float fraction;
} pbf_probe_def;

/* One reading. */
typedef struct pbf_probe_sample {
    /* height, level: m above position.y (0: dry);
     * front:  the coordinate of the leading edge along the probe's axis, m (NaN with no
     *         particles);
     * force:  the normal force ON the patch, N (positive: the fluid pushes into the solid),
     *         averaged over the last step's substeps; 0 before the first step; NaN for a
     *         step in which the per-particle memory the Chebyshev-accelerated solve needs
     *         (16 bytes a particle) could not be allocated. */
    double value;
    /* force: value / patch area, Pa; 0 for the other kinds. */
    double pressure;
    /* Particles that made the reading: in the connected column (height), within h of the
     * line below the level (level), in the fluid body (front), facing the patch in the last
     * substep's last iteration (force). */
    int particles;
} pbf_probe_sample;

PBF_API pbf_probe_def pbf_default_probe_def(void);
/* "height", "front", "force", "level"; "?" for an unknown value. */
PBF_API const char *pbf_probe_type_name(pbf_probe_type type);
/* "+x", "-x", "+y", "-y", "+z", "-z"; "?" for an unknown value. */
PBF_API const char *pbf_direction_name(pbf_direction direction);

/* Checks one probe against a world def and its colliders (what pbf_world_set_probes does for
 * each probe, and the scene loader with the JSON path). On failure returns PBF_ERR_INVALID_ARG,
 * writes the def field at fault ("position", "size", ...) into *field (may be NULL) and the
 * reason into why (may be NULL), e.g. "must lie inside the domain, got y = 2 outside [0, 1]".
 * A force patch must lie in the plane of a domain wall (normal pointing into the domain) or of a
 * box collider's face (normal pointing out of the box), and inside that wall or face. */
PBF_API pbf_status pbf_probe_check(const pbf_probe_def *probe, const pbf_world_def *world,
                                   const pbf_collider_def *colliders, int collider_count,
                                   const char **field, char *why, size_t why_size);

/* Gives the world its probes (copied), replacing any; count 0 removes them. Each probe is
 * checked (pbf_probe_check, against the world's colliders: add them first) and names must be
 * unique; on failure the world keeps its old probes and the message names the probe index and
 * field. At most PBF_MAX_PROBES. */
#define PBF_MAX_PROBES 64
PBF_API pbf_status pbf_world_set_probes(pbf_world *world, const pbf_probe_def *probes, int count);
PBF_API int pbf_world_probe_count(const pbf_world *world);
/* The world's probe defs (NULL with none), valid until the next pbf_world_set_probes. */
PBF_API const pbf_probe_def *pbf_world_get_probes(const pbf_world *world);
/* Reads every probe: out must hold pbf_world_probe_count entries. Heights and fronts are read
 * from the current positions, forces are the last step's. Returns PBF_ERR_OUT_OF_MEMORY when
 * the scratch bins (2r wide, across the domain) cannot be allocated; PBF_OK otherwise. In a
 * world split over MPI ranks (include/pbf/mpi.h) it is collective and every rank reads the
 * whole world's values. */
PBF_API pbf_status pbf_world_sample_probes(const pbf_world *world, pbf_probe_sample *out);

#ifdef __cplusplus
}
#endif

#endif /* PBF_PROBES_H */
