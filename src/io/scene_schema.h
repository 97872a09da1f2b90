/* pbf — the scene schema's types, shared by the scene loader's files (private to src/io).
 *
 * A scene section is a table of keys (scene_key). Each key names its JSON key, its type, where
 * its value goes (an offset into the struct the table describes), its range, unit and one line of
 * documentation. Defaults are not written here: a table that creates a struct (the root, a list
 * element, an optional object) fills it from the library's pbf_default_*_def functions, and every
 * key's default is whatever that struct then holds. The tables themselves are in scene_keys.c.
 *
 * Who reads the tables:
 *   scene_read.c    JSON -> pbf_scene: types, ranges, unknown keys with did-you-mean, lists
 *   scene_write.c   pbf_scene -> JSON (pbf_scene_to_json), in table order
 *   scene_doc.c     the key reference (pbf_scene_keys: `pbf info --scene-keys`, docs/scenes.md)
 *   scene_rules.c   what a table cannot say: computed defaults and cross-field checks (hooks)
 *
 * Files from the bottom up: scene_report.c (messages, JSON paths) <- scene_set.c (--set),
 * scene_values.c (one JSON value) <- scene_rules.c <- scene_keys.c (data) <- scene_read.c,
 * scene_write.c, scene_doc.c <- scene.c (the public entry points). No file calls one above it;
 * the walkers reach the hooks only through the tables. */
#ifndef PBF_IO_SCENE_SCHEMA_H
#define PBF_IO_SCENE_SCHEMA_H

#include <cjson/cJSON.h>
#include <float.h>
#include <stddef.h>

#include "pbf/scene.h"

/* ---------------------------------------------------------------------------------------------
 * Keys and tables */

/* A numeric range; a bound at ±DBL_MAX is no bound. For a list it bounds the element count. */
typedef struct scene_range {
    double lo, hi;
    int lo_open, hi_open; /* 1: the bound itself is outside the range */
} scene_range;

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
#define HALF_OPEN(lo, hi) /* [lo, hi) */                                                           \
    { (lo), (hi), 0, 1 }
#define OPEN(lo, hi)                                                                               \
    { (lo), (hi), 1, 1 }

typedef enum scene_kind {
    SCENE_FLOAT, /* float */
    SCENE_INT, /* int; the range keeps it within int */
    SCENE_UINT32, /* uint32_t */
    SCENE_BOOL, /* int 0/1, written true/false */
    SCENE_VEC3, /* pbf_vec3, [x, y, z]; the range applies to every component */
    SCENE_CHOICE, /* an int-sized enum, written as names[value] */
    SCENE_FLAGS, /* an unsigned bit set, written as a list of names[bit]; one name alone is read
                       too */
    SCENE_STRING, /* a char array of `size` bytes: 1 to size-1 characters */
    SCENE_OBJECT, /* a nested object: table, describing the struct at base + offset */
    SCENE_OPTIONAL, /* an object that may be absent: table, at base + offset; flag (int) set to 1
                       when present */
    SCENE_LIST /* an array of objects: table per element, elem_size bytes apart from base +
                       offset; their number in the int at base + count; range bounds the count */
} scene_kind;

typedef struct scene_key scene_key;
typedef struct scene_table scene_table;

/* Where messages go and what they name. overrides are kept so that an error on a path that a
 * --set touched can say so (the user otherwise looks for the typo in the file). */
typedef struct scene_ctx {
    const char *source;
    char *err;
    size_t err_size;
    const char *const *overrides;
    int override_count;
    pbf_scene *scene; /* the scene being read: hooks look at sections read before theirs */
} scene_ctx;

/* A table hook (scene_rules.c). object is the JSON object (NULL when the key is absent: a
 * section's hooks run then too, so that computed defaults are set), path its JSON path, base the
 * struct the table describes, index the element's index in its list (-1 outside a list). */
typedef pbf_status (*scene_hook)(const scene_ctx *c, const cJSON *object, const char *path,
                                 void *base, int index);
/* Reads a present key instead of the generic code; parent is the object holding it. */
typedef pbf_status (*scene_key_reader)(const scene_ctx *c, const scene_key *key, const cJSON *item,
                                       const cJSON *parent, const char *path, void *base);
/* Whether a key is written by pbf_scene_to_json (NULL: always). */
typedef int (*scene_key_written)(const void *base);

struct scene_key {
    const char *name;
    scene_kind kind;
    size_t offset; /* into the struct the table describes */
    scene_range range;
    const char *unit; /* SI, in messages and in the docs; "" when dimensionless */
    const char *doc; /* one line for the key reference; NULL: an object with no row */
    const char *default_doc; /* the default in words, where it is computed or absent */
    const char *const *names; /* SCENE_CHOICE, SCENE_FLAGS */
    int name_count;
    const scene_table *table; /* SCENE_OBJECT, SCENE_OPTIONAL, SCENE_LIST */
    size_t size; /* SCENE_STRING: the array; SCENE_LIST: one element; SCENE_OPTIONAL:
                                 the struct */
    size_t count; /* SCENE_LIST: offset of the count; SCENE_OPTIONAL: of the flag */
    const char *too_few; /* SCENE_LIST: the message below the range's minimum, after
                                 "'PATH' "; NULL: "must hold MIN to MAX NAME, got N" */
    int required; /* an error when absent from its (present) object */
    scene_key_reader read; /* NULL: the generic reader of its kind */
    scene_key_written written;
};

