/* Halo exchange and migration for a world split into slabs along x (include/pbf/mpi.h).
 *
 * Per substep (the solver calls pbf__halo_hook at each point, src/solver.c):
 *   BEGIN      particles whose predicted x left the slab go to the neighbour (x, p, v, id);
 *              then copies of the particles within `width` of each cut are appended as ghosts
 *   SORTED     the send and receive slots follow the grid sort's permutation
 *   LAMBDA     ghosts get their owners' λ and density (the Δp pass reads both)
 *   POSITIONS  ghosts get their owners' corrected positions p
 *   OMEGA      ghosts get their owners' |ω| (the confinement pass reads it)
 *   END        ghosts are dropped; the owned particles keep the sorted order
 *   AGREE      the watchdog's verdict is shared: every rank stops, or none
 * Ghosts are computed by every pass like the owned particles (their neighbourhoods are cut off,
 * so their own results are wrong) and are overwritten before anything reads them. All messages
 * go to the two neighbours only, with MPI_Sendrecv (no deadlock; MPI_PROC_NULL at the ends). */
#include "halo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { LEFT = 0, RIGHT = 1 };
enum { TAG_COUNT = 1, TAG_DATA = 2 };

/* Makes *arr hold n ints (list of side s, which k: 0 send, 1 recv). */
static int grow_list(pbf_halo *h, int s, int k, int n) {
    int **arr = k ? &h->recv[s] : &h->send[s];
    if (n <= h->list_capacity[s][k]) return 0;
    int cap = n < 1024 ? 1024 : 2 * n;
    int *q = realloc(*arr, (size_t)cap * sizeof *q);
    if (q == NULL) return 1;
    *arr = q;
    h->list_capacity[s][k] = cap;
    return 0;
}

static int grow_buf(pbf_halo *h, int s, int k, size_t floats) {
    float **buf = k ? &h->rbuf[s] : &h->sbuf[s];
    if (floats <= h->buf_capacity[s][k]) return 0;
    size_t cap = floats < 4096 ? 4096 : 2 * floats;
    float *q = realloc(*buf, cap * sizeof *q);
    if (q == NULL) return 1;
    *buf = q;
    h->buf_capacity[s][k] = cap;
    return 0;
}

/* Sends nsend[s] items of `stride` floats from sbuf[s] to each side and receives into rbuf[s]
 * the counts given in nrecv[s]. */
static void swap_buffers(pbf_halo *h, const int *nsend, const int *nrecv, int stride) {
    h->bytes += (int64_t)(nrecv[0] + nrecv[1]) * stride * (int64_t)sizeof(float);
    const double start = MPI_Wtime();
    for (int s = 0; s < 2; ++s) { /* s: the side sent to; its opposite is received from */
        int o = 1 - s;
        MPI_Sendrecv(h->sbuf[s], nsend[s] * stride, MPI_FLOAT, h->neighbor[s], TAG_DATA, h->rbuf[o],
                     nrecv[o] * stride, MPI_FLOAT, h->neighbor[o], TAG_DATA, h->comm,
                     MPI_STATUS_IGNORE);
    }
    h->wait_ms += 1e3 * (MPI_Wtime() - start);
}

/* Exchanges counts: nsend[s] to side s, nrecv[s] from side s (0 where there is no side). */
static void swap_counts(pbf_halo *h, const int *nsend, int *nrecv) {
    const double start = MPI_Wtime();
    for (int s = 0; s < 2; ++s) {
        int o = 1 - s;
        nrecv[o] = 0;
        MPI_Sendrecv(&nsend[s], 1, MPI_INT, h->neighbor[s], TAG_COUNT, &nrecv[o], 1, MPI_INT,
                     h->neighbor[o], TAG_COUNT, h->comm, MPI_STATUS_IGNORE);
    }
    h->wait_ms += 1e3 * (MPI_Wtime() - start);
}

/* A particle's state for migration and the halo: x, p, v and the id's bits. */
#define PARTICLE_FLOATS 10

static void pack_particle(const pbf_world *w, int i, float *dst) {
    memcpy(dst, w->x + 3 * i, 3 * sizeof(float));
    memcpy(dst + 3, w->p + 3 * i, 3 * sizeof(float));
    memcpy(dst + 6, w->v + 3 * i, 3 * sizeof(float));
    memcpy(dst + 9, w->ids + i, sizeof(int32_t));
}

