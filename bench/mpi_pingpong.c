/* The cost of one round of the halo's messages on this machine (docs/scaling.md): two ranks
 * swap a buffer with MPI_Sendrecv, as src/comm/mpi/halo.c does, `reps` times.
 *
 *   mpirun -np 2 build/bench/pbf_mpi_pingpong [BYTES [REPS]]
 *
 * BYTES defaults to 36956, a 397 KiB substep (the 49,152-particle dam break on 2 ranks) over its
 * 11 rounds; REPS to 2000. Prints the time per round and the bandwidth each way. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    long bytes = argc > 1 ? atol(argv[1]) : 397L * 1024 / 11;
    long reps = argc > 2 ? atol(argv[2]) : 2000;
    if (ranks != 2 || bytes <= 0 || reps <= 0) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np 2 pbf_mpi_pingpong [BYTES [REPS]]\n");
        MPI_Finalize();
        return 1;
    }
    char *out = calloc((size_t)bytes, 1), *in = calloc((size_t)bytes, 1);
    if (out == NULL || in == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    const int other = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (long k = 0; k < reps; ++k)
        MPI_Sendrecv(out, (int)bytes, MPI_BYTE, other, 1, in, (int)bytes, MPI_BYTE, other, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    t = MPI_Wtime() - t;
    if (rank == 0)
        printf("%ld rounds of %ld bytes each way: %.1f us per round, %.2f GB/s\n", reps, bytes,
               1e6 * t / (double)reps, (double)bytes * (double)reps / t / 1e9);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
