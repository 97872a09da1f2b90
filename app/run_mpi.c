/* run_comm.h over MPI (builds with PBF_MPI): MPI starts when the process was launched by
 * mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE, PMIx PMIX_RANK), so a plain `pbf run` never
 * initialises MPI. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "pbf/mpi.h"
#include "run_comm.h"

static run_comm world_comm;
static int started;

static int split(pbf_world *world) {
    char err[PBF_ERROR_SIZE];
    if (pbf_mpi_world_split(world, MPI_COMM_WORLD, err, sizeof err) == PBF_OK) return 0;
    if (world_comm.rank == 0) cli_error("%s", err); /* the same on every rank: said once */
    return 1;
}

static int split_at(pbf_world *world, const double *cuts) {
    char err[PBF_ERROR_SIZE];
    int failed = pbf_mpi_world_split_at(world, MPI_COMM_WORLD, cuts, err, sizeof err) != PBF_OK;
    if (failed) cli_error("%s", err); /* the same cuts on every rank; each says so */
    int any = failed;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static int cuts(const pbf_world *world, double *out) { return pbf_mpi_world_cuts(world, out); }

static int max_int(int v) {
    int all = v;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
}

static void halo(const pbf_world *world, int *ghosts, int *kib) {
    int64_t bytes = 0;
    *ghosts = 0;
    pbf_mpi_world_halo(world, ghosts, NULL, &bytes);
    *kib = (int)((bytes + 1023) / 1024);
}

static int balance(pbf_world *world, double threshold, run_balance *out) {
    pbf_mpi_balance b;
    pbf_status st = pbf_mpi_world_balance(world, threshold, &b);
    out->count_before = b.count_before;
    out->count_after = b.count_after;
    out->time = b.time;
    out->moved = b.moved;
    out->migrated = (long long)b.migrated;
    out->wait = b.wait;
    out->wait_least = b.wait_least;
    return st != PBF_OK;
}

static int write_ply(const pbf_particles *p, const char *path, char *err, size_t size) {
    return pbf_mpi_export_ply(p, MPI_COMM_WORLD, path, err, size) != PBF_OK;
}

static int gather(const pbf_world *world, pbf_particles *out, char *err, size_t size) {
    return pbf_mpi_world_gather(world, out, err, size) != PBF_OK;
}

static int gather_diffuse(const pbf_world *world, pbf_diffuse_particles *out, char *err,
                          size_t size) {
    return pbf_mpi_world_gather_diffuse(world, out, err, size) != PBF_OK;
}

int run_comm_start(int *argc, char ***argv) {
    if (getenv("OMPI_COMM_WORLD_SIZE") == NULL && getenv("PMIX_RANK") == NULL) return 0;
    int provided = 0;
    /* threads: OpenMP inside a rank; only the main thread calls MPI */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return cli_error("MPI failed to start");
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_comm.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_comm.ranks);
    world_comm.split = split;
    world_comm.max = max_int;
    world_comm.totals = pbf_mpi_world_totals;
    world_comm.halo = halo;
    world_comm.balance = balance;
    world_comm.write_ply = write_ply;
    world_comm.gather = gather;
    world_comm.gather_diffuse = gather_diffuse;
    world_comm.cuts = cuts;
    world_comm.split_at = split_at;
    return 0;
}

const run_comm *run_comm_get(void) { return started ? &world_comm : NULL; }

void run_comm_end(void) {
    if (started) MPI_Finalize();
    started = 0;
}
