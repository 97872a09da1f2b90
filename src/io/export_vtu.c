/* XML VTK output: one UnstructuredGrid (.vtu) per frame or per rank's piece, the parallel
 * header (.pvtu) naming the pieces, and the time series (.pvd). Formats in include/pbf/export.h.
 *
 * The arrays go into one raw appended block, little-endian, each preceded by its byte count as
 * a UInt64 (header_type="UInt64"): no base64 and no compression, so a reader needs nothing but
 * the offsets, and ParaView, VTK's Python module and meshio read it. Library code: never
 * prints, never exits. */
#include "export_vtu.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/surface.h"
#include "vtu_cells.h"

/* Particles packed per write call (12 bytes per vector -> 12 KiB on the stack). */
#define CHUNK 1024

static void set_error(char *err, size_t err_size, const char *fmt, ...) {
    if (err == NULL || err_size == 0) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_size, fmt, args);
    va_end(args);
}

static void put_le(unsigned char *dst, uint64_t u, int bytes) {
    for (int k = 0; k < bytes; ++k) dst[k] = (unsigned char)(u >> (8 * k));
}

/* The appended block's arrays, in file order. */
enum {
    A_POINTS,
    A_VELOCITY,
    A_DENSITY,
    A_ID,
    A_CONNECTIVITY,
    A_OFFSETS,
    A_TYPES,
    A_PHASE, /* only for a world of several fluids */
    A_COUNT
};
static const int array_bytes[A_COUNT] = {12, 12, 4, 4, 4, 4, 1, 4}; /* per particle */

/* One array: its UInt64 byte count, then its values. Floats and int32 go as their bit pattern,
 * little-endian; the cell arrays are generated (vertex i is point i, VTK_VERTEX = 1). */
static void write_array(atomic_file *af, const pbf_particles *p, int a) {
    const int n = p->count;
    unsigned char head[8];
    put_le(head, (uint64_t)n * (uint64_t)array_bytes[a], 8);
    pbf__atomic_write(af, head, 8);
    unsigned char buf[CHUNK * 12];
    for (int start = 0; start < n; start += CHUNK) {
        int end = n - start < CHUNK ? n : start + CHUNK;
        unsigned char *dst = buf;
        for (int i = start; i < end; ++i) {
            uint32_t u[3];
            int words = array_bytes[a] / 4;
            switch (a) {
            case A_POINTS: memcpy(u, p->positions + 3 * i, 12); break;
            case A_VELOCITY: memcpy(u, p->velocities + 3 * i, 12); break;
            case A_DENSITY: memcpy(u, p->densities + i, 4); break;
            case A_ID: memcpy(u, p->ids + i, 4); break;
            case A_PHASE: memcpy(u, p->phases + i, 4); break;
            case A_CONNECTIVITY: u[0] = (uint32_t)i; break;
            case A_OFFSETS: u[0] = (uint32_t)i + 1u; break;
            default: *dst++ = 1; continue; /* A_TYPES: VTK_VERTEX */
            }
            for (int k = 0; k < words; ++k, dst += 4) put_le(dst, u[k], 4);
        }
        pbf__atomic_write(af, buf, (size_t)(dst - buf));
    }
}

