/* The scene keys that set a member of the world def (pbf_scene.world) against the member's row of
 * src/core/def_fields.h: a key must take what the world takes.
 *
 * The two ranges are written apart on purpose. The scene checks a key when it reads it, in
 * double, so that its message names the JSON path and the range as written ("'solver.
 * impulse_blend' must be in [0, 0.9]"); the world checks the member again in validate_def, in
 * float, from def_fields.h, whose bounds are float literals (0.9f). A scene range made from the
 * rows would be the float's double, 0.8999999762: the key would refuse 0.9 and print that number,
 * and rest_density's FLT_MAX would print where the scene says "> 0". So the test walks the scene's
 * tables (src/io/scene_keys.c) instead, and for every key that writes a checked row compares:
 *   - a float key: the bounds as floats (what the world compares), the same ends open; a bound
 *     the scene leaves out (±DBL_MAX) is ±FLT_MAX, the most a scene number may be (scene_values.c);
 *   - an int key (an integer, a bool or a choice): the same set of integers, the bool's {0, 1}
 *     and a choice's 0 to count - 1 included.
 * Rows the world checks by hand (UNCHECKED: vectors, the walls' motion, the phases, checks across
 * members) are left to the tests of those. Every checked row needs a scene key, except the ones
 * named in ELSEWHERE below. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "def_fields.h"
#include "io/scene_schema.h"
#include "test.h"

/* ---- the rows, with their ranges as data ------------------------------------------------------ */

typedef enum row_range { ROW_INTERVAL, ROW_EITHER, ROW_UNCHECKED } row_range;

typedef struct def_row {
    const char *member;
    size_t offset, bytes; /* in pbf_world_def */
    int is_float; /* F32; the other checked rows are I32 */
    row_range range;
    double lo, hi; /* ROW_EITHER: the two values */
    int lo_open, hi_open;
} def_row;

