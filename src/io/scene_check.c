/* Scene checks beyond the loader's ranges (docs/robustness.md): values that are each
 * legal but together cannot give a useful simulation.
 *
 *   error    a substep in which gravity alone moves a resting particle more than the kernel
 *            radius h: g·dt_sub² > h. The neighbour search and the constraint cannot follow; the
 *            result is noise (measured: a dam break at 10 fps, 1 substep, has a density error of
 *            500 %).
 *   warning  the fastest expected particle crosses more than h per substep: v_ref·dt_sub > h,
 *            with v_ref = sqrt(2 g H) (a fall over the domain's height along gravity) + the
 *            fastest block + the fastest wall (2π A / T). The speed limit (solver.cfl) then
 *            slows the fluid down, or, without it, neighbours are lost.
 *   warning  particles that start inside a collider (or closer than r to its surface): the
 *            first step throws them out.
 *   warning  blocks that overlap: their particles start on top of each other, at twice the
 *            rest density.
 * Every message starts with the scene's source and names the JSON path to change. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pbf/scene.h"
#include "kernels.h" /* pbf_solid_sdf: a collider's distance */
#include "world_state.h"

/* Lattice points visited per overlap count at most; bigger overlaps are sampled. */
#define OVERLAP_SAMPLES 1000000.0

typedef struct report {
    const pbf_scene *scene;
    char *out;
    size_t size;
    int count;
} report;

static void warn(report *r, const char *fmt, ...) {
    ++r->count;
    if (r->out == NULL || r->size == 0) return;
    size_t used = strnlen(r->out, r->size);
    if (used + 1 >= r->size) return;
    int n =
        snprintf(r->out + used, r->size - used, "%s%s: ", used > 0 ? "\n" : "", r->scene->source);
    if (n < 0 || (size_t)n >= r->size - used) return;
    used += (size_t)n;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->out + used, r->size - used, fmt, ap);
    va_end(ap);
}

/* A count for a message: doubles beyond int's range (absurd inputs) are cut, never converted
 * with undefined behaviour. */
static int to_int(double v) { return v >= 2147483647.0 ? 2147483647 : v <= 1.0 ? 1 : (int)v; }

static float axis(pbf_vec3 v, int k) { return k == 0 ? v.x : k == 1 ? v.y : v.z; }

