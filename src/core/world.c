/* World lifetime, particles, colliders and the views of the arrays (their read-back by id is
 * readback.c). The step is in solver.c. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h" /* what runs where: the def's features, the tool and colliders checked */
#include "resources.h" /* memory checks before allocating */
#include "module.h" /* the features' state: freed and counted through their modules */
#include "cuda/world_cuda.h" /* the CUDA backend (docs/cuda.md): hooks marked "cuda" below */
#include "world_state.h"
#include "def_fields.h" /* the settings' ranges */

/* ---------------------------------------------------------------------------------------------
 * Validation: every message names the field and its range. */

#define CHECK_RANGE(cond, field, range, value)                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            pbf__format(err, err_size, "world def: %s must be %s, got %g", field, range,           \
                        (double)(value));                                                          \
            return PBF_ERR_INVALID_ARG;                                                            \
        }                                                                                          \
    } while (0)

static int finite3(pbf_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* def_fields.h's ranges, as conditions on `value`, the member's value (a float compared with
 * float bounds, an int with int ones); the message prints the member as it is. */
#define CLOSED(lo, hi) (value >= (lo) && value <= (hi))
#define OPEN(lo, hi) (value > (lo) && value < (hi))
#define ABOVE_UP_TO(lo, hi) (value > (lo) && value <= (hi))
#define HALF_OPEN(lo, hi) (value >= (lo) && value < (hi))
#define EITHER(a, b) (value == (a) || value == (b))
#define UNCHECKED ((void)value, 1)
#define CHECK_F32(member, range, expected)                                                         \
    do {                                                                                           \
        const float value = d->member;                                                             \
        CHECK_RANGE(range, #member, expected, d->member);                                          \
    } while (0);
#define CHECK_I32(member, range, expected)                                                         \
    do {                                                                                           \
        const int value = (int)d->member;                                                          \
        CHECK_RANGE(range, #member, expected, d->member);                                          \
    } while (0);
#define CHECK_VEC3(member, range, expected) /* below */
#define CHECK_WALLS(member, range, expected) /* below */
#define CHECK_PHASES(member, range, expected) /* below */
#define CHECK_FIELD(kind, member, since, old, dflt, range, expected)                               \
    CHECK_##kind(member, range, expected)

static pbf_status validate_def(const pbf_world_def *d, char *err, size_t err_size) {
    /* each setting in its range (def_fields.h), in WORLDDEF's order */
    PBF_DEF_FIELDS(CHECK_FIELD)
    /* then what the rows do not say: vectors, arrays and checks across members */
    const pbf_solver_def *s = &d->solver;
    if (!finite3(d->gravity)) {
        pbf__format(err, err_size, "world def: gravity must be finite");
        return PBF_ERR_INVALID_ARG;
    }
    if (!finite3(d->domain_min) || !finite3(d->domain_max)) {
        pbf__format(err, err_size, "world def: domain_min and domain_max must be finite");
        return PBF_ERR_INVALID_ARG;
    }
    const float lo[3] = {d->domain_min.x, d->domain_min.y, d->domain_min.z};
    const float hi[3] = {d->domain_max.x, d->domain_max.y, d->domain_max.z};
    const char *axis = "xyz";
    for (int k = 0; k < 3; ++k) {
        const pbf_wall_motion *a = &d->wall_motion[2 * k], *b = &d->wall_motion[2 * k + 1];
        for (int side = 0; side < 2; ++side) {
            const pbf_wall_motion *m = side ? b : a;
            if (!(m->amplitude >= 0.0f && isfinite(m->amplitude)) ||
                !(m->period > 0.0f && isfinite(m->period)) || !isfinite(m->phase)) {
                pbf__format(err, err_size,
                            "world def: wall_motion[%c_%s] needs amplitude >= 0, period > 0 and a "
                            "finite phase (got %g, %g, %g)",
                            axis[k], side ? "max" : "min", (double)m->amplitude, (double)m->period,
                            (double)m->phase);
                return PBF_ERR_INVALID_ARG;
            }
        }
        /* the walls may never come closer than two particle diameters */
        float gap = (hi[k] - b->amplitude) - (lo[k] + a->amplitude);
        if (!(gap >= 4.0f * d->particle_radius)) {
            pbf__format(err, err_size,
                        "world def: domain %c extent %g m (less wall motion amplitudes) must be at "
                        "least 4 particle radii (%g m)",
                        axis[k], (double)(hi[k] - lo[k]), (double)(4.0f * d->particle_radius));
            return PBF_ERR_INVALID_ARG;
        }
    }
    /* s_corr acts between pairs closer than scorr_reach times the rest spacing 2r and is k at
     * Δq (pbf_delta_coef) */
    if (!(s->scorr_dq * d->kernel_scale < 2.0f * s->scorr_reach)) {
        pbf__format(err, err_size,
                    "world def: solver.scorr_dq must be below solver.scorr_reach times the rest "
                    "spacing 2r = %g h (s_corr acts only between particles closer than that), "
                    "got %g h",
                    2.0 * (double)s->scorr_reach / d->kernel_scale, (double)s->scorr_dq);
        return PBF_ERR_INVALID_ARG;
    }
    /* the paper pair's spiky gradient rises as particles meet already (pbf_wendland_factor) */
    if (d->kernel_core > 0.0f && d->kernel != PBF_KERNEL_WENDLAND) {
        pbf__format(err, err_size,
                    "world def: kernel_core %g needs the Wendland pair (kernel "
                    "PBF_KERNEL_WENDLAND; scene: fluid.kernel \"wendland\"): the paper pair's "
                    "spiky gradient already rises as two particles meet; use kernel_core 0",
                    (double)d->kernel_core);
        return PBF_ERR_INVALID_ARG;
    }
    CHECK_RANGE(s->min_iterations >= 0 && s->min_iterations <= s->max_iterations,
                "solver.min_iterations", "in [0, solver.max_iterations]", s->min_iterations);
    if (d->wall_no_slip && !(d->material.viscosity > 0.0f)) {
        pbf__format(err, err_size,
                    "world def: wall_no_slip needs material.viscosity > 0 (the walls hold the "
                    "fluid through its viscosity), got viscosity %g",
                    (double)d->material.viscosity);
        return PBF_ERR_INVALID_ARG;
    }
    float rho_lo = 3.4e38f, rho_hi = 0.0f;
    for (int k = 0; k < d->phase_count; ++k) {
        const pbf_phase_def *ph = &d->phases[k];
        if (!(ph->density > 0.0f && isfinite(ph->density))) {
            pbf__format(err, err_size, "world def: phases[%d].density must be > 0 kg/m^3, got %g",
                        k, (double)ph->density);
            return PBF_ERR_INVALID_ARG;
        }
        if (!(ph->xsph >= 0.0f && ph->xsph <= 1.0f)) {
            pbf__format(err, err_size, "world def: phases[%d].xsph must be in [0, 1], got %g", k,
                        (double)ph->xsph);
            return PBF_ERR_INVALID_ARG;
        }
        if (!(ph->gravity_scale >= -10.0f && ph->gravity_scale <= 10.0f)) {
            pbf__format(err, err_size,
                        "world def: phases[%d].gravity_scale must be in [-10, 10], got %g", k,
                        (double)ph->gravity_scale);
            return PBF_ERR_INVALID_ARG;
        }
        rho_lo = ph->density < rho_lo ? ph->density : rho_lo;
        rho_hi = ph->density > rho_hi ? ph->density : rho_hi;
    }
    if (d->phase_count > 0 && !(rho_hi <= PBF_MAX_DENSITY_RATIO * rho_lo)) {
        pbf__format(err, err_size,
                    "world def: phases: the rest densities %g and %g kg/m^3 are %.3g:1 apart; the "
                    "solver keeps layers in order up to %g:1 (docs/physics.md, \"Several "
                    "fluids\")",
                    (double)rho_hi, (double)rho_lo, (double)(rho_hi / rho_lo),
                    (double)PBF_MAX_DENSITY_RATIO);
        return PBF_ERR_INVALID_ARG;
    }
    /* what the def uses, on its backend and together (caps.c: the one table) */
    const pbf_column column = d->backend == PBF_BACKEND_CUDA ? PBF_COLUMN_CUDA : PBF_COLUMN_CPU;
    pbf_status caps = pbf__caps_check(0, pbf_world_def_features(d), column, err, err_size);
    if (caps != PBF_OK) return caps;
#ifndef PBF_HAVE_CUDA /* cuda: without the backend built in (with it: pbf__cuda_attach) */
    if (d->backend == PBF_BACKEND_CUDA) {
        pbf__format(err, err_size,
                    "world def: backend 'cuda' is not available in this build (no CUDA backend)");
        return PBF_ERR_UNSUPPORTED;
    }
#endif
    return PBF_OK;
}
#undef CHECK_FIELD
#undef CHECK_F32
#undef CHECK_I32
#undef CHECK_VEC3
#undef CHECK_WALLS
#undef CHECK_PHASES
#undef CLOSED
#undef OPEN
#undef ABOVE_UP_TO
#undef HALF_OPEN
#undef EITHER
#undef UNCHECKED

/* ---------------------------------------------------------------------------------------------
 * Lifetime */

static void free_particles(pbf_world *w) {
#define PBF_FIELD_FREE(name, type, components, flags, scratch) free(w->name);
    PBF_PARTICLE_FIELDS(PBF_FIELD_FREE) /* fields.h */
#undef PBF_FIELD_FREE
    free(w->grid.cell_of);
    free(w->grid.order);
    free(w->neighbors.start);
}

void pbf_world_destroy(pbf_world *w) {
    if (!w) return;
    pbf__cuda_detach(w); /* cuda */
    free_particles(w);
    for (int k = 0; k < pbf__module_count; ++k) /* modules: the features' state */
        if (pbf__modules[k]->free) pbf__modules[k]->free(w);
    if (w->halo_free) w->halo_free(w); /* a world split over processes (src/comm/mpi/) */
    free(w->grid.cell_start);
    free(w->grid.cursor);
    free(w->iteration_error);
    pbf_neighbor_list_free(&w->neighbors);
    free(w);
}

/* Entries of the per-iteration error history: one per density check (solver.c). */
static size_t iteration_history_size(const pbf_solver_def *s) {
    int n = s->iterations > s->max_iterations ? s->iterations : s->max_iterations;
    return (size_t)n + 2;
}

pbf_status pbf_world_create(const pbf_world_def *def, pbf_world **out, char *err, size_t err_size) {
    if (!out) return PBF_ERR_INVALID_ARG;
    *out = NULL;
    if (!def) {
        pbf__format(err, err_size, "world def: NULL");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_status st = validate_def(def, err, err_size);
    if (st != PBF_OK) return st;

    pbf_world *w = calloc(1, sizeof *w);
    if (!w) {
        pbf__format(err, err_size, "out of memory creating the world");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    w->def = *def;
    pbf__init_params(w);

    pbf_v3 lo, hi;
    pbf__walls_envelope(def, &lo, &hi);
    int64_t cells = pbf_grid_layout(&w->grid, lo, hi, w->params.h);
    if (cells < 0) {
        pbf__format(err, err_size,
                    "world def: the domain is too large for a grid of cell size h = %g m (more "
                    "than 2^30 cells); enlarge particle_radius or shrink the domain",
                    (double)w->params.h);
        pbf_world_destroy(w);
        return PBF_ERR_INVALID_ARG;
    }
    /* Resources: refuse a grid the machine cannot hold before allocating it. */
    char why[PBF_ERROR_SIZE];
    if (pbf__check_memory(((double)cells * 2.0 + 1.0) * sizeof(uint32_t), "the grid", why,
                          sizeof why) != 0) {
        pbf__format(err, err_size,
                    "world def: the grid of %d x %d x %d = %lld cells of size h = %g m over the "
                    "domain %s; enlarge particle_radius or shrink the domain",
                    w->grid.nx, w->grid.ny, w->grid.nz, (long long)cells, (double)w->params.h, why);
        pbf_world_destroy(w);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    w->grid.cell_start = calloc((size_t)cells + 1, sizeof *w->grid.cell_start);
    w->grid.cursor = calloc((size_t)cells, sizeof *w->grid.cursor);
    w->iteration_error = calloc(iteration_history_size(&def->solver), sizeof *w->iteration_error);
    if (!w->grid.cell_start || !w->grid.cursor || !w->iteration_error) {
        pbf__format(err, err_size, "out of memory allocating a grid of %lld cells (%.1f MB)",
                    (long long)cells, (double)cells * 8.0 / 1e6);
        pbf_world_destroy(w);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    w->profile.iterations = def->solver.iterations;
    w->profile.substeps = def->substeps;
    if (def->backend == PBF_BACKEND_CUDA) { /* cuda: fails at once where no device is usable */
        st = pbf__cuda_attach(w, err, err_size);
        if (st != PBF_OK) {
            pbf_world_destroy(w);
            return st;
        }
        w->host_pull = pbf__cuda_pull; /* for the modules the backend calls (world_state.h) */
    }
    *out = w;
    return PBF_OK;
}

const char *pbf_world_error(const pbf_world *w) { return w ? w->error : "no world"; }
const pbf_world_def *pbf_world_get_def(const pbf_world *w) { return &w->def; }

static int inside_domain(const pbf_world *w, pbf_v3 x) {
    const pbf_world_def *d = &w->def;
    return x.x >= d->domain_min.x && x.x <= d->domain_max.x && x.y >= d->domain_min.y &&
           x.y <= d->domain_max.y && x.z >= d->domain_min.z && x.z <= d->domain_max.z;
}

/* Lattice cells along one axis of a block: floor(extent / spacing), tolerant of round-off.
 * Saturates at LATTICE_MAX, and the product at LATTICE_PRODUCT_MAX: both are far more particles
 * than a world holds, so an absurd size (a radius of 1e-45 m, found by the scene fuzzer) gives
 * a count that is refused instead of an integer overflow. */
#define LATTICE_MAX ((int64_t)1 << 31)
#define LATTICE_PRODUCT_MAX ((int64_t)1 << 56) /* a sum over 64 blocks stays in int64 */
static int64_t lattice_count(float lo, float hi, float spacing) {
    double n = floor((double)(hi - lo) / (double)spacing + 1e-4);
    return n > 0.0 ? (n < (double)LATTICE_MAX ? (int64_t)n : LATTICE_MAX) : 0;
}

static int64_t lattice_product(int64_t a, int64_t b, int64_t c) {
    double p = (double)a * (double)b * (double)c;
    return p < (double)LATTICE_PRODUCT_MAX ? a * b * c : LATTICE_PRODUCT_MAX;
}

int64_t pbf_block_particle_count(const pbf_block_def *b, float r) {
    if (!b || !(r > 0.0f)) return 0;
    float s = 2.0f * r;
    return lattice_product(lattice_count(b->min.x, b->max.x, s),
                           lattice_count(b->min.y, b->max.y, s),
                           lattice_count(b->min.z, b->max.z, s));
}

/* xorshift32: small, fast, and the same sequence on every platform for a given seed. */
static float next_uniform(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

pbf_status pbf_world_add_block(pbf_world *w, const pbf_block_def *b) {
    if (!b) return pbf__fail(w, PBF_ERR_INVALID_ARG, "block: NULL");
    if (!finite3(b->min) || !finite3(b->max) || !finite3(b->velocity))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "block: min, max and velocity must be finite");
    if (!(b->min.x < b->max.x && b->min.y < b->max.y && b->min.z < b->max.z))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "block: min must be below max on every axis");
    if (!pbf__phase_valid(w, b->phase))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "block: phase %d is not one of the world's %d fluids", b->phase,
                         w->def.phase_count > 0 ? w->def.phase_count : 1);
    if (!(b->jitter >= 0.0f && b->jitter <= 0.5f))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "block: jitter must be in [0, 0.5], got %g",
                         (double)b->jitter);
    if (!inside_domain(w, b->min) || !inside_domain(w, b->max))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "block: (%g %g %g)-(%g %g %g) is not inside the domain (%g %g %g)-(%g %g "
                         "%g)",
                         (double)b->min.x, (double)b->min.y, (double)b->min.z, (double)b->max.x,
                         (double)b->max.y, (double)b->max.z, (double)w->def.domain_min.x,
                         (double)w->def.domain_min.y, (double)w->def.domain_min.z,
                         (double)w->def.domain_max.x, (double)w->def.domain_max.y,
                         (double)w->def.domain_max.z);
    float r = w->def.particle_radius, s = 2.0f * r;
    int64_t nx = lattice_count(b->min.x, b->max.x, s), ny = lattice_count(b->min.y, b->max.y, s),
            nz = lattice_count(b->min.z, b->max.z, s);
    int64_t n = lattice_product(nx, ny, nz);
    if (n == 0)
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "block: smaller than one particle spacing (%g m) on some axis", (double)s);
    if (n + w->count > INT32_MAX / 4)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "block: %lld particles is too many", (long long)n);
    pbf_status st = pbf__check_particle_memory(w, w->count + n);
    if (st != PBF_OK) return st;
    pbf__cuda_touch(w); /* cuda: particles are added on the host */
    st = pbf__world_grow(w, w->count + (int)n);
    if (st != PBF_OK) return st;
    uint32_t rng = b->seed ? b->seed : 0x9e3779b9u; /* xorshift must not start at 0 */
    pbf_v3 vel = v3(b->velocity.x, b->velocity.y, b->velocity.z);
    for (int64_t k = 0; k < nz; ++k)
        for (int64_t j = 0; j < ny; ++j)
            for (int64_t i = 0; i < nx; ++i) {
                pbf_v3 x = v3(b->min.x + r + s * (float)i, b->min.y + r + s * (float)j,
                              b->min.z + r + s * (float)k);
                if (b->jitter > 0.0f) {
                    x.x += (next_uniform(&rng) - 0.5f) * b->jitter * s;
                    x.y += (next_uniform(&rng) - 0.5f) * b->jitter * s;
                    x.z += (next_uniform(&rng) - 0.5f) * b->jitter * s;
                }
                pbf__push_particle(w, x, vel, b->phase);
            }
    return PBF_OK;
}

pbf_status pbf_world_add_particles(pbf_world *w, int count, const float *pos, const float *vel) {
    return pbf_world_add_particles_phase(w, count, pos, vel, 0);
}

pbf_status pbf_world_add_particles_phase(pbf_world *w, int count, const float *pos,
                                         const float *vel, int phase) {
    if (!pbf__phase_valid(w, phase))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "add_particles: phase %d is not one of the world's %d fluids", phase,
                         w->def.phase_count > 0 ? w->def.phase_count : 1);
    if (count < 0 || (count > 0 && !pos))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "add_particles: count < 0 or positions NULL");
    for (int i = 0; i < count; ++i) {
        pbf_v3 x = v3_load(pos, i);
        if (!isfinite(x.x) || !isfinite(x.y) || !isfinite(x.z) || !inside_domain(w, x))
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "add_particles: particle %d at (%g %g %g) is not inside the domain", i,
                             (double)x.x, (double)x.y, (double)x.z);
        if (vel && !(isfinite(vel[3 * i]) && isfinite(vel[3 * i + 1]) && isfinite(vel[3 * i + 2])))
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "add_particles: particle %d has a non-finite velocity", i);
    }
    pbf_status st = pbf__check_particle_memory(w, (int64_t)w->count + count);
    if (st != PBF_OK) return st;
    pbf__cuda_touch(w); /* cuda: particles are added on the host */
    st = pbf__world_grow(w, w->count + count);
    if (st != PBF_OK) return st;
    for (int i = 0; i < count; ++i)
        pbf__push_particle(w, v3_load(pos, i), vel ? v3_load(vel, i) : v3(0.0f, 0.0f, 0.0f), phase);
    return PBF_OK;
}

