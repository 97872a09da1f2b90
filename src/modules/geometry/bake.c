/* The bake of a mesh solid's field (bake.h). */
#include "bake.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bvh.h"
#include "trimesh.h"

#define MAX_NODES 2147483647.0

static void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* The margin around the mesh: every point within h of the surface, plus two cells for the
 * interpolation stencil, lies inside the grid. */
static double margin(const pbf_bake_def *d) { return (double)d->kernel_radius + 2.0 * d->cell; }

double pbf__bake_layout(const double lo[3], const double hi[3], const pbf_bake_def *d,
                        pbf_field *f) {
    memset(f, 0, sizeof *f);
    const double pad = margin(d), cell = d->cell;
    double n[3];
    for (int k = 0; k < 3; ++k) n[k] = ceil((hi[k] - lo[k] + 2.0 * pad) / cell) + 1.0;
    double nodes = n[0] * n[1] * n[2];
    if (!(nodes <= MAX_NODES) || !(n[0] >= 2.0 && n[1] >= 2.0 && n[2] >= 2.0)) return -1.0;
    f->nx = (int)n[0];
    f->ny = (int)n[1];
    f->nz = (int)n[2];
    for (int k = 0; k < 3; ++k) f->block_n[k] = (int)n[k]; /* all of it (block_lo 0) */
    /* centred on the mesh: the grid's extra fraction of a cell goes half to each side */
    f->origin = v3((float)(0.5 * (lo[0] + hi[0]) - 0.5 * (n[0] - 1.0) * cell),
                   (float)(0.5 * (lo[1] + hi[1]) - 0.5 * (n[1] - 1.0) * cell),
                   (float)(0.5 * (lo[2] + hi[2]) - 0.5 * (n[2] - 1.0) * cell));
    f->cell = d->cell;
    f->inv_cell = 1.0f / d->cell;
    f->outside = d->container ? -1.0f : 1.0f;
    return nodes * PBF_FIELD_STRIDE * sizeof(float);
}

/* The weight grid of step 3: nodes at every `per`-th point of it, its spacing at most r/2 (the
 * quadrature's), and reaching h beyond the node grid. */
static int fine_per(const pbf_bake_def *d) {
    int per = (int)ceil(2.0 * (double)d->cell / (double)d->particle_radius - 1e-6);
    return per > 1 ? per : 1;
}

static void fine_layout(const pbf_field *f, const pbf_bake_def *d, int *margin_pts, int fn[3]) {
    const int per = fine_per(d);
    double delta = (double)d->cell / per;
    *margin_pts = (int)ceil(d->kernel_radius / delta) + 1;
    const int n[3] = {f->nx, f->ny, f->nz};
    for (int k = 0; k < 3; ++k) fn[k] = per * (n[k] - 1) + 1 + 2 * *margin_pts;
}

double pbf__bake_working_bytes(const pbf_field *f, const pbf_bake_def *d, int triangles) {
    int m, fn[3];
    fine_layout(f, d, &m, fn);
    double nodes = (double)f->nx * f->ny * f->nz;
    return nodes * (PBF_FIELD_STRIDE * 4.0 + 13.0) + (double)fn[0] * fn[1] * fn[2] * 4.0 +
           (double)triangles * (2.0 * sizeof(pbf_bvh_node) + 4.0 + 24.0);
}

void pbf__baked_field_free(pbf_baked_field *f) {
    if (f == NULL) return;
    free(f->data);
    memset(f, 0, sizeof *f);
}

uint64_t pbf__bake_key(const pbf_trimesh *m, const pbf_bake_def *d) {
    uint64_t h = pbf__trimesh_hash(m, PBF_HASH_SEED);
    const int32_t version = PBF_BAKE_VERSION, container = d->container != 0;
    const float params[5] = {d->cell, d->particle_radius, d->kernel_radius, d->poly6_k, d->spiky_k};
    h = pbf__hash_bytes(h, &version, sizeof version);
    h = pbf__hash_bytes(h, &container, sizeof container);
    return pbf__hash_bytes(h, params, sizeof params);
}

/* The kernel constants the ghost functions of kernels.h read. */
static pbf_params ghost_params(const pbf_bake_def *d) {
    pbf_params p;
    memset(&p, 0, sizeof p);
    p.h = d->kernel_radius;
    p.h2 = d->kernel_radius * d->kernel_radius;
    p.poly6_k = d->poly6_k;
    p.spiky_k = d->spiky_k;
    p.kernel = d->kernel;
    p.radius = d->particle_radius;
    return p;
}