static double length3(pbf_vec3 v) {
    return sqrt((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z);
}

/* ---- time step ------------------------------------------------------------------------------ */

static const char *const WALL_KEYS[PBF_WALL_COUNT] = {"x_min", "x_max", "y_min",
                                                      "y_max", "z_min", "z_max"};

static pbf_status check_time_step(report *r, char *err, size_t err_size) {
    const pbf_scene *s = r->scene;
    const pbf_world_def *w = &s->world;
    const double fps = s->fps, h = (double)w->kernel_scale * w->particle_radius;
    const double dt = 1.0 / (fps * w->substeps);
    const double g = length3(w->gravity);

    /* gravity alone, from rest: x += (g dt) dt per substep */
    const double fall = g * dt * dt;
    if (fall > h) {
        int need = to_int(ceil(sqrt(g / h) / fps));
        pbf__format(err, err_size,
                    "%s: 'time.substeps' = %d at 'time.fps' = %g gives substeps of %.3g s, in "
                    "which gravity alone moves a particle %.3g m, more than the kernel radius h "
                    "= %.3g m: the solver cannot follow. Use time.substeps >= %d (or a higher "
                    "time.fps)",
                    s->source, w->substeps, fps, dt, fall, h, need);
        return PBF_ERR_INVALID_ARG;
    }

    /* the fastest speed to expect, and what it comes from */
    double height = 0.0;
    if (g > 0.0)
        for (int k = 0; k < 3; ++k)
            height += fabs((double)axis(w->gravity, k)) *
                      ((double)axis(w->domain_max, k) - axis(w->domain_min, k)) / g;
    const double v_fall = sqrt(2.0 * g * height);
    double v_block = 0.0, v_wall = 0.0;
    int block = -1, wall = -1;
    for (int i = 0; i < s->block_count; ++i) {
        double v = length3(s->blocks[i].velocity);
        if (v > v_block) v_block = v, block = i;
    }
    for (int k = 0; k < PBF_WALL_COUNT; ++k) {
        const pbf_wall_motion *m = &w->wall_motion[k];
        double v = 2.0 * 3.14159265358979323846 * m->amplitude / m->period;
        if (v > v_wall) v_wall = v, wall = k;
    }
    const double v_ref = v_fall + v_block + v_wall;
    const double travel = v_ref * dt / h;
    if (!(travel > 1.0)) return PBF_OK;

    char cause[160];
    if (v_block >= v_fall && v_block >= v_wall)
        snprintf(cause, sizeof cause, "mostly 'fluid.blocks[%d].velocity', %.3g m/s", block,
                 v_block);
    else if (v_wall >= v_fall)
        snprintf(cause, sizeof cause,
                 "mostly 'domain.walls.%s' (amplitude and period), %.3g m/s at its fastest",
                 WALL_KEYS[wall], v_wall);
    else
        snprintf(cause, sizeof cause, "mostly a fall of %.3g m under 'gravity', %.3g m/s", height,
                 v_fall);
    int need = to_int(ceil(v_ref / (h * fps)));
    warn(r,
         "'time.substeps' = %d at 'time.fps' = %g is too coarse: the fastest expected particle "
         "(%.3g m/s, %s) crosses %.2g kernel radii per substep, more than 1, so %s. Use "
         "time.substeps >= %d",
         w->substeps, fps, v_ref, cause, travel,
         w->solver.cfl > 0.0f ? "the speed limit (solver.cfl) slows the fluid down"
                              : "neighbours are lost and the solver may blow up",
         need);
    return PBF_OK;
}

/* ---- overlaps ------------------------------------------------------------------------------- */

/* Lattice of a block as pbf_world_add_block fills it (jitter aside): min + r + 2r i. */
typedef struct lattice {
    double start[3], step;
    long long n[3];
} lattice;

static lattice block_lattice(const pbf_block_def *b, float r) {
    lattice L;
    const float s = 2.0f * r;
    L.step = s;
    for (int k = 0; k < 3; ++k) {
        float lo = axis(b->min, k), hi = axis(b->max, k);
        double n = floor((double)(hi - lo) / (double)s + 1e-4);
        L.n[k] = n > 0.0 ? (long long)n : 0;
        L.start[k] = (double)lo + r;
    }
    return L;
}

/* Index range [i0, i1) of the lattice points along k inside [lo, hi]. */
static void index_range(const lattice *L, int k, double lo, double hi, long long *i0,
                        long long *i1) {
    const double n = (double)L->n[k];
    double a = ceil((lo - L->start[k]) / L->step), b = floor((hi - L->start[k]) / L->step) + 1.0;
    a = a > 0.0 ? (a < n ? a : n) : 0.0; /* also maps NaN to 0 */
    b = b > 0.0 ? (b < n ? b : n) : 0.0;
    *i0 = (long long)a;
    *i1 = b > a ? (long long)b : (long long)a;
}

typedef int (*inside_fn)(pbf_v3 x, const void *what, float r);

static int inside_solid(pbf_v3 x, const void *what, float r) {
    pbf_v3 n;
    return pbf_solid_sdf((const pbf_solid *)what, x, &n) < r;
}

static int inside_box(pbf_v3 x, const void *what, float r) {
    (void)r;
    const pbf_block_def *b = what;
    return x.x >= b->min.x && x.x <= b->max.x && x.y >= b->min.y && x.y <= b->max.y &&
           x.z >= b->min.z && x.z <= b->max.z;
}

/* About how many lattice points of L inside [lo, hi] satisfy inside(); sampled with a stride
 * when there are more than OVERLAP_SAMPLES candidates. */
static double count_inside(const lattice *L, const double lo[3], const double hi[3],
                           inside_fn inside, const void *what, float r) {
    long long i0[3], i1[3];
    double candidates = 1.0, visited = 1.0;
    for (int k = 0; k < 3; ++k) {
        index_range(L, k, lo[k], hi[k], &i0[k], &i1[k]);
        candidates *= (double)(i1[k] - i0[k]);
    }
    if (candidates <= 0.0) return 0.0;
    long long stride = 1;
    for (;;) {
        visited = 1.0;
        for (int k = 0; k < 3; ++k) visited *= (double)((i1[k] - i0[k] + stride - 1) / stride);
        if (visited <= OVERLAP_SAMPLES) break;
        stride *= 2;
    }
    double found = 0.0;
    for (long long c = i0[2]; c < i1[2]; c += stride)
        for (long long b = i0[1]; b < i1[1]; b += stride)
            for (long long a = i0[0]; a < i1[0]; a += stride) {
                pbf_v3 x = v3((float)(L->start[0] + L->step * (double)a),
                              (float)(L->start[1] + L->step * (double)b),
                              (float)(L->start[2] + L->step * (double)c));
                found += inside(x, what, r);
            }
    return found * (candidates / visited);
}

static void collider_bounds(const pbf_collider_def *c, float pad, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; ++k) {
        double a, b;
        if (c->type == PBF_COLLIDER_BOX) {
            a = (double)axis(c->center, k) - axis(c->half_extents, k);
            b = (double)axis(c->center, k) + axis(c->half_extents, k);
        } else if (c->type == PBF_COLLIDER_CAPSULE) {
            a = fmin(axis(c->a, k), axis(c->b, k)) - c->radius;
            b = fmax(axis(c->a, k), axis(c->b, k)) + c->radius;
        } else {
            a = (double)axis(c->center, k) - c->radius;
            b = (double)axis(c->center, k) + c->radius;
        }
        lo[k] = a - pad;
        hi[k] = b + pad;
    }
}