struct scene_table {
    const scene_key *keys;
    int count;
    /* Typed objects (colliders, probes, the tool): one table per type. The first key of every
     * variant is the type, a SCENE_CHOICE indexing variants; it is read first and picks the table
     * for the other keys, so a key of another type is an error, not silently ignored. */
    const scene_table *const *variants;
    int variant_count;
    const char *what; /* a variant: "for a sphere collider", in unknown-key messages */
    void (*defaults)(void *base); /* fills a new struct: the root, list elements, optional */
    scene_hook init; /* before the keys are read */
    scene_hook check; /* after they are read */
    /* The key reference lists this table under its own heading (docs/scenes.md markers), not
     * inside its parent's. */
    int own_doc_table;
    /* A table of objects that all have the same table (domain.walls): the reference shows them
     * once, under this placeholder ("W"). */
    const char *each;
};

#define COUNT_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* One key, one line. type is the struct the table describes, member the field; the last
 * argument is the key's one-line documentation, optionally followed by more fields:
 *     KEY_FLOAT("fov", pbf_scene, camera.fov, OPEN(0.0, 180.0), "deg", "vertical field of view"),
 *     KEY_VEC3("target", pbf_scene, camera.target, ANY_VALUE, "m", "the point looked at",
 *              .default_doc = "the domain centre"),
 * (the documentation is part of the variable arguments so that a key with no extra fields still
 * gives the macro one, as ISO C wants). */
/* (each macro spells its initializer out: a range handed on to another macro would be split at
 * its commas) */
#define KEY_FLOAT(key, type, member, rng, unit_, ...)                                              \
    {                                                                                              \
        .name = key, .kind = SCENE_FLOAT, .offset = offsetof(type, member), .range = rng,          \
        .unit = unit_, .doc = __VA_ARGS__                                                          \
    }
#define KEY_INT(key, type, member, rng, ...)                                                       \
    {                                                                                              \
        .name = key, .kind = SCENE_INT, .offset = offsetof(type, member), .range = rng,            \
        .unit = "", .doc = __VA_ARGS__                                                             \
    }
#define KEY_UINT32(key, type, member, rng, ...)                                                    \
    {                                                                                              \
        .name = key, .kind = SCENE_UINT32, .offset = offsetof(type, member), .range = rng,         \
        .unit = "", .doc = __VA_ARGS__                                                             \
    }
#define KEY_VEC3(key, type, member, rng, unit_, ...)                                               \
    {                                                                                              \
        .name = key, .kind = SCENE_VEC3, .offset = offsetof(type, member), .range = rng,           \
        .unit = unit_, .doc = __VA_ARGS__                                                          \
    }
#define KEY_BOOL(key, type, member, ...)                                                           \
    {                                                                                              \
        .name = key, .kind = SCENE_BOOL, .offset = offsetof(type, member), .range = ANY_VALUE,     \
        .unit = "", .doc = __VA_ARGS__                                                             \
    }
/* names: a static array of strings, indexed by the enum value (CHOICE) or the bit (FLAGS). */
#define KEY_CHOICE(key, type, member, names_, ...)                                                 \
    {                                                                                              \
        .name = key, .kind = SCENE_CHOICE, .offset = offsetof(type, member), .range = ANY_VALUE,   \
        .unit = "", .names = names_, .name_count = COUNT_OF(names_), .doc = __VA_ARGS__            \
    }
#define KEY_FLAGS(key, type, member, names_, ...)                                                  \
    {                                                                                              \
        .name = key, .kind = SCENE_FLAGS, .offset = offsetof(type, member), .range = ANY_VALUE,    \
        .unit = "", .names = names_, .name_count = COUNT_OF(names_), .doc = __VA_ARGS__            \
    }
/* member: a char array. */
#define KEY_STRING(key, type, member, ...)                                                         \
    {                                                                                              \
        .name = key, .kind = SCENE_STRING, .offset = offsetof(type, member), .range = ANY_VALUE,   \
        .unit = "", .size = sizeof(((type *)0)->member), .doc = __VA_ARGS__                        \
    }
/* A nested object whose keys are fields of the same struct: its table uses the parent's type. */
#define KEY_SECTION(key, table_, ...)                                                              \
    {                                                                                              \
        .name = key, .kind = SCENE_OBJECT, .offset = 0, .range = ANY_VALUE, .unit = "",            \
        .table = &table_, .doc = __VA_ARGS__                                                       \
    }