static size_t node_index(const pbf_field *f, int i, int j, int k) {
    return ((size_t)k * (size_t)f->ny + (size_t)j) * (size_t)f->nx + (size_t)i;
}

/* ---- step 1: the signed distance, and where the solid is a wedge ----------------------------
 *
 * The walls' ghosts are layers behind each face (the sheets of step 3). Where two walls meet
 * and the solid wraps around the fluid (the inside edges and corners of a glass or a tank), the
 * analytic walls count each wall's layers as if it went on, and take the doubly counted lines
 * back out (kernels.h): that amounts to a uniform rest density in the wedge behind the edge,
 * not to layers. Sheets along the rounded level sets there would put ghosts closer to the fluid
 * and read 2.4 % more at a particle resting r from both walls, 4.9 % more in a corner. So each
 * solid node also gets a wedge weight: 1 where its nearest surface point is on a sharp edge or
 * corner (faces meeting at 45° or more), 0 on a face (or a gently curved tessellation, whose
 * layers the tool's curved shells show to be right), in between from 15° to 45°. */

/* The triangles around each vertex (CSR), for the faces that meet at an edge or a corner. */
typedef struct adjacency {
    int32_t *start, *tri;
} adjacency;

static int adjacency_build(const pbf_trimesh *m, adjacency *a) {
    const int nv = m->vertex_count, nt = m->triangle_count;
    a->start = calloc((size_t)nv + 1, sizeof *a->start);
    a->tri = malloc(3 * (size_t)(nt > 0 ? nt : 1) * sizeof *a->tri);
    if (a->start == NULL || a->tri == NULL) return -1;
    for (size_t k = 0; k < 3 * (size_t)nt; ++k) a->start[m->triangles[k] + 1]++;
    for (int v = 0; v < nv; ++v) a->start[v + 1] += a->start[v];
    int32_t *fill = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *fill);
    if (fill == NULL) return -1;
    memcpy(fill, a->start, (size_t)nv * sizeof *fill);
    for (int t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) a->tri[fill[m->triangles[3 * t + k]]++] = t;
    free(fill);
    return 0;
}

static void adjacency_free(adjacency *a) {
    free(a->start);
    free(a->tri);
}

static int has_vertex(const pbf_trimesh *m, int t, int v) {
    const int32_t *c = m->triangles + 3 * (size_t)t;
    return c[0] == v || c[1] == v || c[2] == v;
}

#define WEDGE_FROM 0.9659258262890683 /* cos 15°: below this angle between normals, layers */
#define WEDGE_FULL 0.7071067811865476 /* cos 45°: from this angle on, a uniform wedge */

/* The wedge weight of a solid point whose nearest point c lies on triangle t. */
static float wedge_weight(const pbf_bvh *bvh, const adjacency *adj, const double c[3], int t) {
    const pbf_trimesh *m = bvh->mesh;
    const int32_t *v = m->triangles + 3 * (size_t)t;
    double p[3][3];
    for (int k = 0; k < 3; ++k)
        for (int a = 0; a < 3; ++a) p[k][a] = m->vertices[3 * (size_t)v[k] + a];
    /* barycentric coordinates of c: which feature it lies on */
    double e0[3], e1[3], e2[3];
    for (int a = 0; a < 3; ++a) {
        e0[a] = p[1][a] - p[0][a];
        e1[a] = p[2][a] - p[0][a];
        e2[a] = c[a] - p[0][a];
    }
    double d00 = e0[0] * e0[0] + e0[1] * e0[1] + e0[2] * e0[2];
    double d01 = e0[0] * e1[0] + e0[1] * e1[1] + e0[2] * e1[2];
    double d11 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double d20 = e2[0] * e0[0] + e2[1] * e0[1] + e2[2] * e0[2];
    double d21 = e2[0] * e1[0] + e2[1] * e1[1] + e2[2] * e1[2];
    double den = d00 * d11 - d01 * d01;
    if (!(den > 0.0)) return 0.0f;
    double b1 = (d11 * d20 - d01 * d21) / den, b2 = (d00 * d21 - d01 * d20) / den;
    const double bary[3] = {1.0 - b1 - b2, b1, b2};
    int on[3], n_on = 0;
    for (int k = 0; k < 3; ++k)
        if (bary[k] >= 1e-7) on[n_on++] = v[k];
    if (n_on == 3 || n_on == 0) return 0.0f; /* a face's interior */
    /* the faces at that edge (both its vertices) or corner: the widest angle between them */
    double own[3], lowest = 1.0;
    pbf__bvh_triangle_normal(bvh, t, own);
    const int pivot = on[0];
    for (int32_t i = adj->start[pivot]; i < adj->start[pivot + 1]; ++i) {
        int u = adj->tri[i];
        if (n_on == 2 && !has_vertex(m, u, on[1])) continue;
        double n[3];
        pbf__bvh_triangle_normal(bvh, u, n);
        for (int32_t j = adj->start[pivot]; j < adj->start[pivot + 1]; ++j) {
            int u2 = adj->tri[j];
            if (n_on == 2 && !has_vertex(m, u2, on[1])) continue;
            double n2[3];
            pbf__bvh_triangle_normal(bvh, u2, n2);
            double cosine = n[0] * n2[0] + n[1] * n2[1] + n[2] * n2[2];
            if (cosine < lowest) lowest = cosine;
        }
    }
    (void)own;
    if (lowest >= WEDGE_FROM) return 0.0f;
    if (lowest <= WEDGE_FULL) return 1.0f;
    return (float)((WEDGE_FROM - lowest) / (WEDGE_FROM - WEDGE_FULL));
}