static const char *const COLLIDER_TYPES[] = {"sphere", "box", "capsule"};

static void check_overlaps(report *r) {
    const pbf_scene *s = r->scene;
    const float rad = s->world.particle_radius;
    for (int c = 0; c < s->collider_count; ++c) {
        const pbf_collider_def *col = &s->colliders[c];
        if ((int)col->type < 0 || (int)col->type > 2) continue;
        pbf_solid solid = pbf__solid_from_def(col);
        double lo[3], hi[3];
        collider_bounds(col, rad, lo, hi);
        for (int b = 0; b < s->block_count; ++b) {
            lattice L = block_lattice(&s->blocks[b], rad);
            double n = count_inside(&L, lo, hi, inside_solid, &solid, rad);
            if (n > 0.0)
                warn(r,
                     "%s%.0f particles of 'fluid.blocks[%d]' start inside 'colliders[%d]' (a %s) "
                     "or closer than particle_radius to it; the first step throws them out. "
                     "Move or shrink the block or the collider",
                     n >= 1000.0 ? "about " : "", n, b, c, COLLIDER_TYPES[col->type]);
        }
    }
    if (s->has_tool) { /* the tool where it starts: the same check as a sphere */
        pbf_collider_def col = pbf_default_collider_def();
        col.type = PBF_COLLIDER_SPHERE;
        col.center = s->tool.position;
        col.radius = s->tool.radius;
        pbf_solid solid = pbf__solid_from_def(&col);
        double lo[3], hi[3];
        collider_bounds(&col, rad, lo, hi);
        for (int b = 0; b < s->block_count; ++b) {
            lattice L = block_lattice(&s->blocks[b], rad);
            double n = count_inside(&L, lo, hi, inside_solid, &solid, rad);
            if (n > 0.0)
                warn(r,
                     "%s%.0f particles of 'fluid.blocks[%d]' start inside 'tool' or closer than "
                     "particle_radius to it; the first step throws them out (and pushes the "
                     "tool hard). Start the tool above the fluid",
                     n >= 1000.0 ? "about " : "", n, b);
        }
    }
    for (int a = 0; a < s->block_count; ++a)
        for (int b = a + 1; b < s->block_count; ++b) {
            const pbf_block_def *A = &s->blocks[a], *B = &s->blocks[b];
            lattice L = block_lattice(B, rad);
            double lo[3], hi[3];
            for (int k = 0; k < 3; ++k) {
                lo[k] = axis(A->min, k);
                hi[k] = axis(A->max, k);
            }
            double n = count_inside(&L, lo, hi, inside_box, A, rad);
            if (n > 0.0)
                warn(r,
                     "'fluid.blocks[%d]' overlaps 'fluid.blocks[%d]': %s%.0f of its particles "
                     "start inside the other block, at about twice the rest density; the first "
                     "steps push them apart violently",
                     b, a, n >= 1000.0 ? "about " : "", n);
        }
}

pbf_status pbf_scene_check(const pbf_scene *scene, char *warnings, size_t warnings_size,
                           int *warning_count, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (warnings != NULL && warnings_size > 0) warnings[0] = '\0';
    if (warning_count != NULL) *warning_count = 0;
    if (scene == NULL) {
        pbf__format(err, err_size, "pbf_scene_check: scene must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    report r = {scene, warnings, warnings_size, 0};
    pbf_status st = check_time_step(&r, err, err_size);
    if (st == PBF_OK) check_overlaps(&r);
    if (warning_count != NULL) *warning_count = r.count;
    return st;
}
