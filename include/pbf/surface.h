/* pbf — surfaces from particles: a closed triangle mesh of the fluid for renderers.
 *
 * Method (docs/surface.md has the details and the measured quality and speed):
 *
 *  1. Anisotropy (Yu & Turk, "Reconstructing Surfaces of Particle-Based Fluids Using Anisotropic
 *     Kernels", ACM TOG 2013). For every particle, a weighted principal component analysis of
 *     its neighbourhood gives an ellipsoid: flat along the normal where the particle sits on a
 *     flat surface or in a thin sheet, round in the bulk. The axis ratio is clamped to
 *     max_stretch, the volume of the ellipsoid is that of the isotropic kernel, and particles
 *     with few neighbours get a small round kernel. The centres are smoothed towards their
 *     neighbours' weighted mean (smoothing = λ). pbf_surface_anisotropy exposes this per
 *     particle: the mesher and the renderer's ellipsoid splats use the same numbers.
 *  2. Field. φ(x) = Σ_j V W(G_j (x − c_j)) det G_j with V = (2r)³ the particle's volume, W the
 *     normalised poly6 kernel of unit support, c_j the smoothed centre and G_j the inverse of
 *     the ellipsoid's axes. φ ≈ 1 inside the fluid, 0 outside; the surface is φ = iso.
 *     It is sampled on a sparse grid: blocks of 16³ cells near the particles only.
 *  3. Marching cubes on those cells. The case table is built at run time from the cube's
 *     geometry: each face's crossing points are joined into segments (an ambiguous face is
 *     decided by the bilinear saddle, the asymptotic decider, from that face's four values
 *     only, so both cells that share it agree), the segments are chained into closed loops,
 *     and each loop is triangulated without any diagonal that two cells could share. Vertices
 *     live on grid edges and are shared through the edge's index. The mesh is therefore closed
 *     (watertight) and every edge has exactly two triangles (manifold), by construction.
 *  4. Optional Taubin smoothing (λ|μ, no shrinking) of the vertices, optional decimation by
 *     edge collapse (quadric error metrics; closed and manifold still), and vertex normals.
 *
 * Deterministic: OpenMP threads, no atomics, every sum in a fixed order; the same particles give
 * the same mesh, bit for bit, for any thread count.
 *
 * Nothing here prints or exits: functions return a pbf_status and write a message into err. */
#ifndef PBF_SURFACE_H
#define PBF_SURFACE_H

#include <stddef.h>
#include <stdint.h>

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pbf_surface_kernel {
    PBF_SURFACE_ANISOTROPIC = 0, /* Yu & Turk ellipsoids (default) */
    PBF_SURFACE_ISOTROPIC = 1 /* one round kernel for every particle, no centre smoothing */
} pbf_surface_kernel;

typedef struct pbf_surface_def {
    /* Particle radius r in m: particles sit 2r apart at rest and each holds the volume (2r)³.
     * Required: > 0 (the default 0 is an error, so a forgotten radius cannot pass silently). */
    float particle_radius;
    /* Default PBF_SURFACE_ANISOTROPIC. */
    pbf_surface_kernel kernel;
    /* Support radius of the field's kernel, in particle radii. Default 4 (the solver's h).
     * Range [2, 12]. */
    float kernel_radius;
    /* Edge of a marching-cubes cell, in particle radii. Default 1 (half the spacing); smaller
     * is finer and slower (time and memory grow as 1/cell³). Range [0.25, 4]. */
    float cell_size;
    /* The surface is φ = iso, φ being 1 in fluid at rest. Default 0.5. Range (0, 1). */
    float iso;
    /* Radius of the neighbourhood of the principal component analysis, in particle radii.
     * Default 5. Range [2, 16]. */
    float anisotropy_radius;
    /* λ of the centre smoothing, c = (1 − λ) x + λ x̄ (x̄: the neighbours' weighted mean). 0 keeps
     * the particle positions. Default 0.5. Range [0, 1]. */
    float smoothing;
    /* Largest ratio of the longest to the shortest ellipsoid axis (k_r). Default 4; 1 makes
     * every kernel round. Range [1, 16]. */
    float max_stretch;
    /* Particles with fewer neighbours than this in the anisotropy radius get a round kernel of
     * isolated_scale times the kernel radius (Yu & Turk's N_ε and k_n): a drop of one particle
     * then still shows, as a small sphere. Default 12, range [0, 1000]. */
    int min_neighbors;
    /* Default 0.5, range (0, 1]. */
    float isolated_scale;
    /* Taubin smoothing steps of the mesh (each a shrinking and an inflating pass; λ = 0.5,
     * μ = −0.53). Default 2. Range [0, 100]. */
    int smooth_iterations;
    /* Decimation after smoothing: keep about this fraction of the triangles, by edge collapses
     * cheapest first (quadric error metrics, Garland & Heckbert 1997) that keep the mesh closed
     * and manifold and turn no triangle over. 1: none (default). Range [0.05, 1]. */
    float decimate;
    /* OpenMP threads; 0: as many as OpenMP gives. The result does not depend on it. */
    int threads;
} pbf_surface_def;

