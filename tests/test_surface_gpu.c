/* The particles' anisotropy on the GPU (pbf_surface_gpu_anisotropy, include/pbf/surface.h)
 * against the CPU's (pbf_surface_anisotropy). Needs an NVIDIA GPU: where none can be used it
 * prints why and exits 77, which CTest reports as a skip, never as a pass.
 *
 *  - a block with a wavy top, a thin sheet and three isolated particles: centres within
 *    1e-5 r and a few float roundings of the CPU's, ellipsoids A Aᵀ within 1e-4 h² per entry
 *    (the axes' signs may differ where the eigen solver's input differs in the last bits), with
 *    and without smoothing (then the centres are the positions, bit for bit);
 *  - the isolated particles: the small round kernel isolated_scale · h, centres unmoved;
 *  - two runs give the same bits, and NULL outputs the same as given ones;
 *  - the isotropic kernel: the positions and h times the identity, the CPU's bits;
 *  - a count that grows (the scratch grows) and shrinks;
 *  - count 0, a bad def, a NULL scratch, a non-finite position, particles spread too far and
 *    host memory: errors with messages, nothing written. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "pbf/surface.h"
#include "test.h"

static unsigned rng = 12345u;
static float uniform(void) { /* LCG: deterministic, no libc rand */
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) * (1.0f / 16777216.0f);
}

#define RADIUS 0.01f /* particle radius r, m */
#define ISOLATED 3

/* The scene: a block of columns whose heights follow a wave (a curved free surface), a sheet
 * one particle thick above it, and ISOLATED particles far from both, last. */
static float *scene(int *count) {
    int cap = 24 * 24 * 14 + 30 * 30 + ISOLATED, n = 0;
    float *p = malloc(3 * (size_t)cap * sizeof *p);
    for (int z = 0; z < 24; ++z)
        for (int x = 0; x < 24; ++x) {
            int top = 8 + (int)lrint(3.0 * sin(0.5 * x) * cos(0.4 * z) + 3.0);
            for (int y = 0; y < top; ++y, ++n) {
                p[3 * n + 0] = 2 * RADIUS * x + 0.2f * RADIUS * (uniform() - 0.5f);
                p[3 * n + 1] = 2 * RADIUS * y + 0.2f * RADIUS * (uniform() - 0.5f);
                p[3 * n + 2] = 2 * RADIUS * z + 0.2f * RADIUS * (uniform() - 0.5f);
            }
        }
    for (int z = 0; z < 30; ++z)
        for (int x = 0; x < 30; ++x, ++n) {
            p[3 * n + 0] = 0.6f + 2 * RADIUS * x;
            p[3 * n + 1] = 0.5f + 0.1f * RADIUS * uniform();
            p[3 * n + 2] = 2 * RADIUS * z;
        }
    const float lone[ISOLATED][3] = {{-0.3f, 0.9f, 0.1f}, {1.2f, -0.2f, 0.7f}, {0.4f, 1.1f, -0.4f}};
    for (int k = 0; k < ISOLATED; ++k, ++n)
        for (int d = 0; d < 3; ++d) p[3 * n + d] = lone[k][d];
    *count = n;
    return p;
}

static pbf_surface_def def_for(void) {
    pbf_surface_def d = pbf_default_surface_def();
    d.particle_radius = RADIUS;
    return d;
}

/* Device copies of the positions and room for the results, and the host copies of both. */
typedef struct run_buffers {
    int n;
    float *d_pos, *d_centers, *d_axes;
    float *centers, *axes;
} run_buffers;

