/* The field of a mesh solid (kernels.h, "Mesh solids"): baked from a triangle mesh, or loaded
 * from the disk cache (field_cache.c), which is keyed by a hash of the mesh and every parameter
 * that changes the result.
 *
 * The bake, per node of a grid over the mesh's box grown by h + 2 cells:
 *   1. φ: the exact distance to the nearest triangle (bvh.c), negative where the generalized
 *      winding number is above ½ (inside; for a container the sign is turned round). The
 *      winding number tolerates small holes and overlapping parts, where a flood fill or a ray
 *      parity would flip whole regions.
 *   2. Thin parts: where two neighbouring nodes both lie in the fluid but their segment crosses
 *      the surface twice, a plate thinner than the spacing lies between them and trilinear
 *      interpolation would not see it. The node nearer to it is made negative, so the grid
 *      holds a solid node inside every plate: the plate is then at most a cell thicker in the
 *      field, and ∇φ points away from it on both sides.
 *   3. The boundary's density: ghost sheets at φ = −r, −3r, ... (areal density 1/(2r)²) as a
 *      weight on a grid of half the spacing, summed against the kernel and its gradient around
 *      every node within h + 2 cells of the surface; stored as the residual after the tangent
 *      plane's closed form, which the lookup adds back.
 * Nodes are independent, so the result is the same for any thread count. */
#ifndef PBF_GEOMETRY_BAKE_H
#define PBF_GEOMETRY_BAKE_H

#include <stdint.h>

#include "kernels.h"
#include "mesh_import.h"

/* Bumped whenever the bake computes something else: old cache files are then rebaked. */
#define PBF_BAKE_VERSION 2

typedef struct pbf_bake_def {
    float cell; /* node spacing, m */
    int container; /* the fluid is inside the mesh: the solid is outside */
    float particle_radius; /* r, m */
    float kernel_radius; /* h, m */
    float poly6_k, spiky_k; /* the world's kernel constants (pbf_params) */
    int kernel; /* the world's pair (pbf_params.kernel): 0 the paper's, 1 Wendland C2 */
    int threads; /* 0: OpenMP's default */
} pbf_bake_def;

typedef struct pbf_baked_field {
    pbf_field field; /* field.node points into data */
    float *data;
    size_t bytes;
    double seconds; /* time the bake (or the cache load) took */
    int from_cache;
} pbf_baked_field;

/* The grid over a mesh whose box is lo..hi: origin and node counts. Returns the bytes of its
 * data, or a negative number when the grid would have more than 2^31 nodes. */
double pbf__bake_layout(const double lo[3], const double hi[3], const pbf_bake_def *d,
                        pbf_field *layout);
/* Bytes the bake needs while it runs (the field, the half-spacing weight grid, the tree). */
double pbf__bake_working_bytes(const pbf_field *layout, const pbf_bake_def *d, int triangles);

pbf_status pbf__field_bake(const pbf_trimesh *m, const pbf_bake_def *d, pbf_baked_field *out,
                           char *err, size_t err_size);
void pbf__baked_field_free(pbf_baked_field *f);

/* The cache key: the mesh's content and every bake parameter. */
uint64_t pbf__bake_key(const pbf_trimesh *m, const pbf_bake_def *d);

/* The cache folder of the library (the scenes' default): $PBF_CACHE_DIR, else
 * $XDG_CACHE_HOME/pbf, else $HOME/.cache/pbf; "" when none can be named. */
void pbf__field_cache_default_dir(char *out, size_t size);
/* Loads the field of key from dir when a valid file is there: PBF_OK, or PBF_ERR_IO when there
 * is none or it is unusable (truncated, corrupt, another layout): the caller bakes then. */
pbf_status pbf__field_cache_load(const char *dir, uint64_t key, const pbf_field *layout,
                                 pbf_baked_field *out);
/* The same for the block of nodes lo..lo+n (per axis) of the layout's grid: the field's
 * block_lo and block_n say which (kernels.h, pbf_field). Only the block and one z-plane of the
 * file are held while it loads; the whole file is still checked. */
pbf_status pbf__field_cache_load_block(const char *dir, uint64_t key, const pbf_field *layout,
                                       const int lo[3], const int n[3], pbf_baked_field *out);
/* Writes it atomically (a temporary file renamed into place), creating dir. */
pbf_status pbf__field_cache_save(const char *dir, uint64_t key, const pbf_baked_field *f, char *err,
                                 size_t err_size);

#endif
