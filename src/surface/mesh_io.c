/* Mesh files: binary PLY and OBJ out (atomically, through pbf_write_file_atomic), PLY back in.
 * The bytes are laid out explicitly little-endian, whatever the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/export.h"
#include "surface_util.h"

static unsigned char *put_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
    return p + 4;
}

static unsigned char *put_f32(unsigned char *p, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    return put_u32(p, v);
}

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float get_f32(const unsigned char *p) {
    uint32_t v = get_u32(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static pbf_status write_ply(const pbf_mesh *m, const char *path, char *err, size_t err_size) {
    char header[512];
    int hn = snprintf(header, sizeof header,
                      "ply\nformat binary_little_endian 1.0\ncomment pbf surface mesh\n"
                      "element vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
                      "property float nx\nproperty float ny\nproperty float nz\n"
                      "element face %d\nproperty list uchar int vertex_indices\nend_header\n",
                      m->vertex_count, m->triangle_count);
    size_t size = (size_t)hn + 24 * (size_t)m->vertex_count + 13 * (size_t)m->triangle_count;
    unsigned char *buf = malloc(size), *p = buf;
    if (buf == NULL) {
        surface_format(err, err_size, "%s: out of memory for %zu bytes", path, size);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    memcpy(p, header, (size_t)hn);
    p += hn;
    for (int v = 0; v < m->vertex_count; ++v) {
        for (int d = 0; d < 3; ++d) p = put_f32(p, m->positions[3 * (size_t)v + d]);
        for (int d = 0; d < 3; ++d)
            p = put_f32(p, m->normals ? m->normals[3 * (size_t)v + d] : 0.0f);
    }
    for (int t = 0; t < m->triangle_count; ++t) {
        *p++ = 3;
        for (int k = 0; k < 3; ++k) p = put_u32(p, (uint32_t)m->triangles[3 * (size_t)t + k]);
    }
    pbf_status st = pbf_write_file_atomic(path, buf, size, err, err_size);
    free(buf);
    return st;
}

typedef struct text_buf {
    char *data;
    size_t size, cap;
    int failed;
} text_buf;

static void text_reserve(text_buf *b, size_t more) {
    if (b->failed || b->size + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->size + more) cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) {
        b->failed = 1;
        return;
    }
    b->data = d;
    b->cap = cap;
}

static pbf_status write_obj(const pbf_mesh *m, const char *path, char *err, size_t err_size) {
    text_buf b = {NULL, 0, 0, 0};
    text_reserve(&b, 256);
    if (!b.failed)
        b.size += (size_t)snprintf(b.data, 256, "# pbf surface mesh: %d vertices, %d triangles\n",
                                   m->vertex_count, m->triangle_count);
    for (int v = 0; v < m->vertex_count && !b.failed; ++v) {
        const float *q = m->positions + 3 * (size_t)v;
        text_reserve(&b, 128);
        if (!b.failed)
            b.size += (size_t)snprintf(b.data + b.size, 128, "v %.7g %.7g %.7g\n", (double)q[0],
                                       (double)q[1], (double)q[2]);
    }
    for (int v = 0; v < m->vertex_count && m->normals != NULL && !b.failed; ++v) {
        const float *q = m->normals + 3 * (size_t)v;
        text_reserve(&b, 128);
        if (!b.failed)
            b.size += (size_t)snprintf(b.data + b.size, 128, "vn %.6f %.6f %.6f\n", (double)q[0],
                                       (double)q[1], (double)q[2]);
    }
    for (int t = 0; t < m->triangle_count && !b.failed; ++t) {
        const int32_t *f = m->triangles + 3 * (size_t)t;
        text_reserve(&b, 128);
        if (b.failed) break;
        if (m->normals != NULL)
            b.size += (size_t)snprintf(b.data + b.size, 128, "f %d//%d %d//%d %d//%d\n", f[0] + 1,
                                       f[0] + 1, f[1] + 1, f[1] + 1, f[2] + 1, f[2] + 1);
        else
            b.size += (size_t)snprintf(b.data + b.size, 128, "f %d %d %d\n", f[0] + 1, f[1] + 1,
                                       f[2] + 1);
    }
    if (b.failed) {
        free(b.data);
        surface_format(err, err_size, "%s: out of memory for the OBJ text", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_status st = pbf_write_file_atomic(path, b.data, b.size, err, err_size);
    free(b.data);
    return st;
}

pbf_status pbf_mesh_write(const pbf_mesh *mesh, pbf_mesh_format format, const char *path, char *err,
                          size_t err_size) {
    if (mesh == NULL || path == NULL || (mesh->vertex_count > 0 && mesh->positions == NULL) ||
        (mesh->triangle_count > 0 && mesh->triangles == NULL)) {
        surface_format(err, err_size, "pbf_mesh_write: mesh and path must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    if (format == PBF_MESH_PLY) return write_ply(mesh, path, err, err_size);
    if (format == PBF_MESH_OBJ) return write_obj(mesh, path, err, err_size);
    surface_format(err, err_size, "%s: unknown mesh format %d (expected PLY or OBJ)", path,
                   (int)format);
    return PBF_ERR_INVALID_ARG;
}

pbf_status pbf_mesh_read_ply(const char *path, pbf_mesh *out, char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        surface_format(err, err_size, "%s: %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    char line[256];
    /* face_extra: bytes of 32-bit face properties after the list (the solid index of
     * pbf_export_solids_write), skipped */
    int nv = -1, nt = -1, props = 0, in_vertex = 0, in_face = 0, face_extra = 0, ended = 0, ok = 1;
    if (fgets(line, sizeof line, f) == NULL || strcmp(line, "ply\n") != 0) ok = 0;
    while (ok && !ended && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "element vertex ", 15) == 0) {
            ok = sscanf(line + 15, "%d", &nv) == 1 && nv >= 0;
            in_vertex = 1;
        } else if (strncmp(line, "element face ", 13) == 0) {
            ok = sscanf(line + 13, "%d", &nt) == 1 && nt >= 0;
            in_vertex = 0;
            in_face = 1;
        } else if (in_face && (strncmp(line, "property int ", 13) == 0 ||
                               strncmp(line, "property float ", 15) == 0)) {
            face_extra += 4;
        } else if (strncmp(line, "property float ", 15) == 0 && in_vertex) {
            ++props;
        } else if (strcmp(line, "end_header\n") == 0) {
            ended = 1;
        } else if (strncmp(line, "format ", 7) == 0) {
            ok = strcmp(line, "format binary_little_endian 1.0\n") == 0;
        }
    }
    if (!ok || !ended || nv < 0 || nt < 0 || (props != 3 && props != 6) || face_extra > 8) {
        fclose(f);
        surface_format(err, err_size,
                       "%s: not a mesh PLY of pbf (expected binary_little_endian, float x y z "
                       "[nx ny nz], faces as uchar/int lists)",
                       path);
        return PBF_ERR_PARSE;
    }
    out->vertex_count = nv;
    out->triangle_count = nt;
    out->positions = malloc(3 * (size_t)(nv > 0 ? nv : 1) * sizeof *out->positions);
    out->normals = props == 6 ? malloc(3 * (size_t)(nv > 0 ? nv : 1) * sizeof *out->normals) : NULL;
    out->triangles = malloc(3 * (size_t)(nt > 0 ? nt : 1) * sizeof *out->triangles);
    if (out->positions == NULL || out->triangles == NULL || (props == 6 && out->normals == NULL)) {
        fclose(f);
        pbf_mesh_free(out);
        surface_format(err, err_size, "%s: out of memory for %d vertices", path, nv);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    unsigned char buf[24];
    const char *why = NULL;
    for (int v = 0; v < nv && why == NULL; ++v) {
        if (fread(buf, 4, (size_t)props, f) != (size_t)props) why = "the vertices end early";
        for (int d = 0; d < 3 && why == NULL; ++d) {
            out->positions[3 * (size_t)v + d] = get_f32(buf + 4 * d);
            if (props == 6) out->normals[3 * (size_t)v + d] = get_f32(buf + 12 + 4 * d);
        }
    }
    for (int t = 0; t < nt && why == NULL; ++t) {
        if (fread(buf, 1, 13 + (size_t)face_extra, f) != 13 + (size_t)face_extra)
            why = "the faces end early";
        else if (buf[0] != 3)
            why = "a face is not a triangle";
        for (int k = 0; k < 3 && why == NULL; ++k) {
            uint32_t i = get_u32(buf + 1 + 4 * k);
            if (i >= (uint32_t)nv) why = "a face names a vertex that does not exist";
            out->triangles[3 * (size_t)t + k] = (int32_t)i;
        }
    }
    fclose(f);
    if (why != NULL) {
        pbf_mesh_free(out);
        surface_format(err, err_size, "%s: %s", path, why);
        return PBF_ERR_PARSE;
    }
    return PBF_OK;
}
