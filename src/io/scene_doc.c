/* pbf — pbf_scene_keys: the schema tables (scene_keys.c) as a list of documented keys. Defaults
 * are read from the structs the tables' defaults functions fill (the pbf_default_*_def values),
 * ranges and units from the keys: the reference cannot drift from what the loader does.
 *
 * Typed objects list every key once: a key that several types share with the same meaning is
 * one row naming those types ("sphere, box"), or none when every type has it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene_schema.h"

typedef struct row {
    pbf_scene_key_info info;
    int group; /* the typed object it belongs to (0: none), for merging its types' rows */
    int variants; /* how many types list it */
    int order; /* of its table's first row: rows are handed out table by table */
} row;

typedef struct walk {
    row *rows;
    int count, capacity;
    int groups;
    int failed; /* out of memory */
} walk;

/* --- one row ---------------------------------------------------------------------------------- */

static const char *type_text(const scene_key *k) {
    switch (k->kind) {
    case SCENE_FLOAT: return "number";
    case SCENE_INT:
    case SCENE_UINT32: return "integer";
    case SCENE_BOOL: return "boolean";
    case SCENE_VEC3: return "[x, y, z]";
    case SCENE_CHOICE:
    case SCENE_STRING: return "string";
    case SCENE_FLAGS: return "array of strings";
    case SCENE_OBJECT:
    case SCENE_OPTIONAL: return "object";
    case SCENE_LIST: return "array of objects";
    }
    return "";
}

/* "a", "b" or "c" */
static void quoted_names(char *buf, size_t size, const scene_key *k, const char *last_join) {
    for (int i = 0; i < k->name_count; ++i)
        scene_append(buf, size, "%s\"%s\"",
                     i == 0                   ? ""
                     : i + 1 == k->name_count ? last_join
                                              : ", ",
                     k->names[i]);
}

static void range_text(char *buf, size_t size, const scene_key *k) {
    buf[0] = '\0';
    switch (k->kind) {
    case SCENE_FLOAT:
    case SCENE_INT:
    case SCENE_UINT32:
    case SCENE_VEC3: scene_describe_range(buf, size, k->range); break;
    case SCENE_BOOL: scene_set_message(buf, size, "true or false"); break;
    case SCENE_CHOICE: quoted_names(buf, size, k, " or "); break;
    case SCENE_FLAGS:
        scene_set_message(buf, size, "each of ");
        quoted_names(buf, size, k, ", ");
        scene_append(buf, size, " at most once");
        break;
    case SCENE_STRING: scene_set_message(buf, size, "1 to %zu characters", k->size - 1); break;
    case SCENE_OBJECT:
        if (k->table->each != NULL) {
            scene_set_message(buf, size, "keys");
            for (int i = 0; i < k->table->count; ++i)
                scene_append(buf, size, " %s", k->table->keys[i].name);
        }
        break;
    case SCENE_OPTIONAL: break;
    case SCENE_LIST:
        if (k->range.lo <= 0.0)
            scene_set_message(buf, size, "at most %.0f", k->range.hi);
        else
            scene_set_message(buf, size, "%.0f to %.0f", k->range.lo, k->range.hi);
        break;
    }
}

static void number_text(char *buf, size_t size, float f) {
    scene_append(buf, size, "%.9g", scene_short_float(f));
}

/* The value at def + offset as JSON text. */
static void default_text(char *buf, size_t size, const scene_key *k, const void *def) {
    const char *src = (const char *)def + k->offset;
    buf[0] = '\0';
    switch (k->kind) {
    case SCENE_FLOAT: number_text(buf, size, *(const float *)src); break;
    case SCENE_INT: scene_set_message(buf, size, "%d", *(const int *)src); break;
    case SCENE_UINT32:
        scene_set_message(buf, size, "%lu", (unsigned long)*(const uint32_t *)src);
        break;
    case SCENE_BOOL:
        scene_set_message(buf, size, "%s", *(const int *)src ? "true" : "false");
        break;
    case SCENE_VEC3: {
        const pbf_vec3 *v = (const pbf_vec3 *)src;
        scene_append(buf, size, "[");
        number_text(buf, size, v->x);
        scene_append(buf, size, ", ");
        number_text(buf, size, v->y);
        scene_append(buf, size, ", ");
        number_text(buf, size, v->z);
        scene_append(buf, size, "]");
        break;
    }
    case SCENE_CHOICE: {
        int v = *(const int *)src;
        if (v >= 0 && v < k->name_count) scene_set_message(buf, size, "\"%s\"", k->names[v]);
        break;
    }
    case SCENE_FLAGS: {
        unsigned bits = *(const unsigned *)src;
        scene_append(buf, size, "[");
        for (int i = 0, n = 0; i < k->name_count; ++i)
            if (bits & (1u << i)) scene_append(buf, size, "%s\"%s\"", n++ ? ", " : "", k->names[i]);
        scene_append(buf, size, "]");
        break;
    }
    case SCENE_STRING: scene_set_message(buf, size, "\"%s\"", src); break;
    case SCENE_LIST:
        if (*(const int *)((const char *)def + k->count) == 0) scene_set_message(buf, size, "[]");
        break;
    case SCENE_OBJECT:
    case SCENE_OPTIONAL: break;
    }
}

static int same_text(const pbf_scene_key_info *a, const pbf_scene_key_info *b) {
    return strcmp(a->table, b->table) == 0 && strcmp(a->path, b->path) == 0 &&
           strcmp(a->type, b->type) == 0 && strcmp(a->unit, b->unit) == 0 &&
           strcmp(a->default_value, b->default_value) == 0 &&
           strcmp(a->default_note, b->default_note) == 0 && strcmp(a->range, b->range) == 0 &&
           strcmp(a->doc, b->doc) == 0;
}

