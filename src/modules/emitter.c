/* Emitters, sinks and the particle capacity (include/pbf/flow.h, docs/scenes.md "Inflow and
 * outflow"). Everything here runs serially in slot order at the end of a substep: the result does
 * not depend on the thread count. Split over processes (docs/mpi.md) each process emits the
 * nozzle points in its own slab, with the ids one process would give them, and the capacity
 * is each process's, checked by all of them together before a step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "module.h" /* this feature as a module of the step */
#include "geometry/geometry_state.h" /* sink meshes: their fields */
#include "caps.h" /* what runs where: emitters and sinks checked */
#include "cuda/world_cuda.h" /* cuda: the particles read back before, sent up after a change */
#include "emitter.h"

#define MAX_LAYER (1 << 20) /* particles per layer: a nozzle of more is surely a mistake */

pbf_emitter_def pbf_default_emitter_def(void) {
    pbf_emitter_def d;
    memset(&d, 0, sizeof d);
    d.shape = PBF_EMITTER_DISC;
    d.position = (pbf_vec3){0.5f, 0.5f, 0.5f};
    d.direction = (pbf_vec3){1.0f, 0.0f, 0.0f};
    d.speed = 1.0f;
    d.radius = 0.05f;
    d.width = 0.1f;
    d.height = 0.1f;
    d.start = 0.0f;
    d.stop = 3.4e38f;
    d.phase = 0;
    return d;
}

pbf_sink_def pbf_default_sink_def(void) {
    pbf_sink_def d;
    d.min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.max = (pbf_vec3){0.1f, 0.1f, 0.1f};
    return d;
}

void pbf__flow_free(pbf_world *w) {
    if (w->flow == NULL) return;
    for (int i = 0; i < w->flow->emitter_count; ++i) free(w->flow->emitters[i].offsets);
    free(w->flow);
    w->flow = NULL;
}

size_t pbf__flow_memory_bytes(const pbf_world *w) {
    if (w->flow == NULL) return 0;
    size_t b = sizeof *w->flow;
    for (int i = 0; i < w->flow->emitter_count; ++i)
        b += 2 * (size_t)w->flow->emitters[i].n * sizeof(float);
    return b;
}