static int buffers_create(run_buffers *b, const float *pos, int n) {
    memset(b, 0, sizeof *b);
    b->n = n;
    const size_t v3 = 3 * (size_t)n * sizeof(float);
    ENSURE(cudaMalloc((void **)&b->d_pos, v3) == cudaSuccess);
    ENSURE(cudaMalloc((void **)&b->d_centers, v3) == cudaSuccess);
    ENSURE(cudaMalloc((void **)&b->d_axes, 3 * v3) == cudaSuccess);
    ENSURE(cudaMemcpy(b->d_pos, pos, v3, cudaMemcpyHostToDevice) == cudaSuccess);
    b->centers = malloc(v3);
    b->axes = malloc(3 * v3);
    ENSURE(b->centers != NULL && b->axes != NULL);
    return 0;
}

static void buffers_free(run_buffers *b) {
    cudaFree(b->d_pos);
    cudaFree(b->d_centers);
    cudaFree(b->d_axes);
    free(b->centers);
    free(b->axes);
    memset(b, 0, sizeof *b);
}

/* Fills the device outputs with NaN bits (0xff bytes), runs the GPU and reads both back. */
static pbf_status run_gpu(pbf_surface_gpu *g, const pbf_surface_def *def, run_buffers *b, char *err,
                          size_t err_size) {
    const size_t v3 = 3 * (size_t)b->n * sizeof(float);
    if (cudaMemset(b->d_centers, 0xff, v3) != cudaSuccess ||
        cudaMemset(b->d_axes, 0xff, 3 * v3) != cudaSuccess)
        return PBF_ERR_NO_DEVICE;
    pbf_status st =
        pbf_surface_gpu_anisotropy(g, def, b->d_pos, b->n, b->d_centers, b->d_axes, err, err_size);
    if (cudaMemcpy(b->centers, b->d_centers, v3, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(b->axes, b->d_axes, 3 * v3, cudaMemcpyDeviceToHost) != cudaSuccess)
        return PBF_ERR_NO_DEVICE;
    return st;
}

/* The ellipsoid's matrix A Aᵀ (independent of the axes' signs and of the order within a
 * degenerate eigenspace). */
static void ellipsoid(const float *a, double m[9]) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += (double)a[3 * i + k] * a[3 * j + k];
            m[3 * i + j] = s;
        }
}

/* GPU results against the CPU's: centres within 1e-5 r plus 4 roundings of the coordinate
 * (FLT_EPSILON |c|: the last bits of the row sums move a centre by an ulp or two, and a float
 * ulp is already 1.2e-5 r at 1 m from the origin), A Aᵀ within 1e-4 h² per entry. */
static int matches_cpu(const pbf_surface_def *def, const float *pos, int n, const float *c,
                       const float *a, const char *what) {
    float *cc = malloc(3 * (size_t)n * sizeof *cc), *ca = malloc(9 * (size_t)n * sizeof *ca);
    char err[PBF_ERROR_SIZE];
    ENSURE(cc != NULL && ca != NULL);
    ENSURE(pbf_surface_anisotropy(def, pos, n, cc, ca, err, sizeof err) == PBF_OK);
    const double h = def->kernel_radius * (double)def->particle_radius; /* as the library */
    double worst_c = 0.0, worst_share = 0.0, worst_a = 0.0;
    int bits_c = 0, bits_a = 0, far_c = 0;
    for (int i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
            const double e = fabs((double)c[3 * i + d] - cc[3 * i + d]);
            const double tol =
                1e-5 * def->particle_radius + 4.0 * FLT_EPSILON * fabs(cc[3 * i + d]);
            worst_c = e > worst_c ? e : worst_c;
            worst_share = e / tol > worst_share ? e / tol : worst_share;
            bits_c += c[3 * i + d] == cc[3 * i + d];
            far_c += !(e <= tol);
        }
        double mg[9], mc[9];
        ellipsoid(a + 9 * (size_t)i, mg);
        ellipsoid(ca + 9 * (size_t)i, mc);
        for (int k = 0; k < 9; ++k) {
            double e = fabs(mg[k] - mc[k]);
            worst_a = e > worst_a ? e : worst_a;
            bits_a += a[9 * i + k] == ca[9 * i + k];
        }
    }
    printf("  %s: %d particles, centres within %.2g r, %.2f of the tolerance (%.1f %% same "
           "bits), ellipsoids within %.2g h^2 (%.1f %% of the axes' entries same bits)\n",
           what, n, worst_c / def->particle_radius, worst_share, 100.0 * bits_c / (3.0 * n),
           worst_a / (h * h), 100.0 * bits_a / (9.0 * n));
    free(cc);
    free(ca);
    ENSURE(far_c == 0);
    ENSURE(worst_a <= 1e-4 * h * h);
    return 0;
}

