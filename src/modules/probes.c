/* Probes (include/pbf/probes.h, docs/validation.md): water height at a point, the
 * front of the fluid, and the force on a wall patch from the constraint reaction.
 *
 * Height and front are read from the positions when sampled, on bins 2r wide along the probe's
 * axis: each bin keeps its count and the smallest and largest coordinate of its particles, so
 * the gap between two consecutive occupied bins is exact (no sort), and a gap inside one bin is
 * at most 2r, i.e. never a gap between particles. Everything is reduced serially in slot order:
 * the readings are bit-identical for any thread count.
 *
 * Force: after each Δp pass the solver calls pbf__probes_force_pass. For every particle i within
 * h of a patch it recomputes the pass's fluid–fluid correction, V Σ_j (λ_i + λ_j + s_corr) ∇W_ij
 * (the same kernels.h functions, the same neighbours in the same order, so the same floats), and
 * takes the rest of the particle's actual displacement as what the solids gave it:
 *     Δx_i^solid = x_i^new − (x_i + V Σ_j ...)          (ghost-density push + collision clamp)
 * That is the impulse m Δx_i^solid / dt of the wall on particle i; summed over the iterations of
 * a substep it is the wall's force times dt². The patch gets F = (m/dt²) Σ_i Δx_i^solid · n, the
 * step's value is the mean over its substeps. The fluid–fluid terms are antisymmetric in i and j,
 * so over the whole fluid the patches of all walls add up exactly to the change of momentum minus
 * gravity: a resting column's floor carries its weight (tests/test_hydrostatic.c). */
#include "module.h" /* this feature as a module of the step */
#include "probes.h"
#include "probe_level.h"
#include "caps.h" /* what runs where: force probes checked */
#include "cpu_passes.h" /* the Δp sum, as the Δp pass computes it (cpu_stages.c) */

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_TOLERANCE(r) (0.01f * (r)) /* "on the face": within 1% of a particle radius */

static const char *const TYPE_NAMES[] = {"height", "front", "force", "level"};
static const char *const DIRECTION_NAMES[] = {"+x", "-x", "+y", "-y", "+z", "-z"};
static const char AXES[] = "xyz";

pbf_probe_def pbf_default_probe_def(void) {
    pbf_probe_def d;
    memset(&d, 0, sizeof d);
    d.type = PBF_PROBE_HEIGHT;
    memcpy(d.name, "probe", 6);
    d.position = (pbf_vec3){0.5f, 0.0f, 0.5f};
    d.radius = 0.02f;
    d.max_gap = 0.04f;
    d.direction = PBF_DIR_X_POS;
    d.min_particles = 1;
    d.size = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.fraction = 0.5f;
    return d;
}

const char *pbf_probe_type_name(pbf_probe_type type) {
    return (int)type >= 0 && (int)type < 4 ? TYPE_NAMES[type] : "?";
}

const char *pbf_direction_name(pbf_direction d) {
    return (int)d >= 0 && (int)d < 6 ? DIRECTION_NAMES[d] : "?";
}

