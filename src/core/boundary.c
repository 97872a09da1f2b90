/* Domain walls with scripted motion, colliders in the kernels' form, and a substep's constants
 * (dt, s_corr, the CFL limit, the walls at its end) for every backend. */
#include <string.h>

#include "world_state.h"

static float wall_offset(const pbf_wall_motion *m, double t) {
    if (m->amplitude == 0.0f) return 0.0f;
    /* double for the phase: t grows without bound, float would lose the period after hours */
    return (float)(m->amplitude * sin(2.0 * 3.14159265358979323846 * t / m->period + m->phase));
}

void pbf__walls_at(const pbf_world_def *def, double t, pbf_v3 *lo, pbf_v3 *hi) {
    const pbf_wall_motion *m = def->wall_motion;
    *lo = v3(def->domain_min.x + wall_offset(&m[PBF_WALL_X_MIN], t),
             def->domain_min.y + wall_offset(&m[PBF_WALL_Y_MIN], t),
             def->domain_min.z + wall_offset(&m[PBF_WALL_Z_MIN], t));
    *hi = v3(def->domain_max.x + wall_offset(&m[PBF_WALL_X_MAX], t),
             def->domain_max.y + wall_offset(&m[PBF_WALL_Y_MAX], t),
             def->domain_max.z + wall_offset(&m[PBF_WALL_Z_MAX], t));
}

void pbf__walls_envelope(const pbf_world_def *def, pbf_v3 *lo, pbf_v3 *hi) {
    const pbf_wall_motion *m = def->wall_motion;
    *lo = v3(def->domain_min.x - m[PBF_WALL_X_MIN].amplitude,
             def->domain_min.y - m[PBF_WALL_Y_MIN].amplitude,
             def->domain_min.z - m[PBF_WALL_Z_MIN].amplitude);
    *hi = v3(def->domain_max.x + m[PBF_WALL_X_MAX].amplitude,
             def->domain_max.y + m[PBF_WALL_Y_MAX].amplitude,
             def->domain_max.z + m[PBF_WALL_Z_MAX].amplitude);
}

pbf_solid pbf__solid_from_def(const pbf_collider_def *c) {
    pbf_solid s;
    memset(&s, 0, sizeof s); /* no mesh field, identity rotation unused */
    s.radius = c->radius;
    s.adhesion = c->adhesion;
    s.friction = c->friction;
    switch (c->type) {
    case PBF_COLLIDER_SPHERE:
        s.type = PBF_SOLID_SPHERE;
        s.a = v3(c->center.x, c->center.y, c->center.z);
        s.b = v3(0.0f, 0.0f, 0.0f);
        break;
    case PBF_COLLIDER_BOX:
        s.type = PBF_SOLID_BOX;
        s.a = v3(c->center.x, c->center.y, c->center.z);
        s.b = v3(c->half_extents.x, c->half_extents.y, c->half_extents.z);
        s.radius = 0.0f;
        break;
    default:
        s.type = PBF_SOLID_CAPSULE;
        s.a = v3(c->a.x, c->a.y, c->a.z);
        s.b = v3(c->b.x, c->b.y, c->b.z);
        break;
    }
    return s;
}

void pbf__substep_params(pbf_world *w, float dt, double t_end) {
    pbf_params *P = &w->params;
    P->dt = dt;
    P->inv_dt = 1.0f / dt;
    P->scorr_scale = pbf__scorr_k(&w->def, dt) / w->lattice_grad2;
    P->max_speed = w->def.solver.cfl > 0.0f ? w->def.solver.cfl * P->h / dt : 0.0f;
    pbf__walls_at(&w->def, t_end, &P->wall_lo, &P->wall_hi);
}
