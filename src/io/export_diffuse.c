/* The diffuse particles of a frame as a binary PLY file (pbf_export_diffuse_write,
 * include/pbf/export.h): position, velocity, kind, lifetime; written atomically like the
 * particle files, and read back (pbf_export_diffuse_read) for `pbf render`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "pbf/diffuse.h"
#include "pbf/export.h"
#include "vtu_cells.h"

#define CHUNK 1024
#define RECORD 29 /* 7 floats and a byte */

static void put_le32(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    p[0] = (unsigned char)u, p[1] = (unsigned char)(u >> 8), p[2] = (unsigned char)(u >> 16),
    p[3] = (unsigned char)(u >> 24);
}

/* The world's diffuse particles for a writer: n, then in *x 7 floats each (positions, then
 * velocities, then lifetimes, as blocks of n) and in *kind their kinds; the caller frees both. */
static pbf_status read_diffuse(const pbf_world *world, const char *path, int *n, float **x,
                               uint8_t **kind, char *err, size_t err_size) {
    *n = pbf_world_diffuse_count(world);
    *x = malloc(((size_t)*n * 7 + 1) * sizeof **x);
    *kind = malloc((size_t)*n + 1);
    if (*x == NULL || *kind == NULL) {
        free(*x), free(*kind);
        if (err && err_size)
            snprintf(err, err_size, "cannot write '%s': out of memory for %d diffuse particles",
                     path, *n);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_world_get_diffuse(world, *x, *x + 3 * (size_t)*n, *kind, *x + 6 * (size_t)*n);
    return PBF_OK;
}

/* The PLY of n particles from the arrays (positions, velocities 3 floats each). */
static pbf_status write_ply(int n, const float *x, const float *v, const uint8_t *kind,
                            const float *life, const char *path, char *err, size_t err_size) {
    atomic_file af;
    pbf_status st = pbf__atomic_open(&af, path, err, err_size);
    if (st != PBF_OK) return st;
    pbf__atomic_printf(&af,
                       "ply\n"
                       "format binary_little_endian 1.0\n"
                       "comment pbf diffuse particles: kind 0 spray, 1 foam, 2 bubble\n"
                       "element vertex %d\n"
                       "property float x\nproperty float y\nproperty float z\n"
                       "property float vx\nproperty float vy\nproperty float vz\n"
                       "property uchar kind\n"
                       "property float lifetime\n"
                       "end_header\n",
                       n);
    unsigned char buf[CHUNK * RECORD];
    for (int start = 0; start < n; start += CHUNK) {
        int end = n - start < CHUNK ? n : start + CHUNK;
        unsigned char *dst = buf;
        for (int i = start; i < end; ++i, dst += RECORD) {
            for (int k = 0; k < 3; ++k) {
                put_le32(dst + 4 * k, x[3 * i + k]);
                put_le32(dst + 12 + 4 * k, v[3 * i + k]);
            }
            dst[24] = kind[i];
            put_le32(dst + 25, life[i]);
        }
        pbf__atomic_write(&af, buf, (size_t)(dst - buf));
    }
    return pbf__atomic_commit(&af, err, err_size);
}

/* The .vtu of n particles from the arrays. */
static pbf_status write_vtu(int n, const float *x, const float *v, const uint8_t *kind,
                            const float *life, const char *path, char *err, size_t err_size) {
    const vtu_array arrays[] = {{"velocity", VTU_FLOAT32, 3, v, 0},
                                {"kind", VTU_UINT8, 1, kind, 0},
                                {"lifetime", VTU_FLOAT32, 1, life, 0}};
    atomic_file af;
    pbf_status st = pbf__atomic_open(&af, path, err, err_size);
    if (st != PBF_OK) return st;
    pbf__write_vtu_cells(&af, x, n, NULL, 0, arrays, 3);
    return pbf__atomic_commit(&af, err, err_size);
}

/* The world's particles through write_ply (vtu 0) or write_vtu (1). */
static pbf_status write_world(const pbf_world *world, int vtu, const char *path, char *err,
                              size_t err_size) {
    if (world == NULL || path == NULL) {
        if (err && err_size)
            snprintf(err, err_size, "%s: NULL argument",
                     vtu ? "pbf_export_diffuse_write_vtu" : "pbf_export_diffuse_write");
        return PBF_ERR_INVALID_ARG;
    }
    int n = 0;
    float *x = NULL;
    uint8_t *kind = NULL;
    pbf_status st = read_diffuse(world, path, &n, &x, &kind, err, err_size);
    if (st != PBF_OK) return st;
    float *v = x + 3 * (size_t)n, *life = x + 6 * (size_t)n;
    st = (vtu ? write_vtu : write_ply)(n, x, v, kind, life, path, err, err_size);
    free(x);
    free(kind);
    return st;
}

pbf_status pbf_export_diffuse_write(const pbf_world *world, const char *path, char *err,
                                    size_t err_size) {
    return write_world(world, 0, path, err, err_size);
}

pbf_status pbf_export_diffuse_write_vtu(const pbf_world *world, const char *path, char *err,
                                        size_t err_size) {
    return write_world(world, 1, path, err, err_size);
}

pbf_status pbf_export_diffuse_write_particles(const pbf_diffuse_particles *p, int vtu,
                                              const char *path, char *err, size_t err_size) {
    if (p == NULL || path == NULL || p->count < 0 ||
        (p->count > 0 && (!p->positions || !p->velocities || !p->kinds || !p->lifetimes))) {
        if (err && err_size)
            snprintf(err, err_size, "pbf_export_diffuse_write_particles: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    return (vtu ? write_vtu : write_ply)(p->count, p->positions, p->velocities, p->kinds,
                                         p->lifetimes, path, err, err_size);
}

/* ---- reading back ------------------------------------------------------------------------- */

static const char *const header_lines[] = {"ply",
                                           "format binary_little_endian 1.0",
                                           NULL /* comments, then element vertex N */,
                                           "property float x",
                                           "property float y",
                                           "property float z",
                                           "property float vx",
                                           "property float vy",
                                           "property float vz",
                                           "property uchar kind",
                                           "property float lifetime",
                                           "end_header"};

static float get_le32(const unsigned char *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void pbf_diffuse_particles_free(pbf_diffuse_particles *p) {
    if (p == NULL) return;
    free(p->positions);
    free(p->velocities);
    free(p->kinds);
    free(p->lifetimes);
    memset(p, 0, sizeof *p);
}

/* The next header line of f into line (without the newline); 0 at the end of the file or for a
 * line longer than the buffer. */
static int header_line(FILE *f, char *line, size_t size) {
    if (fgets(line, (int)size, f) == NULL) return 0;
    size_t n = strlen(line);
    if (n == 0 || line[n - 1] != '\n') return 0;
    line[--n] = '\0';
    if (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
    return 1;
}

pbf_status pbf_export_diffuse_read(const char *path, pbf_diffuse_particles *out, char *err,
                                   size_t err_size) {
    if (out != NULL) memset(out, 0, sizeof *out);
    if (path == NULL || out == NULL) {
        if (err && err_size) snprintf(err, err_size, "pbf_export_diffuse_read: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (err && err_size) snprintf(err, err_size, "cannot open '%s': %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    char line[256];
    int n = -1;
    const size_t lines = sizeof header_lines / sizeof header_lines[0];
    for (size_t k = 0; k < lines; ++k) {
        int got = header_line(f, line, sizeof line);
        if (header_lines[k] == NULL) { /* comments, then the vertex count */
            while (got && strncmp(line, "comment", 7) == 0) got = header_line(f, line, sizeof line);
            char extra;
            if (got && (sscanf(line, "element vertex %d %c", &n, &extra) != 1 || n < 0)) got = 0;
            if (!got) {
                fclose(f);
                if (err && err_size)
                    snprintf(err, err_size,
                             "'%s': not a diffuse-particle file: expected 'element vertex N' "
                             "after the format line",
                             path);
                return PBF_ERR_PARSE;
            }
            continue;
        }
        if (!got || strcmp(line, header_lines[k]) != 0) {
            fclose(f);
            if (err && err_size)
                snprintf(err, err_size,
                         "'%s': not a diffuse-particle file as pbf writes it: expected header "
                         "line '%s'",
                         path, header_lines[k]);
            return PBF_ERR_PARSE;
        }
    }
    const size_t count = (size_t)n;
    out->positions = malloc(count * 3 * sizeof(float) + 1);
    out->velocities = malloc(count * 3 * sizeof(float) + 1);
    out->kinds = malloc(count + 1);
    out->lifetimes = malloc(count * sizeof(float) + 1);
    if (!out->positions || !out->velocities || !out->kinds || !out->lifetimes) {
        fclose(f);
        pbf_diffuse_particles_free(out);
        if (err && err_size)
            snprintf(err, err_size, "'%s': out of memory for %d diffuse particles", path, n);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    unsigned char buf[CHUNK * RECORD];
    pbf_status st = PBF_OK;
    for (size_t start = 0; start < count && st == PBF_OK; start += CHUNK) {
        size_t m = count - start < CHUNK ? count - start : CHUNK;
        if (fread(buf, RECORD, m, f) != m) {
            if (err && err_size)
                snprintf(err, err_size,
                         "'%s': truncated: %d diffuse particles need %zu bytes of "
                         "data",
                         path, n, count * RECORD);
            st = PBF_ERR_PARSE;
            break;
        }
        for (size_t i = 0; i < m; ++i) {
            const unsigned char *src = buf + i * RECORD;
            size_t j = start + i;
            for (int k = 0; k < 3; ++k) {
                out->positions[3 * j + (size_t)k] = get_le32(src + 4 * k);
                out->velocities[3 * j + (size_t)k] = get_le32(src + 12 + 4 * k);
            }
            out->kinds[j] = src[24];
            out->lifetimes[j] = get_le32(src + 25);
            if (src[24] > PBF_DIFFUSE_BUBBLE) {
                if (err && err_size)
                    snprintf(err, err_size,
                             "'%s': diffuse particle %zu has kind %d (expected 0 "
                             "spray, 1 foam or 2 bubble)",
                             path, j, src[24]);
                st = PBF_ERR_PARSE;
                break;
            }
        }
    }
    fclose(f);
    if (st != PBF_OK) {
        pbf_diffuse_particles_free(out);
        return st;
    }
    out->count = n;
    return PBF_OK;
}
