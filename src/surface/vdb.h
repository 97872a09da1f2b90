/* OpenVDB files of the fluid's surface: the C side of two C++ files, vdb_write.cpp
 * (pbf_mesh_write_vdb, include/pbf/surface.h) and vdb_read.cpp (reading a grid back, below), the
 * only files of the library that see OpenVDB. Without OpenVDB (PBF_VDB=OFF, or AUTO where
 * libopenvdb-dev is missing) vdb_none.c answers PBF_ERR_UNSUPPORTED for both. Internal. */
#ifndef PBF_SURFACE_VDB_H
#define PBF_SURFACE_VDB_H

#include <stddef.h>

#include "pbf/surface.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a .vdb file holds about one float grid, for tests and checks. */
typedef struct pbf_vdb_grid_info {
    int grid_count; /* grids in the file */
    int level_set; /* 1 when the grid's class is level set */
    double voxel_size[3]; /* m, along x, y and z (the transform's scale) */
    double background; /* the value of inactive voxels outside */
    long long active_voxels; /* voxels that hold a value of their own */
    double active_min[3]; /* the active voxels' bounding box: centres of its corner voxels, m */
    double active_max[3];
} pbf_vdb_grid_info;

/* Reads the float grid named grid_name from path; samples it at count points (xyz, m; may be 0)
 * into values, by trilinear interpolation between voxel centres. Errors name the file: missing
 * or not an OpenVDB file (PBF_ERR_IO / PBF_ERR_PARSE), no grid of that name or not a float grid
 * (PBF_ERR_PARSE); PBF_ERR_UNSUPPORTED without OpenVDB. */
#if defined(__GNUC__) /* its file is compiled with default visibility: keep it out of libpbf.so */
__attribute__((visibility("hidden")))
#endif
pbf_status
pbf__vdb_read_grid(const char *path, const char *grid_name, pbf_vdb_grid_info *info,
                   const double *points, int count, float *values, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
