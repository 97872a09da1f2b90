/* pbf — triangle meshes as solids: static obstacles and containers, keyframed (kinematic) and
 * floating rigid bodies (docs/physics.md "Mesh solids", docs/scenes.md "meshes").
 *
 *     pbf_mesh_def m = pbf_default_mesh_def();
 *     snprintf(m.path, sizeof m.path, "%s", "bunny.obj");
 *     m.scale = (pbf_vec3){0.2f, 0.2f, 0.2f};
 *     m.position = (pbf_vec3){0.5f, 0.0f, 0.2f};
 *     if (pbf_world_add_mesh(w, &m) != PBF_OK) puts(pbf_world_error(w));
 *
 * A mesh is read from OBJ, STL (ASCII or binary) or PLY through Assimp, welded, checked, and
 * turned into a signed distance field with the boundary's density map on a grid (a cell of
 * 0.75 particle radii unless given), baked once and kept in a disk cache ($PBF_CACHE_DIR, else
 * $XDG_CACHE_HOME/pbf, else ~/.cache/pbf) under a hash of the mesh and the parameters. Particles
 * are projected out along the field's gradient and feel the mesh's density like the walls'.
 *
 * Placement: x_world = R (S x_file) + position, S = diag(scale), R = Rz Ry Rx of `rotation`
 * (degrees about x, then y, then z). A kinematic mesh follows its keys (position and rotation
 * interpolated linearly between keys, so a rotation of 720° turns twice). A floating mesh is a
 * rigid body: mass from its density (or given), centre and inertia from the closed mesh, moved by
 * gravity and the fluid (two-way: the reaction to the solver's corrections, as for the tool),
 * stopped by the domain walls, the other solids and the other floating bodies. A mesh flagged
 * as a sink is no solid: it removes the particles that enter it. */
#ifndef PBF_GEOMETRY_H
#define PBF_GEOMETRY_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PBF_MESH_PATH_SIZE 1024
#define PBF_MESH_MAX_KEYS 64
/* Meshes per world; with the colliders at most PBF_MAX_SOLIDS (64) solids in all. */
#define PBF_MAX_MESHES 32
/* The field's default node spacing, in particle radii. */
#define PBF_MESH_DEFAULT_CELL 0.75f

typedef enum pbf_mesh_role {
    PBF_MESH_OBSTACLE = 0, /* the solid is inside the mesh; the fluid flows around it */
    PBF_MESH_CONTAINER = 1 /* the fluid is inside the mesh (a closed tank); the solid outside */
} pbf_mesh_role;

typedef enum pbf_mesh_motion {
    PBF_MESH_STATIC = 0,
    PBF_MESH_KINEMATIC = 1, /* follows its keys; forces do not move it (they are measured) */
    PBF_MESH_FLOATING = 2 /* a rigid body under gravity and the fluid's force */
} pbf_mesh_motion;

/* One key of a kinematic mesh: its placement at a time. */
typedef struct pbf_mesh_key {
    float time; /* s */
    pbf_vec3 position; /* m */
    pbf_vec3 rotation; /* degrees about x, then y, then z */
} pbf_mesh_key;

typedef struct pbf_mesh_def {
    char path[PBF_MESH_PATH_SIZE]; /* .obj, .stl or .ply; required */
    pbf_vec3 scale; /* per axis, > 0; default (1, 1, 1) */
    pbf_vec3 rotation; /* degrees; default 0 */
    pbf_vec3 position; /* m; default 0 */
    pbf_mesh_role role; /* default PBF_MESH_OBSTACLE; a container must be closed */
    /* Node spacing of the field in m; 0 (default): PBF_MESH_DEFAULT_CELL times the particle
     * radius (docs/physics.md has the accuracy and bake time of other spacings). Range: 0 or
     * [r/8, 100 r]. */
    float cell;
    int cache; /* 1 (default): keep baked fields in the disk cache */
    pbf_mesh_motion motion; /* default PBF_MESH_STATIC */
    /* Kinematic: key_count keys, strictly increasing times (before the first key the mesh is
     * at the first, after the last at the last). With no keys it stays where it is put. */
    int key_count;
    pbf_mesh_key keys[PBF_MESH_MAX_KEYS];
    /* Floating: density in kg/m³ (default 500) unless mass > 0 (kg, default 0); its initial
     * velocity (m/s) and angular velocity (rad/s, world frame), default 0. */
    float density;
    float mass;
    pbf_vec3 velocity;
    pbf_vec3 angular_velocity;
    /* Added-mass stabilisation of a floating body, as the tool's: integrated with an extra mass
     * added_mass · ρ0 · V (and the matching inertia), the lagged fluid force compensated by it.
     * Default 0.5, range [0, 10]. */
    float added_mass;
    /* Floating: contact with the static and kinematic solids (meshes and colliders) and with
     * the other floating bodies, resolved once per substep, serially in mesh order (the same for
     * any thread count): points sampled on the body's surface (its vertices and a lattice on
     * each large triangle, spacing 2r) are pushed out of the other solid's distance field, and
     * impulses at the touching points stop their approach. restitution: the share of the
     * approach speed given back, [0, 1], default 0; friction: Coulomb coefficient, [0, 10],
     * default 0.4 (of a pair of floating bodies the mean); the domain's walls (at their own
     * velocity) likewise (docs/physics.md, "Contacts of floating bodies"). */
    float restitution;
    float friction;
    /* Static or kinematic: 1: a sink, not a solid: the particles inside it at the end of a
     * substep are removed (include/pbf/flow.h; counted with the sink boxes'). Default 0. */
    int sink;
} pbf_mesh_def;