/* The solid nodes whose wedge weight the maps read: those within h + 3 cells. */
static double exact_band(const pbf_bake_def *d) { return (double)d->kernel_radius + 3.0 * d->cell; }

/* Distances as in Batty's SDFGen: exact near the surface, then the nearest triangle handed from
 * node to node. A closest-point query from deep inside a round body visits every triangle (they
 * are all about as far), so only nodes within 1.5 cells of a triangle are searched; two raster
 * sweeps over the 13 neighbours already visited (forward, then backward) give every other node
 * its neighbours' nearest triangles to try, and it keeps the nearest: exact wherever the
 * nearest triangle of a node is the nearest of a neighbour's, which is almost everywhere.
 * Serial sweeps: the same result every time. */
static void propagate(const pbf_bvh *bvh, const pbf_field *f, float *dist, int32_t *tri) {
    const int nx = f->nx, ny = f->ny, nz = f->nz;
    for (int pass = 0; pass < 2; ++pass) {
        const int s = pass == 0 ? 1 : -1;
        for (int kk = 0; kk < nz; ++kk)
            for (int jj = 0; jj < ny; ++jj)
                for (int ii = 0; ii < nx; ++ii) {
                    int i = s > 0 ? ii : nx - 1 - ii, j = s > 0 ? jj : ny - 1 - jj,
                        k = s > 0 ? kk : nz - 1 - kk;
                    size_t idx = node_index(f, i, j, k);
                    double q[3] = {(double)f->origin.x + (double)f->cell * i,
                                   (double)f->origin.y + (double)f->cell * j,
                                   (double)f->origin.z + (double)f->cell * k};
                    for (int dk = -1; dk <= 0; ++dk)
                        for (int dj = -1; dj <= 1; ++dj)
                            for (int di = -1; di <= 1; ++di) {
                                if (dk == 0 && (dj > 0 || (dj == 0 && di >= 0))) continue;
                                int a = i + s * di, b = j + s * dj, e = k + s * dk;
                                if (a < 0 || b < 0 || e < 0 || a >= nx || b >= ny || e >= nz)
                                    continue;
                                int32_t t = tri[node_index(f, a, b, e)];
                                if (t < 0 || t == tri[idx]) continue;
                                double c[3];
                                float dd = (float)sqrt(pbf__bvh_triangle_distance2(bvh, t, q, c));
                                if (dd < dist[idx] || (dd == dist[idx] && t < tri[idx])) {
                                    dist[idx] = dd;
                                    tri[idx] = t;
                                }
                            }
                }
    }
}