PBF_API pbf_surface_def pbf_default_surface_def(void);
/* Checks every field against its range; the message names the field, its value and the range. */
PBF_API pbf_status pbf_surface_check_def(const pbf_surface_def *def, char *err, size_t err_size);

/* The per-particle ellipsoids of step 1, for the mesher and the renderer. For particle i:
 * centers[3i..3i+2] is the smoothed centre (m); axes[9i..9i+8] holds the three principal axes
 * of the kernel's support ellipsoid, scaled to their lengths in metres, as columns of a
 * row-major 3x3 matrix A (the support is {c + A u : |u| ≤ 1}). A round kernel of radius h is
 * h times the identity. Either output may be NULL. Fails on a non-finite position (naming the
 * particle) or a bad def. count 0 is fine. */
PBF_API pbf_status pbf_surface_anisotropy(const pbf_surface_def *def, const float *positions,
                                          int count, float *centers, float *axes, char *err,
                                          size_t err_size);

/* The same anisotropy on an NVIDIA GPU, for particles already in device memory (a CUDA world's
 * pbf_world_device_view; a renderer's buffers mapped through CUDA-OpenGL interop).
 *
 * A pbf_surface_gpu holds the scratch of the computation on the CUDA device that was current
 * when it was created: arrays that grow with the particle count and are kept between calls, so
 * a call per frame allocates nothing once the count stops growing. The calls switch to that
 * device and back. One pbf_surface_gpu serves one thread at a time; several may be used from
 * several threads.
 *
 * Without the CUDA backend built in (machines without nvcc, the sanitizer build),
 * pbf_surface_gpu_create fails with PBF_ERR_UNSUPPORTED; with it but no usable device, with
 * PBF_ERR_NO_DEVICE and the reason. *out is NULL on failure. */
typedef struct pbf_surface_gpu pbf_surface_gpu;
PBF_API pbf_status pbf_surface_gpu_create(pbf_surface_gpu **out, char *err, size_t err_size);
/* Frees the scratch. Safe on NULL. */
PBF_API void pbf_surface_gpu_destroy(pbf_surface_gpu *g);

/* pbf_surface_anisotropy with positions (3 floats a particle, m), centers (3) and axes (9) in
 * device memory: the same layouts and the same math (src/surface/anisotropy_math.h), computed
 * on the device (a sort by cell and one thread per particle). Either output may be NULL.
 * Returns when the results are written; the positions must be complete when it is called (work
 * that writes them on another stream finished). Deterministic: two calls give the same bits.
 * The CPU's results agree to rounding, not bit for bit (the CPU adds a row of neighbours in
 * vector lanes, the GPU one by one): centres within a few float roundings of their coordinates,
 * ellipsoids (A Aᵀ) within about 1e-5 h²; the axes' signs may differ. Without smoothing the
 * centres are the positions, and the isotropic kernel gives the CPU's bits.
 *
 * Errors: PBF_ERR_INVALID_ARG for a bad def (the message names the field, as
 * pbf_surface_check_def), a NULL g, count < 0, NULL or host positions (pointers the device
 * cannot read), a non-finite position (checked on the device; the message names the lowest
 * such particle and nothing is written), or particles spread over 2^20 cells of the anisotropy
 * radius along an axis; PBF_ERR_OUT_OF_MEMORY when the device runs out of memory; other CUDA
 * failures PBF_ERR_NO_DEVICE, naming the stage and the particle count. Built without the CUDA
 * backend: PBF_ERR_UNSUPPORTED. count 0 is fine (nothing is read or written). */
PBF_API pbf_status pbf_surface_gpu_anisotropy(pbf_surface_gpu *g, const pbf_surface_def *def,
                                              const float *positions, int count, float *centers,
                                              float *axes, char *err, size_t err_size);

/* A triangle mesh. Triangles are counter-clockwise seen from outside the fluid (normals point
 * out of the fluid). */
typedef struct pbf_mesh {
    int vertex_count;
    int triangle_count;
    float *positions; /* 3 * vertex_count, m */
    float *normals; /* 3 * vertex_count, unit, outwards (area-weighted triangle normals) */
    int32_t *triangles; /* 3 * triangle_count vertex indices */
} pbf_mesh;

/* Frees the arrays and zeroes *mesh. Safe on a zeroed struct and on NULL. */
PBF_API void pbf_mesh_free(pbf_mesh *mesh);