static int finite3(pbf_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
static pbf_v3 to_v3(pbf_vec3 a) { return v3(a.x, a.y, a.z); }

/* ---------------------------------------------------------------------------------------------
 * The nozzle's lattice */

typedef struct candidate {
    float norm; /* 1 on the outline */
    int j, i; /* lattice indices: the tie-break that keeps the choice deterministic */
    float a, b;
} candidate;

static int by_norm(const void *pa, const void *pb) {
    const candidate *x = pa, *y = pb;
    if (x->norm != y->norm) return x->norm < y->norm ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The n = ceil(area / s²) lattice points nearest the centre in the outline's own norm, and the
 * layer pitch d = n s³ / area >= s: a layer holds n s³ of fluid, one leaves every d / speed
 * seconds, so the volume rate is exactly speed · area for any nozzle size, and layers are never
 * closer than the lattice spacing (d = s when the area is a whole number of s²). */
static pbf_status build_lattice(pbf_world *w, pbf_emitter *e) {
    const pbf_emitter_def *d = &e->def;
    const double s = 2.0 * (double)w->def.particle_radius;
    const int disc = d->shape == PBF_EMITTER_DISC;
    double area = disc ? 3.14159265358979323846 * (double)d->radius * (double)d->radius
                       : (double)d->width * (double)d->height;
    double want = ceil(area / (s * s) * (1.0 - 1e-5)); /* float sizes: 15.0000001 is 15 */
    if (want < 1.0) want = 1.0;
    if (want > (double)MAX_LAYER)
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "emitter: the nozzle holds %.3g particles per layer (area %g m^2 over a "
                         "spacing of %g m), at most %d: shrink radius, width or height",
                         want, area, s, MAX_LAYER);
    e->n = (int)want;
    e->pitch = want * s * s * s / area;
    e->half_u = disc ? d->radius : 0.5f * d->width;
    e->half_v = disc ? d->radius : 0.5f * d->height;
    /* centre the lattice like the outline: a point on the centre for an odd count across */
    double ou = 0.0, ov = 0.0;
    if (!disc) {
        if (((long long)floor((double)d->width / s + 0.5)) % 2 == 0) ou = 0.5;
        if (((long long)floor((double)d->height / s + 0.5)) % 2 == 0) ov = 0.5;
    }
    int mu = (int)ceil((double)e->half_u / s) + 2, mv = (int)ceil((double)e->half_v / s) + 2;
    size_t cells = (size_t)(2 * mu + 1) * (size_t)(2 * mv + 1);
    candidate *c = malloc(cells * sizeof *c);
    e->offsets = malloc(2 * (size_t)e->n * sizeof *e->offsets);
    if (c == NULL || e->offsets == NULL) {
        free(c);
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory building a nozzle");
    }
    size_t k = 0;
    for (int j = -mv; j <= mv; ++j)
        for (int i = -mu; i <= mu; ++i) {
            double a = ((double)i + ou) * s, b = ((double)j + ov) * s;
            double norm = disc ? sqrt(a * a + b * b) / (double)d->radius
                               : fmax(fabs(a) / (double)e->half_u, fabs(b) / (double)e->half_v);
            c[k++] = (candidate){(float)norm, j, i, (float)a, (float)b};
        }
    qsort(c, k, sizeof *c, by_norm);
    for (int m = 0; m < e->n; ++m) {
        e->offsets[2 * m] = c[m].a;
        e->offsets[2 * m + 1] = c[m].b;
    }
    free(c);
    return PBF_OK;
}

static pbf_v3 nozzle_point(const pbf_emitter *e, int m, double along) {
    pbf_v3 x = to_v3(e->def.position);
    x = v3_madd(x, e->u, e->offsets[2 * m]);
    x = v3_madd(x, e->v, e->offsets[2 * m + 1]);
    return v3_madd(x, e->dir, (float)along);
}

static const char *const WALL_NAMES[6] = {"x_min", "x_max", "y_min", "y_max", "z_min", "z_max"};

/* The wall x is closer than margin to or beyond (-1: none). */
static int wall_hit(const pbf_world *w, pbf_v3 x, float margin) {
    const pbf_world_def *d = &w->def;
    const float p[3] = {x.x, x.y, x.z};
    const float lo[3] = {d->domain_min.x, d->domain_min.y, d->domain_min.z};
    const float hi[3] = {d->domain_max.x, d->domain_max.y, d->domain_max.z};
    for (int k = 0; k < 3; ++k) {
        if (!(p[k] >= lo[k] + margin)) return 2 * k;
        if (!(p[k] <= hi[k] - margin)) return 2 * k + 1;
    }
    return -1;
}

/* The collider x is inside or closer than margin to (-1: none). */
static int solid_hit(const pbf_world *w, pbf_v3 x, float margin) {
    for (int c = 0; c < w->collider_count; ++c) {
        pbf_v3 n;
        if (pbf_solid_sdf(&w->solids[c], x, &n) < margin) return c;
    }
    return -1;
}

/* A nozzle particle outside the domain or in a solid, or a nozzle aimed into one, is an error
 * before the run starts: it would stack particles into a wall. */
static pbf_status check_placement(pbf_world *w, const pbf_emitter *e) {
    const float r = w->def.particle_radius, h = w->params.h;
    for (int m = 0; m < e->n; ++m) {
        pbf_v3 x = nozzle_point(e, m, 0.0);
        int wall = wall_hit(w, x, r), solid = solid_hit(w, x, r);
        if (wall >= 0)
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "emitter: position puts a nozzle particle at (%g %g %g), outside the "
                             "domain or closer than r = %g m to its %s wall: move the nozzle "
                             "inside or make it smaller",
                             (double)x.x, (double)x.y, (double)x.z, (double)r, WALL_NAMES[wall]);
        if (solid >= 0)
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "emitter: position puts a nozzle particle at (%g %g %g) inside or "
                             "within r of collider %d",
                             (double)x.x, (double)x.y, (double)x.z, solid);
        pbf_v3 y = nozzle_point(e, m, (double)h);
        wall = wall_hit(w, y, r);
        solid = solid_hit(w, y, r);
        if (wall >= 0)
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "emitter: direction aims the nozzle into the domain's %s wall (the "
                             "point (%g %g %g), one kernel radius ahead of the nozzle, is not "
                             "inside the domain)",
                             WALL_NAMES[wall], (double)y.x, (double)y.y, (double)y.z);
        if (solid >= 0)
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "emitter: direction aims the nozzle into collider %d (the point (%g "
                             "%g %g), one kernel radius ahead of the nozzle, is inside it)",
                             solid, (double)y.x, (double)y.y, (double)y.z);
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * API */

