/* An XML VTK UnstructuredGrid (.vtu) of points and their cells with named point and cell arrays
 * (library-internal): the mesh solids, the fluid's surface and the diffuse particles of a frame
 * as `pbf run --format vtu` writes them beside the particles, so one .pvd lists them all. Same
 * layout as the particle .vtu (export_vtu.c): one raw appended block, little-endian, each array
 * preceded by its byte count as a UInt64. */
#ifndef PBF_IO_VTU_CELLS_H
#define PBF_IO_VTU_CELLS_H

#include <stdint.h>

#include "atomic_file.h"

typedef enum vtu_type { VTU_FLOAT32, VTU_INT32, VTU_UINT8 } vtu_type;

typedef struct vtu_array {
    const char *name;
    vtu_type type;
    int components; /* values per point or per cell */
    const void *data; /* components values per point (or cell), in native byte order */
    int per_cell; /* 0: PointData, 1: CellData */
} vtu_array;

/* Writes the whole file into af (the caller opens and commits it): point_count points (xyz
 * floats) and, when triangles is NULL, one VTK_VERTEX cell per point; otherwise triangle_count
 * VTK_TRIANGLE cells of 3 point indices each. */
void pbf__write_vtu_cells(atomic_file *af, const float *points, int64_t point_count,
                          const int32_t *triangles, int64_t triangle_count, const vtu_array *arrays,
                          int array_count);

#endif
