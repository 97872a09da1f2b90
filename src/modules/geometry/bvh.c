/* The bounding volume hierarchy of the field bake (bvh.h). */
#include "bvh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_SIZE 4
#define STACK_SIZE 128 /* median splits: depth about log2(n / LEAF_SIZE) + 1 */
#define FAR_BETA 2.5 /* a cluster farther than this many radii is one dipole */
#define FOUR_PI 12.566370614359172

static const float *corner(const pbf_trimesh *m, int t, int k) {
    return m->vertices + 3 * (size_t)m->triangles[3 * (size_t)t + (size_t)k];
}

/* ---- building ------------------------------------------------------------------------------- */

/* Partially orders idx[lo..hi) by key so that idx[mid] has the mid-th key (quickselect with a
 * median-of-three pivot and ties broken by index: deterministic). */
static int less(const double *key, int32_t a, int32_t b) {
    return key[a] < key[b] || (key[a] == key[b] && a < b);
}

static void select_nth(int32_t *idx, int lo, int hi, int mid, const double *key) {
    while (hi - lo > 1) {
        int a = lo, b = lo + (hi - lo) / 2, c = hi - 1;
        int32_t pa = idx[a], pb = idx[b], pc = idx[c], pivot;
        if (less(key, pa, pb))
            pivot = less(key, pb, pc) ? pb : (less(key, pa, pc) ? pc : pa);
        else
            pivot = less(key, pa, pc) ? pa : (less(key, pb, pc) ? pc : pb);
        int i = lo, j = hi - 1;
        while (i <= j) {
            while (less(key, idx[i], pivot)) ++i;
            while (less(key, pivot, idx[j])) --j;
            if (i <= j) {
                int32_t s = idx[i];
                idx[i] = idx[j];
                idx[j] = s;
                ++i;
                --j;
            }
        }
        if (mid <= j)
            hi = j + 1;
        else if (mid >= i)
            lo = i;
        else
            return;
    }
}

static void fit(pbf_bvh *b, pbf_bvh_node *n) {
    const pbf_trimesh *m = b->mesh;
    for (int k = 0; k < 3; ++k) {
        n->lo[k] = INFINITY;
        n->hi[k] = -INFINITY;
        n->area[k] = n->center[k] = 0.0;
    }
    double total = 0.0;
    for (int i = n->first; i < n->first + n->count; ++i) {
        int t = b->order[i];
        const float *p[3] = {corner(m, t, 0), corner(m, t, 1), corner(m, t, 2)};
        double e1[3], e2[3];
        for (int k = 0; k < 3; ++k) {
            for (int c = 0; c < 3; ++c) {
                if (p[c][k] < n->lo[k]) n->lo[k] = p[c][k];
                if (p[c][k] > n->hi[k]) n->hi[k] = p[c][k];
            }
            e1[k] = (double)p[1][k] - p[0][k];
            e2[k] = (double)p[2][k] - p[0][k];
        }
        double a[3] = {0.5 * (e1[1] * e2[2] - e1[2] * e2[1]), 0.5 * (e1[2] * e2[0] - e1[0] * e2[2]),
                       0.5 * (e1[0] * e2[1] - e1[1] * e2[0])};
        double area = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        total += area;
        for (int k = 0; k < 3; ++k) {
            n->area[k] += a[k];
            n->center[k] += area * ((double)p[0][k] + p[1][k] + p[2][k]) / 3.0;
        }
    }
    for (int k = 0; k < 3; ++k)
        n->center[k] = total > 0.0 ? n->center[k] / total : 0.5 * (n->lo[k] + n->hi[k]);
    double r2 = 0.0;
    for (int i = n->first; i < n->first + n->count; ++i)
        for (int c = 0; c < 3; ++c) {
            const float *p = corner(m, b->order[i], c);
            double d2 = 0.0;
            for (int k = 0; k < 3; ++k)
                d2 += ((double)p[k] - n->center[k]) * ((double)p[k] - n->center[k]);
            if (d2 > r2) r2 = d2;
        }
    n->radius = sqrt(r2);
}

