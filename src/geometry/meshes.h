/* Mesh solids inside the library (include/pbf/geometry.h): the bodies, their fields and poses,
 * their forces, and the hooks the step calls (solver.c). The per-particle math is in kernels.h
 * ("Mesh solids"); the bake in bake.c. */
#ifndef PBF_GEOMETRY_MESHES_H
#define PBF_GEOMETRY_MESHES_H

#include <string.h>

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
    int solid;               /* its entry in the world's solids; -1: a sink (not a solid) */

    /* Pose: x_world = R x_local + position; R from q. Set for the end of the current substep;
     * the *_start copies hold the pose at its start (the sweep follows the relative motion). */
    double position[3], q[4], R[9];
    double position_start[3], R_start[9], q_start[4];
    int touched;                  /* a floating body had contacts in this substep (bodies.c) */
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
    int moving;              /* kinematic and floating bodies */
    int floating;            /* floating bodies */
    int sinks;               /* sink meshes (no solids: emitter.c removes what enters them) */
    /* Scratch of the force measurement, capacity particles: the fluid–fluid target of each
     * particle in the last Δp pass (written by stage_delta), and which mesh took the rest of
     * its displacement (-1: none) and how much. */
    int capacity;
    float *target;           /* 3 per particle */
    float *share;            /* 3 per particle */
    int32_t *share_body;
} pbf_geometry;

/* Where stage_delta writes each particle's fluid–fluid target, or NULL without meshes. */
static inline float *pbf__meshes_target(const pbf_world *w) {
    return w->geometry != NULL ? w->geometry->target : NULL;
}

/* The solids array's mesh entries (after the colliders) and params.solid_count. */
void pbf__meshes_sync(pbf_world *w);
void pbf__meshes_free(pbf_world *w);
size_t pbf__meshes_memory_bytes(const pbf_world *w);
/* A body's solid entry from its pose. */
static inline void pbf__mesh_body_solid(const pbf_mesh_body *b, pbf_solid *s) {
    memset(s, 0, sizeof *s);
    s->type = PBF_SOLID_MESH;
    s->a = v3((float)b->position[0], (float)b->position[1], (float)b->position[2]);
    for (int k = 0; k < 9; ++k) s->rot[k] = (float)b->R[k];
    s->field = &b->field.field;
}
/* The kinematic pose at time t: position and rotation matrix of the local frame. */
void pbf__mesh_body_pose_at(const pbf_mesh_body *b, double t, double position[3], double R[9]);

/* bodies.c: a floating body's motion over one substep of dt (before the particles move): the
 * end-of-substep pose and velocities from gravity and the last substep's fluid force, stopped by
 * the domain's walls; and, at the substep's end, the force it then felt. */
void pbf__bodies_advance(const pbf_world *w, pbf_mesh_body *b, float dt);
/* bodies.c: after every body has moved, the floating bodies' contacts with the other solids
 * and with each other (include/pbf/geometry.h, "restitution"), serially in mesh order. */
void pbf__bodies_contacts(pbf_world *w, float dt);
/* bodies.c: the contact points of a floating body (b->samples), spacing about `spacing`; 0, or
 * -1 out of memory. */
int pbf__bodies_sample(pbf_mesh_body *b, float spacing);
void pbf__bodies_substep_end(pbf_mesh_body *b);

/* The state of a body that carries from one step to the next (checkpoints): PBF_BODY_STATE
 * doubles. */
#define PBF_BODY_STATE 28
void pbf__mesh_body_save(const pbf_mesh_body *b, double out[PBF_BODY_STATE]);
void pbf__mesh_body_restore(pbf_world *w, int index, const double in[PBF_BODY_STATE]);

/* Hooks of pbf_world_step (solver.c), in this order:
 *   step_begin; per substep { predict; substep_begin (moves the bodies to the end of the
 *   substep, then walks every particle's predicted path, so that none passes through a thin
 *   part); the density solve, with after_delta after every Δp pass (each mesh's share of the
 *   corrections: its force); ...; substep_end }; step_end (the step's mean forces). No-ops
 *   without meshes. */
void pbf__meshes_step_begin(pbf_world *w);
pbf_status pbf__meshes_substep_begin(pbf_world *w, float dt, int threads);
void pbf__meshes_after_delta(pbf_world *w, int threads);
void pbf__meshes_substep_end(pbf_world *w, float dt);
void pbf__meshes_step_end(pbf_world *w);

#endif
