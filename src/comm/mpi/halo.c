/* Halo exchange and migration for a world split into slabs along x (include/pbf/mpi.h).
 *
 * Per substep (the solver calls pbf__halo_hook at each point, src/core/solver.c):
 *   BEGIN      particles whose predicted x left the slab go to the neighbour with the arrays
 *              marked PBF_FIELD_MIGRATE (fields.h: x, p, v, id, phase); then copies of the
 *              particles within `width` of each cut are appended as ghosts (PBF_FIELD_HALO)
 *   SORTED     the send and receive slots follow the grid sort's permutation
 *   LAMBDA     ghosts get their owners' λ and density (the Δp pass reads both)
 *   NORMALS    ghosts get their owners' colour-field normals (surface tension's second pass
 *              reads them; solver.c keeps them in w->omega)
 *   POSITIONS  ghosts get their owners' corrected positions p
 *   OMEGA      ghosts get their owners' |ω| (the confinement pass reads it)
 * and in between, for a module's own vectors, pbf__halo_exchange (w->halo_exchange: the
 * viscosity solve's velocity and search direction before each product)
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

/* Makes buffer k (0 send, 1 receive) of side s hold `bytes`. */
static int grow_buf(pbf_halo *h, int s, int k, size_t bytes) {
    unsigned char **buf = k ? &h->rbuf[s] : &h->sbuf[s];
    if (bytes <= h->buf_capacity[s][k]) return 0;
    size_t cap = bytes < 16384 ? 16384 : 2 * bytes;
    unsigned char *q = realloc(*buf, cap);
    if (q == NULL) return 1;
    *buf = q;
    h->buf_capacity[s][k] = cap;
    return 0;
}

/* Sends nsend[s] items of `stride` bytes from sbuf[s] to each side and receives into rbuf[s]
 * the counts given in nrecv[s]. */