int pbf__bvh_build(pbf_bvh *b, const pbf_trimesh *m) {
    memset(b, 0, sizeof *b);
    b->mesh = m;
    const int n = m->triangle_count;
    b->order = malloc((size_t)(n > 0 ? n : 1) * sizeof *b->order);
    b->nodes = malloc((size_t)(2 * (n > 0 ? n : 1)) * sizeof *b->nodes);
    double *key = malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof *key);
    if (b->order == NULL || b->nodes == NULL || key == NULL) {
        free(key);
        pbf__bvh_free(b);
        return -1;
    }
    for (int t = 0; t < n; ++t) {
        b->order[t] = t;
        for (int k = 0; k < 3; ++k)
            key[(size_t)k * (size_t)n + (size_t)t] =
                ((double)corner(m, t, 0)[k] + corner(m, t, 1)[k] + corner(m, t, 2)[k]) / 3.0;
    }
    b->node_count = 1;
    b->nodes[0].first = 0;
    b->nodes[0].count = n;
    /* nodes are split in creation order: each split appends its two children */
    for (int i = 0; i < b->node_count; ++i) {
        pbf_bvh_node *node = &b->nodes[i];
        node->left = node->right = -1;
        fit(b, node);
        if (node->count <= LEAF_SIZE) continue;
        /* split at the median centroid along the axis where the centroids spread most */
        double clo[3] = {INFINITY, INFINITY, INFINITY}, chi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int j = node->first; j < node->first + node->count; ++j)
            for (int k = 0; k < 3; ++k) {
                double c = key[(size_t)k * (size_t)n + (size_t)b->order[j]];
                if (c < clo[k]) clo[k] = c;
                if (c > chi[k]) chi[k] = c;
            }
        int axis = 0;
        for (int k = 1; k < 3; ++k)
            if (chi[k] - clo[k] > chi[axis] - clo[axis]) axis = k;
        int mid = node->first + node->count / 2;
        select_nth(b->order, node->first, node->first + node->count, mid,
                   key + (size_t)axis * (size_t)n);
        int l = b->node_count++, r = b->node_count++;
        pbf_bvh_node *nodes = b->nodes; /* node stays valid: nodes has room for 2n */
        nodes[l].first = node->first;
        nodes[l].count = mid - node->first;
        nodes[r].first = mid;
        nodes[r].count = node->first + node->count - mid;
        node->left = l;
        node->right = r;
    }
    free(key);
    return 0;
}

void pbf__bvh_free(pbf_bvh *b) {
    if (b == NULL) return;
    free(b->nodes);
    free(b->order);
    memset(b, 0, sizeof *b);
}

void pbf__bvh_triangle_normal(const pbf_bvh *b, int t, double n[3]) {
    const float *p0 = corner(b->mesh, t, 0), *p1 = corner(b->mesh, t, 1),
                *p2 = corner(b->mesh, t, 2);
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)p1[k] - p0[k];
        e2[k] = (double)p2[k] - p0[k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; ++k) n[k] = len > 0.0 ? n[k] / len : 0.0;
}

/* ---- closest point -------------------------------------------------------------------------- */

static double dot3(const double *a, const double *b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* The closest point of triangle abc to p (Ericson, Real-Time Collision Detection, 5.1.5). */
static void closest_on_triangle(const double p[3], const double a[3], const double b[3],
                                const double c[3], double out[3]) {
    double ab[3], ac[3], ap[3];
    for (int k = 0; k < 3; ++k) {
        ab[k] = b[k] - a[k];
        ac[k] = c[k] - a[k];
        ap[k] = p[k] - a[k];
    }
    double d1 = dot3(ab, ap), d2 = dot3(ac, ap);
    if (d1 <= 0.0 && d2 <= 0.0) {
        memcpy(out, a, 3 * sizeof *out);
        return;
    }
    double bp[3];
    for (int k = 0; k < 3; ++k) bp[k] = p[k] - b[k];
    double d3 = dot3(ab, bp), d4 = dot3(ac, bp);
    if (d3 >= 0.0 && d4 <= d3) {
        memcpy(out, b, 3 * sizeof *out);
        return;
    }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double v = d1 / (d1 - d3);
        for (int k = 0; k < 3; ++k) out[k] = a[k] + v * ab[k];
        return;
    }
    double cp[3];
    for (int k = 0; k < 3; ++k) cp[k] = p[k] - c[k];
    double d5 = dot3(ab, cp), d6 = dot3(ac, cp);
    if (d6 >= 0.0 && d5 <= d6) {
        memcpy(out, c, 3 * sizeof *out);
        return;
    }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double w = d2 / (d2 - d6);
        for (int k = 0; k < 3; ++k) out[k] = a[k] + w * ac[k];
        return;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int k = 0; k < 3; ++k) out[k] = b[k] + w * (c[k] - b[k]);
        return;
    }
    double denom = 1.0 / (va + vb + vc);
    double v = vb * denom, w = vc * denom;
    for (int k = 0; k < 3; ++k) out[k] = a[k] + ab[k] * v + ac[k] * w;
}

