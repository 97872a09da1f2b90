/* The particles of a split world gathered to rank 0 (include/pbf/mpi.h, pbf_mpi_world_gather),
 * for the outputs that need the whole world in one process: the legacy VTK file, surface meshes
 * and pictures (`pbf run` under mpirun, docs/mpi.md).
 *
 * Rank 0 gathers the ids first (MPI_Gatherv, in rank order), sorts them with the slot each came
 * from, then gathers each array in turn into one scratch buffer and copies it into id order. Its
 * memory at the peak: the result (32 bytes per particle, 36 with phases), the sort's pairs (8)
 * and the scratch (12, the largest array): 52 bytes per particle of the whole world. */
#include "pbf/mpi.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"

static pbf_status fail(char *err, size_t err_size, pbf_status st, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err, err_size, fmt, args);
        va_end(args);
    }
    return st;
}

/* An id and the slot of the gathered block it came from; sorted by id. */
typedef struct id_slot {
    int32_t id, slot;
} id_slot;

static int compare_id(const void *a, const void *b) {
    int32_t x = ((const id_slot *)a)->id, y = ((const id_slot *)b)->id;
    return (x > y) - (x < y);
}

/* Every rank's `count` elements of `type` (one per particle, `size` bytes each) into rank 0's
 * `scratch` in rank order, then into `dst` in id order (rank 0; the others send only). */
static void gather_field(const void *mine, int count, MPI_Datatype type, size_t size,
                         const int *counts, const int *displs, const id_slot *order, int total,
                         void *scratch, void *dst, MPI_Comm comm, int rank) {
    MPI_Gatherv(mine, count, type, scratch, counts, displs, type, 0, comm);
    if (rank != 0) return;
    const unsigned char *from = scratch;
    unsigned char *to = dst;
    for (int k = 0; k < total; ++k)
        memcpy(to + (size_t)k * size, from + (size_t)order[k].slot * size, size);
}

PBF_API pbf_status pbf_mpi_world_gather(const pbf_world *w, pbf_particles *out, char *err,
                                        size_t err_size) {
    if (w == NULL || out == NULL)
        return fail(err, err_size, PBF_ERR_INVALID_ARG,
                    "pbf_mpi_world_gather: world and out must not be NULL");
    pbf_particles_free(out);
    if (w->halo == NULL) return pbf_particles_from_world(w, out, err, err_size);
    const pbf_halo *h = w->halo;
    MPI_Comm comm = h->comm;
    const int rank = h->rank, ranks = h->ranks;

    /* this rank's particles by id; every rank learns whether any failed */
    pbf_particles mine;
    memset(&mine, 0, sizeof mine);
    int ok = pbf_particles_from_world(w, &mine, NULL, 0) == PBF_OK;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        pbf_particles_free(&mine);
        return fail(err, err_size, PBF_ERR_OUT_OF_MEMORY,
                    "out of memory reading back a rank's particles to gather them");
    }
    const int phases = mine.phases != NULL; /* the same def on every rank */

    /* rank 0: the counts, their offsets and the whole world's buffers */
    int *counts = NULL, *displs = NULL;
    id_slot *order = NULL;
    void *scratch = NULL;
    long long total = 0;
    if (rank == 0) {
        counts = malloc((size_t)ranks * sizeof *counts);
        displs = malloc((size_t)ranks * sizeof *displs);
        ok = counts != NULL && displs != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    if (ok) MPI_Gather(&mine.count, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    if (rank == 0 && ok) {
        for (int r = 0; r < ranks; ++r) {
            displs[r] = (int)total;
            total += counts[r];
        }
        ok = ok && total <= INT_MAX;
        const size_t n = total > 0 ? (size_t)total : 1;
        if (ok) {
            out->positions = malloc(n * 3 * sizeof(float));
            out->velocities = malloc(n * 3 * sizeof(float));
            out->densities = malloc(n * sizeof(float));
            out->ids = malloc(n * sizeof(int32_t));
            out->phases = phases ? malloc(n * sizeof(int32_t)) : NULL;
            order = malloc(n * sizeof *order);
            scratch = malloc(n * 3 * sizeof(float));
            ok = out->positions && out->velocities && out->densities && out->ids &&
                 (!phases || out->phases) && order && scratch;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    MPI_Bcast(&total, 1, MPI_LONG_LONG, 0, comm);
    pbf_status st = PBF_OK;
    if (!ok) {
        st = total > INT_MAX ? fail(err, err_size, PBF_ERR_INVALID_ARG,
                                    "%lld particles are more than one process can gather", total)
                             : fail(err, err_size, PBF_ERR_OUT_OF_MEMORY,
                                    "out of memory gathering %lld particles to MPI rank 0", total);
        pbf_particles_free(out);
    } else {
        const int n = (int)total;
        /* the ids, with the slot each came from, into id order */
        MPI_Gatherv(mine.ids, mine.count, MPI_INT32_T, scratch, counts, displs, MPI_INT32_T, 0,
                    comm);
        if (rank == 0) {
            const int32_t *ids = scratch;
            for (int k = 0; k < n; ++k) order[k] = (id_slot){ids[k], k};
            qsort(order, (size_t)n, sizeof *order, compare_id);
            for (int k = 0; k < n; ++k) out->ids[k] = order[k].id;
            out->count = n;
        }
        /* the vectors travel as one element of three floats: counts stay particle counts */
        MPI_Datatype vec3;
        MPI_Type_contiguous(3, MPI_FLOAT, &vec3);
        MPI_Type_commit(&vec3);
        gather_field(mine.positions, mine.count, vec3, 3 * sizeof(float), counts, displs, order, n,
                     scratch, out->positions, comm, rank);
        gather_field(mine.velocities, mine.count, vec3, 3 * sizeof(float), counts, displs, order, n,
                     scratch, out->velocities, comm, rank);
        MPI_Type_free(&vec3);
        gather_field(mine.densities, mine.count, MPI_FLOAT, sizeof(float), counts, displs, order, n,
                     scratch, out->densities, comm, rank);
        if (phases)
            gather_field(mine.phases, mine.count, MPI_INT32_T, sizeof(int32_t), counts, displs,
                         order, n, scratch, out->phases, comm, rank);
    }
    free(counts);
    free(displs);
    free(order);
    free(scratch);
    pbf_particles_free(&mine);
    return st;
}
