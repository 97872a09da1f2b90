/* The mesh solids of a frame as one file (pbf_export_solids_write, include/pbf/export.h): every
 * mesh's triangles placed at its pose, with the index of its solid per triangle and the poses
 * themselves (PLY comments; VTK field data). The file is built in memory, then written
 * atomically by pbf_write_file_atomic. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/export.h"
#include "pbf/geometry.h"
#include "vtu_cells.h"

typedef struct buffer {
    unsigned char *data;
    size_t size, capacity;
    int failed;
} buffer;

static void put(buffer *b, const void *src, size_t n) {
    if (b->failed) return;
    if (b->size + n > b->capacity) {
        size_t cap = b->capacity ? 2 * b->capacity : 4096;
        while (cap < b->size + n) cap *= 2;
        unsigned char *p = realloc(b->data, cap);
        if (p == NULL) {
            b->failed = 1;
            return;
        }
        b->data = p;
        b->capacity = cap;
    }
    memcpy(b->data + b->size, src, n);
    b->size += n;
}

static void put_text(buffer *b, const char *fmt, ...) {
    char line[2048]; /* a header line with a file name of up to PBF_MESH_PATH_SIZE */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0) put(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* A 32-bit value (float or int bit pattern), little- or big-endian. */
static void put_u32(buffer *b, const void *value, int big_endian) {
    uint32_t u;
    memcpy(&u, value, 4);
    unsigned char o[4];
    for (int k = 0; k < 4; ++k) o[big_endian ? 3 - k : k] = (unsigned char)(u >> (8 * k));
    put(b, o, 4);
}

/* Vertex v of mesh i in world coordinates. */
static void world_vertex(const float a[12], const float *p, float out[3]) {
    for (int k = 0; k < 3; ++k)
        out[k] = a[4 * k] * p[0] + a[4 * k + 1] * p[1] + a[4 * k + 2] * p[2] + a[4 * k + 3];
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

pbf_status pbf_export_solids_write(const pbf_world *world, pbf_format format, const char *path,
                                   char *err, size_t err_size) {
    if (world == NULL || path == NULL || (format != PBF_FORMAT_PLY && format != PBF_FORMAT_VTK)) {
        if (err != NULL && err_size > 0)
            snprintf(err, err_size,
                     "pbf_export_solids_write: needs a world, a path and exactly "
                     "one of PLY or VTK");
        return PBF_ERR_INVALID_ARG;
    }
    const int meshes = pbf_world_mesh_count(world);
    long long vertices = 0, triangles = 0;
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv = 0;
        triangles += pbf_world_mesh_triangles(world, i, &v, &nv, &t);
        vertices += nv;
    }
    const int be = format == PBF_FORMAT_VTK;
    buffer b = {0};
    if (!be) {
        put_text(&b,
                 "ply\nformat binary_little_endian 1.0\n"
                 "comment written by pbf %s: mesh solids at t = %.9g s\n",
                 PBF_VERSION_STRING, pbf_world_time(world));
        for (int i = 0; i < meshes; ++i) {
            pbf_mesh_solid_state s = pbf_world_mesh_state(world, i);
            put_text(&b,
                     "comment solid %d %s position %.9g %.9g %.9g orientation %.9g %.9g %.9g "
                     "%.9g\n",
                     i, base_name(pbf_world_get_mesh_def(world, i)->path), (double)s.position.x,
                     (double)s.position.y, (double)s.position.z, (double)s.orientation[0],
                     (double)s.orientation[1], (double)s.orientation[2], (double)s.orientation[3]);
        }
        put_text(&b,
                 "element vertex %lld\nproperty float x\nproperty float y\nproperty float z\n"
                 "element face %lld\nproperty list uchar int vertex_indices\n"
                 "property int solid\nend_header\n",
                 vertices, triangles);
    } else {
        put_text(&b,
                 "# vtk DataFile Version 3.0\npbf %s mesh solids at t = %.9g s\nBINARY\n"
                 "DATASET POLYDATA\nFIELD FieldData 3\ntime 1 1 float\n",
                 PBF_VERSION_STRING, pbf_world_time(world));
        float t = (float)pbf_world_time(world);
        put_u32(&b, &t, 1);
        put_text(&b, "\nposition 3 %d float\n", meshes);
        for (int i = 0; i < meshes; ++i) {
            pbf_mesh_solid_state s = pbf_world_mesh_state(world, i);
            put_u32(&b, &s.position.x, 1);
            put_u32(&b, &s.position.y, 1);
            put_u32(&b, &s.position.z, 1);
        }
        put_text(&b, "\norientation 4 %d float\n", meshes);
        for (int i = 0; i < meshes; ++i) {
            pbf_mesh_solid_state s = pbf_world_mesh_state(world, i);
            for (int k = 0; k < 4; ++k) put_u32(&b, &s.orientation[k], 1);
        }
        put_text(&b, "\nPOINTS %lld float\n", vertices);
    }
    /* the vertices at their pose */
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv = 0;
        pbf_world_mesh_triangles(world, i, &v, &nv, &t);
        float a[12], w[3];
        pbf_world_mesh_transform(world, i, a);
        for (int j = 0; j < nv; ++j) {
            world_vertex(a, v + 3 * j, w);
            for (int k = 0; k < 3; ++k) put_u32(&b, &w[k], be);
        }
    }
    /* the triangles: PLY "3 a b c solid", VTK "3 a b c" then the solid per cell */
    if (be) put_text(&b, "\nPOLYGONS %lld %lld\n", triangles, 4 * triangles);
    for (int pass = 0; pass < (be ? 2 : 1); ++pass) {
        if (pass == 1) {
            put_text(&b, "\nCELL_DATA %lld\nSCALARS solid int 1\nLOOKUP_TABLE default\n",
                     triangles);
        }
        int32_t first = 0;
        for (int i = 0; i < meshes; ++i) {
            const float *v;
            const int32_t *t;
            int nv = 0, nt = pbf_world_mesh_triangles(world, i, &v, &nv, &t);
            for (int j = 0; j < nt; ++j) {
                if (pass == 1) {
                    put_u32(&b, &i, 1);
                    continue;
                }
                if (be) {
                    const int32_t three = 3;
                    put_u32(&b, &three, 1);
                } else {
                    const unsigned char three = 3;
                    put(&b, &three, 1);
                }
                for (int k = 0; k < 3; ++k) {
                    int32_t index = first + t[3 * j + k];
                    put_u32(&b, &index, be);
                }
                if (!be) put_u32(&b, &i, 0);
            }
            first += nv;
        }
    }
    if (be) put_text(&b, "\n");
    pbf_status st = PBF_OK;
    if (b.failed) {
        if (err != NULL && err_size > 0)
            snprintf(err, err_size, "%s: out of memory for %lld triangles", path, triangles);
        st = PBF_ERR_OUT_OF_MEMORY;
    } else {
        st = pbf_write_file_atomic(path, b.data, b.size, err, err_size);
    }
    free(b.data);
    return st;
}

