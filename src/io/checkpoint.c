/* Checkpoints (the format is described in include/pbf/checkpoint.h and
 * docs/robustness.md).
 *
 * The whole file is built in memory (about 36 bytes per particle, a fraction of what the world
 * itself takes) and written with pbf_write_file_atomic, so it is either complete or absent.
 * Reading verifies everything before anything is created: the magic, the header checksum, the
 * version, each section's CRC-32 (zlib) and size, and the end of the file; then the state is
 * validated (finite values, ids a permutation) and, after the restore, its hash is compared
 * with the one saved. Bytes are packed one by one in little-endian order, so files move between
 * machines. Library code: never prints, never exits. */
#include "pbf/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cuda/world_cuda.h" /* a CUDA world's host arrays are a cache: pulled before reading */
#include "pbf/export.h"
#include "pbf/geometry.h"
#include "geometry/meshes.h" /* a floating body's carried state */
#include "resources.h"
#include "tool.h"
#include "emitter.h" /* the FLOW section: emitters, sinks, capacity, counters */
#include "diffuse.h" /* the DIFFUSE section: spray, foam and bubbles */
#include "cuda/world_cuda.h" /* cuda: a CUDA world's state is read back first */
#include "world_state.h"
#include "def_fields.h" /* the WORLDDEF section */
#include "checkpoint_pieces.h" /* merging a split world's pieces */

#define MAGIC "PBFCKPT\n"
#define HEADER_SIZE 32u
#define SECTION_HEADER_SIZE 24u
#define MAX_PARTICLES (INT32_MAX / 4) /* pbf_world_add_block's limit */

/* The sections. Version 2 added solver.scorr_deficit and solver.scorr_iterations to WORLDDEF; a
 * version-1 file is read with both 0, the s_corr it was run with, so an old run resumes as it
 * would have gone on. Version 3 added the materials (material.surface_tension, wall_adhesion,
 * wall_friction) to WORLDDEF and adhesion and friction to each COLLIDER; an older file reads
 * with them 0 (off), as it was run. Version 4 added material.viscosity, viscosity_iterations,
 * viscosity_tolerance and surface_drag to WORLDDEF; an older file reads with the viscosity and
 * the drag off. Version 5 added several fluids: the phases to WORLDDEF (phase_count, then
 * density, xsph and gravity scale of all PBF_MAX_PHASES), each particle's phase (one byte, after
 * the ids) to PARTICLE and each emitter's phase (after stop) to FLOW; an older file reads as one
 * fluid, every phase 0. Version 6 added wall_no_slip (after the phases) to WORLDDEF; an older
 * file reads with the walls slipping. Version 7 added solver.scorr_ratio (after wall_no_slip)
 * to WORLDDEF; an older file reads with it 0, the fixed k it was run with. Version 8 added
 * wall_clearance and kernel (after scorr_ratio) to WORLDDEF; an older file reads with them 1 and
 * PBF_KERNEL_PAPER, the walls' distance and the pair it was run with. Version 9 added
 * solver.impulse_blend (after kernel) to WORLDDEF and each particle's last constraint
 * displacement d_prev (after the phase) to PARTICLE; an older file reads with them 0, plain PBF
 * as it was run. Version 10 added solver.step_weights (after impulse_blend) to WORLDDEF; an
 * older file reads with plain passes, as it was run. */
#define TAG_DEF "WORLDDEF"
#define TAG_STATE "STATE"
#define TAG_COLLIDER "COLLIDER"
#define TAG_PARTICLE "PARTICLE"
#define TAG_TOOL "TOOL"
#define TAG_MESHES "MESHES"
#define TAG_APP "APPDATA"
/* A piece of a world split over MPI ranks (include/pbf/mpi.h): the whole world's next id, so
 * that the piece's ids are checked against it (they are not 0..count-1). */
#define TAG_PIECE "PIECE"
/* Emitters and sinks (include/pbf/flow.h): written only by a world that has them, required
 * (a reader that does not know it would resume without the inflow), so no version bump. */
#define TAG_FLOW "FLOW"
/* Diffuse particles (include/pbf/diffuse.h): written only by a world that has them on, required
 * (a reader that does not know it would resume without them), so no version bump. */
#define TAG_DIFFUSE "DIFFUSE"

/* WORLDDEF is the rows of def_fields.h in order, each in a file from the version that added it
 * (def_bytes, below, counts a version's). Every member of pbf_world_def is a row, stored as its
 * kind says. */
#define DEF_ROW_SIZE(kind, member, since, old, dflt, range, expected) +PBF_DEF_BYTES_##kind
#define DEF_BYTES (0 PBF_DEF_FIELDS(DEF_ROW_SIZE)) /* the newest version's */
_Static_assert(DEF_BYTES == sizeof(pbf_world_def),
               "pbf_world_def changed: its members are the rows of src/core/def_fields.h (a new "
               "one with PBF_CHECKPOINT_VERSION raised)");
#define DEF_MEMBER(member) (((pbf_world_def *)0)->member) /* in sizeof and _Generic only */
#define DEF_KIND_OK_F32(m) _Generic((m), float : 1, default : 0)
#define DEF_KIND_OK_I32(m) (sizeof(m) == 4 && _Generic((m), float : 0, default : 1))
#define DEF_KIND_OK_VEC3(m) _Generic((m), pbf_vec3 : 1, default : 0)
#define DEF_KIND_OK_WALLS(m)                                                                       \
    (sizeof(m) == PBF_WALL_COUNT * sizeof(pbf_wall_motion) &&                                      \
     _Generic(&(m)[0], pbf_wall_motion * : 1, default : 0))
#define DEF_KIND_OK_PHASES(m)                                                                      \
    (sizeof(m) == PBF_MAX_PHASES * sizeof(pbf_phase_def) &&                                        \
     _Generic(&(m)[0], pbf_phase_def * : 1, default : 0))
/* Whether get_def reads the kind as `old` from a file older than the row (VEC3 and WALLS rows
 * are all of version 1). */
