/* Mesh solids in a world (include/pbf/geometry.h, meshes.h): adding a mesh (import, checks,
 * bake or cache), the solids' entries, poses, and the sweep that keeps particles from passing
 * through thin parts. */
#include "module.h" /* this feature as a module of the step */
#include "meshes.h"
#include "field_crop.h" /* split over MPI ranks: the part of a field kept */

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "flow_state.h" /* a sink mesh counts its removals in the flow */
#include "caps.h" /* what runs where */
#include "resources.h"
#include "rigid.h"

pbf_mesh_def pbf_default_mesh_def(void) {
    pbf_mesh_def d;
    memset(&d, 0, sizeof d);
    d.scale = (pbf_vec3){1.0f, 1.0f, 1.0f};
    d.role = PBF_MESH_OBSTACLE;
    d.cell = 0.0f;
    d.cache = 1;
    d.motion = PBF_MESH_STATIC;
    d.density = 500.0f;
    d.mass = 0.0f;
    d.added_mass = 0.5f;
    d.restitution = 0.0f;
    d.friction = 0.4f;
    d.sink = 0;
    return d;
}

int pbf_mesh_import_available(void) { return pbf__mesh_import_available(); }

static void publish(const pbf_world *w, pbf_mesh_body *b) {
    pbf_mesh_solid_state *s = &b->state;
    s->time = w->time;
    s->position = v3((float)b->position[0], (float)b->position[1], (float)b->position[2]);
    for (int k = 0; k < 4; ++k) s->orientation[k] = (float)b->q[k];
    s->velocity = v3((float)b->velocity[0], (float)b->velocity[1], (float)b->velocity[2]);
    s->angular_velocity = v3((float)b->omega[0], (float)b->omega[1], (float)b->omega[2]);
}

/* ---------------------------------------------------------------------------------------------
 * Lifetime */

static void body_free(pbf_mesh_body *b) {
    if (b == NULL) return;
    pbf__trimesh_free(&b->mesh);
    pbf__baked_field_free(&b->field);
    free(b->samples);
    free(b);
}

void pbf__meshes_free(pbf_world *w) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return;
    for (int i = 0; i < g->count; ++i) body_free(g->body[i]);
    free(g->target);
    free(g->share);
    free(g->share_body);
    free(g);
    w->geometry = NULL;
}

size_t pbf__meshes_memory_bytes(const pbf_world *w) {
    const pbf_geometry *g = w->geometry;
    if (g == NULL) return 0;
    size_t bytes = sizeof *g + (size_t)g->capacity * 7 * sizeof(float);
    for (int i = 0; i < g->count; ++i) {
        const pbf_mesh_body *b = g->body[i];
        bytes += sizeof *b + b->field.bytes + (size_t)b->mesh.vertex_count * 12 +
                 (size_t)b->mesh.triangle_count * 12;
    }
    return bytes;
}

/* ---------------------------------------------------------------------------------------------
 * Adding a mesh */

static int finite3(pbf_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

#define MESH_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) return pbf__fail(w, PBF_ERR_INVALID_ARG, "mesh def: " __VA_ARGS__);           \
    } while (0)

