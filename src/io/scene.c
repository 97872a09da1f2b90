/* pbf — the strict JSON scene loader (docs/scenes.md).
 *
 * A scene is read in three steps:
 *   1. text -> cJSON tree; broken JSON is reported as FILE:LINE:COL with the text near the error;
 *   2. the `--set path=value` overrides are applied to the tree, so that they go through exactly
 *      the same validation as the file itself;
 *   3. one walk over the tree against a schema that starts from the pbf_default_* values and
 *      rejects every key it does not know, every wrong type and every out-of-range value, naming
 *      the file, the JSON path and what was expected.
 * The schema is a set of tables (field) that also drive pbf_scene_to_json, so what is written is
 * exactly what is read back. The library never prints: every message goes into err. */
#include "pbf/scene.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enum fields are stored through int pointers by the generic field code. */
_Static_assert(sizeof(pbf_neighbor_mode) == sizeof(int), "pbf_neighbor_mode must be int-sized");
_Static_assert(sizeof(pbf_backend) == sizeof(int), "pbf_backend must be int-sized");
_Static_assert(sizeof(pbf_collider_type) == sizeof(int), "pbf_collider_type must be int-sized");

#define JSON_PATH_SIZE 256   /* "fluid.blocks[12].velocity" and friends; longer is truncated */
#define MAX_PATH_SEGMENTS 32 /* of a --set path */
#define SEGMENT_KEY_SIZE 128
#define SUGGEST_MAX_LEN 64            /* keys longer than this get no did-you-mean */
#define MAX_PARTICLES (INT32_MAX / 4) /* pbf_world_add_block's limit */

#define DEFAULT_FPS 60.0f
#define DEFAULT_FRAMES 120
#define DEFAULT_FOV 45.0f

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        pbf_status try_status_ = (expr);                                                           \
        if (try_status_ != PBF_OK) return try_status_;                                             \
    } while (0)

/* =============================================================================================
 * Messages */

/* Where messages go and what they name. overrides are kept so that an error on a path that a
 * --set touched can say so (the user otherwise looks for the typo in the file). */
typedef struct ctx {
    const char *source;
    char *err;
    size_t err_size;
    const char *const *overrides;
    int override_count;
} ctx;

static void vappend(char *buf, size_t size, const char *fmt, va_list ap) {
    if (buf == NULL || size == 0) return;
    size_t used = strnlen(buf, size);
    if (used + 1 >= size) return;
    vsnprintf(buf + used, size - used, fmt, ap); /* truncates safely and always terminates */
}

static void append(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, size, fmt, ap);
    va_end(ap);
}

static void set_message(char *buf, size_t size, const char *fmt, ...) {
    if (buf == NULL || size == 0) return;
    buf[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, size, fmt, ap);
    va_end(ap);
}

/* snprintf into a fixed path buffer through a va_list, so that GCC's -Wformat-truncation does
 * not fire on paths that are long by the user's choice: they are cut, which only shortens a
 * message. */
static void format_path(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

static void join_key(char *out, size_t size, const char *parent, const char *key) {
    if (parent[0] == '\0')
        format_path(out, size, "%s", key);
    else
        format_path(out, size, "%s.%s", parent, key);
}

static void join_index(char *out, size_t size, const char *parent, int index) {
    format_path(out, size, "%s[%d]", parent, index);
}

static const char *type_name(const cJSON *item) {
    if (cJSON_IsString(item)) return "string";
    if (cJSON_IsNumber(item)) return "number";
    if (cJSON_IsBool(item)) return "boolean";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsArray(item)) return "array";
    if (cJSON_IsObject(item)) return "object";
    return "invalid value";
}

/* --- --set paths ---------------------------------------------------------------------------- */

/* One step of a --set path: a key ("solver") or an array index ("[2]"). */
typedef struct segment {
    char key[SEGMENT_KEY_SIZE]; /* "" for an index */
    int index;                  /* -1 for a key */
} segment;

/* Splits path[0..len) ("a.b[2].c") into segments. Returns the count, or -1 with *why set. */
static int split_path(const char *path, size_t len, segment *segs, int max, const char **why) {
    size_t i = 0;
    int n = 0;
    for (;;) {
        size_t start = i;
        while (i < len && path[i] != '.' && path[i] != '[' && path[i] != ']') ++i;
        if (i == start) {
            *why = len == 0 ? "the path is empty" : "the path has an empty key";
            return -1;
        }
        if (i - start >= SEGMENT_KEY_SIZE || n == max) {
            *why = "the path is too long";
            return -1;
        }
        memcpy(segs[n].key, path + start, i - start);
        segs[n].key[i - start] = '\0';
        segs[n++].index = -1;
        while (i < len && path[i] == '[') {
            size_t digits = ++i;
            long value = 0;
            while (i < len && path[i] >= '0' && path[i] <= '9' && value <= INT_MAX / 10)
                value = value * 10 + (path[i++] - '0');
            if (i == digits || i >= len || path[i] != ']' || value > INT_MAX) {
                *why = "an index must be written [N] with N a non-negative integer";
                return -1;
            }
            ++i;
            if (n == max) {
                *why = "the path is too long";
                return -1;
            }
            segs[n].key[0] = '\0';
            segs[n++].index = (int)value;
        }
        if (i == len) return n;
        if (path[i] != '.') {
            *why = "expected '.' or '[' after a key";
            return -1;
        }
        ++i;
    }
}

/* The canonical text of a split path, the same form the validator's messages use. */
static void join_segments(char *out, size_t size, const segment *segs, int n) {
    out[0] = '\0';
    for (int i = 0; i < n; ++i) {
        char next[JSON_PATH_SIZE];
        if (segs[i].index >= 0)
            join_index(next, sizeof next, out, segs[i].index);
        else
            join_key(next, sizeof next, out, segs[i].key);
        memcpy(out, next, size < sizeof next ? size : sizeof next);
        out[size - 1] = '\0';
    }
}

/* True when one path lies inside the other (or they are equal): an override of "a.b" explains an
 * error at "a.b.c" (inside the value it set) and an error at "a" (a cross-field check). */
static int paths_overlap(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la == lb) return strcmp(a, b) == 0;
    const char *longer = la > lb ? a : b;
    const char *shorter = la > lb ? b : a;
    size_t ls = la > lb ? lb : la;
    return strncmp(longer, shorter, ls) == 0 && (longer[ls] == '.' || longer[ls] == '[');
}

/* The last override whose path overlaps path, or NULL. */
static const char *override_for(const ctx *c, const char *path) {
    for (int i = c->override_count - 1; i >= 0; --i) {
        const char *ov = c->overrides[i];
        const char *eq = ov ? strchr(ov, '=') : NULL;
        if (eq == NULL) continue;
        segment segs[MAX_PATH_SEGMENTS];
        const char *why = NULL;
        int n = split_path(ov, (size_t)(eq - ov), segs, MAX_PATH_SEGMENTS, &why);
        if (n < 0) continue;
        char canonical[JSON_PATH_SIZE];
        join_segments(canonical, sizeof canonical, segs, n);
        if (paths_overlap(canonical, path)) return ov;
    }
    return NULL;
}

/* Writes "SOURCE: message" and, when path came from a --set, " (from --set '...')". */
static pbf_status fail(const ctx *c, pbf_status status, const char *path, const char *fmt, ...) {
    if (c->err == NULL || c->err_size == 0) return status;
    set_message(c->err, c->err_size, "%s: ", c->source);
    va_list ap;
    va_start(ap, fmt);
    vappend(c->err, c->err_size, fmt, ap);
    va_end(ap);
    const char *ov = path != NULL ? override_for(c, path) : NULL;
    if (ov != NULL) append(c->err, c->err_size, " (from --set '%s')", ov);
    return status;
}

static pbf_status out_of_memory(const ctx *c) {
    return fail(c, PBF_ERR_OUT_OF_MEMORY, NULL, "out of memory");
}

/* --- did you mean ----------------------------------------------------------------------------- */

static int min3(int a, int b, int c) {
    int m = a < b ? a : b;
    return m < c ? m : c;
}

/* Optimal string alignment distance (Levenshtein plus adjacent transpositions), so that both
 * "iteratons" and "partcile_radius" are one edit from the right key. */
static int edit_distance(const char *a, const char *b) {
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN) return INT_MAX;
    int rows[3][SUGGEST_MAX_LEN + 1];
    int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (int j = 0; j <= lb; ++j) prev[j] = j;
    for (int i = 1; i <= la; ++i) {
        cur[0] = i;
        for (int j = 1; j <= lb; ++j) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < cur[j])
                cur[j] = prev2[j - 2] + 1;
        }
        int *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* =============================================================================================
 * The schema */

/* A numeric range; a bound at ±DBL_MAX is no bound. */
typedef struct range {
    double lo, hi;
    int lo_open, hi_open; /* 1: the bound itself is outside the range */
} range;

#define ANY_VALUE                                                                                  \
    { -DBL_MAX, DBL_MAX, 0, 0 }
#define AT_LEAST(lo)                                                                               \
    { (lo), DBL_MAX, 0, 0 }
#define ABOVE(lo)                                                                                  \
    { (lo), DBL_MAX, 1, 0 }
#define CLOSED(lo, hi)                                                                             \
    { (lo), (hi), 0, 0 }
#define ABOVE_UP_TO(lo, hi)                                                                        \
    { (lo), (hi), 1, 0 }

typedef enum field_kind {
    FIELD_FLOAT,
    FIELD_INT,
    FIELD_UINT32,
    FIELD_BOOL,   /* stored as int 0/1 */
    FIELD_VEC3,   /* the range applies to every component */
    FIELD_CHOICE, /* a string naming an enum value: choices[value] */
    FIELD_OBJECT  /* a nested object described by fields[0..count) */
} field_kind;

typedef struct field {
    const char *key;
    field_kind kind;
    size_t offset; /* into the struct the table describes */
    range range;
    const char *unit;           /* for messages; "" when dimensionless */
    const char *const *choices; /* FIELD_CHOICE */
    const struct field *fields; /* FIELD_OBJECT: its table, offsets relative to offset */
    int count;                  /* FIELD_CHOICE: choices; FIELD_OBJECT: fields */
} field;

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define NUMBER(key, kind, type, member, rng, unit)                                                 \
    { key, kind, offsetof(type, member), rng, unit, NULL, NULL, 0 }
#define CHOICE(key, type, member, names)                                                           \
    { key, FIELD_CHOICE, offsetof(type, member), ANY_VALUE, "", names, NULL, COUNT_OF(names) }