/* scene_schema.h's range macros make scene_range initializers; def_fields.h's, here, row data. */
#undef CLOSED
#undef OPEN
#undef ABOVE_UP_TO
#undef HALF_OPEN
#define CLOSED(lo, hi) ROW_INTERVAL, (lo), (hi), 0, 0
#define OPEN(lo, hi) ROW_INTERVAL, (lo), (hi), 1, 1
#define ABOVE_UP_TO(lo, hi) ROW_INTERVAL, (lo), (hi), 1, 0
#define HALF_OPEN(lo, hi) ROW_INTERVAL, (lo), (hi), 0, 1
#define EITHER(a, b) ROW_EITHER, (a), (b), 0, 0
#define UNCHECKED ROW_UNCHECKED, 0, 0, 0, 0
#define IS_FLOAT_F32 1
#define IS_FLOAT_I32 0
#define IS_FLOAT_VEC3 1
#define IS_FLOAT_WALLS 1
#define IS_FLOAT_PHASES 1
#define ROW(kind, member, since, old, dflt, range_, expected)                                      \
    {#member, offsetof(pbf_world_def, member), PBF_DEF_BYTES_##kind, IS_FLOAT_##kind, range_},

static const def_row ROWS[] = {PBF_DEF_FIELDS(ROW)};
#define ROW_COUNT COUNT_OF(ROWS)

/* Checked rows with no scene key of their own: the scene sets them another way. */
static const char *const ELSEWHERE[] = {
    "phase_count", /* the length of the materials list (checked below) */
};

static int elsewhere(const char *member) {
    for (int i = 0; i < COUNT_OF(ELSEWHERE); ++i)
        if (strcmp(member, ELSEWHERE[i]) == 0) return 1;
    return 0;
}

/* ---- the comparisons ------------------------------------------------------------------------- */

/* The integers lo..hi a range takes. */
typedef struct int_set {
    double lo, hi;
} int_set;

static int_set ints_of(double lo, double hi, int lo_open, int hi_open) {
    int_set s = {lo_open ? floor(lo) + 1.0 : ceil(lo), hi_open ? ceil(hi) - 1.0 : floor(hi)};
    return s;
}

/* What an int key takes: 0 or 1 for a bool, an index for a choice, the range for an integer. */
static int key_ints(const scene_key *k, int_set *out) {
    switch (k->kind) {
    case SCENE_BOOL: *out = (int_set){0.0, 1.0}; return 1;
    case SCENE_CHOICE: *out = (int_set){0.0, (double)(k->name_count - 1)}; return 1;
    case SCENE_INT:
        *out = ints_of(k->range.lo, k->range.hi, k->range.lo_open, k->range.hi_open);
        return 1;
    default: return 0;
    }
}

/* What an I32 row takes; 0 when it is two values apart (no scene kind reads those). */
static int row_ints(const def_row *r, int_set *out) {
    if (r->range == ROW_EITHER) {
        if (fabs(r->hi - r->lo) != 1.0) return 0;
        *out = (int_set){fmin(r->lo, r->hi), fmax(r->lo, r->hi)};
        return 1;
    }
    *out = ints_of(r->lo, r->hi, r->lo_open, r->hi_open);
    return 1;
}

/* A scene bound as the world's float bound: past ±FLT_MAX no scene number gets in. */
static float as_float_bound(double b) { return (float)fmax(-FLT_MAX, fmin(FLT_MAX, b)); }

/* Whether key (at JSON path) takes what row takes; prints why not. */
static int agrees(const char *path, const scene_key *k, const def_row *r) {
    if (r->is_float) {
        if (k->kind != SCENE_FLOAT) {
            fprintf(stderr, "'%s' -> %s: a float member, read by a key that is not a float\n", path,
                    r->member);
            return 0;
        }
        /* no bound is no bound: closed at ±FLT_MAX, where read_number stops */
        int lo_open = k->range.lo > -DBL_MAX ? k->range.lo_open : 0;
        int hi_open = k->range.hi < DBL_MAX ? k->range.hi_open : 0;
        if (as_float_bound(k->range.lo) == (float)r->lo && lo_open == r->lo_open &&
            as_float_bound(k->range.hi) == (float)r->hi && hi_open == r->hi_open)
            return 1;
        fprintf(stderr,
                "'%s' -> %s: the scene takes %c%.9g, %.9g%c, the world (def_fields.h) "
                "%c%.9g, %.9g%c\n",
                path, r->member, lo_open ? '(' : '[', (double)as_float_bound(k->range.lo),
                (double)as_float_bound(k->range.hi), hi_open ? ')' : ']', r->lo_open ? '(' : '[',
                r->lo, r->hi, r->hi_open ? ')' : ']');
        return 0;
    }
    int_set want, got;
    if (!row_ints(r, &want)) {
        fprintf(stderr,
                "'%s' -> %s: EITHER(%.0f, %.0f) is not two neighbouring integers; teach "
                "this test how a scene key reads it\n",
                path, r->member, r->lo, r->hi);
        return 0;
    }
    if (!key_ints(k, &got)) {
        fprintf(stderr,
                "'%s' -> %s: an int member, read by a key that is not an int, bool or "
                "choice\n",
                path, r->member);
        return 0;
    }
    if (got.lo == want.lo && got.hi == want.hi) return 1;
    fprintf(stderr,
            "'%s' -> %s: the scene takes %.0f to %.0f, the world (def_fields.h) %.0f to %.0f\n",
            path, r->member, got.lo, got.hi, want.lo, want.hi);
    return 0;
}

/* ---- the walk -------------------------------------------------------------------------------- */

typedef struct walk {
    int keys[ROW_COUNT]; /* scene keys found per row */
    int checked, failures;
} walk;

/* The row holding byte offset m of pbf_world_def, or -1. */
static int row_at(size_t m) {
    for (int i = 0; i < ROW_COUNT; ++i)
        if (m >= ROWS[i].offset && m < ROWS[i].offset + ROWS[i].bytes) return i;
    return -1;
}

/* The keys of table, describing the part of pbf_scene at base; sections and nested objects are
 * parts of it too. Lists and the optional objects are other structs (the materials, the tool),
 * which scene_rules.c turns into world members by hand. */
static void walk_table(walk *w, const scene_table *t, size_t base, const char *parent) {
    const size_t world = offsetof(pbf_scene, world);
    for (int i = 0; i < t->count; ++i) {
        const scene_key *k = &t->keys[i];
        char path[JSON_PATH_SIZE];
        if (parent[0] != '\0')
            snprintf(path, sizeof path, "%s.%s", parent, k->name);
        else
            snprintf(path, sizeof path, "%s", k->name);
        size_t at = base + k->offset;
        if (k->kind == SCENE_OBJECT) {
            walk_table(w, k->table, at, path);
            continue;
        }
        if (k->kind == SCENE_LIST || k->kind == SCENE_OPTIONAL) continue;
        if (at < world || at >= world + sizeof(pbf_world_def)) continue;
        int r = row_at(at - world);
        if (r < 0) {
            fprintf(stderr, "'%s': writes byte %zu of pbf_world_def, in no row of def_fields.h\n",
                    path, at - world);
            ++w->failures;
            continue;
        }
        ++w->keys[r];
        if (ROWS[r].range == ROW_UNCHECKED) continue;
        if (at - world != ROWS[r].offset) {
            fprintf(stderr, "'%s': writes inside %s, not the member\n", path, ROWS[r].member);
            ++w->failures;
            continue;
        }
        ++w->checked;
        if (!agrees(path, k, &ROWS[r])) ++w->failures;
    }
}

static const scene_key *root_key(const char *name) {
    for (int i = 0; i < scene_root_table.count; ++i)
        if (strcmp(scene_root_table.keys[i].name, name) == 0) return &scene_root_table.keys[i];
    return NULL;
}

static int test_scene_ranges_match_def_fields(void) {
    walk w = {{0}, 0, 0};
    walk_table(&w, &scene_root_table, 0, "");
    for (int i = 0; i < ROW_COUNT; ++i) {
        if (ROWS[i].range == ROW_UNCHECKED || w.keys[i] > 0 || elsewhere(ROWS[i].member)) continue;
        fprintf(stderr,
                "%s: a checked row of def_fields.h with no scene key (add one to "
                "src/io/scene_keys.c, or name it in ELSEWHERE here)\n",
                ROWS[i].member);
        ++w.failures;
    }
    printf("  %d scene keys checked against def_fields.h\n", w.checked);
    ENSURE(w.failures == 0);
    /* every checked row but those set elsewhere, each by one key at least */
    ENSURE(w.checked >= 35);
    return 0;
}

/* phase_count comes from the number of materials: the list's bounds are the row's. */
static int test_materials_count_matches_phase_count(void) {
    const scene_key *k = root_key("materials");
    ENSURE(k != NULL && k->kind == SCENE_LIST);
    int r = row_at(offsetof(pbf_world_def, phase_count));
    ENSURE(r >= 0 && strcmp(ROWS[r].member, "phase_count") == 0);
    return agrees("materials (its length)", &(scene_key){.kind = SCENE_INT, .range = k->range},
                  &ROWS[r])
               ? 0
               : 1;
}

TEST_MAIN_BEGIN
RUN_TEST(test_scene_ranges_match_def_fields);
RUN_TEST(test_materials_count_matches_phase_count);
TEST_MAIN_END
