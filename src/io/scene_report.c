/* pbf — the scene loader's messages: JSON paths, "SOURCE: message", the --set that caused an
 * error, and the edit distance behind "did you mean". The library never prints: every message
 * goes into the caller's buffer, always NUL-terminated and cut to its size. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scene_schema.h"

#define SUGGEST_MAX_LEN 64 /* keys longer than this get no did-you-mean */

static void vappend(char *buf, size_t size, const char *fmt, va_list ap) {
    if (buf == NULL || size == 0) return;
    size_t used = strnlen(buf, size);
    if (used + 1 >= size) return;
    vsnprintf(buf + used, size - used, fmt, ap); /* truncates safely and always terminates */
}

void scene_append(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, size, fmt, ap);
    va_end(ap);
}

void scene_set_message(char *buf, size_t size, const char *fmt, ...) {
    if (buf == NULL || size == 0) return;
    buf[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vappend(buf, size, fmt, ap);
    va_end(ap);
}

/* Through a va_list, so that GCC's -Wformat-truncation does not fire on paths that are long by
 * the user's choice. */
void scene_format_path(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

void scene_join_key(char *out, size_t size, const char *parent, const char *key) {
    if (parent[0] == '\0')
        scene_format_path(out, size, "%s", key);
    else
        scene_format_path(out, size, "%s.%s", parent, key);
}

void scene_join_index(char *out, size_t size, const char *parent, int index) {
    scene_format_path(out, size, "%s[%d]", parent, index);
}

const char *scene_type_name(const cJSON *item) {
    if (cJSON_IsString(item)) return "string";
    if (cJSON_IsNumber(item)) return "number";
    if (cJSON_IsBool(item)) return "boolean";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsArray(item)) return "array";
    if (cJSON_IsObject(item)) return "object";
    return "invalid value";
}

const cJSON *scene_member(const cJSON *object, const char *key) {
    return object != NULL ? cJSON_GetObjectItemCaseSensitive(object, key) : NULL;
}

/* --- --set paths ---------------------------------------------------------------------------- */

int scene_split_path(const char *path, size_t len, scene_segment *segs, int max, const char **why) {
    size_t i = 0;
    int n = 0;
    for (;;) {
        size_t start = i;
        while (i < len && path[i] != '.' && path[i] != '[' && path[i] != ']') ++i;
        if (i == start) {
            *why = len == 0 ? "the path is empty" : "the path has an empty key";
            return -1;
        }
        if (i - start >= SCENE_SEGMENT_KEY_SIZE || n == max) {
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
static void join_segments(char *out, size_t size, const scene_segment *segs, int n) {
    out[0] = '\0';
    for (int i = 0; i < n; ++i) {
        char next[JSON_PATH_SIZE];
        if (segs[i].index >= 0)
            scene_join_index(next, sizeof next, out, segs[i].index);
        else
            scene_join_key(next, sizeof next, out, segs[i].key);
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
static const char *override_for(const scene_ctx *c, const char *path) {
    for (int i = c->override_count - 1; i >= 0; --i) {
        const char *ov = c->overrides[i];
        const char *eq = ov ? strchr(ov, '=') : NULL;
        if (eq == NULL) continue;
        scene_segment segs[SCENE_MAX_PATH_SEGMENTS];
        const char *why = NULL;
        int n = scene_split_path(ov, (size_t)(eq - ov), segs, SCENE_MAX_PATH_SEGMENTS, &why);
        if (n < 0) continue;
        char canonical[JSON_PATH_SIZE];
        join_segments(canonical, sizeof canonical, segs, n);
        if (paths_overlap(canonical, path)) return ov;
    }
    return NULL;
}

pbf_status scene_fail(const scene_ctx *c, pbf_status status, const char *path, const char *fmt,
                      ...) {
    if (c->err == NULL || c->err_size == 0) return status;
    scene_set_message(c->err, c->err_size, "%s: ", c->source);
    va_list ap;
    va_start(ap, fmt);
    vappend(c->err, c->err_size, fmt, ap);
    va_end(ap);
    const char *ov = path != NULL ? override_for(c, path) : NULL;
    if (ov != NULL) scene_append(c->err, c->err_size, " (from --set '%s')", ov);
    return status;
}

pbf_status scene_out_of_memory(const scene_ctx *c) {
    return scene_fail(c, PBF_ERR_OUT_OF_MEMORY, NULL, "out of memory");
}

pbf_status scene_fail_set(const scene_ctx *c, pbf_status status, const char *ov, const char *fmt,
                          ...) {
    if (c->err == NULL || c->err_size == 0) return status;
    scene_set_message(c->err, c->err_size, "%s: --set '%s': ", c->source, ov);
    va_list ap;
    va_start(ap, fmt);
    vappend(c->err, c->err_size, fmt, ap);
    va_end(ap);
    return status;
}

/* --- did you mean ----------------------------------------------------------------------------- */

static int min3(int a, int b, int c) {
    int m = a < b ? a : b;
    return m < c ? m : c;
}

/* Levenshtein plus adjacent transpositions, so that both "iteratons" and "partcile_radius" are
 * one edit from the right key. */
int scene_edit_distance(const char *a, const char *b) {
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
