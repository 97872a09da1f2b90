/* pbf — one JSON value of a scene into one C value: the type, the range (as written and as
 * stored), the message naming the file, the JSON path and what was expected. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_schema.h"

/* Choices and flags are stored through int and unsigned pointers. */
_Static_assert(sizeof(pbf_neighbor_mode) == sizeof(int), "pbf_neighbor_mode must be int-sized");
_Static_assert(sizeof(pbf_backend) == sizeof(int), "pbf_backend must be int-sized");
_Static_assert(sizeof(pbf_collider_type) == sizeof(int), "pbf_collider_type must be int-sized");
_Static_assert(sizeof(pbf_tool_motion) == sizeof(int), "pbf_tool_motion must be int-sized");
_Static_assert(sizeof(pbf_tool_interpolation) == sizeof(int), "must be int-sized");
_Static_assert(sizeof(pbf_probe_type) == sizeof(int), "pbf_probe_type must be int-sized");
_Static_assert(sizeof(pbf_direction) == sizeof(int), "pbf_direction must be int-sized");

/* cJSON prints numbers with 15 digits and messages use %.9g, so 0.01f would show as
 * "0.009999999776482582". The check goes through double because that is how the loader reads a
 * number (strtod, then a cast). */
double scene_short_float(float f) {
    char text[32];
    for (int digits = 6; digits <= 9; ++digits) {
        snprintf(text, sizeof text, "%.*g", digits, (double)f);
        if ((float)strtod(text, NULL) == f) break;
    }
    return strtod(text, NULL);
}

static int in_range(double v, scene_range r) {
    if (r.lo > -DBL_MAX && (r.lo_open ? !(v > r.lo) : !(v >= r.lo))) return 0;
    if (r.hi < DBL_MAX && (r.hi_open ? !(v < r.hi) : !(v <= r.hi))) return 0;
    return 1;
}

void scene_describe_range(char *buf, size_t size, scene_range r) {
    int has_lo = r.lo > -DBL_MAX, has_hi = r.hi < DBL_MAX;
    if (has_lo && has_hi)
        scene_set_message(buf, size, "%c%.10g, %.10g%c", r.lo_open ? '(' : '[', r.lo, r.hi,
                          r.hi_open ? ')' : ']');
    else if (has_lo)
        scene_set_message(buf, size, "%s %.10g", r.lo_open ? ">" : ">=", r.lo);
    else if (has_hi)
        scene_set_message(buf, size, "%s %.10g", r.hi_open ? "<" : "<=", r.hi);
    else
        scene_set_message(buf, size, "finite");
}

/* The value must be in range both as written (d) and as stored (stored: a float rounds, and
 * 1e-50 is > 0 but becomes 0.0f). */
static pbf_status check_range(const scene_ctx *c, const char *path, const scene_key *k, double d,
                              double stored) {
    if (in_range(d, k->range) && in_range(stored, k->range)) return PBF_OK;
    char want[96];
    scene_describe_range(want, sizeof want, k->range);
    int interval = k->range.lo > -DBL_MAX && k->range.hi < DBL_MAX;
    return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be %s%s%s%s, got %.9g", path,
                      interval ? "in " : "", want, k->unit[0] ? " " : "", k->unit, d);
}