static void swap_buffers(pbf_halo *h, const int *nsend, const int *nrecv, int stride) {
    h->bytes += (int64_t)(nrecv[0] + nrecv[1]) * stride;
    const double start = MPI_Wtime();
    for (int s = 0; s < 2; ++s) { /* s: the side sent to; its opposite is received from */
        int o = 1 - s;
        MPI_Sendrecv(h->sbuf[s], nsend[s] * stride, MPI_BYTE, h->neighbor[s], TAG_DATA, h->rbuf[o],
                     nrecv[o] * stride, MPI_BYTE, h->neighbor[o], TAG_DATA, h->comm,
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

/* Appends the particles received from both sides (left's first) at the end of the arrays: the
 * arrays with `flag` (fields.h) from the messages, the others 0. */
static pbf_status append_received(pbf_world *w, pbf_halo *h, const int *nrecv, int flag) {
    pbf_status st = pbf__world_grow(w, w->count + nrecv[LEFT] + nrecv[RIGHT]);
    if (st != PBF_OK) return st;
    const size_t per = pbf__particle_bytes(flag);
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < nrecv[s]; ++k)
            pbf__particle_unpack(w, flag, w->count++, h->rbuf[s] + per * (size_t)k);
    return PBF_OK;
}

/* Particles whose predicted x lies outside the slab move to the neighbour on that side (the
 * slabs are at least a halo wide and a particle moves less than that per substep, so the
 * neighbour is the right owner). The rest keep their order. */
static pbf_status migrate(pbf_world *w, pbf_halo *h) {
    const size_t per = pbf__particle_bytes(PBF_FIELD_MIGRATE);
    int nsend[2] = {0, 0}, nrecv[2];
    for (int i = 0; i < w->count; ++i) {
        float x = w->p[3 * i];
        int s = x < h->lo ? LEFT : x >= h->hi ? RIGHT : -1;
        if (s >= 0) ++nsend[s];
    }
    for (int s = 0; s < 2; ++s)
        if (grow_buf(h, s, 0, (size_t)nsend[s] * per))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory migrating particles");
    int fill[2] = {0, 0};
    for (int i = 0; i < w->count; ++i) {
        float x = w->p[3 * i];
        int s = x < h->lo ? LEFT : x >= h->hi ? RIGHT : -1;
        if (s >= 0) pbf__particle_pack(w, PBF_FIELD_MIGRATE, i, h->sbuf[s] + per * fill[s]++);
        w->gone[i] = s >= 0;
    }
    pbf__particles_compact(w, w->gone); /* particles.c: the rest keep their order */
    swap_counts(h, nsend, nrecv);
    for (int s = 0; s < 2; ++s)
        if (grow_buf(h, s, 1, (size_t)nrecv[s] * per))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory migrating particles");
    swap_buffers(h, nsend, nrecv, (int)per);
    return append_received(w, h, nrecv, PBF_FIELD_MIGRATE);
}

/* Copies of the owned particles within `width` of each cut go to that neighbour, and its copies
 * are appended as ghosts: slots [owned, count). */
static pbf_status build_halo(pbf_world *w, pbf_halo *h) {
    const size_t per = pbf__particle_bytes(PBF_FIELD_HALO);
    /* the buffers also carry the substep's exchanges: at most 3 floats per ghost (p) */
    const size_t room = per > 3 * sizeof(float) ? per : 3 * sizeof(float);
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
                if (grow_list(h, s, 0, n[s]) || grow_buf(h, s, 0, (size_t)n[s] * room))
                    return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory building the halo");
    }
    for (int s = 0; s < 2; ++s) {
        h->nsend[s] = n[s];
        for (int k = 0; k < n[s]; ++k)
            pbf__particle_pack(w, PBF_FIELD_HALO, h->send[s][k], h->sbuf[s] + per * (size_t)k);
    }
    swap_counts(h, h->nsend, h->nrecv);
    for (int s = 0; s < 2; ++s)
        if (grow_list(h, s, 1, h->nrecv[s]) || grow_buf(h, s, 1, (size_t)h->nrecv[s] * room))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory building the halo");
    swap_buffers(h, h->nsend, h->nrecv, (int)per);
    int first = w->count;
    pbf_status st = append_received(w, h, h->nrecv, PBF_FIELD_HALO);
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
    const size_t bytes = (size_t)stride * sizeof(float);
    const int per = (int)(b ? 2 * bytes : bytes);
    for (int s = 0; s < 2; ++s) {
        unsigned char *dst = h->sbuf[s];
        for (int k = 0; k < h->nsend[s]; ++k, dst += per) {
            size_t i = (size_t)h->send[s][k];
            memcpy(dst, a + stride * i, bytes);
            if (b) memcpy(dst + bytes, b + stride * i, bytes);
        }
    }
    swap_buffers(h, h->nsend, h->nrecv, per);
    for (int s = 0; s < 2; ++s) {
        const unsigned char *src = h->rbuf[s];
        for (int k = 0; k < h->nrecv[s]; ++k, src += per) {
            size_t i = (size_t)h->recv[s][k];
            memcpy(a + stride * i, src, bytes);
            if (b) memcpy(b + stride * i, src + bytes, bytes);
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
    pbf__particles_compact(w, h->ghost); /* particles.c: the owned keep their order */
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
    case PBF_HALO_NORMALS: exchange(h, w->omega, NULL, 3); return PBF_OK;
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

void pbf__halo_exchange(pbf_world *w, float *values, int stride) {
    /* the buffers hold 3 floats per halo particle (build_halo) */
    exchange(w->halo, values, NULL, stride < 3 ? stride : 3);
}

void pbf__halo_reduce(const pbf_world *w, void *values, int n, pbf_halo_op op) {
    /* between steps (probes): not counted in wait_ms, which is the step's */
    const int ints = op == PBF_HALO_SUM_INT || op == PBF_HALO_MAX_INT;
    MPI_Allreduce(MPI_IN_PLACE, values, n, ints ? MPI_INT : MPI_FLOAT,
                  op == PBF_HALO_SUM_INT     ? MPI_SUM
                  : op == PBF_HALO_MIN_FLOAT ? MPI_MIN
                                             : MPI_MAX,
                  w->halo->comm);
}

int pbf__halo_owns(const pbf_world *w, float x) {
    const pbf_halo *h = w->halo;
    return (double)x >= h->lo && (double)x < h->hi; /* migrate()'s test, negated */
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
    w->halo_exchange = NULL;
    w->halo_owns = NULL;
    w->halo_route = NULL;
    w->halo_scan = NULL;
    w->halo_ghost = NULL;
}
