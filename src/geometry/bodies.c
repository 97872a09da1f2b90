/* Floating mesh bodies (meshes.h, docs/physics.md "Mesh solids"): rigid bodies moved by gravity
 * and the fluid's force and torque, two-way coupled through the solver's corrections (the force
 * a mesh feels is measured in meshes.c, after every Δp pass). */
#include <string.h>

#include "meshes.h"
#include "rigid.h"

/* Semi-implicit Euler with an added mass M_a = added_mass · ρ0 · V and the matching added
 * inertia (the body's inertia scaled by M_a / M), as the tool's (docs/tool.md):
 *     (M + M_a) a = M g + F_prev + M_a a_prev,     (I + I_a) α = τ_prev + I_a α_prev − ω × I ω
 * F_prev already holds about −M_a a_prev (the fluid it accelerates); adding it back removes the
 * lag that makes an explicit coupling of a light body oscillate. At rest it changes nothing.
 * The domain's walls stop the body: after the move every vertex beyond a wall pushes it back
 * along that axis, and the velocity into the wall is removed (inelastic, no friction). */
void pbf__bodies_advance(const pbf_world *w, pbf_mesh_body *b, float dt) {
    const double m = b->mass, ma = (double)b->def.added_mass * w->def.rest_density *
                                   b->props.volume;
    const double g[3] = {w->def.gravity.x, w->def.gravity.y, w->def.gravity.z};
    double acc[3], alpha[3];
    for (int k = 0; k < 3; ++k) {
        acc[k] = (m * g[k] + b->force_prev[k] + ma * b->accel_prev[k]) / (m + ma);
        b->velocity[k] += acc[k] * dt;
        b->position[k] += b->velocity[k] * dt;
    }
    /* the inertia in the world frame: R I Rᵀ, times (1 + M_a / M) */
    double Rt[9], t1[9], I[9], Iinv[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Rt[3 * r + c] = b->R[3 * c + r];
    pbf__mat_mul(b->R, b->inertia, t1);
    pbf__mat_mul(t1, Rt, I);
    const double scale = 1.0 + ma / m;
    double Is[9];
    for (int k = 0; k < 9; ++k) Is[k] = I[k] * scale;
    if (pbf__mat_inverse(Is, Iinv) == 0) {
        double Iw[3], rhs[3];
        pbf__mat_apply(I, b->omega, Iw);
        const double *o = b->omega;
        const double gyro[3] = {o[1] * Iw[2] - o[2] * Iw[1], o[2] * Iw[0] - o[0] * Iw[2],
                                o[0] * Iw[1] - o[1] * Iw[0]};
        double Ia_alpha[3];
        pbf__mat_apply(I, b->alpha_prev, Ia_alpha);
        for (int k = 0; k < 3; ++k)
            rhs[k] = b->torque_prev[k] + (scale - 1.0) * Ia_alpha[k] - gyro[k];
        pbf__mat_apply(Iinv, rhs, alpha);
    } else {
        alpha[0] = alpha[1] = alpha[2] = 0.0;
    }
    for (int k = 0; k < 3; ++k) b->omega[k] += alpha[k] * dt;
    pbf__quat_integrate(b->q, b->omega, dt);
    pbf__mat_from_quat(b->q, b->R);

    /* the walls, where they are at the substep's end */
    pbf_v3 lo, hi;
    pbf__walls_at(&w->def, w->time + dt, &lo, &hi);
    const double los[3] = {lo.x, lo.y, lo.z}, his[3] = {hi.x, hi.y, hi.z};
    double push[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < b->mesh.vertex_count; ++i) {
        const float *p = b->mesh.vertices + 3 * (size_t)i;
        const double local[3] = {p[0], p[1], p[2]};
        double x[3];
        pbf__mat_apply(b->R, local, x);
        for (int k = 0; k < 3; ++k) {
            double at = x[k] + b->position[k];
            if (at < los[k] && los[k] - at > push[k]) push[k] = los[k] - at;
            if (at > his[k] && his[k] - at < push[k]) push[k] = his[k] - at;
        }
    }
    for (int k = 0; k < 3; ++k) {
        if (push[k] == 0.0) continue;
        b->position[k] += push[k];
        if (b->velocity[k] * push[k] < 0.0) b->velocity[k] = 0.0;
        acc[k] = 0.0;
    }
    for (int k = 0; k < 3; ++k) {
        b->accel_prev[k] = acc[k];
        b->alpha_prev[k] = alpha[k];
        b->sub_force[k] = b->sub_torque[k] = 0.0;
    }
}

void pbf__bodies_substep_end(pbf_mesh_body *b) {
    memcpy(b->force_prev, b->sub_force, sizeof b->force_prev);
    memcpy(b->torque_prev, b->sub_torque, sizeof b->torque_prev);
}
