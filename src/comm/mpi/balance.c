/* Dynamic load balancing of a world split into slabs along x (include/pbf/mpi.h,
 * pbf_mpi_world_balance): when the ranks' particle counts diverge, the cuts move to the global
 * quantiles of x and the particles go to their new owners.
 *
 * The quantiles come from a histogram of x, counted on each rank and summed over the ranks (no
 * rank gathers the particles); every rank derives the same cuts from the same integer histogram,
 * so the decision and the cuts are reproducible and do not depend on the thread count. */
#include "pbf/mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"

/* Bins of the histogram of x: the cuts land within (extent / BINS) of the true quantiles. */
#define BINS 4096
/* The rank whose slab [cuts[r], cuts[r + 1]) holds x (the ends are open). */
static int owner(const double *cuts, int ranks, double x) {
    int lo = 0, hi = ranks - 1;
    while (lo < hi) { /* the last r with r == 0 or cuts[r] <= x */
        int mid = (lo + hi + 1) / 2;
        if (x >= cuts[mid])
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* max / mean of the ranks' values v (1 when all are 0). */
static double imbalance(const pbf_halo *h, double v) {
    double max = 0.0, sum = 0.0;
    MPI_Allreduce(&v, &max, 1, MPI_DOUBLE, MPI_MAX, h->comm);
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, h->comm);
    return sum > 0.0 ? max / (sum / h->ranks) : 1.0;
}

/* New cuts[0..ranks] at the quantiles of the particles' x (equal counts), spaced at least a
 * halo apart. Returns 0 (cuts unusable) when the spacing cannot be done. */
static int quantile_cuts(const pbf_world *w, const pbf_halo *h, int64_t *hist, double *cuts) {
    float ext[2] = {INFINITY, INFINITY}, all[2]; /* min x, -max x */
    for (int i = 0; i < w->count; ++i) {
        float x = w->x[3 * i];
        if (x < ext[0]) ext[0] = x;
        if (-x < ext[1]) ext[1] = -x;
    }
    MPI_Allreduce(ext, all, 2, MPI_FLOAT, MPI_MIN, h->comm);
    const double lo = all[0], hi = -(double)all[1];
    const double span = hi > lo ? hi - lo : 1.0;
    memset(hist, 0, BINS * sizeof *hist);
    for (int i = 0; i < w->count; ++i) {
        int b = (int)(((double)w->x[3 * i] - lo) / span * BINS);
        ++hist[b < 0 ? 0 : b >= BINS ? BINS - 1 : b];
    }
    MPI_Allreduce(MPI_IN_PLACE, hist, BINS, MPI_INT64_T, MPI_SUM, h->comm);
    int64_t total = 0;
    for (int b = 0; b < BINS; ++b) total += hist[b];
    cuts[0] = h->domain_lo;
    cuts[h->ranks] = h->domain_hi;
    int64_t below = 0; /* particles in the bins before b */
    int b = 0;
    for (int k = 1; k < h->ranks; ++k) {
        double target = (double)total * k / h->ranks;
        while (b < BINS - 1 && (double)(below + hist[b]) < target) below += hist[b++];
        /* linear within the bin */
        double frac = hist[b] > 0 ? (target - (double)below) / (double)hist[b] : 0.0;
        if (frac < 0.0) frac = 0.0;
        if (frac > 1.0) frac = 1.0;
        cuts[k] = lo + span * (b + frac) / BINS;
    }
    return pbf__mpi_space_cuts(cuts, h->ranks, h->width);
}

/* Sends every particle to the owner of its x under `cuts`: the ones kept stay first in their
 * order, those received follow in rank order. Collective; on failure (any rank out of memory)
 * nothing moved. */
static pbf_status redistribute(pbf_world *w, pbf_halo *h, const double *cuts, int64_t *moved) {
    const int ranks = h->ranks;
    int *scount = calloc((size_t)ranks, sizeof *scount), *rcount = malloc(ranks * sizeof *rcount);
    int *sdispl = malloc(ranks * sizeof *sdispl), *rdispl = malloc(ranks * sizeof *rdispl);
    int *dest = malloc((size_t)(w->count > 0 ? w->count : 1) * sizeof *dest);
    /* a particle's state between steps: the arrays that outlive a substep (fields.h) */
    const size_t per = pbf__particle_bytes(PBF_FIELD_KEPT);
    unsigned char *sbuf = NULL, *rbuf = NULL;
    int failed =
        scount == NULL || rcount == NULL || sdispl == NULL || rdispl == NULL || dest == NULL;
    int nsend = 0, nrecv = 0;
    pbf_status slab_fields = PBF_OK;
    if (!failed) {
        for (int i = 0; i < w->count; ++i) {
            dest[i] = owner(cuts, ranks, w->x[3 * i]);
            if (dest[i] != h->rank) ++scount[dest[i]], ++nsend;
        }
        sbuf = malloc((size_t)(nsend > 0 ? nsend : 1) * per);
        failed = sbuf == NULL;
    }
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, h->comm);
    if (!failed) {
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, h->comm);
        for (int r = 0; r < ranks; ++r) {
            sdispl[r] = r > 0 ? sdispl[r - 1] + scount[r - 1] : 0;
            rdispl[r] = r > 0 ? rdispl[r - 1] + rcount[r - 1] : 0;
        }
        nrecv = rdispl[ranks - 1] + rcount[ranks - 1];
        rbuf = malloc((size_t)(nrecv > 0 ? nrecv : 1) * per);
        failed = rbuf == NULL ||
                 pbf__world_grow(w, w->count - nsend + nrecv) != PBF_OK; /* grow never shrinks */
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, h->comm);
    }
    if (!failed) {
        int *fill = rcount; /* reused: the next slot per destination */
        for (int r = 0; r < ranks; ++r) fill[r] = sdispl[r];
        for (int i = 0; i < w->count; ++i) {
            w->gone[i] = dest[i] != h->rank;
            if (w->gone[i])
                pbf__particle_pack(w, PBF_FIELD_KEPT, i, sbuf + per * (size_t)fill[dest[i]]++);
        }
        pbf__particles_compact(w, w->gone); /* the ones kept stay first, in their order */
        const int kept = w->count;
        for (int r = 0; r < ranks; ++r) { /* counts and offsets in bytes */
            scount[r] *= (int)per;
            sdispl[r] *= (int)per;
            rdispl[r] *= (int)per;
        }
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, h->comm);
        MPI_Alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl, MPI_BYTE, h->comm);
        for (int k = 0; k < nrecv; ++k)
            pbf__particle_unpack(w, PBF_FIELD_KEPT, kept + k, rbuf + per * (size_t)k);
        w->count = kept + nrecv;
        h->lo = h->rank > 0 ? cuts[h->rank] : -INFINITY;
        h->hi = h->rank < ranks - 1 ? cuts[h->rank + 1] : INFINITY;
        memcpy(h->cuts, cuts, (size_t)(ranks + 1) * sizeof *cuts);
        /* the new slab's part of the static meshes' fields (a rank's own: no messages) */
        slab_fields = pbf__mpi_keep_fields(w);
        int64_t mine = nsend;
        MPI_Allreduce(&mine, moved, 1, MPI_INT64_T, MPI_SUM, h->comm);
    }
    free(scount);
    free(rcount);
    free(sdispl);
    free(rdispl);
    free(dest);
    free(sbuf);
    free(rbuf);
    if (failed) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory balancing the ranks");
    return slab_fields; /* the world's error says why */
}