#define OBJECT(key, type, member, table)                                                           \
    { key, FIELD_OBJECT, offsetof(type, member), ANY_VALUE, "", NULL, table, COUNT_OF(table) }
/* An object whose fields live in the parent's struct itself (offset 0). */
#define OBJECT_HERE(key, table)                                                                    \
    { key, FIELD_OBJECT, 0, ANY_VALUE, "", NULL, table, COUNT_OF(table) }

static const char *const NEIGHBOR_MODE_NAMES[] = {"list", "cells"};       /* by pbf_neighbor_mode */
static const char *const BACKEND_NAMES[] = {"cpu", "cuda"};               /* by pbf_backend */
static const char *const COLLIDER_NAMES[] = {"sphere", "box", "capsule"}; /* pbf_collider_type */
static const char *const FORMAT_NAMES[] = {"ply", "vtk"};                 /* bit i of pbf_format */
static const char AXIS_NAMES[3] = {'x', 'y', 'z'};

/* Ranges follow the documented ranges in pbf.h; pbf_world_create checks them again, but only the
 * scene knows the JSON path to report. */
static const field WALL_FIELDS[] = {
    NUMBER("amplitude", FIELD_FLOAT, pbf_wall_motion, amplitude, AT_LEAST(0.0), "m"),
    NUMBER("period", FIELD_FLOAT, pbf_wall_motion, period, ABOVE(0.0), "s"),
    NUMBER("phase", FIELD_FLOAT, pbf_wall_motion, phase, ANY_VALUE, "rad"),
};

/* Indexed by pbf_wall. */
static const field WALLS_FIELDS[] = {
    OBJECT("x_min", pbf_world_def, wall_motion[PBF_WALL_X_MIN], WALL_FIELDS),
    OBJECT("x_max", pbf_world_def, wall_motion[PBF_WALL_X_MAX], WALL_FIELDS),
    OBJECT("y_min", pbf_world_def, wall_motion[PBF_WALL_Y_MIN], WALL_FIELDS),
    OBJECT("y_max", pbf_world_def, wall_motion[PBF_WALL_Y_MAX], WALL_FIELDS),
    OBJECT("z_min", pbf_world_def, wall_motion[PBF_WALL_Z_MIN], WALL_FIELDS),
    OBJECT("z_max", pbf_world_def, wall_motion[PBF_WALL_Z_MAX], WALL_FIELDS),
};
_Static_assert(PBF_WALL_COUNT == 6, "WALLS_FIELDS lists six walls");

/* "walls" describes the world def itself: its entries carry the wall_motion offsets. */
static const field DOMAIN_FIELDS[] = {
    NUMBER("min", FIELD_VEC3, pbf_world_def, domain_min, ANY_VALUE, "m"),
    NUMBER("max", FIELD_VEC3, pbf_world_def, domain_max, ANY_VALUE, "m"),
    OBJECT_HERE("walls", WALLS_FIELDS),
};

/* "fluid" also has "blocks", an array handled by parse_blocks. */
static const field FLUID_FIELDS[] = {
    NUMBER("particle_radius", FIELD_FLOAT, pbf_world_def, particle_radius, ABOVE_UP_TO(0.0, 10.0),
           "m"),
    NUMBER("kernel_scale", FIELD_FLOAT, pbf_world_def, kernel_scale, CLOSED(2.5, 8.0), ""),
    NUMBER("rest_density", FIELD_FLOAT, pbf_world_def, rest_density, ABOVE(0.0), "kg/m^3"),
};
static const char *const FLUID_EXTRA_KEYS[] = {"blocks"};

static const field BLOCK_FIELDS[] = {
    NUMBER("min", FIELD_VEC3, pbf_block_def, min, ANY_VALUE, "m"),
    NUMBER("max", FIELD_VEC3, pbf_block_def, max, ANY_VALUE, "m"),
    NUMBER("velocity", FIELD_VEC3, pbf_block_def, velocity, ANY_VALUE, "m/s"),
    NUMBER("jitter", FIELD_FLOAT, pbf_block_def, jitter, CLOSED(0.0, 0.5), ""),
    NUMBER("seed", FIELD_UINT32, pbf_block_def, seed, CLOSED(0.0, 4294967295.0), ""),
};

static const field SCORR_FIELDS[] = {
    NUMBER("k", FIELD_FLOAT, pbf_solver_def, scorr_k, CLOSED(0.0, 1.0), ""),
    NUMBER("n", FIELD_INT, pbf_solver_def, scorr_n, CLOSED(1.0, 8.0), ""),
    {"dq", FIELD_FLOAT, offsetof(pbf_solver_def, scorr_dq), {0.0, 1.0, 0, 1}, "h", NULL, NULL, 0},
};

static const field CHEBYSHEV_FIELDS[] = {
    NUMBER("enabled", FIELD_BOOL, pbf_solver_def, chebyshev, ANY_VALUE, ""),
    {"rho", FIELD_FLOAT, offsetof(pbf_solver_def, chebyshev_rho), {0.0, 1.0, 0, 1}, "", NULL, NULL, 0},
    NUMBER("gamma", FIELD_FLOAT, pbf_solver_def, chebyshev_gamma, ABOVE_UP_TO(0.0, 1.0), ""),
    NUMBER("delay", FIELD_INT, pbf_solver_def, chebyshev_delay, CLOSED(0.0, 100.0), ""),
};

/* The "solver" object spans pbf_world_def.solver and the world's neighbour mode, backend and
 * threads, so its table is relative to the world def. */
static const field SOLVER_FIELDS[] = {
    NUMBER("iterations", FIELD_INT, pbf_world_def, solver.iterations, CLOSED(1.0, 1000.0), ""),
    NUMBER("relaxation", FIELD_FLOAT, pbf_world_def, solver.relaxation, CLOSED(0.0, 100.0), ""),
    NUMBER("unilateral", FIELD_BOOL, pbf_world_def, solver.unilateral, ANY_VALUE, ""),
    OBJECT("scorr", pbf_world_def, solver, SCORR_FIELDS),
    NUMBER("vorticity", FIELD_FLOAT, pbf_world_def, solver.vorticity, CLOSED(0.0, 10.0), "m/s"),
    NUMBER("xsph", FIELD_FLOAT, pbf_world_def, solver.xsph, CLOSED(0.0, 1.0), ""),
    NUMBER("cfl", FIELD_FLOAT, pbf_world_def, solver.cfl, CLOSED(0.0, 10.0), ""),
    NUMBER("target_error", FIELD_FLOAT, pbf_world_def, solver.target_error, CLOSED(0.0, 100.0),
           "%"),
    NUMBER("min_iterations", FIELD_INT, pbf_world_def, solver.min_iterations,
           CLOSED(0.0, 10000.0), ""),
    NUMBER("max_iterations", FIELD_INT, pbf_world_def, solver.max_iterations,
           CLOSED(1.0, 10000.0), ""),
    OBJECT("chebyshev", pbf_world_def, solver, CHEBYSHEV_FIELDS),
    CHOICE("neighbor_mode", pbf_world_def, neighbor_mode, NEIGHBOR_MODE_NAMES),
    CHOICE("backend", pbf_world_def, backend, BACKEND_NAMES),
    NUMBER("threads", FIELD_INT, pbf_world_def, threads, CLOSED(0.0, 1024.0), ""),
};

static const field TIME_FIELDS[] = {
    NUMBER("fps", FIELD_FLOAT, pbf_scene, fps, ABOVE(0.0), ""),
    NUMBER("frames", FIELD_INT, pbf_scene, frames, CLOSED(1.0, (double)INT_MAX), ""),
    NUMBER("substeps", FIELD_INT, pbf_scene, world.substeps, CLOSED(1.0, 1000.0), ""),
};

static const field CAMERA_FIELDS[] = {
    NUMBER("position", FIELD_VEC3, pbf_camera_def, position, ANY_VALUE, "m"),
    NUMBER("target", FIELD_VEC3, pbf_camera_def, target, ANY_VALUE, "m"),
    {"fov", FIELD_FLOAT, offsetof(pbf_camera_def, fov), {0.0, 180.0, 1, 1}, "deg", NULL, NULL, 0},
};

/* One table per collider type, indexed by pbf_collider_type: a key of another type is an error,
 * not silently ignored. */
#define COLLIDER_TYPE_FIELD CHOICE("type", pbf_collider_def, type, COLLIDER_NAMES)
static const field SPHERE_FIELDS[] = {
    COLLIDER_TYPE_FIELD,
    NUMBER("center", FIELD_VEC3, pbf_collider_def, center, ANY_VALUE, "m"),
    NUMBER("radius", FIELD_FLOAT, pbf_collider_def, radius, ABOVE(0.0), "m"),
};
static const field BOX_FIELDS[] = {
    COLLIDER_TYPE_FIELD,
    NUMBER("center", FIELD_VEC3, pbf_collider_def, center, ANY_VALUE, "m"),
    NUMBER("half_extents", FIELD_VEC3, pbf_collider_def, half_extents, ABOVE(0.0), "m"),
};
static const field CAPSULE_FIELDS[] = {
    COLLIDER_TYPE_FIELD,
    NUMBER("a", FIELD_VEC3, pbf_collider_def, a, ANY_VALUE, "m"),
    NUMBER("b", FIELD_VEC3, pbf_collider_def, b, ANY_VALUE, "m"),
    NUMBER("radius", FIELD_FLOAT, pbf_collider_def, radius, ABOVE(0.0), "m"),
};
static const field *const COLLIDER_TABLES[] = {SPHERE_FIELDS, BOX_FIELDS, CAPSULE_FIELDS};
static const int COLLIDER_TABLE_SIZES[] = {COUNT_OF(SPHERE_FIELDS), COUNT_OF(BOX_FIELDS),
                                           COUNT_OF(CAPSULE_FIELDS)};

/* --- "tool" (issue 5; docs/tool.md) ----------------------------------------------------------
 * One table per motion, like the colliders: keys of the other motion are errors. "path" (a
 * kinematic tool) and "density" (a free tool, instead of "mass") are read by parse_tool. */
