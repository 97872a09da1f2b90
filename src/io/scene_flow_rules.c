/* pbf — the hooks of the scene's "flow" section (scene_keys.c names them): emitter and sink
 * checks across keys, and the default particle capacity computed from the emitters and the
 * run's duration (include/pbf/flow.h, docs/scenes.md "Inflow and outflow"). */
#include <math.h>
#include <stdint.h>

#include "scene_rules.h"

#define MAX_PARTICLES (INT32_MAX / 4) /* pbf_world_add_block's limit */

void scene_emitter_defaults(void *emitter) {
    *(pbf_emitter_def *)emitter = pbf_default_emitter_def();
}

void scene_sink_defaults(void *sink) { *(pbf_sink_def *)sink = pbf_default_sink_def(); }

int scene_has_flow(const void *scene) {
    const pbf_scene *s = scene;
    return s->emitter_count > 0 || s->sink_count > 0 || s->capacity > 0;
}

int scene_emitter_stops(const void *emitter) {
    return ((const pbf_emitter_def *)emitter)->stop != pbf_default_emitter_def().stop;
}

pbf_status scene_emitter_check(const scene_ctx *c, const cJSON *object, const char *path,
                               void *base, int index) {
    (void)object, (void)index;
    const pbf_emitter_def *e = base;
    const pbf_vec3 d = e->direction;
    if (!(d.x * d.x + d.y * d.y + d.z * d.z > 1e-12f))
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s.direction' must not be zero: it says where the fluid goes", path);
    if (!(e->stop > e->start))
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s.stop' must be after '%s.start', got %g <= %g", path, path,
                          (double)e->stop, (double)e->start);
    return PBF_OK;
}

pbf_status scene_sink_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index) {
    (void)object, (void)index;
    const pbf_sink_def *k = base;
    if (!(k->min.x < k->max.x && k->min.y < k->max.y && k->min.z < k->max.z))
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s.min' must be below '%s.max' on every axis", path, path);
    return PBF_OK;
}

/* Particles emitter e adds over [0, duration]: its layers (the first at start, then one per
 * pitch n s³ / area travelled) times n = ceil(area / s²), as the world computes them. */
static double emitted_over(const pbf_emitter_def *e, double duration, double r) {
    const double s = 2.0 * r;
    double area = e->shape == PBF_EMITTER_DISC ? 3.14159265358979323846 * e->radius * e->radius
                                               : (double)e->width * (double)e->height;
    double n = ceil(area / (s * s) * (1.0 - 1e-5));
    if (n < 1.0) n = 1.0;
    const double pitch = n * s * s * s / area;
    double end = duration < (double)e->stop ? duration : (double)e->stop;
    if (!(end > (double)e->start)) return 0.0;
    return (floor((double)e->speed * (end - (double)e->start) / pitch) + 1.0) * n;
}

/* The default capacity: the blocks plus all that the emitters add over the scene's frames
 * (sinks not counted), so a run of the scene's length never fills it. */
pbf_status scene_flow_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index) {
    (void)c, (void)path, (void)index;
    pbf_scene *s = base;
    if (scene_member(object, "capacity") != NULL || s->emitter_count == 0) return PBF_OK;
    double total = 0.0;
    for (int i = 0; i < s->block_count; ++i)
        total += (double)pbf_block_particle_count(&s->blocks[i], s->world.particle_radius);
    const double duration = (double)s->frames / (double)s->fps;
    for (int i = 0; i < s->emitter_count; ++i)
        total += emitted_over(&s->emitters[i], duration, (double)s->world.particle_radius);
    s->capacity = total < (double)MAX_PARTICLES ? (int)total : MAX_PARTICLES;
    if (s->capacity < 1) s->capacity = 1;
    return PBF_OK;
}
