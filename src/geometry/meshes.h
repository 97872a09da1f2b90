/* Mesh solids inside the library (include/pbf/geometry.h): the bodies, their fields and poses,
 * and the hooks the step calls (solver.c). The per-particle math is in kernels.h ("Mesh
 * solids"); the bake in bake.c; the rigid-body motion of floating meshes in bodies.c. */
#ifndef PBF_GEOMETRY_MESHES_H
#define PBF_GEOMETRY_MESHES_H

#include "bake.h"
#include "pbf/geometry.h"
#include "trimesh.h"
#include "world_internal.h"

typedef struct pbf_mesh_body {
    pbf_mesh_def def;
    pbf_trimesh mesh;        /* welded, in the local frame (for drawing and contacts) */
    pbf_baked_field field;   /* in the local frame */
    pbf_mass_props props;    /* of the scaled mesh, about its centre (closed meshes) */
    double offset[3];        /* the local origin in the scaled file's frame: the centre of a
                                floating body, else 0 */
    float mass;              /* kg (floating) */
    pbf_mesh_solid_info info;

    /* Pose: x_world = R x_local + position; R from q. Set for the end of the current substep;
     * the *_start copies hold the pose at its start (the sweep follows the relative motion). */
    double position[3], q[4], R[9];
    double position_start[3], R_start[9];
    double velocity[3], omega[3]; /* m/s, rad/s (world) over the last substep */

    /* Floating bodies (bodies.c): the fluid's force and torque of the last substep, and the
     * acceleration used (added-mass compensation, as the tool's). */
    double force_prev[3], torque_prev[3], accel_prev[3], alpha_prev[3];

    /* The step in progress: sums over its substeps; the published state. */
    double sum_force[3], sum_torque[3];
    int substeps_done;
    pbf_mesh_solid_state state;
} pbf_mesh_body;

/* Per-particle share of the moving meshes' corrections in a Δp pass (bodies.c): up to two
 * bodies per particle. */
#define PBF_BODY_SHARES 2

typedef struct pbf_geometry {
    int count;
    pbf_mesh_body *body[PBF_MAX_MESHES];
    int moving;              /* bodies with forces to measure (kinematic and floating) */
    /* scratch of the force measurement, capacity particles */
    int capacity;
    int32_t *share_body;     /* PBF_BODY_SHARES per particle, -1: none */
    float *share;            /* 3 × PBF_BODY_SHARES per particle: Δx summed over the passes */
} pbf_geometry;

/* The solids array's mesh entries (after the colliders) and params.solid_count. */
void pbf__meshes_sync(pbf_world *w);
void pbf__meshes_free(pbf_world *w);
size_t pbf__meshes_memory_bytes(const pbf_world *w);
/* A body's solid entry from its pose. */
void pbf__mesh_body_solid(const pbf_mesh_body *b, pbf_solid *s);
/* The kinematic pose at time t: position and rotation matrix of the local frame. */
void pbf__mesh_body_pose_at(const pbf_mesh_body *b, double t, double position[3], double R[9]);

/* Hooks of pbf_world_step (solver.c), in this order:
 *   step_begin; per substep { predict; substep_begin (moves the bodies to the end of the
 *   substep, then walks every particle's predicted path, so that none passes through a thin
 *   part); the density solve, with after_delta after every Δp pass (the moving bodies' share of
 *   the corrections); ...; substep_end (their forces) }; step_end. No-ops without meshes. */
void pbf__meshes_step_begin(pbf_world *w);
pbf_status pbf__meshes_substep_begin(pbf_world *w, float dt, int threads);
void pbf__meshes_after_delta(pbf_world *w, int threads);
void pbf__meshes_substep_end(pbf_world *w, float dt);
void pbf__meshes_step_end(pbf_world *w);

/* bodies.c: the floating bodies' motion over one substep (before the particles move), and the
 * reaction reduction. */
void pbf__bodies_advance(pbf_world *w, pbf_mesh_body *b, float dt);
void pbf__bodies_after_delta(pbf_world *w, int threads);
void pbf__bodies_substep_end(pbf_world *w, float dt);

#endif