_Static_assert(sizeof(pbf_tool_motion) == sizeof(int), "pbf_tool_motion must be int-sized");
_Static_assert(sizeof(pbf_tool_interpolation) == sizeof(int), "must be int-sized");
static const char *const TOOL_MOTION_NAMES[] = {"kinematic", "free"}; /* by pbf_tool_motion */
static const char *const TOOL_INTERPOLATION_NAMES[] = {"linear", "smooth"};
static const field TOOL_ADHESION_FIELDS[] = {
    NUMBER("k_tool", FIELD_FLOAT, pbf_tool_def, adhesion_k_tool, AT_LEAST(0.0), "N/m^3"),
    NUMBER("k_fluid", FIELD_FLOAT, pbf_tool_def, adhesion_k_fluid, AT_LEAST(0.0), "N/m^3"),
    NUMBER("a", FIELD_FLOAT, pbf_tool_def, adhesion_a, AT_LEAST(0.0), "m"),
    NUMBER("b", FIELD_FLOAT, pbf_tool_def, adhesion_b, ABOVE(0.0), "m"),
};
#define TOOL_MOTION_FIELD CHOICE("motion", pbf_tool_def, motion, TOOL_MOTION_NAMES)
#define TOOL_RADIUS_FIELD                                                                          \
    NUMBER("radius", FIELD_FLOAT, pbf_tool_def, radius, ABOVE_UP_TO(0.0, 10.0), "m")
#define TOOL_POSITION_FIELD NUMBER("position", FIELD_VEC3, pbf_tool_def, position, ANY_VALUE, "m")
#define TOOL_DAMPING_FIELD                                                                         \
    NUMBER("damping", FIELD_FLOAT, pbf_tool_def, damping, AT_LEAST(0.0), "kg/(m^2 s)")
static const field TOOL_KINEMATIC_FIELDS[] = {
    TOOL_MOTION_FIELD, TOOL_RADIUS_FIELD, TOOL_POSITION_FIELD,
    OBJECT_HERE("adhesion", TOOL_ADHESION_FIELDS), TOOL_DAMPING_FIELD,
};
static const char *const TOOL_KINEMATIC_EXTRA[] = {"path"};
static const field TOOL_FREE_FIELDS[] = {
    TOOL_MOTION_FIELD,
    TOOL_RADIUS_FIELD,
    TOOL_POSITION_FIELD,
    NUMBER("velocity", FIELD_VEC3, pbf_tool_def, velocity, ANY_VALUE, "m/s"),
    NUMBER("mass", FIELD_FLOAT, pbf_tool_def, mass, ABOVE(0.0), "kg"),
    NUMBER("added_mass", FIELD_FLOAT, pbf_tool_def, added_mass, CLOSED(0.0, 10.0), ""),
    OBJECT_HERE("adhesion", TOOL_ADHESION_FIELDS),
    TOOL_DAMPING_FIELD,
};
static const char *const TOOL_FREE_EXTRA[] = {"density"};
static const field TOOL_PATH_FIELDS[] = {
    CHOICE("interpolation", pbf_tool_def, interpolation, TOOL_INTERPOLATION_NAMES),
};
static const char *const TOOL_PATH_EXTRA[] = {"keys"};
static const field TOOL_KEY_FIELDS[] = {
    NUMBER("time", FIELD_FLOAT, pbf_tool_key, time, AT_LEAST(0.0), "s"),
    NUMBER("position", FIELD_VEC3, pbf_tool_key, position, ANY_VALUE, "m"),
};

/* --- "probes" (issue 6; include/pbf/probes.h) ----------------------------------------------
 * One table per type, like the colliders: a key of another type is an error. "name" is read by
 * parse_probes (a string); radius and max_gap default to 2r and h of the scene. */
_Static_assert(sizeof(pbf_probe_type) == sizeof(int), "pbf_probe_type must be int-sized");
_Static_assert(sizeof(pbf_direction) == sizeof(int), "pbf_direction must be int-sized");
static const char *const PROBE_TYPE_NAMES[] = {"height", "front", "force"}; /* pbf_probe_type */
static const char *const DIRECTION_NAMES[] = {"+x", "-x", "+y", "-y", "+z", "-z"};
#define PROBE_TYPE_FIELD CHOICE("type", pbf_probe_def, type, PROBE_TYPE_NAMES)
static const field PROBE_HEIGHT_FIELDS[] = {
    PROBE_TYPE_FIELD,
    NUMBER("position", FIELD_VEC3, pbf_probe_def, position, ANY_VALUE, "m"),
    NUMBER("radius", FIELD_FLOAT, pbf_probe_def, radius, ABOVE(0.0), "m"),
    NUMBER("max_gap", FIELD_FLOAT, pbf_probe_def, max_gap, AT_LEAST(0.0), "m"),
};
static const field PROBE_FRONT_FIELDS[] = {
    PROBE_TYPE_FIELD,
    CHOICE("direction", pbf_probe_def, direction, DIRECTION_NAMES),
    NUMBER("max_gap", FIELD_FLOAT, pbf_probe_def, max_gap, AT_LEAST(0.0), "m"),
    NUMBER("min_particles", FIELD_INT, pbf_probe_def, min_particles, CLOSED(1.0, 1000000.0), ""),
};
static const field PROBE_FORCE_FIELDS[] = {
    PROBE_TYPE_FIELD,
    NUMBER("position", FIELD_VEC3, pbf_probe_def, position, ANY_VALUE, "m"),
    CHOICE("normal", pbf_probe_def, direction, DIRECTION_NAMES),
    NUMBER("size", FIELD_VEC3, pbf_probe_def, size, AT_LEAST(0.0), "m"),
};
static const field *const PROBE_TABLES[] = {PROBE_HEIGHT_FIELDS, PROBE_FRONT_FIELDS,
                                            PROBE_FORCE_FIELDS};
static const int PROBE_TABLE_SIZES[] = {COUNT_OF(PROBE_HEIGHT_FIELDS),
                                        COUNT_OF(PROBE_FRONT_FIELDS),
                                        COUNT_OF(PROBE_FORCE_FIELDS)};
static const char *const PROBE_EXTRA_KEYS[] = {"name"};

/* The root: these entries are read and written one by one in build_scene / pbf_scene_to_json,
 * in this order; the root's other keys (name, fluid, colliders, output) are handled by hand. */
static const field ROOT_DOMAIN = OBJECT("domain", pbf_scene, world, DOMAIN_FIELDS);
static const field ROOT_GRAVITY =
    NUMBER("gravity", FIELD_VEC3, pbf_scene, world.gravity, ANY_VALUE, "m/s^2");
static const field ROOT_SOLVER = OBJECT("solver", pbf_scene, world, SOLVER_FIELDS);
static const field ROOT_CAMERA = OBJECT("camera", pbf_scene, camera, CAMERA_FIELDS);
static const field ROOT_TIME = OBJECT_HERE("time", TIME_FIELDS);
static const char *const ROOT_KEYS[] = {"name",   "domain", "fluid",  "gravity", "colliders",
                                        "solver", "time",   "camera", "output",  "tool",
                                        "probes" /* issue 6 */};
static const char *const OUTPUT_KEYS[] = {"dir", "format"};

/* =============================================================================================
 * Reading */

static const cJSON *member(const cJSON *object, const char *key) {
    return object != NULL ? cJSON_GetObjectItemCaseSensitive(object, key) : NULL;
}

static int in_list(const char *key, const field *table, int count, const char *const *extra,
                   int extra_count) {
    for (int i = 0; i < count; ++i)
        if (strcmp(key, table[i].key) == 0) return 1;
    for (int i = 0; i < extra_count; ++i)
        if (strcmp(key, extra[i]) == 0) return 1;
    return 0;
}

/* Consider one candidate for "did you mean". */
static void consider(const char *key, const char *candidate, const char **best, int *best_d) {
    int d = edit_distance(key, candidate);
    int limit = 1 + (int)strlen(candidate) / 4;
    if (d <= limit && d < (int)strlen(candidate) && d < *best_d) {
        *best = candidate;
        *best_d = d;
    }
}

/* An unknown key: names it with its full path and suggests the nearest known key, or lists the
 * known ones when none is near. */
static pbf_status unknown_key(const ctx *c, const char *path, const char *key, const field *table,
                              int count, const char *const *extra, int extra_count,
                              const char *what) {
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; i < count; ++i) consider(key, table[i].key, &best, &best_d);
    for (int i = 0; i < extra_count; ++i) consider(key, extra[i], &best, &best_d);

    char hint[JSON_PATH_SIZE * 2];
    if (best != NULL) {
        set_message(hint, sizeof hint, "did you mean '%s'?", best);
    } else {
        set_message(hint, sizeof hint, "expected one of: ");
        for (int i = 0; i < count + extra_count; ++i)
            append(hint, sizeof hint, "%s%s", i > 0 ? ", " : "",
                   i < count ? table[i].key : extra[i - count]);
    }
    char p[JSON_PATH_SIZE];
    join_key(p, sizeof p, path, key);
    return fail(c, PBF_ERR_PARSE, p, "unknown key '%s'%s%s (%s)", p, what ? " " : "",
                what ? what : "", hint);
}

/* Every key of object must be in table or extra, and appear once (cJSON keeps duplicates and
 * reads the first, which would silently ignore the second). */
static pbf_status check_keys(const ctx *c, const cJSON *object, const char *path,
                             const field *table, int count, const char *const *extra,
                             int extra_count, const char *what) {
    const cJSON *child;
    cJSON_ArrayForEach(child, object) {
        const char *key = child->string != NULL ? child->string : "";
        if (!in_list(key, table, count, extra, extra_count))
            return unknown_key(c, path, key, table, count, extra, extra_count, what);
        for (const cJSON *prev = object->child; prev != child; prev = prev->next) {
            if (prev->string != NULL && strcmp(prev->string, key) == 0) {
                char p[JSON_PATH_SIZE];
                join_key(p, sizeof p, path, key);
                return fail(c, PBF_ERR_PARSE, p, "duplicate key '%s'", p);
            }
        }
    }
    return PBF_OK;
}

static int in_range(double v, range r) {
    if (r.lo > -DBL_MAX && (r.lo_open ? !(v > r.lo) : !(v >= r.lo))) return 0;
    if (r.hi < DBL_MAX && (r.hi_open ? !(v < r.hi) : !(v <= r.hi))) return 0;
    return 1;
}

static void describe_range(char *buf, size_t size, range r) {
    int has_lo = r.lo > -DBL_MAX, has_hi = r.hi < DBL_MAX;
    if (has_lo && has_hi)
        set_message(buf, size, "in %c%.10g, %.10g%c", r.lo_open ? '(' : '[', r.lo, r.hi,
                    r.hi_open ? ')' : ']');
    else if (has_lo)
        set_message(buf, size, "%s %.10g", r.lo_open ? ">" : ">=", r.lo);
    else if (has_hi)
        set_message(buf, size, "%s %.10g", r.hi_open ? "<" : "<=", r.hi);
    else
        set_message(buf, size, "finite");
}

