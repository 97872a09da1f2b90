/* pbf — what the scene tables cannot say by themselves (scene_keys.c names these hooks):
 * defaults computed from other sections (the camera from the domain, the output folder from the
 * name, a probe's column from the particle radius) and checks across keys (a block inside the
 * domain, walls that do not meet, a path's times in order, unique probe names). Each hook gets
 * the JSON object (NULL when absent), its path for messages, and the struct it fills. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pbf/probes.h"
#include "scene_rules.h"

#define MAX_PARTICLES (INT32_MAX / 4) /* pbf_world_add_block's limit */

#define DEFAULT_FPS 60.0f
#define DEFAULT_FRAMES 120
#define DEFAULT_FOV 45.0f

static const char AXIS_NAMES[3] = {'x', 'y', 'z'};
static const char *const WALL_NAMES[PBF_WALL_COUNT] = {"x_min", "x_max", "y_min",
                                                       "y_max", "z_min", "z_max"};

static float axis_of(pbf_vec3 v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

static double short_float(float f) { return scene_short_float(f); }

/* --- defaults of new structs ----------------------------------------------------------------- */

void scene_defaults(void *scene) {
    pbf_scene *s = scene;
    memset(s, 0, sizeof *s); /* no tool, no colliders, no probes; strings zero-padded */
    s->world = pbf_default_world_def();
    s->fps = DEFAULT_FPS;
    s->frames = DEFAULT_FRAMES;
    s->camera.fov = DEFAULT_FOV;
    s->formats = PBF_FORMAT_PLY;
    s->diffuse = pbf_default_diffuse_def();
}

int scene_has_diffuse(const void *scene) { return ((const pbf_scene *)scene)->diffuse_enabled; }

/* The threshold pairs and neighbour counts of the diffuse section: each lower below its upper. */
pbf_status scene_diffuse_check(const scene_ctx *c, const cJSON *object, const char *path,
                               void *base, int index) {
    (void)object, (void)index;
    const pbf_diffuse_def *d = &((const pbf_scene *)base)->diffuse;
    const struct {
        const char *name;
        float lo, hi;
    } pairs[] = {{"trapped_air", d->trapped_air_min, d->trapped_air_max},
                 {"wave_crest", d->wave_crest_min, d->wave_crest_max},
                 {"energy", d->energy_min, d->energy_max}};
    for (int k = 0; k < 3; ++k)
        if (!(pairs[k].lo < pairs[k].hi))
            return scene_fail(
                c, PBF_ERR_INVALID_ARG, path, "'%s.%s_min' must be below '%s.%s_max', got %g >= %g",
                path, pairs[k].name, path, pairs[k].name, (double)pairs[k].lo, (double)pairs[k].hi);
    if (d->spray_neighbors > d->bubble_neighbors)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s.spray_neighbors' must be at most '%s.bubble_neighbors', got %d > %d",
                          path, path, d->spray_neighbors, d->bubble_neighbors);
    return PBF_OK;
}

void scene_block_defaults(void *block) { *(pbf_block_def *)block = pbf_default_block_def(); }

void scene_collider_defaults(void *collider) {
    *(pbf_collider_def *)collider = pbf_default_collider_def();
}

void scene_tool_defaults(void *tool) { *(pbf_tool_def *)tool = pbf_default_tool_def(); }

void scene_probe_defaults(void *probe) { *(pbf_probe_def *)probe = pbf_default_probe_def(); }

/* --- the root: the name ---------------------------------------------------------------------- */

/* The file's base name without ".json"; the built-in scene and JSON text without a file name
 * themselves "scene". A "name" key replaces it. */
pbf_status scene_root_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                           int index) {
    (void)object, (void)path, (void)index;
    pbf_scene *s = base;
    const char *name = strrchr(c->source, '/');
    name = name != NULL ? name + 1 : c->source;
    size_t len = strlen(name);
    if (len > 5 && strcmp(name + len - 5, ".json") == 0) len -= 5;
    if (len == 0 || name[0] == '<') {
        name = "scene";
        len = 5;
    }
    if (len >= sizeof s->name) len = sizeof s->name - 1;
    memcpy(s->name, name, len);
    s->name[len] = '\0';
    return PBF_OK;
}

/* --- domain and fluid ------------------------------------------------------------------------ */

