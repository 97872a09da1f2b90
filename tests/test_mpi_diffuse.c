/* Diffuse particles following their position from rank to rank on a world split over MPI
 * (src/modules/diffuse.c, w->halo_route), run under mpirun by tests/cli/test_mpi.sh (cases
 * diffroute2 and diffroute4).
 *
 * The small dam break of test_mpi_migrate.c with spray, foam and bubbles on runs 600 substeps
 * (2 1/2 s: the water crosses the cuts, hits the far wall and comes back, and the balancer moves
 * the cuts). After every substep each diffuse particle of a rank must lie in the rank's slab or
 * within one kernel radius h of it (a particle is routed at the start of its substep, then moves
 * one substep, and a new one is born around a fluid particle of the rank), and the rank-order
 * sum of the ranks' counts must not exceed max_count. A particle left on the rank where it was
 * born drifts metres away: the check fails. Particles must have been near and past the cuts at
 * many substeps, or the test proves nothing. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "pbf/diffuse.h"
#include "pbf/mpi.h"
#include "pbf/pbf.h"
#include "mpi_test.h"

enum { SUBSTEPS = 600 };

static int diffuse_particles_stay_on_their_rank(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.03f;
    d.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.domain_max = (pbf_vec3){1.6f, 0.8f, 0.3f};
    d.substeps = 1;
    d.threads = 1;
    pbf_world *w = mpi_test_world(&d, (pbf_vec3){0.8f, 0.4f, 0.3f});
    ENSURE(w != NULL);
    pbf_diffuse_def dd = pbf_default_diffuse_def();
    dd.max_count = 500; /* reached (872 without a cap): the cap is the whole world's */
    ENSURE(pbf_world_enable_diffuse(w, &dd) == PBF_OK);
    char err[256];
    ENSURE(pbf_mpi_world_split(w, MPI_COMM_WORLD, err, sizeof err) == PBF_OK);
    const double h = (double)d.kernel_scale * d.particle_radius; /* the kernel radius */
    float *x = NULL;
    int capacity = 0, failed = 0, near_cut = 0, most = 0;
    double worst = 0.0;
    for (int s = 1; s <= SUBSTEPS && !failed; ++s) {
        if (pbf_world_step(w, 1.0f / 240.0f) != PBF_OK) {
            fprintf(stderr, "substep %d: pbf_world_step failed: %s\n", s, pbf_world_error(w));
            failed = 1;
            break;
        }
        int n = pbf_world_diffuse_count(w);
        if (n > capacity) {
            capacity = 2 * n;
            x = realloc(x, (size_t)capacity * 3 * sizeof *x);
            ENSURE(x != NULL);
        }
        pbf_world_get_diffuse(w, x, NULL, NULL, NULL);
        double lo, hi;
        ENSURE(pbf_mpi_world_slab(w, &lo, &hi, NULL, NULL));
        int near = 0;
        for (int k = 0; k < n; ++k) {
            double past = fmax(lo - x[3 * k], x[3 * k] - hi); /* > 0: outside the slab */
            if (past > worst) worst = past;
            if (past > h) {
                fprintf(stderr,
                        "rank %d, substep %d: a diffuse particle at x = %g m, %g m "
                        "outside the slab [%g, %g)\n",
                        rank_, s, (double)x[3 * k], past, lo, hi);
                failed = 1;
                break;
            }
            if (fmin(fabs(x[3 * k] - lo), fabs(x[3 * k] - hi)) < h) near = 1;
        }
        int counts[2] = {n, near}, sums[2];
        MPI_Allreduce(counts, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (sums[0] > dd.max_count) {
            if (rank_ == 0)
                fprintf(stderr, "substep %d: %d diffuse particles over the ranks, max_count %d\n",
                        s, sums[0], dd.max_count);
            failed = 1;
        }
        if (sums[0] > most) most = sums[0];
        near_cut += sums[1] > 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank_ == 0 && !failed)
        printf("  %d ranks, %d substeps: every diffuse particle at most %.3g m (h = %.3g m) "
               "outside its rank's slab; up to %d of them (max_count %d); some within h of a "
               "cut at %d substeps\n",
               ranks_, SUBSTEPS, worst, h, most, dd.max_count, near_cut);
    free(x);
    pbf_world_destroy(w);
    ENSURE(!failed);
    ENSURE(most == dd.max_count); /* the cap was reached */
    if (ranks_ > 1) ENSURE(near_cut >= 100);
    return 0;
}

MPI_TEST_MAIN(diffuse_particles_stay_on_their_rank)