static void signed_distance(const pbf_bvh *bvh, const adjacency *adj, const pbf_field *f,
                            const pbf_bake_def *d, float *data, float *wedge, int32_t *tri,
                            int nt) {
    const long long nodes = (long long)f->nx * f->ny * f->nz;
    const double seed = 1.5 * d->cell;
    float *dist = malloc((size_t)nodes * sizeof *dist);
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
    for (long long idx = 0; idx < nodes; ++idx) {
        int i = (int)(idx % f->nx), j = (int)((idx / f->nx) % f->ny),
            k = (int)(idx / ((long long)f->nx * f->ny));
        double q[3] = {(double)f->origin.x + (double)f->cell * i,
                       (double)f->origin.y + (double)f->cell * j,
                       (double)f->origin.z + (double)f->cell * k};
        double c[3];
        int t;
        double d2 = pbf__bvh_closest(bvh, q, seed * seed, c, &t);
        tri[idx] = t;
        data[(size_t)idx * PBF_FIELD_STRIDE] = t >= 0 ? (float)sqrt(d2) : INFINITY;
    }
    if (dist != NULL) { /* else (out of memory) the caller's check fails on the infinities */
        for (long long idx = 0; idx < nodes; ++idx)
            dist[idx] = data[(size_t)idx * PBF_FIELD_STRIDE];
        propagate(bvh, f, dist, tri);
        for (long long idx = 0; idx < nodes; ++idx)
            data[(size_t)idx * PBF_FIELD_STRIDE] = dist[idx];
        free(dist);
    }
    /* the sign, negative in the solid (inside the mesh for an obstacle, outside a container),
     * and the wedge weight of solid nodes near the surface */
    const double sign_out = d->container ? -1.0 : 1.0, near = exact_band(d);
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
    for (long long idx = 0; idx < nodes; ++idx) {
        int i = (int)(idx % f->nx), j = (int)((idx / f->nx) % f->ny),
            k = (int)(idx / ((long long)f->nx * f->ny));
        double q[3] = {(double)f->origin.x + (double)f->cell * i,
                       (double)f->origin.y + (double)f->cell * j,
                       (double)f->origin.z + (double)f->cell * k};
        double w = pbf__bvh_winding(bvh, q);
        float *v = &data[(size_t)idx * PBF_FIELD_STRIDE];
        double phi = sign_out * (w > 0.5 ? -(double)*v : (double)*v);
        *v = (float)phi;
        wedge[idx] = 0.0f;
        if (phi < 0.0 && phi > -near && tri[idx] >= 0) {
            double c[3];
            (void)pbf__bvh_triangle_distance2(bvh, tri[idx], q, c);
            wedge[idx] = wedge_weight(bvh, adj, c, tri[idx]);
        }
    }
}

/* ---- step 2: thin parts ----------------------------------------------------------------------- */

static void thin_parts(const pbf_bvh *bvh, const pbf_field *f, float *data, unsigned char *mark,
                       int nt) {
    const long long nodes = (long long)f->nx * f->ny * f->nz;
    const double cell = f->cell;
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
    for (long long idx = 0; idx < nodes; ++idx) {
        int c[3] = {(int)(idx % f->nx), (int)((idx / f->nx) % f->ny),
                    (int)(idx / ((long long)f->nx * f->ny))};
        const int n[3] = {f->nx, f->ny, f->nz};
        float a = data[(size_t)idx * PBF_FIELD_STRIDE];
        mark[idx] = 0;
        if (!(a > 0.0f) || a >= cell) continue;
        for (int axis = 0; axis < 3 && !mark[idx]; ++axis)
            for (int side = -1; side <= 1; side += 2) {
                int o[3] = {c[0], c[1], c[2]};
                o[axis] += side;
                if (o[axis] < 0 || o[axis] >= n[axis]) continue;
                size_t other = node_index(f, o[0], o[1], o[2]);
                float b = data[other * PBF_FIELD_STRIDE];
                /* both in the fluid, closer together than the spacing allows for one surface */
                if (!(b > 0.0f) || (double)a + b >= cell) continue;
                /* the nearer node of the pair is marked (ties: the lower index) */
                if (b < a || (b == a && other < (size_t)idx)) continue;
                double p[3], q[3];
                for (int k = 0; k < 3; ++k) {
                    p[k] = (double)(k == 0   ? f->origin.x
                                    : k == 1 ? f->origin.y
                                             : f->origin.z) +
                           cell * c[k];
                    q[k] = (double)(k == 0   ? f->origin.x
                                    : k == 1 ? f->origin.y
                                             : f->origin.z) +
                           cell * o[k];
                }
                if (pbf__bvh_segment_hits(bvh, p, q) >= 2) {
                    mark[idx] = 1;
                    break;
                }
            }
    }
    for (long long idx = 0; idx < nodes; ++idx)
        if (mark[idx]) data[(size_t)idx * PBF_FIELD_STRIDE] = -data[(size_t)idx * PBF_FIELD_STRIDE];
}

