/* The marching-cubes case table, derived from the cube rather than typed in (see mc_table.h).
 *
 * For each case and each choice on its ambiguous faces:
 *  1. On every face, the crossing points (midpoints of edges whose corners differ) are joined
 *     into segments: one segment for two crossings; for four (an ambiguous face, inside corners
 *     on a diagonal) two segments that cut off either the two inside corners (the face's saddle
 *     is outside) or the two outside corners (saddle inside). Each segment is oriented so that
 *     the inside lies on the same side of it, seen from outside the cube.
 *  2. Every crossing point then has one segment in and one out, so the segments chain into
 *     closed loops: the boundary of the surface patch inside the cell.
 *  3. Each loop becomes triangles: a fan from the first of its vertices whose diagonals never
 *     join two crossing points on one face, else a fan around an extra vertex at its centre.
 *     A diagonal between two points of one face is the only edge two neighbouring cells could
 *     both make (their shared face holds both points); the segments on a face are made by
 *     both cells identically and used by each once. So every edge of the mesh ends up in
 *     exactly two triangles, and neighbouring cells agree wherever they meet.
 *  4. The orientation is checked on the one-corner case (its triangle must face away from the
 *     inside corner) and every triangle flipped if needed, so the table cannot silently turn
 *     inside out. */
#include "mc_table.h"

#include <string.h>

static int corner_coord(int c, int axis) { return (c >> axis) & 1; }

static int edge_of(int a, int k) { return 4 * a + k; }

/* The edge joining two corners that differ in one coordinate. */
static int edge_between(int c1, int c2) {
    int diff = c1 ^ c2, a = diff == 1 ? 0 : diff == 2 ? 1 : 2;
    int base = c1 < c2 ? c1 : c2, u = (a + 1) % 3, v = (a + 2) % 3;
    return edge_of(a, corner_coord(base, u) | corner_coord(base, v) << 1);
}

/* The two faces an edge lies on. */
static void edge_faces(int e, int faces[2]) {
    int a = e / 4, k = e % 4, u = (a + 1) % 3, v = (a + 2) % 3;
    faces[0] = 2 * u + (k & 1);
    faces[1] = 2 * v + (k >> 1);
}

static int edges_share_face(int e1, int e2) {
    int f1[2], f2[2];
    edge_faces(e1, f1);
    edge_faces(e2, f2);
    return f1[0] == f2[0] || f1[0] == f2[1] || f1[1] == f2[0] || f1[1] == f2[1];
}

static void edge_midpoint(const mc_table *t, int e, double p[3]) {
    int b = t->edge_corners[e][0], c = t->edge_corners[e][1];
    for (int i = 0; i < 3; ++i) p[i] = 0.5 * (corner_coord(b, i) + corner_coord(c, i));
}

