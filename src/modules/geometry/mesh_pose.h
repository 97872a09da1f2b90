/* Where the mesh solids are (mesh_pose.c): their poses, their entries in the world's solids,
 * the frames of the sweep that keeps particles from passing through thin parts, and a substep's
 * end. For meshes.c (the CPU's substeps) and src/backend/cuda/world_cuda.c (a CUDA world's
 * substeps, whose bodies move on the host). */
#ifndef PBF_GEOMETRY_MESH_POSE_H
#define PBF_GEOMETRY_MESH_POSE_H

#include "geometry_state.h"

/* The kinematic pose at time t: position and rotation matrix of the local frame. */
void pbf__mesh_body_pose_at(const pbf_mesh_body *b, double t, double position[3], double R[9]);
/* The solids array's mesh entries (after the colliders) and params.solid_count. */
void pbf__meshes_sync(pbf_world *w);
/* Moves the kinematic and floating bodies to where they are at the end of the substep that
 * starts at w->time, and updates their solids (the first part of meshes.c's substep_begin). */
void pbf__meshes_move(pbf_world *w, float dt);
/* Each mesh solid's entry at the substep's start and at its end, in the solids' order (the
 * frames of the sweep, kernels.h pbf_mesh_sweep_path); returns how many (at most
 * PBF_MAX_MESHES). */
int pbf__meshes_sweep_frames(const pbf_world *w, pbf_solid *start, pbf_solid *end);
/* The end of a substep (meshes.c's substep_end; a CUDA world's, world_cuda.c, after the device
 * measured the forces): the substeps counted for the step's mean force, and each floating
 * body's force of the substep kept for its next move. */
void pbf__meshes_substep_end(pbf_world *w, float dt);

#endif