/* ---- step 3: the boundary's density ---------------------------------------------------------- */

/* A stencil entry: the offset in the weight grid and the kernel and its gradient there, ×δ³. */
/* The kernel and its gradient (×δ³) at every weight-grid offset within h, as rows along x: each
 * row a contiguous run of the weight grid, so that the sum over it is a vector loop. */
typedef struct stencil_row {
    long long offset; /* of the row's first point, relative to the node */
    int len;
    int first; /* into the stencil's arrays */
} stencil_row;

typedef struct stencil {
    stencil_row *rows;
    int row_count;
    float *w, *gx, *gy, *gz;
} stencil;

static void stencil_free(stencil *st) {
    free(st->rows);
    free(st->w);
    free(st->gx);
    free(st->gy);
    free(st->gz);
}

static int stencil_build(stencil *st, const pbf_bake_def *d, double delta, const int fn[3]) {
    const double h = d->kernel_radius;
    const int R = (int)ceil(h / delta);
    const size_t cap = (size_t)(2 * R + 1) * (size_t)(2 * R + 1) * (size_t)(2 * R + 1);
    memset(st, 0, sizeof *st);
    st->rows = malloc((size_t)(2 * R + 1) * (size_t)(2 * R + 1) * sizeof *st->rows);
    st->w = malloc(cap * sizeof(float));
    st->gx = malloc(cap * sizeof(float));
    st->gy = malloc(cap * sizeof(float));
    st->gz = malloc(cap * sizeof(float));
    if (st->rows == NULL || st->w == NULL || st->gx == NULL || st->gy == NULL || st->gz == NULL)
        return -1;
    const double dv = delta * delta * delta;
    int count = 0;
    for (int c = -R; c <= R; ++c)
        for (int b = -R; b <= R; ++b) {
            double rest = h * h - delta * delta * (double)(b * b + c * c);
            if (rest <= 0.0) continue;
            int A = (int)floor(sqrt(rest) / delta);
            while (A >= 0 && delta * delta * (double)(A * A + b * b + c * c) >= h * h) --A;
            if (A < 0) continue;
            stencil_row *row = &st->rows[st->row_count++];
            row->offset = ((long long)c * fn[1] + b) * fn[0] - A;
            row->len = 2 * A + 1;
            row->first = count;
            for (int a = -A; a <= A; ++a, ++count) {
                double dist = delta * sqrt((double)(a * a + b * b + c * c));
                double t = h * h - dist * dist, q = dist / h, e = 1.0 - q;
                /* W and ∇_x W(x − y) = g (x − y), x − y = −(a, b, c) δ, of the world's pair
                 * (kernels.h): poly6 and the spiky gradient, or Wendland C2 */
                double g;
                if (d->kernel) {
                    st->w[count] =
                        (float)(dv * (double)d->poly6_k * e * e * e * e * (1.0 + 4.0 * q));
                    g = dv * (double)d->spiky_k * e * e * e;
                } else {
                    st->w[count] = (float)(dv * (double)d->poly6_k * t * t * t);
                    g = dist > 0.0 ? dv * (double)d->spiky_k * (h - dist) * (h - dist) / dist : 0.0;
                }
                st->gx[count] = (float)(-g * a * delta);
                st->gy[count] = (float)(-g * b * delta);
                st->gz[count] = (float)(-g * c * delta);
            }
        }
    return 0;
}

/* Returns 0, or -1 when out of memory. */
/* Trilinear interpolation of a scalar node array at y (at the nearest point of the grid beyond
 * it). */
static float sample_nodes(const pbf_field *f, const float *values, pbf_v3 y) {
    const float rel[3] = {y.x - f->origin.x, y.y - f->origin.y, y.z - f->origin.z};
    const int n[3] = {f->nx, f->ny, f->nz};
    float t[3];
    int i[3];
    for (int k = 0; k < 3; ++k) {
        float g = rel[k] * f->inv_cell;
        float c = g < 0.0f ? 0.0f : (g > (float)(n[k] - 1) ? (float)(n[k] - 1) : g);
        int ik = (int)c;
        ik = ik < n[k] - 2 ? ik : n[k] - 2;
        i[k] = ik;
        t[k] = c - (float)ik;
    }
    float v = 0.0f;
    for (int c = 0; c < 8; ++c) {
        int a = c & 1, b = (c >> 1) & 1, e = (c >> 2) & 1;
        float w = (a ? t[0] : 1.0f - t[0]) * (b ? t[1] : 1.0f - t[1]) * (e ? t[2] : 1.0f - t[2]);
        v += w * values[node_index(f, i[0] + a, i[1] + b, i[2] + e)];
    }
    return v;
}