/* A JSON number that fits a float. */
static pbf_status read_number(const scene_ctx *c, const cJSON *item, const char *path,
                              double *out) {
    if (!cJSON_IsNumber(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be a number, got %s", path,
                          scene_type_name(item));
    double d = item->valuedouble;
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s' must be a finite number that fits a float", path);
    *out = d;
    return PBF_OK;
}

pbf_status scene_read_float(const scene_ctx *c, const scene_key *k, const cJSON *item,
                            const char *path, float *out) {
    double d = 0.0;
    TRY(read_number(c, item, path, &d));
    TRY(check_range(c, path, k, d, (double)(float)d));
    *out = (float)d;
    return PBF_OK;
}

/* Integers are JSON numbers with no fraction (6, 6.0 and 6e0 are all 6). The range bounds every
 * integer key within its C type. */
static pbf_status read_integer(const scene_ctx *c, const cJSON *item, const char *path,
                               const scene_key *k, double *out) {
    if (!cJSON_IsNumber(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an integer, got %s", path,
                          scene_type_name(item));
    double d = item->valuedouble;
    if (!isfinite(d) || d != floor(d))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an integer, got %.9g", path, d);
    TRY(check_range(c, path, k, d, d));
    *out = d;
    return PBF_OK;
}

static pbf_status read_vec3(const scene_ctx *c, const cJSON *item, const char *path,
                            const scene_key *k, pbf_vec3 *out) {
    int size = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
    if (size != 3) {
        if (size < 0)
            return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an array of 3 numbers, got %s",
                              path, scene_type_name(item));
        return scene_fail(c, PBF_ERR_PARSE, path,
                          "'%s' must be an array of 3 numbers, got an array of %d", path, size);
    }
    float v[3];
    for (int i = 0; i < 3; ++i) {
        const cJSON *e = cJSON_GetArrayItem(item, i);
        if (!cJSON_IsNumber(e))
            return scene_fail(c, PBF_ERR_PARSE, path,
                              "'%s' must be an array of 3 numbers, got a %s at [%d]", path,
                              scene_type_name(e), i);
        char p[JSON_PATH_SIZE];
        scene_join_index(p, sizeof p, path, i);
        TRY(scene_read_float(c, k, e, p, &v[i]));
    }
    out->x = v[0];
    out->y = v[1];
    out->z = v[2];
    return PBF_OK;
}

/* "'a', 'b' or 'c'" */
static void list_names(char *buf, size_t size, const char *const *names, int count) {
    buf[0] = '\0';
    for (int i = 0; i < count; ++i)
        scene_append(buf, size, "%s'%s'", i == 0 ? "" : i + 1 == count ? " or " : ", ", names[i]);
}

static pbf_status read_choice(const scene_ctx *c, const cJSON *item, const char *path,
                              const scene_key *k, int *out) {
    char names[128];
    list_names(names, sizeof names, k->names, k->name_count);
    if (!cJSON_IsString(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be one of %s, got %s", path, names,
                          scene_type_name(item));
    for (int i = 0; i < k->name_count; ++i) {
        if (strcmp(item->valuestring, k->names[i]) == 0) {
            *out = i;
            return PBF_OK;
        }
    }
    return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must be one of %s, got '%s'", path, names,
                      item->valuestring);
}

static pbf_status read_flag(const scene_ctx *c, const cJSON *item, const char *path,
                            const scene_key *k, unsigned *bits) {
    int index = 0;
    TRY(read_choice(c, item, path, k, &index));
    unsigned bit = 1u << index;
    if (*bits & bit)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s': %s '%s' is listed twice", path,
                          k->name, k->names[index]);
    *bits |= bit;
    return PBF_OK;
}

/* A list of names ([] sets none) or, for --set convenience, one name. */
static pbf_status read_flags(const scene_ctx *c, const cJSON *item, const char *path,
                             const scene_key *k, unsigned *out) {
    unsigned bits = 0;
    if (cJSON_IsString(item)) {
        TRY(read_flag(c, item, path, k, &bits));
    } else if (cJSON_IsArray(item)) {
        int n = cJSON_GetArraySize(item);
        for (int i = 0; i < n; ++i) {
            char p[JSON_PATH_SIZE];
            scene_join_index(p, sizeof p, path, i);
            TRY(read_flag(c, cJSON_GetArrayItem(item, i), p, k, &bits));
        }
    } else {
        char names[128] = "";
        for (int i = 0; i < k->name_count; ++i)
            scene_append(names, sizeof names, "%s'%s'", i > 0 ? ", " : "", k->names[i]);
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be an array of %s names (%s), got %s",
                          path, k->name, names, scene_type_name(item));
    }
    *out = bits;
    return PBF_OK;
}

static pbf_status read_string(const scene_ctx *c, const cJSON *item, const char *path, char *out,
                              size_t size) {
    if (!cJSON_IsString(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be a string, got %s", path,
                          scene_type_name(item));
    size_t len = strlen(item->valuestring);
    if (len == 0) return scene_fail(c, PBF_ERR_INVALID_ARG, path, "'%s' must not be empty", path);
    if (len >= size)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s' must be at most %zu characters, got %zu", path, size - 1, len);
    /* zero-padded: a default it replaces leaves nothing behind the NUL, so equal scenes are
     * equal bytes */
    memset(out, 0, size);
    memcpy(out, item->valuestring, len);
    return PBF_OK;
}

pbf_status scene_read_value(const scene_ctx *c, const scene_key *k, const cJSON *item,
                            const char *path, void *base) {
    char *dst = (char *)base + k->offset;
    double d = 0.0;
    switch (k->kind) {
    case SCENE_FLOAT: return scene_read_float(c, k, item, path, (float *)dst);
    case SCENE_INT:
        TRY(read_integer(c, item, path, k, &d));
        *(int *)dst = (int)d;
        return PBF_OK;
    case SCENE_UINT32:
        TRY(read_integer(c, item, path, k, &d));
        *(uint32_t *)dst = (uint32_t)d;
        return PBF_OK;
    case SCENE_BOOL:
        if (!cJSON_IsBool(item))
            return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be true or false, got %s", path,
                              scene_type_name(item));
        *(int *)dst = cJSON_IsTrue(item) ? 1 : 0;
        return PBF_OK;
    case SCENE_VEC3: return read_vec3(c, item, path, k, (pbf_vec3 *)dst);
    case SCENE_CHOICE: return read_choice(c, item, path, k, (int *)dst);
    case SCENE_FLAGS: return read_flags(c, item, path, k, (unsigned *)dst);
    case SCENE_STRING: return read_string(c, item, path, dst, k->size);
    case SCENE_OBJECT:
    case SCENE_OPTIONAL:
    case SCENE_LIST: break; /* scene_read.c */
    }
    return PBF_OK;
}
