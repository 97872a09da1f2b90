/* Mesh solids' state (include/pbf/geometry.h): the bodies, their fields and poses, as the
 * step's parts share them. meshes.c owns their lifecycle and hooks; bodies.c moves the floating
 * ones; emitter.c asks which of them are sinks. */
#ifndef PBF_GEOMETRY_STATE_H
#define PBF_GEOMETRY_STATE_H

#include <string.h>

#include "bake.h"
#include "pbf/geometry.h"
#include "trimesh.h"
#include "world_state.h"

typedef struct pbf_mesh_body {
    pbf_mesh_def def;
    pbf_trimesh mesh; /* welded, in the local frame (for drawing and contacts) */
    pbf_baked_field field; /* in the local frame; a static mesh's split over MPI ranks: only
                              * the block its process's particles can reach (field_crop.c) */
    /* Where the whole field comes from again when a cropped one must grow (field_crop.c): its
     * cache file (cache_dir "" when it could not be written: the field is then never cropped),
     * else a bake with the same parameters (the same floats). */
    pbf_bake_def bake;
    uint64_t key;
    char cache_dir[PBF_MESH_PATH_SIZE];
    pbf_mass_props props; /* of the scaled mesh, about its centre (closed meshes) */
    double offset[3]; /* the local origin in the scaled file's frame: the centre of a
                                floating body, else 0 */
    float mass; /* kg (floating) */
    pbf_mesh_solid_info info;
    int solid; /* its entry in the world's solids; -1: a sink (not a solid) */

    /* Pose: x_world = R x_local + position; R from q. Set for the end of the current substep;
     * the *_start copies hold the pose at its start (the sweep follows the relative motion). */
    double position[3], q[4], R[9];
    double position_start[3], R_start[9], q_start[4];
    int touched; /* a floating body had contacts in this substep (bodies.c) */
    double velocity[3], omega[3]; /* m/s, rad/s (world) over the last substep */

    /* Floating bodies (bodies.c): inertia about the centre in the local frame (kg m²), the
     * fluid's force and torque of the substep in progress and of the last one, and the
     * accelerations used (the added-mass compensation, as the tool's). */
    double inertia[9];
    /* Floating bodies: the points that touch other solids (bodies.c), local frame: the vertices
     * and a lattice on each triangle larger than the spacing. */
    int sample_count;
    float *samples; /* 3 per point */
    double sub_force[3], sub_torque[3];
    double force_prev[3], torque_prev[3], accel_prev[3], alpha_prev[3];

    /* The step in progress: sums over its substeps; the published state. */
    double sum_force[3], sum_torque[3];
    int substeps_done;
    pbf_mesh_solid_state state;
} pbf_mesh_body;

typedef struct pbf_geometry {
    int count;
    pbf_mesh_body *body[PBF_MAX_MESHES];
    int moving; /* kinematic and floating bodies */
    int floating; /* floating bodies */
    int sinks; /* sink meshes (no solids: emitter.c removes what enters them) */
    /* Split over MPI ranks (field_crop.c): the world box where this process's particles are
     * when a substep begins, as the split last said (keep_set 0: not split, fields whole), and
     * how many fields are cropped now. */
    int keep_set;
    double keep_lo[3], keep_hi[3];
    int cropped;
    /* Scratch of the force measurement, capacity particles: the fluid–fluid target of each
     * particle in the last Δp pass (which writes it: cpu_stages.c), and which mesh took the
     * rest of its displacement (-1: none) and how much. */
    int capacity;
    float *target; /* 3 per particle */
    float *share; /* 3 per particle */
    int32_t *share_body;
} pbf_geometry;

/* A body's solid entry from its pose. */
static inline void pbf__mesh_body_solid(const pbf_mesh_body *b, pbf_solid *s) {
    memset(s, 0, sizeof *s);
    s->type = PBF_SOLID_MESH;
    s->a = v3((float)b->position[0], (float)b->position[1], (float)b->position[2]);
    for (int k = 0; k < 9; ++k) s->rot[k] = (float)b->R[k];
    s->field = &b->field.field;
}

#endif