static int boundary_maps(const pbf_field *f, const pbf_bake_def *d, float *data, const float *wedge,
                         float *weight, int nt) {
    const pbf_params P = ghost_params(d);
    const int per = fine_per(d);
    const double delta = (double)d->cell / per, h = d->kernel_radius, r = d->particle_radius;
    int m, fn[3];
    fine_layout(f, d, &m, fn);
    const long long fine = (long long)fn[0] * fn[1] * fn[2];
    const double inv_s2 = 1.0 / (4.0 * r * r);
    /* the sheets' weight: a hat of half-width δ (integral 1) around each φ = −(2k+1) r */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long long idx = 0; idx < fine; ++idx) {
        int I = (int)(idx % fn[0]) - m, J = (int)((idx / fn[0]) % fn[1]) - m,
            K = (int)(idx / ((long long)fn[0] * fn[1])) - m;
        pbf_v3 y = v3(f->origin.x + (float)(I * delta), f->origin.y + (float)(J * delta),
                      f->origin.z + (float)(K * delta));
        float phi = pbf_field_lookup(f, y).phi;
        double w = 0.0;
        if (phi < (float)(2.0 * delta)) {
            /* layers: Keys' cubic (a = −½, integral 1, exact for cubic profiles on the grid)
             * of half-width 2δ around each φ = −(2k+1) r */
            double kc = (-(double)phi / r - 1.0) / 2.0;
            for (long long k = (long long)floor(kc) - 1; k <= (long long)ceil(kc) + 1; ++k) {
                if (k < 0) continue;
                double u = fabs((double)phi + (2.0 * (double)k + 1.0) * r) / delta;
                if (u < 1.0)
                    w += (1.5 * u * u * u - 2.5 * u * u + 1.0) / delta;
                else if (u < 2.0)
                    w += (-0.5 * u * u * u + 2.5 * u * u - 4.0 * u + 2.0) / delta;
            }
            /* a wedge: the rest density 1/(2r)³, its edge spread over ±δ/2 */
            double a = sample_nodes(f, wedge, y);
            double inside = 0.5 - (double)phi / delta;
            inside = inside < 0.0 ? 0.0 : (inside > 1.0 ? 1.0 : inside);
            w = (1.0 - a) * w + a * inside / (2.0 * r);
        }
        weight[idx] = (float)(w * inv_s2);
    }
    stencil st;
    if (stencil_build(&st, d, delta, fn) != 0) {
        stencil_free(&st);
        return -1;
    }
    const long long nodes = (long long)f->nx * f->ny * f->nz;
    /* every node a lookup at φ > −r reaches (the trilinear stencil, √3 cells across) */
    const float band = (float)(h + 2.0 * d->cell), inner = (float)(r + 2.0 * d->cell);
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (long long idx = 0; idx < nodes; ++idx) {
        float *rec = data + (size_t)idx * PBF_FIELD_STRIDE;
        rec[1] = rec[2] = rec[3] = rec[4] = 0.0f;
        float phi = rec[0];
        if (!(phi < band && phi > -inner)) continue;
        int i = (int)(idx % f->nx), j = (int)((idx / f->nx) % f->ny),
            k = (int)(idx / ((long long)f->nx * f->ny));
        long long base = ((long long)(per * k + m) * fn[1] + (per * j + m)) * fn[0] + (per * i + m);
        double w = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
        for (int q = 0; q < st.row_count; ++q) {
            const float *om = weight + base + st.rows[q].offset;
            const float *sw = st.w + st.rows[q].first, *sx = st.gx + st.rows[q].first,
                        *sy = st.gy + st.rows[q].first, *sz = st.gz + st.rows[q].first;
            const int len = st.rows[q].len;
            float rw = 0.0f, rx = 0.0f, ry = 0.0f, rz = 0.0f;
#pragma omp simd reduction(+ : rw, rx, ry, rz)
            for (int a = 0; a < len; ++a) {
                rw += om[a] * sw[a];
                rx += om[a] * sx[a];
                ry += om[a] * sy[a];
                rz += om[a] * sz[a];
            }
            w += rw;
            gx += rx;
            gy += ry;
            gz += rz;
        }
        /* the node's normal: central differences of φ (one-sided at the border) */
        int lo[3] = {i > 0 ? i - 1 : i, j > 0 ? j - 1 : j, k > 0 ? k - 1 : k};
        int hi[3] = {i < f->nx - 1 ? i + 1 : i, j < f->ny - 1 ? j + 1 : j,
                     k < f->nz - 1 ? k + 1 : k};
        pbf_v3 grad = v3((data[node_index(f, hi[0], j, k) * PBF_FIELD_STRIDE] -
                          data[node_index(f, lo[0], j, k) * PBF_FIELD_STRIDE]) /
                             (float)(hi[0] - lo[0]),
                         (data[node_index(f, i, hi[1], k) * PBF_FIELD_STRIDE] -
                          data[node_index(f, i, lo[1], k) * PBF_FIELD_STRIDE]) /
                             (float)(hi[1] - lo[1]),
                         (data[node_index(f, i, j, hi[2]) * PBF_FIELD_STRIDE] -
                          data[node_index(f, i, j, lo[2]) * PBF_FIELD_STRIDE]) /
                             (float)(hi[2] - lo[2]));
        pbf_field_sample fs;
        memset(&fs, 0, sizeof fs);
        fs.grad = grad;
        float pw = 0.0f;
        pbf_v3 pg = v3(0.0f, 0.0f, 0.0f);
        if (phi < P.h) pbf_ghost_surface_signed(phi, pbf_field_normal(&fs), &P, &pw, &pg);
        rec[1] = (float)(w - pw);
        rec[2] = (float)(gx - pg.x);
        rec[3] = (float)(gy - pg.y);
        rec[4] = (float)(gz - pg.z);
    }
    stencil_free(&st);
    return 0;
}

