/* Mesh decimation by edge collapse with quadric error metrics (Garland & Heckbert, "Surface
 * Simplification Using Quadric Error Metrics", SIGGRAPH 1997), keeping the mesh closed and
 * manifold (see mesh_ops.h).
 *
 * Each vertex carries the sum of the (area-weighted) squared-distance quadrics of the planes of
 * its triangles. Edges are collapsed cheapest first; the merged vertex goes to whichever of the
 * two ends or the midpoint has the least error. A collapse is refused when it would change the
 * topology or the shape badly:
 *  - link condition: the two ends must share exactly the two neighbours opposite the edge
 *    (otherwise the collapse pinches the surface into a non-manifold edge or vertex);
 *  - every vertex keeps at least three neighbours (no collapsed tetrahedra, no flat pairs);
 *  - no triangle around the edge turns over or degenerates.
 * Serial, with a heap ordered by (cost, vertex ids): the same mesh always gives the same result. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_ops.h"

typedef struct heap_item {
    double cost;
    int32_t a, b;
    uint32_t stamp_a, stamp_b; /* the vertices' stamps when pushed: stale if they changed */
    float pos[3];
} heap_item;

typedef struct heap {
    heap_item *items;
    size_t count, cap;
} heap;

static int item_less(const heap_item *x, const heap_item *y) {
    if (x->cost != y->cost) return x->cost < y->cost;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static int heap_push(heap *h, const heap_item *it) {
    if (h->count == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        heap_item *n = realloc(h->items, cap * sizeof *n);
        if (n == NULL) return -1;
        h->items = n;
        h->cap = cap;
    }
    size_t i = h->count++;
    h->items[i] = *it;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!item_less(&h->items[i], &h->items[p])) break;
        heap_item t = h->items[i];
        h->items[i] = h->items[p];
        h->items[p] = t;
        i = p;
    }
    return 0;
}

static heap_item heap_pop(heap *h) {
    heap_item top = h->items[0];
    h->items[0] = h->items[--h->count];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->count && item_less(&h->items[l], &h->items[m])) m = l;
        if (r < h->count && item_less(&h->items[r], &h->items[m])) m = r;
        if (m == i) break;
        heap_item t = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = t;
        i = m;
    }
    return top;
}

/* A vertex's triangles, as a growable list. */
typedef struct tri_list {
    int32_t *ids;
    int count, cap;
} tri_list;

static int list_add(tri_list *l, int32_t t) {
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        int32_t *n = realloc(l->ids, (size_t)cap * sizeof *n);
        if (n == NULL) return -1;
        l->ids = n;
        l->cap = cap;
    }
    l->ids[l->count++] = t;
    return 0;
}

static void list_remove(tri_list *l, int32_t t) {
    for (int i = 0; i < l->count; ++i)
        if (l->ids[i] == t) {
            memmove(l->ids + i, l->ids + i + 1, (size_t)(l->count - i - 1) * sizeof *l->ids);
            --l->count;
            return;
        }
}

typedef struct decimator {
    int nv, nt;
    float *pos;
    int32_t *tri;
    char *tri_alive;
    double (*q)[10];
    uint32_t *stamp;
    char *alive;
    tri_list *adj;
    heap h;
} decimator;

/* Quadric of the plane n·x + d = 0 (n unit), weighted. */
static void quadric_add_plane(double q[10], const double n[3], double d, double w) {
    q[0] += w * n[0] * n[0], q[1] += w * n[0] * n[1], q[2] += w * n[0] * n[2], q[3] += w * n[0] * d;
    q[4] += w * n[1] * n[1], q[5] += w * n[1] * n[2], q[6] += w * n[1] * d;
    q[7] += w * n[2] * n[2], q[8] += w * n[2] * d, q[9] += w * d * d;
}

static double quadric_eval(const double q[10], const double p[3]) {
    const double x = p[0], y = p[1], z = p[2];
    return q[0] * x * x + 2 * q[1] * x * y + 2 * q[2] * x * z + 2 * q[3] * x + q[4] * y * y +
           2 * q[5] * y * z + 2 * q[6] * y + q[7] * z * z + 2 * q[8] * z + q[9];
}

/* Unnormalised normal (twice the area) of triangle t with vertex `moved` at p (or none: -1). */
static void tri_normal(const decimator *D, int32_t t, int32_t moved, const float *p, double n[3]) {
    const float *v[3];
    for (int k = 0; k < 3; ++k) {
        int32_t id = D->tri[3 * t + k];
        v[k] = id == moved ? p : D->pos + 3 * (size_t)id;
    }
    double u[3] = {(double)v[1][0] - v[0][0], (double)v[1][1] - v[0][1], (double)v[1][2] - v[0][2]};
    double w[3] = {(double)v[2][0] - v[0][0], (double)v[2][1] - v[0][1], (double)v[2][2] - v[0][2]};
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
}