static pbf_surface_gpu *gpu;

static int against_cpu(void) {
    int n;
    float *p = scene(&n);
    run_buffers b;
    if (buffers_create(&b, p, n) != 0) return 1;
    char err[PBF_ERROR_SIZE];
    const float smoothing[3] = {0.5f, 0.0f, 1.0f};
    for (int k = 0; k < 3; ++k) {
        pbf_surface_def def = def_for();
        def.smoothing = smoothing[k];
        if (k == 2) def.max_stretch = 8.0f, def.anisotropy_radius = 7.0f;
        ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
        char what[64];
        snprintf(what, sizeof what, "smoothing %.1f", (double)def.smoothing);
        if (matches_cpu(&def, p, n, b.centers, b.axes, what) != 0) return 1;
        const double h = def.kernel_radius * (double)RADIUS;
        if (def.smoothing == 0.0f) /* no smoothing: the positions themselves */
            ENSURE(memcmp(b.centers, p, 3 * (size_t)n * sizeof *p) == 0);
        /* the isolated particles: the small round kernel, the centre where the particle is */
        for (int i = n - ISOLATED; i < n; ++i) {
            const float *a = b.axes + 9 * (size_t)i;
            for (int e = 0; e < 9; ++e)
                ENSURE(a[e] == (e % 4 == 0 ? (float)(def.isolated_scale * h) : 0.0f));
            for (int d = 0; d < 3; ++d) ENSURE(b.centers[3 * i + d] == p[3 * i + d]);
        }
        /* a flat particle of the sheet: its shortest axis along y, max_stretch times shorter */
        const float *a = b.axes + 9 * (size_t)(n - ISOLATED - 30 * 30 + 15 * 30 + 15);
        double len[3];
        for (int c = 0; c < 3; ++c)
            len[c] = sqrt(a[c] * a[c] + a[3 + c] * a[3 + c] + a[6 + c] * a[6 + c]);
        ENSURE(fabs(a[3 + 2]) / len[2] > 0.99);
        ENSURE_NEAR(len[0] / len[2], def.max_stretch, 1e-3 * def.max_stretch);
    }
    buffers_free(&b);
    free(p);
    return 0;
}

/* Two runs, the same bits; NULL outputs give the others unchanged. */
static int deterministic(void) {
    int n;
    float *p = scene(&n);
    run_buffers b;
    if (buffers_create(&b, p, n) != 0) return 1;
    pbf_surface_def def = def_for();
    char err[PBF_ERROR_SIZE];
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
    float *c0 = malloc(3 * (size_t)n * sizeof *c0), *a0 = malloc(9 * (size_t)n * sizeof *a0);
    memcpy(c0, b.centers, 3 * (size_t)n * sizeof *c0);
    memcpy(a0, b.axes, 9 * (size_t)n * sizeof *a0);
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
    ENSURE(memcmp(c0, b.centers, 3 * (size_t)n * sizeof *c0) == 0);
    ENSURE(memcmp(a0, b.axes, 9 * (size_t)n * sizeof *a0) == 0);
    /* centers only, then axes only */
    ENSURE(cudaMemset(b.d_centers, 0, 3 * (size_t)n * sizeof(float)) == cudaSuccess);
    ENSURE(pbf_surface_gpu_anisotropy(gpu, &def, b.d_pos, n, b.d_centers, NULL, err, sizeof err) ==
           PBF_OK);
    ENSURE(cudaMemcpy(b.centers, b.d_centers, 3 * (size_t)n * sizeof(float),
                      cudaMemcpyDeviceToHost) == cudaSuccess);
    ENSURE(memcmp(c0, b.centers, 3 * (size_t)n * sizeof *c0) == 0);
    ENSURE(cudaMemset(b.d_axes, 0, 9 * (size_t)n * sizeof(float)) == cudaSuccess);
    ENSURE(pbf_surface_gpu_anisotropy(gpu, &def, b.d_pos, n, NULL, b.d_axes, err, sizeof err) ==
           PBF_OK);
    ENSURE(cudaMemcpy(b.axes, b.d_axes, 9 * (size_t)n * sizeof(float), cudaMemcpyDeviceToHost) ==
           cudaSuccess);
    ENSURE(memcmp(a0, b.axes, 9 * (size_t)n * sizeof *a0) == 0);
    free(c0);
    free(a0);
    buffers_free(&b);
    free(p);
    return 0;
}