pbf_status pbf__field_bake(const pbf_trimesh *m, const pbf_bake_def *d, pbf_baked_field *out,
                           char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    double t0 = omp_get_wtime();
    double lo[3], hi[3];
    pbf__trimesh_bounds(m, lo, hi);
    pbf_field f;
    double bytes = pbf__bake_layout(lo, hi, d, &f);
    if (bytes < 0.0) {
        set_error(err, err_size, "the field's grid would have more than 2^31 nodes");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    const int nt = d->threads > 0 ? d->threads : omp_get_max_threads();
    const long long nodes = (long long)f.nx * f.ny * f.nz;
    int mpts, fn[3];
    fine_layout(&f, d, &mpts, fn);
    float *data = calloc((size_t)nodes * PBF_FIELD_STRIDE, sizeof *data);
    unsigned char *mark = malloc((size_t)nodes);
    float *weight = malloc((size_t)fn[0] * fn[1] * fn[2] * sizeof *weight);
    float *wedge = malloc((size_t)nodes * sizeof *wedge);
    int32_t *nearest = malloc((size_t)nodes * sizeof *nearest);
    pbf_bvh bvh;
    adjacency adj = {NULL, NULL};
    int built = data != NULL && mark != NULL && weight != NULL && wedge != NULL &&
                        nearest != NULL && adjacency_build(m, &adj) == 0
                    ? pbf__bvh_build(&bvh, m)
                    : -1;
    if (built != 0) {
        free(data);
        free(mark);
        free(weight);
        free(wedge);
        free(nearest);
        adjacency_free(&adj);
        set_error(err, err_size, "out of memory baking a field of %d x %d x %d nodes", f.nx, f.ny,
                  f.nz);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    signed_distance(&bvh, &adj, &f, d, data, wedge, nearest, nt);
    thin_parts(&bvh, &f, data, mark, nt);
    pbf__bvh_free(&bvh);
    adjacency_free(&adj);
    free(nearest);
    free(mark);
    f.node = data;
    int maps = boundary_maps(&f, d, data, wedge, weight, nt);
    free(weight);
    free(wedge);
    if (maps != 0) {
        free(data);
        set_error(err, err_size, "out of memory baking the boundary's density map");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    out->field = f;
    out->data = data;
    out->bytes = (size_t)nodes * PBF_FIELD_STRIDE * sizeof *data;
    out->seconds = omp_get_wtime() - t0;
    return PBF_OK;
}
