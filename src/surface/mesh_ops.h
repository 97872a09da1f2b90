/* Operations on a reconstructed mesh (mesh_ops.c). Internal. */
#ifndef PBF_SURFACE_MESH_OPS_H
#define PBF_SURFACE_MESH_OPS_H

#include "pbf/surface.h"

/* Taubin λ|μ smoothing of the vertex positions. The mesh must be closed and consistently
 * oriented (every mesh from the reconstruction is). Returns 0, or -1 when out of memory. */
int surface_mesh_taubin(pbf_mesh *mesh, int iterations, int threads);
/* Edge-collapse decimation with quadric error metrics (decimate.c) down to keep times the
 * triangles (or as far as the safety checks allow), staying closed and manifold. keep >= 1:
 * nothing. Returns 0, or -1 when out of memory (the mesh is then unusable). */
int surface_mesh_decimate(pbf_mesh *mesh, double keep);
/* Area-weighted vertex normals into mesh->normals (allocated). Returns 0 or -1. */
int surface_mesh_normals(pbf_mesh *mesh, int threads);

#endif