/* What the features hold (modules.c). */
static size_t modules_memory_bytes(const pbf_world *w) {
    size_t b = 0;
    for (int k = 0; k < pbf__module_count; ++k)
        if (pbf__modules[k]->memory_bytes) b += pbf__modules[k]->memory_bytes(w);
    return b;
}

/* The features' solids follow the colliders and the solver def (modules.c: the meshes). */
static void solids_changed(pbf_world *w) {
    for (int k = 0; k < pbf__module_count; ++k)
        if (pbf__modules[k]->solids_changed) pbf__modules[k]->solids_changed(w);
}

pbf_status pbf_world_add_collider(pbf_world *w, const pbf_collider_def *c) {
    if (!c) return pbf__fail(w, PBF_ERR_INVALID_ARG, "collider: NULL");
    if (c->adhesion != 0.0f && pbf__caps_require(w, PBF_FEATURE_ADHESION) != PBF_OK)
        return PBF_ERR_UNSUPPORTED;
    if (c->friction != 0.0f && pbf__caps_require(w, PBF_FEATURE_FRICTION) != PBF_OK)
        return PBF_ERR_UNSUPPORTED;
    if (w->collider_count >= PBF_MAX_SOLIDS)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "collider: at most %d colliders", PBF_MAX_SOLIDS);
    switch (c->type) {
    case PBF_COLLIDER_SPHERE:
        if (!(c->radius > 0.0f) || !finite3(c->center))
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "collider: a sphere needs a finite center and radius > 0, got %g",
                             (double)c->radius);
        break;
    case PBF_COLLIDER_BOX:
        if (!(c->half_extents.x > 0.0f && c->half_extents.y > 0.0f && c->half_extents.z > 0.0f) ||
            !finite3(c->center) || !finite3(c->half_extents))
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "collider: a box needs a finite center and half_extents > 0");
        break;
    case PBF_COLLIDER_CAPSULE:
        if (!(c->radius > 0.0f) || !finite3(c->a) || !finite3(c->b))
            return pbf__fail(w, PBF_ERR_INVALID_ARG,
                             "collider: a capsule needs finite end points and radius > 0, got %g",
                             (double)c->radius);
        break;
    default: return pbf__fail(w, PBF_ERR_INVALID_ARG, "collider: unknown type %d", (int)c->type);
    }
    if (!(c->adhesion >= 0.0f && c->adhesion <= 10.0f))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "collider: adhesion must be in [0, 10] N/m, got %g", (double)c->adhesion);
    if (!(c->friction >= 0.0f && c->friction <= 10.0f))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "collider: friction must be in [0, 10], got %g",
                         (double)c->friction);
    w->colliders[w->collider_count] = *c;
    w->solids[w->collider_count] = pbf__solid_from_def(c);
    w->collider_count++;
    w->params.solid_count = w->collider_count;
    solids_changed(w); /* the meshes' solids follow the colliders */
    w->params.adhesion_on |= c->adhesion > 0.0f; /* materials (kernels.h) */
    w->params.friction_on |= c->friction > 0.0f;
    return PBF_OK;
}