pbf_status pbf_export_solids_write_vtu(const pbf_world *world, const char *path, char *err,
                                       size_t err_size) {
    if (world == NULL || path == NULL) {
        if (err != NULL && err_size > 0)
            snprintf(err, err_size, "pbf_export_solids_write_vtu: needs a world and a path");
        return PBF_ERR_INVALID_ARG;
    }
    const int meshes = pbf_world_mesh_count(world);
    int64_t vertices = 0, triangles = 0;
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv = 0;
        triangles += pbf_world_mesh_triangles(world, i, &v, &nv, &t);
        vertices += nv;
    }
    float *points = malloc(((size_t)vertices * 3 + 1) * sizeof *points);
    int32_t *cells = malloc(((size_t)triangles * 4 + 1) * sizeof *cells);
    if (points == NULL || cells == NULL) {
        free(points), free(cells);
        if (err != NULL && err_size > 0)
            snprintf(err, err_size, "%s: out of memory for %lld triangles", path,
                     (long long)triangles);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    int32_t *solid = cells + 3 * triangles; /* per triangle: its mesh's index */
    int64_t pv = 0, pt = 0;
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv = 0, nt = pbf_world_mesh_triangles(world, i, &v, &nv, &t);
        float a[12];
        pbf_world_mesh_transform(world, i, a);
        for (int j = 0; j < nt; ++j, ++pt) {
            for (int k = 0; k < 3; ++k) cells[3 * pt + k] = (int32_t)pv + t[3 * j + k];
            solid[pt] = i;
        }
        for (int j = 0; j < nv; ++j, ++pv) world_vertex(a, v + 3 * j, points + 3 * pv);
    }
    const vtu_array arrays[] = {{"solid", VTU_INT32, 1, solid, 1}};
    atomic_file af;
    pbf_status st = pbf__atomic_open(&af, path, err, err_size);
    if (st == PBF_OK) {
        pbf__write_vtu_cells(&af, points, vertices, cells, triangles, arrays, 1);
        st = pbf__atomic_commit(&af, err, err_size);
    }
    free(points);
    free(cells);
    return st;
}