/* The isotropic kernel: the CPU's bits (the positions, h times the identity). */
static int isotropic(void) {
    int n;
    float *p = scene(&n);
    run_buffers b;
    if (buffers_create(&b, p, n) != 0) return 1;
    pbf_surface_def def = def_for();
    def.kernel = PBF_SURFACE_ISOTROPIC;
    char err[PBF_ERROR_SIZE];
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
    float *cc = malloc(3 * (size_t)n * sizeof *cc), *ca = malloc(9 * (size_t)n * sizeof *ca);
    ENSURE(pbf_surface_anisotropy(&def, p, n, cc, ca, err, sizeof err) == PBF_OK);
    ENSURE(memcmp(cc, b.centers, 3 * (size_t)n * sizeof *cc) == 0);
    ENSURE(memcmp(ca, b.axes, 9 * (size_t)n * sizeof *ca) == 0);
    ENSURE(memcmp(p, b.centers, 3 * (size_t)n * sizeof *p) == 0);
    free(cc);
    free(ca);
    buffers_free(&b);
    free(p);
    return 0;
}

/* The scratch grows with the count (the scene four times, side by side) and serves a smaller
 * count after. */
static int growing(void) {
    int n;
    float *p = scene(&n);
    float *big = malloc(12 * (size_t)n * sizeof *big);
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < n; ++i)
            for (int d = 0; d < 3; ++d)
                big[3 * ((size_t)k * n + i) + d] = p[3 * i + d] + (d == 0 ? 2.0f * (float)k : 0.0f);
    pbf_surface_def def = def_for();
    char err[PBF_ERROR_SIZE];
    const int counts[3] = {n / 2, 4 * n, n};
    for (int k = 0; k < 3; ++k) {
        run_buffers b;
        if (buffers_create(&b, big, counts[k]) != 0) return 1;
        ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
        if (matches_cpu(&def, big, counts[k], b.centers, b.axes, "growing") != 0) return 1;
        buffers_free(&b);
    }
    free(big);
    free(p);
    return 0;
}

