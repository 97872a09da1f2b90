/* The tool: a rigid sphere in the fluid, two-way coupled, with the force on it every step
 * (seed 004; docs/tool.md).
 *
 * Per substep: substep_begin moves the sphere to where it is at the end of the substep (path,
 * external pose or free-body integration) and fills the kernels' view; the solver's λ and Δp
 * passes treat it as a solid and record the displacement it gives each particle (kernels.h, tool
 * section); substep_end adds adhesion and damping in a parallel pass that writes per-particle
 * contributions, and reduces everything serially in slot order, so the force is bit-identical
 * for any thread count. Forces reported for a step are the mean over its substeps. */
#include "module.h" /* this feature as a module of the step */
#include "tool.h"
#include "caps.h" /* what runs where: the tool checked when it is added */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h" /* the tool's per-particle boundary and coupling */

#define PI_D 3.14159265358979323846

pbf_tool_def pbf_default_tool_def(void) {
    pbf_tool_def d;
    memset(&d, 0, sizeof d);
    d.radius = 0.05f;
    d.position = (pbf_vec3){0.5f, 0.5f, 0.5f};
    d.velocity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.motion = PBF_TOOL_KINEMATIC;
    d.mass = 0.2618f; /* 500 kg/m³ · (4/3)π 0.05³ */
    d.added_mass = 0.5f;
    d.adhesion_k_tool = 0.0f;
    d.adhesion_k_fluid = 0.0f;
    d.adhesion_a = 0.0f;
    d.adhesion_b = 0.02f;
    d.damping = 0.0f;
    d.key_count = 0;
    d.interpolation = PBF_TOOL_LINEAR;
    return d;
}

/* ---------------------------------------------------------------------------------------------
 * Path */

static pbf_vec3 lerp3(pbf_vec3 a, pbf_vec3 b, double s) {
    pbf_vec3 r;
    r.x = (float)((double)a.x + s * ((double)b.x - (double)a.x));
    r.y = (float)((double)a.y + s * ((double)b.y - (double)a.y));
    r.z = (float)((double)a.z + s * ((double)b.z - (double)a.z));
    return r;
}

static double axis_of(pbf_vec3 v, int a) { return a == 0 ? v.x : a == 1 ? v.y : v.z; }

/* The velocity at key i (m/s), per axis, of a monotone cubic (Fritsch–Carlson / PCHIP, the
 * weighted harmonic mean of the two secants): zero at the end keys, where the path turns back
 * and next to a wait (two keys at one place), so the tool never overshoots a key; elsewhere
 * continuous through the key. */
static void tangent(const pbf_tool_key *k, int n, int i, double out[3]) {
    out[0] = out[1] = out[2] = 0.0;
    if (i <= 0 || i >= n - 1) return;
    double h0 = (double)k[i].time - k[i - 1].time, h1 = (double)k[i + 1].time - k[i].time;
    for (int a = 0; a < 3; ++a) {
        double d0 = (axis_of(k[i].position, a) - axis_of(k[i - 1].position, a)) / h0;
        double d1 = (axis_of(k[i + 1].position, a) - axis_of(k[i].position, a)) / h1;
        if (d0 * d1 <= 0.0) continue;
        out[a] = 3.0 * (h0 + h1) / ((2.0 * h1 + h0) / d0 + (h1 + 2.0 * h0) / d1);
    }
}