int pbf_world_collider_count(const pbf_world *w) { return w->collider_count; }

pbf_collider_def pbf_world_get_collider(const pbf_world *w, int index) {
    if (index < 0 || index >= w->collider_count) return pbf_default_collider_def();
    return w->colliders[index];
}

/* ---------------------------------------------------------------------------------------------
 * Queries and read-back */

int pbf_world_particle_count(const pbf_world *w) { return w->count; }
double pbf_world_time(const pbf_world *w) { return w->time; }
float pbf_world_particle_mass(const pbf_world *w) { return w->params.mass; }
float pbf_world_kernel_radius(const pbf_world *w) { return w->params.h; }

void pbf_world_get_domain(const pbf_world *w, pbf_vec3 *min, pbf_vec3 *max) {
    pbf_v3 lo, hi;
    pbf__walls_at(&w->def, w->time, &lo, &hi);
    if (min) *min = (pbf_vec3){lo.x, lo.y, lo.z};
    if (max) *max = (pbf_vec3){hi.x, hi.y, hi.z};
}

size_t pbf_world_memory_bytes(const pbf_world *w) {
    return sizeof *w + (size_t)w->capacity * pbf__bytes_per_particle() +
           ((size_t)w->capacity + 1) * sizeof(uint32_t) +
           w->neighbors.index_capacity * (sizeof(uint32_t) + sizeof(float)) + /* index, pair_g */
           ((size_t)w->grid.cell_count * 2 + 1) * sizeof(uint32_t) + modules_memory_bytes(w);
}