static pbf_status validate(pbf_world *w, const pbf_mesh_def *d) {
    const float r = w->def.particle_radius;
    MESH_CHECK(memchr(d->path, '\0', sizeof d->path) != NULL && d->path[0] != '\0',
               "path must name a mesh file (.obj, .stl or .ply)");
    MESH_CHECK(finite3(d->scale) && d->scale.x > 0.0f && d->scale.y > 0.0f && d->scale.z > 0.0f,
               "scale must be finite and > 0 on every axis, got (%g, %g, %g)", (double)d->scale.x,
               (double)d->scale.y, (double)d->scale.z);
    MESH_CHECK(finite3(d->rotation) && finite3(d->position),
               "rotation and position must be finite");
    MESH_CHECK(d->role == PBF_MESH_OBSTACLE || d->role == PBF_MESH_CONTAINER,
               "role must be PBF_MESH_OBSTACLE or PBF_MESH_CONTAINER, got %d", (int)d->role);
    MESH_CHECK(d->cell == 0.0f || (d->cell >= 0.125f * r && d->cell <= 100.0f * r),
               "cell must be 0 (0.75 particle radii) or in [r/8, 100 r] = [%g, %g] m, got %g",
               (double)(0.125f * r), (double)(100.0f * r), (double)d->cell);
    MESH_CHECK(d->cache == 0 || d->cache == 1, "cache must be 0 or 1, got %d", d->cache);
    MESH_CHECK(d->motion == PBF_MESH_STATIC || d->motion == PBF_MESH_KINEMATIC ||
                   d->motion == PBF_MESH_FLOATING,
               "motion must be PBF_MESH_STATIC, PBF_MESH_KINEMATIC or PBF_MESH_FLOATING, got %d",
               (int)d->motion);
    MESH_CHECK(d->key_count >= 0 && d->key_count <= PBF_MESH_MAX_KEYS,
               "key_count must be in [0, %d], got %d", PBF_MESH_MAX_KEYS, d->key_count);
    MESH_CHECK(d->key_count == 0 || d->motion == PBF_MESH_KINEMATIC,
               "keys (key_count %d) need motion PBF_MESH_KINEMATIC", d->key_count);
    for (int i = 0; i < d->key_count; ++i) {
        MESH_CHECK(isfinite(d->keys[i].time) && finite3(d->keys[i].position) &&
                       finite3(d->keys[i].rotation),
                   "keys[%d] must be finite", i);
        MESH_CHECK(i == 0 || d->keys[i].time > d->keys[i - 1].time,
                   "keys[%d].time (%g s) must be after keys[%d].time (%g s)", i,
                   (double)d->keys[i].time, i - 1, (double)d->keys[i - 1].time);
    }
    MESH_CHECK(isfinite(d->density) && d->density > 0.0f, "density must be > 0 kg/m^3, got %g",
               (double)d->density);
    MESH_CHECK(isfinite(d->mass) && d->mass >= 0.0f,
               "mass must be >= 0 kg (0: from the "
               "density), got %g",
               (double)d->mass);
    MESH_CHECK(finite3(d->velocity) && finite3(d->angular_velocity),
               "velocity and angular_velocity must be finite");
    MESH_CHECK(d->added_mass >= 0.0f && d->added_mass <= 10.0f,
               "added_mass must be in [0, 10], got %g", (double)d->added_mass);
    MESH_CHECK(d->restitution >= 0.0f && d->restitution <= 1.0f,
               "restitution must be in [0, 1], got %g", (double)d->restitution);
    MESH_CHECK(d->friction >= 0.0f && d->friction <= 10.0f, "friction must be in [0, 10], got %g",
               (double)d->friction);
    MESH_CHECK(d->sink == 0 || d->sink == 1, "sink must be 0 or 1, got %d", d->sink);
    MESH_CHECK(!(d->sink && d->motion == PBF_MESH_FLOATING),
               "a sink must be static or kinematic, not floating");
    MESH_CHECK(!(d->sink && d->role == PBF_MESH_CONTAINER),
               "a sink must be an obstacle (the particles inside the mesh are removed), not a "
               "container");
    MESH_CHECK(!(d->motion == PBF_MESH_FLOATING && d->role == PBF_MESH_CONTAINER),
               "a floating mesh must be an obstacle, not a container");
    return PBF_OK;
}

static pbf_status fail_mesh(pbf_world *w, pbf_mesh_body *b, pbf_status st, const char *msg) {
    body_free(b);
    return pbf__fail(w, st, "%s", msg);
}

/* The world box of the body at its current pose. */
static void world_bounds(const pbf_mesh_body *b, double lo[3], double hi[3]) {
    double blo[3], bhi[3];
    pbf__trimesh_bounds(&b->mesh, blo, bhi);
    for (int k = 0; k < 3; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int c = 0; c < 8; ++c) {
        double p[3] = {(c & 1) ? bhi[0] : blo[0], (c & 2) ? bhi[1] : blo[1],
                       (c & 4) ? bhi[2] : blo[2]},
               q[3];
        pbf__mat_apply(b->R, p, q);
        for (int k = 0; k < 3; ++k) {
            q[k] += b->position[k];
            if (q[k] < lo[k]) lo[k] = q[k];
            if (q[k] > hi[k]) hi[k] = q[k];
        }
    }
}