pbf_status scene_domain_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                              int index) {
    (void)object, (void)path, (void)index;
    const pbf_world_def *w = &((const pbf_scene *)base)->world;
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(w->domain_min, a), hi = axis_of(w->domain_max, a);
        if (!(lo < hi))
            return scene_fail(c, PBF_ERR_INVALID_ARG, "domain",
                              "'domain.min' must be below 'domain.max' on every axis, got %c: "
                              "%.9g >= %.9g",
                              AXIS_NAMES[a], short_float(lo), short_float(hi));
    }
    return PBF_OK;
}

/* A block must be a proper box inside the domain and hold at least one particle. */
static pbf_status check_block(const scene_ctx *c, const char *label, const pbf_block_def *b,
                              const pbf_world_def *w) {
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(b->min, a), hi = axis_of(b->max, a);
        if (!(lo < hi))
            return scene_fail(c, PBF_ERR_INVALID_ARG, label,
                              "'%s.min' must be below '%s.max' on every axis, got %c: %.9g >= %.9g",
                              label, label, AXIS_NAMES[a], short_float(lo), short_float(hi));
    }
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(b->min, a), hi = axis_of(b->max, a);
        float dlo = axis_of(w->domain_min, a), dhi = axis_of(w->domain_max, a);
        if (lo < dlo || hi > dhi)
            return scene_fail(c, PBF_ERR_INVALID_ARG, label,
                              "'%s' must lie inside the domain, got %c from %.9g to %.9g, outside "
                              "[%.9g, %.9g]",
                              label, AXIS_NAMES[a], short_float(lo), short_float(hi),
                              short_float(dlo), short_float(dhi));
    }
    if (pbf_block_particle_count(b, w->particle_radius) <= 0)
        return scene_fail(c, PBF_ERR_INVALID_ARG, label,
                          "'%s' holds no particles: each side must be at least 2 * "
                          "particle_radius = %.9g m",
                          label, short_float(2.0f * w->particle_radius));
    return PBF_OK;
}

pbf_status scene_block_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index) {
    (void)object, (void)index;
    return check_block(c, path, base, &c->scene->world);
}

/* Opposite walls, at their closest, must stay two particle diameters apart: the rule (and the
 * float arithmetic) of pbf_world_create, reported here with the JSON path. */
static pbf_status check_walls(const scene_ctx *c, const pbf_world_def *w) {
    float need = 4.0f * w->particle_radius;
    for (int a = 0; a < 3; ++a) {
        float lo = axis_of(w->domain_min, a), hi = axis_of(w->domain_max, a);
        float amp_lo = w->wall_motion[2 * a].amplitude,
              amp_hi = w->wall_motion[2 * a + 1].amplitude;
        float gap = (hi - amp_hi) - (lo + amp_lo);
        if (gap >= need) continue;
        if (amp_lo == 0.0f && amp_hi == 0.0f)
            return scene_fail(c, PBF_ERR_INVALID_ARG, "domain",
                              "'domain' must be at least 4 * particle_radius = %.9g m wide on "
                              "every axis, got %c: %.9g m",
                              short_float(need), AXIS_NAMES[a], short_float(hi - lo));
        const char *moving = WALL_NAMES[amp_hi > 0.0f ? 2 * a + 1 : 2 * a];
        char p[JSON_PATH_SIZE];
        scene_format_path(p, sizeof p, "domain.walls.%s.amplitude", moving);
        return scene_fail(c, PBF_ERR_INVALID_ARG, p,
                          "'%s' is too large: the walls along %c (%.9g m apart at rest, "
                          "amplitudes %.9g and %.9g m) must stay 4 * particle_radius = %.9g m "
                          "apart",
                          p, AXIS_NAMES[a], short_float(hi - lo), short_float(amp_lo),
                          short_float(amp_hi), short_float(need));
    }
    return PBF_OK;
}

/* After the fluid's keys (the blocks are read as a list): one default block when "blocks" is
 * absent, at most MAX_PARTICLES in all, then the walls, which need the radius. */