/* The value must be in range both as written (d) and as stored (stored: a float rounds, and
 * 1e-50 is > 0 but becomes 0.0f). */
static pbf_status check_range(const ctx *c, const char *path, const field *f, double d,
                              double stored) {
    if (in_range(d, f->range) && in_range(stored, f->range)) return PBF_OK;
    char want[96];
    describe_range(want, sizeof want, f->range);
    return fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be %s%s%s, got %.9g", path, want,
                f->unit[0] ? " " : "", f->unit, d);
}

/* A JSON number that fits a float. */
static pbf_status read_number(const ctx *c, const cJSON *item, const char *path, double *out) {
    if (!cJSON_IsNumber(item))
        return fail(c, PBF_ERR_PARSE, path, "'%s' must be a number, got %s", path, type_name(item));
    double d = item->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be a finite number that fits a float",
                    path);
    *out = d;
    return PBF_OK;
}

static pbf_status read_float(const ctx *c, const cJSON *item, const char *path, const field *f,
                             float *out) {
    double d = 0.0;
    TRY(read_number(c, item, path, &d));
    TRY(check_range(c, path, f, d, (double)(float)d));
    *out = (float)d;
    return PBF_OK;
}

/* Integers are JSON numbers with no fraction (6, 6.0 and 6e0 are all 6). The range bounds every
 * integer field within its C type. */
static pbf_status read_integer(const ctx *c, const cJSON *item, const char *path, const field *f,
                               double *out) {
    if (!cJSON_IsNumber(item))
        return fail(c, PBF_ERR_PARSE, path, "'%s' must be an integer, got %s", path,
                    type_name(item));
    double d = item->valuedouble;
    if (!isfinite(d) || d != floor(d))
        return fail(c, PBF_ERR_PARSE, path, "'%s' must be an integer, got %.9g", path, d);
    TRY(check_range(c, path, f, d, d));
    *out = d;
    return PBF_OK;
}

static pbf_status read_vec3(const ctx *c, const cJSON *item, const char *path, const field *f,
                            pbf_vec3 *out) {
    int size = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
    if (size != 3) {
        if (size < 0)
            return fail(c, PBF_ERR_PARSE, path, "'%s' must be an array of 3 numbers, got %s", path,
                        type_name(item));
        return fail(c, PBF_ERR_PARSE, path,
                    "'%s' must be an array of 3 numbers, got an array of %d", path, size);
    }
    float v[3];
    for (int i = 0; i < 3; ++i) {
        const cJSON *e = cJSON_GetArrayItem(item, i);
        if (!cJSON_IsNumber(e))
            return fail(c, PBF_ERR_PARSE, path,
                        "'%s' must be an array of 3 numbers, got a %s at [%d]", path, type_name(e),
                        i);
        char p[JSON_PATH_SIZE];
        join_index(p, sizeof p, path, i);
        TRY(read_float(c, e, p, f, &v[i]));
    }
    out->x = v[0];
    out->y = v[1];
    out->z = v[2];
    return PBF_OK;
}

static void list_choices(char *buf, size_t size, const char *const *names, int count) {
    buf[0] = '\0';
    for (int i = 0; i < count; ++i)
        append(buf, size, "%s'%s'", i == 0 ? "" : i + 1 == count ? " or " : ", ", names[i]);
}

static pbf_status read_choice(const ctx *c, const cJSON *item, const char *path, const field *f,
                              int *out) {
    char names[128];
    list_choices(names, sizeof names, f->choices, f->count);
    if (!cJSON_IsString(item))
        return fail(c, PBF_ERR_PARSE, path, "'%s' must be one of %s, got %s", path, names,
                    type_name(item));
    for (int i = 0; i < f->count; ++i) {
        if (strcmp(item->valuestring, f->choices[i]) == 0) {
            *out = i;
            return PBF_OK;
        }
    }
    return fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be one of %s, got '%s'", path, names,
                item->valuestring);
}

static pbf_status parse_object(const ctx *c, const cJSON *object, const char *path,
                               const field *table, int count, const char *const *extra,
                               int extra_count, void *base, const char *what);

/* Reads one present item into base + f->offset. */
static pbf_status read_field(const ctx *c, const cJSON *item, const char *path, const field *f,
                             void *base) {
    char *dst = (char *)base + f->offset;
    double d = 0.0;
    switch (f->kind) {
    case FIELD_FLOAT:
        return read_float(c, item, path, f, (float *)dst);
    case FIELD_INT:
        TRY(read_integer(c, item, path, f, &d));
        *(int *)dst = (int)d;
        return PBF_OK;
    case FIELD_UINT32:
        TRY(read_integer(c, item, path, f, &d));
        *(uint32_t *)dst = (uint32_t)d;
        return PBF_OK;
    case FIELD_BOOL:
        if (!cJSON_IsBool(item))
            return fail(c, PBF_ERR_PARSE, path, "'%s' must be true or false, got %s", path,
                        type_name(item));
        *(int *)dst = cJSON_IsTrue(item) ? 1 : 0;
        return PBF_OK;
    case FIELD_VEC3:
        return read_vec3(c, item, path, f, (pbf_vec3 *)dst);
    case FIELD_CHOICE:
        return read_choice(c, item, path, f, (int *)dst);
    case FIELD_OBJECT:
        return parse_object(c, item, path, f->fields, f->count, NULL, 0, dst, NULL);
    }
    return PBF_OK;
}

/* Reads f from parent (path names parent) when it is there; leaves the default otherwise. */
static pbf_status read_member(const ctx *c, const cJSON *parent, const char *path, const field *f,
                              void *base) {
    const cJSON *item = member(parent, f->key);
    if (item == NULL) return PBF_OK;
    char p[JSON_PATH_SIZE];
    join_key(p, sizeof p, path, f->key);
    return read_field(c, item, p, f, base);
}

static pbf_status expect_object(const ctx *c, const cJSON *item, const char *path) {
    if (cJSON_IsObject(item)) return PBF_OK;
    return fail(c, PBF_ERR_PARSE, path, "'%s' must be an object, got %s", path, type_name(item));
}

/* An object whose keys are table's (read here) and extra's (read by the caller). what qualifies
 * unknown-key messages ("for a sphere collider"). */
static pbf_status parse_object(const ctx *c, const cJSON *object, const char *path,
                               const field *table, int count, const char *const *extra,
                               int extra_count, void *base, const char *what) {
    TRY(expect_object(c, object, path));
    TRY(check_keys(c, object, path, table, count, extra, extra_count, what));
    for (int i = 0; i < count; ++i) TRY(read_member(c, object, path, &table[i], base));
    return PBF_OK;
}

/* The object at parent.key, or NULL when absent; an error when present but not an object. */
static pbf_status object_member(const ctx *c, const cJSON *parent, const char *key,
                                const cJSON **out) {
    *out = member(parent, key);
    return *out != NULL ? expect_object(c, *out, key) : PBF_OK;
}

static pbf_status read_string(const ctx *c, const cJSON *item, const char *path, char *out,
                              size_t size) {
    if (!cJSON_IsString(item))
        return fail(c, PBF_ERR_PARSE, path, "'%s' must be a string, got %s", path, type_name(item));
    size_t len = strlen(item->valuestring);
    if (len == 0) return fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must not be empty", path);
    if (len >= size)
        return fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be at most %zu characters, got %zu",
                    path, size - 1, len);
    memcpy(out, item->valuestring, len + 1);
    return PBF_OK;
}

/* =============================================================================================
 * Sections and cross-field checks */

/* The shortest decimal that reads back as the same float, as a double. cJSON prints it with 15
 * digits and messages with %.9g, so 0.01f shows as "0.01", not "0.009999999776482582". The check
 * goes through double because that is how the loader reads it (strtod, then a cast). */
static double short_float(float f) {
    char text[32];
    for (int digits = 6; digits <= 9; ++digits) {
        snprintf(text, sizeof text, "%.*g", digits, (double)f);
        if ((float)strtod(text, NULL) == f) break;
    }
    return strtod(text, NULL);
}

static float axis_of(pbf_vec3 v, int axis) {
    return axis == 0 ? v.x : axis == 1 ? v.y : v.z;
}

static pbf_status check_domain(const ctx *c, const pbf_world_def *w) {
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(w->domain_min, a), hi = axis_of(w->domain_max, a);
        if (!(lo < hi))
            return fail(c, PBF_ERR_INVALID_ARG, "domain",
                        "'domain.min' must be below 'domain.max' on every axis, got %c: %.9g >= "
                        "%.9g",
                        AXIS_NAMES[a], short_float(lo), short_float(hi));
    }
    return PBF_OK;
}

/* Opposite walls, at their closest, must stay two particle diameters apart: the rule (and the
 * float arithmetic) of pbf_world_create, reported here with the JSON path. Needs the radius, so
 * it runs after "fluid". */
static pbf_status check_walls(const ctx *c, const pbf_world_def *w) {
    float need = 4.0f * w->particle_radius;
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(w->domain_min, a), hi = axis_of(w->domain_max, a);
        float amp_lo = w->wall_motion[2 * a].amplitude,
              amp_hi = w->wall_motion[2 * a + 1].amplitude;
        float gap = (hi - amp_hi) - (lo + amp_lo);
        if (gap >= need) continue;
        if (amp_lo == 0.0f && amp_hi == 0.0f)
            return fail(c, PBF_ERR_INVALID_ARG, "domain",
                        "'domain' must be at least 4 * particle_radius = %.9g m wide on every "
                        "axis, got %c: %.9g m",
                        short_float(need), AXIS_NAMES[a], short_float(hi - lo));
        const char *moving = WALLS_FIELDS[amp_hi > 0.0f ? 2 * a + 1 : 2 * a].key;
        char p[JSON_PATH_SIZE];
        format_path(p, sizeof p, "domain.walls.%s.amplitude", moving);
        return fail(c, PBF_ERR_INVALID_ARG, p,
                    "'%s' is too large: the walls along %c (%.9g m apart at rest, amplitudes "
                    "%.9g and %.9g m) must stay 4 * particle_radius = %.9g m apart",
                    p, AXIS_NAMES[a], short_float(hi - lo), short_float(amp_lo),
                    short_float(amp_hi), short_float(need));
    }
    return PBF_OK;
}