static double box_d2(const pbf_bvh_node *n, const double q[3]) {
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        double d = q[k] < n->lo[k] ? n->lo[k] - q[k] : (q[k] > n->hi[k] ? q[k] - n->hi[k] : 0.0);
        d2 += d * d;
    }
    return d2;
}

static void load_corner(const pbf_trimesh *m, int t, int k, double out[3]);

double pbf__bvh_triangle_distance2(const pbf_bvh *b, int t, const double q[3], double closest[3]) {
    double a[3], bb[3], c[3];
    load_corner(b->mesh, t, 0, a);
    load_corner(b->mesh, t, 1, bb);
    load_corner(b->mesh, t, 2, c);
    closest_on_triangle(q, a, bb, c, closest);
    return (closest[0] - q[0]) * (closest[0] - q[0]) + (closest[1] - q[1]) * (closest[1] - q[1]) +
           (closest[2] - q[2]) * (closest[2] - q[2]);
}

static void load_corner(const pbf_trimesh *m, int t, int k, double out[3]) {
    const float *p = corner(m, t, k);
    out[0] = p[0];
    out[1] = p[1];
    out[2] = p[2];
}

double pbf__bvh_closest(const pbf_bvh *b, const double q[3], double max_d2, double closest[3],
                        int *tri) {
    double best = max_d2;
    *tri = -1;
    if (b->node_count == 0) return best;
    int32_t stack[STACK_SIZE];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const pbf_bvh_node *n = &b->nodes[stack[--top]];
        if (box_d2(n, q) >= best) continue;
        if (n->left < 0) {
            for (int i = n->first; i < n->first + n->count; ++i) {
                int t = b->order[i];
                double a[3], bb[3], c[3], p[3];
                load_corner(b->mesh, t, 0, a);
                load_corner(b->mesh, t, 1, bb);
                load_corner(b->mesh, t, 2, c);
                closest_on_triangle(q, a, bb, c, p);
                double d2 = (p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                            (p[2] - q[2]) * (p[2] - q[2]);
                if (d2 < best || (d2 == best && *tri >= 0 && t < *tri)) {
                    best = d2;
                    *tri = t;
                    memcpy(closest, p, 3 * sizeof *p);
                }
            }
            continue;
        }
        /* nearer child last: popped first */
        const pbf_bvh_node *l = &b->nodes[n->left], *r = &b->nodes[n->right];
        double dl = box_d2(l, q), dr = box_d2(r, q);
        if (top + 2 > STACK_SIZE) continue; /* cannot happen with median splits */
        if (dl < dr) {
            stack[top++] = n->right;
            stack[top++] = n->left;
        } else {
            stack[top++] = n->left;
            stack[top++] = n->right;
        }
    }
    return best;
}

/* ---- winding number ------------------------------------------------------------------------- */

/* Signed solid angle of triangle abc seen from q (Van Oosterom & Strackee 1983). */
static double solid_angle(const double q[3], const double a0[3], const double b0[3],
                          const double c0[3]) {
    double a[3], b[3], c[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = a0[k] - q[k];
        b[k] = b0[k] - q[k];
        c[k] = c0[k] - q[k];
    }
    double la = sqrt(dot3(a, a)), lb = sqrt(dot3(b, b)), lc = sqrt(dot3(c, c));
    double bc[3] = {b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2],
                    b[0] * c[1] - b[1] * c[0]};
    double num = dot3(a, bc);
    double den = la * lb * lc + dot3(a, b) * lc + dot3(a, c) * lb + dot3(b, c) * la;
    return 2.0 * atan2(num, den);
}