pbf_vec3 pbf_tool_path_position(const pbf_tool_def *d, double t) {
    pbf_vec3 zero = {0.0f, 0.0f, 0.0f};
    if (d == NULL) return zero;
    const int n = d->key_count;
    if (n <= 0 || n > PBF_TOOL_MAX_KEYS) return d->position;
    const pbf_tool_key *k = d->keys;
    if (!(t > (double)k[0].time)) return k[0].position; /* also NaN */
    if (t >= (double)k[n - 1].time) return k[n - 1].position;
    int i = 0;
    while (i + 2 < n && t >= (double)k[i + 1].time) ++i;
    double t0 = k[i].time, span = (double)k[i + 1].time - t0, s = (t - t0) / span;
    if (d->interpolation != PBF_TOOL_SMOOTH) return lerp3(k[i].position, k[i + 1].position, s);
    double m0[3], m1[3];
    tangent(k, n, i, m0);
    tangent(k, n, i + 1, m1);
    double s2 = s * s, s3 = s2 * s;
    double h00 = 2.0 * s3 - 3.0 * s2 + 1.0, h10 = s3 - 2.0 * s2 + s, h01 = -2.0 * s3 + 3.0 * s2,
           h11 = s3 - s2;
    const pbf_vec3 a = k[i].position, b = k[i + 1].position;
    pbf_vec3 r;
    r.x = (float)(h00 * a.x + h10 * span * m0[0] + h01 * b.x + h11 * span * m1[0]);
    r.y = (float)(h00 * a.y + h10 * span * m0[1] + h01 * b.y + h11 * span * m1[1]);
    r.z = (float)(h00 * a.z + h10 * span * m0[2] + h01 * b.z + h11 * span * m1[2]);
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * Lifetime and validation */

static int finite3(pbf_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

static pbf_status validate(pbf_world *w, const pbf_tool_def *d) {
#define TOOL_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) return pbf__fail(w, PBF_ERR_INVALID_ARG, "tool def: " __VA_ARGS__);           \
    } while (0)
    TOOL_CHECK(isfinite(d->radius) && d->radius > 0.0f && d->radius <= 10.0f,
               "radius must be in (0, 10] m, got %g", (double)d->radius);
    TOOL_CHECK(finite3(d->position), "position must be finite");
    TOOL_CHECK(finite3(d->velocity), "velocity must be finite");
    TOOL_CHECK(d->motion == PBF_TOOL_KINEMATIC || d->motion == PBF_TOOL_FREE,
               "motion must be PBF_TOOL_KINEMATIC or PBF_TOOL_FREE, got %d", (int)d->motion);
    TOOL_CHECK(isfinite(d->mass) && d->mass > 0.0f, "mass must be > 0 kg, got %g", (double)d->mass);
    TOOL_CHECK(d->added_mass >= 0.0f && d->added_mass <= 10.0f,
               "added_mass must be in [0, 10], got %g", (double)d->added_mass);
    TOOL_CHECK(isfinite(d->adhesion_k_tool) && d->adhesion_k_tool >= 0.0f,
               "adhesion_k_tool must be >= 0 N/m^3, got %g", (double)d->adhesion_k_tool);
    TOOL_CHECK(isfinite(d->adhesion_k_fluid) && d->adhesion_k_fluid >= 0.0f,
               "adhesion_k_fluid must be >= 0 N/m^3, got %g", (double)d->adhesion_k_fluid);
    TOOL_CHECK(isfinite(d->adhesion_a) && d->adhesion_a >= 0.0f,
               "adhesion_a must be >= 0 m, got %g", (double)d->adhesion_a);
    TOOL_CHECK(isfinite(d->adhesion_b) && d->adhesion_b > d->adhesion_a,
               "adhesion_b must be finite and above adhesion_a (%g m), got %g",
               (double)d->adhesion_a, (double)d->adhesion_b);
    TOOL_CHECK(isfinite(d->damping) && d->damping >= 0.0f,
               "damping must be >= 0 kg/(m^2 s), got %g", (double)d->damping);
    TOOL_CHECK(d->key_count >= 0 && d->key_count <= PBF_TOOL_MAX_KEYS,
               "key_count must be in [0, %d], got %d", PBF_TOOL_MAX_KEYS, d->key_count);
    TOOL_CHECK(d->key_count == 0 || d->motion == PBF_TOOL_KINEMATIC,
               "a path (key_count %d) needs motion PBF_TOOL_KINEMATIC", d->key_count);
    for (int i = 0; i < d->key_count; ++i) {
        TOOL_CHECK(isfinite(d->keys[i].time) && finite3(d->keys[i].position),
                   "keys[%d] must be finite", i);
        TOOL_CHECK(i == 0 || d->keys[i].time > d->keys[i - 1].time,
                   "keys[%d].time (%g s) must be after keys[%d].time (%g s)", i,
                   (double)d->keys[i].time, i - 1, (double)d->keys[i - 1].time);
    }
    TOOL_CHECK(d->interpolation == PBF_TOOL_LINEAR || d->interpolation == PBF_TOOL_SMOOTH,
               "interpolation must be PBF_TOOL_LINEAR or PBF_TOOL_SMOOTH, got %d",
               (int)d->interpolation);
    if (d->motion == PBF_TOOL_FREE) {
        /* A free tool stays inside the domain: the box must hold it. */
        const pbf_world_def *wd = &w->def;
        float size[3] = {wd->domain_max.x - wd->domain_min.x, wd->domain_max.y - wd->domain_min.y,
                         wd->domain_max.z - wd->domain_min.z};
        for (int a = 0; a < 3; ++a)
            TOOL_CHECK(size[a] > 2.0f * d->radius,
                       "a free tool of radius %g m does not fit the domain (%g m along %c)",
                       (double)d->radius, (double)size[a], "xyz"[a]);
    }
#undef TOOL_CHECK
    return PBF_OK;
}

static void free_scratch(pbf_tool_body *t) {
    free(t->dx);
    free(t->f_adh);
    free(t->f_damp);
    free(t->dist);
    t->dx = t->f_adh = t->f_damp = t->dist = NULL;
    t->capacity = 0;
}

void pbf__tool_free(pbf_world *w) {
    if (w == NULL || w->tool == NULL) return;
    free_scratch(w->tool);
    free(w->tool);
    w->tool = NULL;
}

size_t pbf__tool_memory_bytes(const pbf_world *w) {
    if (w->tool == NULL) return 0;
    return sizeof *w->tool + (size_t)w->tool->capacity * 10 * sizeof(float);
}

/* Split over processes (src/comm/mpi/): the smallest distance and the contacts of every process
 * (collective; exact, so the same on each). */
static void reduce_contacts(const pbf_world *w, float *min_dist, int *contacts) {
    if (w->halo == NULL) return;
    w->halo_reduce(w, min_dist, 1, PBF_HALO_MIN_FLOAT);
    w->halo_reduce(w, contacts, 1, PBF_HALO_SUM_INT);
}

/* Smallest distance of a particle centre from the surface, and the particles in contact. */
static void measure(const pbf_world *w, const pbf_tool_body *t, float *min_dist, int *contacts) {
    float md = INFINITY;
    int nc = 0;
    const float contact = 2.0f * w->def.particle_radius;
    for (int i = 0; i < w->count; ++i) {
        float d = v3_len(v3_sub(v3_load(w->x, i), t->position)) - t->def.radius;
        if (d < md) md = d;
        if (d < contact) ++nc;
    }
    reduce_contacts(w, &md, &nc);
    *min_dist = md;
    *contacts = nc;
}

static void publish_state(const pbf_world *w, pbf_tool_body *t) {
    t->state.time = w->time;
    t->state.position = t->position;
    t->state.velocity = t->velocity;
    t->state.radius = t->def.radius;
}

/* The tool measures the particles around it when it is set: their positions must be current on
 * the host. */
pbf_status pbf_world_set_tool(pbf_world *w, const pbf_tool_def *def) {
    if (def != NULL && w->tool == NULL && pbf__caps_require(w, PBF_FEATURE_TOOL) != PBF_OK)
        return PBF_ERR_UNSUPPORTED;
    pbf__host_pull(w); /* cuda */
    if (def == NULL) {
        pbf__tool_free(w);
        return PBF_OK;
    }
    pbf_status st = validate(w, def);
    if (st != PBF_OK) return st;
    pbf_tool_body *t = w->tool;
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL)
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory creating the tool");
        w->tool = t;
    }
    /* Keep the scratch arrays, reset everything else. */
    float *dx = t->dx, *fa = t->f_adh, *fd = t->f_damp, *dist = t->dist;
    int capacity = t->capacity;
    memset(t, 0, sizeof *t);
    t->dx = dx, t->f_adh = fa, t->f_damp = fd, t->dist = dist, t->capacity = capacity;
    t->def = *def;
    t->position = def->motion == PBF_TOOL_KINEMATIC && def->key_count > 0
                      ? pbf_tool_path_position(def, w->time)
                      : def->position;
    t->velocity = def->motion == PBF_TOOL_FREE ? def->velocity : v3(0.0f, 0.0f, 0.0f);
    publish_state(w, t);
    measure(w, t, &t->state.min_distance, &t->state.contacts);
    return PBF_OK;
}