/* A block must be a proper box inside the domain and hold at least one particle. */
static pbf_status check_block(const ctx *c, const char *label, const pbf_block_def *b,
                              const pbf_world_def *w) {
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(b->min, a), hi = axis_of(b->max, a);
        if (!(lo < hi))
            return fail(c, PBF_ERR_INVALID_ARG, label,
                        "'%s.min' must be below '%s.max' on every axis, got %c: %.9g >= %.9g",
                        label, label, AXIS_NAMES[a], short_float(lo), short_float(hi));
    }
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(b->min, a), hi = axis_of(b->max, a);
        float dlo = axis_of(w->domain_min, a), dhi = axis_of(w->domain_max, a);
        if (lo < dlo || hi > dhi)
            return fail(c, PBF_ERR_INVALID_ARG, label,
                        "'%s' must lie inside the domain, got %c from %.9g to %.9g, outside "
                        "[%.9g, %.9g]",
                        label, AXIS_NAMES[a], short_float(lo), short_float(hi), short_float(dlo),
                        short_float(dhi));
    }
    if (pbf_block_particle_count(b, w->particle_radius) <= 0)
        return fail(c, PBF_ERR_INVALID_ARG, label,
                    "'%s' holds no particles: each side must be at least 2 * particle_radius = "
                    "%.9g m",
                    label, short_float(2.0f * w->particle_radius));
    return PBF_OK;
}

static pbf_status parse_name(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *item = member(root, "name");
    if (item != NULL) return read_string(c, item, "name", s->name, sizeof s->name);

    /* The file's base name without ".json"; the built-in scene names itself. */
    const char *base = strrchr(c->source, '/');
    base = base != NULL ? base + 1 : c->source;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
    if (len == 0 || base[0] == '<') {
        base = "scene";
        len = 5;
    }
    if (len >= sizeof s->name) len = sizeof s->name - 1;
    memcpy(s->name, base, len);
    s->name[len] = '\0';
    return PBF_OK;
}

static pbf_status parse_blocks(const ctx *c, const cJSON *fluid, pbf_scene *s) {
    const cJSON *blocks = member(fluid, "blocks");
    if (blocks == NULL) {
        /* No "blocks" at all: one default block, still checked against the domain. */
        s->block_count = 1;
        s->blocks[0] = pbf_default_block_def();
        TRY(check_block(c, "fluid.blocks (the default block)", &s->blocks[0], &s->world));
        /* the same limit as for written blocks, or pbf_scene_to_json would write a scene that
         * does not load back (found by the fuzzer, issue 7) */
        int64_t count = pbf_block_particle_count(&s->blocks[0], s->world.particle_radius);
        if (count > MAX_PARTICLES)
            return fail(c, PBF_ERR_INVALID_ARG, "fluid.blocks",
                        "'fluid.blocks' (the default block) holds %lld particles, more than a "
                        "world can hold (%d)",
                        (long long)count, MAX_PARTICLES);
        return PBF_OK;
    }
    if (!cJSON_IsArray(blocks))
        return fail(c, PBF_ERR_PARSE, "fluid.blocks",
                    "'fluid.blocks' must be an array of objects, got %s", type_name(blocks));
    int n = cJSON_GetArraySize(blocks);
    if (n == 0)
        return fail(c, PBF_ERR_INVALID_ARG, "fluid.blocks",
                    "'fluid.blocks' is empty: a scene needs at least one block of fluid");
    if (n > PBF_SCENE_MAX_BLOCKS)
        return fail(c, PBF_ERR_INVALID_ARG, "fluid.blocks",
                    "'fluid.blocks' has %d blocks, at most %d are allowed", n,
                    PBF_SCENE_MAX_BLOCKS);
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
        char p[JSON_PATH_SIZE];
        join_index(p, sizeof p, "fluid.blocks", i);
        pbf_block_def b = pbf_default_block_def();
        TRY(parse_object(c, cJSON_GetArrayItem(blocks, i), p, BLOCK_FIELDS, COUNT_OF(BLOCK_FIELDS),
                         NULL, 0, &b, NULL));
        TRY(check_block(c, p, &b, &s->world));
        total += pbf_block_particle_count(&b, s->world.particle_radius);
        s->blocks[i] = b;
    }
    s->block_count = n;
    if (total > MAX_PARTICLES)
        return fail(c, PBF_ERR_INVALID_ARG, "fluid.blocks",
                    "'fluid.blocks' hold %lld particles, more than a world can hold (%d)",
                    (long long)total, MAX_PARTICLES);
    return PBF_OK;
}

static pbf_status parse_fluid(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *fluid = NULL;
    TRY(object_member(c, root, "fluid", &fluid));
    if (fluid != NULL)
        TRY(parse_object(c, fluid, "fluid", FLUID_FIELDS, COUNT_OF(FLUID_FIELDS), FLUID_EXTRA_KEYS,
                         COUNT_OF(FLUID_EXTRA_KEYS), &s->world, NULL));
    return parse_blocks(c, fluid, s);
}

static pbf_status parse_collider(const ctx *c, const cJSON *item, const char *path,
                                 pbf_collider_def *out) {
    TRY(expect_object(c, item, path));
    pbf_collider_def col = pbf_default_collider_def();
    /* The type decides which other keys are allowed, so it is read first. */
    TRY(read_member(c, item, path, &SPHERE_FIELDS[0], &col));
    int type = (int)col.type;
    if (type < 0 || type >= COUNT_OF(COLLIDER_TABLES))
        return fail(c, PBF_ERR_INVALID_ARG, path, "'%s.type' has no default: write it", path);
    char what[32];
    set_message(what, sizeof what, "for a %s collider", COLLIDER_NAMES[type]);
    TRY(parse_object(c, item, path, COLLIDER_TABLES[type], COLLIDER_TABLE_SIZES[type], NULL, 0,
                     &col, what));
    *out = col;
    return PBF_OK;
}

static pbf_status parse_colliders(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *list = member(root, "colliders");
    if (list == NULL) return PBF_OK;
    if (!cJSON_IsArray(list))
        return fail(c, PBF_ERR_PARSE, "colliders",
                    "'colliders' must be an array of objects, got %s", type_name(list));
    int n = cJSON_GetArraySize(list);
    if (n > PBF_SCENE_MAX_COLLIDERS)
        return fail(c, PBF_ERR_INVALID_ARG, "colliders",
                    "'colliders' has %d colliders, at most %d are allowed", n,
                    PBF_SCENE_MAX_COLLIDERS);
    for (int i = 0; i < n; ++i) {
        char p[JSON_PATH_SIZE];
        join_index(p, sizeof p, "colliders", i);
        TRY(parse_collider(c, cJSON_GetArrayItem(list, i), p, &s->colliders[i]));
    }
    s->collider_count = n;
    return PBF_OK;
}

/* --- "tool" (issue 5) ---------------------------------------------------------------------- */

/* "path": {"interpolation": "linear"|"smooth", "keys": [{"time": s, "position": [x,y,z]}, ...]}
 * with 1..PBF_TOOL_MAX_KEYS keys, each with both members, times strictly increasing. */
static pbf_status parse_tool_path(const ctx *c, const cJSON *path, pbf_tool_def *t) {
    TRY(parse_object(c, path, "tool.path", TOOL_PATH_FIELDS, COUNT_OF(TOOL_PATH_FIELDS),
                     TOOL_PATH_EXTRA, COUNT_OF(TOOL_PATH_EXTRA), t, NULL));
    const cJSON *keys = member(path, "keys");
    if (keys == NULL)
        return fail(c, PBF_ERR_PARSE, "tool.path",
                    "'tool.path' needs 'keys': an array of {\"time\": s, \"position\": [x, y, z]}");
    if (!cJSON_IsArray(keys))
        return fail(c, PBF_ERR_PARSE, "tool.path.keys",
                    "'tool.path.keys' must be an array of objects, got %s", type_name(keys));
    int n = cJSON_GetArraySize(keys);
    if (n < 1 || n > PBF_TOOL_MAX_KEYS)
        return fail(c, PBF_ERR_INVALID_ARG, "tool.path.keys",
                    "'tool.path.keys' must hold 1 to %d keys, got %d", PBF_TOOL_MAX_KEYS, n);
    for (int i = 0; i < n; ++i) {
        char p[JSON_PATH_SIZE];
        join_index(p, sizeof p, "tool.path.keys", i);
        const cJSON *key = cJSON_GetArrayItem(keys, i);
        TRY(parse_object(c, key, p, TOOL_KEY_FIELDS, COUNT_OF(TOOL_KEY_FIELDS), NULL, 0,
                         &t->keys[i], NULL));
        for (int k = 0; k < COUNT_OF(TOOL_KEY_FIELDS); ++k)
            if (member(key, TOOL_KEY_FIELDS[k].key) == NULL)
                return fail(c, PBF_ERR_PARSE, p, "'%s' needs '%s'", p, TOOL_KEY_FIELDS[k].key);
        if (i > 0 && !(t->keys[i].time > t->keys[i - 1].time)) {
            char q[JSON_PATH_SIZE];
            format_path(q, sizeof q, "%s.time", p);
            return fail(c, PBF_ERR_INVALID_ARG, q,
                        "'%s' must be after the previous key's time (%.9g s), got %.9g s", q,
                        short_float(t->keys[i - 1].time), short_float(t->keys[i].time));
        }
    }
    t->key_count = n;
    t->position = t->keys[0].position; /* the path gives the position */
    return PBF_OK;
}

/* A free tool's mass: "mass" in kg or "density" in kg/m³ (mass = density (4/3)π R³), one of
 * the two. */
static pbf_status parse_tool_mass(const ctx *c, const cJSON *item, pbf_tool_def *t) {
    const cJSON *mass = member(item, "mass"), *density = member(item, "density");
    if (mass != NULL && density != NULL)
        return fail(c, PBF_ERR_INVALID_ARG, "tool.density",
                    "give 'tool.mass' or 'tool.density', not both");
    if (mass == NULL && density == NULL)
        return fail(c, PBF_ERR_INVALID_ARG, "tool",
                    "a free tool needs 'tool.mass' (kg) or 'tool.density' (kg/m^3)");
    if (density == NULL) return PBF_OK;
    const field f = NUMBER("density", FIELD_FLOAT, pbf_tool_def, mass, ABOVE(0.0), "kg/m^3");
    float rho = 0.0f;
    TRY(read_float(c, density, "tool.density", &f, &rho));
    double r = t->radius, m = (double)rho * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
    if (!(m > 0.0) || m > FLT_MAX)
        return fail(c, PBF_ERR_INVALID_ARG, "tool.density",
                    "'tool.density' %.9g kg/m^3 gives a mass of %.9g kg, out of range",
                    (double)rho, m);
    t->mass = (float)m;
    return PBF_OK;
}

