/* Triangle meshes in memory (trimesh.h). */
#include "trimesh.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

void pbf__trimesh_free(pbf_trimesh *m) {
    if (m == NULL) return;
    free(m->vertices);
    free(m->triangles);
    memset(m, 0, sizeof *m);
}

/* ---- welding -------------------------------------------------------------------------------- */

/* A vertex position as bit patterns (a total order, even for NaN, which the checks refuse later)
 * and its index: sorting these finds equal positions without a comparison context. */
typedef struct weld_key {
    uint32_t bits[3];
    int32_t index;
} weld_key;

static int cmp_weld(const void *pa, const void *pb) {
    const weld_key *a = pa, *b = pb;
    for (int k = 0; k < 3; ++k)
        if (a->bits[k] != b->bits[k]) return a->bits[k] < b->bits[k] ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

pbf_status pbf__trimesh_weld(pbf_trimesh *m, const char *name, char *err, size_t err_size) {
    const int n = m->vertex_count;
    weld_key *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    int32_t *remap = malloc((size_t)(n > 0 ? n : 1) * sizeof *remap);
    int32_t *used = malloc((size_t)(n > 0 ? n : 1) * sizeof *used);
    float *vertices = malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof *vertices);
    if (keys == NULL || remap == NULL || used == NULL || vertices == NULL) {
        free(keys);
        free(remap);
        free(used);
        free(vertices);
        set_error(err, err_size, "mesh '%s': out of memory welding %d vertices", name, n);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) {
            float c = m->vertices[3 * (size_t)i + k] + 0.0f; /* -0 becomes +0 */
            m->vertices[3 * (size_t)i + k] = c;
            memcpy(&keys[i].bits[k], &c, 4);
        }
        keys[i].index = i;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_weld);
    int unique = 0;
    for (int k = 0; k < n; ++k) {
        if (k == 0 || memcmp(keys[k].bits, keys[k - 1].bits, sizeof keys[k].bits) != 0) ++unique;
        remap[keys[k].index] = unique - 1;
    }
    /* keep only vertices a triangle uses, in first-use order (deterministic) */
    for (int u = 0; u < unique; ++u) used[u] = -1;
    int count = 0;
    for (size_t t = 0; t < 3 * (size_t)m->triangle_count; ++t) {
        int32_t old = m->triangles[t];
        int32_t u = remap[old];
        if (used[u] < 0) {
            used[u] = count;
            memcpy(vertices + 3 * (size_t)count, m->vertices + 3 * (size_t)old, 3 * sizeof(float));
            ++count;
        }
        m->triangles[t] = used[u];
    }
    free(m->vertices);
    m->vertices = vertices;
    m->vertex_count = count;
    free(keys);
    free(remap);
    free(used);
    return PBF_OK;
}

/* ---- transforms and checks ------------------------------------------------------------------ */

void pbf__trimesh_transform(pbf_trimesh *m, const float scale[3], const float rot[9],
                            const float translate[3]) {
    for (int i = 0; i < m->vertex_count; ++i) {
        float *v = m->vertices + 3 * (size_t)i;
        double s[3] = {(double)v[0] * scale[0], (double)v[1] * scale[1], (double)v[2] * scale[2]};
        for (int r = 0; r < 3; ++r)
            v[r] = (float)(rot[3 * r] * s[0] + rot[3 * r + 1] * s[1] + rot[3 * r + 2] * s[2] +
                           translate[r]);
    }
}

static void vsub(const float *a, const float *b, double *out) {
    for (int k = 0; k < 3; ++k) out[k] = (double)a[k] - (double)b[k];
}

static void vcross(const double *a, const double *b, double *out) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static double vlen2(const double *a) { return a[0] * a[0] + a[1] * a[1] + a[2] * a[2]; }

/* A directed edge a -> b and the triangle it belongs to, for the orientation and hole checks. */
typedef struct edge {
    int32_t lo, hi; /* the undirected edge */
    int32_t dir; /* 1 when it runs lo -> hi */
    int32_t tri;
} edge;

static int cmp_edge(const void *pa, const void *pb) {
    const edge *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    if (a->dir != b->dir) return a->dir < b->dir ? -1 : 1;
    return (a->tri > b->tri) - (a->tri < b->tri);
}

