/* The CUDA backend's behaviour on any machine where it is built (docs/cuda.md): a
 * CUDA world either runs (a usable GPU) or fails at creation with PBF_ERR_NO_DEVICE and a
 * message that says why and what to use instead. The GPU-only parity checks are in
 * test_cuda.c (a skip without a GPU). */
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "test.h"

static int cpu_backend_is_described(void) {
    char desc[PBF_ERROR_SIZE];
    ENSURE(pbf_backend_info(PBF_BACKEND_CPU, desc, sizeof desc) == PBF_OK);
    ENSURE(strstr(desc, "CPU") != NULL);
    ENSURE(pbf_backend_info((pbf_backend)7, desc, sizeof desc) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_backend_info(PBF_BACKEND_CPU, NULL, 0) == PBF_OK); /* buf may be NULL */
    return 0;
}

/* No GPU: creation fails at once with the probe's status and a clear message; nothing leaks
 * (the sanitizer-free build checks that under valgrind in valgrind_run). A GPU: it runs. */
static int cuda_world_runs_or_fails_at_creation(void) {
    char desc[PBF_ERROR_SIZE], err[PBF_ERROR_SIZE];
    pbf_status probe = pbf_backend_info(PBF_BACKEND_CUDA, desc, sizeof desc);
    printf("  pbf_backend_info(cuda): %s: %s\n", pbf_status_string(probe), desc);
    ENSURE(probe == PBF_OK || probe == PBF_ERR_NO_DEVICE);
    pbf_world_def d = pbf_default_world_def();
    d.backend = PBF_BACKEND_CUDA;
    pbf_world *w = (pbf_world *)&d; /* must be reset to NULL on failure */
    pbf_status st = pbf_world_create(&d, &w, err, sizeof err);
    ENSURE(st == probe);
    if (probe != PBF_OK) {
        printf("  pbf_world_create: %s\n", err);
        ENSURE(w == NULL);
        ENSURE(strstr(err, "backend 'cuda' cannot run here") != NULL);
        ENSURE(strstr(err, "--backend cpu") != NULL);
        ENSURE(strstr(err, desc) != NULL); /* the reason */
        /* without an error buffer too */
        ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_ERR_NO_DEVICE && w == NULL);
        return 0;
    }
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    ENSURE(pbf_world_get_profile(w).steps == 1);
    pbf_device_view dv; /* the arrays where they live, for interop */
    ENSURE(pbf_world_device_view(w, &dv, err, sizeof err) == PBF_OK);
    ENSURE(dv.count == pbf_world_particle_count(w) && dv.device >= 0);
    ENSURE(dv.positions != NULL && dv.velocities != NULL && dv.densities != NULL);
    pbf_world_destroy(w);
    return 0;
}

/* A CPU world has no device arrays: a clear refusal that points at pbf_world_view. */
static int device_view_of_a_cpu_world(void) {
    pbf_world_def d = pbf_default_world_def();
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_device_view dv;
    ENSURE(pbf_world_device_view(w, &dv, err, sizeof err) == PBF_ERR_UNSUPPORTED);
    ENSURE(strstr(err, "CPU backend") != NULL && strstr(err, "pbf_world_view") != NULL);
    ENSURE(dv.count == 0 && dv.positions == NULL && dv.device == -1);
    ENSURE(pbf_world_device_view(NULL, &dv, err, sizeof err) == PBF_ERR_INVALID_ARG);
    pbf_world_destroy(w);
    return 0;
}

/* A bad def is still reported as such before any device is looked for. */
static int def_errors_come_first(void) {
    pbf_world_def d = pbf_default_world_def();
    d.backend = PBF_BACKEND_CUDA;
    d.substeps = 0;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "substeps") != NULL);
    d = pbf_default_world_def();
    d.backend = (pbf_backend)5;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "backend") != NULL);
    return 0;
}

/* The scene key reaches the world: "solver": {"backend": "cuda"}. */
static int scene_backend_reaches_the_world(void) {
    pbf_scene *scene = malloc(sizeof *scene);
    ENSURE(scene != NULL);
    const char *set[] = {"solver.backend=\"cuda\"", "fluid.particle_radius=0.03"};
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_scene_default(set, 2, scene, err, sizeof err) == PBF_OK);
    ENSURE(scene->world.backend == PBF_BACKEND_CUDA);
    pbf_world *w = NULL;
    pbf_status st = pbf_scene_create_world(scene, &w, err, sizeof err);
    pbf_status probe = pbf_backend_info(PBF_BACKEND_CUDA, NULL, 0);
    ENSURE(st == probe);
    if (st != PBF_OK) ENSURE(strstr(err, "backend 'cuda'") != NULL);
    pbf_world_destroy(w);
    free(scene);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(cpu_backend_is_described);
RUN_TEST(cuda_world_runs_or_fails_at_creation);
RUN_TEST(device_view_of_a_cpu_world);
RUN_TEST(def_errors_come_first);
RUN_TEST(scene_backend_reaches_the_world);
TEST_MAIN_END