/* Loads, welds, scales and checks the mesh into b->mesh (the local frame). */
static pbf_status load_mesh(pbf_world *w, pbf_mesh_body *b, char *err, size_t err_size) {
    const pbf_mesh_def *d = &b->def;
    const char *name = d->path;
    pbf_status st = pbf__mesh_import(name, &b->mesh, err, err_size);
    if (st == PBF_OK) st = pbf__trimesh_weld(&b->mesh, name, err, err_size);
    if (st != PBF_OK) return st;
    const float scale[3] = {d->scale.x, d->scale.y, d->scale.z};
    const float identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
    pbf__trimesh_transform(&b->mesh, scale, identity, zero);
    st = pbf__trimesh_check(&b->mesh, name, err, err_size);
    if (st != PBF_OK) return st;
    int ea = 0, eb = 0;
    int64_t open = pbf__trimesh_open_edges(&b->mesh, &ea, &eb);
    if (open < 0) {
        pbf__format(err, err_size, "mesh '%s': out of memory checking its edges", name);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    if (open > 0 && (d->role == PBF_MESH_CONTAINER || d->motion == PBF_MESH_FLOATING)) {
        const float *pa = b->mesh.vertices + 3 * (size_t)ea,
                    *pb = b->mesh.vertices + 3 * (size_t)eb;
        pbf__format(err, err_size,
                    "mesh '%s': %s needs a closed mesh, this one has holes: %lld open edge%s, "
                    "the first from (%g, %g, %g) to (%g, %g, %g) m (after scaling); close them "
                    "(e.g. MeshLab's 'close holes')",
                    name, d->role == PBF_MESH_CONTAINER ? "a container" : "a floating body",
                    (long long)open, open == 1 ? "" : "s", (double)pa[0], (double)pa[1],
                    (double)pa[2], (double)pb[0], (double)pb[1], (double)pb[2]);
        return PBF_ERR_INVALID_ARG;
    }
    /* an inside-out mesh (every face pointing in) is turned round: the winding number, the
     * container's sign and the mass all need faces that point out */
    if (pbf__trimesh_volume(&b->mesh) < 0.0) pbf__trimesh_flip(&b->mesh);
    if (open == 0) pbf__trimesh_mass(&b->mesh, &b->props);
    b->info.open_edges = (long long)open; /* an open obstacle loads; `pbf run` says so */
    (void)w;
    return PBF_OK;
}

pbf_status pbf_world_add_mesh(pbf_world *w, const pbf_mesh_def *def) {
    if (def == NULL) return pbf__fail(w, PBF_ERR_INVALID_ARG, "mesh def: NULL");
    pbf_status st = validate(w, def);
    if (st != PBF_OK) return st;
    const pbf_feature feature = def->sink                          ? PBF_FEATURE_SINKS
                                : def->motion == PBF_MESH_FLOATING ? PBF_FEATURE_BODIES
                                                                   : PBF_FEATURE_MESHES;
    /* a sink mesh is a mesh too: where mesh solids do not run (CUDA) its field and motion do
     * not either */
    if (pbf__caps_require(w, feature) != PBF_OK ||
        (def->sink && pbf__caps_require(w, PBF_FEATURE_MESHES) != PBF_OK)) { /* the table's */
        char why[PBF_ERROR_SIZE];
        memcpy(why, w->error, sizeof why);
        return pbf__fail(w, PBF_ERR_UNSUPPORTED, "mesh '%s': %s", def->path, why);
    }
    pbf_geometry *g = w->geometry;
    int count = g != NULL ? g->count : 0;
    if (count >= PBF_MAX_MESHES || w->collider_count + count >= PBF_MAX_SOLIDS)
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "mesh '%s': at most %d meshes, and %d solids with the colliders",
                         def->path, PBF_MAX_MESHES, PBF_MAX_SOLIDS);
    pbf_mesh_body *b = calloc(1, sizeof *b);
    if (b == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory adding a mesh");
    b->def = *def;
    char err[PBF_ERROR_SIZE];
    st = load_mesh(w, b, err, sizeof err);
    if (st != PBF_OK) return fail_mesh(w, b, st, err);
    const pbf_mesh_def *d = &b->def;
    const char *name = d->path;

    /* a floating body turns about its centre of mass: the local frame starts there */
    if (d->motion == PBF_MESH_FLOATING) {
        if (!(b->props.volume > 0.0))
            return fail_mesh(w, b, PBF_ERR_INVALID_ARG, "a floating mesh needs a volume");
        for (int k = 0; k < 3; ++k) b->offset[k] = b->props.center[k];
        const float shift[3] = {(float)-b->offset[0], (float)-b->offset[1], (float)-b->offset[2]};
        const float one[3] = {1, 1, 1}, identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        pbf__trimesh_transform(&b->mesh, one, identity, shift);
        b->mass = d->mass > 0.0f ? d->mass : (float)(d->density * b->props.volume);
        const double density = b->mass / b->props.volume; /* props are per unit density */
        for (int k = 0; k < 9; ++k) b->inertia[k] = density * b->props.inertia[k];
        if (pbf__bodies_sample(b, 2.0f * w->def.particle_radius) != 0)
            return fail_mesh(w, b, PBF_ERR_OUT_OF_MEMORY, "out of memory sampling a floating mesh");
    }
    if (d->sink && pbf__flow_ensure(w) != PBF_OK) {
        body_free(b);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf__mesh_body_pose_at(b, w->time, b->position, b->R);
    pbf__quat_from_mat(b->R, b->q);
    memcpy(b->position_start, b->position, sizeof b->position);
    memcpy(b->R_start, b->R, sizeof b->R);
    if (d->motion == PBF_MESH_FLOATING) {
        const double v[3] = {d->velocity.x, d->velocity.y, d->velocity.z},
                     om[3] = {d->angular_velocity.x, d->angular_velocity.y, d->angular_velocity.z};
        memcpy(b->velocity, v, sizeof v);
        memcpy(b->omega, om, sizeof om);
    }

    /* where it is: it must reach into the domain (a floating body must lie inside it) */
    double lo[3], hi[3];
    world_bounds(b, lo, hi);
    const pbf_world_def *wd = &w->def;
    const double dlo[3] = {wd->domain_min.x, wd->domain_min.y, wd->domain_min.z},
                 dhi[3] = {wd->domain_max.x, wd->domain_max.y, wd->domain_max.z};
    for (int k = 0; k < 3; ++k) {
        int outside = hi[k] < dlo[k] || lo[k] > dhi[k];
        int sticks_out = lo[k] < dlo[k] || hi[k] > dhi[k];
        if (outside || (d->motion == PBF_MESH_FLOATING && sticks_out)) {
            pbf__format(err, sizeof err,
                        "mesh '%s': it spans %c from %g to %g m, %s the domain's [%g, %g] m; "
                        "check its position, rotation and scale (the unit of the file?)",
                        name, "xyz"[k], lo[k], hi[k],
                        outside ? "entirely outside" : "a floating body must stay inside", dlo[k],
                        dhi[k]);
            return fail_mesh(w, b, PBF_ERR_INVALID_ARG, err);
        }
    }

    /* the field: from the cache, or baked */
    pbf_bake_def bd;
    memset(&bd, 0, sizeof bd);
    bd.cell = d->cell > 0.0f ? d->cell : PBF_MESH_DEFAULT_CELL * wd->particle_radius;
    bd.container = d->role == PBF_MESH_CONTAINER;
    bd.particle_radius = wd->particle_radius;
    bd.kernel_radius = w->params.h;
    bd.poly6_k = w->params.poly6_k;
    bd.spiky_k = w->params.spiky_k;
    bd.kernel = w->params.kernel;
    bd.threads = wd->threads;
    double blo[3], bhi[3];
    pbf__trimesh_bounds(&b->mesh, blo, bhi);
    pbf_field layout;
    double bytes = pbf__bake_layout(blo, bhi, &bd, &layout);
    char why[PBF_ERROR_SIZE];
    if (bytes < 0.0 ||
        pbf__check_memory(pbf__bake_working_bytes(&layout, &bd, b->mesh.triangle_count),
                          "its field", why, sizeof why) != 0) {
        if (bytes < 0.0) pbf__format(why, sizeof why, "has more than 2^31 nodes");
        pbf__format(err, sizeof err,
                    "mesh '%s': the field of about %.0f x %.0f x %.0f nodes at a cell of %g m %s: "
                    "the field is too large for the memory; give the mesh a larger 'cell' or "
                    "scale it down",
                    name, (bhi[0] - blo[0]) / bd.cell, (bhi[1] - blo[1]) / bd.cell,
                    (bhi[2] - blo[2]) / bd.cell, (double)bd.cell, why);
        return fail_mesh(w, b, PBF_ERR_OUT_OF_MEMORY, err);
    }
    uint64_t key = pbf__bake_key(&b->mesh, &bd);
    char dir[PBF_MESH_PATH_SIZE] = "";
    if (d->cache) pbf__field_cache_default_dir(dir, sizeof dir);
    int cached = pbf__field_cache_load(dir, key, &layout, &b->field) == PBF_OK;
    if (!cached) {
        st = pbf__field_bake(&b->mesh, &bd, &b->field, why, sizeof why);
        if (st != PBF_OK) {
            pbf__format(err, sizeof err, "mesh '%s': %s", name, why);
            return fail_mesh(w, b, st, err);
        }
        /* a cache that cannot be written only costs the next run a bake */
        cached =
            pbf__field_cache_save(dir, key, &b->field, why, sizeof why) == PBF_OK && dir[0] != '\0';
    }
    /* split over MPI ranks a static field in the cache may be cropped (field_crop.c) */
    b->bake = bd;
    b->key = key;
    if (cached) memcpy(b->cache_dir, dir, sizeof b->cache_dir);

    if (g == NULL) {
        g = calloc(1, sizeof *g);
        if (g == NULL) return fail_mesh(w, b, PBF_ERR_OUT_OF_MEMORY, "out of memory adding a mesh");
        w->geometry = g;
    }
    pbf_mesh_solid_info *in = &b->info;
    in->vertices = b->mesh.vertex_count;
    in->triangles = b->mesh.triangle_count;
    in->nx = b->field.field.nx;
    in->ny = b->field.field.ny;
    in->nz = b->field.field.nz;
    in->cell = b->field.field.cell;
    in->field_bytes = in->whole_field_bytes = b->field.bytes; /* field_crop.c: what is held */
    in->bake_seconds = b->field.seconds;
    in->from_cache = b->field.from_cache;
    in->volume = b->props.volume;
    in->mass = b->mass;
    in->bounds_min = v3((float)lo[0], (float)lo[1], (float)lo[2]);
    in->bounds_max = v3((float)hi[0], (float)hi[1], (float)hi[2]);
    g->body[g->count++] = b;
    if (d->motion != PBF_MESH_STATIC) g->moving++;
    if (d->motion == PBF_MESH_FLOATING) g->floating++;
    if (d->sink) g->sinks++;
    publish(w, b);
    pbf__meshes_sync(w);
    /* a world already split over MPI ranks: the new field (and, with a floating body, every
     * static one whole again) as the split keeps them (field_crop.c) */
    return g->keep_set ? pbf__meshes_keep_region(w, g->keep_lo, g->keep_hi) : PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Queries */

static const pbf_mesh_body *body_at(const pbf_world *w, int i) {
    const pbf_geometry *g = w != NULL ? w->geometry : NULL;
    return g != NULL && i >= 0 && i < g->count ? g->body[i] : NULL;
}

int pbf_world_mesh_count(const pbf_world *w) {
    return w != NULL && w->geometry != NULL ? w->geometry->count : 0;
}

const pbf_mesh_def *pbf_world_get_mesh_def(const pbf_world *w, int i) {
    const pbf_mesh_body *b = body_at(w, i);
    return b != NULL ? &b->def : NULL;
}

pbf_mesh_solid_info pbf_world_mesh_info(const pbf_world *w, int i) {
    const pbf_mesh_body *b = body_at(w, i);
    pbf_mesh_solid_info in;
    if (b != NULL) return b->info;
    memset(&in, 0, sizeof in);
    return in;
}

pbf_mesh_solid_state pbf_world_mesh_state(const pbf_world *w, int i) {
    const pbf_mesh_body *b = body_at(w, i);
    pbf_mesh_solid_state s;
    if (b != NULL) return b->state;
    memset(&s, 0, sizeof s);
    return s;
}

int pbf_world_mesh_triangles(const pbf_world *w, int i, const float **vertices, int *vertex_count,
                             const int32_t **triangles) {
    const pbf_mesh_body *b = body_at(w, i);
    if (b == NULL) return 0;
    if (vertices != NULL) *vertices = b->mesh.vertices;
    if (vertex_count != NULL) *vertex_count = b->mesh.vertex_count;
    if (triangles != NULL) *triangles = b->mesh.triangles;
    return b->mesh.triangle_count;
}

void pbf_world_mesh_transform(const pbf_world *w, int i, float out[12]) {
    const pbf_mesh_body *b = body_at(w, i);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c)
            out[4 * r + c] = b == NULL ? (r == c ? 1.0f : 0.0f)
                                       : (float)(c < 3 ? b->R[3 * r + c] : b->position[r]);
}

float pbf_world_mesh_distance(const pbf_world *w, int i, pbf_vec3 x) {
    const pbf_mesh_body *b = body_at(w, i);
    if (b == NULL) return INFINITY;
    pbf_solid s;
    pbf__mesh_body_solid(b, &s);
    pbf_v3 n;
    return pbf_mesh_sdf(&s, x, &n);
}

/* ---------------------------------------------------------------------------------------------
 * The step */

void pbf__meshes_step_begin(pbf_world *w) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return;
    for (int i = 0; i < g->count; ++i) {
        pbf_mesh_body *b = g->body[i];
        b->substeps_done = 0;
        for (int k = 0; k < 3; ++k) b->sum_force[k] = b->sum_torque[k] = 0.0;
    }
}

/* The force scratch for n particles. */
static int reserve(pbf_geometry *g, int n) {
    if (n <= g->capacity) return 1;
    size_t cap = (size_t)n + (size_t)n / 4 + 64;
    float *t = realloc(g->target, cap * 3 * sizeof *t);
    if (t != NULL) g->target = t;
    float *s = realloc(g->share, cap * 3 * sizeof *s);
    if (s != NULL) g->share = s;
    int32_t *k = realloc(g->share_body, cap * sizeof *k);
    if (k != NULL) g->share_body = k;
    if (t == NULL || s == NULL || k == NULL) return 0;
    g->capacity = (int)cap;
    return 1;
}

pbf_status pbf__meshes_substep_begin(pbf_world *w, float dt, int nt) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return PBF_OK;
    if (!reserve(g, w->count))
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                         "out of memory for the mesh solids' force scratch (%d particles)",
                         w->count);
    for (int i = 0; i < g->count; ++i)
        for (int k = 0; k < 3; ++k) g->body[i]->sub_force[k] = g->body[i]->sub_torque[k] = 0.0;
    pbf__meshes_move(w, dt);
    /* split over MPI ranks: every cell the particles can reach in this substep is held */
    pbf_status st = pbf__meshes_cover_particles(w, nt);
    if (st != PBF_OK) return st;
    /* Each particle's path from x (start pose) to its prediction p (end pose), walked in each
     * mesh's frame: the relative motion, so that neither a fast particle nor a fast paddle
     * passes through a thin part. */
    const int n = w->count;
    const float r = w->def.particle_radius;
    const float *x = w->x;
    float *p = w->p;
    pbf_solid start[PBF_MAX_MESHES], end[PBF_MAX_MESHES];
    const int m = pbf__meshes_sweep_frames(w, start, end);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i)
        v3_store(p, i, pbf_mesh_sweep_path(v3_load(x, i), v3_load(p, i), start, end, m, r));
    return PBF_OK;
}

