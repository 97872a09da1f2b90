/* A program outside the project, built against an installed pbf (tests/install/test_install.sh):
 * the README's hello world with checks. A block of water falls onto the floor of a box; after
 * half a second every particle is inside the box and the block's centre has come down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pbf/pbf.h>

static double mean_height(const pbf_world *w, float *xyz, int n) {
    pbf_world_get_positions(w, xyz);
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += xyz[3 * i + 1];
    return sum / n;
}

int main(void) {
    if (strcmp(pbf_version(), PBF_VERSION_STRING) != 0) {
        fprintf(stderr, "library %s, header %s\n", pbf_version(), PBF_VERSION_STRING);
        return 1;
    }
    pbf_world_def def = pbf_default_world_def();
    def.particle_radius = 0.02f;
    def.domain_max = (pbf_vec3){0.5f, 0.5f, 0.25f};
    def.threads = 2;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    pbf_block_def block = pbf_default_block_def();
    block.min = (pbf_vec3){0.0f, 0.2f, 0.0f};
    block.max = (pbf_vec3){0.2f, 0.4f, 0.25f};
    if (pbf_world_add_block(w, &block) != PBF_OK) {
        fprintf(stderr, "%s\n", pbf_world_error(w));
        return 1;
    }
    int n = pbf_world_particle_count(w);
    float *xyz = malloc(3 * sizeof *xyz * (size_t)(n > 0 ? n : 1));
    if (n <= 0 || xyz == NULL) {
        fprintf(stderr, "no particles (%d)\n", n);
        return 1;
    }
    double before = mean_height(w, xyz, n);
    for (int i = 0; i < 30; ++i) {
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            fprintf(stderr, "step %d: %s\n", i, pbf_world_error(w));
            return 1;
        }
    }
    double after = mean_height(w, xyz, n);
    const float box[3] = {0.5f, 0.5f, 0.25f};
    int outside = 0;
    for (int i = 0; i < 3 * n; ++i)
        if (!(xyz[i] >= 0.0f && xyz[i] <= box[i % 3])) ++outside;
    pbf_profile prof = pbf_world_get_profile(w);
    printf("pbf %s: %d particles, mean height %.3f m -> %.3f m, density error %.2f %%\n",
           pbf_version(), n, before, after, 100.0 * prof.avg_density_error);
    pbf_world_destroy(w);
    free(xyz);
    if (outside > 0 || !(after < before - 0.05)) {
        fprintf(stderr, "%d coordinates outside the box, or the block did not fall\n", outside);
        return 1;
    }
    return 0;
}