pbf_status pbf_world_add_emitter(pbf_world *w, const pbf_emitter_def *d) {
    if (d == NULL) return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: NULL");
    if (w->flow != NULL && w->flow->emitter_count >= PBF_MAX_EMITTERS)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: at most %d emitters", PBF_MAX_EMITTERS);
    if (d->shape != PBF_EMITTER_DISC && d->shape != PBF_EMITTER_RECTANGLE)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: unknown shape %d", (int)d->shape);
    if (!finite3(d->position) || !finite3(d->direction))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: position and direction must be finite");
    pbf_v3 dir = to_v3(d->direction);
    float len = v3_len(dir);
    if (!(len > 1e-6f) || !isfinite(len))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: direction must not be zero");
    if (!(d->speed > 0.0f && d->speed <= 1000.0f))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: speed must be in (0, 1000] m/s, got %g",
                         (double)d->speed);
    if (d->shape == PBF_EMITTER_DISC && !(d->radius > 0.0f && isfinite(d->radius)))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "emitter: radius must be > 0 m, got %g",
                         (double)d->radius);
    if (d->shape == PBF_EMITTER_RECTANGLE &&
        !(d->width > 0.0f && d->height > 0.0f && isfinite(d->width) && isfinite(d->height)))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "emitter: width and height must be > 0 m, got %g and %g", (double)d->width,
                         (double)d->height);
    if (!pbf__phase_valid(w, d->phase))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "emitter: phase %d is not one of the world's %d fluids", d->phase,
                         w->def.phase_count > 0 ? w->def.phase_count : 1);
    if (!(d->start >= 0.0f && d->stop > d->start))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "emitter: start and stop must satisfy 0 <= start < stop, got %g and %g",
                         (double)d->start, (double)d->stop);

    pbf_emitter e;
    memset(&e, 0, sizeof e);
    e.def = *d;
    e.dir = v3_scale(dir, 1.0f / len);
    pbf_v3 u = v3_cross(v3(0.0f, 1.0f, 0.0f), e.dir);
    float ul = v3_len(u);
    e.u = ul > 1e-3f ? v3_scale(u, 1.0f / ul) : v3(1.0f, 0.0f, 0.0f);
    e.v = v3_cross(e.dir, e.u);
    pbf_status st = build_lattice(w, &e);
    e.travel = e.pitch; /* the first layer leaves at the start time */
    if (st == PBF_OK) st = check_placement(w, &e);
    if (st == PBF_OK) st = pbf__caps_require(w, PBF_FEATURE_EMITTERS);
    if (st == PBF_OK) st = pbf__flow_ensure(w);
    if (st != PBF_OK) {
        free(e.offsets);
        return st;
    }
    w->flow->emitters[w->flow->emitter_count++] = e;
    return PBF_OK;
}