/* Split over processes (docs/mpi.md): each rank's sums over its own particles become the whole
 * world's, added in rank order (w->halo_sum), so that every rank holds the same bits and moves a
 * floating body the same; one rank keeps its own bits. Collective: every rank calls it after
 * the same Δp pass, with the same meshes. */
static void sum_over_ranks(pbf_world *w, double f[][3], double t[][3], int m) {
    enum { PER = 6, CHUNK = PBF_HALO_SUM_MAX / PER * PER };
    double v[PBF_MAX_MESHES * PER];
    for (int k = 0; k < m; ++k)
        for (int q = 0; q < 3; ++q) v[PER * k + q] = f[k][q], v[PER * k + 3 + q] = t[k][q];
    for (int at = 0; at < PER * m; at += CHUNK)
        w->halo_sum(w, v + at, PER * m - at < CHUNK ? PER * m - at : CHUNK);
    for (int k = 0; k < m; ++k)
        for (int q = 0; q < 3; ++q) f[k][q] = v[PER * k + q], t[k][q] = v[PER * k + 3 + q];
}

/* The force on each mesh: after a Δp pass a particle's displacement beyond its fluid–fluid
 * target (the Δp pass wrote it) is what the solids gave it, λ_i ∇C_solid plus the collision
 * clamp: the impulse m Δx / dt of the solids on it. It goes to the nearest solid within h, when
 * that is a mesh (a domain wall or collider nearer keeps it). Over a substep the mesh's force is
 * −(m/dt²) Σ Δx; as for the wall probes (src/modules/probes.c) the fluid–fluid terms cancel, so a
 * resting
 * fluid's solids carry exactly its weight. With Chebyshev acceleration (solver.target_error > 0)
 * a pass also carries part of the previous one's displacement: the force is then approximate.
 * Per particle in parallel, summed serially in slot order: the same for any thread count; split
 * over processes, each rank sums its own particles and the ranks' sums are added in rank order. */
