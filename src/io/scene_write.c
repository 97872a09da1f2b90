/* pbf — pbf_scene_to_json: every parameter of a scene written through the schema tables
 * (scene_keys.c), in their order, so that what is written is exactly what is read back. Floats
 * are written with the fewest digits that read back as the same float. */
#include <stdint.h>
#include <stdlib.h>

#include "scene_schema.h"

static cJSON *object_json(const scene_table *t, const void *base);

static cJSON *vec3_json(pbf_vec3 v) {
    cJSON *array = cJSON_CreateArray();
    const float c[3] = {v.x, v.y, v.z};
    for (int i = 0; array != NULL && i < 3; ++i) {
        cJSON *n = cJSON_CreateNumber(scene_short_float(c[i]));
        if (n == NULL || !cJSON_AddItemToArray(array, n)) {
            cJSON_Delete(n);
            cJSON_Delete(array);
            array = NULL;
        }
    }
    return array;
}

/* Adds item to array; on failure frees item. Returns 1 on success. */
static int push(cJSON *array, cJSON *item) {
    if (array != NULL && item != NULL && cJSON_AddItemToArray(array, item)) return 1;
    cJSON_Delete(item);
    return 0;
}

static cJSON *flags_json(const scene_key *k, unsigned bits) {
    cJSON *names = cJSON_CreateArray();
    for (int i = 0; names != NULL && i < k->name_count; ++i) {
        if ((bits & (1u << i)) && !push(names, cJSON_CreateString(k->names[i]))) {
            cJSON_Delete(names);
            names = NULL;
        }
    }
    return names;
}

static cJSON *list_json(const scene_key *k, const void *base) {
    cJSON *list = cJSON_CreateArray();
    const int n = *(const int *)((const char *)base + k->count);
    const char *elements = (const char *)base + k->offset;
    for (int i = 0; list != NULL && i < n && i <= (int)k->range.hi; ++i) {
        if (!push(list, object_json(k->table, elements + (size_t)i * k->size))) {
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

static cJSON *key_json(const scene_key *k, const void *base) {
    const char *src = (const char *)base + k->offset;
    switch (k->kind) {
    case SCENE_FLOAT: return cJSON_CreateNumber(scene_short_float(*(const float *)src));
    case SCENE_INT: return cJSON_CreateNumber((double)*(const int *)src);
    case SCENE_UINT32: return cJSON_CreateNumber((double)*(const uint32_t *)src);
    case SCENE_BOOL: return cJSON_CreateBool(*(const int *)src != 0);
    case SCENE_VEC3: return vec3_json(*(const pbf_vec3 *)src);
    case SCENE_CHOICE: {
        int v = *(const int *)src;
        /* An enum value with no name is written as its number, which the loader then rejects:
         * better than silently writing another value. */
        return v >= 0 && v < k->name_count ? cJSON_CreateString(k->names[v])
                                           : cJSON_CreateNumber((double)v);
    }
    case SCENE_FLAGS: return flags_json(k, *(const unsigned *)src);
    case SCENE_STRING: return cJSON_CreateString(src);
    case SCENE_OBJECT:
    case SCENE_OPTIONAL: return object_json(k->table, src);
    case SCENE_LIST: return list_json(k, base);
    }
    return NULL;
}

/* Whether k is written: an optional object when present, any key when its predicate agrees. */
static int written(const scene_key *k, const void *base) {
    if (k->kind == SCENE_OPTIONAL && *(const int *)((const char *)base + k->count) == 0) return 0;
    return k->written == NULL || k->written(base);
}

static cJSON *object_json(const scene_table *t, const void *base) {
    if (t->variants != NULL) {
        /* the table of its type; an unnamed type through the first, whose "type" writes the
         * number */
        int v = *(const int *)((const char *)base + t->variants[0]->keys[0].offset);
        t = t->variants[v >= 0 && v < t->variant_count ? v : 0];
    }
    cJSON *object = cJSON_CreateObject();
    for (int i = 0; object != NULL && i < t->count; ++i) {
        const scene_key *k = &t->keys[i];
        if (!written(k, base)) continue;
        cJSON *item = key_json(k, base);
        if (item == NULL || !cJSON_AddItemToObject(object, k->name, item)) {
            cJSON_Delete(item);
            cJSON_Delete(object);
            object = NULL;
        }
    }
    return object;
}

char *pbf_scene_to_json(const pbf_scene *scene) {
    if (scene == NULL) return NULL;
    cJSON *root = object_json(&scene_root_table, scene);
    char *text = root != NULL ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}
