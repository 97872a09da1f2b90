/* pbf — reading a scene's JSON tree through the schema tables (scene_keys.c).
 *
 * One walk over the tree: every object is checked against its table (an unknown key is an error
 * with the nearest known key, or the list of them; a key twice is an error), every present key
 * is read by its kind, absent keys keep the defaults the struct was filled with, and the tables'
 * hooks (scene_rules.c) set computed defaults and check across keys. */
#include <limits.h>
#include <string.h>

#include "scene_schema.h"

static pbf_status read_object(const scene_ctx *c, const cJSON *object, const char *path,
                              const scene_table *t, void *base, int index);

/* --- unknown and duplicate keys --------------------------------------------------------------- */

static int known(const char *key, const scene_table *t) {
    for (int i = 0; i < t->count; ++i)
        if (strcmp(key, t->keys[i].name) == 0) return 1;
    return 0;
}

/* An unknown key: names it with its full path and suggests the nearest known key (at most about
 * one edit in four characters away), or lists the known ones when none is near. */
static pbf_status unknown_key(const scene_ctx *c, const char *path, const char *key,
                              const scene_table *t) {
    const char *best = NULL;
    int best_d = INT_MAX;
    for (int i = 0; i < t->count; ++i) {
        const char *candidate = t->keys[i].name;
        int d = scene_edit_distance(key, candidate);
        int limit = 1 + (int)strlen(candidate) / 4;
        if (d <= limit && d < (int)strlen(candidate) && d < best_d) {
            best = candidate;
            best_d = d;
        }
    }
    char hint[JSON_PATH_SIZE * 2];
    if (best != NULL) {
        scene_set_message(hint, sizeof hint, "did you mean '%s'?", best);
    } else {
        scene_set_message(hint, sizeof hint, "expected one of: ");
        for (int i = 0; i < t->count; ++i)
            scene_append(hint, sizeof hint, "%s%s", i > 0 ? ", " : "", t->keys[i].name);
    }
    char p[JSON_PATH_SIZE];
    scene_join_key(p, sizeof p, path, key);
    return scene_fail(c, PBF_ERR_PARSE, p, "unknown key '%s'%s%s (%s)", p, t->what ? " " : "",
                      t->what ? t->what : "", hint);
}

/* Every key of object must be in the table, and appear once (cJSON keeps duplicates and reads
 * the first, which would silently ignore the second). */
static pbf_status check_keys(const scene_ctx *c, const cJSON *object, const char *path,
                             const scene_table *t) {
    const cJSON *child;
    cJSON_ArrayForEach(child, object) {
        const char *key = child->string != NULL ? child->string : "";
        if (!known(key, t)) return unknown_key(c, path, key, t);
        for (const cJSON *prev = object->child; prev != child; prev = prev->next) {
            if (prev->string != NULL && strcmp(prev->string, key) == 0) {
                char p[JSON_PATH_SIZE];
                scene_join_key(p, sizeof p, path, key);
                return scene_fail(c, PBF_ERR_PARSE, p, "duplicate key '%s'", p);
            }
        }
    }
    return PBF_OK;
}

/* --- lists and optional objects --------------------------------------------------------------- */

/* A new struct for a list element or an optional object: the table's defaults, else zeros. */
static void fill_defaults(const scene_table *t, void *base, size_t size) {
    if (t->defaults != NULL)
        t->defaults(base);
    else
        memset(base, 0, size);
}

static pbf_status read_list(const scene_ctx *c, const scene_key *k, const cJSON *item,
                            const char *path, void *base) {
    if (!cJSON_IsArray(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an array of objects, got %s", path,
                          scene_type_name(item));
    const int n = cJSON_GetArraySize(item), lo = (int)k->range.lo, hi = (int)k->range.hi;
    if (n > hi)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' has %d %s, at most %d are allowed",
                          path, n, k->name, hi);
    if (n < lo) {
        if (k->too_few != NULL)
            return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' %s", path, k->too_few);
        return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must hold %d to %d %s, got %d", path,
                          lo, hi, k->name, n);
    }
    char *elements = (char *)base + k->offset;
    for (int i = 0; i < n; ++i) {
        char p[JSON_PATH_SIZE];
        scene_join_index(p, sizeof p, path, i);
        void *element = elements + (size_t)i * k->size;
        fill_defaults(k->table, element, k->size);
        TRY(read_object(c, cJSON_GetArrayItem(item, i), p, k->table, element, i));
    }
    *(int *)((char *)base + k->count) = n;
    return PBF_OK;
}

static pbf_status read_optional(const scene_ctx *c, const scene_key *k, const cJSON *item,
                                const char *path, void *base) {
    void *dst = (char *)base + k->offset;
    fill_defaults(k->table, dst, k->size);
    TRY(read_object(c, item, path, k->table, dst, -1));
    *(int *)((char *)base + k->count) = 1;
    return PBF_OK;
}

/* --- keys and objects ------------------------------------------------------------------------- */

/* The key k of parent (whose path is path); parent may be NULL (an absent section). */
static pbf_status read_key(const scene_ctx *c, const scene_key *k, const cJSON *parent,
                           const char *path, void *base) {
    const cJSON *item = scene_member(parent, k->name);
    char p[JSON_PATH_SIZE];
    scene_join_key(p, sizeof p, path, k->name);
    if (item == NULL) {
        if (parent != NULL && k->required)
            return scene_fail(c, PBF_ERR_PARSE, path, "'%s' needs '%s'", path, k->name);
        /* an absent object still runs its table's hooks (computed defaults) */
        if (k->kind == SCENE_OBJECT)
            return read_object(c, NULL, p, k->table, (char *)base + k->offset, -1);
        return PBF_OK;
    }
    if (k->read != NULL) return k->read(c, k, item, parent, p, base);
    switch (k->kind) {
    case SCENE_OBJECT: return read_object(c, item, p, k->table, (char *)base + k->offset, -1);
    case SCENE_OPTIONAL: return read_optional(c, k, item, p, base);
    case SCENE_LIST: return read_list(c, k, item, p, base);
    default: return scene_read_value(c, k, item, p, base);
    }
}

/* object may be NULL: an absent section, whose keys keep their defaults. index: the element's
 * index in its list, or -1. */
static pbf_status read_object(const scene_ctx *c, const cJSON *object, const char *path,
                              const scene_table *t, void *base, int index) {
    if (object != NULL && !cJSON_IsObject(object))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an object, got %s", path,
                          scene_type_name(object));
    if (t->variants != NULL) {
        /* the type first: it decides which other keys are allowed */
        const scene_key *type = &t->variants[0]->keys[0];
        TRY(read_key(c, type, object, path, base));
        int v = *(const int *)((const char *)base + type->offset);
        if (v < 0 || v >= t->variant_count)
            return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s.%s' has no default: write it",
                              path, type->name);
        t = t->variants[v];
    }
    if (object != NULL) TRY(check_keys(c, object, path, t));
    if (t->init != NULL) TRY(t->init(c, object, path, base, index));
    for (int i = 0; i < t->count; ++i) TRY(read_key(c, &t->keys[i], object, path, base));
    if (t->check != NULL) TRY(t->check(c, object, path, base, index));
    return PBF_OK;
}

pbf_status scene_read(const scene_ctx *c, const cJSON *root, pbf_scene *out) {
    const scene_table *t = &scene_root_table;
    t->defaults(out);
    return read_object(c, root, "", t, out, -1);
}