double pbf__bvh_winding(const pbf_bvh *b, const double q[3]) {
    if (b->node_count == 0) return 0.0;
    double w = 0.0;
    int32_t stack[STACK_SIZE];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const pbf_bvh_node *n = &b->nodes[stack[--top]];
        double d[3] = {n->center[0] - q[0], n->center[1] - q[1], n->center[2] - q[2]};
        double dist2 = dot3(d, d);
        if (dist2 > FAR_BETA * FAR_BETA * n->radius * n->radius) {
            /* a dipole: Ω ≈ A·(c − q)/|c − q|³ */
            w += dot3(n->area, d) / (dist2 * sqrt(dist2));
            continue;
        }
        if (n->left < 0) {
            for (int i = n->first; i < n->first + n->count; ++i) {
                double a[3], bb[3], c[3];
                load_corner(b->mesh, b->order[i], 0, a);
                load_corner(b->mesh, b->order[i], 1, bb);
                load_corner(b->mesh, b->order[i], 2, c);
                w += solid_angle(q, a, bb, c);
            }
            continue;
        }
        if (top + 2 > STACK_SIZE) continue;
        stack[top++] = n->right;
        stack[top++] = n->left;
    }
    return w / FOUR_PI;
}

/* ---- segments ------------------------------------------------------------------------------- */

static int segment_box(const pbf_bvh_node *n, const double a[3], const double c[3]) {
    double t0 = 0.0, t1 = 1.0;
    for (int k = 0; k < 3; ++k) {
        double d = c[k] - a[k];
        if (fabs(d) < 1e-300) {
            if (a[k] < n->lo[k] || a[k] > n->hi[k]) return 0;
            continue;
        }
        double u = (n->lo[k] - a[k]) / d, v = (n->hi[k] - a[k]) / d;
        if (u > v) {
            double s = u;
            u = v;
            v = s;
        }
        if (u > t0) t0 = u;
        if (v < t1) t1 = v;
        if (t0 > t1) return 0;
    }
    return 1;
}

/* Möller–Trumbore: whether the segment a + t (c − a), 0 < t < 1, crosses the triangle. */
static int segment_triangle(const double a[3], const double c[3], const double p0[3],
                            const double p1[3], const double p2[3]) {
    double dir[3], e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        dir[k] = c[k] - a[k];
        e1[k] = p1[k] - p0[k];
        e2[k] = p2[k] - p0[k];
    }
    double h[3] = {dir[1] * e2[2] - dir[2] * e2[1], dir[2] * e2[0] - dir[0] * e2[2],
                   dir[0] * e2[1] - dir[1] * e2[0]};
    double det = dot3(e1, h);
    if (fabs(det) < 1e-300) return 0;
    double inv = 1.0 / det, s[3] = {a[0] - p0[0], a[1] - p0[1], a[2] - p0[2]};
    double u = inv * dot3(s, h);
    if (u < 0.0 || u > 1.0) return 0;
    double qv[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2],
                    s[0] * e1[1] - s[1] * e1[0]};
    double v = inv * dot3(dir, qv);
    if (v < 0.0 || u + v > 1.0) return 0;
    double t = inv * dot3(e2, qv);
    return t > 0.0 && t < 1.0;
}

int pbf__bvh_segment_hits(const pbf_bvh *b, const double a[3], const double c[3]) {
    if (b->node_count == 0) return 0;
    int hits = 0;
    int32_t stack[STACK_SIZE];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const pbf_bvh_node *n = &b->nodes[stack[--top]];
        if (!segment_box(n, a, c)) continue;
        if (n->left < 0) {
            for (int i = n->first; i < n->first + n->count; ++i) {
                double p0[3], p1[3], p2[3];
                load_corner(b->mesh, b->order[i], 0, p0);
                load_corner(b->mesh, b->order[i], 1, p1);
                load_corner(b->mesh, b->order[i], 2, p2);
                hits += segment_triangle(a, c, p0, p1, p2);
            }
            continue;
        }
        if (top + 2 > STACK_SIZE) continue;
        stack[top++] = n->right;
        stack[top++] = n->left;
    }
    return hits;
}