void pbf__meshes_after_delta(pbf_world *w, int nt) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return;
    const pbf_params *P = &w->params;
    const int n = w->count, m = g->count, colliders = w->collider_count;
    const float *x_old = w->p_prev, *x_new = w->p, *target = g->target;
    float *share = g->share;
    int32_t *share_body = g->share_body;
    const pbf_solid *S = w->solids;
    int solid[PBF_MAX_MESHES]; /* each mesh's entry in the solids (-1: a sink) */
    for (int k = 0; k < m; ++k) solid[k] = g->body[k]->solid;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xo = v3_load(x_old, i);
        const int best = pbf_mesh_force_owner(xo, P, S, solid, m, colliders);
        share_body[i] = best;
        if (best >= 0) v3_store(share, i, v3_sub(v3_load(x_new, i), v3_load(target, i)));
    }
    double f[PBF_MAX_MESHES][3], t[PBF_MAX_MESHES][3];
    memset(f, 0, sizeof f);
    memset(t, 0, sizeof t);
    const uint8_t *ghost = w->halo_ghost; /* split over processes: their owners count them */
    for (int i = 0; i < n; ++i) {
        const int k = share_body[i];
        if (k < 0 || (ghost != NULL && ghost[i])) continue;
        double d[3], r_d[3];
        pbf_mesh_force_terms(v3_load(share, i), v3_load(x_old, i), g->body[k]->position, d, r_d);
        for (int q = 0; q < 3; ++q) f[k][q] += d[q], t[k][q] += r_d[q];
    }
    if (w->halo != NULL) sum_over_ranks(w, f, t, m);
    const double scale = -(double)P->mass * (double)P->inv_dt * (double)P->inv_dt;
    for (int k = 0; k < m; ++k) {
        pbf_mesh_body *b = g->body[k];
        for (int q = 0; q < 3; ++q) {
            b->sum_force[q] += scale * f[k][q];
            b->sum_torque[q] += scale * t[k][q];
            b->sub_force[q] += scale * f[k][q];
            b->sub_torque[q] += scale * t[k][q];
        }
    }
}