/* The slots in increasing id order. While no particle was removed the ids are 0..count-1 and
 * the order is their inverse; after removals a stable radix sort of the ids (3 passes of 11
 * bits, ids < 2^31) gives it in O(count). It writes the world's scratch arrays: read-back is not
 * safe from two threads at once on one world (stepping never is either). */
const int32_t *pbf__slots_by_id(const pbf_world *cw) {
    pbf_world *w = (pbf_world *)cw; /* the scratch only: the state is not changed */
    const int n = w->count;
    int32_t *a = w->id_order, *b = w->id_scratch;
    if (n == 0) return a;
    if (w->next_id == n) {
        for (int i = 0; i < n; ++i) a[w->ids[i]] = i;
        return a;
    }
    for (int i = 0; i < n; ++i) a[i] = i;
    for (int shift = 0; shift < 33; shift += 11) {
        int hist[2049] = {0};
        for (int k = 0; k < n; ++k) ++hist[(((uint32_t)w->ids[a[k]] >> shift) & 2047u) + 1];
        for (int d = 0; d < 2048; ++d) hist[d + 1] += hist[d];
        for (int k = 0; k < n; ++k) b[hist[((uint32_t)w->ids[a[k]] >> shift) & 2047u]++] = a[k];
        int32_t *t = a;
        a = b;
        b = t;
    }
    return a;
}

