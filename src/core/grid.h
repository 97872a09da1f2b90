/* Uniform grid of cell size h with a stable counting sort, and the neighbour list (DESIGN §4–5).
 *
 * The grid covers the envelope of the domain walls; a position outside it is clamped to the
 * nearest border cell (a clamped linear index, never a power-of-two wrap that would alias far
 * cells). Because a cell is h wide, every neighbour within h of a particle lies in the 3×3×3
 * cells around its own; along x those three cells are contiguous in the sorted order, so the
 * 27 cells are walked as at most 9 index ranges. */
#ifndef PBF_GRID_H
#define PBF_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "params.h" /* pbf_v3 */

typedef struct pbf_grid {
    pbf_v3 origin;
    float inv_cell; /* 1 / h */
    int nx, ny, nz;
    int64_t cell_count;
    uint32_t
        *cell_start; /* cell_count + 1 entries: particles of cell c are [start[c], start[c+1]) */
    uint32_t *cursor; /* cell_count entries: scatter cursors of the counting sort */
    uint32_t *cell_of; /* per particle (capacity entries): its cell, in sorted order after sort */
    uint32_t *order; /* per particle: sorted slot -> previous slot (the permutation) */
} pbf_grid;

#define PBF_MAX_THREADS 1024

/* A thread's share of the list while it is built: the neighbours of a contiguous slice of
 * particles, appended in particle order. */
typedef struct pbf_neighbor_chunk {
    uint32_t *index;
    size_t size, capacity;
} pbf_neighbor_chunk;

/* Compact neighbour list (CSR): neighbours of i are index[start[i] .. start[i+1]). */
typedef struct pbf_neighbor_list {
    uint32_t *start; /* capacity + 1 */
    uint32_t *index;
    float *pair_g; /* per entry: the pair's spiky gradient factor of the current λ pass,
                             reused by the Δp pass of the same iteration (cpu_stages.c) */
    size_t index_capacity;
    pbf_neighbor_chunk *chunks; /* one per thread, kept between steps (no per-step malloc) */
    int chunk_count;
} pbf_neighbor_list;

void pbf_neighbor_list_free(pbf_neighbor_list *nl);

/* Sets the geometry (no allocation). Returns the cell count, or -1 when dims overflow. */
int64_t pbf_grid_layout(pbf_grid *g, pbf_v3 lo, pbf_v3 hi, float h);

/* Cell coordinate along one axis, clamped in floating point before the conversion, so that a
 * position far outside the grid, infinite or NaN (which the watchdog reports after the
 * substep) gives a border cell instead of an undefined float-to-int conversion. For f >= 0 the
 * truncation is the floor. */
PBF_HD static inline int pbf_grid_axis(float f, int n) {
    return f > 0.0f ? (f < (float)n ? (int)f : n - 1) : 0;
}

PBF_HD static inline uint32_t pbf_grid_cell(const pbf_grid *g, pbf_v3 x) {
    int cx = pbf_grid_axis((x.x - g->origin.x) * g->inv_cell, g->nx);
    int cy = pbf_grid_axis((x.y - g->origin.y) * g->inv_cell, g->ny);
    int cz = pbf_grid_axis((x.z - g->origin.z) * g->inv_cell, g->nz);
    return (uint32_t)((cz * g->ny + cy) * g->nx + cx);
}

/* The ≤ 9 contiguous index ranges [r[2k], r[2k+1]) covering the 27 cells around cell c.
 * Returns how many ranges were written. */
PBF_HD static inline int pbf_grid_ranges(const pbf_grid *g, uint32_t c, uint32_t *r) {
    int nxy = g->nx * g->ny;
    int cz = (int)c / nxy;
    int cy = ((int)c - cz * nxy) / g->nx;
    int cx = (int)c - cz * nxy - cy * g->nx;
    int x0 = cx > 0 ? cx - 1 : 0, x1 = cx < g->nx - 1 ? cx + 1 : cx;
    int n = 0;
    for (int z = cz - 1; z <= cz + 1; ++z) {
        if (z < 0 || z >= g->nz) continue;
        for (int y = cy - 1; y <= cy + 1; ++y) {
            if (y < 0 || y >= g->ny) continue;
            int row = (z * g->ny + y) * g->nx;
            r[2 * n] = g->cell_start[row + x0];
            r[2 * n + 1] = g->cell_start[row + x1 + 1];
            ++n;
        }
    }
    return n;
}

/* Computes each particle's cell from positions and the stable counting sort permutation:
 * fills cell_start, order, and cell_of (in sorted order). */
void pbf_grid_sort(pbf_grid *g, const float *positions, int count, int threads);

/* Builds the neighbour list from sorted positions (pairs with r < h, self excluded). scratch
 * holds 3 × count floats, overwritten (the solver lends its Δp output array).
 * Returns 0, or -1 when the list cannot grow (out of memory). */
int pbf_neighbor_list_build(pbf_neighbor_list *nl, const pbf_grid *g, const float *positions,
                            float *scratch, int count, float h, int threads);

#endif
