/* OpenVDB files when the library is built without OpenVDB (PBF_VDB=OFF, or AUTO without
 * libopenvdb-dev): every call says so, naming the file. */
#include <stdio.h>

#include "vdb.h"

static pbf_status unavailable(const char *path, char *err, size_t err_size) {
    if (err != NULL && err_size > 0)
        snprintf(err, err_size,
                 "%s: OpenVDB output is not built into this pbf (install libopenvdb-dev and "
                 "configure with -DPBF_VDB=ON)",
                 path != NULL ? path : "");
    return PBF_ERR_UNSUPPORTED;
}

int pbf_vdb_available(void) { return 0; }

pbf_status pbf_mesh_write_vdb(const pbf_mesh *mesh, double voxel_size, int threads,
                              const char *path, char *err, size_t err_size) {
    (void)mesh, (void)voxel_size, (void)threads;
    return unavailable(path, err, err_size);
}

pbf_status pbf__vdb_read_grid(const char *path, const char *grid_name, pbf_vdb_grid_info *info,
                              const double *points, int count, float *values, char *err,
                              size_t err_size) {
    (void)grid_name, (void)info, (void)points, (void)count, (void)values;
    return unavailable(path, err, err_size);
}
