/* Mesh files for the tests, written by the tests themselves: boxes, icospheres and plates as
 * OBJ, ASCII or binary STL and binary PLY, all with outward-facing triangles; and the tests' own
 * field cache folder. Needs _POSIX_C_SOURCE 200809L (mkdtemp, setenv) before any include. */
#ifndef PBF_TEST_MESH_FILES_H
#define PBF_TEST_MESH_FILES_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct test_mesh {
    int nv, nt;
    float *v; /* 3 nv */
    int *t; /* 3 nt */
} test_mesh;

static inline void test_mesh_free(test_mesh *m) {
    free(m->v);
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* An axis-aligned box lo..hi, 8 vertices, 12 triangles. */
static inline test_mesh test_mesh_box(const float lo[3], const float hi[3]) {
    test_mesh m;
    m.nv = 8;
    m.nt = 12;
    m.v = malloc(24 * sizeof *m.v);
    m.t = malloc(36 * sizeof *m.t);
    for (int c = 0; c < 8; ++c) {
        m.v[3 * c] = (c & 1) ? hi[0] : lo[0];
        m.v[3 * c + 1] = (c & 2) ? hi[1] : lo[1];
        m.v[3 * c + 2] = (c & 4) ? hi[2] : lo[2];
    }
    static const int quads[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                    {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; ++f) {
        const int *q = quads[f];
        int *t = m.t + 6 * f;
        t[0] = q[0], t[1] = q[1], t[2] = q[2];
        t[3] = q[0], t[4] = q[2], t[5] = q[3];
    }
    return m;
}

/* A torus of major radius R and minor radius a about (cx, cy, cz) in the y = cy plane, nu x nv
 * quads (2 nu nv triangles). */
static inline test_mesh test_mesh_torus(float cx, float cy, float cz, float R, float a, int nu,
                                        int nv) {
    test_mesh m;
    m.nv = nu * nv;
    m.nt = 2 * nu * nv;
    m.v = malloc((size_t)m.nv * 3 * sizeof *m.v);
    m.t = malloc((size_t)m.nt * 3 * sizeof *m.t);
    for (int i = 0; i < nu; ++i)
        for (int j = 0; j < nv; ++j) {
            double u = 2.0 * 3.14159265358979 * i / nu, v = 2.0 * 3.14159265358979 * j / nv;
            float *p = m.v + 3 * (i * nv + j);
            p[0] = cx + (float)((R + a * cos(v)) * cos(u));
            p[1] = cy + (float)(a * sin(v));
            p[2] = cz + (float)((R + a * cos(v)) * sin(u));
        }
    int t = 0;
    for (int i = 0; i < nu; ++i)
        for (int j = 0; j < nv; ++j) {
            int a0 = i * nv + j, a1 = ((i + 1) % nu) * nv + j, b0 = i * nv + (j + 1) % nv,
                b1 = ((i + 1) % nu) * nv + (j + 1) % nv;
            int *q = m.t + 3 * t;
            q[0] = a0, q[1] = b0, q[2] = b1, q[3] = a0, q[4] = b1, q[5] = a1;
            t += 2;
        }
    return m;
}

/* An icosphere: the icosahedron subdivided `levels` times (20·4^levels triangles). */
static inline test_mesh test_mesh_sphere(const float c[3], float radius, int levels) {
    const double g = (1.0 + sqrt(5.0)) / 2.0;
    const double base[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0},
                                {0, -1, g}, {0, 1, g}, {0, -1, -g}, {0, 1, -g},
                                {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    static const int faces[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                     {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                     {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                     {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    int nt = 20;
    for (int l = 0; l < levels; ++l) nt *= 4;
    /* every triangle gets its own three corners; the library welds them */
    double *tri = malloc((size_t)nt * 9 * sizeof *tri),
           *next = malloc((size_t)nt * 9 * sizeof *next);
    for (int f = 0; f < 20; ++f)
        for (int k = 0; k < 3; ++k)
            for (int a = 0; a < 3; ++a) tri[9 * f + 3 * k + a] = base[faces[f][k]][a];
    int count = 20;
    for (int l = 0; l < levels; ++l) {
        for (int f = 0; f < count; ++f) {
            const double *p = tri + 9 * f;
            double m[3][3];
            for (int e = 0; e < 3; ++e)
                for (int a = 0; a < 3; ++a)
                    m[e][a] = 0.5 * (p[3 * e + a] + p[3 * ((e + 1) % 3) + a]);
            const double *corners[4][3] = {
                {p, m[0], m[2]}, {m[0], p + 3, m[1]}, {m[2], m[1], p + 6}, {m[0], m[1], m[2]}};
            for (int s = 0; s < 4; ++s)
                for (int k = 0; k < 3; ++k)
                    for (int a = 0; a < 3; ++a)
                        next[9 * (4 * f + s) + 3 * k + a] = corners[s][k][a];
        }
        count *= 4;
        double *t = tri;
        tri = next;
        next = t;
    }
    test_mesh m;
    m.nv = 3 * nt;
    m.nt = nt;
    m.v = malloc((size_t)m.nv * 3 * sizeof *m.v);
    m.t = malloc((size_t)nt * 3 * sizeof *m.t);
    for (int i = 0; i < m.nv; ++i) {
        const double *p = tri + 3 * i;
        double len = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        for (int a = 0; a < 3; ++a) m.v[3 * i + a] = (float)(c[a] + radius * p[a] / len);
        m.t[i] = i;
    }
    free(tri);
    free(next);
    return m;
}

static inline int test_mesh_write_obj(const char *path, const test_mesh *m) {
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fprintf(f, "# written by the pbf tests\n");
    for (int i = 0; i < m->nv; ++i)
        fprintf(f, "v %.9g %.9g %.9g\n", m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
    for (int t = 0; t < m->nt; ++t)
        fprintf(f, "f %d %d %d\n", m->t[3 * t] + 1, m->t[3 * t + 1] + 1, m->t[3 * t + 2] + 1);
    return fclose(f);
}

static inline void test_mesh_normal(const test_mesh *m, int t, float n[3]) {
    const float *a = m->v + 3 * m->t[3 * t], *b = m->v + 3 * m->t[3 * t + 1],
                *c = m->v + 3 * m->t[3 * t + 2];
    float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]},
          w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * w[2] - u[2] * w[1];
    n[1] = u[2] * w[0] - u[0] * w[2];
    n[2] = u[0] * w[1] - u[1] * w[0];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; ++k) n[k] = len > 0 ? n[k] / len : 0;
}

static inline int test_mesh_write_stl_ascii(const char *path, const test_mesh *m) {
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fprintf(f, "solid test\n");
    for (int t = 0; t < m->nt; ++t) {
        float n[3];
        test_mesh_normal(m, t, n);
        fprintf(f, "facet normal %g %g %g\n outer loop\n", n[0], n[1], n[2]);
        for (int k = 0; k < 3; ++k) {
            const float *p = m->v + 3 * m->t[3 * t + k];
            fprintf(f, "  vertex %.9g %.9g %.9g\n", p[0], p[1], p[2]);
        }
        fprintf(f, " endloop\nendfacet\n");
    }
    fprintf(f, "endsolid test\n");
    return fclose(f);
}

static inline int test_mesh_write_stl_binary(const char *path, const test_mesh *m) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    char header[80];
    memset(header, 0, sizeof header);
    snprintf(header, sizeof header, "pbf test mesh");
    fwrite(header, 1, 80, f);
    uint32_t n = (uint32_t)m->nt;
    fwrite(&n, 4, 1, f);
    for (int t = 0; t < m->nt; ++t) {
        float rec[12];
        test_mesh_normal(m, t, rec);
        for (int k = 0; k < 3; ++k) memcpy(rec + 3 + 3 * k, m->v + 3 * m->t[3 * t + k], 12);
        fwrite(rec, 4, 12, f);
        uint16_t attr = 0;
        fwrite(&attr, 2, 1, f);
    }
    return fclose(f);
}

static inline int test_mesh_write_ply(const char *path, const test_mesh *m) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    fprintf(f,
            "ply\nformat binary_little_endian 1.0\nelement vertex %d\nproperty float x\nproperty "
            "float y\nproperty float z\nelement face %d\nproperty list uchar int "
            "vertex_indices\nend_header\n",
            m->nv, m->nt);
    fwrite(m->v, 4, 3 * (size_t)m->nv, f);
    for (int t = 0; t < m->nt; ++t) {
        unsigned char three = 3;
        fwrite(&three, 1, 1, f);
        fwrite(m->t + 3 * t, 4, 3, f);
    }
    return fclose(f);
}

/* A fresh folder under $TMPDIR (pbf_<name>_XXXXXX) in dir, made the field cache of this process
 * (PBF_CACHE_DIR) so the tests bake and load their own fields. 0, or -1. */
static inline int test_mesh_cache_dir(char *dir, size_t size, const char *name) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/pbf_%s_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp", name);
    if (mkdtemp(dir) == NULL) return -1;
    return setenv("PBF_CACHE_DIR", dir, 1);
}

static inline void test_mesh_remove_dir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

#endif
