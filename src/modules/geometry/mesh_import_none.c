/* Mesh import when the library is built without Assimp (PBF_MESH=OFF, or AUTO without
 * libassimp-dev): every call says so. */
#include <stdio.h>

#include "mesh_import.h"

static pbf_status unavailable(const char *name, pbf_trimesh *out, char *err, size_t err_size) {
    if (out != NULL) {
        out->vertex_count = out->triangle_count = 0;
        out->vertices = NULL;
        out->triangles = NULL;
    }
    if (err != NULL && err_size > 0)
        snprintf(err, err_size,
                 "mesh '%s': mesh import is not built into this pbf (configure with "
                 "-DPBF_MESH=ON after installing libassimp-dev)",
                 name != NULL ? name : "");
    return PBF_ERR_UNSUPPORTED;
}

int pbf__mesh_import_available(void) { return 0; }

pbf_status pbf__mesh_import(const char *path, pbf_trimesh *out, char *err, size_t err_size) {
    return unavailable(path, out, err, err_size);
}