/* A nested object describing a member struct (its table uses the member's type). */
#define KEY_OBJECT(key, type, member, table_, ...)                                                 \
    {                                                                                              \
        .name = key, .kind = SCENE_OBJECT, .offset = offsetof(type, member), .range = ANY_VALUE,   \
        .unit = "", .table = &table_, .doc = __VA_ARGS__                                           \
    }
/* member: an array of structs described by table_; count_member: the int holding their number;
 * rng: how many there may be. */
#define KEY_LIST(key, type, member, count_member, rng, table_, ...)                                \
    {                                                                                              \
        .name = key, .kind = SCENE_LIST, .offset = offsetof(type, member), .range = rng,           \
        .unit = "", .table = &table_, .size = sizeof(((type *)0)->member[0]),                      \
        .count = offsetof(type, count_member), .doc = __VA_ARGS__                                  \
    }
/* member: a struct described by table_, read only when the key is there; flag_member: an int set
 * to 1 then. */
#define KEY_OPTIONAL(key, type, member, flag_member, table_, ...)                                  \
    {                                                                                              \
        .name = key, .kind = SCENE_OPTIONAL, .offset = offsetof(type, member), .range = ANY_VALUE, \
        .unit = "", .table = &table_, .size = sizeof(((type *)0)->member),                         \
        .count = offsetof(type, flag_member), .doc = __VA_ARGS__                                   \
    }

#define TABLE(keys_) .keys = keys_, .count = COUNT_OF(keys_)

/* The root table: every section (scene_keys.c). */
extern const scene_table scene_root_table;

/* Fills out from the root's defaults, then reads root (a JSON object) into it through the tables
 * (scene_read.c). */
pbf_status scene_read(const scene_ctx *c, const cJSON *root, pbf_scene *out);
/* Applies c's --set overrides to the tree, in order (scene_set.c). */
pbf_status scene_apply_overrides(const scene_ctx *c, cJSON *root);

/* ---------------------------------------------------------------------------------------------
 * Messages and JSON paths (scene_report.c) */

#define JSON_PATH_SIZE 256 /* "fluid.blocks[12].velocity" and friends; longer is truncated */

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        pbf_status try_status_ = (expr);                                                           \
        if (try_status_ != PBF_OK) return try_status_;                                             \
    } while (0)

void scene_set_message(char *buf, size_t size, const char *fmt, ...);
void scene_append(char *buf, size_t size, const char *fmt, ...);
/* snprintf into a path buffer: cut when long, which only shortens a message. */
void scene_format_path(char *out, size_t size, const char *fmt, ...);
void scene_join_key(char *out, size_t size, const char *parent, const char *key);
void scene_join_index(char *out, size_t size, const char *parent, int index);
const char *scene_type_name(const cJSON *item); /* "string", "number", ... */
/* Writes "SOURCE: message" and, when path came from a --set, " (from --set '...')". path may be
 * NULL. Returns status. */
pbf_status scene_fail(const scene_ctx *c, pbf_status status, const char *path, const char *fmt,
                      ...);
pbf_status scene_out_of_memory(const scene_ctx *c);
/* "SOURCE: --set 'OV': message". */
pbf_status scene_fail_set(const scene_ctx *c, pbf_status status, const char *ov, const char *fmt,
                          ...);
/* The member key of object, or NULL (also when object is NULL). */
const cJSON *scene_member(const cJSON *object, const char *key);
/* Optimal string alignment distance, INT_MAX for keys too long to suggest. */
int scene_edit_distance(const char *a, const char *b);

/* One step of a --set path: a key ("solver") or an array index ("[2]"). */
#define SCENE_SEGMENT_KEY_SIZE 128
#define SCENE_MAX_PATH_SEGMENTS 32
typedef struct scene_segment {
    char key[SCENE_SEGMENT_KEY_SIZE]; /* "" for an index */
    int index; /* -1 for a key */
} scene_segment;
/* Splits path[0..len) ("a.b[2].c"). Returns the count, or -1 with *why set. */
int scene_split_path(const char *path, size_t len, scene_segment *segs, int max, const char **why);

/* ---------------------------------------------------------------------------------------------
 * One JSON value (scene_values.c) */

/* Reads item, a present value of a scalar kind (not an object or a list), into base + offset. */
pbf_status scene_read_value(const scene_ctx *c, const scene_key *key, const cJSON *item,
                            const char *path, void *base);
/* A number within key's range (as written and as a float). */
pbf_status scene_read_float(const scene_ctx *c, const scene_key *key, const cJSON *item,
                            const char *path, float *out);
/* The shortest decimal that reads back as the same float, as a double. */
double scene_short_float(float f);
/* "(0, 10]", "> 0", ">= 0", "finite": the range in messages and docs. */
void scene_describe_range(char *buf, size_t size, scene_range r);

#endif /* PBF_IO_SCENE_SCHEMA_H */
