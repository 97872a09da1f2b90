/* Migration over many substeps on a world split over MPI ranks (include/pbf/mpi.h), run under
 * mpirun by tests/cli/test_mpi.sh (cases migrate2 and migrate4).
 *
 * A small dam break (r = 0.03 m, a 0.8 m wide column in a 1.6 m tank) runs 1000 substeps,
 * 4 1/6 s: the water crosses the cuts to the far wall and sloshes back, so particles change
 * rank many times. After every substep the ranks gather their ids: the global count stays the
 * count at the start and every id is owned by exactly one rank (nothing lost, nothing
 * duplicated by migration). Comparing each id's owner with the previous substep's counts the
 * particles that migrated; there must be some, or the test proves nothing. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pbf/mpi.h"
#include "pbf/pbf.h"
#include "mpi_test.h"

enum { SUBSTEPS = 1000 };

/* One substep per pbf_world_step, so every substep is checked. */
static pbf_world *dam_break(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.03f;
    d.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.domain_max = (pbf_vec3){1.6f, 0.8f, 0.3f};
    d.substeps = 1;
    d.threads = 1;
    return mpi_test_world(&d, (pbf_vec3){0.8f, 0.4f, 0.3f});
}

/* Gathers every rank's ids (the same on every rank) and checks them against the world's
 * `total` particles, ids 0..total-1: each exactly once. owner[id] is set to the rank holding
 * it; *moved counts the ids whose owner changed from the previous call (owner -1: none yet).
 * Returns 0 when nothing was lost or duplicated. */
static int check_ids(const pbf_world *w, int total, int *owner, int32_t *all, int *counts,
                     int *offsets, int64_t *moved, int substep) {
    int n = pbf_world_particle_count(w);
    int32_t *mine = malloc((size_t)(n > 0 ? n : 1) * sizeof *mine);
    ENSURE(mine != NULL);
    pbf_world_get_ids(w, mine);
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int sum = 0;
    for (int r = 0; r < ranks_; ++r) {
        offsets[r] = sum;
        sum += counts[r];
    }
    if (sum != total) {
        free(mine);
        fprintf(stderr, "substep %d: %d particles over the ranks, %d at the start\n", substep, sum,
                total);
        return 1;
    }
    MPI_Allgatherv(mine, n, MPI_INT32_T, all, counts, offsets, MPI_INT32_T, MPI_COMM_WORLD);
    free(mine);
    int *seen = calloc((size_t)total, sizeof *seen);
    ENSURE(seen != NULL);
    int bad = 0;
    for (int r = 0; r < ranks_ && !bad; ++r)
        for (int k = offsets[r]; k < offsets[r] + counts[r]; ++k) {
            int32_t id = all[k];
            if (id < 0 || id >= total || seen[id]++) {
                fprintf(stderr, "substep %d: id %d on rank %d is out of range or there twice\n",
                        substep, (int)id, r);
                bad = 1;
                break;
            }
            if (owner[id] >= 0 && owner[id] != r) ++*moved;
            owner[id] = r;
        }
    free(seen);
    return bad;
}

static int migration_keeps_every_id(void) {
    pbf_world *w = dam_break();
    ENSURE(w != NULL);
    int total = pbf_world_particle_count(w);
    ENSURE(total > 0);
    char err[256];
    ENSURE(pbf_mpi_world_split(w, MPI_COMM_WORLD, err, sizeof err) == PBF_OK);
    int *owner = malloc((size_t)total * sizeof *owner);
    int32_t *all = malloc((size_t)total * sizeof *all);
    int *counts = malloc((size_t)ranks_ * sizeof *counts);
    int *offsets = malloc((size_t)ranks_ * sizeof *offsets);
    ENSURE(owner && all && counts && offsets);
    for (int i = 0; i < total; ++i) owner[i] = -1;
    int64_t moved = 0;
    int substeps_with_moves = 0, failed = 0;
    for (int s = 0; s <= SUBSTEPS && !failed; ++s) {
        if (s > 0 && pbf_world_step(w, 1.0f / 240.0f) != PBF_OK) {
            fprintf(stderr, "substep %d: pbf_world_step failed\n", s);
            failed = 1;
            break;
        }
        int64_t before = moved;
        failed = check_ids(w, total, owner, all, counts, offsets, &moved, s);
        if (moved > before) ++substeps_with_moves;
    }
    if (rank_ == 0 && !failed)
        printf("  %d ranks, %d particles, %d substeps: every id once after each; %lld "
               "migrations in %d substeps\n",
               ranks_, total, SUBSTEPS, (long long)moved, substeps_with_moves);
    free(owner);
    free(all);
    free(counts);
    free(offsets);
    pbf_world_destroy(w);
    ENSURE(!failed);
    /* ranks > 1: particles must have crossed the cuts, at many substeps, for the check to
     * mean anything */
    if (ranks_ > 1) ENSURE(moved > 0 && substeps_with_moves >= 10);
    return 0;
}

MPI_TEST_MAIN(migration_keeps_every_id)