/* Where the time and memory of a reconstruction went. */
typedef struct pbf_surface_stats {
    double anisotropy_ms; /* neighbour search + PCA (0 for the isotropic kernel) */
    double field_ms; /* sparse grid: sampling the field and marching cubes */
    double mesh_ms; /* stitching, smoothing, normals */
    double total_ms;
    int blocks; /* 16³-cell blocks sampled */
    int surface_blocks; /* of which the surface crosses */
    size_t peak_bytes; /* the largest working memory held at once, mesh included */
} pbf_surface_stats;

/* The surface of count particles (positions xyz, m) as a closed, manifold mesh, into *out
 * (free it with pbf_mesh_free). No particles gives an empty mesh. A non-finite position fails
 * with PBF_ERR_INVALID_ARG naming the particle; particles spread too far apart for the grid
 * (more than 2^24 cells along an axis) fail with a message that says so. stats may be NULL. */
PBF_API pbf_status pbf_surface_reconstruct(const pbf_surface_def *def, const float *positions,
                                           int count, pbf_mesh *out, pbf_surface_stats *stats,
                                           char *err, size_t err_size);

/* Measures of a mesh, for checks and tests. */
typedef struct pbf_mesh_info {
    double area; /* m² */
    double volume; /* m³, signed: positive when the triangles face outwards */
    long long edges; /* distinct undirected edges */
    long long boundary_edges; /* edges with one triangle: holes (0 when watertight) */
    long long nonmanifold_edges; /* edges with more than two triangles, or two with the same
                                  * direction (inconsistent orientation) */
    long long degenerate_triangles; /* triangles that repeat a vertex index */
    int components; /* connected pieces */
    int euler; /* V − E + F (2 per closed piece of genus 0) */
} pbf_mesh_info;

/* Watertight and manifold when boundary_edges, nonmanifold_edges and degenerate_triangles are
 * all 0. Fails only when out of memory or on a vertex index out of range. */
PBF_API pbf_status pbf_mesh_measure(const pbf_mesh *mesh, pbf_mesh_info *info, char *err,
                                    size_t err_size);

typedef enum pbf_mesh_format {
    PBF_MESH_PLY = 1, /* binary little-endian: float x y z nx ny nz; faces uchar count, int */
    PBF_MESH_OBJ = 2 /* text: v, vn and f lines (1-based, f a//a b//b c//c) */
} pbf_mesh_format;

/* Writes the mesh to path, atomically (temporary name, fsync, rename), like the particle
 * exporters; an empty mesh gives a valid empty file. */
PBF_API pbf_status pbf_mesh_write(const pbf_mesh *mesh, pbf_mesh_format format, const char *path,
                                  char *err, size_t err_size);
/* Reads a PLY file written by pbf_mesh_write (positions, normals when present, triangles), or
 * by pbf_export_solids_write (up to two 32-bit face properties after the list are skipped).
 * Errors name the file and what was wrong. */
PBF_API pbf_status pbf_mesh_read_ply(const char *path, pbf_mesh *out, char *err, size_t err_size);

/* OpenVDB level sets, for the VFX tools (docs/surface.md): Houdini reads .vdb files natively,
 * Blender imports them as volume objects.
 *
 * Writes a closed mesh (pbf_surface_reconstruct's are) as a narrow-band signed distance field:
 * one float grid named "surface", of class level set, negative inside the fluid and positive
 * outside, in metres. Its transform is a uniform scale by voxel_size (m): voxel (i, j, k) is
 * centred at voxel_size · (i, j, k), in pbf's coordinates (y up; Blender, z up, needs the object
 * turned by +90° about x). The voxels within 3 voxel sizes of the surface (OpenVDB's standard
 * half width) hold their signed distance to the mesh's triangles, by OpenVDB's meshToLevelSet
 * (exact at nearly every voxel; within 0.01 voxel at the few whose closest triangle it takes
 * from a neighbour, when the voxel is the mesh's cell: docs/surface.md); the rest are inactive
 * and hold the background, +3 voxel sizes outside and -3 inside. An empty mesh gives an empty
 * grid.
 *
 * threads: TBB threads for the conversion, 0 as many as TBB gives. The file is written under a
 * temporary name, synced and renamed, so it is complete or absent. Errors name the file:
 * PBF_ERR_INVALID_ARG for voxel_size not finite and > 0, a vertex index out of range or a mesh
 * wider than 2^30 voxels; PBF_ERR_IO when it cannot be written (the system's reason);
 * PBF_ERR_OUT_OF_MEMORY; PBF_ERR_UNSUPPORTED where pbf was built without OpenVDB. */
PBF_API pbf_status pbf_mesh_write_vdb(const pbf_mesh *mesh, double voxel_size, int threads,
                                      const char *path, char *err, size_t err_size);
/* 1 when pbf_mesh_write_vdb is built in (OpenVDB found at configure time), else 0. */
PBF_API int pbf_vdb_available(void);

#ifdef __cplusplus
}
#endif

#endif /* PBF_SURFACE_H */