pbf_status pbf_world_add_sink(pbf_world *w, const pbf_sink_def *d) {
    if (d == NULL) return pbf__fail(w, PBF_ERR_INVALID_ARG, "sink: NULL");
    if (w->flow != NULL && w->flow->sink_count >= PBF_MAX_SINKS)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "sink: at most %d sinks", PBF_MAX_SINKS);
    if (!finite3(d->min) || !finite3(d->max) ||
        !(d->min.x < d->max.x && d->min.y < d->max.y && d->min.z < d->max.z))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "sink: min and max must be finite, min below max on every axis");
    pbf_status st = pbf__caps_require(w, PBF_FEATURE_SINKS);
    if (st == PBF_OK) st = pbf__flow_ensure(w);
    if (st != PBF_OK) return st;
    w->flow->sinks[w->flow->sink_count++] = *d;
    return PBF_OK;
}

int pbf_world_emitter_count(const pbf_world *w) { return w->flow ? w->flow->emitter_count : 0; }
int pbf_world_sink_count(const pbf_world *w) { return w->flow ? w->flow->sink_count : 0; }

int pbf_world_emitter_layer_size(const pbf_world *w, int index) {
    if (w->flow == NULL || index < 0 || index >= w->flow->emitter_count) return 0;
    return w->flow->emitters[index].n;
}