PBF_API pbf_status pbf_mpi_world_balance(pbf_world *w, double threshold, pbf_mpi_balance *report) {
    pbf_mpi_balance r = {1.0, 1.0, 1.0, 0, 0, 0.0, 0.0};
    if (w == NULL || w->halo == NULL) {
        if (report) *report = r;
        return PBF_OK;
    }
    pbf_halo *h = w->halo;
    r.count_before = r.count_after = imbalance(h, (double)w->count);
    /* the work of the last step: its time less the time spent waiting in the halo's messages */
    const double step_ms = pbf_world_get_profile(w).step_ms;
    double work = step_ms - h->wait_ms;
    r.time = imbalance(h, work > 0.0 ? work : 0.0);
    /* the share of the step spent in the messages: summed over the ranks, and the least */
    double mine[2] = {h->wait_ms, step_ms}, sums[2] = {0.0, 0.0};
    double share = step_ms > 0.0 ? h->wait_ms / step_ms : 0.0;
    MPI_Allreduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, h->comm);
    MPI_Allreduce(&share, &r.wait_least, 1, MPI_DOUBLE, MPI_MIN, h->comm);
    r.wait = sums[1] > 0.0 ? sums[0] / sums[1] : 0.0;
    h->wait_ms = 0.0;
    pbf_status st = PBF_OK;
    if (threshold > 0.0 && r.count_before > threshold && h->ranks > 1) {
        int64_t *hist = malloc(BINS * sizeof *hist);
        double *cuts = malloc((size_t)(h->ranks + 1) * sizeof *cuts);
        int failed = hist == NULL || cuts == NULL;
        MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, h->comm);
        if (failed) {
            st = pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory balancing the ranks");
        } else if (quantile_cuts(w, h, hist, cuts) && /* the same answer on every rank */
                   memcmp(cuts, h->cuts, (size_t)(h->ranks + 1) * sizeof *cuts) != 0) {
            st = redistribute(w, h, cuts, &r.migrated);
            if (st == PBF_OK) {
                r.moved = 1;
                r.count_after = imbalance(h, (double)w->count);
            }
        }
        free(hist);
        free(cuts);
    }
    if (report) *report = r;
    return st;
}