static edge *sorted_edges(const pbf_trimesh *m) {
    size_t n = 3 * (size_t)m->triangle_count;
    edge *e = malloc((n > 0 ? n : 1) * sizeof *e);
    if (e == NULL) return NULL;
    for (int t = 0; t < m->triangle_count; ++t)
        for (int k = 0; k < 3; ++k) {
            int32_t a = m->triangles[3 * t + k], b = m->triangles[3 * t + (k + 1) % 3];
            edge *x = &e[3 * (size_t)t + (size_t)k];
            x->lo = a < b ? a : b;
            x->hi = a < b ? b : a;
            x->dir = a < b;
            x->tri = t;
        }
    qsort(e, n, sizeof *e, cmp_edge);
    return e;
}

pbf_status pbf__trimesh_check(const pbf_trimesh *m, const char *name, char *err, size_t err_size) {
    if (m->triangle_count <= 0 || m->vertex_count <= 0) {
        set_error(err, err_size, "mesh '%s': no triangles (an empty mesh)", name);
        return PBF_ERR_INVALID_ARG;
    }
    for (int i = 0; i < m->vertex_count; ++i) {
        const float *v = m->vertices + 3 * (size_t)i;
        for (int k = 0; k < 3; ++k) {
            if (!isfinite(v[k])) {
                set_error(err, err_size,
                          "mesh '%s': vertex %d has a non-finite coordinate (%g, %g, %g)", name, i,
                          (double)v[0], (double)v[1], (double)v[2]);
                return PBF_ERR_INVALID_ARG;
            }
            if (fabsf(v[k]) > PBF_MESH_MAX_COORD) {
                set_error(err, err_size,
                          "mesh '%s': vertex %d at (%g, %g, %g) m is beyond %g m after scaling: "
                          "huge coordinates (is the mesh in millimetres? use 'scale')",
                          name, i, (double)v[0], (double)v[1], (double)v[2],
                          (double)PBF_MESH_MAX_COORD);
                return PBF_ERR_INVALID_ARG;
            }
        }
    }
    int bad = 0, first = -1;
    for (int t = 0; t < m->triangle_count; ++t) {
        const int32_t *tri = m->triangles + 3 * (size_t)t;
        const float *a = m->vertices + 3 * (size_t)tri[0], *b = m->vertices + 3 * (size_t)tri[1],
                    *c = m->vertices + 3 * (size_t)tri[2];
        double ab[3], ac[3], bc[3], n[3];
        vsub(b, a, ab);
        vsub(c, a, ac);
        vsub(c, b, bc);
        vcross(ab, ac, n);
        double longest = fmax(vlen2(ab), fmax(vlen2(ac), vlen2(bc)));
        /* |n| = 2 area; a sliver: 2 area < 1e-6 longest² (an angle below about 1e-4°) */
        if (tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] || !(longest > 0.0) ||
            vlen2(n) < 1e-12 * longest * longest) {
            if (first < 0) first = t;
            ++bad;
        }
    }
    if (bad > 0) {
        const int32_t *tri = m->triangles + 3 * (size_t)first;
        const float *a = m->vertices + 3 * (size_t)tri[0];
        set_error(err, err_size,
                  "mesh '%s': %d degenerate triangle%s (no area), the first is triangle %d at "
                  "(%g, %g, %g) m; repair the mesh (e.g. MeshLab's 'remove zero area faces')",
                  name, bad, bad == 1 ? "" : "s", first, (double)a[0], (double)a[1], (double)a[2]);
        return PBF_ERR_INVALID_ARG;
    }
    edge *e = sorted_edges(m);
    if (e == NULL) {
        set_error(err, err_size, "mesh '%s': out of memory checking its edges", name);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    /* Two faces that share an edge run it in opposite directions; the same direction twice
     * means one of them is flipped, and the sign of the distance field would be wrong near it. */
    size_t n = 3 * (size_t)m->triangle_count, flipped = 0, at = 0;
    for (size_t k = 1; k < n; ++k)
        if (e[k].lo == e[k - 1].lo && e[k].hi == e[k - 1].hi && e[k].dir == e[k - 1].dir &&
            (k + 1 >= n || e[k + 1].lo != e[k].lo || e[k + 1].hi != e[k].hi) &&
            (k < 2 || e[k - 2].lo != e[k].lo || e[k - 2].hi != e[k].hi)) {
            if (flipped++ == 0) at = k;
        }
    pbf_status st = PBF_OK;
    if (flipped > 0) {
        set_error(err, err_size,
                  "mesh '%s': %zu edge%s shared by faces of opposite orientation (triangles %d "
                  "and %d): the faces are not consistently oriented; repair the mesh (e.g. "
                  "MeshLab's 're-orient all faces coherently')",
                  name, flipped, flipped == 1 ? " is" : "s are", (int)e[at - 1].tri,
                  (int)e[at].tri);
        st = PBF_ERR_INVALID_ARG;
    }
    free(e);
    return st;
}

