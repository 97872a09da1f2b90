/* Particle exporters (PLY, legacy VTK; XML VTK in export_vtu.c) with atomic writes
 * (atomic_file.c), and their readers.
 *
 * Binary data is packed byte by byte with an explicit byte order, so the files are the same on
 * any host: PLY little-endian, VTK big-endian (the legacy VTK format has no other choice).
 * Library code: never prints, never exits; every failure returns a status and a message. */
#include "pbf/export.h"

#include "atomic_file.h"
#include "export_vtu.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Particles packed per fwrite call: large enough to amortise the call, small enough to stay in
 * cache (32 bytes per PLY vertex -> 32 KiB on the stack). */
#define CHUNK_PARTICLES 1024

/* Title line of the VTK files we write. A file with this title must hold all our arrays: a
 * legacy VTK file cut after any complete section would otherwise read as valid. */
#define VTK_TITLE_PREFIX "pbf "

/* ------------------------------------------------------------------------------------------ */
/* Messages */

static void set_error(char *err, size_t err_size, const char *fmt, ...) {
    if (err == NULL || err_size == 0) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_size, fmt, args);
    va_end(args);
}

/* ------------------------------------------------------------------------------------------ */
/* Byte order */

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void put_u32_le(unsigned char *dst, uint32_t u) {
    dst[0] = (unsigned char)(u);
    dst[1] = (unsigned char)(u >> 8);
    dst[2] = (unsigned char)(u >> 16);
    dst[3] = (unsigned char)(u >> 24);
}

static void put_u32_be(unsigned char *dst, uint32_t u) {
    dst[0] = (unsigned char)(u >> 24);
    dst[1] = (unsigned char)(u >> 16);
    dst[2] = (unsigned char)(u >> 8);
    dst[3] = (unsigned char)(u);
}

/* Reads an unsigned integer of n bytes (1, 2, 4 or 8) in the given byte order. */
static uint64_t get_uint(const unsigned char *src, int n, int big_endian) {
    uint64_t u = 0;
    for (int i = 0; i < n; ++i) {
        int k = big_endian ? i : n - 1 - i;
        u = (u << 8) | src[k];
    }
    return u;
}

