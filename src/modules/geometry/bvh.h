/* A bounding volume hierarchy over a mesh's triangles, for the field bake (bake.c): the exact
 * distance to the nearest triangle, the generalized winding number (Jacobson et al. 2013) with
 * the far-field approximation of Barill et al. 2018 ("Fast winding numbers for soups and
 * clouds"), and segment crossings. Queries are read-only: threads may share a tree. All in
 * double precision. */
#ifndef PBF_GEOMETRY_BVH_H
#define PBF_GEOMETRY_BVH_H

#include <stdint.h>

#include "mesh_import.h"

typedef struct pbf_bvh_node {
    double lo[3], hi[3]; /* bounding box of its triangles */
    int32_t left, right; /* children, -1 for a leaf */
    int32_t first, count; /* a leaf's triangles: order[first .. first + count) */
    /* Far-field expansion of the winding number: Σ of the faces' vector areas ½ (b−a)×(c−a),
     * their area-weighted centroid, and the farthest corner from it. */
    double area[3], center[3], radius;
} pbf_bvh_node;

typedef struct pbf_bvh {
    const pbf_trimesh *mesh;
    pbf_bvh_node *nodes;
    int node_count;
    int32_t *order;
} pbf_bvh;

/* 0, or -1 when out of memory. The mesh must outlive the tree. */
int pbf__bvh_build(pbf_bvh *b, const pbf_trimesh *m);
void pbf__bvh_free(pbf_bvh *b);

/* The squared distance from q to the nearest point of the mesh (at most max_d2: beyond it the
 * search stops and returns max_d2 with *tri = -1), that point and its triangle. */
double pbf__bvh_closest(const pbf_bvh *b, const double q[3], double max_d2, double closest[3],
                        int *tri);

/* The squared distance from q to triangle t and its closest point. */
double pbf__bvh_triangle_distance2(const pbf_bvh *b, int t, const double q[3], double closest[3]);

/* The generalized winding number at q: 1 inside a closed, outward-oriented mesh, 0 outside,
 * in between near holes. Far clusters (distance > beta times their radius) are taken as one
 * dipole. */
double pbf__bvh_winding(const pbf_bvh *b, const double q[3]);

/* How many triangles the open segment a-c crosses. */
int pbf__bvh_segment_hits(const pbf_bvh *b, const double a[3], const double c[3]);

/* The unit normal of triangle t (zero for a degenerate one). */
void pbf__bvh_triangle_normal(const pbf_bvh *b, int t, double n[3]);

#endif