int pbf_world_has_tool(const pbf_world *w) { return w != NULL && w->tool != NULL; }

const pbf_tool_def *pbf_world_get_tool_def(const pbf_world *w) {
    return w != NULL && w->tool != NULL ? &w->tool->def : NULL;
}

pbf_status pbf_tool_set_pose(pbf_world *w, pbf_vec3 position) {
    if (w->tool == NULL)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "tool: set_pose on a world without a tool");
    if (!finite3(position))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "tool: set_pose needs a finite position");
    w->tool->pose_pending = 1;
    w->tool->external = 1;
    w->tool->pose_target = position;
    return PBF_OK;
}

pbf_tool_state pbf_tool_get_state(const pbf_world *w) {
    pbf_tool_state s;
    if (w != NULL && w->tool != NULL) return w->tool->state;
    memset(&s, 0, sizeof s);
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * The step */

void pbf__tool_step_begin(pbf_world *w, float dt) {
    pbf_tool_body *t = w->tool;
    if (t == NULL) return;
    t->step_start = t->position;
    t->step_dt = dt;
    t->substeps_done = 0;
    for (int k = 0; k < 3; ++k) t->sum_reaction[k] = t->sum_adhesion[k] = t->sum_damping[k] = 0.0;
}

/* Semi-implicit Euler of the free body with an added mass M_a (docs/tool.md):
 *     (M + M_a) a = M g + F_prev + M_a a_prev
 * F_prev, the fluid force of the last substep, already contains about −M_a a_prev (the fluid
 * the body accelerates); adding M_a a_prev back and dividing by M + M_a removes the lag that
 * makes an explicit coupling of a light body oscillate. At rest (a = 0) it changes nothing. */
static void integrate_free(const pbf_world *w, pbf_tool_body *t, float dt, double t_end, pbf_v3 *x,
                           pbf_v3 *v) {
    const pbf_tool_def *d = &t->def;
    double r = d->radius, vol = 4.0 / 3.0 * PI_D * r * r * r;
    double m = d->mass, ma = (double)d->added_mass * w->def.rest_density * vol;
    const float g[3] = {w->def.gravity.x, w->def.gravity.y, w->def.gravity.z};
    const float f[3] = {t->force_prev.x, t->force_prev.y, t->force_prev.z};
    const float a0[3] = {t->accel_prev.x, t->accel_prev.y, t->accel_prev.z};
    float xs[3] = {t->position.x, t->position.y, t->position.z};
    float vs[3] = {t->velocity.x, t->velocity.y, t->velocity.z};
    float acc[3];
    pbf_v3 lo, hi;
    pbf__walls_at(&w->def, t_end, &lo, &hi);
    const float los[3] = {lo.x, lo.y, lo.z}, his[3] = {hi.x, hi.y, hi.z};
    for (int k = 0; k < 3; ++k) {
        acc[k] = (float)((m * g[k] + f[k] + ma * a0[k]) / (m + ma));
        vs[k] += acc[k] * dt;
        xs[k] += vs[k] * dt;
        /* The walls stop it (inelastic): no tool leaves the domain. */
        float a = los[k] + d->radius, b = his[k] - d->radius;
        if (a > b) a = b = 0.5f * (los[k] + his[k]);
        if (xs[k] < a) {
            xs[k] = a;
            if (vs[k] < 0.0f) vs[k] = 0.0f;
            acc[k] = 0.0f;
        } else if (xs[k] > b) {
            xs[k] = b;
            if (vs[k] > 0.0f) vs[k] = 0.0f;
            acc[k] = 0.0f;
        }
    }
    *x = v3(xs[0], xs[1], xs[2]);
    *v = v3(vs[0], vs[1], vs[2]);
    t->accel_prev = v3(acc[0], acc[1], acc[2]);
}

/* Where the tool is at the end of the substep that ends at t_end, and its velocity. */
static void advance(const pbf_world *w, pbf_tool_body *t, float dt, double t_end, int index,
                    int count) {
    pbf_v3 x, v;
    if (t->pose_pending) {
        /* carried along a straight line to the external pose, arriving at the step's end */
        x = index + 1 >= count
                ? t->pose_target
                : lerp3(t->step_start, t->pose_target, (double)(index + 1) / (double)count);
        v = v3_scale(v3_sub(x, t->position), 1.0f / dt);
        t->accel_prev = v3(0.0f, 0.0f, 0.0f);
    } else if (t->def.motion == PBF_TOOL_FREE) {
        integrate_free(w, t, dt, t_end, &x, &v);
    } else {
        x = !t->external && t->def.key_count > 0 ? pbf_tool_path_position(&t->def, t_end)
                                                 : t->position;
        v = v3_scale(v3_sub(x, t->position), 1.0f / dt);
    }
    t->position = x;
    t->velocity = v;
}

static int grow(pbf_tool_body *t, int n) {
    if (n <= t->capacity) return 0;
    size_t c = (size_t)n;
    float *dx = realloc(t->dx, 3 * c * sizeof *dx);
    if (dx != NULL) t->dx = dx;
    float *fa = realloc(t->f_adh, 3 * c * sizeof *fa);
    if (fa != NULL) t->f_adh = fa;
    float *fd = realloc(t->f_damp, 3 * c * sizeof *fd);
    if (fd != NULL) t->f_damp = fd;
    float *di = realloc(t->dist, c * sizeof *di);
    if (di != NULL) t->dist = di;
    if (dx == NULL || fa == NULL || fd == NULL || di == NULL) return -1;
    t->capacity = n;
    return 0;
}

void pbf__tool_move(pbf_world *w, float dt, double t_end, int index) {
    pbf_tool_body *t = w->tool;
    advance(w, t, dt, t_end, index, w->def.substeps);
    const pbf_tool_def *d = &t->def;
    const float r = w->def.particle_radius, m = w->params.mass;
    pbf_tool_params *k = &t->k;
    k->active = 1;
    k->center = t->position;
    k->velocity = t->velocity;
    k->radius = d->radius;
    k->adh_k = 0.5f * (d->adhesion_k_tool + d->adhesion_k_fluid);
    k->adh_a = d->radius + d->adhesion_a;
    k->adh_b = d->radius + d->adhesion_b;
    k->adh_inv_q = 1.0f / (d->adhesion_b - d->adhesion_a);
    float kappa = d->damping * 4.0f * r * r, cap = m / dt;
    k->damp = kappa < cap ? kappa : cap;
    k->contact = d->radius + 2.0f * r;
}

pbf_status pbf__tool_substep_begin(pbf_world *w, float dt) {
    pbf_tool_body *t = w->tool;
    if (t == NULL) return PBF_OK;
    if (grow(t, w->count) != 0)
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                         "out of memory growing the tool's arrays to %d "
                         "particles",
                         w->count);
    pbf__tool_move(w, dt, w->time + dt, t->substeps_done);
    memset(t->dx, 0, 3 * (size_t)w->count * sizeof *t->dx);
    return PBF_OK;
}