PBF_API pbf_status pbf_write_file_atomic(const char *path, const void *data, size_t size, char *err,
                                         size_t err_size) {
    if (path == NULL || (data == NULL && size > 0)) {
        set_error(err, err_size, "pbf_write_file_atomic: path and data must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    pbf__atomic_write(&af, data, size);
    return pbf__atomic_commit(&af, err, err_size);
}

/* ------------------------------------------------------------------------------------------ */
/* Particles */

static pbf_status particles_alloc(pbf_particles *p, int count) {
    memset(p, 0, sizeof *p);
    /* At least one element, so that malloc(0) returning NULL is not mistaken for a failure. */
    size_t n = count > 0 ? (size_t)count : 1;
    p->positions = calloc(3 * n, sizeof(float));
    p->velocities = calloc(3 * n, sizeof(float));
    p->densities = calloc(n, sizeof(float));
    p->ids = calloc(n, sizeof(int32_t));
    if (!p->positions || !p->velocities || !p->densities || !p->ids) {
        pbf_particles_free(p);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    p->count = count;
    return PBF_OK;
}

PBF_API void pbf_particles_free(pbf_particles *p) {
    if (p == NULL) return;
    free(p->positions);
    free(p->velocities);
    free(p->densities);
    free(p->ids);
    free(p->phases);
    memset(p, 0, sizeof *p);
}

PBF_API pbf_status pbf_particles_from_world(const pbf_world *world, pbf_particles *out, char *err,
                                            size_t err_size) {
    if (world == NULL || out == NULL) {
        set_error(err, err_size, "pbf_particles_from_world: world and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    int count = pbf_world_particle_count(world);
    if (particles_alloc(out, count) != PBF_OK) {
        set_error(err, err_size, "out of memory reading back %d particles", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_world_get_positions(world, out->positions);
    pbf_world_get_velocities(world, out->velocities);
    pbf_world_get_densities(world, out->densities);
    /* In increasing id order; ids have gaps once a sink removed particles. */
    pbf_world_get_ids(world, out->ids);
    if (pbf_world_get_def(world)->phase_count > 0) { /* several fluids: each particle's phase */
        size_t n = count > 0 ? (size_t)count : 1;
        uint8_t *ph = malloc(n);
        out->phases = calloc(n, sizeof(int32_t));
        if (ph == NULL || out->phases == NULL) {
            free(ph);
            pbf_particles_free(out);
            set_error(err, err_size, "out of memory reading back %d particles", count);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        pbf_world_get_phases(world, ph);
        for (int i = 0; i < count; ++i) out->phases[i] = ph[i];
        free(ph);
    }
    return PBF_OK;
}

PBF_API const char *pbf_format_extension(pbf_format format) {
    switch (format) {
    case PBF_FORMAT_PLY: return "ply";
    case PBF_FORMAT_VTK: return "vtk";
    case PBF_FORMAT_VTU: return "vtu";
    default: return "";
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Writers */

PBF_API size_t pbf_export_ply_header(int64_t count, int phases, char *buf, size_t size) {
    int n = snprintf(buf, size,
                     "ply\n"
                     "format binary_little_endian 1.0\n"
                     "comment written by pbf %s (Position Based Fluids)\n"
                     "element vertex %lld\n"
                     "property float x\nproperty float y\nproperty float z\n"
                     "property float vx\nproperty float vy\nproperty float vz\n"
                     "property float density\n"
                     "property int id\n"
                     "%s"
                     "end_header\n",
                     PBF_VERSION_STRING, (long long)count, phases ? "property int phase\n" : "");
    return n > 0 ? (size_t)n : 0;
}

PBF_API void pbf_export_ply_vertices(const pbf_particles *p, int first, int n, unsigned char *dst) {
    const size_t stride = PBF_PLY_VERTEX_BYTES + (p->phases ? 4u : 0u);
    for (int i = first; i < first + n; ++i, dst += stride) {
        for (int k = 0; k < 3; ++k) {
            put_u32_le(dst + 4 * k, float_bits(p->positions[3 * i + k]));
            put_u32_le(dst + 12 + 4 * k, float_bits(p->velocities[3 * i + k]));
        }
        put_u32_le(dst + 24, float_bits(p->densities[i]));
        put_u32_le(dst + 28, (uint32_t)p->ids[i]);
        if (p->phases) put_u32_le(dst + 32, (uint32_t)p->phases[i]);
    }
}

static void write_ply(atomic_file *af, const pbf_particles *p) {
    char header[512];
    size_t n = pbf_export_ply_header(p->count, p->phases != NULL, header, sizeof header);
    pbf__atomic_write(af, header, n < sizeof header ? n : sizeof header - 1);
    const size_t stride = PBF_PLY_VERTEX_BYTES + (p->phases ? 4u : 0u);
    unsigned char buf[CHUNK_PARTICLES * (PBF_PLY_VERTEX_BYTES + 4)];
    for (int start = 0; start < p->count; start += CHUNK_PARTICLES) {
        int k = p->count - start < CHUNK_PARTICLES ? p->count - start : CHUNK_PARTICLES;
        pbf_export_ply_vertices(p, start, k, buf);
        pbf__atomic_write(af, buf, (size_t)k * stride);
    }
}

/* Writes n groups of `width` big-endian 32-bit values taken from src (floats or ints),
 * followed by the newline that ends a legacy VTK binary block. */
static void write_be_block(atomic_file *af, const void *src, int n, int width) {
    unsigned char buf[CHUNK_PARTICLES * 12];
    const unsigned char *bytes = src;
    size_t total = (size_t)n * (size_t)width;
    size_t per_chunk = sizeof buf / 4;
    for (size_t start = 0; start < total; start += per_chunk) {
        size_t end = total - start < per_chunk ? total : start + per_chunk;
        for (size_t i = start; i < end; ++i) {
            uint32_t u;
            memcpy(&u, bytes + 4 * i, 4); /* floats and int32 alike: the bit pattern */
            put_u32_be(buf + 4 * (i - start), u);
        }
        pbf__atomic_write(af, buf, 4 * (end - start));
    }
    pbf__atomic_write(af, "\n", 1);
}

static void write_vtk(atomic_file *af, const pbf_particles *p) {
    int n = p->count;
    pbf__atomic_printf(af,
                       "# vtk DataFile Version 3.0\n" VTK_TITLE_PREFIX "%s particles\n"
                       "BINARY\n"
                       "DATASET POLYDATA\n"
                       "POINTS %d float\n",
                       PBF_VERSION_STRING, n);
    write_be_block(af, p->positions, n, 3);
    /* One vertex cell per particle ("1 i"), so ParaView shows every point without a filter. */
    pbf__atomic_printf(af, "VERTICES %d %lld\n", n, 2LL * n);
    unsigned char buf[CHUNK_PARTICLES * 8];
    for (int start = 0; start < n; start += CHUNK_PARTICLES) {
        int end = n - start < CHUNK_PARTICLES ? n : start + CHUNK_PARTICLES;
        unsigned char *dst = buf;
        for (int i = start; i < end; ++i, dst += 8) {
            put_u32_be(dst, 1u);
            put_u32_be(dst + 4, (uint32_t)i);
        }
        pbf__atomic_write(af, buf, (size_t)(dst - buf));
    }
    pbf__atomic_write(af, "\n", 1);
    pbf__atomic_printf(af, "POINT_DATA %d\nSCALARS density float 1\nLOOKUP_TABLE default\n", n);
    write_be_block(af, p->densities, n, 1);
    pbf__atomic_printf(af, "SCALARS id int 1\nLOOKUP_TABLE default\n");
    write_be_block(af, p->ids, n, 1);
    if (p->phases) {
        pbf__atomic_printf(af, "SCALARS phase int 1\nLOOKUP_TABLE default\n");
        write_be_block(af, p->phases, n, 1);
    }
    pbf__atomic_printf(af, "VECTORS velocity float\n");
    write_be_block(af, p->velocities, n, 3);
}

PBF_API pbf_status pbf_export_write(const pbf_particles *p, pbf_format format, const char *path,
                                    char *err, size_t err_size) {
    if (p == NULL || path == NULL || p->count < 0 ||
        (p->count > 0 && (!p->positions || !p->velocities || !p->densities || !p->ids))) {
        set_error(err, err_size, "pbf_export_write: invalid particles or path");
        return PBF_ERR_INVALID_ARG;
    }
    if (format != PBF_FORMAT_PLY && format != PBF_FORMAT_VTK && format != PBF_FORMAT_VTU) {
        set_error(err, err_size,
                  "pbf_export_write: format must be exactly one of PLY, VTK or VTU (got %d)",
                  (int)format);
        return PBF_ERR_INVALID_ARG;
    }
    atomic_file af;
    pbf_status status = pbf__atomic_open(&af, path, err, err_size);
    if (status != PBF_OK) return status;
    if (format == PBF_FORMAT_PLY)
        write_ply(&af, p);
    else if (format == PBF_FORMAT_VTK)
        write_vtk(&af, p);
    else
        pbf__write_vtu(&af, p);
    return pbf__atomic_commit(&af, err, err_size);
}

/* ------------------------------------------------------------------------------------------ */
/* Reading: the whole file goes into memory, then a bounds-checked cursor walks it. */

typedef struct cursor {
    const unsigned char *data;
    size_t size;
    size_t pos;
} cursor;

static pbf_status read_whole_file(const char *path, unsigned char **data, size_t *size, char *err,
                                  size_t err_size) {
    *data = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        set_error(err, err_size, "cannot open '%s': %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    pbf_status status = PBF_OK;
    while (buf != NULL) {
        if (len == cap) {
            unsigned char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (bigger == NULL) break;
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) break;
    }
    if (buf == NULL || (len == cap && !feof(fp))) {
        set_error(err, err_size, "'%s': out of memory reading the file", path);
        status = PBF_ERR_OUT_OF_MEMORY;
    } else if (ferror(fp)) {
        set_error(err, err_size, "cannot read '%s': %s", path, strerror(errno));
        status = PBF_ERR_IO;
    }
    fclose(fp);
    if (status != PBF_OK) {
        free(buf);
        return status;
    }
    *data = buf;
    *size = len;
    return PBF_OK;
}

/* Copies the next line (without "\n" or "\r\n") into line; returns 0 at the end of the data or
 * when the line is longer than the buffer (a binary file is not a header). */
static int next_line(cursor *c, char *line, size_t line_size) {
    if (c->pos >= c->size) return 0;
    size_t start = c->pos;
    const unsigned char *nl = memchr(c->data + start, '\n', c->size - start);
    size_t end = nl ? (size_t)(nl - c->data) : c->size;
    size_t len = end - start;
    if (len > 0 && c->data[start + len - 1] == '\r') --len;
    if (len >= line_size) return 0;
    memcpy(line, c->data + start, len);
    line[len] = '\0';
    c->pos = nl ? end + 1 : end;
    return 1;
}

/* Scalar types the readers understand. */
typedef enum value_type { T_NONE, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 } value_type;

static int type_size(value_type t) {
    switch (t) {
    case T_I8:
    case T_U8: return 1;
    case T_I16:
    case T_U16: return 2;
    case T_I32:
    case T_U32:
    case T_F32: return 4;
    case T_F64: return 8;
    default: return 0;
    }
}

static double get_value(const unsigned char *src, value_type t, int big_endian) {
    uint64_t u = get_uint(src, type_size(t), big_endian);
    switch (t) {
    case T_I8: return (double)(int8_t)(uint8_t)u;
    case T_U8: return (double)(uint8_t)u;
    case T_I16: return (double)(int16_t)(uint16_t)u;
    case T_U16: return (double)(uint16_t)u;
    case T_I32: return (double)(int32_t)(uint32_t)u;
    case T_U32: return (double)(uint32_t)u;
    case T_F32: {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, sizeof f);
        return f;
    }
    case T_F64: {
        double d;
        memcpy(&d, &u, sizeof d);
        return d;
    }
    default: return 0.0;
    }
}

/* Floats are copied bit for bit (NaN payloads included); other types are converted. */
static float get_float(const unsigned char *src, value_type t, int big_endian) {
    if (t == T_F32) {
        uint32_t b = (uint32_t)get_uint(src, 4, big_endian);
        float f;
        memcpy(&f, &b, sizeof f);
        return f;
    }
    return (float)get_value(src, t, big_endian);
}

static int32_t get_int32(const unsigned char *src, value_type t, int big_endian) {
    if (t == T_I32 || t == T_U32) return (int32_t)(uint32_t)get_uint(src, 4, big_endian);
    double v = get_value(src, t, big_endian);
    if (!(v >= (double)INT32_MIN && v <= (double)INT32_MAX)) return -1;
    return (int32_t)v;
}

/* Parses a non-negative element count that fits an int. */
static int parse_count(const char *s, int *out) {
    if (s == NULL) return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* Splits line into at most max whitespace-separated tokens (in place). */
static int tokenize(char *line, char **tok, int max) {
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t", &save); t != NULL && n < max;
         t = strtok_r(NULL, " \t", &save))
        tok[n++] = t;
    return n;
}

/* ---- PLY ---------------------------------------------------------------------------------- */

static value_type ply_type(const char *s) {
    static const struct {
        const char *name;
        value_type t;
    } names[] = {{"char", T_I8},   {"int8", T_I8},     {"uchar", T_U8},   {"uint8", T_U8},
                 {"short", T_I16}, {"int16", T_I16},   {"ushort", T_U16}, {"uint16", T_U16},
                 {"int", T_I32},   {"int32", T_I32},   {"uint", T_U32},   {"uint32", T_U32},
                 {"float", T_F32}, {"float32", T_F32}, {"double", T_F64}, {"float64", T_F64}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(s, names[i].name) == 0) return names[i].t;
    return T_NONE;
}

/* The columns we look for in the vertex element, in pbf_particles order. */
enum { C_X, C_Y, C_Z, C_VX, C_VY, C_VZ, C_DENSITY, C_ID, C_PHASE, C_COUNT };
static const char *const ply_columns[C_COUNT] = {"x",  "y",       "z",  "vx",   "vy",
                                                 "vz", "density", "id", "phase"};

typedef struct ply_layout {
    int seen_vertex; /* the vertex element has been declared */
    int in_vertex; /* properties being declared belong to it */
    int count; /* vertices */
    size_t stride; /* bytes per vertex */
    size_t skip_before; /* bytes of fixed-size elements before the vertex element */
    size_t other_stride; /* stride of the element being declared (not vertex) */
    int other_count;
    int other_has_list; /* a list property makes an element's size unknown */
    long offset[C_COUNT]; /* byte offset of each column, -1 if absent */
    value_type type[C_COUNT];
} ply_layout;

/* Closes the declaration of a non-vertex element that precedes the vertex element: its data
 * must be skipped, which needs a fixed size. */
static pbf_status ply_end_other(ply_layout *L, const char *path, char *err, size_t err_size) {
    if (L->seen_vertex || L->other_count == 0) return PBF_OK;
    if (L->other_has_list) {
        set_error(err, err_size,
                  "'%s': unsupported PLY layout: an element with list properties comes before "
                  "'vertex'",
                  path);
        return PBF_ERR_UNSUPPORTED;
    }
    if (L->other_stride != 0 &&
        (size_t)L->other_count > (SIZE_MAX - L->skip_before) / L->other_stride) {
        set_error(err, err_size, "'%s': PLY element too large", path);
        return PBF_ERR_PARSE;
    }
    L->skip_before += L->other_stride * (size_t)L->other_count;
    return PBF_OK;
}

static pbf_status ply_parse_header(cursor *c, const char *path, ply_layout *L, char *err,
                                   size_t err_size) {
    char line[1024];
    memset(L, 0, sizeof *L);
    for (int k = 0; k < C_COUNT; ++k) L->offset[k] = -1;
    if (!next_line(c, line, sizeof line) || strcmp(line, "ply") != 0) {
        set_error(err, err_size, "'%s' is not a PLY file (it does not start with \"ply\")", path);
        return PBF_ERR_PARSE;
    }
    int have_format = 0;
    for (;;) {
        if (!next_line(c, line, sizeof line)) {
            set_error(err, err_size, "'%s': truncated PLY header (no end_header)", path);
            return PBF_ERR_PARSE;
        }
        char *tok[8];
        int n = tokenize(line, tok, 8);
        if (n == 0 || strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0) continue;
        if (strcmp(tok[0], "end_header") == 0) break;
        if (strcmp(tok[0], "format") == 0) {
            if (n < 2 || strcmp(tok[1], "binary_little_endian") != 0) {
                set_error(err, err_size,
                          "'%s': unsupported PLY format '%s' (only binary_little_endian is read)",
                          path, n >= 2 ? tok[1] : "");
                return PBF_ERR_UNSUPPORTED;
            }
            have_format = 1;
        } else if (strcmp(tok[0], "element") == 0) {
            pbf_status s = ply_end_other(L, path, err, err_size);
            if (s != PBF_OK) return s;
            int count = 0;
            if (n < 3 || !parse_count(tok[2], &count)) {
                set_error(err, err_size, "'%s': bad PLY element line", path);
                return PBF_ERR_PARSE;
            }
            L->in_vertex = 0;
            L->other_count = 0;
            L->other_stride = 0;
            L->other_has_list = 0;
            if (strcmp(tok[1], "vertex") == 0 && !L->seen_vertex) {
                L->seen_vertex = 1;
                L->in_vertex = 1;
                L->count = count;
            } else {
                L->other_count = count;
            }
        } else if (strcmp(tok[0], "property") == 0) {
            if (n >= 2 && strcmp(tok[1], "list") == 0) {
                if (L->in_vertex) {
                    set_error(err, err_size,
                              "'%s': unsupported PLY layout: list property in 'vertex'", path);
                    return PBF_ERR_UNSUPPORTED;
                }
                L->other_has_list = 1;
                continue;
            }
            value_type t = n >= 3 ? ply_type(tok[1]) : T_NONE;
            if (t == T_NONE) {
                set_error(err, err_size, "'%s': bad PLY property line (type '%s')", path,
                          n >= 2 ? tok[1] : "");
                return PBF_ERR_PARSE;
            }
            if (L->in_vertex) {
                for (int k = 0; k < C_COUNT; ++k)
                    if (strcmp(tok[2], ply_columns[k]) == 0 && L->offset[k] < 0) {
                        L->offset[k] = (long)L->stride;
                        L->type[k] = t;
                    }
                L->stride += (size_t)type_size(t);
            } else {
                L->other_stride += (size_t)type_size(t);
            }
        } else {
            set_error(err, err_size, "'%s': unexpected PLY header line '%s'", path, tok[0]);
            return PBF_ERR_PARSE;
        }
    }
    if (!have_format) {
        set_error(err, err_size, "'%s': PLY header has no format line", path);
        return PBF_ERR_PARSE;
    }
    if (!L->seen_vertex || L->offset[C_X] < 0 || L->offset[C_Y] < 0 || L->offset[C_Z] < 0) {
        set_error(err, err_size, "'%s': PLY file has no vertex element with x, y, z", path);
        return PBF_ERR_PARSE;
    }
    return PBF_OK;
}

static pbf_status read_ply(cursor *c, const char *path, pbf_particles *out, char *err,
                           size_t err_size) {
    ply_layout L;
    pbf_status s = ply_parse_header(c, path, &L, err, err_size);
    if (s != PBF_OK) return s;
    size_t avail = c->size - c->pos;
    if (L.skip_before > avail ||
        (L.stride != 0 && (size_t)L.count > (avail - L.skip_before) / L.stride)) {
        set_error(err, err_size,
                  "'%s': truncated: %d vertices need %zu bytes of data, the file has %zu", path,
                  L.count, L.skip_before + (size_t)L.count * L.stride, avail);
        return PBF_ERR_PARSE;
    }
    if (particles_alloc(out, L.count) != PBF_OK) {
        set_error(err, err_size, "'%s': out of memory for %d particles", path, L.count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    const unsigned char *base = c->data + c->pos + L.skip_before;
    if (L.offset[C_PHASE] >= 0 &&
        (out->phases = calloc(L.count > 0 ? (size_t)L.count : 1, sizeof(int32_t))) == NULL) {
        pbf_particles_free(out);
        set_error(err, err_size, "'%s': out of memory for %d particles", path, L.count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < L.count; ++i) {
        const unsigned char *v = base + (size_t)i * L.stride;
        for (int k = 0; k < 3; ++k) {
            out->positions[3 * i + k] = get_float(v + L.offset[C_X + k], L.type[C_X + k], 0);
            if (L.offset[C_VX + k] >= 0)
                out->velocities[3 * i + k] = get_float(v + L.offset[C_VX + k], L.type[C_VX + k], 0);
        }
        if (L.offset[C_DENSITY] >= 0)
            out->densities[i] = get_float(v + L.offset[C_DENSITY], L.type[C_DENSITY], 0);
        out->ids[i] = L.offset[C_ID] >= 0 ? get_int32(v + L.offset[C_ID], L.type[C_ID], 0) : i;
        if (out->phases) out->phases[i] = get_int32(v + L.offset[C_PHASE], L.type[C_PHASE], 0);
    }
    return PBF_OK;
}

/* ---- legacy VTK --------------------------------------------------------------------------- */

static value_type vtk_type(const char *s) {
    static const struct {
        const char *name;
        value_type t;
    } names[] = {
        {"char", T_I8},   {"unsigned_char", T_U8}, {"short", T_I16},     {"unsigned_short", T_U16},
        {"int", T_I32},   {"unsigned_int", T_U32}, {"vtkIdType", T_I32}, {"float", T_F32},
        {"double", T_F64}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (strcmp(s, names[i].name) == 0) return names[i].t;
    return T_NONE;
}

/* Claims `bytes` of binary data at the cursor; NULL (with a message) when the file is short. */
static const unsigned char *vtk_take(cursor *c, size_t count, size_t width, const char *path,
                                     const char *what, char *err, size_t err_size) {
    size_t avail = c->size - c->pos;
    if (width != 0 && count > avail / width) {
        set_error(err, err_size, "'%s': truncated in %s: need %zu bytes, the file has %zu", path,
                  what, count * width, avail);
        return NULL;
    }
    const unsigned char *p = c->data + c->pos;
    c->pos += count * width;
    return p;
}

/* Next non-empty line, tokenized. Returns the token count, 0 at the end of the file. */
static int vtk_next(cursor *c, char *line, size_t line_size, char **tok, int max) {
    while (c->pos < c->size) {
        if (!next_line(c, line, line_size)) return -1;
        int n = tokenize(line, tok, max);
        if (n > 0) return n;
    }
    return 0;
}

enum { VTK_DENSITY = 1, VTK_ID = 2, VTK_VELOCITY = 4 };

/* Stores one named per-point array if it is one we know; returns which one (0 if none). */
static int vtk_store(pbf_particles *out, const char *name, const unsigned char *data, value_type t,
                     int comps) {
    int size = type_size(t);
    if (strcmp(name, "density") == 0 && comps == 1) {
        for (int i = 0; i < out->count; ++i)
            out->densities[i] = get_float(data + (size_t)i * size, t, 1);
        return VTK_DENSITY;
    }
    if (strcmp(name, "id") == 0 && comps == 1) {
        for (int i = 0; i < out->count; ++i) out->ids[i] = get_int32(data + (size_t)i * size, t, 1);
        return VTK_ID;
    }
    if (strcmp(name, "phase") == 0 && comps == 1 && out->phases == NULL) {
        out->phases = calloc(out->count > 0 ? (size_t)out->count : 1, sizeof(int32_t));
        if (out->phases == NULL) return 0; /* read without its phases */
        for (int i = 0; i < out->count; ++i)
            out->phases[i] = get_int32(data + (size_t)i * size, t, 1);
        return 0;
    }
    if (strcmp(name, "velocity") == 0 && comps == 3) {
        for (int i = 0; i < 3 * out->count; ++i)
            out->velocities[i] = get_float(data + (size_t)i * size, t, 1);
        return VTK_VELOCITY;
    }
    return 0;
}

static pbf_status read_vtk(cursor *c, const char *path, pbf_particles *out, char *err,
                           size_t err_size) {
    char line[1024];
    char *tok[8];
    if (!next_line(c, line, sizeof line) || strncmp(line, "# vtk DataFile Version", 22) != 0) {
        set_error(err, err_size, "'%s' is not a legacy VTK file", path);
        return PBF_ERR_PARSE;
    }
    if (atoi(line + 22) >= 5) {
        /* 5.x stores cells as OFFSETS/CONNECTIVITY arrays; we read the 3.0 layout we write. */
        set_error(err, err_size, "'%s': unsupported VTK file version '%s' (3.0 and 4.x are read)",
                  path, line + 23);
        return PBF_ERR_UNSUPPORTED;
    }
    if (!next_line(c, line, sizeof line)) {
        set_error(err, err_size, "'%s': truncated VTK header", path);
        return PBF_ERR_PARSE;
    }
    int ours = strncmp(line, VTK_TITLE_PREFIX, strlen(VTK_TITLE_PREFIX)) == 0;
    if (!next_line(c, line, sizeof line)) {
        set_error(err, err_size, "'%s': truncated VTK header", path);
        return PBF_ERR_PARSE;
    }
    int n = tokenize(line, tok, 8);
    if (n != 1 || strcmp(tok[0], "BINARY") != 0) {
        set_error(err, err_size, "'%s': unsupported VTK encoding '%s' (only BINARY is read)", path,
                  n > 0 ? tok[0] : "");
        return PBF_ERR_UNSUPPORTED;
    }
    n = vtk_next(c, line, sizeof line, tok, 8);
    if (n <= 0) {
        set_error(err, err_size, "'%s': truncated VTK header (no DATASET line)", path);
        return PBF_ERR_PARSE;
    }
    if (n < 2 || strcmp(tok[0], "DATASET") != 0 || strcmp(tok[1], "POLYDATA") != 0) {
        set_error(err, err_size, "'%s': unsupported VTK dataset (only DATASET POLYDATA is read)",
                  path);
        return PBF_ERR_UNSUPPORTED;
    }
    int have_points = 0;
    int attribute_count = -1; /* tuples per array in the current POINT_DATA / CELL_DATA */
    int point_data = 0; /* the current attribute section is POINT_DATA */
    int found = 0; /* VTK_DENSITY | VTK_ID | VTK_VELOCITY seen */
    for (;;) {
        n = vtk_next(c, line, sizeof line, tok, 8);
        if (n == 0) break;
        if (n < 0) {
            set_error(err, err_size,
                      "'%s': malformed VTK file (binary data where a keyword was expected)", path);
            return PBF_ERR_PARSE;
        }
        const char *key = tok[0];
        if (strcmp(key, "POINTS") == 0) {
            int count = 0;
            value_type t = n >= 3 ? vtk_type(tok[2]) : T_NONE;
            if (have_points || n < 3 || !parse_count(tok[1], &count) ||
                (t != T_F32 && t != T_F64)) {
                set_error(err, err_size, "'%s': bad POINTS line (float or double points expected)",
                          path);
                return PBF_ERR_PARSE;
            }
            const unsigned char *data =
                vtk_take(c, 3 * (size_t)count, (size_t)type_size(t), path, "POINTS", err, err_size);
            if (data == NULL) return PBF_ERR_PARSE;
            if (particles_alloc(out, count) != PBF_OK) {
                set_error(err, err_size, "'%s': out of memory for %d particles", path, count);
                return PBF_ERR_OUT_OF_MEMORY;
            }
            for (int i = 0; i < 3 * count; ++i)
                out->positions[i] = get_float(data + (size_t)i * type_size(t), t, 1);
            for (int i = 0; i < count; ++i) out->ids[i] = i;
            have_points = 1;
        } else if (strcmp(key, "VERTICES") == 0 || strcmp(key, "LINES") == 0 ||
                   strcmp(key, "POLYGONS") == 0 || strcmp(key, "TRIANGLE_STRIPS") == 0) {
            int cells = 0, size = 0;
            if (n < 3 || !parse_count(tok[1], &cells) || !parse_count(tok[2], &size)) {
                set_error(err, err_size, "'%s': bad %s line", path, key);
                return PBF_ERR_PARSE;
            }
            if (vtk_take(c, (size_t)size, 4, path, key, err, err_size) == NULL)
                return PBF_ERR_PARSE;
        } else if (strcmp(key, "POINT_DATA") == 0 || strcmp(key, "CELL_DATA") == 0) {
            if (n < 2 || !parse_count(tok[1], &attribute_count)) {
                set_error(err, err_size, "'%s': bad %s line", path, key);
                return PBF_ERR_PARSE;
            }
            point_data = strcmp(key, "POINT_DATA") == 0;
            if (point_data && (!have_points || attribute_count != out->count)) {
                set_error(err, err_size, "'%s': POINT_DATA %d does not match POINTS %d", path,
                          attribute_count, out->count);
                return PBF_ERR_PARSE;
            }
        } else if (strcmp(key, "SCALARS") == 0 || strcmp(key, "VECTORS") == 0 ||
                   strcmp(key, "NORMALS") == 0) {
            int scalars = strcmp(key, "SCALARS") == 0;
            value_type t = n >= 3 ? vtk_type(tok[2]) : T_NONE;
            int comps = scalars ? (n >= 4 ? atoi(tok[3]) : 1) : 3;
            if (attribute_count < 0 || t == T_NONE || comps < 1 || comps > 4) {
                set_error(err, err_size, "'%s': bad or unsupported %s line", path, key);
                return PBF_ERR_PARSE;
            }
            char name[256];
            snprintf(name, sizeof name, "%s", tok[1]);
            if (scalars) { /* LOOKUP_TABLE line follows SCALARS */
                n = vtk_next(c, line, sizeof line, tok, 8);
                if (n < 1 || strcmp(tok[0], "LOOKUP_TABLE") != 0) {
                    set_error(err, err_size, "'%s': SCALARS %s without LOOKUP_TABLE", path, name);
                    return PBF_ERR_PARSE;
                }
            }
            const unsigned char *data = vtk_take(c, (size_t)attribute_count * (size_t)comps,
                                                 (size_t)type_size(t), path, name, err, err_size);
            if (data == NULL) return PBF_ERR_PARSE;
            if (point_data) found |= vtk_store(out, name, data, t, comps);
        } else if (strcmp(key, "FIELD") == 0) {
            int arrays = 0;
            if (n < 3 || !parse_count(tok[2], &arrays)) {
                set_error(err, err_size, "'%s': bad FIELD line", path);
                return PBF_ERR_PARSE;
            }
            for (int a = 0; a < arrays; ++a) {
                int comps = 0, tuples = 0;
                n = vtk_next(c, line, sizeof line, tok, 8);
                value_type t = n >= 4 ? vtk_type(tok[3]) : T_NONE;
                if (n < 4 || !parse_count(tok[1], &comps) || !parse_count(tok[2], &tuples) ||
                    t == T_NONE) {
                    set_error(err, err_size, "'%s': bad or unsupported FIELD array line", path);
                    return PBF_ERR_PARSE;
                }
                char name[256];
                snprintf(name, sizeof name, "%s", tok[0]);
                const unsigned char *data =
                    vtk_take(c, (size_t)comps * (size_t)tuples, (size_t)type_size(t), path, name,
                             err, err_size);
                if (data == NULL) return PBF_ERR_PARSE;
                if (point_data && tuples == out->count)
                    found |= vtk_store(out, name, data, t, comps);
            }
        } else {
            set_error(err, err_size, "'%s': unsupported VTK section '%s'", path, key);
            return PBF_ERR_UNSUPPORTED;
        }
    }
    if (!have_points) {
        set_error(err, err_size, "'%s': VTK file has no POINTS", path);
        return PBF_ERR_PARSE;
    }
    if (ours && found != (VTK_DENSITY | VTK_ID | VTK_VELOCITY)) {
        set_error(err, err_size, "'%s': truncated: missing point data:%s%s%s", path,
                  found & VTK_DENSITY ? "" : " density", found & VTK_ID ? "" : " id",
                  found & VTK_VELOCITY ? "" : " velocity");
        return PBF_ERR_PARSE;
    }
    return PBF_OK;
}

/* ------------------------------------------------------------------------------------------ */

static int has_extension(const char *path, const char *ext) {
    size_t n = strlen(path), e = strlen(ext);
    if (n < e + 1 || path[n - e - 1] != '.') return 0;
    for (size_t i = 0; i < e; ++i) {
        char a = path[n - e + i];
        if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
        if (a != ext[i]) return 0;
    }
    return 1;
}

PBF_API pbf_status pbf_export_read(const char *path, pbf_particles *out, char *err,
                                   size_t err_size) {
    if (out == NULL || path == NULL) {
        set_error(err, err_size, "pbf_export_read: path and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof *out);
    int ply = has_extension(path, "ply"), vtk = has_extension(path, "vtk");
    if (!ply && !vtk) {
        set_error(err, err_size, "'%s': unknown particle file type (expected .ply or .vtk)", path);
        return PBF_ERR_INVALID_ARG;
    }
    unsigned char *data = NULL;
    size_t size = 0;
    pbf_status s = read_whole_file(path, &data, &size, err, err_size);
    if (s != PBF_OK) return s;
    cursor c = {data, size, 0};
    s = ply ? read_ply(&c, path, out, err, err_size) : read_vtk(&c, path, out, err, err_size);
    free(data);
    if (s != PBF_OK) pbf_particles_free(out);
    return s;
}