pbf_status scene_fluid_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index) {
    (void)path, (void)index;
    pbf_scene *s = base;
    TRY(scene_materials_apply(c, object, s)); /* several fluids: their world def */
    const int absent = scene_member(object, "blocks") == NULL;
    if (absent) { /* still checked against the domain */
        s->block_count = 1;
        s->blocks[0] = pbf_default_block_def();
        TRY(check_block(c, "fluid.blocks (the default block)", &s->blocks[0], &s->world));
    }
    int64_t total = 0;
    for (int i = 0; i < s->block_count; ++i)
        total += pbf_block_particle_count(&s->blocks[i], s->world.particle_radius);
    /* the default block too, or pbf_scene_to_json would write a scene that does not load back */
    if (total > MAX_PARTICLES)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "fluid.blocks",
                          absent ? "'fluid.blocks' (the default block) holds %lld particles, more "
                                   "than a world can hold (%d)"
                                 : "'fluid.blocks' hold %lld particles, more than a world can "
                                   "hold (%d)",
                          (long long)total, MAX_PARTICLES);
    if (s->world.wall_no_slip && !(s->world.material.viscosity > 0.0f))
        return scene_fail(c, PBF_ERR_INVALID_ARG, "domain.no_slip",
                          "'domain.no_slip' needs 'fluid.viscosity' > 0: the walls hold the fluid "
                          "through its viscosity (got fluid.viscosity %.9g)",
                          short_float(s->world.material.viscosity));
    return check_walls(c, &s->world);
}

/* --- camera and output ----------------------------------------------------------------------- */

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

pbf_status scene_camera_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                              int index) {
    (void)path, (void)index;
    pbf_scene *s = base;
    default_camera(&s->camera, &s->world, scene_member(object, "position") != NULL,
                   scene_member(object, "target") != NULL);
    pbf_vec3 p = s->camera.position, t = s->camera.target;
    if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z))) /* far target, narrow fov */
        return scene_fail(c, PBF_ERR_INVALID_ARG, "camera",
                          "the default 'camera.position', far enough from 'camera.target' (%.9g, "
                          "%.9g, %.9g) to see the whole domain at fov %.9g, is beyond the float "
                          "range; give 'camera.position', or a target nearer the domain",
                          short_float(t.x), short_float(t.y), short_float(t.z),
                          short_float(s->camera.fov));
    if (p.x == t.x && p.y == t.y && p.z == t.z)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "camera",
                          "'camera.position' must differ from 'camera.target' (%.9g, %.9g, %.9g)",
                          short_float(t.x), short_float(t.y), short_float(t.z));
    return PBF_OK;
}

/* "out/<name>", before "dir" is read. */
pbf_status scene_output_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index) {
    (void)c, (void)object, (void)path, (void)index;
    pbf_scene *s = base;
    scene_format_path(s->output_dir, sizeof s->output_dir, "out/%s", s->name);
    return PBF_OK;
}

/* --- the tool (docs/tool.md) ------------------------------------------------------------------ */

/* A free tool's "density" in kg/m^3 instead of its "mass": mass = density (4/3)π R³. The radius
 * is read before (table order). */
pbf_status scene_tool_density(const scene_ctx *c, const scene_key *key, const cJSON *item,
                              const cJSON *parent, const char *path, void *base) {
    pbf_tool_def *t = base;
    if (scene_member(parent, "mass") != NULL)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "give 'tool.mass' or 'tool.density', not both");
    float rho = 0.0f;
    TRY(scene_read_float(c, key, item, path, &rho));
    double r = t->radius, m = (double)rho * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
    if (!(m > 0.0) || m > FLT_MAX)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s' %.9g kg/m^3 gives a mass of %.9g kg, out of range", path,
                          (double)rho, m);
    t->mass = (float)m;
    return PBF_OK;
}

static pbf_status check_adhesion(const scene_ctx *c, const pbf_tool_def *t) {
    if (t->adhesion_b > t->adhesion_a) return PBF_OK;
    return scene_fail(c, PBF_ERR_INVALID_ARG, "tool.adhesion.b",
                      "'tool.adhesion.b' must be above 'tool.adhesion.a' (%.9g m), got %.9g m",
                      short_float(t->adhesion_a), short_float(t->adhesion_b));
}

pbf_status scene_tool_kinematic_check(const scene_ctx *c, const cJSON *object, const char *path,
                                      void *base, int index) {
    (void)path, (void)index;
    TRY(check_adhesion(c, base));
    if (scene_member(object, "path") != NULL && scene_member(object, "position") != NULL)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "tool.position",
                          "give 'tool.position' or 'tool.path', not both (the path's first key "
                          "is the start)");
    return PBF_OK;
}

