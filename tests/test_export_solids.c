/* The mesh solids' per-frame file (pbf_export_solids_write): scenes/floating.json (at twice its
 * particle radius) after 20 steps, the bodies moved and turned; the PLY's header comments give
 * every body's pose as pbf_world_mesh_state, its vertices are the mesh's triangles placed by
 * pbf_world_mesh_transform, its faces index the right vertices and name their solid; the VTK
 * file holds the same points (big-endian), the poses as field data and the solid per cell; the
 * PLY reads back with pbf_mesh_read_ply (as `pbf render` draws it). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_files.h"
#include "pbf/export.h"
#include "pbf/geometry.h"
#include "pbf/scene.h"
#include "pbf/surface.h"
#include "test.h"

static char dir[256];
static unsigned char file[1 << 20];

static size_t read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 0;
    size_t n = fread(file, 1, sizeof file - 1, f);
    fclose(f);
    file[n] = 0;
    return n;
}

static float get_f32(const unsigned char *p, int big_endian) {
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u |= (uint32_t)p[big_endian ? 3 - k : k] << (8 * k);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int32_t get_i32(const unsigned char *p, int big_endian) {
    float f = get_f32(p, big_endian);
    int32_t i;
    memcpy(&i, &f, 4);
    return i;
}

/* Where the binary data after the line starting with `key` begins, or NULL. */
static const unsigned char *after_line(const char *key, size_t size) {
    const char *at = NULL;
    for (size_t i = 0; i + strlen(key) < size; ++i) {
        if ((i == 0 || file[i - 1] == '\n') && memcmp(file + i, key, strlen(key)) == 0) {
            at = (const char *)file + i;
            break;
        }
    }
    if (at == NULL) return NULL;
    const char *nl = strchr(at, '\n');
    return nl ? (const unsigned char *)nl + 1 : NULL;
}