/* The carried state: pose, velocities, the last substep's force and torque and the
 * accelerations used; the rest is rebuilt (the pose's matrix from the quaternion). */
void pbf__mesh_body_save(const pbf_mesh_body *b, double out[PBF_BODY_STATE]) {
    const double *parts[7] = {b->position,    b->velocity,   b->omega,     b->force_prev,
                              b->torque_prev, b->accel_prev, b->alpha_prev};
    for (int p = 0; p < 7; ++p) memcpy(out + 3 * p, parts[p], 3 * sizeof(double));
    memcpy(out + 21, b->q, 4 * sizeof(double));
    for (int k = 0; k < 3; ++k) out[25 + k] = 0.0;
}

void pbf__mesh_body_restore(pbf_world *w, int index, const double in[PBF_BODY_STATE]) {
    pbf_mesh_body *b = w->geometry->body[index];
    double *parts[7] = {b->position,    b->velocity,   b->omega,     b->force_prev,
                        b->torque_prev, b->accel_prev, b->alpha_prev};
    for (int p = 0; p < 7; ++p) memcpy(parts[p], in + 3 * p, 3 * sizeof(double));
    memcpy(b->q, in + 21, 4 * sizeof(double));
    pbf__mat_from_quat(b->q, b->R);
    memcpy(b->position_start, b->position, sizeof b->position);
    memcpy(b->R_start, b->R, sizeof b->R);
    publish(w, b);
    pbf__meshes_sync(w);
}