pbf_status scene_tool_free_check(const scene_ctx *c, const cJSON *object, const char *path,
                                 void *base, int index) {
    (void)path, (void)index;
    const pbf_tool_def *t = base;
    TRY(check_adhesion(c, t));
    if (scene_member(object, "mass") == NULL && scene_member(object, "density") == NULL)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "tool",
                          "a free tool needs 'tool.mass' (kg) or 'tool.density' (kg/m^3)");
    const pbf_world_def *w = &c->scene->world;
    for (int a = 0; a < 3; ++a) {
        float size = axis_of(w->domain_max, a) - axis_of(w->domain_min, a);
        if (!(size > 2.0f * t->radius))
            return scene_fail(c, PBF_ERR_INVALID_ARG, "tool.radius",
                              "'tool.radius' %.9g m: a free tool must fit the domain, which is "
                              "%.9g m along %c",
                              short_float(t->radius), short_float(size), AXIS_NAMES[a]);
    }
    return PBF_OK;
}

/* A kinematic tool with a path writes the path, and its start is the path's first key. */
int scene_tool_has_no_path(const void *tool) {
    return ((const pbf_tool_def *)tool)->key_count <= 0;
}

int scene_tool_has_path(const void *tool) { return ((const pbf_tool_def *)tool)->key_count > 0; }

pbf_status scene_tool_path_check(const scene_ctx *c, const cJSON *object, const char *path,
                                 void *base, int index) {
    (void)c, (void)path, (void)index;
    pbf_tool_def *t = base;
    if (object != NULL && t->key_count > 0) t->position = t->keys[0].position;
    return PBF_OK;
}

pbf_status scene_tool_key_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index) {
    (void)object;
    const pbf_tool_key *k = base;
    if (index == 0 || k->time > k[-1].time) return PBF_OK;
    char q[JSON_PATH_SIZE];
    scene_format_path(q, sizeof q, "%s.time", path);
    return scene_fail(c, PBF_ERR_INVALID_ARG, q,
                      "'%s' must be after the previous key's time (%.9g s), got %.9g s", q,
                      short_float(k[-1].time), short_float(k->time));
}

/* --- probes (include/pbf/probes.h) ----------------------------------------------------------- */

/* After the type: a column 2r wide, splash beyond a gap of h, named by type and index. */
pbf_status scene_probe_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index) {
    (void)object, (void)path;
    pbf_probe_def *p = base;
    const pbf_world_def *w = &c->scene->world;
    p->radius = 2.0f * w->particle_radius;
    p->max_gap = w->kernel_scale * w->particle_radius;
    memset(p->name, 0, sizeof p->name);
    scene_format_path(p->name, sizeof p->name, "%s%d", pbf_probe_type_name(p->type), index);
    return PBF_OK;
}

/* The library's own check (inside the domain, on a wall or a box face), then unique names. */
pbf_status scene_probe_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index) {
    (void)object;
    const pbf_probe_def *p = base;
    const pbf_scene *s = c->scene;
    const char *field_name = "";
    char why[PBF_ERROR_SIZE];
    if (pbf_probe_check(p, &s->world, s->colliders, s->collider_count, &field_name, why,
                        sizeof why) != PBF_OK) {
        char p_field[JSON_PATH_SIZE];
        scene_join_key(p_field, sizeof p_field, path, field_name);
        return scene_fail(c, PBF_ERR_INVALID_ARG, p_field, "'%s' %s", p_field, why);
    }
    char p_name[JSON_PATH_SIZE];
    scene_join_key(p_name, sizeof p_name, path, "name");
    for (int j = 0; j < index; ++j)
        if (strcmp(s->probes[j].name, p->name) == 0)
            return scene_fail(c, PBF_ERR_INVALID_ARG, p_name,
                              "'%s' is '%s', already the name of probes[%d]: names must be "
                              "unique (they name the columns of probes.csv)",
                              p_name, p->name, j);
    return PBF_OK;
}

int scene_has_probes(const void *scene) { return ((const pbf_scene *)scene)->probe_count > 0; }