static float comp(pbf_vec3 v, int axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

/* ---------------------------------------------------------------------------------------------
 * Checks */

static pbf_status bad(const char **field, const char *name, char *why, size_t size, const char *fmt,
                      ...) {
    if (field != NULL) *field = name;
    if (why != NULL && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
    }
    return PBF_ERR_INVALID_ARG;
}

static int name_ok(const char *name) {
    size_t n = strnlen(name, PBF_PROBE_NAME_SIZE);
    if (n == 0 || n >= PBF_PROBE_NAME_SIZE) return 0;
    for (size_t i = 0; i < n; ++i) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

/* The patch's solid: which domain wall (0..5) or box collider (6 + index) it lies on, and the
 * plane coordinate; -1 when none. */
static int find_face(const pbf_probe_def *p, const pbf_world_def *w, const pbf_collider_def *cols,
                     int ncol, float *plane) {
    int k = (int)p->direction >> 1;
    int positive = ((int)p->direction & 1) == 0; /* normal along +axis */
    float tol = PROBE_TOLERANCE(w->particle_radius);
    float c = comp(p->position, k);
    /* a domain wall whose normal points into the domain: +axis is the min wall */
    float wall = positive ? comp(w->domain_min, k) : comp(w->domain_max, k);
    if (fabsf(c - wall) <= tol) {
        int inside = 1;
        for (int t = 0; t < 3; ++t) {
            if (t == k) continue;
            float lo = comp(p->position, t) - 0.5f * comp(p->size, t);
            float hi = comp(p->position, t) + 0.5f * comp(p->size, t);
            if (lo < comp(w->domain_min, t) - tol || hi > comp(w->domain_max, t) + tol) inside = 0;
        }
        if (inside) {
            *plane = wall;
            return 2 * k + (positive ? 0 : 1);
        }
    }
    for (int i = 0; i < ncol; ++i) {
        if (cols[i].type != PBF_COLLIDER_BOX) continue;
        float face =
            comp(cols[i].center, k) + (positive ? 1.0f : -1.0f) * comp(cols[i].half_extents, k);
        if (fabsf(c - face) > tol) continue;
        int inside = 1;
        for (int t = 0; t < 3; ++t) {
            if (t == k) continue;
            float half = comp(cols[i].half_extents, t), ctr = comp(cols[i].center, t);
            if (fabsf(comp(p->position, t) - ctr) + 0.5f * comp(p->size, t) > half + tol)
                inside = 0;
        }
        if (inside) {
            *plane = face;
            return PBF_WALL_COUNT + i;
        }
    }
    return -1;
}

pbf_status pbf_probe_check(const pbf_probe_def *p, const pbf_world_def *w,
                           const pbf_collider_def *cols, int ncol, const char **field, char *why,
                           size_t why_size) {
    if (field != NULL) *field = "";
    if (why != NULL && why_size > 0) why[0] = '\0';
    if (p == NULL || w == NULL || (ncol > 0 && cols == NULL))
        return bad(field, "", why, why_size, "probe and world def must not be NULL");
    if ((int)p->type < 0 || (int)p->type > 3)
        return bad(field, "type", why, why_size,
                   "must be one of 'height', 'front', 'force' or 'level'");
    if (!name_ok(p->name))
        return bad(field, "name", why, why_size,
                   "must be 1 to %d characters of letters, digits, '_', '-' and '.' (it names "
                   "CSV columns)",
                   PBF_PROBE_NAME_SIZE - 1);
    if ((int)p->direction < 0 || (int)p->direction > 5)
        return bad(field, p->type == PBF_PROBE_FORCE ? "normal" : "direction", why, why_size,
                   "must be one of '+x', '-x', '+y', '-y', '+z' or '-z'");
    if (p->type != PBF_PROBE_FRONT) {
        for (int a = 0; a < 3; ++a) {
            float v = comp(p->position, a), lo = comp(w->domain_min, a),
                  hi = comp(w->domain_max, a);
            if (!(v >= lo && v <= hi))
                return bad(field, "position", why, why_size,
                           "must lie inside the domain, got %c = %.9g outside [%.9g, %.9g]",
                           AXES[a], (double)v, (double)lo, (double)hi);
        }
    }
    if (p->type == PBF_PROBE_HEIGHT && !(p->radius > 0.0f && isfinite(p->radius)))
        return bad(field, "radius", why, why_size, "must be > 0 m, got %.9g", (double)p->radius);
    if (p->type == PBF_PROBE_LEVEL && !(p->fraction > 0.0f && p->fraction < 1.0f))
        return bad(field, "fraction", why, why_size, "must be in (0, 1), got %.9g",
                   (double)p->fraction);
    if (p->type != PBF_PROBE_FORCE && p->type != PBF_PROBE_LEVEL &&
        !(p->max_gap >= 0.0f && isfinite(p->max_gap)))
        return bad(field, "max_gap", why, why_size, "must be >= 0 m, got %.9g", (double)p->max_gap);
    if (p->type == PBF_PROBE_FRONT && !(p->min_particles >= 1 && p->min_particles <= 1000000))
        return bad(field, "min_particles", why, why_size, "must be in [1, 1000000], got %d",
                   p->min_particles);
    if (p->type != PBF_PROBE_FORCE) return PBF_OK;

    int k = (int)p->direction >> 1;
    for (int a = 0; a < 3; ++a) {
        float s = comp(p->size, a);
        if (a == k && s != 0.0f)
            return bad(field, "size", why, why_size,
                       "must be 0 along the normal's axis %c (a patch is flat), got %.9g", AXES[a],
                       (double)s);
        if (a != k && !(s > 0.0f && isfinite(s)))
            return bad(field, "size", why, why_size,
                       "must be > 0 along %c (the patch's extent across the normal %s), got %.9g",
                       AXES[a], DIRECTION_NAMES[p->direction], (double)s);
    }
    float plane = 0.0f;
    if (find_face(p, w, cols, ncol, &plane) < 0) {
        int positive = ((int)p->direction & 1) == 0;
        char boxes[256] = "";
        size_t used = 0;
        for (int i = 0; i < ncol && used + 48 < sizeof boxes; ++i) {
            if (cols[i].type != PBF_COLLIDER_BOX) continue;
            float f =
                comp(cols[i].center, k) + (positive ? 1.0f : -1.0f) * comp(cols[i].half_extents, k);
            used += (size_t)snprintf(boxes + used, sizeof boxes - used, "%s colliders[%d] at %g",
                                     used ? "," : "; the box faces:", i, (double)f);
        }
        return bad(field, "position", why, why_size,
                   "must lie on the domain wall %c = %g or on a box collider's face facing %s, "
                   "and inside it (a force patch with normal %s); got %c = %g%s",
                   AXES[k], (double)(positive ? comp(w->domain_min, k) : comp(w->domain_max, k)),
                   DIRECTION_NAMES[p->direction], DIRECTION_NAMES[p->direction], AXES[k],
                   (double)comp(p->position, k), boxes);
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The world's probe set */

pbf_status pbf_world_set_probes(pbf_world *w, const pbf_probe_def *probes, int count) {
    if (count < 0 || count > PBF_MAX_PROBES || (count > 0 && probes == NULL))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "probes: count must be in [0, %d], got %d",
                         PBF_MAX_PROBES, count);
    if (count == 0) {
        pbf__probes_free(w);
        return PBF_OK;
    }
    for (int i = 0; i < count; ++i) {
        const char *field = "";
        char why[PBF_ERROR_SIZE - 64];
        if (pbf_probe_check(&probes[i], &w->def, w->colliders, w->collider_count, &field, why,
                            sizeof why) != PBF_OK)
            return pbf__fail(w, PBF_ERR_INVALID_ARG, "probes[%d].%s %s", i, field, why);
        for (int j = 0; j < i; ++j)
            if (strncmp(probes[i].name, probes[j].name, PBF_PROBE_NAME_SIZE) == 0)
                return pbf__fail(w, PBF_ERR_INVALID_ARG,
                                 "probes[%d].name '%s' is already the name of probes[%d]: names "
                                 "must be unique",
                                 i, probes[i].name, j);
    }
    for (int i = 0; i < count; ++i) { /* caps.c: force probes have a pass of their own */
        pbf_feature f =
            probes[i].type == PBF_PROBE_FORCE ? PBF_FEATURE_FORCE_PROBES : PBF_FEATURE_PROBES;
        if (pbf__caps_require(w, f) != PBF_OK) return PBF_ERR_UNSUPPORTED;
    }
    pbf_probes *set = calloc(1, sizeof *set);
    if (set == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory for the probes");
    set->count = count;
    memcpy(set->defs, probes, (size_t)count * sizeof *probes);
    for (int i = 0; i < count; ++i) {
        const pbf_probe_def *p = &set->defs[i];
        if (p->type != PBF_PROBE_FORCE) continue;
        pbf_patch *q = &set->patches[set->patch_count++];
        q->probe = i;
        q->axis = (int)p->direction >> 1;
        q->sign = ((int)p->direction & 1) ? -1.0f : 1.0f;
        int solid = find_face(p, &w->def, w->colliders, w->collider_count, &q->plane);
        q->wall = solid < PBF_WALL_COUNT ? solid : -1;
        q->area = 1.0f;
        for (int t = 0; t < 3; ++t) {
            float half = 0.5f * comp(p->size, t);
            q->lo[t] = comp(p->position, t) - half;
            q->hi[t] = comp(p->position, t) + half;
            if (t != q->axis) q->area *= comp(p->size, t);
        }
    }
    pbf__probes_free(w);
    w->probes = set;
    return PBF_OK;
}

int pbf_world_probe_count(const pbf_world *w) { return w->probes ? w->probes->count : 0; }

const pbf_probe_def *pbf_world_get_probes(const pbf_world *w) {
    return w->probes ? w->probes->defs : NULL;
}

void pbf__probes_free(pbf_world *w) {
    if (w->probes != NULL) {
        free(w->probes->carry);
        free(w->probes->carry_pass);
    }
    free(w->probes);
    w->probes = NULL;
}

/* Room for the Chebyshev carry of n particles; 0 when out of memory. */
static int carry_reserve(pbf_probes *set, int n) {
    if (n <= set->carry_capacity) return 1;
    float *c = realloc(set->carry, 3 * (size_t)n * sizeof *c);
    if (c != NULL) set->carry = c;
    int64_t *p = realloc(set->carry_pass, (size_t)n * sizeof *p);
    if (p != NULL) set->carry_pass = p;
    if (c == NULL || p == NULL) return 0;
    for (int i = set->carry_capacity; i < n; ++i) p[i] = -1;
    set->carry_capacity = n;
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * Force: the hooks */

/* The patch's plane now (a domain wall may move). */
static float patch_plane(const pbf_patch *q, const pbf_params *P) {
    if (q->wall < 0) return q->plane;
    const pbf_v3 lo = P->wall_lo, hi = P->wall_hi;
    return (q->wall & 1) ? comp(hi, q->axis) : comp(lo, q->axis);
}

void pbf__probes_reach(const pbf_probes *set, const pbf_params *P, float margin, float *plane,
                       float box_lo[3], float box_hi[3]) {
    for (int t = 0; t < 3; ++t) box_lo[t] = FLT_MAX, box_hi[t] = -FLT_MAX;
    for (int k = 0; k < set->patch_count; ++k) {
        const pbf_patch *q = &set->patches[k];
        plane[k] = patch_plane(q, P);
        for (int t = 0; t < 3; ++t) { /* the box around every patch's reach: one test below */
            float lo = (t == q->axis ? plane[k] - P->h : q->lo[t] - P->radius) - margin;
            float hi = (t == q->axis ? plane[k] + P->h : q->hi[t] + P->radius) + margin;
            box_lo[t] = lo < box_lo[t] ? lo : box_lo[t];
            box_hi[t] = hi > box_hi[t] ? hi : box_hi[t];
        }
    }
}

void pbf__probes_force_pass(pbf_world *w, const pbf_params *P, float omega) {
    pbf_probes *set = w->probes;
    const int n = w->count;
    /* After the pass (cpu_stages.c, pbf__cpu_delta): p holds the new positions, p_prev the ones the
     * pass read, p_tmp the iterate one further back (used by Chebyshev). */
    const float *x_new = w->p, *x_old = w->p_prev, *x_back = w->p_tmp, *lambda = w->lambda;
    const float gamma = w->def.solver.chebyshev_gamma;
    const double scale = (double)P->mass * (double)P->inv_dt * (double)P->inv_dt;
    float plane[PBF_MAX_PROBES];
    int count[PBF_MAX_PROBES];
    double sum[PBF_MAX_PROBES];
    /* With Chebyshev acceleration a pass also moves each particle by (ω − 1) times its last
     * displacement, which holds the solids' earlier pushes: the solids' share of a pass is
     * then W = (x_new − extrapolated fluid target) + (ω − 1) W_previous. W is kept for the
     * particles within h of the patches' reach (they move less than h per substep, so a
     * particle enters the reach with its W known). */
    const int accelerated = w->def.solver.chebyshev && w->def.solver.target_error > 0.0f;
    const float margin = accelerated ? P->h : 0.0f;
    ++set->pass;
    if (accelerated && !carry_reserve(set, n)) set->degraded = 1;
    const int carry = accelerated && !set->degraded;
    float box_lo[3], box_hi[3];
    pbf__probes_reach(set, P, margin, plane, box_lo, box_hi);
    for (int k = 0; k < set->patch_count; ++k) {
        count[k] = 0;
        sum[k] = 0.0;
    }
    const uint8_t *ghost = w->halo_ghost; /* split over processes: their owners count them */
    for (int i = 0; i < n; ++i) {
        if (ghost && ghost[i]) continue;
        pbf_v3 xi = v3_load(x_old, i);
        const float xs[3] = {xi.x, xi.y, xi.z};
        if (!(xs[0] >= box_lo[0] && xs[0] <= box_hi[0] && xs[1] >= box_lo[1] &&
              xs[1] <= box_hi[1] && xs[2] >= box_lo[2] && xs[2] <= box_hi[2]))
            continue;
        int hits[PBF_MAX_PROBES], nhit = 0;
        float weight[PBF_MAX_PROBES];
        for (int k = 0; k < set->patch_count; ++k) {
            const pbf_patch *q = &set->patches[k];
            float d = q->sign * (xs[q->axis] - plane[k]); /* into the fluid */
            if (!(d < P->h && d > -P->h)) continue;
            /* The share of the particle's footprint on the wall, the square of side 2r around
             * its centre, that lies on the patch: a patch edge through a row of particles then
             * takes half of each instead of all or none of them (no aliasing with the
             * lattice), and patches that tile a wall add up to the whole wall. */
            float share = 1.0f;
            for (int t = 0; t < 3; ++t) {
                if (t == q->axis) continue;
                float a = xs[t] - P->radius, b = xs[t] + P->radius;
                float lo = a > q->lo[t] ? a : q->lo[t], hi = b < q->hi[t] ? b : q->hi[t];
                share *= hi > lo ? (hi - lo) / (b - a) : 0.0f;
            }
            if (share > 0.0f) {
                weight[nhit] = share;
                hits[nhit++] = k;
            }
        }
        if (nhit == 0 && !carry) continue;
        /* The pass's fluid–fluid correction of i, exactly as pbf__cpu_delta summed it. */
        float li = lambda[i], wi = pbf_scorr_weight(w->density[i], P);
        pbf_delta_acc a =
            w->def.neighbor_mode == PBF_NEIGHBOR_LIST /* the λ pass's factors still hold */
                ? pbf__delta_list_of(P, x_old, lambda, w->density, xi, li, wi, w->neighbors.index,
                                     w->neighbors.start[i], w->neighbors.start[i + 1],
                                     w->neighbors.pair_g)
                : pbf__delta_cells(P, &w->grid, x_old, lambda, w->density, i, xi, li, wi);
        pbf_v3 fluid = v3_add(xi, v3_scale(a.dp, P->volume));
        if (omega != 1.0f) fluid = pbf_chebyshev(fluid, xi, v3_load(x_back, i), omega, gamma);
        pbf_v3 moved = v3_sub(v3_load(x_new, i), fluid);
        if (carry) {
            /* the carried share; none when the last pass did not track i (a new substep
             * re-sorts the slots; ω = 1 starts every substep, where nothing is carried) */
            if (omega != 1.0f && set->carry_pass[i] == set->pass - 1)
                moved = v3_madd(moved, v3_load(set->carry, i), omega - 1.0f);
            v3_store(set->carry, i, moved);
            set->carry_pass[i] = set->pass;
        }
        const float ms[3] = {moved.x, moved.y, moved.z};
        for (int h = 0; h < nhit; ++h) { /* a particle in a corner faces two patches */
            const pbf_patch *q = &set->patches[hits[h]];
            sum[hits[h]] += (double)(weight[h] * q->sign * ms[q->axis]);
            count[hits[h]]++;
        }
    }
    for (int k = 0; k < set->patch_count; ++k) {
        set->patches[k].sum += scale * sum[k];
        set->patches[k].last_count = count[k];
    }
}

void pbf__probes_add_sums(pbf_world *w, const double *sum, const int *last_count) {
    pbf_probes *set = w->probes;
    for (int k = 0; k < set->patch_count; ++k) {
        set->patches[k].sum += sum[k];
        set->patches[k].last_count = last_count[k];
    }
}

_Static_assert(2 * PBF_MAX_PROBES + 1 <= PBF_HALO_SUM_MAX, "the patches' sums fit one halo_sum");

void pbf__probes_step_end(pbf_world *w) {
    pbf_probes *set = w->probes;
    if (set == NULL) return;
    if (w->halo && set->patch_count > 0) {
        /* split over processes: every process's share of each patch, added in rank order (the
         * same bits on every process), and the degraded flag of any */
        double v[2 * PBF_MAX_PROBES + 1];
        const int n = set->patch_count;
        for (int k = 0; k < n; ++k) {
            v[k] = set->patches[k].sum;
            v[n + k] = set->patches[k].last_count;
        }
        v[2 * n] = set->degraded;
        w->halo_sum(w, v, 2 * n + 1);
        for (int k = 0; k < n; ++k) {
            set->patches[k].sum = v[k];
            set->patches[k].last_count = (int)v[n + k];
        }
        set->degraded = v[2 * n] > 0.0;
    }
    for (int k = 0; k < set->patch_count; ++k) {
        pbf_patch *q = &set->patches[k];
        set->force[q->probe] = set->degraded ? (double)NAN : q->sum / (double)w->def.substeps;
        set->force_count[q->probe] = q->last_count;
        q->sum = 0.0;
    }
    set->degraded = 0;
}

/* ---------------------------------------------------------------------------------------------
 * Height and front: bins 2r wide along an axis */

typedef struct bins {
    int n;
    float origin, width;
    int *count;
    float *lo, *hi;
} bins;

static int bins_init(bins *b, float from, float to, float width) {
    b->origin = from;
    b->width = width;
    double n = ceil(((double)to - (double)from) / (double)width) + 1.0;
    b->n = n < 1.0 ? 1 : n > 1e8 ? 100000000 : (int)n;
    b->count = calloc((size_t)b->n, sizeof *b->count);
    b->lo = malloc((size_t)b->n * sizeof *b->lo);
    b->hi = malloc((size_t)b->n * sizeof *b->hi);
    if (!(b->count && b->lo && b->hi)) return 0;
    for (int k = 0; k < b->n; ++k) b->lo[k] = INFINITY, b->hi[k] = -INFINITY; /* empty */
    return 1;
}

/* Split over processes: the bins of every process's particles (counts summed, the extremes
 * taken; exact, so the same on every process whatever the order). */
static void bins_merge(const pbf_world *w, bins *b) {
    if (w->halo == NULL) return;
    w->halo_reduce(w, b->count, b->n, PBF_HALO_SUM_INT);
    w->halo_reduce(w, b->lo, b->n, PBF_HALO_MIN_FLOAT);
    w->halo_reduce(w, b->hi, b->n, PBF_HALO_MAX_FLOAT);
}

static void bins_free(bins *b) {
    free(b->count);
    free(b->lo);
    free(b->hi);
}

static void bins_add(bins *b, float u) {
    int k = (int)floorf((u - b->origin) / b->width);
    k = k < 0 ? 0 : k >= b->n ? b->n - 1 : k;
    if (b->count[k] == 0 || u < b->lo[k]) b->lo[k] = u;
    if (b->count[k] == 0 || u > b->hi[k]) b->hi[k] = u;
    b->count[k]++;
}

/* The body of fluid on the bins, walked upwards from bin `from`: occupied bins (count >=
 * min_count) belong to it until the first gap between particle surfaces (centre distance − 2r)
 * wider than max_gap. `top` is where the surface before the first bin is (the floor of a height
 * probe), NAN for none. Returns the last body bin (−1: none) and adds the body's particles to
 * *n. */
static int bins_walk(const bins *b, int from, int min_count, float top, float r, float max_gap,
                     int *n) {
    int last = -1;
    for (int k = from; k < b->n; ++k) {
        if (b->count[k] < min_count) continue;
        if (!isnan(top)) {
            float gap = last < 0 ? b->lo[k] - r - top : b->lo[k] - top - 2.0f * r;
            if (gap > max_gap) break;
        }
        last = k;
        top = b->hi[k];
        *n += b->count[k];
    }
    return last;
}

static pbf_status sample_one(const pbf_world *w, const pbf_probe_def *p, pbf_probe_sample *s) {
    const int n = w->count;
    const float *x = w->x;
    const float r = w->def.particle_radius;
    pbf_v3 env_lo, env_hi;
    pbf__walls_envelope(&w->def, &env_lo, &env_hi);
    bins b;
    s->value = 0.0;
    s->pressure = 0.0;
    s->particles = 0;
    if (p->type == PBF_PROBE_HEIGHT) {
        const float base = p->position.y, r2 = p->radius * p->radius;
        if (!pbf__all_ok(w, bins_init(&b, base, env_hi.y, 2.0f * r))) {
            bins_free(&b);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        for (int i = 0; i < n; ++i) {
            float dx = x[3 * i] - p->position.x, dz = x[3 * i + 2] - p->position.z;
            float y = x[3 * i + 1];
            if (dx * dx + dz * dz <= r2 && y >= base) bins_add(&b, y);
        }
        bins_merge(w, &b);
        int last = bins_walk(&b, 0, 1, base, r, p->max_gap, &s->particles);
        s->value = last < 0 ? 0.0 : (double)b.hi[last] + (double)r - (double)base;
        bins_free(&b);
        return PBF_OK;
    }
    if (p->type == PBF_PROBE_FRONT) {
        const int k = (int)p->direction >> 1;
        const float sg = ((int)p->direction & 1) ? -1.0f : 1.0f;
        float a = sg * comp(env_lo, k), c = sg * comp(env_hi, k);
        if (!pbf__all_ok(w, bins_init(&b, a < c ? a : c, a < c ? c : a, 2.0f * r))) {
            bins_free(&b);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        for (int i = 0; i < n; ++i) bins_add(&b, sg * x[3 * i + k]);
        bins_merge(w, &b);
        /* The body is the run of slabs around the fullest one (the first of equals), so splash
         * behind the fluid does not start it; the front is where the run ends ahead. */
        int fullest = 0;
        for (int j = 1; j < b.n; ++j)
            if (b.count[j] > b.count[fullest]) fullest = j;
        int last = -1;
        if (b.count[fullest] >= p->min_particles) {
            int from = fullest; /* walk back to the start of the run, then forwards over it */
            for (int j = fullest - 1; j >= 0; --j) {
                if (b.count[j] < p->min_particles) continue;
                if (b.lo[from] - b.hi[j] - 2.0f * r > p->max_gap) break;
                from = j;
            }
            last = bins_walk(&b, from, p->min_particles, NAN, r, p->max_gap, &s->particles);
        }
        /* + 0.0: a front at the wall x = 0 seen from +x reads 0, not -0 */
        s->value = last < 0 ? (double)NAN : (double)sg * ((double)b.hi[last] + (double)r) + 0.0;
        bins_free(&b);
        return PBF_OK;
    }
    if (p->type == PBF_PROBE_LEVEL) return pbf__probe_level(w, p, s);
    /* force */
    const pbf_probes *set = w->probes;
    int index = (int)(p - set->defs);
    s->value = set->force[index];
    s->particles = set->force_count[index];
    for (int k = 0; k < set->patch_count; ++k)
        if (set->patches[k].probe == index) s->pressure = s->value / set->patches[k].area;
    return PBF_OK;
}

/* Heights and fronts are read from the positions: current on the host first. */
pbf_status pbf_world_sample_probes(const pbf_world *w, pbf_probe_sample *out) {
    pbf__host_pull(w); /* cuda */
    if (w->probes == NULL) return PBF_OK;
    for (int i = 0; i < w->probes->count; ++i) {
        pbf_status st = sample_one(w, &w->probes->defs[i], &out[i]);
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Probes as a module of the step (module.h): force patches measure every Δp pass */

static void probes_after_delta(pbf_world *w, const pbf_params *P, float omega, int threads) {
    (void)threads;
    pbf__probes_after_delta(w, P, omega);
}

const pbf_module pbf__probes_module = {
    .name = "probes",
    .after_delta = probes_after_delta,
    .step_end = pbf__probes_step_end,
    .free = pbf__probes_free,
};
