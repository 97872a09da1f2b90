/* Floating mesh bodies (meshes.h, docs/physics.md "Mesh solids"): rigid bodies moved by gravity
 * and the fluid's force and torque, two-way coupled through the solver's corrections (the force
 * a mesh feels is measured in meshes.c, after every Δp pass). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "rigid.h"

/* Semi-implicit Euler with an added mass M_a = added_mass · ρ0 · V and the matching added
 * inertia (the body's inertia scaled by M_a / M), as the tool's (docs/tool.md):
 *     (M + M_a) a = M g + F_prev + M_a a_prev,     (I + I_a) α = τ_prev + I_a α_prev − ω × I ω
 * F_prev already holds about −M_a a_prev (the fluid it accelerates); adding it back removes the
 * lag that makes an explicit coupling of a light body oscillate. At rest it changes nothing.
 * The contacts (with the walls too) come after every body has moved: pbf__bodies_contacts. */
void pbf__bodies_advance(const pbf_world *w, pbf_mesh_body *b, float dt) {
    const double m = b->mass,
                 ma = (double)b->def.added_mass * w->def.rest_density * b->props.volume;
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

/* ---------------------------------------------------------------------------------------------
 * Contacts of floating bodies with the other solids and with each other. */

int pbf__bodies_sample(pbf_mesh_body *b, float spacing) {
    const pbf_trimesh *m = &b->mesh;
    /* a lattice of n segments per edge on each triangle whose longest edge exceeds the spacing;
     * the cap keeps a fine mesh of large triangles from costing more than 65536 points */
    int cap = 32;
    int64_t total;
    for (;;) {
        total = m->vertex_count;
        for (int t = 0; t < m->triangle_count; ++t) {
            const int32_t *tri = m->triangles + 3 * (size_t)t;
            double longest = 0.0;
            for (int e = 0; e < 3; ++e) {
                const float *p = m->vertices + 3 * (size_t)tri[e],
                            *q = m->vertices + 3 * (size_t)tri[(e + 1) % 3];
                double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
                double len = sqrt(dx * dx + dy * dy + dz * dz);
                if (len > longest) longest = len;
            }
            int n = (int)ceil(longest / spacing);
            n = n < cap ? n : cap;
            if (n >= 2) total += (int64_t)(n + 1) * (n + 2) / 2 - 3;
        }
        if (total <= 65536 || cap == 1) break;
        cap /= 2;
    }
    float *s = malloc((size_t)total * 3 * sizeof *s);
    if (s == NULL) return -1;
    memcpy(s, m->vertices, (size_t)m->vertex_count * 3 * sizeof *s);
    int64_t k = m->vertex_count;
    for (int t = 0; t < m->triangle_count && k < total; ++t) {
        const int32_t *tri = m->triangles + 3 * (size_t)t;
        const float *a = m->vertices + 3 * (size_t)tri[0], *bb = m->vertices + 3 * (size_t)tri[1],
                    *c = m->vertices + 3 * (size_t)tri[2];
        double longest = 0.0;
        for (int e = 0; e < 3; ++e) {
            const float *p = m->vertices + 3 * (size_t)tri[e],
                        *q = m->vertices + 3 * (size_t)tri[(e + 1) % 3];
            double dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            double len = sqrt(dx * dx + dy * dy + dz * dz);
            if (len > longest) longest = len;
        }
        int n = (int)ceil(longest / spacing);
        n = n < cap ? n : cap;
        if (n < 2) continue;
        for (int i = 0; i <= n; ++i)
            for (int j = 0; i + j <= n; ++j) {
                if ((i == 0 && j == 0) || i == n || j == n) continue; /* the corners */
                double u = (double)i / n, v = (double)j / n, w0 = 1.0 - u - v;
                for (int q = 0; q < 3; ++q)
                    s[3 * k + q] = (float)(w0 * a[q] + u * bb[q] + v * c[q]);
                ++k;
            }
    }
    b->samples = s;
    b->sample_count = (int)k;
    return 0;
}

/* One point of contact: where, the direction the floating body A must move (unit), how deep,
 * and the impulses accumulated on it (normal, friction). */
typedef struct contact {
    double p[3], n[3], depth, bounce, jn, jt[3];
} contact;

/* A rigid participant: a floating body (inverse mass and world inverse inertia), or an
 * immovable solid (static or kinematic: its velocity is imposed). */
typedef struct rigid {
    pbf_mesh_body *body; /* NULL: an analytic collider */
    double inv_mass, inv_inertia[9];
    double x[3], v[3], w[3];
} rigid;

static void rigid_of(pbf_mesh_body *b, rigid *r) {
    memset(r, 0, sizeof *r);
    r->body = b;
    if (b == NULL) return;
    memcpy(r->x, b->position, sizeof r->x);
    memcpy(r->v, b->velocity, sizeof r->v);
    memcpy(r->w, b->omega, sizeof r->w);
    if (b->def.motion != PBF_MESH_FLOATING) return;
    r->inv_mass = 1.0 / b->mass;
    double inv[9], Rt[9], t[9];
    if (pbf__mat_inverse(b->inertia, inv) != 0) return;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Rt[3 * i + j] = b->R[3 * j + i];
    pbf__mat_mul(b->R, inv, t);
    pbf__mat_mul(t, Rt, r->inv_inertia);
}

static void cross(const double a[3], const double b[3], double out[3]) {
    const double r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                         a[0] * b[1] - a[1] * b[0]};
    out[0] = r[0], out[1] = r[1], out[2] = r[2];
}