/* The distinct neighbours of v into out (at most cap); returns their number, or -1 if more. */
static int neighbors(const decimator *D, int32_t v, int32_t *out, int cap) {
    int n = 0;
    const tri_list *l = &D->adj[v];
    for (int i = 0; i < l->count; ++i)
        for (int k = 0; k < 3; ++k) {
            int32_t u = D->tri[3 * l->ids[i] + k];
            if (u == v) continue;
            int seen = 0;
            for (int j = 0; j < n && !seen; ++j) seen = out[j] == u;
            if (seen) continue;
            if (n == cap) return -1;
            out[n++] = u;
        }
    return n;
}

static int push_edge(decimator *D, int32_t a, int32_t b) {
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    double q[10];
    for (int k = 0; k < 10; ++k) q[k] = D->q[a][k] + D->q[b][k];
    const float *pa = D->pos + 3 * (size_t)a, *pb = D->pos + 3 * (size_t)b;
    float cand[3][3];
    for (int d = 0; d < 3; ++d) {
        cand[0][d] = 0.5f * (pa[d] + pb[d]);
        cand[1][d] = pa[d];
        cand[2][d] = pb[d];
    }
    heap_item it;
    it.cost = INFINITY;
    for (int c = 0; c < 3; ++c) {
        double p[3] = {cand[c][0], cand[c][1], cand[c][2]};
        double e = quadric_eval(q, p);
        if (e < it.cost) {
            it.cost = e;
            memcpy(it.pos, cand[c], sizeof it.pos);
        }
    }
    it.a = a;
    it.b = b;
    it.stamp_a = D->stamp[a];
    it.stamp_b = D->stamp[b];
    return heap_push(&D->h, &it);
}

#define MAX_VALENCE 64

/* Tries to collapse edge (a, b) into a at p. 1 done, 0 refused, -1 out of memory. */
static int collapse(decimator *D, int32_t a, int32_t b, const float *p) {
    int32_t na[MAX_VALENCE], nb[MAX_VALENCE];
    int ca = neighbors(D, a, na, MAX_VALENCE), cb = neighbors(D, b, nb, MAX_VALENCE);
    if (ca < 0 || cb < 0) return 0;
    int32_t common[MAX_VALENCE];
    int cc = 0;
    for (int i = 0; i < ca; ++i)
        for (int j = 0; j < cb; ++j)
            if (na[i] == nb[j]) common[cc++] = na[i];
    /* the triangles on the edge */
    int32_t shared[2];
    int cs = 0;
    const tri_list *la = &D->adj[a];
    for (int i = 0; i < la->count; ++i) {
        const int32_t *t = D->tri + 3 * la->ids[i];
        if (t[0] == b || t[1] == b || t[2] == b) {
            if (cs == 2) return 0;
            shared[cs++] = la->ids[i];
        }
    }
    if (cs != 2 || cc != 2) return 0; /* link condition */
    if (ca + cb - 4 < 3) return 0;
    for (int k = 0; k < 2; ++k) {
        int32_t c = common[k];
        int32_t nc[MAX_VALENCE];
        if (neighbors(D, c, nc, MAX_VALENCE) - 1 < 3) return 0;
    }
    /* no triangle around the edge may turn over or degenerate */
    for (int e = 0; e < 2; ++e) {
        int32_t v = e ? b : a;
        const tri_list *l = &D->adj[v];
        for (int i = 0; i < l->count; ++i) {
            int32_t t = l->ids[i];
            if (t == shared[0] || t == shared[1]) continue;
            double before[3], after[3];
            tri_normal(D, t, -1, NULL, before);
            tri_normal(D, t, v, p, after);
            double dot = before[0] * after[0] + before[1] * after[1] + before[2] * after[2];
            double lb = sqrt(before[0] * before[0] + before[1] * before[1] + before[2] * before[2]);
            double la2 = sqrt(after[0] * after[0] + after[1] * after[1] + after[2] * after[2]);
            if (!(dot > 0.2 * lb * la2) || !(la2 > 1e-6 * lb)) return 0;
        }
    }
    /* do it */
    for (int k = 0; k < 2; ++k) {
        int32_t t = shared[k];
        D->tri_alive[t] = 0;
        for (int j = 0; j < 3; ++j) list_remove(&D->adj[D->tri[3 * t + j]], t);
    }
    tri_list *lb = &D->adj[b];
    for (int i = 0; i < lb->count; ++i) {
        int32_t t = lb->ids[i];
        for (int j = 0; j < 3; ++j)
            if (D->tri[3 * t + j] == b) D->tri[3 * t + j] = a;
        if (list_add(&D->adj[a], t) != 0) return -1;
    }
    lb->count = 0;
    D->alive[b] = 0;
    memcpy(D->pos + 3 * (size_t)a, p, 3 * sizeof(float));
    for (int k = 0; k < 10; ++k) D->q[a][k] += D->q[b][k];
    ++D->stamp[a];
    ++D->stamp[b];
    D->nt -= 2;
    int32_t nn[MAX_VALENCE];
    int cn = neighbors(D, a, nn, MAX_VALENCE);
    for (int i = 0; i < cn; ++i)
        if (push_edge(D, a, nn[i]) != 0) return -1;
    return 1;
}