static void unpack_particle(pbf_world *w, int i, const float *src) {
    memcpy(w->x + 3 * i, src, 3 * sizeof(float));
    memcpy(w->p + 3 * i, src + 3, 3 * sizeof(float));
    memcpy(w->v + 3 * i, src + 6, 3 * sizeof(float));
    memcpy(w->ids + i, src + 9, sizeof(int32_t));
    w->lambda[i] = 0.0f;
    w->density[i] = 0.0f;
    w->omega_len[i] = 0.0f;
    w->neighbor_counts[i] = 0;
}

/* Appends the particles received from both sides (left's first) at the end of the arrays. */
static pbf_status append_received(pbf_world *w, pbf_halo *h, const int *nrecv) {
    pbf_status st = pbf__world_grow(w, w->count + nrecv[LEFT] + nrecv[RIGHT]);
    if (st != PBF_OK) return st;
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < nrecv[s]; ++k)
            unpack_particle(w, w->count++, h->rbuf[s] + PARTICLE_FLOATS * k);
    return PBF_OK;
}

/* Particles whose predicted x lies outside the slab move to the neighbour on that side (the
 * slabs are at least a halo wide and a particle moves less than that per substep, so the
 * neighbour is the right owner). The rest keep their order. */
static pbf_status migrate(pbf_world *w, pbf_halo *h) {
    int nsend[2] = {0, 0}, nrecv[2];
    for (int i = 0; i < w->count; ++i) {
        float x = w->p[3 * i];
        int s = x < h->lo ? LEFT : x >= h->hi ? RIGHT : -1;
        if (s >= 0) ++nsend[s];
    }
    for (int s = 0; s < 2; ++s)
        if (grow_buf(h, s, 0, (size_t)nsend[s] * PARTICLE_FLOATS))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory migrating particles");
    int fill[2] = {0, 0}, kept = 0;
    for (int i = 0; i < w->count; ++i) {
        float x = w->p[3 * i];
        int s = x < h->lo ? LEFT : x >= h->hi ? RIGHT : -1;
        if (s >= 0) {
            pack_particle(w, i, h->sbuf[s] + PARTICLE_FLOATS * fill[s]++);
        } else {
            if (kept != i) {
                memcpy(w->x + 3 * kept, w->x + 3 * i, 3 * sizeof(float));
                memcpy(w->p + 3 * kept, w->p + 3 * i, 3 * sizeof(float));
                memcpy(w->v + 3 * kept, w->v + 3 * i, 3 * sizeof(float));
                w->ids[kept] = w->ids[i];
            }
            ++kept;
        }
    }
    w->count = kept;
    swap_counts(h, nsend, nrecv);
    for (int s = 0; s < 2; ++s)
        if (grow_buf(h, s, 1, (size_t)nrecv[s] * PARTICLE_FLOATS))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory migrating particles");
    swap_buffers(h, nsend, nrecv, PARTICLE_FLOATS);
    return append_received(w, h, nrecv);
}

/* Copies of the owned particles within `width` of each cut go to that neighbour, and its copies
 * are appended as ghosts: slots [owned, count). */
