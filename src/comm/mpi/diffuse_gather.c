/* The diffuse particles of every rank gathered to rank 0 for its outputs
 * (pbf_mpi_world_gather_diffuse, include/pbf/mpi.h): rank 0's first, then rank 1's, ... each
 * rank's in its set's order, so one rank gives one process's set as it is. */
#include "pbf/mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"
#include "pbf/diffuse.h"

#define RECORD 29 /* x, v (6 floats), lifetime (float), kind (byte) */

PBF_API pbf_status pbf_mpi_world_gather_diffuse(const pbf_world *w, pbf_diffuse_particles *out,
                                                char *err, size_t err_size) {
    if (w == NULL || out == NULL || w->halo == NULL) {
        if (err && err_size)
            snprintf(err, err_size, "pbf_mpi_world_gather_diffuse: needs a split world and out");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_diffuse_particles_free(out);
    const pbf_halo *h = w->halo;
    const int rank = h->rank, ranks = h->ranks;
    const int m = pbf_world_diffuse_count(w);
    float *x = malloc(((size_t)m * 7 + 1) * sizeof *x);
    uint8_t *kind = malloc((size_t)m + 1);
    unsigned char *mine = malloc((size_t)m * RECORD + 1);
    int ok = x != NULL && kind != NULL && mine != NULL;
    if (ok) {
        pbf_world_get_diffuse(w, x, x + 3 * (size_t)m, kind, x + 6 * (size_t)m);
        for (int k = 0; k < m; ++k) {
            unsigned char *r = mine + (size_t)k * RECORD;
            memcpy(r, x + 3 * (size_t)k, 12);
            memcpy(r + 12, x + 3 * ((size_t)m + k), 12);
            memcpy(r + 24, x + 6 * (size_t)m + k, 4);
            r[28] = kind[k];
        }
    }
    free(x);
    free(kind);
    int *counts = rank == 0 ? calloc((size_t)2 * ranks, sizeof *counts) : NULL;
    if (rank == 0) ok = ok && counts != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, h->comm);
    long long total = 0;
    unsigned char *all = NULL;
    if (ok) {
        MPI_Gather(&m, 1, MPI_INT, counts, 1, MPI_INT, 0, h->comm);
        if (rank == 0) {
            for (int r = 0; r < ranks; ++r) {
                counts[ranks + r] = (int)total;
                total += counts[r];
            }
            ok = total <= INT_MAX / RECORD;
            const size_t n = ok ? (size_t)total : 0;
            out->positions = malloc(n * 3 * sizeof(float) + 1);
            out->velocities = malloc(n * 3 * sizeof(float) + 1);
            out->lifetimes = malloc(n * sizeof(float) + 1);
            out->kinds = malloc(n + 1);
            all = malloc(n * RECORD + 1);
            ok = ok && out->positions && out->velocities && out->lifetimes && out->kinds && all;
        }
        MPI_Bcast(&ok, 1, MPI_INT, 0, h->comm);
    }
    pbf_status st = PBF_OK;
    if (!ok) {
        if (err && err_size)
            snprintf(err, err_size, "out of memory gathering the diffuse particles to MPI rank 0");
        st = PBF_ERR_OUT_OF_MEMORY;
        pbf_diffuse_particles_free(out);
    } else {
        MPI_Datatype rec;
        MPI_Type_contiguous(RECORD, MPI_BYTE, &rec);
        MPI_Type_commit(&rec);
        MPI_Gatherv(mine, m, rec, all, counts, counts ? counts + ranks : NULL, rec, 0, h->comm);
        MPI_Type_free(&rec);
        if (rank == 0) {
            const int n = (int)total;
            for (int k = 0; k < n; ++k) {
                const unsigned char *r = all + (size_t)k * RECORD;
                memcpy(out->positions + 3 * (size_t)k, r, 12);
                memcpy(out->velocities + 3 * (size_t)k, r + 12, 12);
                memcpy(out->lifetimes + k, r + 24, 4);
                out->kinds[k] = r[28];
            }
            out->count = n;
        }
    }
    free(all);
    free(counts);
    free(mine);
    return st;
}