static pbf_status parse_tool(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *item = member(root, "tool");
    if (item == NULL) return PBF_OK;
    TRY(expect_object(c, item, "tool"));
    pbf_tool_def t = pbf_default_tool_def();
    /* The motion decides which other keys are allowed, so it is read first. */
    TRY(read_member(c, item, "tool", &TOOL_KINEMATIC_FIELDS[0], &t));
    const int is_free = t.motion == PBF_TOOL_FREE;
    TRY(parse_object(c, item, "tool", is_free ? TOOL_FREE_FIELDS : TOOL_KINEMATIC_FIELDS,
                     is_free ? COUNT_OF(TOOL_FREE_FIELDS) : COUNT_OF(TOOL_KINEMATIC_FIELDS),
                     is_free ? TOOL_FREE_EXTRA : TOOL_KINEMATIC_EXTRA,
                     is_free ? COUNT_OF(TOOL_FREE_EXTRA) : COUNT_OF(TOOL_KINEMATIC_EXTRA), &t,
                     is_free ? "for a free tool" : "for a kinematic tool"));
    if (!(t.adhesion_b > t.adhesion_a))
        return fail(c, PBF_ERR_INVALID_ARG, "tool.adhesion.b",
                    "'tool.adhesion.b' must be above 'tool.adhesion.a' (%.9g m), got %.9g m",
                    short_float(t.adhesion_a), short_float(t.adhesion_b));
    if (is_free) {
        TRY(parse_tool_mass(c, item, &t));
        for (int a = 0; a < 3; ++a) {
            float size = axis_of(s->world.domain_max, a) - axis_of(s->world.domain_min, a);
            if (!(size > 2.0f * t.radius))
                return fail(c, PBF_ERR_INVALID_ARG, "tool.radius",
                            "'tool.radius' %.9g m: a free tool must fit the domain, which is "
                            "%.9g m along %c",
                            short_float(t.radius), short_float(size), AXIS_NAMES[a]);
        }
    } else {
        const cJSON *path = member(item, "path");
        if (path != NULL) {
            if (member(item, "position") != NULL)
                return fail(c, PBF_ERR_INVALID_ARG, "tool.position",
                            "give 'tool.position' or 'tool.path', not both (the path's first key "
                            "is the start)");
            TRY(parse_tool_path(c, path, &t));
        }
    }
    s->has_tool = 1;
    s->tool = t;
    return PBF_OK;
}

/* The default camera looks at the domain centre from the front (+z), a little above, far enough
 * that the sphere around the target holding the whole domain fits the vertical field of view. */
static void default_camera(pbf_camera_def *cam, const pbf_world_def *w, int has_position,
                           int has_target) {
    if (!has_target) {
        cam->target.x = 0.5f * (w->domain_min.x + w->domain_max.x);
        cam->target.y = 0.5f * (w->domain_min.y + w->domain_max.y);
        cam->target.z = 0.5f * (w->domain_min.z + w->domain_max.z);
    }
    if (has_position) return;
    double radius = 0.0;
    for (int corner = 0; corner < 8; ++corner) {
        double dx = (double)((corner & 1) ? w->domain_max.x : w->domain_min.x) - cam->target.x;
        double dy = (double)((corner & 2) ? w->domain_max.y : w->domain_min.y) - cam->target.y;
        double dz = (double)((corner & 4) ? w->domain_max.z : w->domain_min.z) - cam->target.z;
        double d = sqrt(dx * dx + dy * dy + dz * dz);
        if (d > radius) radius = d;
    }
    const double pi = 3.14159265358979323846;
    double distance = radius / sin(0.5 * (double)cam->fov * pi / 180.0);
    const double up = 0.3; /* direction (0, 0.3, 1): about 17 degrees above the horizon */
    double norm = sqrt(1.0 + up * up);
    cam->position.x = cam->target.x;
    cam->position.y = (float)(cam->target.y + distance * up / norm);
    cam->position.z = (float)(cam->target.z + distance / norm);
}

static pbf_status parse_camera(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *cam = member(root, "camera");
    TRY(read_member(c, root, "", &ROOT_CAMERA, s));
    default_camera(&s->camera, &s->world, member(cam, "position") != NULL,
                   member(cam, "target") != NULL);
    pbf_vec3 p = s->camera.position, t = s->camera.target;
    if (p.x == t.x && p.y == t.y && p.z == t.z)
        return fail(c, PBF_ERR_INVALID_ARG, "camera",
                    "'camera.position' must differ from 'camera.target' (%.9g, %.9g, %.9g)",
                    short_float(t.x), short_float(t.y), short_float(t.z));
    return PBF_OK;
}

static pbf_status read_format_name(const ctx *c, const cJSON *item, const char *path,
                                   unsigned *bits) {
    field f = CHOICE("format", pbf_scene, formats, FORMAT_NAMES);
    int index = 0;
    TRY(read_choice(c, item, path, &f, &index));
    unsigned bit = 1u << index;
    if (*bits & bit)
        return fail(c, PBF_ERR_INVALID_ARG, path, "'%s': format '%s' is listed twice", path,
                    FORMAT_NAMES[index]);
    *bits |= bit;
    return PBF_OK;
}

/* "format" is an array of format names ([] writes no files) or, for --set convenience, one
 * name. */
static pbf_status parse_formats(const ctx *c, const cJSON *item, unsigned *out) {
    unsigned bits = 0;
    if (cJSON_IsString(item)) {
        TRY(read_format_name(c, item, "output.format", &bits));
    } else if (cJSON_IsArray(item)) {
        int n = cJSON_GetArraySize(item);
        for (int i = 0; i < n; ++i) {
            char p[JSON_PATH_SIZE];
            join_index(p, sizeof p, "output.format", i);
            TRY(read_format_name(c, cJSON_GetArrayItem(item, i), p, &bits));
        }
    } else {
        return fail(c, PBF_ERR_PARSE, "output.format",
                    "'output.format' must be an array of format names ('ply', 'vtk'), got %s",
                    type_name(item));
    }
    *out = bits;
    return PBF_OK;
}

static pbf_status parse_output(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *out = NULL;
    TRY(object_member(c, root, "output", &out));
    TRY(check_keys(c, out, "output", NULL, 0, OUTPUT_KEYS, COUNT_OF(OUTPUT_KEYS), NULL));
    const cJSON *dir = member(out, "dir");
    if (dir != NULL)
        TRY(read_string(c, dir, "output.dir", s->output_dir, sizeof s->output_dir));
    else
        format_path(s->output_dir, sizeof s->output_dir, "out/%s", s->name);
    const cJSON *format = member(out, "format");
    if (format != NULL) TRY(parse_formats(c, format, &s->formats));
    return PBF_OK;
}

static void scene_defaults(pbf_scene *s) {
    memset(s, 0, sizeof *s);
    s->world = pbf_default_world_def();
    s->fps = DEFAULT_FPS;
    s->frames = DEFAULT_FRAMES;
    s->camera.fov = DEFAULT_FOV;
    s->formats = PBF_FORMAT_PLY;
}

/* --- "probes" (issue 6) ---------------------------------------------------------------------- */

static pbf_status parse_probe(const ctx *c, const cJSON *item, const char *path, int index,
                              pbf_scene *s, pbf_probe_def *out) {
    TRY(expect_object(c, item, path));
    pbf_probe_def p = pbf_default_probe_def();
    p.radius = 2.0f * s->world.particle_radius;                       /* a column 2r wide */
    p.max_gap = s->world.kernel_scale * s->world.particle_radius;     /* h */
    /* The type decides which other keys are allowed, so it is read first. */
    TRY(read_member(c, item, path, &PROBE_HEIGHT_FIELDS[0], &p));
    int type = (int)p.type;
    char what[32];
    set_message(what, sizeof what, "for a %s probe", PROBE_TYPE_NAMES[type]);
    TRY(parse_object(c, item, path, PROBE_TABLES[type], PROBE_TABLE_SIZES[type], PROBE_EXTRA_KEYS,
                     COUNT_OF(PROBE_EXTRA_KEYS), &p, what));
    const cJSON *name = member(item, "name");
    char p_name[JSON_PATH_SIZE];
    join_key(p_name, sizeof p_name, path, "name");
    if (name != NULL)
        TRY(read_string(c, name, p_name, p.name, sizeof p.name));
    else
        format_path(p.name, sizeof p.name, "%s%d", PROBE_TYPE_NAMES[type], index);
    const char *field_name = "";
    char why[PBF_ERROR_SIZE];
    if (pbf_probe_check(&p, &s->world, s->colliders, s->collider_count, &field_name, why,
                        sizeof why) != PBF_OK) {
        char p_field[JSON_PATH_SIZE];
        join_key(p_field, sizeof p_field, path, field_name);
        return fail(c, PBF_ERR_INVALID_ARG, p_field, "'%s' %s", p_field, why);
    }
    for (int j = 0; j < index; ++j)
        if (strcmp(s->probes[j].name, p.name) == 0)
            return fail(c, PBF_ERR_INVALID_ARG, p_name,
                        "'%s' is '%s', already the name of probes[%d]: names must be unique "
                        "(they name the columns of probes.csv)",
                        p_name, p.name, j);
    *out = p;
    return PBF_OK;
}

/* After the fluid (r and h give the defaults) and the colliders (a force patch may lie on one). */
static pbf_status parse_probes(const ctx *c, const cJSON *root, pbf_scene *s) {
    const cJSON *list = member(root, "probes");
    if (list == NULL) return PBF_OK;
    if (!cJSON_IsArray(list))
        return fail(c, PBF_ERR_PARSE, "probes", "'probes' must be an array of objects, got %s",
                    type_name(list));
    int n = cJSON_GetArraySize(list);
    if (n > PBF_MAX_PROBES)
        return fail(c, PBF_ERR_INVALID_ARG, "probes",
                    "'probes' has %d probes, at most %d are allowed", n, PBF_MAX_PROBES);
    for (int i = 0; i < n; ++i) {
        char p[JSON_PATH_SIZE];
        join_index(p, sizeof p, "probes", i);
        TRY(parse_probe(c, cJSON_GetArrayItem(list, i), p, i, s, &s->probes[i]));
    }
    s->probe_count = n;
    return PBF_OK;
}

/* Validates the whole tree. Sections are read in dependency order: the domain before the blocks
 * that must lie inside it, the name before the output folder named after it. */