int64_t pbf__trimesh_open_edges(const pbf_trimesh *m, int *a, int *b) {
    edge *e = sorted_edges(m);
    if (e == NULL) return -1;
    size_t n = 3 * (size_t)m->triangle_count;
    int64_t open = 0;
    for (size_t k = 0; k < n;) {
        size_t j = k + 1;
        while (j < n && e[j].lo == e[k].lo && e[j].hi == e[k].hi) ++j;
        if (j - k == 1) {
            if (open == 0) {
                *a = e[k].lo;
                *b = e[k].hi;
            }
            ++open;
        }
        k = j;
    }
    free(e);
    return open;
}

double pbf__trimesh_volume(const pbf_trimesh *m) {
    double v = 0.0;
    for (int t = 0; t < m->triangle_count; ++t) {
        const int32_t *tri = m->triangles + 3 * (size_t)t;
        const float *a = m->vertices + 3 * (size_t)tri[0], *b = m->vertices + 3 * (size_t)tri[1],
                    *c = m->vertices + 3 * (size_t)tri[2];
        double da[3] = {a[0], a[1], a[2]}, db[3] = {b[0], b[1], b[2]}, dc[3] = {c[0], c[1], c[2]};
        double x[3];
        vcross(db, dc, x);
        v += da[0] * x[0] + da[1] * x[1] + da[2] * x[2];
    }
    return v / 6.0;
}

void pbf__trimesh_flip(pbf_trimesh *m) {
    for (int t = 0; t < m->triangle_count; ++t) {
        int32_t s = m->triangles[3 * t + 1];
        m->triangles[3 * t + 1] = m->triangles[3 * t + 2];
        m->triangles[3 * t + 2] = s;
    }
}

void pbf__trimesh_bounds(const pbf_trimesh *m, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int i = 0; i < m->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            double c = m->vertices[3 * (size_t)i + k];
            if (c < lo[k]) lo[k] = c;
            if (c > hi[k]) hi[k] = c;
        }
}

uint64_t pbf__hash_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t pbf__trimesh_hash(const pbf_trimesh *m, uint64_t h) {
    h = pbf__hash_bytes(h, &m->vertex_count, sizeof m->vertex_count);
    h = pbf__hash_bytes(h, &m->triangle_count, sizeof m->triangle_count);
    h = pbf__hash_bytes(h, m->vertices, 3 * (size_t)m->vertex_count * sizeof(float));
    return pbf__hash_bytes(h, m->triangles, 3 * (size_t)m->triangle_count * sizeof(int32_t));
}

/* Each face and the origin span a tetrahedron of signed volume v = a·(b×c)/6 whose second
 * moment ∫ x xᵀ dV is v/20 (a aᵀ + b bᵀ + c cᵀ + s sᵀ), s = a + b + c; their sums over a closed
 * mesh are the solid's (the origin's contributions cancel). */
void pbf__trimesh_mass(const pbf_trimesh *m, pbf_mass_props *out) {
    double vol = 0.0, first[3] = {0.0, 0.0, 0.0}, second[9] = {0.0};
    for (int t = 0; t < m->triangle_count; ++t) {
        const int32_t *tri = m->triangles + 3 * (size_t)t;
        double p[3][3];
        for (int i = 0; i < 3; ++i)
            for (int k = 0; k < 3; ++k) p[i][k] = m->vertices[3 * (size_t)tri[i] + k];
        double x[3];
        vcross(p[1], p[2], x);
        double v = (p[0][0] * x[0] + p[0][1] * x[1] + p[0][2] * x[2]) / 6.0;
        double s[3] = {p[0][0] + p[1][0] + p[2][0], p[0][1] + p[1][1] + p[2][1],
                       p[0][2] + p[1][2] + p[2][2]};
        vol += v;
        for (int k = 0; k < 3; ++k) first[k] += v * s[k] / 4.0;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c)
                second[3 * r + c] +=
                    v / 20.0 *
                    (p[0][r] * p[0][c] + p[1][r] * p[1][c] + p[2][r] * p[2][c] + s[r] * s[c]);
    }
    memset(out, 0, sizeof *out);
    out->volume = vol;
    if (!(fabs(vol) > 0.0)) return;
    for (int k = 0; k < 3; ++k) out->center[k] = first[k] / vol;
    double cov[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
            cov[3 * r + c] = second[3 * r + c] - vol * out->center[r] * out->center[c];
    double tr = cov[0] + cov[4] + cov[8];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) out->inertia[3 * r + c] = (r == c ? tr : 0.0) - cov[3 * r + c];
}
