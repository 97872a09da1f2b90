/* Mesh solids inside the library (include/pbf/geometry.h): the bodies, their fields and poses,
 * their forces, and the hooks the step calls (solver.c). The per-particle math is in kernels.h
 * ("Mesh solids"); the bake in bake.c. */
#ifndef PBF_GEOMETRY_MESHES_H
#define PBF_GEOMETRY_MESHES_H

#include "bodies.h"
#include "geometry_state.h"
#include "mesh_pose.h"

void pbf__meshes_free(pbf_world *w);
size_t pbf__meshes_memory_bytes(const pbf_world *w);

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
/* pbf__meshes_substep_end: mesh_pose.h */
void pbf__meshes_step_end(pbf_world *w);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__meshes_module;

#endif
