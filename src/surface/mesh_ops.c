/* Operations on the reconstructed mesh: Taubin smoothing, vertex normals, and the measures that
 * check a mesh (area, volume, holes, non-manifold edges, pieces). All deterministic: gathers
 * over per-vertex lists built in triangle order, sums in a fixed order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cell_index.h"
#include "mesh_ops.h"
#include "surface_util.h"

void pbf_mesh_free(pbf_mesh *mesh) {
    if (mesh == NULL) return;
    free(mesh->positions);
    free(mesh->normals);
    free(mesh->triangles);
    memset(mesh, 0, sizeof *mesh);
}

/* Per-vertex lists (CSR): for each vertex the vertices after it in its triangles (in a closed,
 * consistently oriented mesh, each neighbour exactly once) or its triangles. */
static int vertex_lists(const pbf_mesh *m, int neighbors, int32_t **start_out,
                        int32_t **items_out) {
    const int nv = m->vertex_count, nt = m->triangle_count;
    int32_t *start = calloc((size_t)nv + 1, sizeof *start);
    int32_t *items = malloc(3 * (size_t)(nt > 0 ? nt : 1) * sizeof *items);
    if (start == NULL || items == NULL) {
        free(start);
        free(items);
        return -1;
    }
    for (int64_t k = 0; k < 3 * (int64_t)nt; ++k) ++start[m->triangles[k] + 1];
    for (int v = 0; v < nv; ++v) start[v + 1] += start[v];
    int32_t *fill = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *fill);
    if (fill == NULL) {
        free(start);
        free(items);
        return -1;
    }
    memcpy(fill, start, (size_t)nv * sizeof *fill);
    for (int t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) {
            int32_t v = m->triangles[3 * (size_t)t + k];
            items[fill[v]++] = neighbors ? m->triangles[3 * (size_t)t + (k + 1) % 3] : t;
        }
    free(fill);
    *start_out = start;
    *items_out = items;
    return 0;
}

int surface_mesh_taubin(pbf_mesh *m, int iterations, int threads) {
    if (iterations <= 0 || m->vertex_count == 0) return 0;
    int32_t *start, *nbr;
    if (vertex_lists(m, 1, &start, &nbr) != 0) return -1;
    float *next = malloc(3 * (size_t)m->vertex_count * sizeof *next);
    if (next == NULL) {
        free(start);
        free(nbr);
        return -1;
    }
    /* Taubin, "A signal processing approach to fair surface design" (1995): a shrinking step
     * λ and an inflating step μ < −λ remove the bumps of the grid without shrinking the
     * whole (pass band k_PB = 1/λ + 1/μ ≈ 0.11). */
    static const float factors[2] = {0.5f, -0.53f};
    const int nv = m->vertex_count;
    for (int it = 0; it < 2 * iterations; ++it) {
        const float f = factors[it & 1];
        const float *pos = m->positions;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int v = 0; v < nv; ++v) {
            double sum[3] = {0, 0, 0};
            int n = start[v + 1] - start[v];
            for (int k = start[v]; k < start[v + 1]; ++k)
                for (int d = 0; d < 3; ++d) sum[d] += pos[3 * (size_t)nbr[k] + d];
            for (int d = 0; d < 3; ++d) {
                float p = pos[3 * (size_t)v + d];
                next[3 * (size_t)v + d] = n > 0 ? p + f * (float)(sum[d] / n - p) : p;
            }
        }
        float *t = m->positions;
        m->positions = next;
        next = t;
    }
    free(next);
    free(start);
    free(nbr);
    return 0;
}

