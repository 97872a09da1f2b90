/* Marching cubes over the blocks of the sparse grid (see surface_grid.h, mc_table.h).
 *
 * Two passes, each block on its own (any thread, any order):
 *  1. scan: the table entry of every cell the surface crosses (its case plus the asymptotic
 *     decider on its ambiguous faces: a face joins its two inside corners when the product of
 *     their values, less iso, is at least that of the outside corners, i.e. when the bilinear
 *     saddle is inside), and one vertex on every crossing grid edge the block owns, placed by
 *     linear interpolation.
 *  2. triangles: after a prefix sum over the blocks has given each block its first vertex and
 *     triangle, each cell's triangles are written with the vertex of each grid edge looked up
 *     in the block that owns that edge. One edge, one vertex: the mesh is stitched by
 *     construction, across cells and across blocks. */
#include <stdlib.h>
#include <string.h>

#include "surface_grid.h"

enum { B = SURFACE_BLOCK, P = SURFACE_BLOCK + 1 };

static int point_index(int x, int y, int z) { return (z * P + y) * P + x; }

static int cell_case(const float *values, int x, int y, int z, float iso, float v[8]) {
    int cas = 0;
    for (int c = 0; c < 8; ++c) {
        v[c] = values[point_index(x + (c & 1), y + (c >> 1 & 1), z + (c >> 2 & 1))];
        if (v[c] >= iso) cas |= 1 << c;
    }
    return cas;
}

/* The table entry of a cell: its case and the decisions on its ambiguous faces. */
static int cell_entry(const mc_table *t, int cas, const float v[8], float iso) {
    int decisions = 0, amb = t->ambiguous[cas];
    for (int f = 0; f < 6; ++f) {
        if (!(amb >> f & 1)) continue;
        const uint8_t *q = t->face_corners[f];
        float g0 = v[q[0]] - iso, g1 = v[q[1]] - iso, g2 = v[q[2]] - iso, g3 = v[q[3]] - iso;
        float p02 = g0 * g2, p13 = g1 * g3;
        int joined = (cas >> q[0] & 1) ? p02 >= p13 : p13 >= p02;
        decisions |= joined << f;
    }
    return cas << 6 | decisions;
}

void mc_block_free(mc_block *b) {
    free(b->edge_ids);
    free(b->verts);
    free(b->cells);
    free(b->entries);
    memset(b, 0, sizeof *b);
}

int mc_block_scan(const surface_grid *g, const mc_table *t, int b, const float *values,
                  mc_block *out) {
    memset(out, 0, sizeof *out);
    const float iso = g->iso;
    int any_in = 0, any_out = 0;
    for (int i = 0; i < SURFACE_BLOCK_POINTS; ++i) {
        if (values[i] >= iso)
            any_in = 1;
        else
            any_out = 1;
    }
    if (!any_in || !any_out) return 0;
    float v[8];
    int cells = 0, edges = 0;
    for (int z = 0; z < B; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) {
                int cas = cell_case(values, x, y, z, iso, v);
                cells += cas != 0 && cas != 255;
                int i0 = values[point_index(x, y, z)] >= iso;
                edges += i0 != (values[point_index(x + 1, y, z)] >= iso);
                edges += i0 != (values[point_index(x, y + 1, z)] >= iso);
                edges += i0 != (values[point_index(x, y, z + 1)] >= iso);
            }
    if (cells == 0 && edges == 0) return 0;
    out->cells = malloc((size_t)(cells > 0 ? cells : 1) * sizeof *out->cells);
    out->entries = malloc((size_t)(cells > 0 ? cells : 1) * sizeof *out->entries);
    out->edge_ids = malloc((size_t)(edges > 0 ? edges : 1) * sizeof *out->edge_ids);
    out->verts = malloc(3 * (size_t)(edges > 0 ? edges : 1) * sizeof *out->verts);
    if (!out->cells || !out->entries || !out->edge_ids || !out->verts) {
        mc_block_free(out);
        return -1;
    }
    const int32_t *bc = g->block_coord[b];
    const float cell = g->cell;
    static const int step[3] = {1, P, P * P};
    for (int z = 0; z < B; ++z)
        for (int y = 0; y < B; ++y)
            for (int x = 0; x < B; ++x) {
                int cas = cell_case(values, x, y, z, iso, v);
                if (cas != 0 && cas != 255) {
                    const mc_entry *e;
                    int entry = cell_entry(t, cas, v, iso);
                    e = &t->entries[entry];
                    out->cells[out->cell_count] = (z * B + y) * B + x;
                    out->entries[out->cell_count++] = (uint16_t)entry;
                    out->tri_count += e->tri_count;
                    out->extra_count += e->extra_count;
                }
                const int p = point_index(x, y, z);
                const float v0 = values[p];
                const int l[3] = {x, y, z};
                for (int a = 0; a < 3; ++a) {
                    const float v1 = values[p + step[a]];
                    if ((v0 >= iso) == (v1 >= iso)) continue;
                    /* Interpolated, and kept off the corners so no triangle collapses. */
                    float s = (iso - v0) / (v1 - v0);
                    if (s < 1e-4f) s = 1e-4f;
                    if (s > 1.0f - 1e-4f) s = 1.0f - 1e-4f;
                    float *q = out->verts + 3 * (size_t)out->edge_count;
                    for (int d = 0; d < 3; ++d) {
                        double at = (double)bc[d] * B + l[d] + (d == a ? s : 0.0f);
                        q[d] = (float)(g->origin[d] + at * cell);
                    }
                    out->edge_ids[out->edge_count++] = ((z * B + y) * B + x) * 3 + a;
                }
            }
    return 0;
}

