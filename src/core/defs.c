/* Default definitions. Every default is documented next to its field in include/pbf/pbf.h; the
 * world def's are the `dflt` column of src/core/def_fields.h. */
#include "pbf/pbf.h"

#include "def_fields.h"

pbf_world_def pbf_default_world_def(void) {
    pbf_world_def d;
#define SET_F32(dst, value) dst = (value)
#define SET_I32(dst, value) dst = (value)
#define SET_VEC3(dst, value) dst = (value)
#define SET_WALLS(dst, value)                                                                      \
    for (int k = 0; k < PBF_WALL_COUNT; ++k) dst[k] = (value)
#define SET_PHASES(dst, value)                                                                     \
    for (int k = 0; k < PBF_MAX_PHASES; ++k) dst[k] = (value)
#define SET_DEFAULT(kind, member, since, old, dflt, range, expected) SET_##kind(d.member, dflt);
    PBF_DEF_FIELDS(SET_DEFAULT) /* every member is a row (checkpoint.c asserts it) */
#undef SET_DEFAULT
#undef SET_F32
#undef SET_I32
#undef SET_VEC3
#undef SET_WALLS
#undef SET_PHASES
    return d;
}

pbf_solver_def pbf_default_solver_def(void) { return pbf_default_world_def().solver; }

pbf_phase_def pbf_default_phase_def(void) { return PBF_DEF_PHASE_DEFAULT; }

pbf_block_def pbf_default_block_def(void) {
    pbf_block_def b;
    b.min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    b.velocity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    b.jitter = 0.0f;
    b.seed = 1;
    b.phase = 0;
    return b;
}

pbf_collider_def pbf_default_collider_def(void) {
    pbf_collider_def c;
    c.type = PBF_COLLIDER_SPHERE;
    c.center = (pbf_vec3){0.5f, 0.5f, 0.5f};
    c.half_extents = (pbf_vec3){0.1f, 0.1f, 0.1f};
    c.radius = 0.1f;
    c.a = (pbf_vec3){0.4f, 0.5f, 0.5f};
    c.b = (pbf_vec3){0.6f, 0.5f, 0.5f};
    c.adhesion = 0.0f;
    c.friction = 0.0f;
    return c;
}