pbf_particle_view pbf_world_view(const pbf_world *w) {
    pbf__cuda_pull(w); /* cuda */
    pbf_particle_view v;
    v.count = w->count;
    v.positions = w->x;
    v.velocities = w->v;
    v.densities = w->density;
    v.ids = w->ids;
    v.phases = w->phase;
    return v;
}

pbf_status pbf_world_device_view(const pbf_world *w, pbf_device_view *out, char *err,
                                 size_t err_size) {
    if (w == NULL || out == NULL) {
        pbf__format(err, err_size, "pbf_world_device_view: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof *out);
    out->device = -1;
    if (w->def.backend != PBF_BACKEND_CUDA) {
        pbf__format(err, err_size,
                    "pbf_world_device_view: the world runs on the CPU backend; its particles "
                    "are in host memory (pbf_world_view)");
        return PBF_ERR_UNSUPPORTED;
    }
    return pbf__cuda_device_view(w, out, err, err_size); /* cuda */
}

/* ---------------------------------------------------------------------------------------------
 * Changing the solver of a live world (to compare solvers on the same state). */

pbf_status pbf_world_set_solver(pbf_world *w, const pbf_solver_def *solver) {
    if (!w || !solver) return PBF_ERR_INVALID_ARG;
    pbf_world_def d = w->def;
    d.solver = *solver;
    char err[PBF_ERROR_SIZE];
    pbf_status st = validate_def(&d, err, sizeof err);
    if (st != PBF_OK) return pbf__fail(w, st, "%s", err);
    if (iteration_history_size(solver) > iteration_history_size(&w->def.solver)) {
        float *e = realloc(w->iteration_error,
                           iteration_history_size(solver) * sizeof *w->iteration_error);
        if (!e) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory");
        w->iteration_error = e;
    }
    w->def.solver = *solver;
    pbf_params keep = w->params; /* the substep fields (dt, walls) are refreshed every substep */
    pbf__init_params(w);
    w->params.dt = keep.dt;
    w->params.inv_dt = keep.inv_dt;
    w->params.max_speed = keep.max_speed;
    w->params.wall_lo = keep.wall_lo;
    w->params.wall_hi = keep.wall_hi;
    solids_changed(w); /* solid_count includes the meshes */
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Backends (docs/cuda.md) */

pbf_status pbf_backend_info(pbf_backend backend, char *buf, size_t size) {
    if (backend == PBF_BACKEND_CPU) {
        pbf__format(buf, size, "CPU (OpenMP, %d threads)", omp_get_max_threads());
        return PBF_OK;
    }
    if (backend == PBF_BACKEND_CUDA) return pbf__cuda_info(buf, size); /* cuda */
    pbf__format(buf, size, "unknown backend %d", (int)backend);
    return PBF_ERR_INVALID_ARG;
}