static pbf_status build_scene(const ctx *c, const cJSON *root, pbf_scene *s) {
    scene_defaults(s);
    TRY(check_keys(c, root, "", NULL, 0, ROOT_KEYS, COUNT_OF(ROOT_KEYS), NULL));
    TRY(parse_name(c, root, s));
    TRY(read_member(c, root, "", &ROOT_DOMAIN, s));
    TRY(check_domain(c, &s->world));
    TRY(parse_fluid(c, root, s));
    TRY(check_walls(c, &s->world));
    TRY(read_member(c, root, "", &ROOT_GRAVITY, s));
    TRY(parse_colliders(c, root, s));
    TRY(parse_tool(c, root, s)); /* after the domain, which a free tool must fit */
    TRY(parse_probes(c, root, s)); /* issue 6: after the fluid and the colliders */
    TRY(read_member(c, root, "", &ROOT_SOLVER, s));
    TRY(read_member(c, root, "", &ROOT_TIME, s));
    TRY(parse_camera(c, root, s));
    TRY(parse_output(c, root, s));
    return PBF_OK;
}

/* =============================================================================================
 * --set overrides */

static pbf_status fail_set(const ctx *c, pbf_status status, const char *ov, const char *fmt, ...) {
    if (c->err == NULL || c->err_size == 0) return status;
    set_message(c->err, c->err_size, "%s: --set '%s': ", c->source, ov);
    va_list ap;
    va_start(ap, fmt);
    vappend(c->err, c->err_size, fmt, ap);
    va_end(ap);
    return status;
}

/* The value as JSON, else as a string ("out/run2" needs no quotes on a command line). */
static cJSON *parse_override_value(const char *text) {
    cJSON *value = cJSON_ParseWithOpts(text, NULL, 1);
    return value != NULL ? value : cJSON_CreateString(text);
}

static const char *a_type_name(const cJSON *item) {
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsBool(item)) return "a boolean";
    return "an invalid value";
}

/* Puts value at segs[0..n) under root, creating missing objects on the way (so that
 * "camera.fov=30" works on a scene without a camera). An index must name an existing element:
 * a new block or collider would be a default one, which is never what the user meant. Takes
 * ownership of value. */
static pbf_status set_path(const ctx *c, const char *ov, cJSON *root, const segment *segs, int n,
                           cJSON *value) {
    char walked[JSON_PATH_SIZE] = "";
    cJSON *node = root;
    for (int i = 0; i < n; ++i) {
        const segment *s = &segs[i];
        int last = i + 1 == n;
        cJSON *child = NULL;
        char here[JSON_PATH_SIZE];
        if (s->index < 0) {
            join_key(here, sizeof here, walked, s->key);
            if (!cJSON_IsObject(node)) {
                cJSON_Delete(value);
                return fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                "'%s' is %s, not an object, so it has no key '%s'", walked,
                                a_type_name(node), s->key);
            }
            child = cJSON_GetObjectItemCaseSensitive(node, s->key);
            if (last) {
                int ok = child != NULL ? cJSON_ReplaceItemInObjectCaseSensitive(node, s->key, value)
                                       : cJSON_AddItemToObject(node, s->key, value);
                if (ok) return PBF_OK;
                cJSON_Delete(value);
                return out_of_memory(c);
            }
            if (child == NULL && segs[i + 1].index >= 0) {
                cJSON_Delete(value);
                return fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                "'%s' does not exist, so it has no element [%d]", here,
                                segs[i + 1].index);
            }
            if (child == NULL && (child = cJSON_AddObjectToObject(node, s->key)) == NULL) {
                cJSON_Delete(value);
                return out_of_memory(c);
            }
        } else {
            join_index(here, sizeof here, walked, s->index);
            int size = cJSON_IsArray(node) ? cJSON_GetArraySize(node) : 0;
            if (!cJSON_IsArray(node) || s->index >= size) {
                cJSON_Delete(value);
                if (!cJSON_IsArray(node))
                    return fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                    "'%s' is %s, not an array, so it has no element [%d]", walked,
                                    a_type_name(node), s->index);
                return fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                "index [%d] is past the end of '%s', which has %d element%s",
                                s->index, walked, size, size == 1 ? "" : "s");
            }
            if (last) {
                /* cannot fail: the index was checked and the array holds no key to copy */
                cJSON_ReplaceItemInArray(node, s->index, value);
                return PBF_OK;
            }
            child = cJSON_GetArrayItem(node, s->index);
        }
        memcpy(walked, here, sizeof walked);
        node = child;
    }
    cJSON_Delete(value); /* not reached: split_path never returns an empty path */
    return PBF_OK;
}

static pbf_status apply_override(const ctx *c, cJSON *root, const char *ov) {
    const char *eq = strchr(ov, '=');
    if (eq == NULL)
        return fail_set(c, PBF_ERR_INVALID_ARG, ov,
                        "expected path=value, e.g. solver.iterations=6");
    segment segs[MAX_PATH_SEGMENTS];
    const char *why = NULL;
    int n = split_path(ov, (size_t)(eq - ov), segs, MAX_PATH_SEGMENTS, &why);
    if (n < 0) return fail_set(c, PBF_ERR_INVALID_ARG, ov, "%s", why);
    cJSON *value = parse_override_value(eq + 1);
    if (value == NULL) return out_of_memory(c);
    return set_path(c, ov, root, segs, n, value);
}

static pbf_status apply_overrides(const ctx *c, cJSON *root) {
    for (int i = 0; i < c->override_count; ++i) TRY(apply_override(c, root, c->overrides[i]));
    return PBF_OK;
}

/* =============================================================================================
 * Parse entry points */

/* FILE:LINE:COL: invalid JSON near '...'. The column counts characters (UTF-8 code points). */
static pbf_status invalid_json(const ctx *c, const char *text, const char *at) {
    int line = 1, col = 1;
    for (const char *p = text; p < at && *p != '\0'; ++p) {
        if (*p == '\n') {
            ++line;
            col = 1;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            ++col;
        }
    }
    char near[32];
    size_t k = 0;
    while (at[k] != '\0' && at[k] != '\n' && at[k] != '\r' && k < 24) {
        near[k] = at[k];
        ++k;
    }
    if (at[k] != '\0' && at[k] != '\n' && at[k] != '\r') {
        /* cut: do not end on half a UTF-8 character */
        while (k > 0 && ((unsigned char)near[k - 1] & 0xC0) == 0x80) --k;
        if (k > 0 && (unsigned char)near[k - 1] >= 0xC0) --k;
    }
    near[k] = '\0';
    if (k == 0)
        set_message(c->err, c->err_size, "%s:%d:%d: invalid JSON near end of input", c->source,
                    line, col);
    else
        set_message(c->err, c->err_size, "%s:%d:%d: invalid JSON near '%s'", c->source, line, col,
                    near);
    return PBF_ERR_PARSE;
}

pbf_status pbf_scene_parse(const char *json, const char *source, const char *const *overrides,
                           int override_count, pbf_scene *out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    ctx c = {source != NULL ? source : "<string>", err, err_size, overrides, override_count};
    if (json == NULL || out == NULL || override_count < 0 || (override_count > 0 && !overrides))
        return fail(&c, PBF_ERR_INVALID_ARG, NULL,
                    "pbf_scene_parse: json and out must not be NULL, and overrides must hold "
                    "override_count strings");
    for (int i = 0; i < override_count; ++i)
        if (overrides[i] == NULL)
            return fail(&c, PBF_ERR_INVALID_ARG, NULL, "pbf_scene_parse: override %d is NULL", i);

    /* Editors on some systems start files with a UTF-8 byte order mark; JSON text must not. */
    const char *text = strncmp(json, "\xEF\xBB\xBF", 3) == 0 ? json + 3 : json;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root == NULL) return invalid_json(&c, text, end != NULL ? end : text);

    pbf_scene *scene = malloc(sizeof *scene); /* ~10 KB: not on the caller's stack */
    pbf_status status = scene == NULL ? out_of_memory(&c) : PBF_OK;
    if (status == PBF_OK && !cJSON_IsObject(root))
        status =
            fail(&c, PBF_ERR_PARSE, NULL, "a scene must be a JSON object, got %s", type_name(root));
    if (status == PBF_OK) status = apply_overrides(&c, root);
    if (status == PBF_OK) status = build_scene(&c, root, scene);
    if (status == PBF_OK) {
        format_path(scene->source, sizeof scene->source, "%s", c.source);
        *out = *scene;
    }
    free(scene);
    cJSON_Delete(root);
    return status;
}

/* Reads a whole file. The text is NUL-terminated; a NUL inside it is an error because the JSON
 * parser would stop there and silently ignore the rest. */