/* What a mesh became (pbf_world_mesh_info). */
typedef struct pbf_mesh_solid_info {
    int vertices, triangles; /* after welding */
    int nx, ny, nz; /* field nodes (the whole grid's) */
    float cell; /* m */
    /* Bytes of the field this process holds: the whole field's, whole_field_bytes, unless a
     * world split over MPI ranks keeps only the part of a static mesh's field its slab reaches
     * (docs/mpi.md, "Mesh solids"). */
    size_t field_bytes;
    double bake_seconds; /* the bake, or the cache load */
    int from_cache;
    double volume; /* m³ (closed meshes; 0 otherwise) */
    float mass; /* kg (floating) */
    pbf_vec3 bounds_min, bounds_max; /* world box at the start */
    /* Edges with one triangle (after welding): 0 for a closed solid. An obstacle may be an open
     * sheet; a file cut short mid-way also loads as one, so `pbf run` warns when this is > 0. */
    long long open_edges;
    size_t whole_field_bytes;
} pbf_mesh_solid_info;

/* A moving mesh after the last step. Forces are the fluid's on the mesh (gravity excluded),
 * averaged over the step; the torque is about the position. A CUDA world does not measure them
 * (docs/cuda.md, "Mesh solids"): there force and torque are 0. */
typedef struct pbf_mesh_solid_state {
    double time; /* s */
    pbf_vec3 position; /* m: the local frame's origin (a floating body's centre of mass) */
    float orientation[4]; /* unit quaternion w, x, y, z: local to world */
    pbf_vec3 velocity; /* m/s */
    pbf_vec3 angular_velocity; /* rad/s, world frame */
    pbf_vec3 force; /* N */
    pbf_vec3 torque; /* N m */
} pbf_mesh_solid_state;

PBF_API pbf_mesh_def pbf_default_mesh_def(void);
/* Whether this library reads meshes (built with Assimp). */
PBF_API int pbf_mesh_import_available(void);
/* Loads, checks and bakes (or loads from the cache) a mesh and adds it to the world. Errors, each
 * naming the file: missing or unreadable (PBF_ERR_IO), an unsupported format
 * (PBF_ERR_UNSUPPORTED), broken or empty (PBF_ERR_PARSE), non-finite or huge coordinates,
 * degenerate triangles, inconsistent orientation, a container or floating body with holes, a
 * mesh outside the domain, a bad def field (PBF_ERR_INVALID_ARG), a field too large for the
 * memory (PBF_ERR_OUT_OF_MEMORY), a kind of mesh the world's backend does not run
 * (PBF_ERR_UNSUPPORTED: docs/features.md). */
PBF_API pbf_status pbf_world_add_mesh(pbf_world *world, const pbf_mesh_def *def);
PBF_API int pbf_world_mesh_count(const pbf_world *world);
PBF_API const pbf_mesh_def *pbf_world_get_mesh_def(const pbf_world *world, int index);
PBF_API pbf_mesh_solid_info pbf_world_mesh_info(const pbf_world *world, int index);
PBF_API pbf_mesh_solid_state pbf_world_mesh_state(const pbf_world *world, int index);
/* The welded triangles in the mesh's local frame (x_world = R x + position, R from the state's
 * orientation), valid while the world lives. Returns the triangle count. */
PBF_API int pbf_world_mesh_triangles(const pbf_world *world, int index, const float **vertices,
                                     int *vertex_count, const int32_t **triangles);
/* The local-to-world transform as a row-major 3x4 matrix [R | position]. */
PBF_API void pbf_world_mesh_transform(const pbf_world *world, int index, float out[12]);
/* Signed distance (m, positive in the fluid) from the mesh's surface at a world point: for
 * checks and tests. In a world split over MPI ranks a static mesh's field is held only around
 * the rank's slab (docs/mpi.md, "Mesh solids"): farther away the value is not the whole
 * field's. */
PBF_API float pbf_world_mesh_distance(const pbf_world *world, int index, pbf_vec3 x);

#ifdef __cplusplus
}
#endif

#endif /* PBF_GEOMETRY_H */