/* Adds the row of key k (path: its full path) to table; in a typed object (group > 0), a row
 * equal to one of another type is merged into it. */
static void add_row(walk *w, const scene_key *k, const void *def, const char *table,
                    const char *path, const char *variant, int group) {
    if (w->failed) return;
    pbf_scene_key_info info;
    memset(&info, 0, sizeof info);
    scene_format_path(info.table, sizeof info.table, "%s", table);
    scene_format_path(info.path, sizeof info.path, "%s", path);
    scene_format_path(info.only, sizeof info.only, "%s", variant != NULL ? variant : "");
    info.type = type_text(k);
    info.unit = k->unit != NULL ? k->unit : "";
    info.default_note = k->default_doc != NULL ? k->default_doc : k->required ? "required" : "";
    if (info.default_note[0] == '\0')
        default_text(info.default_value, sizeof info.default_value, k, def);
    range_text(info.range, sizeof info.range, k);
    info.doc = k->doc != NULL ? k->doc : "";

    for (int i = 0; group > 0 && i < w->count; ++i) {
        row *r = &w->rows[i];
        if (r->group == group && same_text(&r->info, &info)) {
            scene_append(r->info.only, sizeof r->info.only, ", %s", variant);
            ++r->variants;
            return;
        }
    }
    if (w->count == w->capacity) {
        int capacity = w->capacity > 0 ? 2 * w->capacity : 64;
        row *rows = realloc(w->rows, (size_t)capacity * sizeof *rows);
        if (rows == NULL) {
            w->failed = 1;
            return;
        }
        w->rows = rows;
        w->capacity = capacity;
    }
    row *r = &w->rows[w->count];
    r->info = info;
    r->group = group;
    r->variants = 1;
    r->order = w->count;
    for (int i = 0; i < w->count; ++i)
        if (strcmp(w->rows[i].info.table, table) == 0) {
            r->order = w->rows[i].order;
            break;
        }
    ++w->count;
}

/* --- the walk --------------------------------------------------------------------------------- */

static void walk_table(walk *w, const scene_table *t, const void *def, const char *table,
                       const char *prefix, const char *variant, int group);

/* A new struct for a list element or an optional object, filled with its defaults. */
static void *new_defaults(walk *w, const scene_key *k) {
    void *def = calloc(1, k->size);
    if (def == NULL)
        w->failed = 1;
    else if (k->table->defaults != NULL)
        k->table->defaults(def);
    return def;
}

static void walk_key(walk *w, const scene_key *k, const void *def, const char *table,
                     const char *prefix, const char *variant, int group) {
    char path[JSON_PATH_SIZE], inner[JSON_PATH_SIZE];
    scene_format_path(path, sizeof path, "%s%s", prefix, k->name);
    const int own = k->table != NULL && k->table->own_doc_table;
    const char *inner_table = own ? path : table;
    if (k->kind != SCENE_OBJECT || k->doc != NULL) add_row(w, k, def, table, path, variant, group);
    if (k->kind == SCENE_OBJECT) {
        const scene_table *t = k->table;
        const char *sub = (const char *)def + k->offset;
        if (t->each != NULL) { /* objects of one kind, shown once */
            scene_format_path(inner, sizeof inner, "%s.%s.", path, t->each);
            sub += t->keys[0].offset;
            t = t->keys[0].table;
        } else {
            scene_format_path(inner, sizeof inner, "%s.", path);
        }
        walk_table(w, t, sub, inner_table, inner, own ? NULL : variant, own ? 0 : group);
    } else if (k->kind == SCENE_LIST || k->kind == SCENE_OPTIONAL) {
        scene_format_path(inner, sizeof inner, "%s%s.", path, k->kind == SCENE_LIST ? "[i]" : "");
        void *element = new_defaults(w, k);
        if (element != NULL)
            walk_table(w, k->table, element, inner_table, inner, own ? NULL : variant,
                       own ? 0 : group);
        free(element);
    }
}

static void walk_table(walk *w, const scene_table *t, const void *def, const char *table,
                       const char *prefix, const char *variant, int group) {
    if (t->variants == NULL) {
        for (int i = 0; i < t->count; ++i)
            walk_key(w, &t->keys[i], def, table, prefix, variant, group);
        return;
    }
    const int first = w->count, typed = ++w->groups;
    const scene_key *type = &t->variants[0]->keys[0];
    for (int v = 0; v < t->variant_count; ++v)
        walk_table(w, t->variants[v], def, table, prefix, type->names[v], typed);
    for (int i = first; !w->failed && i < w->count; ++i) /* on every type: no restriction */
        if (w->rows[i].group == typed && w->rows[i].variants == t->variant_count)
            w->rows[i].info.only[0] = '\0';
}

int pbf_scene_keys(pbf_scene_key_info *keys, int max) {
    walk w = {NULL, 0, 0, 0, 0};
    pbf_scene *def = malloc(sizeof *def);
    if (def == NULL) return -1;
    scene_root_table.defaults(def);
    walk_table(&w, &scene_root_table, def, "top", "", NULL, 0);
    free(def);
    if (w.failed) {
        free(w.rows);
        return -1;
    }
    /* table by table, in the order of each table's first row; rows keep their order inside */
    int written = 0;
    for (int i = 0; i < w.count; ++i) {
        if (w.rows[i].order != i) continue; /* the first row of a table */
        for (int j = i; j < w.count; ++j)
            if (w.rows[j].order == i && written < max && keys != NULL)
                keys[written++] = w.rows[j].info;
    }
    int count = w.count;
    free(w.rows);
    return count;
}
