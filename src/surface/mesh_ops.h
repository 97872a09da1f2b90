/* Operations on a reconstructed mesh (mesh_ops.c). Internal. */
#ifndef PBF_SURFACE_MESH_OPS_H
#define PBF_SURFACE_MESH_OPS_H

#include "pbf/surface.h"

/* Taubin λ|μ smoothing of the vertex positions. The mesh must be closed and consistently
 * oriented (every mesh from the reconstruction is). Returns 0, or -1 when out of memory. */
int surface_mesh_taubin(pbf_mesh *mesh, int iterations, int threads);
/* Area-weighted vertex normals into mesh->normals (allocated). Returns 0 or -1. */
int surface_mesh_normals(pbf_mesh *mesh, int threads);

#endif