static int find_block(const surface_grid *g, uint64_t key) {
    int lo = 0, hi = g->block_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (g->block_keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->block_count && g->block_keys[lo] == key ? lo : -1;
}

static int64_t find_edge(const mc_block *blk, int32_t id) {
    int lo = 0, hi = blk->edge_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (blk->edge_ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < blk->edge_count && blk->edge_ids[lo] == id ? blk->vert_offset + lo : -1;
}

int mc_block_triangles(const surface_grid *g, const mc_table *t, const mc_block *blocks, int b,
                       int32_t *map, float *verts, int32_t *tris) {
    const mc_block *blk = &blocks[b];
    if (blk->cell_count == 0) return 0;
    for (int i = 0; i < 3 * B * B * B; ++i) map[i] = -1;
    for (int k = 0; k < blk->edge_count; ++k)
        map[blk->edge_ids[k]] = (int32_t)(blk->vert_offset + k);
    /* the blocks that own the edges on this block's upper faces: offsets (x, y, z) in {0,1}³ */
    int neighbor[8];
    const int32_t *bc = g->block_coord[b];
    neighbor[0] = b;
    for (int o = 1; o < 8; ++o)
        neighbor[o] = find_block(g, cell_key(&g->particles, bc[0] + (o & 1), bc[1] + (o >> 1 & 1),
                                             bc[2] + (o >> 2 & 1)));
    int32_t *out = tris + 3 * blk->tri_offset;
    int64_t extra = blk->vert_offset + blk->edge_count;
    for (int c = 0; c < blk->cell_count; ++c) {
        const int id = blk->cells[c], x = id % B, y = id / B % B, z = id / (B * B);
        const mc_entry *e = &t->entries[blk->entries[c]];
        int64_t vid[12 + MC_MAX_EXTRA];
        for (int k = 0; k < 12; ++k) vid[k] = -2; /* not looked up yet */
        uint16_t used = 0;
        for (int k = 0; k < 3 * e->tri_count; ++k)
            if (e->tris[k] < 12) used |= (uint16_t)(1u << e->tris[k]);
        for (int k = 0; k < e->extra_count; ++k) used |= e->extra_edges[k];
        for (int edge = 0; edge < 12; ++edge) {
            if (!(used >> edge & 1)) continue;
            const int base = t->edge_corners[edge][0], axis = edge >> 2;
            int p[3] = {x + (base & 1), y + (base >> 1 & 1), z + (base >> 2 & 1)};
            int o = (p[0] == B) | (p[1] == B) << 1 | (p[2] == B) << 2;
            for (int d = 0; d < 3; ++d)
                if (p[d] == B) p[d] = 0;
            int32_t local = ((p[2] * B + p[1]) * B + p[0]) * 3 + axis;
            if (o == 0)
                vid[edge] = map[local];
            else
                vid[edge] = neighbor[o] >= 0 ? find_edge(&blocks[neighbor[o]], local) : -1;
            if (vid[edge] < 0) return -1;
        }
        for (int k = 0; k < e->extra_count; ++k) {
            double sum[3] = {0, 0, 0};
            int n = 0;
            for (int edge = 0; edge < 12; ++edge) {
                if (!(e->extra_edges[k] >> edge & 1)) continue;
                for (int d = 0; d < 3; ++d) sum[d] += verts[3 * vid[edge] + d];
                ++n;
            }
            vid[12 + k] = extra++;
            for (int d = 0; d < 3; ++d) verts[3 * vid[12 + k] + d] = (float)(sum[d] / n);
        }
        for (int k = 0; k < 3 * e->tri_count; ++k) *out++ = (int32_t)vid[e->tris[k]];
    }
    return 0;
}