void pbf__tool_substep_end(pbf_world *w, float dt, int nt) {
    pbf_tool_body *t = w->tool;
    if (t == NULL) return;
    const pbf_params *P = &w->params;
    const pbf_tool_params *T = &t->k;
    const int n = w->count;
    const float *p = w->p;
    float *v = w->v, *density = w->density, *fa = t->f_adh, *fd = t->f_damp, *dist = t->dist;
    /* Parallel: each particle writes only its own slots. */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float rho = density[i];
        pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
        pbf_tool_boundary(xi, T, P, &rho, &g); /* the tool's ghosts count in the final density */
        density[i] = rho;
        pbf_v3 a, b;
        v3_store(v, i, pbf_tool_couple(xi, v3_load(v, i), rho, T, P, &a, &b));
        v3_store(fa, i, a);
        v3_store(fd, i, b);
        dist[i] = v3_len(v3_sub(xi, T->center)) - T->radius;
    }
    /* Serial, in slot order: the same sums for any thread count. Split over processes each
     * sums its own particles (ghosts skipped), and the sums are added in rank order: every
     * process gets the same force, so a free tool moves the same on each. */
    double sdx[3] = {0.0, 0.0, 0.0}, sa[3] = {0.0, 0.0, 0.0}, sd[3] = {0.0, 0.0, 0.0};
    float md = INFINITY;
    int contacts = 0;
    const float contact = 2.0f * w->def.particle_radius;
    const uint8_t *ghost = w->halo_ghost;
    for (int i = 0; i < n; ++i) {
        if (ghost && ghost[i]) continue;
        for (int k = 0; k < 3; ++k) {
            sdx[k] += t->dx[3 * i + k];
            sa[k] += fa[3 * i + k];
            sd[k] += fd[3 * i + k];
        }
        if (dist[i] < md) md = dist[i];
        if (dist[i] < contact) ++contacts;
    }
    if (w->halo) {
        double s[9] = {sdx[0], sdx[1], sdx[2], sa[0], sa[1], sa[2], sd[0], sd[1], sd[2]};
        w->halo_sum(w, s, 9);
        for (int k = 0; k < 3; ++k) sdx[k] = s[k], sa[k] = s[3 + k], sd[k] = s[6 + k];
        reduce_contacts(w, &md, &contacts);
    }
    pbf__tool_add_forces(w, dt, sdx, sa, sd, md, contacts);
}

