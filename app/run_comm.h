/* The MPI processes a `pbf run` is split over (docs/mpi.md): app/run_mpi.c in builds with MPI,
 * app/run_comm_none.c without. The loop (run.c) and the output folder (run_output.c) call
 * through this table and never see mpi.h. */
#ifndef PBF_APP_RUN_COMM_H
#define PBF_APP_RUN_COMM_H

#include "pbf/export.h"
#include "pbf/pbf.h"

/* The ranks' balance at a frame (include/pbf/mpi.h, pbf_mpi_balance): max over mean of the
 * particle counts before and after balancing, of the ranks' work in the last step (a timing),
 * whether the cuts moved and how many particles changed rank. */
typedef struct run_balance {
    double count_before, count_after, time;
    int moved;
    long long migrated;
    double wait, wait_least; /* shares of the step in the halo's messages (include/pbf/mpi.h) */
} run_balance;

typedef struct run_comm {
    int rank, ranks;
    /* Splits a world holding the whole scene into this rank's slab (collective). Prints the
     * error (rank 0) and returns non-zero on failure; every rank gets the same answer. */
    int (*split)(pbf_world *world);
    /* The largest v over the ranks (collective): agreeing on errors and Ctrl-C. */
    int (*max)(int v);
    /* The whole world's statistics and profile (collective; include/pbf/mpi.h). */
    void (*totals)(const pbf_world *world, pbf_stats *stats, pbf_profile *profile);
    /* This rank's halo in the last substep: ghosts received, and KiB received (include/pbf/mpi.h,
     * pbf_mpi_world_halo). */
    void (*halo)(const pbf_world *world, int *ghosts, int *kib);
    /* Measures the ranks' balance and, when the particle counts' max over mean exceeds threshold
     * (0: never), moves the cuts and the particles (collective). Non-zero on failure, with the
     * message in pbf_world_error. */
    int (*balance)(pbf_world *world, double threshold, run_balance *out);
    /* Writes one PLY file of every rank's particles (p NULL: this rank's none) with MPI-IO
     * (collective). Non-zero on failure, the message in err; every rank gets the same answer. */
    int (*write_ply)(const pbf_particles *p, const char *path, char *err, size_t size);
    /* Every rank's particles gathered to rank 0 in id order (collective; include/pbf/mpi.h,
     * pbf_mpi_world_gather): the whole world's on rank 0, none on the others; out's earlier
     * arrays are freed first. Non-zero on failure, the message in err; every rank gets the same
     * answer. */
    int (*gather)(const pbf_world *world, pbf_particles *out, char *err, size_t size);
    /* Every rank's diffuse particles gathered to rank 0, rank 0's first (collective;
     * include/pbf/mpi.h, pbf_mpi_world_gather_diffuse); none on the other ranks. Non-zero on
     * failure, the message in err; every rank gets the same answer. */
    int (*gather_diffuse)(const pbf_world *world, pbf_diffuse_particles *out, char *err,
                          size_t size);
    /* The world's cuts (ranks + 1 values) into cuts; returns the rank count. */
    int (*cuts)(const pbf_world *world, double *cuts);
    /* Like split, at the given cuts (a resumed run on its checkpoint's rank count). */
    int (*split_at)(pbf_world *world, const double *cuts);
} run_comm;

/* main: starts MPI when the process was launched by mpirun (its environment says so). Returns
 * non-zero, printed, when it was but this build has no MPI, or MPI fails to start. */
int run_comm_start(int *argc, char ***argv);
/* The ranks of this run: NULL when not under mpirun. */
const run_comm *run_comm_get(void);
/* main, at the end: MPI_Finalize when MPI was started. */
void run_comm_end(void);

#endif