static pbf_status read_file(const char *path, char **out, char *err, size_t err_size) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_message(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    while (text != NULL) {
        len += fread(text + len, 1, cap - 1 - len, f);
        if (len + 1 < cap) break; /* short read: end of file or an error */
        char *bigger = realloc(text, cap * 2);
        if (bigger == NULL) {
            free(text);
            text = NULL;
            break;
        }
        text = bigger;
        cap *= 2;
    }
    int read_error = ferror(f) ? errno : 0;
    fclose(f);
    if (text == NULL) {
        set_message(err, err_size, "%s: out of memory reading the file", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    if (read_error != 0) {
        free(text);
        set_message(err, err_size, "%s: cannot read: %s", path, strerror(read_error));
        return PBF_ERR_IO;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        set_message(err, err_size, "%s: not a text file (a NUL byte at offset %zu)", path,
                    strlen(text));
        free(text);
        return PBF_ERR_PARSE;
    }
    *out = text;
    return PBF_OK;
}

pbf_status pbf_scene_load(const char *path, const char *const *overrides, int override_count,
                          pbf_scene *out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (path == NULL) {
        set_message(err, err_size, "pbf_scene_load: path must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    char *text = NULL;
    pbf_status status = read_file(path, &text, err, err_size);
    if (status != PBF_OK) return status;
    status = pbf_scene_parse(text, path, overrides, override_count, out, err, err_size);
    free(text);
    return status;
}

/* The built-in scene: the same text as scenes/dam_break.json (a test keeps them equal). */
static const char DEFAULT_SCENE_JSON[] =
    "{\n"
    "  \"name\": \"dam_break\",\n"
    "  \"domain\": {\"min\": [0, 0, 0], \"max\": [1.6, 0.8, 0.4]},\n"
    "  \"fluid\": {\n"
    "    \"particle_radius\": 0.00625,\n"
    "    \"blocks\": [{\"min\": [0, 0, 0], \"max\": [0.4, 0.6, 0.4]}]\n"
    "  },\n"
    "  \"gravity\": [0, -9.81, 0],\n"
    "  \"solver\": {\"iterations\": 4},\n"
    "  \"time\": {\"fps\": 60, \"frames\": 180, \"substeps\": 4},\n"
    "  \"camera\": {\"position\": [0.8, 1.0, 2.1], \"target\": [0.8, 0.3, 0.2], \"fov\": 45},\n"
    "  \"output\": {\"dir\": \"out/dam_break\", \"format\": [\"ply\"]}\n"
    "}\n";

const char *pbf_scene_default_json(void) {
    return DEFAULT_SCENE_JSON;
}

pbf_status pbf_scene_default(const char *const *overrides, int override_count, pbf_scene *out,
                             char *err, size_t err_size) {
    return pbf_scene_parse(DEFAULT_SCENE_JSON, "<built-in>", overrides, override_count, out, err,
                           err_size);
}

/* =============================================================================================
 * World, count */

pbf_status pbf_scene_create_world(const pbf_scene *scene, pbf_world **out, char *err,
                                  size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (out != NULL) *out = NULL;
    if (scene == NULL || out == NULL) {
        set_message(err, err_size, "pbf_scene_create_world: scene and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    /* The world's own messages name the def field; prefix the scene so the user knows where. */
    char why[PBF_ERROR_SIZE] = "";
    pbf_world *world = NULL;
    pbf_status status = pbf_world_create(&scene->world, &world, why, sizeof why);
    if (status != PBF_OK) {
        set_message(err, err_size, "%s: %s", scene->source, why);
        return status;
    }
    for (int i = 0; i < scene->block_count; ++i) {
        status = pbf_world_add_block(world, &scene->blocks[i]);
        if (status != PBF_OK) {
            set_message(err, err_size, "%s: fluid.blocks[%d]: %s", scene->source, i,
                        pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    for (int i = 0; i < scene->collider_count; ++i) {
        status = pbf_world_add_collider(world, &scene->colliders[i]);
        if (status != PBF_OK) {
            set_message(err, err_size, "%s: colliders[%d]: %s", scene->source, i,
                        pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    if (scene->has_tool) { /* the tool (issue 5), after the particles it may start among */
        status = pbf_world_set_tool(world, &scene->tool);
        if (status != PBF_OK) {
            set_message(err, err_size, "%s: tool: %s", scene->source, pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    if (scene->probe_count > 0) { /* probes (issue 6), after the colliders they may lie on */
        status = pbf_world_set_probes(world, scene->probes, scene->probe_count);
        if (status != PBF_OK) {
            set_message(err, err_size, "%s: %s", scene->source, pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    *out = world;
    return PBF_OK;
}

int64_t pbf_scene_particle_count(const pbf_scene *scene) {
    if (scene == NULL) return 0;
    int64_t total = 0;
    for (int i = 0; i < scene->block_count; ++i)
        total += pbf_block_particle_count(&scene->blocks[i], scene->world.particle_radius);
    return total;
}

/* =============================================================================================
 * Writing */

static cJSON *vec3_json(pbf_vec3 v) {
    cJSON *array = cJSON_CreateArray();
    const float c[3] = {v.x, v.y, v.z};
    for (int i = 0; array != NULL && i < 3; ++i) {
        cJSON *n = cJSON_CreateNumber(short_float(c[i]));
        if (n == NULL || !cJSON_AddItemToArray(array, n)) {
            cJSON_Delete(n);
            cJSON_Delete(array);
            array = NULL;
        }
    }
    return array;
}

static cJSON *fields_json(const field *table, int count, const void *base);

static cJSON *field_json(const field *f, const void *base) {
    const char *src = (const char *)base + f->offset;
    switch (f->kind) {
    case FIELD_FLOAT:
        return cJSON_CreateNumber(short_float(*(const float *)src));
    case FIELD_INT:
        return cJSON_CreateNumber((double)*(const int *)src);
    case FIELD_UINT32:
        return cJSON_CreateNumber((double)*(const uint32_t *)src);
    case FIELD_BOOL:
        return cJSON_CreateBool(*(const int *)src != 0);
    case FIELD_VEC3:
        return vec3_json(*(const pbf_vec3 *)src);
    case FIELD_CHOICE: {
        int v = *(const int *)src;
        /* An enum value with no name is written as its number, which the loader then rejects:
         * better than silently writing another value. */
        return v >= 0 && v < f->count ? cJSON_CreateString(f->choices[v])
                                      : cJSON_CreateNumber((double)v);
    }
    case FIELD_OBJECT:
        return fields_json(f->fields, f->count, src);
    }
    return NULL;
}

/* Adds item to object under key; on failure frees item. Returns 1 on success. */
static int add(cJSON *object, const char *key, cJSON *item) {
    if (object != NULL && item != NULL && cJSON_AddItemToObject(object, key, item)) return 1;
    cJSON_Delete(item);
    return 0;
}

static int add_field(cJSON *object, const field *f, const void *base) {
    return add(object, f->key, field_json(f, base));
}

static cJSON *fields_json(const field *table, int count, const void *base) {
    cJSON *object = cJSON_CreateObject();
    for (int i = 0; object != NULL && i < count; ++i) {
        if (!add_field(object, &table[i], base)) {
            cJSON_Delete(object);
            object = NULL;
        }
    }
    return object;
}

static cJSON *fluid_json(const pbf_scene *s) {
    cJSON *fluid = fields_json(FLUID_FIELDS, COUNT_OF(FLUID_FIELDS), &s->world);
    cJSON *blocks = cJSON_CreateArray();
    int ok = add(fluid, "blocks", blocks);
    for (int i = 0; ok && i < s->block_count; ++i) {
        cJSON *b = fields_json(BLOCK_FIELDS, COUNT_OF(BLOCK_FIELDS), &s->blocks[i]);
        ok = b != NULL && cJSON_AddItemToArray(blocks, b);
        if (!ok) cJSON_Delete(b);
    }
    if (!ok) {
        cJSON_Delete(fluid);
        fluid = NULL;
    }
    return fluid;
}

static cJSON *colliders_json(const pbf_scene *s) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; list != NULL && i < s->collider_count; ++i) {
        const pbf_collider_def *col = &s->colliders[i];
        int type = (int)col->type;
        /* an unnamed type: written through the sphere table, whose "type" writes the number */
        const int t = type >= 0 && type < COUNT_OF(COLLIDER_TABLES) ? type : 0;
        cJSON *item = fields_json(COLLIDER_TABLES[t], COLLIDER_TABLE_SIZES[t], col);
        if (item == NULL || !cJSON_AddItemToArray(list, item)) {
            cJSON_Delete(item);
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

static cJSON *output_json(const pbf_scene *s) {
    cJSON *out = cJSON_CreateObject();
    int ok = add(out, "dir", cJSON_CreateString(s->output_dir));
    cJSON *formats = ok ? cJSON_AddArrayToObject(out, "format") : NULL;
    ok = formats != NULL;
    for (int i = 0; ok && i < COUNT_OF(FORMAT_NAMES); ++i) {
        if (s->formats & (1u << i)) {
            cJSON *name = cJSON_CreateString(FORMAT_NAMES[i]);
            ok = name != NULL && cJSON_AddItemToArray(formats, name);
            if (!ok) cJSON_Delete(name);
        }
    }
    if (!ok) {
        cJSON_Delete(out);
        out = NULL;
    }
    return out;
}

/* The tool (issue 5): the table of its motion; a kinematic tool with a path writes the path
 * instead of the position. */
static cJSON *tool_json(const pbf_scene *s) {
    const pbf_tool_def *t = &s->tool;
    const int is_free = t->motion == PBF_TOOL_FREE;
    cJSON *tool = fields_json(is_free ? TOOL_FREE_FIELDS : TOOL_KINEMATIC_FIELDS,
                              is_free ? COUNT_OF(TOOL_FREE_FIELDS) : COUNT_OF(TOOL_KINEMATIC_FIELDS),
                              t);
    if (tool == NULL || is_free || t->key_count <= 0) return tool;
    cJSON_DeleteItemFromObjectCaseSensitive(tool, "position");
    cJSON *path = fields_json(TOOL_PATH_FIELDS, COUNT_OF(TOOL_PATH_FIELDS), t);
    cJSON *keys = cJSON_CreateArray();
    int ok = add(tool, "path", path) && add(path, "keys", keys);
    for (int i = 0; ok && i < t->key_count && i < PBF_TOOL_MAX_KEYS; ++i) {
        cJSON *key = fields_json(TOOL_KEY_FIELDS, COUNT_OF(TOOL_KEY_FIELDS), &t->keys[i]);
        ok = key != NULL && cJSON_AddItemToArray(keys, key);
        if (!ok) cJSON_Delete(key);
    }
    if (!ok) {
        cJSON_Delete(tool);
        tool = NULL;
    }
    return tool;
}

/* Probes (issue 6): each with the table of its type, its name second. */
static cJSON *probes_json(const pbf_scene *s) {
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; list != NULL && i < s->probe_count && i < PBF_MAX_PROBES; ++i) {
        const pbf_probe_def *p = &s->probes[i];
        const int t = (int)p->type >= 0 && (int)p->type < COUNT_OF(PROBE_TABLES) ? (int)p->type : 0;
        cJSON *item = cJSON_CreateObject();
        int ok = add_field(item, &PROBE_TABLES[t][0], p) &&
                 add(item, "name", cJSON_CreateString(p->name));
        for (int k = 1; ok && k < PROBE_TABLE_SIZES[t]; ++k)
            ok = add_field(item, &PROBE_TABLES[t][k], p);
        if (!ok || !cJSON_AddItemToArray(list, item)) {
            cJSON_Delete(item);
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

char *pbf_scene_to_json(const pbf_scene *scene) {
    if (scene == NULL) return NULL;
    cJSON *root = cJSON_CreateObject();
    /* The same order as the documentation and the shipped scenes. */
    int ok = add(root, "name", cJSON_CreateString(scene->name)) &&
             add_field(root, &ROOT_DOMAIN, scene) && add(root, "fluid", fluid_json(scene)) &&
             add_field(root, &ROOT_GRAVITY, scene) &&
             add(root, "colliders", colliders_json(scene)) &&
             (!scene->has_tool || add(root, "tool", tool_json(scene))) &&
             add_field(root, &ROOT_SOLVER, scene) && add_field(root, &ROOT_TIME, scene) &&
             add_field(root, &ROOT_CAMERA, scene) && add(root, "output", output_json(scene)) &&
             (scene->probe_count == 0 || add(root, "probes", probes_json(scene)));
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}
