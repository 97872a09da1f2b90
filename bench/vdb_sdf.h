/* OpenVDB's mesh-to-volume behind a C header, for bench/sdf_compare.c only (the library never
 * links OpenVDB). Built when CMake finds OpenVDB (Debian's libopenvdb-dev). */
#ifndef PBF_BENCH_VDB_SDF_H
#define PBF_BENCH_VDB_SDF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vdb_sdf vdb_sdf;

/* tools::meshToSignedDistanceField of the triangles (world coordinates) on a grid of spacing
 * `cell` whose nodes lie at origin + cell (i, j, k), the band ex_band voxels wide outside and
 * in_band inside, on `threads` TBB threads (0: TBB's default). The conversion's wall time goes
 * to *seconds. NULL on failure, with the message in err. */
vdb_sdf *vdb_sdf_bake(const float *vertices, int vertex_count, const int32_t *triangles,
                      int triangle_count, const double origin[3], double cell, float ex_band,
                      float in_band, int threads, double *seconds, char *err, size_t err_size);
/* The field at a world point, trilinear between nodes (negative inside the mesh). */
float vdb_sdf_sample(const vdb_sdf *s, const double x[3]);
void vdb_sdf_free(vdb_sdf *s);
/* "OpenVDB 10.0.1" */
const char *vdb_sdf_version(void);

#ifdef __cplusplus
}
#endif

#endif
