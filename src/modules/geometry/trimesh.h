/* Triangle meshes in memory (plain C): welding, the checks that make a mesh usable as a solid,
 * transforms, the content hash of the field cache, and mass properties. */
#ifndef PBF_GEOMETRY_TRIMESH_H
#define PBF_GEOMETRY_TRIMESH_H

#include <stdint.h>

#include "mesh_import.h"

/* Coordinates beyond this (m, after scaling) are refused as "huge": float positions that far
 * out have millimetre steps, and such a mesh is almost always in the wrong unit. */
#define PBF_MESH_MAX_COORD 1.0e5f

void pbf__trimesh_free(pbf_trimesh *m);

/* Merges vertices at exactly the same position (STL repeats them per face) and drops vertices
 * no triangle uses. Deterministic (sorted). PBF_ERR_OUT_OF_MEMORY on failure. */
pbf_status pbf__trimesh_weld(pbf_trimesh *m, const char *name, char *err, size_t err_size);

/* x <- R (S x) + t, R row-major (3x3), S the per-axis scale. */
void pbf__trimesh_transform(pbf_trimesh *m, const float scale[3], const float rot[9],
                            const float translate[3]);

/* Finite coordinates within PBF_MESH_MAX_COORD, no degenerate triangle (two corners at one
 * place, or a sliver whose area is below 1e-6 of its longest edge squared), consistently
 * oriented faces. Errors name the mesh, the first offending vertex or triangle and the count. */
pbf_status pbf__trimesh_check(const pbf_trimesh *m, const char *name, char *err, size_t err_size);

/* Edges used by one triangle only (a hole's rim). Returns their number (-1: out of memory) and
 * the first one's vertices in *a, *b. */
int64_t pbf__trimesh_open_edges(const pbf_trimesh *m, int *a, int *b);

/* Signed volume (positive when the faces point out), m^3. */
double pbf__trimesh_volume(const pbf_trimesh *m);

/* Reverses every triangle (an inside-out mesh). */
void pbf__trimesh_flip(pbf_trimesh *m);

void pbf__trimesh_bounds(const pbf_trimesh *m, double lo[3], double hi[3]);

/* FNV-1a of the vertices and triangles, continuing from h. */
uint64_t pbf__trimesh_hash(const pbf_trimesh *m, uint64_t h);
uint64_t pbf__hash_bytes(uint64_t h, const void *data, size_t n);
#define PBF_HASH_SEED 1469598103934665603ull

/* Volume, centre of mass and inertia tensor about the centre (row-major, per unit density:
 * multiply by the density) of the solid a closed mesh bounds (Mirtich's divergence theorem,
 * as tetrahedra from the origin). */
typedef struct pbf_mass_props {
    double volume;
    double center[3];
    double inertia[9];
} pbf_mass_props;
void pbf__trimesh_mass(const pbf_trimesh *m, pbf_mass_props *out);

#endif