static int export_solids(void) {
    char path[1024], err[PBF_ERROR_SIZE];
    const char *root = getenv("PBF_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/scenes/floating.json", root ? root : ".");
    const char *overrides[1] = {"fluid.particle_radius=0.02"};
    static pbf_scene scene;
    ENSURE(pbf_scene_load(path, overrides, 1, &scene, err, sizeof err) == PBF_OK);
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(&scene, &w, err, sizeof err) == PBF_OK);
    for (int i = 0; i < 20; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    const int meshes = pbf_world_mesh_count(w);
    ENSURE(meshes == 3);
    int total_v = 0, total_t = 0;
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv;
        total_t += pbf_world_mesh_triangles(w, i, &v, &nv, &t);
        total_v += nv;
    }

    /* PLY */
    snprintf(path, sizeof path, "%s/solids_00020.ply", dir);
    ENSURE(pbf_export_solids_write(w, PBF_FORMAT_PLY, path, err, sizeof err) == PBF_OK);
    size_t size = read_all(path);
    ENSURE(size > 0 && memcmp(file, "ply\nformat binary_little_endian 1.0\n", 36) == 0);
    char expect[256];
    snprintf(expect, sizeof expect, "element vertex %d\n", total_v);
    ENSURE(strstr((const char *)file, expect) != NULL);
    snprintf(expect, sizeof expect, "element face %d\n", total_t);
    ENSURE(strstr((const char *)file, expect) != NULL);
    for (int i = 0; i < meshes; ++i) {
        pbf_mesh_solid_state s = pbf_world_mesh_state(w, i);
        char key[64];
        snprintf(key, sizeof key, "comment solid %d ", i);
        const char *c = strstr((const char *)file, key);
        ENSURE(c != NULL);
        c = strstr(c, "position");
        double p[3], q[4];
        ENSURE(sscanf(c, "position %lf %lf %lf orientation %lf %lf %lf %lf", &p[0], &p[1], &p[2],
                      &q[0], &q[1], &q[2], &q[3]) == 7);
        ENSURE_NEAR(p[0], s.position.x, 1e-6);
        ENSURE_NEAR(p[1], s.position.y, 1e-6);
        ENSURE_NEAR(p[2], s.position.z, 1e-6);
        for (int k = 0; k < 4; ++k) ENSURE_NEAR(q[k], s.orientation[k], 1e-6);
        /* the bodies have moved from where they were put, and turned */
        ENSURE(fabs(p[1] - scene.meshes[i].position.y) > 1e-4);
        printf("  solid %d: position (%.4f %.4f %.4f), orientation (%.4f %.4f %.4f %.4f)\n", i,
               p[0], p[1], p[2], q[0], q[1], q[2], q[3]);
    }
    const unsigned char *body = after_line("end_header", size);
    ENSURE(body != NULL);
    ENSURE((size_t)(body - file) + 12 * (size_t)total_v + 17 * (size_t)total_t == size);
    const unsigned char *faces = body + 12 * total_v;
    int first = 0, face = 0;
    for (int i = 0; i < meshes; ++i) {
        const float *v;
        const int32_t *t;
        int nv, nt = pbf_world_mesh_triangles(w, i, &v, &nv, &t);
        float a[12];
        pbf_world_mesh_transform(w, i, a);
        for (int j = 0; j < nv; ++j)
            for (int k = 0; k < 3; ++k) {
                float want = a[4 * k] * v[3 * j] + a[4 * k + 1] * v[3 * j + 1] +
                             a[4 * k + 2] * v[3 * j + 2] + a[4 * k + 3];
                ENSURE(get_f32(body + 12 * (first + j) + 4 * k, 0) == want);
            }
        for (int j = 0; j < nt; ++j, ++face) {
            const unsigned char *f = faces + 17 * face;
            ENSURE(f[0] == 3);
            for (int k = 0; k < 3; ++k) ENSURE(get_i32(f + 1 + 4 * k, 0) == first + t[3 * j + k]);
            ENSURE(get_i32(f + 13, 0) == i);
        }
        first += nv;
    }

    /* what `pbf render` reads back (pbf_mesh_read_ply skips the solid index) */
    pbf_mesh back;
    ENSURE(pbf_mesh_read_ply(path, &back, err, sizeof err) == PBF_OK);
    ENSURE(back.vertex_count == total_v && back.triangle_count == total_t);
    ENSURE(back.positions[3 * total_v - 1] == get_f32(body + 12 * total_v - 4, 0));
    ENSURE(back.triangles[3 * total_t - 1] == get_i32(faces + 17 * total_t - 8, 0));
    pbf_mesh_free(&back);

    /* VTK: the same points, the poses as field data, the solid per cell */
    char ply_points[12 * 64];
    memcpy(ply_points, body, sizeof ply_points);
    snprintf(path, sizeof path, "%s/solids_00020.vtk", dir);
    ENSURE(pbf_export_solids_write(w, PBF_FORMAT_VTK, path, err, sizeof err) == PBF_OK);
    size = read_all(path);
    ENSURE(size > 0 && memcmp(file, "# vtk DataFile Version 3.0\n", 27) == 0);
    ENSURE(after_line("DATASET POLYDATA", size) != NULL);
    ENSURE(after_line("FIELD FieldData 3", size) != NULL);
    const unsigned char *pos = after_line("position 3 3 float", size);
    ENSURE(pos != NULL);
    pbf_mesh_solid_state s2 = pbf_world_mesh_state(w, 2);
    ENSURE(get_f32(pos + 24, 1) == s2.position.x && get_f32(pos + 28, 1) == s2.position.y);
    const unsigned char *ori = after_line("orientation 4 3 float", size);
    ENSURE(ori != NULL && get_f32(ori + 32, 1) == s2.orientation[0]);
    snprintf(expect, sizeof expect, "POINTS %d float", total_v);
    const unsigned char *pts = after_line(expect, size);
    ENSURE(pts != NULL);
    for (int j = 0; j < 3 * 64 && j < 3 * total_v; ++j)
        ENSURE(get_f32(pts + 4 * j, 1) == get_f32((const unsigned char *)ply_points + 4 * j, 0));
    snprintf(expect, sizeof expect, "POLYGONS %d %d", total_t, 4 * total_t);
    const unsigned char *polys = after_line(expect, size);
    ENSURE(polys != NULL && get_i32(polys, 1) == 3);
    snprintf(expect, sizeof expect, "CELL_DATA %d", total_t);
    ENSURE(after_line(expect, size) != NULL);
    const unsigned char *cells = after_line("LOOKUP_TABLE default", size);
    ENSURE(cells != NULL && get_i32(cells + 4 * (total_t - 1), 1) == 2);
    ENSURE((size_t)(cells - file) + 4 * (size_t)total_t + 1 == size);

    /* errors */
    ENSURE(pbf_export_solids_write(w, PBF_FORMAT_PLY | PBF_FORMAT_VTK, path, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    ENSURE(pbf_export_solids_write(w, PBF_FORMAT_PLY, "/nonexistent/x.ply", err, sizeof err) ==
           PBF_ERR_IO);
    pbf_world_destroy(w);
    return 0;
}

int main(void) {
    int test_failures_ = 0;
    if (!pbf_mesh_import_available()) {
        printf("mesh import not built (PBF_MESH=OFF): skipped\n");
        return 77;
    }
    if (test_mesh_cache_dir(dir, sizeof dir, "test_export_solids") != 0) return 1;
    RUN_TEST(export_solids);
    test_mesh_remove_dir(dir);
    return test_failures_ == 0 ? 0 : 1;
}