/* Errors: messages, and nothing written. */
static int bad_input(void) {
    int n;
    float *p = scene(&n);
    run_buffers b;
    if (buffers_create(&b, p, n) != 0) return 1;
    char err[PBF_ERROR_SIZE];
    pbf_surface_def def = def_for();
    /* count 0: nothing read (NULL positions are fine) */
    ENSURE(pbf_surface_gpu_anisotropy(gpu, &def, NULL, 0, NULL, NULL, err, sizeof err) == PBF_OK);
    /* a bad def, a negative count, NULL positions, no scratch */
    pbf_surface_def bad = pbf_default_surface_def(); /* no radius */
    ENSURE(run_gpu(gpu, &bad, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "particle_radius") != NULL);
    bad = def_for();
    bad.max_stretch = 0.5f;
    ENSURE(run_gpu(gpu, &bad, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "max_stretch") != NULL);
    ENSURE(pbf_surface_gpu_anisotropy(gpu, &def, b.d_pos, -1, b.d_centers, b.d_axes, err,
                                      sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_surface_gpu_anisotropy(gpu, &def, NULL, n, b.d_centers, b.d_axes, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    ENSURE(pbf_surface_gpu_anisotropy(NULL, &def, b.d_pos, n, b.d_centers, b.d_axes, err,
                                      sizeof err) == PBF_ERR_INVALID_ARG);
    /* a non-finite position: the lowest such particle named, nothing written (still NaN bits) */
    const float nan = NAN, inf = INFINITY;
    ENSURE(cudaMemcpy(b.d_pos + 3 * 1000 + 1, &inf, sizeof inf, cudaMemcpyHostToDevice) ==
           cudaSuccess);
    ENSURE(cudaMemcpy(b.d_pos + 3 * 37 + 2, &nan, sizeof nan, cudaMemcpyHostToDevice) ==
           cudaSuccess);
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    printf("  %s\n", err);
    ENSURE(strstr(err, "particle 37 ") != NULL && strstr(err, "non-finite") != NULL);
    for (int i = 0; i < 3 * n; ++i) ENSURE(isnan(b.centers[i]));
    /* one particle a hundred kilometres away: too many cells, a message */
    const float far = 1e5f;
    ENSURE(cudaMemcpy(b.d_pos, p, 3 * (size_t)n * sizeof *p, cudaMemcpyHostToDevice) ==
           cudaSuccess);
    ENSURE(cudaMemcpy(b.d_pos + 3 * 5, &far, sizeof far, cudaMemcpyHostToDevice) == cudaSuccess);
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "spread") != NULL);
    /* host memory: refused unless the device reads pageable memory (HMM), then the same bits */
    int device = 0, pageable = 0;
    ENSURE(cudaGetDevice(&device) == cudaSuccess);
    ENSURE(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) ==
           cudaSuccess);
    ENSURE(cudaMemcpy(b.d_pos, p, 3 * (size_t)n * sizeof *p, cudaMemcpyHostToDevice) ==
           cudaSuccess);
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
    pbf_status st =
        pbf_surface_gpu_anisotropy(gpu, &def, p, n, b.d_centers, b.d_axes, err, sizeof err);
    if (!pageable) {
        ENSURE(st == PBF_ERR_INVALID_ARG && strstr(err, "host memory") != NULL);
    } else {
        ENSURE(st == PBF_OK);
        float *c = malloc(3 * (size_t)n * sizeof *c);
        ENSURE(cudaMemcpy(c, b.d_centers, 3 * (size_t)n * sizeof *c, cudaMemcpyDeviceToHost) ==
               cudaSuccess);
        ENSURE(memcmp(c, b.centers, 3 * (size_t)n * sizeof *c) == 0);
        free(c);
    }
    /* and the scratch still works after all that */
    ENSURE(run_gpu(gpu, &def, &b, err, sizeof err) == PBF_OK);
    if (matches_cpu(&def, p, n, b.centers, b.axes, "after the errors") != 0) return 1;
    buffers_free(&b);
    free(p);
    return 0;
}

int main(void) {
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_surface_gpu_create(&gpu, err, sizeof err);
    if (st == PBF_ERR_NO_DEVICE || st == PBF_ERR_UNSUPPORTED) {
        printf("SKIP: %s\n", err);
        return 77; /* CTest: skipped */
    }
    if (st != PBF_OK) {
        fprintf(stderr, "pbf_surface_gpu_create: %s\n", err);
        return 1;
    }
    int test_failures_ = 0;
    RUN_TEST(against_cpu);
    RUN_TEST(deterministic);
    RUN_TEST(isotropic);
    RUN_TEST(growing);
    RUN_TEST(bad_input);
    pbf_surface_gpu_destroy(gpu);
    return test_failures_ == 0 ? 0 : 1;
}