void pbf__write_vtu(atomic_file *af, const pbf_particles *p) {
    const int n = p->count, arrays = p->phases != NULL ? A_COUNT : A_PHASE;
    uint64_t off[A_COUNT], at = 0;
    for (int a = 0; a < arrays; ++a) {
        off[a] = at;
        at += 8 + (uint64_t)n * (uint64_t)array_bytes[a];
    }
    char phase[128] = "";
    if (p->phases != NULL)
        snprintf(phase, sizeof phase,
                 "        <DataArray type=\"Int32\" Name=\"phase\" format=\"appended\" "
                 "offset=\"%llu\"/>\n",
                 (unsigned long long)off[A_PHASE]);
    pbf__atomic_printf(
        af,
        "<?xml version=\"1.0\"?>\n"
        "<!-- written by pbf %s (Position Based Fluids) -->\n"
        "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
        "header_type=\"UInt64\">\n"
        "  <UnstructuredGrid>\n"
        "    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n"
        "      <PointData Scalars=\"density\" Vectors=\"velocity\">\n"
        "        <DataArray type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\" "
        "format=\"appended\" offset=\"%llu\"/>\n"
        "        <DataArray type=\"Float32\" Name=\"density\" format=\"appended\" "
        "offset=\"%llu\"/>\n"
        "        <DataArray type=\"Int32\" Name=\"id\" format=\"appended\" offset=\"%llu\"/>\n"
        "%s"
        "      </PointData>\n"
        "      <Points>\n"
        "        <DataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\" "
        "format=\"appended\" offset=\"%llu\"/>\n"
        "      </Points>\n"
        "      <Cells>\n"
        "        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"appended\" "
        "offset=\"%llu\"/>\n"
        "        <DataArray type=\"Int32\" Name=\"offsets\" format=\"appended\" offset=\"%llu\"/>\n"
        "        <DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"%llu\"/>\n"
        "      </Cells>\n"
        "    </Piece>\n"
        "  </UnstructuredGrid>\n"
        "  <AppendedData encoding=\"raw\">\n"
        "   _",
        PBF_VERSION_STRING, n, n, (unsigned long long)off[A_VELOCITY],
        (unsigned long long)off[A_DENSITY], (unsigned long long)off[A_ID], phase,
        (unsigned long long)off[A_POINTS], (unsigned long long)off[A_CONNECTIVITY],
        (unsigned long long)off[A_OFFSETS], (unsigned long long)off[A_TYPES]);
    for (int a = 0; a < arrays; ++a) write_array(af, p, a);
    pbf__atomic_printf(af, "\n  </AppendedData>\n</VTKFile>\n");
}

PBF_API pbf_status pbf_export_surface_write_vtu(const pbf_mesh *mesh, const char *path, char *err,
                                                size_t err_size) {
    if (mesh == NULL || path == NULL || mesh->vertex_count < 0 || mesh->triangle_count < 0) {
        set_error(err, err_size, "pbf_export_surface_write_vtu: invalid mesh or path");
        return PBF_ERR_INVALID_ARG;
    }
    const vtu_array normals[] = {{"Normals", VTU_FLOAT32, 3, mesh->normals, 0}};
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    pbf__write_vtu_cells(&af, mesh->positions, mesh->vertex_count, mesh->triangles,
                         mesh->triangle_count, normals, mesh->normals != NULL ? 1 : 0);
    return pbf__atomic_commit(&af, err, err_size);
}

/* A file name as an XML attribute value. */
static void write_attr(atomic_file *af, const char *s) {
    for (; *s; ++s) {
        switch (*s) {
        case '&': pbf__atomic_printf(af, "&amp;"); break;
        case '<': pbf__atomic_printf(af, "&lt;"); break;
        case '>': pbf__atomic_printf(af, "&gt;"); break;
        case '"': pbf__atomic_printf(af, "&quot;"); break;
        default: pbf__atomic_write(af, s, 1);
        }
    }
}

PBF_API pbf_status pbf_export_write_pvtu(const char *path, const char *const *pieces, int count,
                                         char *err, size_t err_size) {
    if (path == NULL || count < 0 || (count > 0 && pieces == NULL)) {
        set_error(err, err_size, "pbf_export_write_pvtu: invalid path or pieces");
        return PBF_ERR_INVALID_ARG;
    }
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    pbf__atomic_printf(
        &af, "<?xml version=\"1.0\"?>\n"
             "<VTKFile type=\"PUnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
             "header_type=\"UInt64\">\n"
             "  <PUnstructuredGrid GhostLevel=\"0\">\n"
             "    <PPointData Scalars=\"density\" Vectors=\"velocity\">\n"
             "      <PDataArray type=\"Float32\" Name=\"velocity\" NumberOfComponents=\"3\"/>\n"
             "      <PDataArray type=\"Float32\" Name=\"density\"/>\n"
             "      <PDataArray type=\"Int32\" Name=\"id\"/>\n"
             "    </PPointData>\n"
             "    <PPoints>\n"
             "      <PDataArray type=\"Float32\" Name=\"Points\" NumberOfComponents=\"3\"/>\n"
             "    </PPoints>\n");
    for (int i = 0; i < count; ++i) {
        pbf__atomic_printf(&af, "    <Piece Source=\"");
        write_attr(&af, pieces[i]);
        pbf__atomic_printf(&af, "\"/>\n");
    }
    pbf__atomic_printf(&af, "  </PUnstructuredGrid>\n</VTKFile>\n");
    return pbf__atomic_commit(&af, err, err_size);
}