pbf_flow_state pbf_world_get_flow(const pbf_world *w) {
    pbf_flow_state s;
    memset(&s, 0, sizeof s);
    s.next_id = w->next_id;
    if (w->flow != NULL) {
        s.emitted = w->flow->emitted;
        s.removed = w->flow->removed;
        s.capacity = w->flow->capacity;
    }
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * The step */

/* Adds the distance emitter e's fluid travels over [t0, t1] (its active part) to *travel;
 * returns the layers due (travel reaching s), leaving the remainder in *travel. */
static int layers_due(const pbf_emitter *e, double t0, double t1, double *travel) {
    const double s = e->pitch;
    double a = t0 > (double)e->def.start ? t0 : (double)e->def.start;
    double b = t1 < (double)e->def.stop ? t1 : (double)e->def.stop;
    if (!(b > a)) return 0;
    *travel += (double)e->def.speed * (b - a);
    int layers = 0;
    while (*travel >= s) {
        *travel -= s;
        ++layers;
    }
    return layers;
}

static int emitter_active(const pbf_emitter *e, double t0, double t1) {
    return t1 > (double)e->def.start && t0 < (double)e->def.stop;
}

/* Of the layer of emitter e at `along` past its nozzle, how many particles this process emits:
 * all of them in one process; split over processes, the ones in its slab (w->halo_owns). */
static int layer_share(const pbf_world *w, const pbf_emitter *e, double along) {
    if (w->halo == NULL) return e->n;
    int c = 0;
    for (int m = 0; m < e->n; ++m) c += w->halo_owns(w, nozzle_point(e, m, along).x);
    return c;
}

/* Split over processes, the capacity is each process's: before the step every process says how
 * many particles it would hold after its own emission and all take the largest (collective: every
 * process has the same emitters and capacity, so all call this and all fail together, with the
 * same message, before any array grows). */
static pbf_status split_capacity_check(pbf_world *w, const pbf_flow *f, int64_t add) {
    int64_t mine = (int64_t)w->count + add; /* between steps the halo is gone: own particles */
    int v[2] = {mine > INT32_MAX ? INT32_MAX : (int)mine, (int)(add > INT32_MAX ? INT32_MAX : add)};
    w->halo_reduce(w, v, 1, PBF_HALO_MAX_INT);
    w->halo_reduce(w, v + 1, 1, PBF_HALO_SUM_INT);
    if (v[0] <= f->capacity) return PBF_OK;
    return pbf__fail(w, PBF_ERR_CAPACITY,
                     "the particle capacity of %d per process is full at t = %.4f s: after the "
                     "next step (which emits %d particles in all) one process would hold %d; "
                     "raise flow.capacity (pbf_world_set_capacity), use more processes or stop the "
                     "emitters earlier",
                     f->capacity, w->time, v[1], v[0]);
}

pbf_status pbf__flow_step_check(pbf_world *w, float dt, int substeps) {
    pbf_flow *f = w->flow;
    if (f == NULL || f->capacity == 0 || f->emitter_count == 0) return PBF_OK;
    const float dt_sub = dt / (float)substeps;
    int64_t add = 0;
    for (int k = 0; k < f->emitter_count; ++k) {
        const pbf_emitter *e = &f->emitters[k];
        double travel = e->travel, t = w->time;
        for (int j = 0; j < substeps; ++j) {
            double t1 = t + dt_sub; /* as the step adds it up */
            int layers = layers_due(e, t, t1, &travel);
            if (w->halo == NULL) /* every layer whole */
                add += (int64_t)layers * e->n;
            else /* the layers where pbf__flow_substep_end puts them */
                for (int L = 0; L < layers; ++L)
                    add += layer_share(w, e, travel + (double)(layers - 1 - L) * e->pitch);
            t = t1;
        }
    }
    if (w->halo != NULL) return split_capacity_check(w, f, add);
    if ((int64_t)w->count + add > f->capacity)
        return pbf__fail(w, PBF_ERR_CAPACITY,
                         "the particle capacity of %d is full at t = %.4f s: %d particles and the "
                         "next step emits %lld more; raise flow.capacity (pbf_world_set_capacity) "
                         "or stop the emitters earlier",
                         f->capacity, w->time, w->count, (long long)add);
    return PBF_OK;
}

static int in_sink(const pbf_sink_def *k, pbf_v3 x) {
    return x.x >= k->min.x && x.x <= k->max.x && x.y >= k->min.y && x.y <= k->max.y &&
           x.z >= k->min.z && x.z <= k->max.z;
}

/* Removes the particles inside a sink box or a sink mesh (φ < 0: inside it, where it is at the
 * end of the substep), keeping the order of the others. Split over processes each rank removes
 * its own (the halo is gone by now) and the count removed is the whole world's on every rank
 * (collective: every rank has the same sinks). */
static void remove_in_sinks(pbf_world *w, pbf_flow *f) {
    const int n = w->count;
    pbf_solid mesh[PBF_MAX_MESHES];
    int meshes = 0;
    const pbf_geometry *g = w->geometry;
    for (int k = 0; g != NULL && k < g->count; ++k)
        if (g->body[k]->def.sink) pbf__mesh_body_solid(g->body[k], &mesh[meshes++]);
    uint8_t *gone = w->gone; /* fields.h: the compaction's flags */
    int any = 0;
    for (int i = 0; i < n; ++i) {
        pbf_v3 x = v3_load(w->x, i);
        int in = 0;
        for (int k = 0; k < f->sink_count && !in; ++k) in = in_sink(&f->sinks[k], x);
        for (int k = 0; k < meshes && !in; ++k) {
            pbf_v3 xl = pbf_mesh_local(&mesh[k], x);
            if (pbf_field_far(mesh[k].field, xl)) continue;
            pbf_field_cell c = pbf_field_locate(mesh[k].field, xl);
            in = pbf_field_phi(mesh[k].field, &c) < 0.0f;
        }
        gone[i] = (uint8_t)in;
        any |= in;
    }
    if (any) pbf__cuda_touch(w); /* cuda: the next substep sends the rest to the device */
    int removed = pbf__particles_compact(w, gone); /* particles.c: every kept array follows */
    if (w->halo != NULL) w->halo_reduce(w, &removed, 1, PBF_HALO_SUM_INT); /* the whole world's */
    f->removed += removed;
}

/* The fluid within one spacing of the nozzle plane, inside the outline (plus r), moves at the
 * nozzle's velocity: what the nozzle holds is pushed out, not compressed by the next layer. */
static void drive_nozzle(pbf_world *w, const pbf_emitter *e) {
    const double s = e->pitch;
    const pbf_v3 c = to_v3(e->def.position), vel = v3_scale(e->dir, e->def.speed);
    const float r = w->def.particle_radius;
    const int disc = e->def.shape == PBF_EMITTER_DISC;
    for (int i = 0; i < w->count; ++i) {
        pbf_v3 d = v3_sub(v3_load(w->x, i), c);
        float a = v3_dot(d, e->dir);
        if (!(a >= -r && a < (float)s)) continue;
        float pu = v3_dot(d, e->u), pv = v3_dot(d, e->v);
        int in = disc ? pu * pu + pv * pv <= (e->half_u + r) * (e->half_u + r)
                      : fabsf(pu) <= e->half_u + r && fabsf(pv) <= e->half_v + r;
        if (!in) continue;
        pbf__cuda_touch(w); /* cuda: the next substep sends the velocities to the device */
        v3_store(w->v, i, vel);
    }
}

pbf_status pbf__flow_substep_end(pbf_world *w, double t0) {
    pbf_flow *f = w->flow;
    if (f == NULL) return PBF_OK;
    const double t1 = w->time;
    const int sinks = f->sink_count > 0 || (w->geometry != NULL && w->geometry->sinks > 0);
    int active = 0;
    for (int k = 0; k < f->emitter_count; ++k) active |= emitter_active(&f->emitters[k], t0, t1);
    if (sinks || active) { /* cuda: the particles as the device left them (CPU: a no-op) */
        pbf_status st = pbf__cuda_pull(w);
        if (st != PBF_OK) return st;
    }
    if (sinks) remove_in_sinks(w, f);
    for (int k = 0; k < f->emitter_count; ++k) {
        pbf_emitter *e = &f->emitters[k];
        if (!emitter_active(e, t0, t1)) continue;
        drive_nozzle(w, e);
        double travel = e->travel;
        int layers = layers_due(e, t0, t1, &travel);
        if (layers == 0) {
            e->travel = travel;
            continue;
        }
        pbf__cuda_touch(w); /* cuda: the next substep sends the new particles to the device */
        pbf_status st = pbf__world_reserve(w, w->count + layers * e->n);
        if (st != PBF_OK) return st;
        /* the layers, newest last: layer L left the plane (layers - 1 - L) spacings plus the
         * carried remainder ago. Split over processes each emits the points in its slab, and
         * every one hands out the whole layer's ids in the same order: the ids of one process */
        const pbf_v3 vel = v3_scale(e->dir, e->def.speed);
        for (int L = 0; L < layers; ++L) {
            double along = travel + (double)(layers - 1 - L) * e->pitch;
            for (int m = 0; m < e->n; ++m) {
                pbf_v3 x = nozzle_point(e, m, along);
                if (w->halo != NULL && !w->halo_owns(w, x.x)) {
                    ++w->next_id; /* a neighbour's particle: its id is used there */
                    continue;
                }
                int i = w->count;
                pbf__push_particle(w, x, vel, e->def.phase);
                w->density[i] = w->params.rest_density;
            }
        }
        f->emitted += (int64_t)layers * e->n;
        e->travel = travel;
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Emitters and sinks as a module of the step (module.h): the capacity is checked before a step
 * changes anything; sinks and emitters act at the end of every substep, with particles or
 * without */

static pbf_status flow_step_check(pbf_world *w, float dt, int substeps) {
    return w->flow != NULL ? pbf__flow_step_check(w, dt, substeps) : PBF_OK;
}

static pbf_status flow_substep_final(pbf_world *w, double t_start) {
    return w->flow != NULL ? pbf__flow_substep_end(w, t_start) : PBF_OK;
}

static int flow_keep_stepping(const pbf_world *w) { return w->flow != NULL; }

const pbf_module pbf__flow_module = {
    .name = "flow",
    .empty_substeps = 1,
    .keeps_stepping = flow_keep_stepping,
    .step_check = flow_step_check,
    .substep_final = flow_substep_final,
    .memory_bytes = pbf__flow_memory_bytes,
    .free = pbf__flow_free,
};
