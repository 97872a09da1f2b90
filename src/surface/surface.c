/* Surface reconstruction: the public entry points of include/pbf/surface.h and the order of the
 * stages (anisotropy.c -> field.c -> marching_cubes.c -> mesh_ops.c). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mesh_ops.h"
#include "surface_grid.h"
#include "surface_util.h"

pbf_surface_def pbf_default_surface_def(void) {
    pbf_surface_def d;
    memset(&d, 0, sizeof d);
    d.particle_radius = 0.0f;
    d.kernel = PBF_SURFACE_ANISOTROPIC;
    d.kernel_radius = 4.0f;
    d.cell_size = 1.0f;
    d.iso = 0.5f;
    d.anisotropy_radius = 5.0f;
    d.smoothing = 0.5f;
    d.max_stretch = 4.0f;
    d.min_neighbors = 12;
    d.isolated_scale = 0.5f;
    d.smooth_iterations = 2;
    d.decimate = 1.0f;
    d.threads = 0;
    return d;
}

static int out_of_range(double v, double lo, double hi, int lo_open, int hi_open) {
    if (!isfinite(v)) return 1;
    return (lo_open ? v <= lo : v < lo) || (hi_open ? v >= hi : v > hi);
}

pbf_status pbf_surface_check_def(const pbf_surface_def *d, char *err, size_t err_size) {
    if (d == NULL) {
        surface_format(err, err_size, "surface: no definition (NULL)");
        return PBF_ERR_INVALID_ARG;
    }
#define RANGE(field, lo, hi, lo_open, hi_open, text)                                               \
    if (out_of_range((double)d->field, lo, hi, lo_open, hi_open)) {                                \
        surface_format(err, err_size, "surface: %s = %g is out of range; expected %s", #field,     \
                       (double)d->field, text);                                                    \
        return PBF_ERR_INVALID_ARG;                                                                \
    }
    RANGE(particle_radius, 0.0, 1e6, 1, 0, "a radius > 0 in m (the scene's world.particle_radius)")
    RANGE(kernel_radius, 2.0, 12.0, 0, 0, "[2, 12] particle radii")
    RANGE(cell_size, 0.25, 4.0, 0, 0, "[0.25, 4] particle radii")
    RANGE(iso, 0.0, 1.0, 1, 1, "(0, 1)")
    RANGE(anisotropy_radius, 2.0, 16.0, 0, 0, "[2, 16] particle radii")
    RANGE(smoothing, 0.0, 1.0, 0, 0, "[0, 1]")
    RANGE(max_stretch, 1.0, 16.0, 0, 0, "[1, 16]")
    RANGE(min_neighbors, 0.0, 1000.0, 0, 0, "[0, 1000]")
    RANGE(isolated_scale, 0.0, 1.0, 1, 0, "(0, 1]")
    RANGE(smooth_iterations, 0.0, 100.0, 0, 0, "[0, 100]")
    RANGE(decimate, 0.05, 1.0, 0, 0, "[0.05, 1] (the fraction of triangles to keep; 1: all)")
    RANGE(threads, 0.0, 4096.0, 0, 0, "[0, 4096] (0: all cores)")
#undef RANGE
    if (d->kernel != PBF_SURFACE_ANISOTROPIC && d->kernel != PBF_SURFACE_ISOTROPIC) {
        surface_format(err, err_size,
                       "surface: kernel = %d; expected anisotropic (0) or isotropic (1)",
                       (int)d->kernel);
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

static pbf_status check_input(const pbf_surface_def *def, const float *positions, int count,
                              char *err, size_t err_size) {
    pbf_status st = pbf_surface_check_def(def, err, err_size);
    if (st != PBF_OK) return st;
    if (count < 0 || (count > 0 && positions == NULL)) {
        surface_format(err, err_size, "surface: %d particles at %p", count,
                       (const void *)positions);
        return PBF_ERR_INVALID_ARG;
    }
    int bad = surface_find_nonfinite(positions, count, surface_threads(def));
    if (bad >= 0) {
        const float *p = positions + 3 * (size_t)bad;
        surface_format(err, err_size,
                       "particle %d has a non-finite position (%g, %g, %g): no surface from "
                       "NaN or infinity",
                       bad, (double)p[0], (double)p[1], (double)p[2]);
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

pbf_status pbf_surface_anisotropy(const pbf_surface_def *def, const float *positions, int count,
                                  float *centers, float *axes, char *err, size_t err_size) {
    pbf_status st = check_input(def, positions, count, err, err_size);
    if (st != PBF_OK || count == 0) return st;
    float *c = centers != NULL ? centers : malloc(3 * (size_t)count * sizeof *c);
    float *a = axes != NULL ? axes : malloc(9 * (size_t)count * sizeof *a);
    if (c == NULL || a == NULL) {
        surface_format(err, err_size, "out of memory for the anisotropy of %d particles", count);
        st = PBF_ERR_OUT_OF_MEMORY;
    } else {
        st = surface_anisotropy_run(def, positions, count, c, a, err, err_size);
    }
    if (c != centers) free(c);
    if (a != axes) free(a);
    return st;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

pbf_status pbf_surface_reconstruct(const pbf_surface_def *def, const float *positions, int count,
                                   pbf_mesh *out, pbf_surface_stats *stats_out, char *err,
                                   size_t err_size) {
    pbf_surface_stats stats;
    memset(&stats, 0, sizeof stats);
    if (stats_out != NULL) *stats_out = stats;
    if (out == NULL) {
        surface_format(err, err_size, "surface: no mesh to write into (NULL)");
        return PBF_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof *out);
    pbf_status st = check_input(def, positions, count, err, err_size);
    if (st != PBF_OK || count == 0) return st;
    const int threads = surface_threads(def);
    const double t0 = now_ms();

    float *centers = malloc(3 * (size_t)count * sizeof *centers);
    float *axes = malloc(9 * (size_t)count * sizeof *axes);
    mc_table *table = malloc(sizeof *table);
    surface_kernels kernels;
    surface_grid grid;
    memset(&kernels, 0, sizeof kernels);
    memset(&grid, 0, sizeof grid);
    mc_block *blocks = NULL;
    size_t bytes = 12 * sizeof(float) * (size_t)count + sizeof *table;
    if (centers == NULL || axes == NULL || table == NULL) goto oom;
    st = surface_anisotropy_run(def, positions, count, centers, axes, err, err_size);
    if (st != PBF_OK) goto fail;
    const double t1 = now_ms();
    stats.anisotropy_ms = def->kernel == PBF_SURFACE_ANISOTROPIC ? t1 - t0 : 0.0;
    if (mc_table_build(table) != 0) {
        surface_format(err, err_size, "surface: internal error building the case table");
        st = PBF_ERR_INVALID_ARG;
        goto fail;
    }
    double origin[3];
    surface_grid_origin(def, centers, axes, count, origin);
    if (surface_kernels_build(&kernels, def, centers, axes, count, origin) != 0) goto oom;
    free(centers);
    free(axes);
    centers = axes = NULL;
    bytes += 16 * sizeof(float) * (size_t)count;
    st = surface_grid_build(&grid, def, &kernels, origin, err, err_size);
    if (st != PBF_OK) goto fail;
    bytes +=
        12 * (size_t)count + 12 * (size_t)grid.particles.cell_count + 20 * (size_t)grid.block_count;

    /* Pass 1: sample and scan every block. */
    const int nb = grid.block_count;
    blocks = calloc((size_t)(nb > 0 ? nb : 1), sizeof *blocks);
    if (blocks == NULL) goto oom;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        float *values = malloc(SURFACE_BLOCK_POINTS * sizeof *values);
        if (values == NULL) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (int b = 0; b < nb; ++b) {
            if (values == NULL) continue;
            surface_grid_sample(&grid, b, values);
            if (mc_block_scan(&grid, table, b, values, &blocks[b]) != 0) failed = 1;
        }
        free(values);
    }
    if (failed) goto oom;
    bytes += (size_t)threads * SURFACE_BLOCK_POINTS * sizeof(float) + (size_t)nb * sizeof *blocks;
    int64_t verts = 0, tris = 0;
    for (int b = 0; b < nb; ++b) {
        blocks[b].vert_offset = verts;
        blocks[b].tri_offset = tris;
        verts += blocks[b].edge_count + blocks[b].extra_count;
        tris += blocks[b].tri_count;
        stats.surface_blocks += blocks[b].cell_count > 0;
        bytes += (size_t)blocks[b].edge_count * 16 + (size_t)blocks[b].cell_count * 6;
    }
    stats.blocks = nb;
    if (verts > INT32_MAX / 3 || tris > INT32_MAX / 3) {
        surface_format(err, err_size,
                       "surface: %lld vertices and %lld triangles are more than a mesh can hold; "
                       "use a larger cell_size",
                       (long long)verts, (long long)tris);
        st = PBF_ERR_INVALID_ARG;
        goto fail;
    }
    out->vertex_count = (int)verts;
    out->triangle_count = (int)tris;
    out->positions = malloc(3 * (size_t)(verts > 0 ? verts : 1) * sizeof *out->positions);
    out->triangles = malloc(3 * (size_t)(tris > 0 ? tris : 1) * sizeof *out->triangles);
    if (out->positions == NULL || out->triangles == NULL) goto oom;
    bytes += (size_t)verts * 24 + (size_t)tris * 12;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16)
    for (int b = 0; b < nb; ++b)
        if (blocks[b].edge_count > 0)
            memcpy(out->positions + 3 * blocks[b].vert_offset, blocks[b].verts,
                   3 * (size_t)blocks[b].edge_count * sizeof(float));

            /* Pass 2: triangles. */
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        int32_t *map = malloc(3 * SURFACE_BLOCK * SURFACE_BLOCK * SURFACE_BLOCK * sizeof *map);
        if (map == NULL) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (int b = 0; b < nb; ++b) {
            if (map == NULL) continue;
            int bad =
                mc_block_triangles(&grid, table, blocks, b, map, out->positions, out->triangles);
            if (bad != 0) failed = 2;
        }
        free(map);
    }
    if (failed & 2) {
        surface_format(err, err_size, "surface: internal error: a grid edge without its vertex");
        st = PBF_ERR_INVALID_ARG;
        goto fail;
    }
    if (failed) goto oom;
    stats.peak_bytes = bytes;
    for (int b = 0; b < nb; ++b) mc_block_free(&blocks[b]);
    free(blocks);
    blocks = NULL;
    surface_grid_free(&grid);
    surface_kernels_free(&kernels);
    free(table);
    table = NULL;
    const double t2 = now_ms();
    stats.field_ms = t2 - t1;
    if (surface_mesh_taubin(out, def->smooth_iterations, threads) != 0 ||
        surface_mesh_decimate(out, def->decimate) != 0 || surface_mesh_normals(out, threads) != 0)
        goto oom;
    const double t3 = now_ms();
    stats.mesh_ms = t3 - t2;
    stats.total_ms = t3 - t0;
    if (stats_out != NULL) *stats_out = stats;
    return PBF_OK;
oom:
    surface_format(err, err_size, "out of memory reconstructing the surface of %d particles",
                   count);
    st = PBF_ERR_OUT_OF_MEMORY;
fail:
    if (blocks != NULL)
        for (int b = 0; b < grid.block_count; ++b) mc_block_free(&blocks[b]);
    free(blocks);
    surface_grid_free(&grid);
    surface_kernels_free(&kernels);
    free(centers);
    free(axes);
    free(table);
    pbf_mesh_free(out);
    return st;
}
