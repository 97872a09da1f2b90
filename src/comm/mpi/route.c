/* Records of a module's own set sent to the rank that owns their position, and integer scans in
 * rank order (world_state.h: w->halo_route, w->halo_scan). The diffuse particles use both: they
 * follow their x from slab to slab (any slab: the balancer may move a cut past several), and the
 * cap on their number is the whole world's, cut in rank order (src/modules/diffuse.c). */
#include "halo.h"

#include <stdlib.h>
#include <string.h>

/* The rank whose slab [cuts[r], cuts[r + 1]) holds x; the first and last slabs are open. */
static int owner(const pbf_halo *h, float x) {
    int lo = 0, hi = h->ranks - 1; /* the largest r with cuts[r] <= x, at least 0 */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if ((double)x >= h->cuts[mid])
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

pbf_status pbf__halo_route(pbf_world *w, const void *records, int n, size_t size, void **out,
                           int *out_n) {
    pbf_halo *h = w->halo;
    const int R = h->ranks;
    const unsigned char *src = records;
    int *count =
        calloc((size_t)4 * R, sizeof *count); /* send counts, displs; recv counts, displs */
    int *dest = malloc(((size_t)n + 1) * sizeof *dest);
    unsigned char *sbuf = malloc((size_t)n * size + 1);
    /* records NULL with n > 0: the caller ran out of memory packing them; all ranks fail */
    int failed = count == NULL || dest == NULL || sbuf == NULL || (records == NULL && n > 0);
    if (!failed) {
        for (int k = 0; k < n; ++k) {
            float x;
            memcpy(&x, src + (size_t)k * size, sizeof x);
            dest[k] = owner(h, x);
            ++count[dest[k]];
        }
    }
    /* every rank learns whether one failed before the exchange: none waits on another */
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, h->comm);
    unsigned char *rbuf = NULL;
    int total = 0;
    if (!failed) {
        int *sdispl = count + R, *rcount = count + 2 * R, *rdispl = count + 3 * R;
        for (int r = 1; r < R; ++r) sdispl[r] = sdispl[r - 1] + count[r - 1];
        int *fill = malloc((size_t)R * sizeof *fill);
        failed = fill == NULL;
        if (fill) {
            memcpy(fill, sdispl, (size_t)R * sizeof *fill);
            for (int k = 0; k < n; ++k) /* each destination's records in their order */
                memcpy(sbuf + (size_t)fill[dest[k]]++ * size, src + (size_t)k * size, size);
            free(fill);
        }
        MPI_Alltoall(count, 1, MPI_INT, rcount, 1, MPI_INT, h->comm);
        for (int r = 0; r < R; ++r) {
            rdispl[r] = total;
            total += rcount[r];
        }
        rbuf = malloc((size_t)total * size + 1);
        failed |= rbuf == NULL;
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, h->comm);
        if (!failed) {
            /* counts in bytes: a record is `size` bytes */
            MPI_Datatype rec;
            MPI_Type_contiguous((int)size, MPI_BYTE, &rec);
            MPI_Type_commit(&rec);
            MPI_Alltoallv(sbuf, count, sdispl, rec, rbuf, rcount, rdispl, rec, h->comm);
            MPI_Type_free(&rec);
        }
    }
    free(count);
    free(dest);
    free(sbuf);
    if (failed) {
        free(rbuf);
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                         "out of memory sending %d records of %zu bytes to their ranks", n, size);
    }
    *out = rbuf;
    *out_n = total;
    return PBF_OK;
}

void pbf__halo_scan(pbf_world *w, const int64_t *mine, int64_t *before, int64_t *total, int n) {
    pbf_halo *h = w->halo;
    n = n < PBF_HALO_SUM_MAX ? n : PBF_HALO_SUM_MAX;
    /* sum_buf holds ranks · PBF_HALO_SUM_MAX doubles: as many int64 */
    int64_t *all = (int64_t *)(void *)h->sum_buf;
    const double start = MPI_Wtime();
    MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, h->comm);
    h->wait_ms += 1e3 * (MPI_Wtime() - start);
    for (int k = 0; k < n; ++k) {
        int64_t b = 0, t = 0;
        for (int r = 0; r < h->ranks; ++r) {
            if (r == h->rank) b = t;
            t += all[(size_t)r * n + k];
        }
        before[k] = b;
        total[k] = t;
    }
}
