/* The state of a world split over MPI processes (src/comm/mpi/, include/pbf/mpi.h): this rank's
 * slab,
 * its neighbours, and the halo's send and receive lists. Made by split.c, used by halo.c; the
 * balancer (balance.c) moves the cuts. */
#ifndef PBF_MPI_HALO_H
#define PBF_MPI_HALO_H

#include <mpi.h>

#include "world_state.h"

typedef struct pbf_halo {
    MPI_Comm comm;
    int rank, ranks;
    int neighbor[2]; /* the ranks of the slabs left (0) and right (1), or MPI_PROC_NULL */
    double lo, hi; /* this rank's slab [lo, hi) along x */
    float width; /* the halo's width (m) */
    double *cuts; /* every rank's slab: [cuts[r], cuts[r + 1]), cuts[0] and cuts[ranks] the
                        * walls' extent (the first and last slabs are open beyond them) */
    double domain_lo, domain_hi; /* the walls' extent along x: the first and last cut's bounds */
    int owned; /* slots [0, owned) before the sort are this rank's particles */
    /* The halo: send[s] are the slots whose values go to side s, recv[s] the slots that hold
     * the values from side s (ghosts), in matching order on the two ranks. */
    int *send[2], *recv[2];
    int nsend[2], nrecv[2];
    int list_capacity[2][2];
    int last_received, last_sent; /* the last substep's halo, for pbf_mpi_world_halo */
    int64_t bytes; /* bytes received in the current substep */
    int64_t last_bytes; /* ... and in the last one */
    double wait_ms; /* time in the halo's messages and agreements since the
                                   * balancer last looked (balance.c: a rank's step time less
                                   * this is its own work) */
    int *inverse; /* grid order inverted (slot before the sort -> after) */
    int inverse_capacity;
    unsigned char *sbuf[2], *rbuf[2]; /* packed values, per side */
    size_t buf_capacity[2][2]; /* bytes */
    uint8_t *ghost; /* per slot, 1 for a ghost: w->halo_ghost during a substep */
    int ghost_capacity;
    double *sum_buf; /* ranks · PBF_HALO_SUM_MAX: every rank's values in pbf__halo_sum */
} pbf_halo;

/* The solver's hook (world_state.h): migration, halo exchange, dropping the halo. */
pbf_status pbf__halo_hook(pbf_world *w, pbf_halo_event event, pbf_status status);
/* w->halo_sum: n values summed over the ranks in rank order (the same bits on every rank). */
void pbf__halo_sum(pbf_world *w, double *values, int n);
/* w->halo_exchange: the ghosts' `stride` floats of values from their owners (stride <= 3). */
void pbf__halo_exchange(pbf_world *w, float *values, int stride);
/* w->halo_reduce: an order-free reduction (MPI_Allreduce in place). */
void pbf__halo_reduce(const pbf_world *w, void *values, int n, pbf_halo_op op);
/* w->halo_owns: whether x lies in this rank's slab [lo, hi) (migration's test). */
int pbf__halo_owns(const pbf_world *w, float x);
/* w->halo_route (route.c): records to the rank that owns their x (MPI_Alltoallv). */
pbf_status pbf__halo_route(pbf_world *w, const void *records, int n, size_t size, void **out,
                           int *out_n);
/* w->halo_scan (route.c): integers summed over the lower ranks and over all (MPI_Allgather). */
void pbf__halo_scan(pbf_world *w, const int64_t *mine, int64_t *before, int64_t *total, int n);
/* Moves cuts[1..ranks-1] apart until every slab of [cuts[0], cuts[ranks]] is at least `width`
 * wide (a ghost then only ever comes from the next slab). Returns 0 when that cannot be done
 * (split.c; the balancer, balance.c, places its cuts with it too). */
int pbf__mpi_space_cuts(double *cuts, int ranks, double width);
/* After the slab changed (split.c, balance.c): the static meshes' fields keep only the block
 * the slab's particles can reach (src/modules/geometry/field_crop.c). */
pbf_status pbf__mpi_keep_fields(pbf_world *w);
/* Frees w->halo (MPI_Comm_free included) and clears the hook. */
void pbf__halo_free(pbf_world *w);

#endif