PBF_API pbf_status pbf_export_write_pvd(const char *path, const double *times,
                                        const char *const *files, int count, char *err,
                                        size_t err_size) {
    if (path == NULL || count < 0 || (count > 0 && (times == NULL || files == NULL))) {
        set_error(err, err_size, "pbf_export_write_pvd: invalid path, times or files");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_pvd_entry *entries = malloc((size_t)(count > 0 ? count : 1) * sizeof *entries);
    if (entries == NULL) {
        set_error(err, err_size, "%s: out of memory", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < count; ++i) entries[i] = (pbf_pvd_entry){times[i], 0, files[i]};
    pbf_status status = pbf_export_write_pvd_parts(path, entries, count, NULL, 0, err, err_size);
    free(entries);
    return status;
}

PBF_API pbf_status pbf_export_write_pvd_parts(const char *path, const pbf_pvd_entry *entries,
                                              int count, const char *const *part_names,
                                              int part_count, char *err, size_t err_size) {
    if (path == NULL || count < 0 || (count > 0 && entries == NULL) || part_count < 0 ||
        (part_count > 0 && part_names == NULL)) {
        set_error(err, err_size, "pbf_export_write_pvd_parts: invalid path, entries or names");
        return PBF_ERR_INVALID_ARG;
    }
    for (int i = 0; i < count; ++i)
        if (entries[i].file == NULL || entries[i].part < 0) {
            set_error(err, err_size,
                      "pbf_export_write_pvd_parts: entry %d has no file or a "
                      "negative part",
                      i);
            return PBF_ERR_INVALID_ARG;
        }
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    pbf__atomic_printf(&af,
                       "<?xml version=\"1.0\"?>\n"
                       "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                       "  <Collection>\n");
    for (int i = 0; i < count; ++i) {
        /* %.17g: the time read back is the double that was written */
        pbf__atomic_printf(&af, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"%d\" ",
                           entries[i].time, entries[i].part);
        if (entries[i].part < part_count && part_names[entries[i].part] != NULL) {
            pbf__atomic_printf(&af, "name=\"");
            write_attr(&af, part_names[entries[i].part]);
            pbf__atomic_printf(&af, "\" ");
        }
        pbf__atomic_printf(&af, "file=\"");
        write_attr(&af, entries[i].file);
        pbf__atomic_printf(&af, "\"/>\n");
    }
    pbf__atomic_printf(&af, "  </Collection>\n</VTKFile>\n");
    return pbf__atomic_commit(&af, err, err_size);
}

/* A file name as a JSON string's contents. */
static void write_json_string(atomic_file *af, const char *s) {
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            pbf__atomic_printf(af, "\\%c", c);
        else if (c < 0x20)
            pbf__atomic_printf(af, "\\u%04x", c);
        else
            pbf__atomic_write(af, s, 1);
    }
}

PBF_API pbf_status pbf_export_write_series(const char *path, const double *times,
                                           const char *const *files, int count, char *err,
                                           size_t err_size) {
    if (path == NULL || count < 0 || (count > 0 && (times == NULL || files == NULL))) {
        set_error(err, err_size, "pbf_export_write_series: invalid path, times or files");
        return PBF_ERR_INVALID_ARG;
    }
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    pbf__atomic_printf(&af, "{\n  \"file-series-version\": \"1.0\",\n  \"files\": [");
    for (int i = 0; i < count; ++i) {
        pbf__atomic_printf(&af, "%s\n    {\"name\": \"", i > 0 ? "," : "");
        write_json_string(&af, files[i]);
        /* %.17g: the time read back is the double that was written */
        pbf__atomic_printf(&af, "\", \"time\": %.17g}", times[i]);
    }
    pbf__atomic_printf(&af, "\n  ]\n}\n");
    return pbf__atomic_commit(&af, err, err_size);
}