void pbf__tool_add_forces(pbf_world *w, float dt, const double sdx[3], const double sa[3],
                          const double sd[3], float md, int contacts) {
    pbf_tool_body *t = w->tool;
    const double react = -(double)w->params.mass / ((double)dt * (double)dt);
    double total[3];
    for (int k = 0; k < 3; ++k) {
        double rk = react * sdx[k];
        t->sum_reaction[k] += rk;
        t->sum_adhesion[k] += sa[k];
        t->sum_damping[k] += sd[k];
        total[k] = rk + sa[k] + sd[k];
    }
    t->force_prev = v3((float)total[0], (float)total[1], (float)total[2]);
    t->state.min_distance = md;
    t->state.contacts = contacts;
    t->substeps_done++;
}

void pbf__tool_step_end(pbf_world *w) {
    pbf_tool_body *t = w->tool;
    if (t == NULL) return;
    if (t->substeps_done == 0) {
        /* No particles, so no substeps ran: the tool still moves over the step. */
        advance(w, t, t->step_dt, w->time, 0, 1);
        t->force_prev = v3(0.0f, 0.0f, 0.0f);
        t->state.min_distance = INFINITY;
        t->state.contacts = 0;
    }
    double inv = t->substeps_done > 0 ? 1.0 / t->substeps_done : 0.0;
    pbf_tool_state *s = &t->state;
    s->reaction = v3((float)(t->sum_reaction[0] * inv), (float)(t->sum_reaction[1] * inv),
                     (float)(t->sum_reaction[2] * inv));
    s->adhesion = v3((float)(t->sum_adhesion[0] * inv), (float)(t->sum_adhesion[1] * inv),
                     (float)(t->sum_adhesion[2] * inv));
    s->damping = v3((float)(t->sum_damping[0] * inv), (float)(t->sum_damping[1] * inv),
                    (float)(t->sum_damping[2] * inv));
    s->total = v3((float)((t->sum_reaction[0] + t->sum_adhesion[0] + t->sum_damping[0]) * inv),
                  (float)((t->sum_reaction[1] + t->sum_adhesion[1] + t->sum_damping[1]) * inv),
                  (float)((t->sum_reaction[2] + t->sum_adhesion[2] + t->sum_damping[2]) * inv));
    publish_state(w, t);
    t->pose_pending = 0;
}

/* ---------------------------------------------------------------------------------------------
 * The tool as a module of the step (module.h) */

static pbf_status tool_substep_begin(pbf_world *w, float dt, int threads) {
    (void)threads;
    return pbf__tool_substep_begin(w, dt);
}

/* The tool is a solid of the λ and Δp passes, and the Δp pass sums its reaction into dx. */
static void tool_pass_extras(pbf_world *w, pbf_pass_extras *x) {
    if (w->tool == NULL) return;
    x->tool = &w->tool->k;
    x->tool_dx = w->tool->dx;
}

const pbf_module pbf__tool_module = {
    .name = "tool",
    .step_begin = pbf__tool_step_begin,
    .substep_begin = tool_substep_begin,
    .pass_extras = tool_pass_extras,
    .substep_end = pbf__tool_substep_end,
    .step_end = pbf__tool_step_end,
    .memory_bytes = pbf__tool_memory_bytes,
    .free = pbf__tool_free,
};
