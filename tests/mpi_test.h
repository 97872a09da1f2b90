/* What the MPI library tests (test_mpi_lib.c, test_mpi_migrate.c) share: the ranks, a small
 * dam-break world, and a main that runs one test on every rank and fails on all of them when it
 * fails on one. Static functions: include it in one file of a program. */
#ifndef PBF_MPI_TEST_H
#define PBF_MPI_TEST_H

#include <mpi.h>
#include <stdio.h>

#include "pbf/pbf.h"
#include "test.h"

static int rank_, ranks_;

/* A world of def d with one block of water from the origin to block_max; NULL on failure, with
 * the message printed. */
static pbf_world *mpi_test_world(const pbf_world_def *d, pbf_vec3 block_max) {
    pbf_world *w = NULL;
    char err[256];
    if (pbf_world_create(d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "pbf_world_create: %s\n", err);
        return NULL;
    }
    pbf_block_def b = pbf_default_block_def();
    b.max = block_max;
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        fprintf(stderr, "pbf_world_add_block: %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

/* main() of an MPI test program: runs `test` on every rank; the exit status is 1 on every rank
 * when it failed on any. */
#define MPI_TEST_MAIN(test)                                                                        \
    int main(int argc, char **argv) {                                                              \
        MPI_Init(&argc, &argv);                                                                    \
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);                                                     \
        MPI_Comm_size(MPI_COMM_WORLD, &ranks_);                                                    \
        int test_failures_ = 0;                                                                    \
        RUN_TEST(test);                                                                            \
        int failed = 0;                                                                            \
        MPI_Allreduce(&test_failures_, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);              \
        MPI_Finalize();                                                                            \
        return failed ? 1 : 0;                                                                     \
    }

#endif
