/* pbf — the "materials" section's hooks (scene_keys.c names them): a material's defaults, unique
 * names and the density ratio the solver handles, the "material" key of blocks and emitters (a
 * name looked up among the materials read before them), and the world def the materials give
 * (docs/scenes.md, docs/physics.md "Several fluids"). */
#include <math.h>
#include <string.h>

#include "scene_rules.h"

void scene_material_defaults(void *material) {
    pbf_scene_material *m = material;
    memset(m, 0, sizeof *m);
    m->phase = pbf_default_phase_def();
    m->surface_tension = 0.0f;
    m->absorption = (pbf_vec3){8.0f, 3.0f, 1.5f}; /* the renderer's default water */
}

int scene_has_materials(const void *scene) {
    return ((const pbf_scene *)scene)->material_count > 0;
}

int scene_block_has_material(const void *block) {
    return ((const pbf_block_def *)block)->phase != 0;
}

int scene_emitter_has_material(const void *emitter) {
    return ((const pbf_emitter_def *)emitter)->phase != 0;
}

/* Element `index` of "materials": a name not used before, and a rest density within
 * PBF_MAX_DENSITY_RATIO of every earlier one (the list is read in place, so the earlier elements
 * are in the scene already). */
pbf_status scene_material_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index) {
    (void)object;
    const pbf_scene_material *m = base;
    for (int k = 0; k < index; ++k) {
        const pbf_scene_material *o = &c->scene->materials[k];
        if (strcmp(o->name, m->name) == 0)
            return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                              "'%s.name' \"%s\" is already the name of materials[%d]", path,
                              m->name, k);
        float hi = fmaxf(o->phase.density, m->phase.density),
              lo = fminf(o->phase.density, m->phase.density);
        if (!(hi <= PBF_MAX_DENSITY_RATIO * lo))
            return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                              "'%s.density' %.9g kg/m^3 is %.3g:1 from materials[%d]'s %.9g; the "
                              "solver keeps layers in order up to %g:1 (docs/physics.md, "
                              "\"Several fluids\")",
                              path, scene_short_float(m->phase.density), (double)(hi / lo), k,
                              scene_short_float(o->phase.density), (double)PBF_MAX_DENSITY_RATIO);
        if (o->surface_tension != m->surface_tension)
            return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                              "'%s.surface_tension' %.9g N/m differs from materials[%d]'s %.9g: "
                              "the materials of a scene share one surface tension for now",
                              path, scene_short_float(m->surface_tension), k,
                              scene_short_float(o->surface_tension));
    }
    return PBF_OK;
}

/* "material": a name of the scene's materials (or, as pbf_scene_to_json writes it, the index of
 * one), stored as the phase index at the key's offset. */
pbf_status scene_material_name(const scene_ctx *c, const scene_key *key, const cJSON *item,
                               const cJSON *parent, const char *path, void *base) {
    (void)parent;
    const pbf_scene *s = c->scene;
    int *phase = (int *)((char *)base + key->offset);
    if (s->material_count == 0)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "'%s' names a material, but the scene has no 'materials' section", path);
    if (cJSON_IsNumber(item)) {
        double v = item->valuedouble;
        if (!(v >= 0.0 && v < s->material_count && v == floor(v)))
            return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                              "'%s' must name one of the %d materials, got %g", path,
                              s->material_count, v);
        *phase = (int)v;
        return PBF_OK;
    }
    if (!cJSON_IsString(item))
        return scene_fail(c, PBF_ERR_PARSE, path, "'%s' must be a material's name, got %s", path,
                          scene_type_name(item));
    for (int k = 0; k < s->material_count; ++k)
        if (strcmp(s->materials[k].name, item->valuestring) == 0) {
            *phase = k;
            return PBF_OK;
        }
    char names[256] = "";
    for (int k = 0; k < s->material_count; ++k)
        scene_append(names, sizeof names, "%s\"%s\"", k ? ", " : "", s->materials[k].name);
    return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                      "'%s' names an unknown material \"%s\"; the scene's materials are %s", path,
                      item->valuestring, names);
}

/* After the fluid section: the world def the materials give. fluid.rest_density and
 * fluid.surface_tension, when written, must agree with them (pbf_scene_to_json writes both). */
pbf_status scene_materials_apply(const scene_ctx *c, const cJSON *fluid, pbf_scene *s) {
    if (s->material_count == 0) return PBF_OK;
    const pbf_scene_material *m0 = &s->materials[0];
    if (scene_member(fluid, "rest_density") != NULL && s->world.rest_density != m0->phase.density)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "fluid.rest_density",
                          "'fluid.rest_density' %.9g kg/m^3 disagrees with the materials: with "
                          "materials the reference density is the first material's (%.9g); "
                          "leave it out",
                          scene_short_float(s->world.rest_density),
                          scene_short_float(m0->phase.density));
    if (scene_member(fluid, "surface_tension") != NULL &&
        s->world.material.surface_tension != m0->surface_tension)
        return scene_fail(c, PBF_ERR_INVALID_ARG, "fluid.surface_tension",
                          "'fluid.surface_tension' %.9g N/m disagrees with the materials' %.9g: "
                          "with materials give it per material; leave it out",
                          scene_short_float(s->world.material.surface_tension),
                          scene_short_float(m0->surface_tension));
    s->world.rest_density = m0->phase.density;
    s->world.material.surface_tension = m0->surface_tension;
    s->world.phase_count = s->material_count;
    for (int k = 0; k < s->material_count; ++k) s->world.phases[k] = s->materials[k].phase;
    return PBF_OK;
}