static double dot(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Velocity of a participant's material at p. */
static void point_velocity(const rigid *r, const double p[3], double out[3]) {
    double rel[3] = {p[0] - r->x[0], p[1] - r->x[1], p[2] - r->x[2]}, wr[3];
    cross(r->w, rel, wr);
    for (int k = 0; k < 3; ++k) out[k] = r->v[k] + wr[k];
}

/* 1 / (the inverse effective mass of a participant at p along unit d). */
static double inverse_mass_along(const rigid *r, const double p[3], const double d[3]) {
    if (r->inv_mass == 0.0) return 0.0;
    double rel[3] = {p[0] - r->x[0], p[1] - r->x[1], p[2] - r->x[2]}, rn[3], irn[3], c[3];
    cross(rel, d, rn);
    pbf__mat_apply(r->inv_inertia, rn, irn);
    cross(irn, rel, c);
    return r->inv_mass + dot(d, c);
}

/* The impulse j (world) at p on a participant. */
static void apply_impulse(rigid *r, const double p[3], const double j[3]) {
    if (r->inv_mass == 0.0) return;
    double rel[3] = {p[0] - r->x[0], p[1] - r->x[1], p[2] - r->x[2]}, rj[3], dw[3];
    cross(rel, j, rj);
    pbf__mat_apply(r->inv_inertia, rj, dw);
    for (int k = 0; k < 3; ++k) {
        r->v[k] += r->inv_mass * j[k];
        r->w[k] += dw[k];
    }
}

/* The points of `from` (local samples, or a static mesh's vertices) inside solid s, as contacts
 * that push A by `sign` times s's normal; only points within `reach` of A's centre count. */
static int gather(const float *points, int count, const double R[9], const double x[3],
                  const pbf_solid *s, double sign, const double centre[3], double reach,
                  contact *out, int cap, int n) {
    for (int i = 0; i < count && n < cap; ++i) {
        const double local[3] = {points[3 * i], points[3 * i + 1], points[3 * i + 2]};
        double p[3];
        pbf__mat_apply(R, local, p);
        for (int k = 0; k < 3; ++k) p[k] += x[k];
        const double d2 = (p[0] - centre[0]) * (p[0] - centre[0]) +
                          (p[1] - centre[1]) * (p[1] - centre[1]) +
                          (p[2] - centre[2]) * (p[2] - centre[2]);
        if (d2 > reach * reach) continue;
        const pbf_v3 pw = v3((float)p[0], (float)p[1], (float)p[2]);
        if (s->type == PBF_SOLID_MESH && pbf_field_far(s->field, pbf_mesh_local(s, pw))) continue;
        pbf_v3 nrm;
        float d = pbf_solid_sdf(s, pw, &nrm);
        if (!(d < 0.0f)) continue;
        contact *c = &out[n++];
        memset(c, 0, sizeof *c);
        memcpy(c->p, p, sizeof p);
        c->n[0] = sign * nrm.x, c->n[1] = sign * nrm.y, c->n[2] = sign * nrm.z;
        c->depth = -(double)d;
    }
    return n;
}

/* Drops the points whose normal is over 60° from the depth-weighted mean: a point deep inside
 * a box near its edge takes the normal of the side face, not of the face it came through, and
 * would push two stacked boxes sideways and spin them. In a corner (two faces at 90°) the mean
 * lies between them and both groups stay. Returns the points kept. */
static int filter(contact *buf, int n) {
    double mean[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) mean[k] += buf[i].depth * buf[i].n[k];
    const double ml = sqrt(dot(mean, mean));
    if (!(ml > 0.0)) return n;
    int kept = 0;
    for (int i = 0; i < n; ++i)
        if (dot(buf[i].n, mean) >= 0.5 * ml) buf[kept++] = buf[i];
    return kept;
}

/* Pushes A (and B when it floats) apart along the deepest of n contacts, shared by the inverse
 * masses. */
static void push_apart(pbf_mesh_body *a, pbf_mesh_body *b, const rigid *A, const rigid *B,
                       contact *buf, int n) {
    n = filter(buf, n);
    if (n == 0) return;
    int deepest = 0;
    for (int i = 1; i < n; ++i)
        if (buf[i].depth > buf[deepest].depth) deepest = i;
    const double wsum = A->inv_mass + B->inv_mass;
    for (int k = 0; k < 3; ++k) {
        const double push = buf[deepest].depth * buf[deepest].n[k];
        a->position[k] += push * A->inv_mass / wsum;
        if (B->inv_mass > 0.0) b->position[k] -= push * B->inv_mass / wsum;
    }
}

/* Stops the approach at every one of n contacts with sequential impulses (8 sweeps,
 * accumulated and clamped: the normal impulse only pushes, the friction stays within mu times
 * it); an approach faster than `slow` bounces back at e times its speed. */
static void impulses(pbf_mesh_body *a, pbf_mesh_body *b, rigid *A, rigid *B, contact *buf, int n,
                     double e, double mu, double slow) {
    n = filter(buf, n);
    if (n == 0) return;
    a->touched = 1;
    if (B->inv_mass > 0.0) b->touched = 1;
    /* the bounce each point asks for, from the approach before any impulse */
    for (int i = 0; i < n; ++i) {
        double va[3], vb[3];
        point_velocity(A, buf[i].p, va);
        point_velocity(B, buf[i].p, vb);
        const double vn = (va[0] - vb[0]) * buf[i].n[0] + (va[1] - vb[1]) * buf[i].n[1] +
                          (va[2] - vb[2]) * buf[i].n[2];
        buf[i].bounce = vn < -slow ? -e * vn : 0.0;
    }
    for (int iter = 0; iter < 8; ++iter) {
        for (int i = 0; i < n; ++i) {
            contact *c = &buf[i];
            double va[3], vb[3], rel[3];
            point_velocity(A, c->p, va);
            point_velocity(B, c->p, vb);
            for (int k = 0; k < 3; ++k) rel[k] = va[k] - vb[k];
            const double vn = dot(rel, c->n);
            const double kn = inverse_mass_along(A, c->p, c->n) + inverse_mass_along(B, c->p, c->n);
            if (!(kn > 0.0)) continue;
            double jn = c->jn + (c->bounce - vn) / kn;
            jn = jn > 0.0 ? jn : 0.0;
            double dj[3], ndj[3];
            for (int k = 0; k < 3; ++k) dj[k] = (jn - c->jn) * c->n[k];
            c->jn = jn;
            apply_impulse(A, c->p, dj);
            for (int k = 0; k < 3; ++k) ndj[k] = -dj[k];
            apply_impulse(B, c->p, ndj);
            /* friction: the tangential slip, stopped within the cone mu jn */
            point_velocity(A, c->p, va);
            point_velocity(B, c->p, vb);
            for (int k = 0; k < 3; ++k) rel[k] = va[k] - vb[k];
            const double vn2 = dot(rel, c->n);
            double t[3];
            for (int k = 0; k < 3; ++k) t[k] = rel[k] - vn2 * c->n[k];
            const double slip = sqrt(dot(t, t));
            if (!(slip > 1e-12)) continue;
            for (int k = 0; k < 3; ++k) t[k] /= slip;
            const double kt = inverse_mass_along(A, c->p, t) + inverse_mass_along(B, c->p, t);
            if (!(kt > 0.0)) continue;
            double want[3], len = 0.0;
            for (int k = 0; k < 3; ++k) {
                want[k] = c->jt[k] - slip / kt * t[k];
                len += want[k] * want[k];
            }
            len = sqrt(len);
            const double limit = mu * c->jn;
            if (len > limit)
                for (int k = 0; k < 3; ++k) want[k] *= limit / len;
            for (int k = 0; k < 3; ++k) {
                dj[k] = want[k] - c->jt[k];
                ndj[k] = -dj[k];
                c->jt[k] = want[k];
            }
            apply_impulse(A, c->p, dj);
            apply_impulse(B, c->p, ndj);
        }
    }
    memcpy(a->velocity, A->v, sizeof A->v);
    memcpy(a->omega, A->w, sizeof A->w);
    /* the contact, not the last acceleration, holds the body now: the added-mass term must not
     * carry it into the next substep (as the walls did before) */
    memset(a->accel_prev, 0, sizeof a->accel_prev);
    memset(a->alpha_prev, 0, sizeof a->alpha_prev);
    if (B->inv_mass > 0.0) {
        memcpy(b->velocity, B->v, sizeof B->v);
        memcpy(b->omega, B->w, sizeof B->w);
        memset(b->accel_prev, 0, sizeof b->accel_prev);
        memset(b->alpha_prev, 0, sizeof b->alpha_prev);
    }
}

/* The contacts of floating body A with a solid s (body b when it is a mesh): A's samples in s
 * and, for a mesh, b's points (a floating body's samples, another mesh's vertices) in A. */
static void resolve(pbf_mesh_body *a, pbf_mesh_body *b, const pbf_solid *s, double e, double mu,
                    double slow, int impulse, contact *buf, int cap) {
    rigid A, B;
    rigid_of(a, &A);
    rigid_of(b, &B);
    /* the reach of A: its samples' farthest distance from its centre */
    double reach = 0.0;
    for (int i = 0; i < a->sample_count; ++i) {
        const float *p = a->samples + 3 * (size_t)i;
        double d = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
        if (d > reach) reach = d;
    }
    int n = gather(a->samples, a->sample_count, a->R, a->position, s, 1.0, a->position, INFINITY,
                   buf, cap, 0);
    if (b != NULL) {
        pbf_solid sa;
        pbf__mesh_body_solid(a, &sa);
        const float *pts = b->def.motion == PBF_MESH_FLOATING ? b->samples : b->mesh.vertices;
        const int count =
            b->def.motion == PBF_MESH_FLOATING ? b->sample_count : b->mesh.vertex_count;
        n = gather(pts, count, b->R, b->position, &sa, -1.0, a->position, reach, buf, cap, n);
    }
    if (n == 0) return;
    if (impulse)
        impulses(a, b, &A, &B, buf, n, e, mu, slow);
    else
        push_apart(a, b, &A, &B, buf, n);
}

/* The domain's walls, where they are at the substep's end, moving at their own velocity (the
 * moving wall): each wall one immovable participant. */
static void resolve_walls(const pbf_world *w, pbf_mesh_body *a, float dt, double slow, int impulse,
                          contact *buf, int cap) {
    pbf_v3 lo0, hi0, lo1, hi1;
    pbf__walls_at(&w->def, w->time, &lo0, &hi0);
    pbf__walls_at(&w->def, w->time + dt, &lo1, &hi1);
    const double lo[3] = {lo1.x, lo1.y, lo1.z}, hi[3] = {hi1.x, hi1.y, hi1.z};
    const double vlo[3] = {(lo1.x - lo0.x) / dt, (lo1.y - lo0.y) / dt, (lo1.z - lo0.z) / dt},
                 vhi[3] = {(hi1.x - hi0.x) / dt, (hi1.y - hi0.y) / dt, (hi1.z - hi0.z) / dt};
    for (int wall = 0; wall < 6; ++wall) {
        const int k = wall >> 1, high = wall & 1;
        const double plane = high ? hi[k] : lo[k], sign = high ? -1.0 : 1.0;
        int n = 0;
        for (int i = 0; i < a->sample_count && n < cap; ++i) {
            const double local[3] = {a->samples[3 * i], a->samples[3 * i + 1],
                                     a->samples[3 * i + 2]};
            double p[3];
            pbf__mat_apply(a->R, local, p);
            for (int q = 0; q < 3; ++q) p[q] += a->position[q];
            const double depth = sign * (plane - p[k]);
            if (!(depth > 0.0)) continue;
            contact *c = &buf[n++];
            memset(c, 0, sizeof *c);
            memcpy(c->p, p, sizeof p);
            c->n[k] = sign;
            c->depth = depth;
        }
        if (n == 0) continue;
        rigid A, B;
        rigid_of(a, &A);
        rigid_of(NULL, &B);
        B.v[k] = high ? vhi[k] : vlo[k];
        if (impulse)
            impulses(a, NULL, &A, &B, buf, n, a->def.restitution, a->def.friction, slow);
        else
            push_apart(a, NULL, &A, &B, buf, n);
    }
}

void pbf__bodies_contacts(pbf_world *w, float dt) {
    pbf_geometry *g = w->geometry;
    /* room for twice the most points of a floating body: its own and as many of the other's
     * (a large static mesh's vertices beyond that, within its reach, are not looked at) */
    int cap = 0;
    for (int i = 0; i < g->count; ++i) {
        const pbf_mesh_body *b = g->body[i];
        if (b->def.motion == PBF_MESH_FLOATING && b->sample_count > cap) cap = b->sample_count;
    }
    contact *buf = malloc((size_t)2 * (size_t)cap * sizeof *buf);
    if (buf == NULL) return; /* tens of kilobytes: without them the bodies only miss contacts */
    const double gl = sqrt((double)w->def.gravity.x * w->def.gravity.x +
                           (double)w->def.gravity.y * w->def.gravity.y +
                           (double)w->def.gravity.z * w->def.gravity.z);
    const double slow = 2.0 * gl * dt; /* slower approaches rest instead of bouncing */
    /* Velocities first, at the pose the bodies reached: Gauss–Seidel over the pairs (a stack's
     * contacts, the floor under the lower body and the upper one on it, need a few passes to
     * agree). Then a body that touched something moves from its start of the substep with the
     * velocities the contacts left, so that a resting body does not creep down a slope (its
     * fall, pushed back along the normal, would keep the slope's share); then what still
     * overlaps is pushed apart. */
    for (int i = 0; i < g->count; ++i) g->body[i]->touched = 0;
    for (int pass = 0; pass < 5; ++pass) {
        const int impulse = pass < 4;
        if (pass == 4)
            for (int i = 0; i < g->count; ++i) {
                pbf_mesh_body *b = g->body[i];
                if (b->def.motion != PBF_MESH_FLOATING || !b->touched) continue;
                for (int k = 0; k < 3; ++k)
                    b->position[k] = b->position_start[k] + b->velocity[k] * dt;
                memcpy(b->q, b->q_start, sizeof b->q);
                pbf__quat_integrate(b->q, b->omega, dt);
                pbf__mat_from_quat(b->q, b->R);
            }
        for (int i = 0; i < g->count; ++i) {
            pbf_mesh_body *a = g->body[i];
            if (a->def.motion != PBF_MESH_FLOATING) continue;
            const double e = a->def.restitution, mu = a->def.friction;
            resolve_walls(w, a, dt, slow, impulse, buf, 2 * cap);
            for (int c = 0; c < w->collider_count; ++c)
                resolve(a, NULL, &w->solids[c], e, mu, slow, impulse, buf, 2 * cap);
            for (int j = 0; j < g->count; ++j) {
                pbf_mesh_body *b = g->body[j];
                if (j == i || b->def.sink) continue;
                const int floating = b->def.motion == PBF_MESH_FLOATING;
                if (floating && j < i) continue; /* the pair was done from b */
                pbf_solid s;
                pbf__mesh_body_solid(b, &s);
                const double eb = floating ? 0.5 * (e + b->def.restitution) : e,
                             mub = floating ? 0.5 * (mu + b->def.friction) : mu;
                resolve(a, b, &s, eb, mub, slow, impulse, buf, 2 * cap);
            }
        }
    }
    free(buf);
}
