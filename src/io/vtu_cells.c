/* Points and cells as an XML VTK UnstructuredGrid (see vtu_cells.h). */
#include "vtu_cells.h"

#include <string.h>

#include "pbf/pbf.h"

#define CHUNK 4096 /* values packed per write call */

static const char *const type_names[] = {"Float32", "Int32", "UInt8"};
static const int type_bytes[] = {4, 4, 1};

/* The appended block's generated arrays (the cells) and the caller's, in file order. */
enum { G_POINTS, G_CONNECTIVITY, G_OFFSETS, G_TYPES, G_COUNT };

static void put_le(unsigned char *dst, uint64_t u, int bytes) {
    for (int k = 0; k < bytes; ++k) dst[k] = (unsigned char)(u >> (8 * k));
}

/* `values` 32-bit words (floats or int32 as their bit pattern) or bytes, little-endian, after
 * their UInt64 byte count. */
static void write_values(atomic_file *af, const void *data, int64_t values, int bytes) {
    unsigned char head[8];
    put_le(head, (uint64_t)values * (uint64_t)bytes, 8);
    pbf__atomic_write(af, head, 8);
    if (bytes == 1) {
        pbf__atomic_write(af, data, (size_t)values);
        return;
    }
    const unsigned char *src = data;
    unsigned char buf[CHUNK * 4];
    for (int64_t start = 0; start < values; start += CHUNK) {
        int64_t end = values - start < CHUNK ? values : start + CHUNK;
        unsigned char *dst = buf;
        for (int64_t i = start; i < end; ++i, dst += 4) {
            uint32_t u;
            memcpy(&u, src + 4 * i, 4);
            put_le(dst, u, 4);
        }
        pbf__atomic_write(af, buf, (size_t)(dst - buf));
    }
}

/* The cells' generated arrays: connectivity (0..n-1 for vertices), offsets (1, 2, ... or 3, 6,
 * ...), types (VTK_VERTEX = 1 or VTK_TRIANGLE = 5). */
static void write_generated(atomic_file *af, int g, int64_t cells, int per_cell, int type) {
    int bytes = g == G_TYPES ? 1 : 4;
    int64_t values = g == G_CONNECTIVITY ? cells * per_cell : cells;
    unsigned char head[8];
    put_le(head, (uint64_t)values * (uint64_t)bytes, 8);
    pbf__atomic_write(af, head, 8);
    unsigned char buf[CHUNK * 4];
    for (int64_t start = 0; start < values; start += CHUNK) {
        int64_t end = values - start < CHUNK ? values : start + CHUNK;
        unsigned char *dst = buf;
        for (int64_t i = start; i < end; ++i) {
            if (g == G_TYPES) {
                *dst++ = (unsigned char)type;
            } else {
                uint32_t u = (uint32_t)(g == G_CONNECTIVITY ? i : (i + 1) * per_cell);
                put_le(dst, u, 4);
                dst += 4;
            }
        }
        pbf__atomic_write(af, buf, (size_t)(dst - buf));
    }
}

static void declare(atomic_file *af, const char *indent, const char *type, const char *name,
                    int components, uint64_t offset) {
    pbf__atomic_printf(af, "%s<DataArray type=\"%s\" Name=\"%s\" ", indent, type, name);
    if (components > 1) pbf__atomic_printf(af, "NumberOfComponents=\"%d\" ", components);
    pbf__atomic_printf(af, "format=\"appended\" offset=\"%llu\"/>\n", (unsigned long long)offset);
}

void pbf__write_vtu_cells(atomic_file *af, const float *points, int64_t point_count,
                          const int32_t *triangles, int64_t triangle_count, const vtu_array *arrays,
                          int array_count) {
    const int per_cell = triangles != NULL ? 3 : 1;
    const int64_t cells = triangles != NULL ? triangle_count : point_count;
    /* offsets in the appended block: points and cells first, then the caller's arrays */
    uint64_t at = 0, generated[G_COUNT];
    generated[G_POINTS] = at, at += 8 + 12 * (uint64_t)point_count;
    generated[G_CONNECTIVITY] = at, at += 8 + 4 * (uint64_t)(cells * per_cell);
    generated[G_OFFSETS] = at, at += 8 + 4 * (uint64_t)cells;
    generated[G_TYPES] = at, at += 8 + (uint64_t)cells;
    pbf__atomic_printf(af,
                       "<?xml version=\"1.0\"?>\n"
                       "<!-- written by pbf %s (Position Based Fluids) -->\n"
                       "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" "
                       "byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
                       "  <UnstructuredGrid>\n"
                       "    <Piece NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\">\n",
                       PBF_VERSION_STRING, (long long)point_count, (long long)cells);
    for (int side = 0; side < 2; ++side) {
        pbf__atomic_printf(af, side ? "      <CellData>\n" : "      <PointData>\n");
        uint64_t off = at;
        for (int a = 0; a < array_count; ++a) {
            const vtu_array *v = &arrays[a];
            int64_t n = (v->per_cell ? cells : point_count) * v->components;
            if (v->per_cell == side)
                declare(af, "        ", type_names[v->type], v->name, v->components, off);
            off += 8 + (uint64_t)n * (uint64_t)type_bytes[v->type];
        }
        pbf__atomic_printf(af, side ? "      </CellData>\n" : "      </PointData>\n");
    }
    pbf__atomic_printf(af, "      <Points>\n");
    declare(af, "        ", "Float32", "Points", 3, generated[G_POINTS]);
    pbf__atomic_printf(af, "      </Points>\n      <Cells>\n");
    declare(af, "        ", "Int32", "connectivity", 1, generated[G_CONNECTIVITY]);
    declare(af, "        ", "Int32", "offsets", 1, generated[G_OFFSETS]);
    declare(af, "        ", "UInt8", "types", 1, generated[G_TYPES]);
    pbf__atomic_printf(af, "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
                           "  <AppendedData encoding=\"raw\">\n   _");
    write_values(af, points, 3 * point_count, 4);
    if (triangles != NULL)
        write_values(af, triangles, 3 * triangle_count, 4);
    else
        write_generated(af, G_CONNECTIVITY, cells, 1, 1);
    write_generated(af, G_OFFSETS, cells, per_cell, 0);
    write_generated(af, G_TYPES, cells, per_cell, triangles != NULL ? 5 : 1);
    for (int a = 0; a < array_count; ++a) {
        const vtu_array *v = &arrays[a];
        int64_t n = (v->per_cell ? cells : point_count) * v->components;
        write_values(af, v->data, n, type_bytes[v->type]);
    }
    pbf__atomic_printf(af, "\n  </AppendedData>\n</VTKFile>\n");
}