/* Sign of ((q − p) × (r − p)) · n. */
static double turn(const double p[3], const double q[3], const double r[3], const double n[3]) {
    double a[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
    double b[3] = {r[0] - p[0], r[1] - p[1], r[2] - p[2]};
    double c[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return c[0] * n[0] + c[1] * n[1] + c[2] * n[2];
}

typedef struct segment_set {
    int next[12]; /* next[e]: the crossing point after e along its loop, -1 none */
    int prev[12];
    int bad;
} segment_set;

/* Adds the segment between crossing edges e1 and e2 of face f, oriented so that the reference
 * point r lies on the left (seen from outside the cube) when r_inside, on the right otherwise. */
static void add_segment(const mc_table *t, segment_set *s, int f, int e1, int e2, const double r[3],
                        int r_inside) {
    double p[3], q[3], n[3] = {0, 0, 0};
    n[f / 2] = (f & 1) ? 1.0 : -1.0; /* outward normal of the face */
    edge_midpoint(t, e1, p);
    edge_midpoint(t, e2, q);
    double side = turn(p, q, r, n);
    int from = e1, to = e2;
    if ((side > 0.0) != (r_inside != 0)) from = e2, to = e1;
    if (s->next[from] != -1 || s->prev[to] != -1) s->bad = 1;
    s->next[from] = to;
    s->prev[to] = from;
}

static void build_segments(const mc_table *t, int cas, int decisions, segment_set *s) {
    memset(s->next, -1, sizeof s->next);
    memset(s->prev, -1, sizeof s->prev);
    s->bad = 0;
    for (int f = 0; f < 6; ++f) {
        const uint8_t *q = t->face_corners[f];
        int in[4], fe[4], crossing[4], n = 0;
        for (int m = 0; m < 4; ++m) in[m] = (cas >> q[m]) & 1;
        for (int m = 0; m < 4; ++m) {
            fe[m] = edge_between(q[m], q[(m + 1) & 3]); /* the edge after corner m */
            if (in[m] != in[(m + 1) & 3]) crossing[n++] = fe[m];
        }
        if (n == 2) {
            double r[3] = {0, 0, 0};
            int k = 0;
            for (int m = 0; m < 4; ++m)
                if (in[m]) {
                    for (int i = 0; i < 3; ++i) r[i] += corner_coord(q[m], i);
                    ++k;
                }
            for (int i = 0; i < 3; ++i) r[i] /= k;
            add_segment(t, s, f, crossing[0], crossing[1], r, 1);
        } else if (n == 4) {
            /* Cut off the inside corners (saddle outside) or the outside ones (saddle inside). */
            int joined = (decisions >> f) & 1;
            for (int m = 0; m < 4; ++m) {
                if (in[m] == joined) continue;
                double r[3] = {corner_coord(q[m], 0), corner_coord(q[m], 1), corner_coord(q[m], 2)};
                add_segment(t, s, f, fe[(m + 3) & 3], fe[m], r, in[m]);
            }
        }
    }
}

/* Triangulates one loop into e (appending); returns 0, or -1 when the entry is full. */
static int triangulate_loop(mc_entry *e, const int *loop, int n) {
    int start = -1;
    for (int s = 0; s < n && start < 0; ++s) {
        int ok = 1;
        for (int i = 2; i <= n - 2 && ok; ++i)
            if (edges_share_face(loop[s], loop[(s + i) % n])) ok = 0;
        if (ok) start = s;
    }
    if (start >= 0) {
        if (e->tri_count + n - 2 > MC_MAX_TRIS) return -1;
        for (int i = 1; i <= n - 2; ++i) {
            uint8_t *tri = e->tris + 3 * e->tri_count++;
            tri[0] = (uint8_t)loop[start];
            tri[1] = (uint8_t)loop[(start + i) % n];
            tri[2] = (uint8_t)loop[(start + i + 1) % n];
        }
        return 0;
    }
    if (e->tri_count + n > MC_MAX_TRIS || e->extra_count >= MC_MAX_EXTRA) return -1;
    int centre = 12 + e->extra_count;
    uint16_t mask = 0;
    for (int i = 0; i < n; ++i) mask |= (uint16_t)(1u << loop[i]);
    e->extra_edges[e->extra_count++] = mask;
    for (int i = 0; i < n; ++i) {
        uint8_t *tri = e->tris + 3 * e->tri_count++;
        tri[0] = (uint8_t)centre;
        tri[1] = (uint8_t)loop[i];
        tri[2] = (uint8_t)loop[(i + 1) % n];
    }
    return 0;
}

static int build_entry(const mc_table *t, int cas, int decisions, mc_entry *e) {
    memset(e, 0, sizeof *e);
    segment_set s;
    build_segments(t, cas, decisions, &s);
    if (s.bad) return -1;
    int done[12] = {0};
    for (int start = 0; start < 12; ++start) {
        if (done[start] || s.next[start] < 0) {
            if (s.next[start] < 0 && s.prev[start] >= 0) return -1;
            continue;
        }
        int loop[12], n = 0, cur = start;
        do {
            if (n == 12 || done[cur] || s.next[cur] < 0) return -1;
            done[cur] = 1;
            loop[n++] = cur;
            cur = s.next[cur];
        } while (cur != start);
        if (n < 3 || triangulate_loop(e, loop, n) != 0) return -1;
    }
    return 0;
}

int mc_table_build(mc_table *t) {
    memset(t, 0, sizeof *t);
    for (int e = 0; e < 12; ++e) {
        int a = e / 4, k = e % 4, u = (a + 1) % 3, v = (a + 2) % 3;
        int base = (k & 1) << u | (k >> 1) << v;
        t->edge_corners[e][0] = (uint8_t)base;
        t->edge_corners[e][1] = (uint8_t)(base | 1 << a);
    }
    for (int f = 0; f < 6; ++f) {
        int a = f / 2, s = f & 1, u = (a + 1) % 3, v = (a + 2) % 3;
        static const int uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
        for (int m = 0; m < 4; ++m)
            t->face_corners[f][m] = (uint8_t)(s << a | uv[m][0] << u | uv[m][1] << v);
    }
    for (int cas = 0; cas < 256; ++cas) {
        for (int f = 0; f < 6; ++f) {
            const uint8_t *q = t->face_corners[f];
            int a0 = (cas >> q[0]) & 1, a1 = (cas >> q[1]) & 1;
            int a2 = (cas >> q[2]) & 1, a3 = (cas >> q[3]) & 1;
            if (a0 == a2 && a1 == a3 && a0 != a1) t->ambiguous[cas] |= (uint8_t)(1 << f);
        }
        for (int d = 0; d < 64; ++d) {
            if ((d & ~t->ambiguous[cas]) != 0) continue; /* never looked up */
            if (build_entry(t, cas, d, &t->entries[cas << 6 | d]) != 0) return -1;
        }
    }
    /* Orientation: case 1 (corner 0 inside) must face away from corner 0, towards (1,1,1). */
    const mc_entry *one = &t->entries[1 << 6];
    if (one->tri_count != 1) return -1;
    double p[3][3];
    for (int i = 0; i < 3; ++i) edge_midpoint(t, one->tris[i], p[i]);
    double out[3] = {1, 1, 1};
    if (turn(p[0], p[1], p[2], out) < 0.0) {
        for (int i = 0; i < 256 * 64; ++i) {
            mc_entry *e = &t->entries[i];
            for (int k = 0; k < e->tri_count; ++k) {
                uint8_t tmp = e->tris[3 * k + 1];
                e->tris[3 * k + 1] = e->tris[3 * k + 2];
                e->tris[3 * k + 2] = tmp;
            }
        }
    }
    return 0;
}
