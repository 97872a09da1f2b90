/* The sparse grid of the surface field and the marching cubes over it (src/surface/field.c,
 * src/surface/marching_cubes.c). Internal.
 *
 * Grid points sit at origin + cell · (i, j, k). Blocks of SURFACE_BLOCK³ cells are the unit of
 * work and of sparsity: a block holds the (SURFACE_BLOCK + 1)³ values of its cells' corners
 * (the last layer repeats the first layer of the next block, computed the same way in the same
 * order, so the two copies are equal bit for bit), and only blocks within reach of a particle
 * exist. A block owns the cells and the grid edges that start at its first SURFACE_BLOCK
 * points along each axis. */
#ifndef PBF_SURFACE_GRID_H
#define PBF_SURFACE_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "cell_index.h"
#include "mc_table.h"
#include "pbf/surface.h"

#define SURFACE_BLOCK 16
#define SURFACE_BLOCK_POINTS ((SURFACE_BLOCK + 1) * (SURFACE_BLOCK + 1) * (SURFACE_BLOCK + 1))

/* The kernel of every particle, ready for sampling (from pbf_surface_anisotropy's output). */
typedef struct surface_kernels {
    int count;
    float *center; /* 3 per particle, relative to the grid origin, m */
    float *g; /* 9 per particle: G = A⁻¹, row-major; the support is |G (x − c)| < 1 */
    float *weight; /* V · poly6 normalisation · det G */
    float *extent; /* 3 per particle: half size of the support's bounding box, m */
} surface_kernels;

typedef struct surface_grid {
    double origin[3];
    float cell; /* m */
    float iso;
    const surface_kernels *kernels;
    cell_index particles; /* particles by the block of their centre */
    int reach; /* blocks a kernel reaches beyond its own */
    int block_count;
    uint64_t *block_keys; /* sorted; keys as in `particles` */
    int32_t (*block_coord)[3];
} surface_grid;

/* Kernels from centres and axes (pbf_surface_anisotropy). Returns 0 or -1 (out of memory). */
int surface_kernels_build(surface_kernels *k, const pbf_surface_def *def, const float *centers,
                          const float *axes, int count, const double origin[3]);
void surface_kernels_free(surface_kernels *k);
/* The grid origin below all supports: min over particles of (centre − extent), less a margin. */
void surface_grid_origin(const pbf_surface_def *def, const float *centers, const float *axes,
                         int count, double origin[3]);
/* Blocks near the particles. Reorders the kernels into the order of the blocks (memory
 * order = the order every block reads them in). */
pbf_status surface_grid_build(surface_grid *g, const pbf_surface_def *def, surface_kernels *k,
                              const double origin[3], char *err, size_t err_size);
void surface_grid_free(surface_grid *g);
/* The field at the (SURFACE_BLOCK + 1)³ points of block b, x fastest. */
void surface_grid_sample(const surface_grid *g, int b, float *values);

/* Marching cubes (marching_cubes.c). The result of one block after the first pass. */
typedef struct mc_block {
    int edge_count; /* crossing edges the block owns = its vertices */
    int32_t *edge_ids; /* sorted local ids: ((z * B + y) * B + x) * 3 + axis */
    float *verts; /* 3 per owned edge, m */
    int cell_count; /* cells the surface crosses */
    int32_t *cells; /* local cell ids (z * B + y) * B + x */
    uint16_t *entries; /* their table entries */
    int tri_count, extra_count;
    int64_t vert_offset, tri_offset;
} mc_block;

/* First pass on block b's values: cases, decisions and the owned vertices. Returns 0 or -1. */
int mc_block_scan(const surface_grid *g, const mc_table *t, int b, const float *values,
                  mc_block *out);
/* Second pass: triangles (written at out->tri_offset) and the extra vertices (at
 * vert_offset + edge_count) of block b; vertices of the other blocks are already in verts.
 * map is scratch of 3 · SURFACE_BLOCK³ ints. Returns 0, or -1 if a vertex was not found (a
 * crack: a bug). */
int mc_block_triangles(const surface_grid *g, const mc_table *t, const mc_block *blocks, int b,
                       int32_t *map, float *verts, int32_t *tris);
void mc_block_free(mc_block *b);

#endif