#define DEF_VERSIONED_F32 1
#define DEF_VERSIONED_I32 1
#define DEF_VERSIONED_VEC3 0
#define DEF_VERSIONED_WALLS 0
#define DEF_VERSIONED_PHASES 1
#define DEF_ROW_CHECK(kind, member, since, old, dflt, range, expected)                             \
    _Static_assert(DEF_KIND_OK_##kind(DEF_MEMBER(member)),                                         \
                   "def_fields.h: " #member " is not of kind " #kind);                             \
    _Static_assert((since) >= 1 && (since) <= PBF_CHECKPOINT_VERSION &&                            \
                       (DEF_VERSIONED_##kind || (since) == 1),                                     \
                   "def_fields.h: " #member "'s version is not one get_def can read");
PBF_DEF_FIELDS(DEF_ROW_CHECK)
#undef DEF_ROW_CHECK

/* Payload sizes of the fixed sections. A new field in these structs must be added to the
 * section (with a version bump): the asserts make sure nobody forgets. */
#define STATE_BYTES 40u
#define COLLIDER_BYTES 64u
#define COLLIDER_BYTES_V2 56u
_Static_assert(sizeof(pbf_collider_def) == COLLIDER_BYTES,
               "pbf_collider_def changed: update put_collider/get_collider in checkpoint.c");
#define EMITTER_BYTES 64u /* the def's 56 bytes and the carried travel (f64) */
#define EMITTER_BYTES_V4 60u /* versions 1 to 4: without the phase */
#define SINK_BYTES 24u
#define FLOW_FIXED_BYTES 32u /* capacity, next_id, emitted, removed, the two counts */
_Static_assert(sizeof(pbf_emitter_def) + 8 == EMITTER_BYTES,
               "pbf_emitter_def changed: update put_flow/get_flow in checkpoint.c");
#define DIFFUSE_DEF_BYTES 56u
#define DIFFUSE_FIXED_BYTES (DIFFUSE_DEF_BYTES + 20u) /* the def, substeps, generated, count */
#define DIFFUSE_PARTICLE_BYTES 29u /* x, v, lifetime, kind */
_Static_assert(sizeof(pbf_diffuse_def) == DIFFUSE_DEF_BYTES,
               "pbf_diffuse_def changed: update put_diffuse/get_diffuse in checkpoint.c");
_Static_assert(sizeof(pbf_sink_def) == SINK_BYTES,
               "pbf_sink_def changed: update put_flow/get_flow in checkpoint.c");

/* The PARTICLE section: the count, then a column of count values for every array of fields.h
 * marked PBF_FIELD_CHECKPOINT(v) with v <= the file's version, in fields.h's order, each value
 * little-endian: x (3 f32), v (3 f32), density (f32), ids (i32) since version 1, phase (u8)
 * since version 5. The other arrays restore as 0, p as x (the step's end). */
#define PBF_FIELD_INDEX(name, type, components, flags, scratch) COLUMN_##name,
enum column_index { PBF_PARTICLE_FIELDS(PBF_FIELD_INDEX) COLUMN_COUNT }; /* one per array */
#undef PBF_FIELD_INDEX
typedef struct column {
    size_t size; /* bytes per value */
    size_t components; /* values per particle */
    unsigned since; /* the first version that has it; 0: not saved */
} column;
static const column columns[COLUMN_COUNT] = {
#define PBF_FIELD_COLUMN(name, type, components, flags, scratch)                                   \
    {sizeof(type), (components), PBF_FIELD_CHECKPOINT_SINCE(flags)},
    PBF_PARTICLE_FIELDS(PBF_FIELD_COLUMN)
#undef PBF_FIELD_COLUMN
};
/* A saved array newer than the format would be written into files older readers misread. */
#define PBF_FIELD_VERSION_CHECK(name, type, components, flags, scratch)                            \
    _Static_assert(PBF_FIELD_CHECKPOINT_SINCE(flags) <= PBF_CHECKPOINT_VERSION,                    \
                   "fields.h: " #name " is saved since a version above PBF_CHECKPOINT_VERSION");
PBF_PARTICLE_FIELDS(PBF_FIELD_VERSION_CHECK)
#undef PBF_FIELD_VERSION_CHECK

static int column_in(int k, uint32_t version) {
    return columns[k].since != 0 && columns[k].since <= version;
}

/* Where column k starts in a PARTICLE section of n particles of a file of `version` (after the
 * count); k = COLUMN_COUNT gives the columns' total size. */
static uint64_t column_offset(int k, uint32_t version, uint64_t n) {
    uint64_t at = 0;
    for (int c = 0; c < k; ++c)
        if (column_in(c, version)) at += (uint64_t)columns[c].size * columns[c].components * n;
    return at;
}

/* =============================================================================================
 * Messages */

static void set_error(char *err, size_t err_size, const char *fmt, ...) {
    if (err == NULL || err_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

/* A section tag for messages: printable characters only. */
static void tag_text(const unsigned char *tag, char out[9]) {
    int n = 0;
    for (int i = 0; i < 8 && tag[i] != '\0'; ++i)
        out[n++] = tag[i] >= 32 && tag[i] < 127 ? (char)tag[i] : '?';
    out[n] = '\0';
}

/* =============================================================================================
 * Writing: a growing buffer */

typedef struct out_buf {
    unsigned char *data;
    size_t size, capacity;
    int failed; /* out of memory */
    size_t section_start; /* offset of the open section's header */
} out_buf;

static unsigned char *reserve_bytes(out_buf *b, size_t n) {
    if (b->failed) return NULL;
    if (b->size + n > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 4096;
        while (cap < b->size + n) cap *= 2;
        unsigned char *q = realloc(b->data, cap);
        if (q == NULL) {
            b->failed = 1;
            return NULL;
        }
        b->data = q;
        b->capacity = cap;
    }
    unsigned char *p = b->data + b->size;
    b->size += n;
    return p;
}

static void le32(unsigned char *d, uint32_t u) {
    for (int i = 0; i < 4; ++i) d[i] = (unsigned char)(u >> (8 * i));
}

static void le64(unsigned char *d, uint64_t u) {
    for (int i = 0; i < 8; ++i) d[i] = (unsigned char)(u >> (8 * i));
}

static void put_u32(out_buf *b, uint32_t u) {
    unsigned char *p = reserve_bytes(b, 4);
    if (p) le32(p, u);
}

static void put_i32(out_buf *b, int32_t i) { put_u32(b, (uint32_t)i); }

static void put_u64(out_buf *b, uint64_t u) {
    unsigned char *p = reserve_bytes(b, 8);
    if (p) le64(p, u);
}

static void put_f32(out_buf *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(b, u);
}

static void put_f64(out_buf *b, double f) {
    uint64_t u;
    memcpy(&u, &f, 8);
    put_u64(b, u);
}

static void put_vec3(out_buf *b, pbf_vec3 v) {
    put_f32(b, v.x);
    put_f32(b, v.y);
    put_f32(b, v.z);
}

static void put_floats(out_buf *b, const float *f, size_t n) {
    unsigned char *p = reserve_bytes(b, 4 * n);
    for (size_t i = 0; p != NULL && i < n; ++i) {
        uint32_t u;
        memcpy(&u, &f[i], 4);
        le32(p + 4 * i, u);
    }
}

/* 1 on a little-endian machine: its values are the file's bytes as they are. */
static int little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Copies n values of `size` bytes, reversing each one's bytes on a big-endian machine (the file
 * is little-endian). */
static void copy_le(unsigned char *dst, const unsigned char *src, size_t n, size_t size) {
    if (little_endian() || size == 1) {
        if (n > 0) memcpy(dst, src, n * size);
        return;
    }
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < size; ++k) dst[i * size + k] = src[i * size + size - 1 - k];
}

/* A column of the PARTICLE section: n values of `size` bytes. */
static void put_column(out_buf *b, const void *values, size_t n, size_t size) {
    unsigned char *p = reserve_bytes(b, n * size);
    if (p != NULL) copy_le(p, values, n, size);
}

static void begin_section(out_buf *b, const char *tag, uint32_t flags) {
    b->section_start = b->size;
    unsigned char *p = reserve_bytes(b, SECTION_HEADER_SIZE);
    if (p == NULL) return;
    memset(p, 0, SECTION_HEADER_SIZE);
    memcpy(p, tag, strlen(tag)); /* at most 8 characters, the rest NUL */
    le32(p + 8, flags);
}

/* Patches the payload size into the section header and appends the CRC of header + payload. */
static void end_section(out_buf *b) {
    if (b->failed) return;
    unsigned char *h = b->data + b->section_start;
    le64(h + 16, (uint64_t)(b->size - b->section_start - SECTION_HEADER_SIZE));
    uLong crc = crc32(0L, Z_NULL, 0);
    size_t n = b->size - b->section_start;
    const unsigned char *p = b->data + b->section_start;
    while (n > 0) { /* zlib takes uInt lengths */
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    put_u32(b, (uint32_t)crc);
}

/* ---- section payloads ---------------------------------------------------------------------- */

static void put_walls(out_buf *b, const pbf_wall_motion *m) {
    for (int k = 0; k < PBF_WALL_COUNT; ++k) {
        put_f32(b, m[k].amplitude);
        put_f32(b, m[k].period);
        put_f32(b, m[k].phase);
    }
}

static void put_phases(out_buf *b, const pbf_phase_def *p) {
    for (int k = 0; k < PBF_MAX_PHASES; ++k) {
        put_f32(b, p[k].density);
        put_f32(b, p[k].xsph);
        put_f32(b, p[k].gravity_scale);
    }
}

/* WORLDDEF: every row of def_fields.h, in order. */
static void put_def(out_buf *b, const pbf_world_def *d) {
#define DEF_PUT_F32(v) put_f32(b, v)
#define DEF_PUT_I32(v) put_i32(b, (int32_t)(v))
#define DEF_PUT_VEC3(v) put_vec3(b, v)
#define DEF_PUT_WALLS(v) put_walls(b, v)
#define DEF_PUT_PHASES(v) put_phases(b, v)
#define DEF_PUT(kind, member, since, old, dflt, range, expected) DEF_PUT_##kind(d->member);
    PBF_DEF_FIELDS(DEF_PUT)
#undef DEF_PUT
#undef DEF_PUT_F32
#undef DEF_PUT_I32
#undef DEF_PUT_VEC3
#undef DEF_PUT_WALLS
#undef DEF_PUT_PHASES
}

static void put_collider(out_buf *b, const pbf_collider_def *c) {
    put_i32(b, (int32_t)c->type);
    put_vec3(b, c->center);
    put_vec3(b, c->half_extents);
    put_f32(b, c->radius);
    put_vec3(b, c->a);
    put_vec3(b, c->b);
    put_f32(b, c->adhesion);
    put_f32(b, c->friction);
}

/* ---- mesh solids (include/pbf/geometry.h) ------------------------------------------------------ *
 * Their defs, then the state each body carries from step to step (meshes.h: pose, velocities,
 * the last substep's force; a floating body needs it, the others' is a function of the time). A
 * resumed world imports the meshes again (the field comes from the disk cache, or is baked again
 * to the same floats) and restores the state. A new field of pbf_mesh_def must be added here and
 * to get_mesh. The contact and sink fields (restitution, friction, sink) follow all the meshes,
 * so that a file without them (written before they existed) still reads, with their defaults. */
_Static_assert(sizeof(pbf_mesh_def) == 2920,
               "pbf_mesh_def changed: update put_mesh/get_mesh in src/io/checkpoint.c");

static void put_mesh(out_buf *b, const pbf_mesh_def *d) {
    size_t len = strnlen(d->path, sizeof d->path - 1);
    put_u32(b, (uint32_t)len);
    unsigned char *p = reserve_bytes(b, len);
    if (p != NULL) memcpy(p, d->path, len);
    put_vec3(b, d->scale);
    put_vec3(b, d->rotation);
    put_vec3(b, d->position);
    put_i32(b, (int32_t)d->role);
    put_f32(b, d->cell);
    put_i32(b, d->cache);
    put_i32(b, (int32_t)d->motion);
    put_i32(b, d->key_count);
    for (int k = 0; k < d->key_count && k < PBF_MESH_MAX_KEYS; ++k) {
        put_f32(b, d->keys[k].time);
        put_vec3(b, d->keys[k].position);
        put_vec3(b, d->keys[k].rotation);
    }
    put_f32(b, d->density);
    put_f32(b, d->mass);
    put_vec3(b, d->velocity);
    put_vec3(b, d->angular_velocity);
    put_f32(b, d->added_mass);
}

/* ---- emitters and sinks (include/pbf/flow.h) --------------------------------------------------
 * The defs, each emitter's carried travel (the rate's remainder), the counters and the next id:
 * everything that decides what the next substep emits. Lattices are rebuilt from the defs. */
static void put_emitter(out_buf *b, const pbf_emitter_def *d, double travel) {
    put_i32(b, (int32_t)d->shape);
    put_vec3(b, d->position);
    put_vec3(b, d->direction);
    put_f32(b, d->speed);
    put_f32(b, d->radius);
    put_f32(b, d->width);
    put_f32(b, d->height);
    put_f32(b, d->start);
    put_f32(b, d->stop);
    put_i32(b, d->phase);
    put_f64(b, travel);
}

static void put_flow(out_buf *b, const pbf_world *w) {
    const pbf_flow *f = w->flow;
    put_i32(b, f->capacity);
    put_i32(b, w->next_id);
    put_u64(b, (uint64_t)f->emitted);
    put_u64(b, (uint64_t)f->removed);
    put_u32(b, (uint32_t)f->emitter_count);
    put_u32(b, (uint32_t)f->sink_count);
    for (int i = 0; i < f->emitter_count; ++i)
        put_emitter(b, &f->emitters[i].def, f->emitters[i].travel);
    for (int i = 0; i < f->sink_count; ++i) {
        put_vec3(b, f->sinks[i].min);
        put_vec3(b, f->sinks[i].max);
    }
}

/* ---- diffuse particles (include/pbf/diffuse.h): the def, the hash's counter, the set in its
 * order -------------------------------------------------------------------------------------- */
static void put_diffuse(out_buf *b, const pbf_diffuse *D) {
    const pbf_diffuse_def *d = &D->def;
    put_f32(b, d->trapped_air_rate);
    put_f32(b, d->wave_crest_rate);
    put_f32(b, d->trapped_air_min);
    put_f32(b, d->trapped_air_max);
    put_f32(b, d->wave_crest_min);
    put_f32(b, d->wave_crest_max);
    put_f32(b, d->energy_min);
    put_f32(b, d->energy_max);
    put_f32(b, d->lifetime);
    put_f32(b, d->buoyancy);
    put_f32(b, d->drag);
    put_i32(b, d->spray_neighbors);
    put_i32(b, d->bubble_neighbors);
    put_i32(b, d->max_count);
    put_u64(b, D->substeps);
    put_u64(b, (uint64_t)D->generated);
    put_u32(b, (uint32_t)D->count);
    const size_t n = (size_t)D->count;
    put_floats(b, D->x, 3 * n);
    put_floats(b, D->v, 3 * n);
    put_floats(b, D->life, n);
    unsigned char *p = reserve_bytes(b, n);
    if (p != NULL && n > 0) memcpy(p, D->kind, n);
}

/* ---- the tool (docs/tool.md) ---------------------------------------------------------------- *
 * Its def and the state that carries from one step to the next (tool.h): where it is, how it
 * moves, the pose it is being carried to, the free body's lagged force and acceleration, and the
 * published state. k and the per-particle scratch arrays are rebuilt every substep. A new field
 * in pbf_tool_body that outlives a step must be added here (and to get_tool below). */
_Static_assert(sizeof(pbf_tool_def) == 2116,
               "pbf_tool_def changed: update put_tool/get_tool in src/io/checkpoint.c and bump "
               "PBF_CHECKPOINT_VERSION");
_Static_assert(sizeof(pbf_tool_state) == 96,
               "pbf_tool_state changed: update put_tool_state/get_tool_state in checkpoint.c");
_Static_assert(sizeof(pbf_tool_body) == 2472,
               "pbf_tool_body changed: if the new field carries from one step to the next, save "
               "it in put_tool/get_tool (src/io/checkpoint.c) and bump PBF_CHECKPOINT_VERSION; "
               "then update this size");

static void put_tool_state(out_buf *b, const pbf_tool_state *s) {
    put_f64(b, s->time);
    put_vec3(b, s->position);
    put_vec3(b, s->velocity);
    put_f32(b, s->radius);
    put_vec3(b, s->reaction);
    put_vec3(b, s->adhesion);
    put_vec3(b, s->damping);
    put_vec3(b, s->total);
    put_i32(b, s->contacts);
    put_f32(b, s->min_distance);
}

static void put_tool(out_buf *b, const pbf_tool_body *t) {
    const pbf_tool_def *d = &t->def;
    put_f32(b, d->radius);
    put_vec3(b, d->position);
    put_vec3(b, d->velocity);
    put_i32(b, (int32_t)d->motion);
    put_f32(b, d->mass);
    put_f32(b, d->added_mass);
    put_f32(b, d->adhesion_k_tool);
    put_f32(b, d->adhesion_k_fluid);
    put_f32(b, d->adhesion_a);
    put_f32(b, d->adhesion_b);
    put_f32(b, d->damping);
    put_i32(b, (int32_t)d->interpolation);
    put_i32(b, d->key_count);
    for (int i = 0; i < d->key_count && i < PBF_TOOL_MAX_KEYS; ++i) {
        put_f32(b, d->keys[i].time);
        put_vec3(b, d->keys[i].position);
    }
    put_vec3(b, t->position);
    put_vec3(b, t->velocity);
    put_i32(b, t->external);
    put_i32(b, t->pose_pending);
    put_vec3(b, t->pose_target);
    put_vec3(b, t->force_prev);
    put_vec3(b, t->accel_prev);
    put_tool_state(b, &t->state);
}

pbf_status pbf_checkpoint_save(const pbf_world *w, const char *path, const void *app_data,
                               size_t app_size, char *err, size_t err_size) {
    if (w == NULL || path == NULL || (app_data == NULL && app_size > 0)) {
        set_error(err, err_size, "pbf_checkpoint_save: world and path must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    pbf__cuda_pull(w); /* cuda */
    pbf__cuda_pull(w); /* cuda: the host arrays below must be the device's state */
    const size_t n = (size_t)w->count;
    char why[PBF_ERROR_SIZE];
    const double diffuse = w->diffuse ? 29.0 * (double)w->diffuse->count : 0.0;
    const double per = (double)column_offset(COLUMN_COUNT, PBF_CHECKPOINT_VERSION, 1);
    if (pbf__check_memory(1024.0 + per * (double)n + diffuse + (double)app_size,
                          "the checkpoint's buffer", why, sizeof why) != 0) {
        set_error(err, err_size, "cannot write '%s': the checkpoint %s", path, why);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    out_buf b;
    memset(&b, 0, sizeof b);
    unsigned char *h = reserve_bytes(&b, HEADER_SIZE);
    const int meshes = pbf_world_mesh_count(w);
    uint32_t sections = 4 + (w->tool != NULL) + (meshes > 0) + (w->flow != NULL) +
                        (w->diffuse != NULL) + (w->halo != NULL) + (app_data != NULL);
    if (h != NULL) {
        memset(h, 0, HEADER_SIZE);
        memcpy(h, MAGIC, 8);
        le32(h + 8, PBF_CHECKPOINT_VERSION);
        le32(h + 12, HEADER_SIZE);
        le32(h + 16, sections);
        le32(h + 28, (uint32_t)crc32(0L, h, 28));
    }

    begin_section(&b, TAG_DEF, PBF_CHECKPOINT_REQUIRED);
    put_def(&b, &w->def);
    end_section(&b);

    begin_section(&b, TAG_STATE, PBF_CHECKPOINT_REQUIRED);
    put_f64(&b, w->time);
    put_u64(&b, (uint64_t)w->profile.steps);
    put_f32(&b, w->profile.avg_density_error);
    put_f32(&b, w->profile.max_density_error);
    put_f32(&b, w->profile.avg_neighbors);
    put_i32(&b, w->count);
    put_u64(&b, pbf_world_hash(w));
    end_section(&b);

    begin_section(&b, TAG_COLLIDER, PBF_CHECKPOINT_REQUIRED);
    put_u32(&b, (uint32_t)w->collider_count);
    for (int i = 0; i < w->collider_count; ++i) put_collider(&b, &w->colliders[i]);
    end_section(&b);

    /* slot order: the order of the neighbour sums is part of the state */
    begin_section(&b, TAG_PARTICLE, PBF_CHECKPOINT_REQUIRED);
    put_u32(&b, (uint32_t)n);
#define PBF_FIELD_PUT(name, type, components, flags, scratch)                                      \
    if (PBF_FIELD_CHECKPOINT_SINCE(flags) != 0)                                                    \
        put_column(&b, w->name, (components)*n, sizeof(type));
    PBF_PARTICLE_FIELDS(PBF_FIELD_PUT) /* fields.h: the saved arrays, in its order */
#undef PBF_FIELD_PUT
    end_section(&b);

    if (w->tool != NULL) {
        begin_section(&b, TAG_TOOL, PBF_CHECKPOINT_REQUIRED);
        put_tool(&b, w->tool);
        end_section(&b);
    }
    if (meshes > 0) {
        begin_section(&b, TAG_MESHES, PBF_CHECKPOINT_REQUIRED);
        put_u32(&b, (uint32_t)meshes);
        for (int i = 0; i < meshes; ++i) {
            put_mesh(&b, pbf_world_get_mesh_def(w, i));
            double state[PBF_BODY_STATE];
            pbf__mesh_body_save(w->geometry->body[i], state);
            for (int k = 0; k < PBF_BODY_STATE; ++k) put_f64(&b, state[k]);
        }
        for (int i = 0; i < meshes; ++i) {
            const pbf_mesh_def *d = pbf_world_get_mesh_def(w, i);
            put_f32(&b, d->restitution);
            put_f32(&b, d->friction);
            put_i32(&b, d->sink);
        }
        end_section(&b);
    }
    if (w->flow != NULL) {
        begin_section(&b, TAG_FLOW, PBF_CHECKPOINT_REQUIRED);
        put_flow(&b, w);
        end_section(&b);
    }
    if (w->diffuse != NULL) {
        begin_section(&b, TAG_DIFFUSE, PBF_CHECKPOINT_REQUIRED);
        put_diffuse(&b, w->diffuse);
        end_section(&b);
    }
    if (w->halo != NULL) {
        begin_section(&b, TAG_PIECE, PBF_CHECKPOINT_REQUIRED);
        put_i32(&b, w->next_id);
        end_section(&b);
    }
    if (app_data != NULL) {
        begin_section(&b, TAG_APP, 0);
        unsigned char *p = reserve_bytes(&b, app_size);
        if (p != NULL && app_size > 0) memcpy(p, app_data, app_size);
        end_section(&b);
    }

    pbf_status st;
    if (b.failed) {
        set_error(err, err_size, "cannot write '%s': out of memory building the checkpoint", path);
        st = PBF_ERR_OUT_OF_MEMORY;
    } else {
        st = pbf_write_file_atomic(path, b.data, b.size, err, err_size);
    }
    free(b.data);
    return st;
}

/* =============================================================================================
 * Reading */

struct pbf_checkpoint {
    char *path;
    unsigned char *file;
    size_t file_size;
    pbf_world_def def;
    double time;
    int64_t steps;
    float avg_density_error, max_density_error, avg_neighbors;
    int count;
    uint64_t hash;
    uint32_t version; /* the file's format version */
    int collider_count;
    pbf_collider_def colliders[PBF_MAX_SOLIDS];
    const unsigned char *particles; /* the PARTICLE payload after its count */
    int has_tool;
    pbf_tool_body tool; /* def and carried state only (no scratch) */
    int mesh_count;
    pbf_mesh_def *meshes;
    double (*mesh_state)[PBF_BODY_STATE];
    int has_flow; /* the FLOW section */
    int has_piece; /* the PIECE section: a piece of a split world */
    int32_t piece_next_id;
    int capacity;
    int32_t next_id;
    int64_t emitted, removed;
    int emitter_count, sink_count;
    pbf_emitter_def emitters[PBF_MAX_EMITTERS];
    double travel[PBF_MAX_EMITTERS];
    pbf_sink_def sinks[PBF_MAX_SINKS];
    int has_diffuse; /* the DIFFUSE section */
    pbf_diffuse_def diffuse;
    uint64_t diffuse_substeps;
    int64_t diffuse_generated;
    int diffuse_count;
    const unsigned char *diffuse_data; /* its particles, after the fixed part */
    char *app; /* copy with a NUL after it */
    size_t app_size;
};

/* A bounds-checked reader over one payload. */
typedef struct in_buf {
    const unsigned char *p, *end;
    int short_read;
} in_buf;

static const unsigned char *take(in_buf *b, size_t n) {
    if (b->short_read || (size_t)(b->end - b->p) < n) {
        b->short_read = 1;
        return NULL;
    }
    const unsigned char *p = b->p;
    b->p += n;
    return p;
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p) {
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint32_t get_u32(in_buf *b) {
    const unsigned char *p = take(b, 4);
    return p ? rd32(p) : 0;
}

static int32_t get_i32(in_buf *b) { return (int32_t)get_u32(b); }

static uint64_t get_u64(in_buf *b) {
    const unsigned char *p = take(b, 8);
    return p ? rd64(p) : 0;
}

static float get_f32(in_buf *b) {
    uint32_t u = get_u32(b);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double get_f64(in_buf *b) {
    uint64_t u = get_u64(b);
    double f;
    memcpy(&f, &u, 8);
    return f;
}

static pbf_vec3 get_vec3(in_buf *b) {
    pbf_vec3 v;
    v.x = get_f32(b);
    v.y = get_f32(b);
    v.z = get_f32(b);
    return v;
}

static float f32_at(const unsigned char *p, size_t i) {
    uint32_t u = rd32(p + 4 * i);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void get_walls(in_buf *b, pbf_wall_motion *m) {
    for (int k = 0; k < PBF_WALL_COUNT; ++k) {
        m[k].amplitude = get_f32(b);
        m[k].period = get_f32(b);
        m[k].phase = get_f32(b);
    }
}

/* Each phase is `old` where the file has none. */
static void get_phases(in_buf *b, pbf_phase_def *p, int in_file, pbf_phase_def old) {
    for (int k = 0; k < PBF_MAX_PHASES; ++k) {
        p[k] = old;
        if (!in_file) continue;
        p[k].density = get_f32(b);
        p[k].xsph = get_f32(b);
        p[k].gravity_scale = get_f32(b);
    }
}

/* WORLDDEF as a file of `version` holds it (its size checked: def_bytes): the rows of
 * def_fields.h it has, the others their `old` value. */
static void get_def(in_buf *b, pbf_world_def *d, uint32_t version) {
#define DEF_GET_F32(dst, since, old) dst = version >= (since) ? get_f32(b) : (old)
#define DEF_GET_I32(dst, since, old) dst = version >= (since) ? get_i32(b) : (old)
#define DEF_GET_VEC3(dst, since, old) dst = get_vec3(b) /* since 1 (DEF_VERSIONED_VEC3) */
#define DEF_GET_WALLS(dst, since, old) get_walls(b, dst) /* since 1 */
#define DEF_GET_PHASES(dst, since, old) get_phases(b, dst, version >= (since), old)
#define DEF_GET(kind, member, since, old, dflt, range, expected)                                   \
    DEF_GET_##kind(d->member, since, old);
    PBF_DEF_FIELDS(DEF_GET)
#undef DEF_GET
#undef DEF_GET_F32
#undef DEF_GET_I32
#undef DEF_GET_VEC3
#undef DEF_GET_WALLS
#undef DEF_GET_PHASES
}

/* WORLDDEF's bytes in a file of `version`: the rows it has. */
static uint64_t def_bytes(uint32_t version) {
    uint64_t n = 0;
#define DEF_ROW_BYTES(kind, member, since, old, dflt, range, expected)                             \
    if (version >= (since)) n += PBF_DEF_BYTES_##kind;
    PBF_DEF_FIELDS(DEF_ROW_BYTES)
#undef DEF_ROW_BYTES
    return n;
}

/* 0, or -1 when the counts are out of range. */
static int get_mesh(in_buf *b, pbf_mesh_def *d) {
    *d = pbf_default_mesh_def();
    uint32_t len = get_u32(b);
    if (len >= sizeof d->path) return -1;
    const unsigned char *p = take(b, len);
    if (p != NULL) memcpy(d->path, p, len);
    d->path[len] = '\0';
    d->scale = get_vec3(b);
    d->rotation = get_vec3(b);
    d->position = get_vec3(b);
    d->role = (pbf_mesh_role)get_i32(b);
    d->cell = get_f32(b);
    d->cache = get_i32(b);
    d->motion = (pbf_mesh_motion)get_i32(b);
    d->key_count = get_i32(b);
    if (d->key_count < 0 || d->key_count > PBF_MESH_MAX_KEYS) return -1;
    for (int k = 0; k < d->key_count; ++k) {
        d->keys[k].time = get_f32(b);
        d->keys[k].position = get_vec3(b);
        d->keys[k].rotation = get_vec3(b);
    }
    d->density = get_f32(b);
    d->mass = get_f32(b);
    d->velocity = get_vec3(b);
    d->angular_velocity = get_vec3(b);
    d->added_mass = get_f32(b);
    return 0;
}

static void get_collider(in_buf *b, pbf_collider_def *c, uint32_t version) {
    c->type = (pbf_collider_type)get_i32(b);
    c->center = get_vec3(b);
    c->half_extents = get_vec3(b);
    c->radius = get_f32(b);
    c->a = get_vec3(b);
    c->b = get_vec3(b);
    c->adhesion = version >= 3 ? get_f32(b) : 0.0f;
    c->friction = version >= 3 ? get_f32(b) : 0.0f;
}

static void get_tool_state(in_buf *b, pbf_tool_state *s) {
    s->time = get_f64(b);
    s->position = get_vec3(b);
    s->velocity = get_vec3(b);
    s->radius = get_f32(b);
    s->reaction = get_vec3(b);
    s->adhesion = get_vec3(b);
    s->damping = get_vec3(b);
    s->total = get_vec3(b);
    s->contacts = get_i32(b);
    s->min_distance = get_f32(b);
}

/* Returns 0, or -1 when key_count is out of range (the caller reports it). */
static int get_tool(in_buf *b, pbf_tool_body *t) {
    memset(t, 0, sizeof *t);
    pbf_tool_def *d = &t->def;
    *d = pbf_default_tool_def();
    d->radius = get_f32(b);
    d->position = get_vec3(b);
    d->velocity = get_vec3(b);
    d->motion = (pbf_tool_motion)get_i32(b);
    d->mass = get_f32(b);
    d->added_mass = get_f32(b);
    d->adhesion_k_tool = get_f32(b);
    d->adhesion_k_fluid = get_f32(b);
    d->adhesion_a = get_f32(b);
    d->adhesion_b = get_f32(b);
    d->damping = get_f32(b);
    d->interpolation = (pbf_tool_interpolation)get_i32(b);
    d->key_count = get_i32(b);
    if (d->key_count < 0 || d->key_count > PBF_TOOL_MAX_KEYS) return -1;
    for (int i = 0; i < d->key_count; ++i) {
        d->keys[i].time = get_f32(b);
        d->keys[i].position = get_vec3(b);
    }
    t->position = get_vec3(b);
    t->velocity = get_vec3(b);
    t->external = get_i32(b);
    t->pose_pending = get_i32(b);
    t->pose_target = get_vec3(b);
    t->force_prev = get_vec3(b);
    t->accel_prev = get_vec3(b);
    get_tool_state(b, &t->state);
    return 0;
}

/* Reads the whole file. The size is checked against the memory limit first. */
static pbf_status read_all(const char *path, unsigned char **data, size_t *size, char *err,
                           size_t err_size) {
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_error(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0) len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0) {
        int e = errno;
        fclose(f);
        set_error(err, err_size, "%s: cannot read: %s", path, strerror(e ? e : EIO));
        return PBF_ERR_IO;
    }
    char why[PBF_ERROR_SIZE];
    if (pbf__check_memory((double)len, "to read it", why, sizeof why) != 0) {
        fclose(f);
        set_error(err, err_size, "%s: the file %s", path, why);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    if (buf == NULL) {
        fclose(f);
        set_error(err, err_size, "%s: out of memory reading %ld bytes", path, len);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    size_t got = fread(buf, 1, (size_t)len, f);
    int e = ferror(f) ? errno : 0;
    fclose(f);
    if (got != (size_t)len) {
        free(buf);
        set_error(err, err_size, "%s: cannot read: %s", path,
                  e ? strerror(e) : "the file changed while it was read");
        return PBF_ERR_IO;
    }
    *data = buf;
    *size = (size_t)len;
    return PBF_OK;
}

/* "PLY", "JSON text", ... : what a foreign file starts with, for the message. */
static void describe_start(const unsigned char *d, size_t n, char *out, size_t size) {
    char text[24];
    size_t k = 0;
    for (size_t i = 0; i < n && i < 16 && k + 5 < sizeof text; ++i) {
        unsigned char c = d[i];
        if (c >= 32 && c < 127 && c != '"' && c != '\\') {
            text[k++] = (char)c;
        } else {
            k += (size_t)snprintf(text + k, sizeof text - k, "\\x%02x", c);
        }
    }
    text[k < sizeof text ? k : sizeof text - 1] = '\0';
    snprintf(out, size, "\"%s\"", text);
}

void pbf_checkpoint_close(pbf_checkpoint *ck) {
    if (ck == NULL) return;
    free(ck->path);
    free(ck->file);
    free(ck->app);
    free(ck->meshes);
    free(ck->mesh_state);
    free(ck);
}

/* The fixed-size sections: a payload of another size is refused (a file of another version
 * that kept the version number, or a crafted one). */
static int payload_size_ok(const char *path, uint32_t version, const char *tag, uint64_t size,
                           uint64_t want, char *err, size_t err_size) {
    if (size == want) return 1;
    set_error(err, err_size,
              "%s: section '%s' holds %llu bytes, version %d has %llu: not a checkpoint this pbf "
              "can read",
              path, tag, (unsigned long long)size, (int)version, (unsigned long long)want);
    return 0;
}

/* Decodes one known section. Returns PBF_OK or an error with the message set. */
static pbf_status decode_section(pbf_checkpoint *ck, const char *tag, const unsigned char *p,
                                 uint64_t size, char *err, size_t err_size) {
    const char *path = ck->path;
    in_buf b = {p, p + size, 0};
    if (strcmp(tag, TAG_DEF) == 0) {
        uint64_t want = def_bytes(ck->version);
        if (!payload_size_ok(path, ck->version, tag, size, want, err, err_size))
            return PBF_ERR_PARSE;
        get_def(&b, &ck->def, ck->version);
    } else if (strcmp(tag, TAG_STATE) == 0) {
        if (!payload_size_ok(path, ck->version, tag, size, STATE_BYTES, err, err_size))
            return PBF_ERR_PARSE;
        ck->time = get_f64(&b);
        ck->steps = (int64_t)get_u64(&b);
        ck->avg_density_error = get_f32(&b);
        ck->max_density_error = get_f32(&b);
        ck->avg_neighbors = get_f32(&b);
        ck->count = get_i32(&b);
        ck->hash = get_u64(&b);
        if (!isfinite(ck->time) || ck->time < 0.0 || ck->steps < 0 || ck->count < 0 ||
            ck->count > MAX_PARTICLES) {
            set_error(err, err_size,
                      "%s: section 'STATE' is not valid (time %g s, %lld steps, %d particles)",
                      path, ck->time, (long long)ck->steps, ck->count);
            return PBF_ERR_PARSE;
        }
    } else if (strcmp(tag, TAG_COLLIDER) == 0) {
        uint32_t n = get_u32(&b);
        uint64_t collider_bytes = ck->version >= 3 ? COLLIDER_BYTES : COLLIDER_BYTES_V2;
        if (b.short_read || n > PBF_MAX_SOLIDS ||
            !payload_size_ok(path, ck->version, tag, size, 4 + (uint64_t)n * collider_bytes, err,
                             err_size)) {
            if (n > PBF_MAX_SOLIDS)
                set_error(err, err_size, "%s: section 'COLLIDER' has %u colliders, at most %d",
                          path, n, PBF_MAX_SOLIDS);
            return PBF_ERR_PARSE;
        }
        ck->collider_count = (int)n;
        for (uint32_t i = 0; i < n; ++i) get_collider(&b, &ck->colliders[i], ck->version);
    } else if (strcmp(tag, TAG_PARTICLE) == 0) {
        uint32_t n = get_u32(&b);
        if (b.short_read || n > MAX_PARTICLES) {
            set_error(err, err_size, "%s: section 'PARTICLE' has a count of %u particles", path, n);
            return PBF_ERR_PARSE;
        }
        if (!payload_size_ok(path, ck->version, tag, size,
                             4 + column_offset(COLUMN_COUNT, ck->version, n), err, err_size))
            return PBF_ERR_PARSE;
        ck->particles = p + 4;
        /* The count must agree with STATE's (checked after all sections are read). */
        ck->count = ck->count >= 0 ? ck->count : (int)n;
        if ((int)n != ck->count) {
            set_error(err, err_size,
                      "%s: section 'PARTICLE' has %u particles, section 'STATE' says %d", path, n,
                      ck->count);
            return PBF_ERR_PARSE;
        }
    } else if (strcmp(tag, TAG_TOOL) == 0) {
        if (get_tool(&b, &ck->tool) != 0) {
            set_error(err, err_size, "%s: section 'TOOL' has a key count of %d, at most %d", path,
                      ck->tool.def.key_count, PBF_TOOL_MAX_KEYS);
            return PBF_ERR_PARSE;
        }
        if (b.short_read || b.p != b.end) {
            set_error(err, err_size,
                      "%s: section 'TOOL' holds %llu bytes, which is not what version %d writes",
                      path, (unsigned long long)size, (int)ck->version);
            return PBF_ERR_PARSE;
        }
        ck->has_tool = 1;
    } else if (strcmp(tag, TAG_MESHES) == 0) {
        uint32_t n = get_u32(&b);
        if (b.short_read || n > PBF_MAX_MESHES) {
            set_error(err, err_size, "%s: section 'MESHES' has %u meshes, at most %d", path, n,
                      PBF_MAX_MESHES);
            return PBF_ERR_PARSE;
        }
        ck->meshes = calloc(n > 0 ? n : 1, sizeof *ck->meshes);
        ck->mesh_state = calloc(n > 0 ? n : 1, sizeof *ck->mesh_state);
        if (ck->meshes == NULL || ck->mesh_state == NULL) {
            set_error(err, err_size, "%s: out of memory", path);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        ck->mesh_count = (int)n;
        for (uint32_t i = 0; i < n; ++i) {
            int bad = get_mesh(&b, &ck->meshes[i]);
            for (int k = 0; k < PBF_BODY_STATE; ++k) {
                ck->mesh_state[i][k] = get_f64(&b);
                if (!isfinite(ck->mesh_state[i][k])) bad = 1;
            }
            if (bad || b.short_read) {
                set_error(err, err_size, "%s: section 'MESHES': mesh %u is not valid", path, i);
                return PBF_ERR_PARSE;
            }
        }
        for (uint32_t i = 0; b.p != b.end && i < n; ++i) {
            ck->meshes[i].restitution = get_f32(&b);
            ck->meshes[i].friction = get_f32(&b);
            ck->meshes[i].sink = get_i32(&b);
        }
        if (b.short_read || b.p != b.end) {
            set_error(err, err_size,
                      "%s: section 'MESHES' holds %llu bytes, which is not what version %d writes",
                      path, (unsigned long long)size, (int)ck->version);
            return PBF_ERR_PARSE;
        }
    } else if (strcmp(tag, TAG_FLOW) == 0) {
        ck->capacity = get_i32(&b);
        ck->next_id = get_i32(&b);
        ck->emitted = (int64_t)get_u64(&b);
        ck->removed = (int64_t)get_u64(&b);
        uint32_t ne = get_u32(&b), ns = get_u32(&b);
        if (ne > PBF_MAX_EMITTERS || ns > PBF_MAX_SINKS ||
            size != FLOW_FIXED_BYTES +
                        (uint64_t)ne * (ck->version >= 5 ? EMITTER_BYTES : EMITTER_BYTES_V4) +
                        (uint64_t)ns * SINK_BYTES) {
            set_error(err, err_size,
                      "%s: section 'FLOW' holds %llu bytes for %u emitters and %u sinks (at most "
                      "%d and %d), which is not what version %d writes",
                      path, (unsigned long long)size, ne, ns, PBF_MAX_EMITTERS, PBF_MAX_SINKS,
                      (int)ck->version);
            return PBF_ERR_PARSE;
        }
        ck->emitter_count = (int)ne;
        ck->sink_count = (int)ns;
        for (uint32_t i = 0; i < ne; ++i) {
            pbf_emitter_def *e = &ck->emitters[i];
            e->shape = (pbf_emitter_shape)get_i32(&b);
            e->position = get_vec3(&b);
            e->direction = get_vec3(&b);
            e->speed = get_f32(&b);
            e->radius = get_f32(&b);
            e->width = get_f32(&b);
            e->height = get_f32(&b);
            e->start = get_f32(&b);
            e->stop = get_f32(&b);
            e->phase = ck->version >= 5 ? get_i32(&b) : 0;
            ck->travel[i] = get_f64(&b);
        }
        for (uint32_t i = 0; i < ns; ++i) {
            ck->sinks[i].min = get_vec3(&b);
            ck->sinks[i].max = get_vec3(&b);
        }
        if (ck->next_id < 0 || ck->emitted < 0 || ck->removed < 0 || ck->capacity < 0) {
            set_error(err, err_size, "%s: section 'FLOW' has a negative count", path);
            return PBF_ERR_PARSE;
        }
        ck->has_flow = 1;
    } else if (strcmp(tag, TAG_DIFFUSE) == 0) {
        pbf_diffuse_def *d = &ck->diffuse;
        d->trapped_air_rate = get_f32(&b);
        d->wave_crest_rate = get_f32(&b);
        d->trapped_air_min = get_f32(&b);
        d->trapped_air_max = get_f32(&b);
        d->wave_crest_min = get_f32(&b);
        d->wave_crest_max = get_f32(&b);
        d->energy_min = get_f32(&b);
        d->energy_max = get_f32(&b);
        d->lifetime = get_f32(&b);
        d->buoyancy = get_f32(&b);
        d->drag = get_f32(&b);
        d->spray_neighbors = get_i32(&b);
        d->bubble_neighbors = get_i32(&b);
        d->max_count = get_i32(&b);
        ck->diffuse_substeps = get_u64(&b);
        ck->diffuse_generated = (int64_t)get_u64(&b);
        uint32_t n = get_u32(&b);
        if (b.short_read || n > (uint32_t)MAX_PARTICLES ||
            size != DIFFUSE_FIXED_BYTES + (uint64_t)n * DIFFUSE_PARTICLE_BYTES) {
            set_error(err, err_size,
                      "%s: section 'DIFFUSE' holds %llu bytes for %u diffuse particles, which is "
                      "not what version %d writes",
                      path, (unsigned long long)size, n, (int)ck->version);
            return PBF_ERR_PARSE;
        }
        char why[PBF_ERROR_SIZE];
        if (pbf_diffuse_def_check(d, why, sizeof why) != PBF_OK) {
            set_error(err, err_size, "%s: section 'DIFFUSE': %s", path, why);
            return PBF_ERR_PARSE;
        }
        ck->diffuse_count = (int)n;
        ck->diffuse_data = p + DIFFUSE_FIXED_BYTES;
        const unsigned char *q = ck->diffuse_data;
        for (uint32_t i = 0; i < 7 * n; ++i) {
            uint32_t u = rd32(q + 4 * (size_t)i);
            float f;
            memcpy(&f, &u, 4);
            if (!isfinite(f)) {
                set_error(err, err_size, "%s: section 'DIFFUSE' has a non-finite value", path);
                return PBF_ERR_PARSE;
            }
        }
        for (uint32_t i = 0; i < n; ++i)
            if (q[28 * (size_t)n + i] > PBF_DIFFUSE_BUBBLE) {
                set_error(err, err_size, "%s: section 'DIFFUSE' has an unknown kind %u", path,
                          (unsigned)q[28 * (size_t)n + i]);
                return PBF_ERR_PARSE;
            }
        ck->has_diffuse = 1;
    } else if (strcmp(tag, TAG_PIECE) == 0) {
        ck->piece_next_id = size == 4 ? get_i32(&b) : -1;
        if (ck->piece_next_id < 0) {
            set_error(err, err_size, "%s: section 'PIECE' is not 4 bytes holding a next id >= 0",
                      path);
            return PBF_ERR_PARSE;
        }
        ck->has_piece = 1;
    } else if (strcmp(tag, TAG_APP) == 0) {
        ck->app = malloc((size_t)size + 1);
        if (ck->app == NULL) {
            set_error(err, err_size, "%s: out of memory", path);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        if (size > 0) memcpy(ck->app, p, (size_t)size);
        ck->app[size] = '\0';
        ck->app_size = (size_t)size;
    }
    return PBF_OK;
}

/* The known tag whose 8 bytes (NUL-padded) are exactly raw, or NULL. */
static const char *known_tag(const unsigned char *raw) {
    static const char *const known[] = {TAG_DEF,  TAG_STATE,  TAG_COLLIDER, TAG_PARTICLE,
                                        TAG_TOOL, TAG_MESHES, TAG_FLOW,     TAG_DIFFUSE,
                                        TAG_APP,  TAG_PIECE};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
        unsigned char padded[8] = {0};
        memcpy(padded, known[i], strlen(known[i]));
        if (memcmp(raw, padded, 8) == 0) return known[i];
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Finite positions and velocities, and ids unique in 0..limit-1, limit = the FLOW section's next
 * id, or n without one (a permutation of 0..n-1): a repeated or out-of-range id would break the
 * read-back. */
static pbf_status check_particles(const pbf_checkpoint *ck, char *err, size_t err_size) {
    const size_t n = (size_t)ck->count;
    const uint32_t version = ck->version;
    const unsigned char *x = ck->particles + column_offset(COLUMN_x, version, n),
                        *v = ck->particles + column_offset(COLUMN_v, version, n),
                        *ids = ck->particles + column_offset(COLUMN_ids, version, n);
    for (size_t i = 0; i < 3 * n; ++i) {
        if (!isfinite(f32_at(x, i)) || !isfinite(f32_at(v, i))) {
            set_error(err, err_size, "%s: particle in slot %zu has a non-finite %s", ck->path,
                      i / 3, isfinite(f32_at(x, i)) ? "velocity" : "position");
            return PBF_ERR_PARSE;
        }
    }
    if (column_in(COLUMN_phase, version)) { /* each phase names one of the def's fluids */
        const unsigned char *ph = ck->particles + column_offset(COLUMN_phase, version, n);
        const int phases = ck->def.phase_count > 0 ? ck->def.phase_count : 1;
        for (size_t i = 0; i < n; ++i)
            if (ph[i] >= phases) {
                set_error(err, err_size,
                          "%s: particle in slot %zu has phase %d, the world has %d fluids",
                          ck->path, i, (int)ph[i], phases);
                return PBF_ERR_PARSE;
            }
    }
    const int64_t limit = ck->has_flow    ? (int64_t)ck->next_id
                          : ck->has_piece ? (int64_t)ck->piece_next_id
                                          : (int64_t)n;
    int32_t *sorted = malloc(n > 0 ? n * sizeof *sorted : 1);
    if (sorted == NULL) {
        set_error(err, err_size, "%s: out of memory", ck->path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; ++i) sorted[i] = (int32_t)rd32(ids + 4 * i);
    qsort(sorted, n, sizeof *sorted, by_value);
    pbf_status st = PBF_OK;
    for (size_t i = 0; i < n && st == PBF_OK; ++i) {
        int32_t id = sorted[i];
        if (id < 0 || (int64_t)id >= limit || (i > 0 && sorted[i - 1] == id)) {
            const char *what = id < 0 || (int64_t)id >= limit ? "out of range" : "repeated";
            if (ck->has_flow || ck->has_piece)
                set_error(err, err_size,
                          "%s: particle ids are not unique ids below the %s section's next id "
                          "%lld (id %d is %s)",
                          ck->path, ck->has_flow ? "FLOW" : "PIECE", (long long)limit, id, what);
            else
                set_error(err, err_size,
                          "%s: particle ids are not a permutation of 0..%lld (id %d is %s)",
                          ck->path, (long long)limit - 1, id, what);
            st = PBF_ERR_PARSE;
        }
    }
    free(sorted);
    return st;
}

static pbf_status parse(pbf_checkpoint *ck, char *err, size_t err_size) {
    const unsigned char *d = ck->file;
    const size_t size = ck->file_size;
    const char *path = ck->path;
    if (size < 8 || memcmp(d, MAGIC, 8) != 0) {
        char start[96];
        describe_start(d, size, start, sizeof start);
        set_error(err, err_size,
                  "%s: not a pbf checkpoint (it starts with %s, a checkpoint with \"PBFCKPT\\n\")",
                  path, size == 0 ? "nothing: the file is empty" : start);
        return PBF_ERR_PARSE;
    }
    if (size < HEADER_SIZE) {
        set_error(err, err_size, "%s: truncated: %zu bytes, the header alone has %u", path, size,
                  HEADER_SIZE);
        return PBF_ERR_PARSE;
    }
    if (rd32(d + 28) != (uint32_t)crc32(0L, d, 28)) {
        set_error(err, err_size, "%s: checksum mismatch in the header: the file is corrupt", path);
        return PBF_ERR_PARSE;
    }
    uint32_t version = rd32(d + 8), header_size = rd32(d + 12), sections = rd32(d + 16);
    if (version == 0 || version > PBF_CHECKPOINT_VERSION) {
        set_error(err, err_size,
                  "%s: checkpoint format version %u, this pbf (%s) reads version %d and older: "
                  "resume it with the pbf that wrote it",
                  path, version, PBF_VERSION_STRING, PBF_CHECKPOINT_VERSION);
        return PBF_ERR_UNSUPPORTED;
    }
    if (header_size < HEADER_SIZE || header_size > size) {
        set_error(err, err_size, "%s: header size %u is not valid", path, header_size);
        return PBF_ERR_PARSE;
    }
    ck->version = version;
    size_t at = header_size;
    int seen_def = 0, seen_state = 0, seen_coll = 0, seen_part = 0;
    ck->count = -1;
    for (uint32_t s = 0; s < sections; ++s) {
        if (size - at < SECTION_HEADER_SIZE) {
            set_error(err, err_size,
                      "%s: truncated: the file ends inside section %u of %u (a file cut short)",
                      path, s + 1, sections);
            return PBF_ERR_PARSE;
        }
        const unsigned char *h = d + at;
        char tag[9];
        tag_text(h, tag);
        uint32_t flags = rd32(h + 8);
        uint64_t payload = rd64(h + 16);
        if (payload > size - at - SECTION_HEADER_SIZE ||
            size - at - SECTION_HEADER_SIZE - payload < 4) {
            set_error(err, err_size,
                      "%s: truncated: section '%s' needs %llu bytes, the file has %zu left (a "
                      "file cut short, or a corrupt section header)",
                      path, tag, (unsigned long long)payload + 4, size - at - SECTION_HEADER_SIZE);
            return PBF_ERR_PARSE;
        }
        size_t span = SECTION_HEADER_SIZE + (size_t)payload;
        uLong crc = crc32(0L, Z_NULL, 0);
        for (size_t off = 0; off < span;) {
            uInt chunk = span - off > (1u << 30) ? (1u << 30) : (uInt)(span - off);
            crc = crc32(crc, h + off, chunk);
            off += chunk;
        }
        if (rd32(h + span) != (uint32_t)crc) {
            set_error(err, err_size, "%s: checksum mismatch in section '%s': the file is corrupt",
                      path, tag);
            return PBF_ERR_PARSE;
        }
        if (known_tag(h) != NULL) {
            int *seen = strcmp(tag, TAG_DEF) == 0        ? &seen_def
                        : strcmp(tag, TAG_STATE) == 0    ? &seen_state
                        : strcmp(tag, TAG_COLLIDER) == 0 ? &seen_coll
                        : strcmp(tag, TAG_PARTICLE) == 0 ? &seen_part
                                                         : NULL;
            if ((seen != NULL && *seen) || (strcmp(tag, TAG_TOOL) == 0 && ck->has_tool) ||
                (strcmp(tag, TAG_MESHES) == 0 && ck->meshes != NULL) ||
                (strcmp(tag, TAG_FLOW) == 0 && ck->has_flow) ||
                (strcmp(tag, TAG_DIFFUSE) == 0 && ck->has_diffuse) ||
                (strcmp(tag, TAG_PIECE) == 0 && ck->has_piece) ||
                (strcmp(tag, TAG_APP) == 0 && ck->app != NULL)) {
                set_error(err, err_size, "%s: section '%s' appears twice", path, tag);
                return PBF_ERR_PARSE;
            }
            if (seen != NULL) *seen = 1;
            if (strcmp(tag, TAG_PARTICLE) == 0 && !seen_state) {
                set_error(err, err_size, "%s: section 'PARTICLE' comes before 'STATE'", path);
                return PBF_ERR_PARSE;
            }
            pbf_status st =
                decode_section(ck, tag, h + SECTION_HEADER_SIZE, payload, err, err_size);
            if (st != PBF_OK) return st;
        } else if (flags & PBF_CHECKPOINT_REQUIRED) {
            set_error(err, err_size,
                      "%s: section '%s' is required but unknown to this pbf (%s): the file was "
                      "written by a newer version",
                      path, tag, PBF_VERSION_STRING);
            return PBF_ERR_UNSUPPORTED;
        } /* else: an optional section of a later version, skipped */
        at += span + 4;
    }
    if (at != size) {
        set_error(err, err_size, "%s: %zu bytes after the last section (a corrupt file)", path,
                  size - at);
        return PBF_ERR_PARSE;
    }
    const char *missing = !seen_def     ? TAG_DEF
                          : !seen_state ? TAG_STATE
                          : !seen_coll  ? TAG_COLLIDER
                          : !seen_part  ? TAG_PARTICLE
                                        : NULL;
    if (missing != NULL) {
        set_error(err, err_size, "%s: no '%s' section: not a complete checkpoint", path, missing);
        return PBF_ERR_PARSE;
    }
    return check_particles(ck, err, err_size);
}

pbf_status pbf_checkpoint_open(const char *path, pbf_checkpoint **out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (out != NULL) *out = NULL;
    if (path == NULL || out == NULL) {
        set_error(err, err_size, "pbf_checkpoint_open: path and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_checkpoint *ck = calloc(1, sizeof *ck);
    size_t len = strlen(path);
    if (ck == NULL || (ck->path = malloc(len + 1)) == NULL) {
        free(ck);
        set_error(err, err_size, "%s: out of memory", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    memcpy(ck->path, path, len + 1);
    pbf_status st = read_all(path, &ck->file, &ck->file_size, err, err_size);
    if (st == PBF_OK) st = parse(ck, err, err_size);
    if (st != PBF_OK) {
        pbf_checkpoint_close(ck);
        return st;
    }
    *out = ck;
    return PBF_OK;
}

const pbf_world_def *pbf_checkpoint_def(const pbf_checkpoint *ck) { return &ck->def; }
double pbf_checkpoint_time(const pbf_checkpoint *ck) { return ck->time; }
int64_t pbf_checkpoint_steps(const pbf_checkpoint *ck) { return ck->steps; }
int pbf_checkpoint_particle_count(const pbf_checkpoint *ck) { return ck->count; }

int pbf_checkpoint_is_piece(const pbf_checkpoint *ck) { return ck->has_piece; }

const void *pbf_checkpoint_app_data(const pbf_checkpoint *ck, size_t *size) {
    if (size != NULL) *size = ck->app_size;
    return ck->app;
}

/* ---- creating the world ---------------------------------------------------------------------- */

static int same_vec3(pbf_vec3 a, pbf_vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* The first field that makes the particles something else, or NULL. */
static const char *changed_physics(const pbf_world_def *a, const pbf_world_def *b) {
    if (a->particle_radius != b->particle_radius) return "particle_radius";
    if (a->kernel_scale != b->kernel_scale) return "kernel_scale";
    if (a->kernel != b->kernel) return "kernel"; /* the mass is calibrated on the pair */
    if (a->rest_density != b->rest_density) return "rest_density";
    if (!same_vec3(a->gravity, b->gravity)) return "gravity";
    if (!same_vec3(a->domain_min, b->domain_min)) return "domain_min";
    if (!same_vec3(a->domain_max, b->domain_max)) return "domain_max";
    static const char *const walls[PBF_WALL_COUNT] = {"wall_motion[x_min]", "wall_motion[x_max]",
                                                      "wall_motion[y_min]", "wall_motion[y_max]",
                                                      "wall_motion[z_min]", "wall_motion[z_max]"};
    for (int k = 0; k < PBF_WALL_COUNT; ++k) {
        const pbf_wall_motion *m = &a->wall_motion[k], *n = &b->wall_motion[k];
        if (m->amplitude != n->amplitude || m->period != n->period || m->phase != n->phase)
            return walls[k];
    }
    if (a->phase_count != b->phase_count) return "phase_count";
    for (int k = 0; k < a->phase_count && k < PBF_MAX_PHASES; ++k)
        if (a->phases[k].density != b->phases[k].density ||
            a->phases[k].gravity_scale != b->phases[k].gravity_scale)
            return "phases";
    return NULL;
}

/* pbf_checkpoint_create_world; with shared 0 without the tool, meshes and flow state (a piece
 * to append to a merged world, checkpoint_pieces.h). */
static pbf_status create_world(const pbf_checkpoint *ck, const pbf_world_def *def, int shared,
                               pbf_world **out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (out != NULL) *out = NULL;
    if (ck == NULL || out == NULL) {
        set_error(err, err_size, "pbf_checkpoint_create_world: ck and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    const char *path = ck->path;
    if (def == NULL) def = &ck->def;
    const char *changed = changed_physics(def, &ck->def);
    if (changed != NULL) {
        set_error(err, err_size,
                  "%s: world def: %s differs from the checkpoint's; a resumed run can change the "
                  "solver, substeps and threads, not the fluid, gravity, domain or walls",
                  path, changed);
        return PBF_ERR_INVALID_ARG;
    }
    char why[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    pbf_status st = pbf_world_create(def, &w, why, sizeof why);
    if (st != PBF_OK) {
        set_error(err, err_size, "%s: %s", path, why);
        return st;
    }
    for (int i = 0; i < ck->collider_count && st == PBF_OK; ++i) {
        st = pbf_world_add_collider(w, &ck->colliders[i]);
        if (st != PBF_OK)
            set_error(err, err_size, "%s: collider %d: %s", path, i, pbf_world_error(w));
    }
    if (st == PBF_OK && shared && ck->has_flow && ck->capacity > 0) { /* before its particles */
        st = pbf_world_set_capacity(w, ck->capacity);
        if (st != PBF_OK)
            set_error(err, err_size, "%s: flow capacity: %s", path, pbf_world_error(w));
    }
    if (st == PBF_OK) {
        st = pbf__world_resize(w, ck->count);
        if (st != PBF_OK) set_error(err, err_size, "%s: %s", path, pbf_world_error(w));
    }
    if (st == PBF_OK) {
        const size_t n = (size_t)ck->count;
        /* fields.h: the saved arrays from their columns, the others (and those the file's
         * version does not have) 0 */
#define PBF_FIELD_GET(name, type, components, flags, scratch)                                      \
    if (column_in(COLUMN_##name, ck->version))                                                     \
        copy_le((unsigned char *)w->name,                                                          \
                ck->particles + column_offset(COLUMN_##name, ck->version, n), (components)*n,      \
                sizeof(type));                                                                     \
    else if (n > 0)                                                                                \
        memset(w->name, 0, (components)*n * sizeof(type));
        PBF_PARTICLE_FIELDS(PBF_FIELD_GET)
#undef PBF_FIELD_GET
        if (n > 0) memcpy(w->p, w->x, 3 * n * sizeof *w->p); /* predicted = current between steps */
        w->next_id = ck->has_flow ? ck->next_id : ck->has_piece ? ck->piece_next_id : ck->count;
        w->time = ck->time;
        w->profile.steps = ck->steps;
        w->profile.avg_density_error = ck->avg_density_error;
        w->profile.max_density_error = ck->max_density_error;
        w->profile.avg_neighbors = ck->avg_neighbors;
    }
    /* the meshes after the time: a keyframed one is placed where it is then */
    for (int i = 0; st == PBF_OK && shared && i < ck->mesh_count; ++i) {
        st = pbf_world_add_mesh(w, &ck->meshes[i]);
        if (st != PBF_OK)
            set_error(err, err_size, "%s: mesh %d: %s", path, i, pbf_world_error(w));
        else
            pbf__mesh_body_restore(w, i, ck->mesh_state[i]);
    }
    if (st == PBF_OK && shared && ck->has_tool) {
        st = pbf_world_set_tool(w, &ck->tool.def);
        if (st != PBF_OK) {
            set_error(err, err_size, "%s: tool: %s", path, pbf_world_error(w));
        } else {
            pbf_tool_body *t = w->tool;
            t->position = ck->tool.position;
            t->velocity = ck->tool.velocity;
            t->external = ck->tool.external;
            t->pose_pending = ck->tool.pose_pending;
            t->pose_target = ck->tool.pose_target;
            t->force_prev = ck->tool.force_prev;
            t->accel_prev = ck->tool.accel_prev;
            t->state = ck->tool.state;
        }
    }
    for (int i = 0; st == PBF_OK && shared && ck->has_flow && i < ck->sink_count; ++i) {
        st = pbf_world_add_sink(w, &ck->sinks[i]);
        if (st != PBF_OK) set_error(err, err_size, "%s: sink %d: %s", path, i, pbf_world_error(w));
    }
    for (int i = 0; st == PBF_OK && shared && ck->has_flow && i < ck->emitter_count; ++i) {
        st = pbf_world_add_emitter(w, &ck->emitters[i]);
        if (st != PBF_OK)
            set_error(err, err_size, "%s: emitter %d: %s", path, i, pbf_world_error(w));
        else
            w->flow->emitters[i].travel = ck->travel[i];
    }
    if (st == PBF_OK && shared && ck->has_flow) {
        if (w->flow == NULL && (st = pbf_world_set_capacity(w, ck->count)) == PBF_OK)
            w->flow->capacity = 0; /* a FLOW section with nothing in it: keep its counters */
        if (st == PBF_OK) {
            w->flow->emitted = ck->emitted;
            w->flow->removed = ck->removed;
        }
    }
    if (st == PBF_OK && ck->has_diffuse) {
        st = pbf__diffuse_restore(w, &ck->diffuse, ck->diffuse_count, ck->diffuse_substeps,
                                  ck->diffuse_generated);
        if (st != PBF_OK) {
            set_error(err, err_size, "%s: diffuse: %s", path, pbf_world_error(w));
        } else {
            pbf_diffuse *D = w->diffuse;
            const size_t n = (size_t)ck->diffuse_count;
            const unsigned char *q = ck->diffuse_data;
            for (size_t i = 0; i < 7 * n; ++i) {
                uint32_t u = rd32(q + 4 * i);
                float *dst = i < 3 * n   ? &D->x[i]
                             : i < 6 * n ? &D->v[i - 3 * n]
                                         : &D->life[i - 6 * n];
                memcpy(dst, &u, 4);
            }
            if (n > 0) memcpy(D->kind, q + 28 * n, n);
        }
    }
    if (st == PBF_OK && pbf_world_hash(w) != ck->hash) {
        set_error(err, err_size,
                  "%s: the restored state's hash differs from the one saved: the file is "
                  "inconsistent",
                  path);
        st = PBF_ERR_PARSE;
    }
    if (st != PBF_OK) {
        pbf_world_destroy(w);
        return st;
    }
    *out = w;
    return PBF_OK;
}

pbf_status pbf_checkpoint_create_world(const pbf_checkpoint *ck, const pbf_world_def *def,
                                       pbf_world **out, char *err, size_t err_size) {
    return create_world(ck, def, 1, out, err, err_size);
}

pbf_status pbf__checkpoint_create_particles(const pbf_checkpoint *ck, const pbf_world_def *def,
                                            pbf_world **out, char *err, size_t err_size) {
    return create_world(ck, def, 0, out, err, err_size);
}

/* ---- merging pieces (checkpoint_pieces.h): each shared part re-encoded from what was decoded,
 * as the writer encodes it, and the bytes compared ------------------------------------------ */
static void put_ck_tool(out_buf *b, const pbf_checkpoint *ck, int i) {
    (void)i;
    put_i32(b, ck->has_tool);
    if (ck->has_tool) put_tool(b, &ck->tool);
}

static void put_ck_mesh(out_buf *b, const pbf_checkpoint *ck, int i) {
    const pbf_mesh_def *d = &ck->meshes[i];
    put_mesh(b, d);
    for (int k = 0; k < PBF_BODY_STATE; ++k) put_f64(b, ck->mesh_state[i][k]);
    put_f32(b, d->restitution);
    put_f32(b, d->friction);
    put_i32(b, d->sink);
}

static void put_ck_flow(out_buf *b, const pbf_checkpoint *ck, int i) {
    (void)i;
    put_i32(b, ck->has_flow);
    if (!ck->has_flow) return;
    put_i32(b, ck->capacity);
    put_i32(b, ck->next_id);
    put_u64(b, (uint64_t)ck->emitted);
    put_u64(b, (uint64_t)ck->removed);
    put_u32(b, (uint32_t)ck->emitter_count);
    put_u32(b, (uint32_t)ck->sink_count);
    for (int k = 0; k < ck->emitter_count; ++k) put_emitter(b, &ck->emitters[k], ck->travel[k]);
    for (int k = 0; k < ck->sink_count; ++k) {
        put_vec3(b, ck->sinks[k].min);
        put_vec3(b, ck->sinks[k].max);
    }
}

/* 1 when a and b encode part i to the same bytes, 0 when not, -1 out of memory. */
static int same_part(void (*put)(out_buf *, const pbf_checkpoint *, int), const pbf_checkpoint *a,
                     const pbf_checkpoint *b, int i) {
    out_buf x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    put(&x, a, i);
    put(&y, b, i);
    const int same =
        x.failed || y.failed ? -1 : x.size == y.size && memcmp(x.data, y.data, x.size) == 0;
    free(x.data);
    free(y.data);
    return same;
}

int pbf__checkpoint_shared_differs(const pbf_checkpoint *a, const pbf_checkpoint *b, char *what,
                                   size_t what_size) {
    int same = same_part(put_ck_tool, a, b, 0);
    if (same == 0)
        snprintf(what, what_size, "the tool (its def, pose, velocity or the forces on it)");
    if (same == 1 && a->mesh_count != b->mesh_count) {
        snprintf(what, what_size, "the meshes (%d, against %d)", b->mesh_count, a->mesh_count);
        same = 0;
    }
    for (int i = 0; same == 1 && i < a->mesh_count; ++i)
        if ((same = same_part(put_ck_mesh, a, b, i)) == 0)
            snprintf(what, what_size,
                     "mesh %d (its def, or its pose, velocities or the force and torque on it)", i);
    if (same == 1 && (same = same_part(put_ck_flow, a, b, 0)) == 0)
        snprintf(what, what_size,
                 "the flow state (emitters and their travel, sinks, the capacity, next id or the "
                 "emitted and removed counts)");
    return same < 0 ? -1 : !same;
}