int surface_mesh_decimate(pbf_mesh *m, double keep) {
    if (!(keep < 1.0) || m->triangle_count == 0) return 0;
    decimator D;
    memset(&D, 0, sizeof D);
    D.nv = m->vertex_count;
    D.nt = m->triangle_count;
    D.pos = m->positions;
    D.tri = m->triangles;
    const size_t nv = (size_t)D.nv, nt = (size_t)D.nt;
    D.tri_alive = malloc(nt);
    D.q = calloc(nv, sizeof *D.q);
    D.stamp = calloc(nv, sizeof *D.stamp);
    D.alive = malloc(nv);
    D.adj = calloc(nv, sizeof *D.adj);
    int rc = -1;
    if (!D.tri_alive || !D.q || !D.stamp || !D.alive || !D.adj) goto done;
    memset(D.tri_alive, 1, nt);
    memset(D.alive, 1, nv);
    for (size_t t = 0; t < nt; ++t) {
        double n[3];
        tri_normal(&D, (int32_t)t, -1, NULL, n);
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(len > 0.0)) len = 1.0;
        double u[3] = {n[0] / len, n[1] / len, n[2] / len};
        const float *p0 = D.pos + 3 * (size_t)D.tri[3 * t];
        double d = -(u[0] * p0[0] + u[1] * p0[1] + u[2] * p0[2]);
        for (int k = 0; k < 3; ++k) {
            int32_t v = D.tri[3 * t + k];
            quadric_add_plane(D.q[v], u, d, 0.5 * len);
            if (list_add(&D.adj[v], (int32_t)t) != 0) goto done;
        }
    }
    for (size_t t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) {
            int32_t a = D.tri[3 * t + k], b = D.tri[3 * t + (k + 1) % 3];
            if (a < b && push_edge(&D, a, b) != 0) goto done;
        }
    const int target = (int)(keep * (double)nt);
    while (D.nt > target && D.h.count > 0) {
        heap_item it = heap_pop(&D.h);
        if (!D.alive[it.a] || !D.alive[it.b] || D.stamp[it.a] != it.stamp_a ||
            D.stamp[it.b] != it.stamp_b)
            continue;
        if (collapse(&D, it.a, it.b, it.pos) < 0) goto done;
    }
    /* compact: surviving vertices and triangles in their old order */
    int32_t *remap = malloc(nv * sizeof *remap);
    if (remap == NULL) goto done;
    int32_t vn = 0;
    for (size_t v = 0; v < nv; ++v) {
        remap[v] = D.alive[v] && D.adj[v].count > 0 ? vn : -1;
        if (remap[v] >= 0) {
            memmove(m->positions + 3 * (size_t)vn, m->positions + 3 * v, 3 * sizeof(float));
            ++vn;
        }
    }
    int32_t tn = 0;
    for (size_t t = 0; t < nt; ++t) {
        if (!D.tri_alive[t]) continue;
        for (int k = 0; k < 3; ++k)
            m->triangles[3 * (size_t)tn + k] = remap[m->triangles[3 * t + k]];
        ++tn;
    }
    free(remap);
    m->vertex_count = vn;
    m->triangle_count = tn;
    rc = 0;
done:
    if (D.adj != NULL)
        for (size_t v = 0; v < nv; ++v) free(D.adj[v].ids);
    free(D.adj);
    free(D.tri_alive);
    free(D.q);
    free(D.stamp);
    free(D.alive);
    free(D.h.items);
    return rc;
}
