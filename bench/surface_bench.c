/* Surface reconstruction speed (docs/surface.md): meshes a synthetic resting block of N
 * particles (a lattice of spacing 2r with a ±0.3 r jitter, r = 0.01 m, shaped 2:1:1 like a dam
 * break's column) or the particle files given on the command line, several times, and prints
 * the best time per frame with its stages, the mesh size and the memory.
 *
 *   pbf_surface_bench [--particles 50000,1000000] [--kernel anisotropic|isotropic]
 *                     [--threads N] [--repeat K] [--cell C] [FILE.ply ...]
 *
 * Timings never enter the tests; this program is how they are measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pbf/export.h"
#include "pbf/surface.h"

static unsigned long long rng = 88172645463325252ull;
static double rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static float *synthetic_block(int n, float r, int *count) {
    /* nx = 2 ny = 2 nz (approximately), nx * ny * nz >= n, trimmed to n */
    int ny = (int)ceil(cbrt(n / 4.0)), nx = 2 * ny, nz = 2 * ny;
    rng = 88172645463325252ull; /* the same block whatever was made before */
    float *p = malloc(3 * (size_t)nx * ny * nz * sizeof *p);
    int k = 0;
    for (int y = 0; y < ny && k < n; ++y)
        for (int z = 0; z < nz && k < n; ++z)
            for (int x = 0; x < nx && k < n; ++x, ++k) {
                int l[3] = {x, y, z};
                for (int d = 0; d < 3; ++d)
                    p[3 * (size_t)k + d] = r + 2 * r * l[d] + 0.3f * r * (float)(2 * rnd() - 1);
            }
    *count = k;
    return p;
}

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int bench(const char *name, const float *p, int count, const pbf_surface_def *def,
                 int repeat) {
    double best_cpu = INFINITY;
    pbf_surface_stats best;
    memset(&best, 0, sizeof best);
    best.total_ms = INFINITY;
    pbf_mesh m;
    memset(&m, 0, sizeof m);
    char err[PBF_ERROR_SIZE];
    for (int k = 0; k < repeat; ++k) {
        pbf_surface_stats st;
        pbf_mesh_free(&m);
        double c0 = cpu_ms();
        pbf_status status = pbf_surface_reconstruct(def, p, count, &m, &st, err, sizeof err);
        double used = cpu_ms() - c0;
        if (used < best_cpu) best_cpu = used;
        if (status != PBF_OK) {
            fprintf(stderr, "pbf_surface_bench: %s: %s\n", name, err);
            return 1;
        }
        if (st.total_ms < best.total_ms) best = st;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%-22s %9d %9.1f %8.1f %8.1f %8.1f %9.1f %9.2f %10d %8d/%-8d %9.1f %9.1f\n", name, count,
           best.total_ms, best.anisotropy_ms, best.field_ms, best.mesh_ms, best_cpu,
           1e3 * best_cpu / count, m.triangle_count, best.surface_blocks, best.blocks,
           best.peak_bytes / 1048576.0, ru.ru_maxrss / 1024.0);
    fflush(stdout);
    pbf_mesh_free(&m);
    return 0;
}

int main(int argc, char **argv) {
    pbf_surface_def def = pbf_default_surface_def();
    def.particle_radius = 0.01f;
    int repeat = 3, rc = 0, files = 0;
    const char *list = "50000,1000000";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--particles") == 0 && v)
            list = v, ++i;
        else if (strcmp(a, "--threads") == 0 && v)
            def.threads = atoi(v), ++i;
        else if (strcmp(a, "--repeat") == 0 && v)
            repeat = atoi(v), ++i;
        else if (strcmp(a, "--cell") == 0 && v)
            def.cell_size = (float)atof(v), ++i;
        else if (strcmp(a, "--radius") == 0 && v)
            def.particle_radius = (float)atof(v), ++i;
        else if (strcmp(a, "--kernel") == 0 && v) {
            def.kernel =
                strcmp(v, "isotropic") == 0 ? PBF_SURFACE_ISOTROPIC : PBF_SURFACE_ANISOTROPIC;
            ++i;
        } else if (a[0] == '-') {
            fprintf(stderr, "usage: pbf_surface_bench [--particles N,M] [--kernel K] [--threads N] "
                            "[--repeat K] [--cell C] [--radius R] [FILE.ply ...]\n");
            return 2;
        } else {
            ++files;
        }
    }
    /* wall-clock ms per stage (best of the repeats), then CPU ms of all threads together and
     * CPU µs per particle: on a machine shared with other work the CPU time is the steadier */
    printf("%-22s %9s %9s %8s %8s %8s %9s %9s %10s %17s %9s %9s\n", "input", "particles",
           "ms/frame", "aniso", "field", "mesh", "cpu ms", "cpu us/p", "triangles",
           "surface/blocks", "est MiB", "RSS MiB");
    if (files > 0) {
        for (int i = 1; i < argc && rc == 0; ++i) {
            if (argv[i][0] == '-') {
                ++i;
                continue;
            }
            pbf_particles parts;
            char err[PBF_ERROR_SIZE];
            if (pbf_export_read(argv[i], &parts, err, sizeof err) != PBF_OK) {
                fprintf(stderr, "pbf_surface_bench: %s\n", err);
                return 1;
            }
            const char *base = strrchr(argv[i], '/');
            rc = bench(base ? base + 1 : argv[i], parts.positions, parts.count, &def, repeat);
            pbf_particles_free(&parts);
        }
        return rc;
    }
    for (const char *s = list; *s && rc == 0;) {
        int n = atoi(s), count;
        float *p = synthetic_block(n, def.particle_radius, &count);
        char name[64];
        snprintf(name, sizeof name, "block %d", count);
        rc = bench(name, p, count, &def, repeat);
        free(p);
        s = strchr(s, ',');
        if (s == NULL) break;
        ++s;
    }
    return rc;
}