int surface_mesh_normals(pbf_mesh *m, int threads) {
    free(m->normals);
    m->normals =
        calloc(3 * (size_t)(m->vertex_count > 0 ? m->vertex_count : 1), sizeof *m->normals);
    if (m->normals == NULL) return -1;
    if (m->vertex_count == 0) return 0;
    int32_t *start, *tri;
    if (vertex_lists(m, 0, &start, &tri) != 0) return -1;
    const int nv = m->vertex_count;
    const float *p = m->positions;
    const int32_t *t = m->triangles;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int v = 0; v < nv; ++v) {
        double n[3] = {0, 0, 0};
        for (int k = start[v]; k < start[v + 1]; ++k) {
            const int32_t *f = t + 3 * (size_t)tri[k];
            const float *a = p + 3 * (size_t)f[0], *b = p + 3 * (size_t)f[1],
                        *c = p + 3 * (size_t)f[2];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            n[0] += u[1] * w[2] - u[2] * w[1]; /* |u × w| = twice the area: area weighting */
            n[1] += u[2] * w[0] - u[0] * w[2];
            n[2] += u[0] * w[1] - u[1] * w[0];
        }
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int d = 0; d < 3; ++d)
            m->normals[3 * (size_t)v + d] = len > 0.0 ? (float)(n[d] / len) : 0.0f;
    }
    free(start);
    free(tri);
    return 0;
}

static int32_t uf_find(int32_t *parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

pbf_status pbf_mesh_measure(const pbf_mesh *m, pbf_mesh_info *info, char *err, size_t err_size) {
    memset(info, 0, sizeof *info);
    const int nv = m->vertex_count, nt = m->triangle_count;
    for (int64_t k = 0; k < 3 * (int64_t)nt; ++k)
        if (m->triangles[k] < 0 || m->triangles[k] >= nv) {
            surface_format(err, err_size, "triangle %lld names vertex %d of %d", (long long)(k / 3),
                           (int)m->triangles[k], nv);
            return PBF_ERR_INVALID_ARG;
        }
    for (int t = 0; t < nt; ++t) {
        const int32_t *f = m->triangles + 3 * (size_t)t;
        const float *a = m->positions + 3 * (size_t)f[0], *b = m->positions + 3 * (size_t)f[1];
        const float *c = m->positions + 3 * (size_t)f[2];
        double u[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]};
        double w[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
        double x[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                       u[0] * w[1] - u[1] * w[0]};
        info->area += 0.5 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        /* signed volume of the tetrahedron (0, a, b, c) */
        info->volume += ((double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
                         (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
                         (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) /
                        6.0;
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2]) ++info->degenerate_triangles;
    }
    size_t ne = 3 * (size_t)nt, cap = ne > 0 ? ne : 1;
    uint64_t *keys = malloc(cap * sizeof *keys), *tk = malloc(cap * sizeof *tk);
    int32_t *dir = malloc(cap * sizeof *dir), *tv = malloc(cap * sizeof *tv);
    int32_t *parent = malloc((size_t)(nv > 0 ? nv : 1) * sizeof *parent);
    char *used = calloc((size_t)(nv > 0 ? nv : 1), 1);
    pbf_status st = PBF_OK;
    if (!keys || !tk || !dir || !tv || !parent || !used) {
        surface_format(err, err_size, "out of memory measuring a mesh of %d triangles", nt);
        st = PBF_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (int v = 0; v < nv; ++v) parent[v] = v;
    for (size_t k = 0; k < ne; ++k) {
        uint32_t a = (uint32_t)m->triangles[k], b = (uint32_t)m->triangles[k - k % 3 + (k + 1) % 3];
        keys[k] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
        dir[k] = a < b;
        used[a] = 1;
        int32_t ra = uf_find(parent, (int32_t)a), rb = uf_find(parent, (int32_t)b);
        if (ra != rb) parent[ra < rb ? rb : ra] = ra < rb ? ra : rb;
    }
    if (radix_sort_u64(keys, dir, ne, 64, tk, tv) != 0) {
        surface_format(err, err_size, "out of memory measuring a mesh of %d triangles", nt);
        st = PBF_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        int forward = 0;
        while (j < ne && keys[j] == keys[i]) forward += dir[j++];
        size_t n = j - i;
        ++info->edges;
        if (n == 1)
            ++info->boundary_edges;
        else if (n != 2 || forward != 1)
            ++info->nonmanifold_edges;
        i = j;
    }
    long long used_count = 0;
    for (int v = 0; v < nv; ++v) {
        if (!used[v]) continue;
        ++used_count;
        if (uf_find(parent, v) == v) ++info->components;
    }
    info->euler = (int)(used_count - info->edges + nt);
done:
    free(keys), free(tk), free(dir), free(tv), free(parent), free(used);
    return st;
}