static pbf_status build_halo(pbf_world *w, pbf_halo *h) {
    h->owned = w->count;
    int n[2] = {0, 0};
    for (int pass = 0; pass < 2; ++pass) { /* count, then fill */
        n[LEFT] = n[RIGHT] = 0;
        for (int i = 0; i < h->owned; ++i) {
            float x = w->p[3 * i];
            if (h->neighbor[LEFT] != MPI_PROC_NULL && x < h->lo + h->width) {
                if (pass) h->send[LEFT][n[LEFT]] = i;
                ++n[LEFT];
            }
            if (h->neighbor[RIGHT] != MPI_PROC_NULL && x >= h->hi - h->width) {
                if (pass) h->send[RIGHT][n[RIGHT]] = i;
                ++n[RIGHT];
            }
        }
        if (pass == 0)
            for (int s = 0; s < 2; ++s)
                if (grow_list(h, s, 0, n[s]) || grow_buf(h, s, 0, (size_t)n[s] * PARTICLE_FLOATS))
                    return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory building the halo");
    }
    for (int s = 0; s < 2; ++s) {
        h->nsend[s] = n[s];
        for (int k = 0; k < n[s]; ++k)
            pack_particle(w, h->send[s][k], h->sbuf[s] + PARTICLE_FLOATS * k);
    }
    swap_counts(h, h->nsend, h->nrecv);
    for (int s = 0; s < 2; ++s)
        if (grow_list(h, s, 1, h->nrecv[s]) ||
            grow_buf(h, s, 1, (size_t)h->nrecv[s] * PARTICLE_FLOATS))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory building the halo");
    swap_buffers(h, h->nsend, h->nrecv, PARTICLE_FLOATS);
    int first = w->count;
    pbf_status st = append_received(w, h, h->nrecv);
    if (st != PBF_OK) return st;
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < h->nrecv[s]; ++k) h->recv[s][k] = first++;
    if (h->ghost == NULL || w->count > h->ghost_capacity) {
        uint8_t *q = realloc(h->ghost, (size_t)w->capacity + 1);
        if (q == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory in the halo");
        h->ghost = q;
        h->ghost_capacity = w->capacity;
    }
    for (int i = 0; i < w->count; ++i) h->ghost[i] = i >= h->owned;
    w->halo_ghost = h->ghost;
    return PBF_OK;
}

/* After the grid sort, slot i holds what was in slot order[i]: the lists follow. */
static pbf_status follow_sort(pbf_world *w, pbf_halo *h) {
    if (w->count > h->inverse_capacity) {
        int *q = realloc(h->inverse, (size_t)w->capacity * sizeof *q);
        if (q == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory in the halo");
        h->inverse = q;
        h->inverse_capacity = w->capacity;
    }
    const uint32_t *order = w->grid.order;
    for (int i = 0; i < w->count; ++i) h->inverse[order[i]] = i;
    for (int s = 0; s < 2; ++s) {
        for (int k = 0; k < h->nsend[s]; ++k) h->send[s][k] = h->inverse[h->send[s][k]];
        for (int k = 0; k < h->nrecv[s]; ++k) h->recv[s][k] = h->inverse[h->recv[s][k]];
    }
    memset(h->ghost, 0, (size_t)w->count);
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < h->nrecv[s]; ++k) h->ghost[h->recv[s][k]] = 1;
    return PBF_OK;
}

/* Ghost values from their owners: `stride` floats per particle from each of the arrays a and b
 * (b may be NULL; then only a). */
static void exchange(pbf_halo *h, float *a, float *b, int stride) {
    int per = b ? 2 * stride : stride;
    for (int s = 0; s < 2; ++s) {
        float *dst = h->sbuf[s];
        for (int k = 0; k < h->nsend[s]; ++k) {
            int i = h->send[s][k];
            for (int c = 0; c < stride; ++c) *dst++ = a[stride * i + c];
            if (b)
                for (int c = 0; c < stride; ++c) *dst++ = b[stride * i + c];
        }
    }
    swap_buffers(h, h->nsend, h->nrecv, per);
    for (int s = 0; s < 2; ++s) {
        const float *src = h->rbuf[s];
        for (int k = 0; k < h->nrecv[s]; ++k) {
            int i = h->recv[s][k];
            for (int c = 0; c < stride; ++c) a[stride * i + c] = *src++;
            if (b)
                for (int c = 0; c < stride; ++c) b[stride * i + c] = *src++;
        }
    }
}

/* Removes the ghosts, keeping the owned particles in their (sorted) order. */
static void drop_halo(pbf_world *w, pbf_halo *h) {
    h->last_received = h->nrecv[LEFT] + h->nrecv[RIGHT];
    h->last_sent = h->nsend[LEFT] + h->nsend[RIGHT];
    h->last_bytes = h->bytes;
    h->bytes = 0;
    h->nsend[LEFT] = h->nsend[RIGHT] = 0;
    w->halo_ghost = NULL;
    if (h->nrecv[LEFT] + h->nrecv[RIGHT] == 0) return;
    int *ghost = h->inverse; /* free until the next sort */
    for (int i = 0; i < w->count; ++i) ghost[i] = 0;
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < h->nrecv[s]; ++k) ghost[h->recv[s][k]] = 1;
    int kept = 0;
    for (int i = 0; i < w->count; ++i) {
        if (ghost[i]) continue;
        if (kept != i) {
            memcpy(w->x + 3 * kept, w->x + 3 * i, 3 * sizeof(float));
            memcpy(w->p + 3 * kept, w->p + 3 * i, 3 * sizeof(float));
            memcpy(w->v + 3 * kept, w->v + 3 * i, 3 * sizeof(float));
            w->ids[kept] = w->ids[i];
            w->lambda[kept] = w->lambda[i];
            w->density[kept] = w->density[i];
            w->neighbor_counts[kept] = w->neighbor_counts[i];
        }
        ++kept;
    }
    w->count = kept;
    h->nrecv[LEFT] = h->nrecv[RIGHT] = h->nsend[LEFT] = h->nsend[RIGHT] = 0;
}

