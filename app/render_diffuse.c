/* See render_diffuse.h. */
#include "render_diffuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pbf/export.h"

static int reserve(render_diffuse *rd, int n) {
    if (n <= rd->capacity) return 0;
    float *x = realloc(rd->positions, (size_t)n * 3 * sizeof *x);
    if (x != NULL) rd->positions = x;
    uint8_t *k = realloc(rd->kinds, (size_t)n);
    if (k != NULL) rd->kinds = k;
    if (x == NULL || k == NULL) return 1;
    rd->capacity = n;
    return 0;
}

int render_diffuse_copy(render_diffuse *dst, const render_diffuse *src, int count) {
    if (count <= 0) return 0;
    if (reserve(dst, count) != 0) return 1;
    memcpy(dst->positions, src->positions, (size_t)count * 3 * sizeof(float));
    memcpy(dst->kinds, src->kinds, (size_t)count);
    return 0;
}

int render_diffuse_from_world(render_diffuse *rd, const pbf_world *world, pbf_render_scene *s) {
    s->diffuse_count = 0;
    s->diffuse_positions = NULL;
    s->diffuse_kinds = NULL;
    const int n = pbf_world_diffuse_count(world);
    if (n == 0) return 0;
    if (reserve(rd, n) != 0) return 1;
    pbf_world_get_diffuse(world, rd->positions, NULL, rd->kinds, NULL);
    s->diffuse_count = n;
    s->diffuse_positions = rd->positions;
    s->diffuse_kinds = rd->kinds;
    return 0;
}

int render_diffuse_from_file(render_diffuse *rd, const char *dir, int number, pbf_render_scene *s,
                             char *err, size_t err_size) {
    s->diffuse_count = 0;
    s->diffuse_positions = NULL;
    s->diffuse_kinds = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/diffuse_%05d.ply", dir, number);
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    pbf_diffuse_particles d;
    if (pbf_export_diffuse_read(path, &d, err, err_size) != PBF_OK) return 1;
    int rc = 0;
    if (d.count > 0 && reserve(rd, d.count) != 0) {
        snprintf(err, err_size, "'%s': out of memory for %d diffuse particles", path, d.count);
        rc = 1;
    } else if (d.count > 0) {
        memcpy(rd->positions, d.positions, (size_t)d.count * 3 * sizeof(float));
        memcpy(rd->kinds, d.kinds, (size_t)d.count);
        s->diffuse_count = d.count;
        s->diffuse_positions = rd->positions;
        s->diffuse_kinds = rd->kinds;
    }
    pbf_diffuse_particles_free(&d);
    return rc;
}

void render_diffuse_free(render_diffuse *rd) {
    free(rd->positions);
    free(rd->kinds);
    rd->positions = NULL;
    rd->kinds = NULL;
    rd->capacity = 0;
}