void pbf__meshes_step_end(pbf_world *w) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return;
    for (int i = 0; i < g->count; ++i) {
        pbf_mesh_body *b = g->body[i];
        double inv = b->substeps_done > 0 ? 1.0 / b->substeps_done : 0.0;
        b->state.force = v3((float)(b->sum_force[0] * inv), (float)(b->sum_force[1] * inv),
                            (float)(b->sum_force[2] * inv));
        b->state.torque = v3((float)(b->sum_torque[0] * inv), (float)(b->sum_torque[1] * inv),
                             (float)(b->sum_torque[2] * inv));
        publish(w, b);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Mesh solids and bodies as a module of the step (module.h): the bodies move and feel the fluid
 * in every substep, with particles or without */

static void meshes_step_begin(pbf_world *w, float dt) {
    (void)dt;
    pbf__meshes_step_begin(w);
}

static void meshes_after_delta(pbf_world *w, const pbf_params *P, float omega, int threads) {
    (void)P;
    (void)omega;
    pbf__meshes_after_delta(w, threads);
}

static void meshes_substep_end(pbf_world *w, float dt, int threads) {
    (void)threads;
    pbf__meshes_substep_end(w, dt);
}

static int meshes_keep_stepping(const pbf_world *w) {
    return w->geometry != NULL && w->geometry->moving > 0;
}

/* The Δp pass writes each particle's fluid–fluid target, from which the meshes' forces are
 * measured (meshes_after_delta). */
static void meshes_pass_extras(pbf_world *w, pbf_pass_extras *x) {
    if (w->geometry != NULL) x->delta_target = w->geometry->target;
}

const pbf_module pbf__meshes_module = {
    .name = "meshes",
    .empty_substeps = 1,
    .keeps_stepping = meshes_keep_stepping,
    .solids_changed = pbf__meshes_sync,
    .step_begin = meshes_step_begin,
    .substep_begin = pbf__meshes_substep_begin,
    .pass_extras = meshes_pass_extras,
    .after_delta = meshes_after_delta,
    .substep_end = meshes_substep_end,
    .step_end = pbf__meshes_step_end,
    .memory_bytes = pbf__meshes_memory_bytes,
    .free = pbf__meshes_free,
};