/* Every rank stops with an error if one does: the others would wait for it in the next
 * exchange forever. The first rank that failed keeps its message and tells the others its
 * status. */
static pbf_status agree(pbf_world *w, pbf_halo *h, pbf_status status) {
    int mine = status != PBF_OK ? h->rank : h->ranks, first = h->ranks;
    const double start = MPI_Wtime();
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, h->comm);
    h->wait_ms += 1e3 * (MPI_Wtime() - start);
    if (first == h->ranks) return status; /* nobody failed */
    int code = (int)status;
    MPI_Bcast(&code, 1, MPI_INT, first, h->comm);
    if (status != PBF_OK) return status;
    return pbf__fail(w, (pbf_status)code, "rank %d stopped the run (its message says why)", first);
}

pbf_status pbf__halo_hook(pbf_world *w, pbf_halo_event event, pbf_status status) {
    pbf_halo *h = w->halo;
    switch (event) {
    case PBF_HALO_BEGIN: {
        pbf_status st = migrate(w, h);
        return st != PBF_OK ? st : build_halo(w, h);
    }
    case PBF_HALO_SORTED: return follow_sort(w, h);
    case PBF_HALO_LAMBDA: exchange(h, w->lambda, w->density, 1); return PBF_OK;
    case PBF_HALO_POSITIONS: exchange(h, w->p, NULL, 3); return PBF_OK;
    case PBF_HALO_OMEGA: exchange(h, w->omega_len, NULL, 1); return PBF_OK;
    case PBF_HALO_END: drop_halo(w, h); return PBF_OK;
    case PBF_HALO_AGREE: return agree(w, h, status);
    }
    return PBF_OK;
}

void pbf__halo_sum(pbf_world *w, double *values, int n) {
    pbf_halo *h = w->halo;
    n = n < PBF_HALO_SUM_MAX ? n : PBF_HALO_SUM_MAX;
    const double start = MPI_Wtime();
    MPI_Allgather(values, n, MPI_DOUBLE, h->sum_buf, n, MPI_DOUBLE, h->comm);
    h->wait_ms += 1e3 * (MPI_Wtime() - start);
    for (int k = 0; k < n; ++k) { /* rank 0's value first: one rank keeps its bits */
        double t = h->sum_buf[k];
        for (int r = 1; r < h->ranks; ++r) t += h->sum_buf[(size_t)r * n + k];
        values[k] = t;
    }
}

void pbf__halo_reduce(const pbf_world *w, void *values, int n, pbf_halo_op op) {
    /* between steps (probes): not counted in wait_ms, which is the step's */
    MPI_Allreduce(MPI_IN_PLACE, values, n, op == PBF_HALO_SUM_INT ? MPI_INT : MPI_FLOAT,
                  op == PBF_HALO_SUM_INT     ? MPI_SUM
                  : op == PBF_HALO_MIN_FLOAT ? MPI_MIN
                                             : MPI_MAX,
                  w->halo->comm);
}

void pbf__halo_free(pbf_world *w) {
    pbf_halo *h = w->halo;
    if (h == NULL) return;
    for (int s = 0; s < 2; ++s) {
        free(h->send[s]);
        free(h->recv[s]);
        free(h->sbuf[s]);
        free(h->rbuf[s]);
    }
    free(h->inverse);
    free(h->ghost);
    free(h->sum_buf);
    free(h->cuts);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&h->comm);
    free(h);
    w->halo = NULL;
    w->halo_hook = NULL;
    w->halo_free = NULL;
    w->halo_sum = NULL;
    w->halo_reduce = NULL;
    w->halo_ghost = NULL;
}
