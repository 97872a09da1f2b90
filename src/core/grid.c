/* Uniform grid, stable counting sort and neighbour list. See grid.h. */
#include "grid.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Candidates tested per vector loop in the list build (a cell row holds about 3 × 8). */
#define LIST_CHUNK 32

int64_t pbf_grid_layout(pbf_grid *g, pbf_v3 lo, pbf_v3 hi, float h) {
    g->origin = lo;
    g->inv_cell = 1.0f / h;
    double dims[3] = {ceil((hi.x - lo.x) / h), ceil((hi.y - lo.y) / h), ceil((hi.z - lo.z) / h)};
    for (int k = 0; k < 3; ++k) {
        if (dims[k] < 1.0) dims[k] = 1.0;
        if (dims[k] > 1 << 20) return -1;
    }
    g->nx = (int)dims[0];
    g->ny = (int)dims[1];
    g->nz = (int)dims[2];
    double cells = dims[0] * dims[1] * dims[2];
    if (cells > (double)(1u << 30)) return -1;
    g->cell_count = (int64_t)cells;
    return g->cell_count;
}

void pbf_grid_sort(pbf_grid *g, const float *positions, int count, int threads) {
    uint32_t *cell_of = g->cell_of;
    /* 1. cell of each particle (parallel: each writes its own entry) */
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int i = 0; i < count; ++i) cell_of[i] = pbf_grid_cell(g, v3_load(positions, i));

    /* 2. histogram and exclusive prefix sum. Serial: a few µs per 10k particles, and it keeps
     *    the order of equal keys independent of the thread count (a stable sort). */
    memset(g->cell_start, 0, (size_t)(g->cell_count + 1) * sizeof *g->cell_start);
    for (int i = 0; i < count; ++i) g->cell_start[cell_of[i] + 1]++;
    for (int64_t c = 0; c < g->cell_count; ++c) g->cell_start[c + 1] += g->cell_start[c];

    /* 3. scatter: slot of particle i is the next free one of its cell, in input order */
    memcpy(g->cursor, g->cell_start, (size_t)g->cell_count * sizeof *g->cursor);
    for (int i = 0; i < count; ++i) g->order[g->cursor[cell_of[i]]++] = (uint32_t)i;

    /* 4. cell_of in sorted order (the cells are now runs of equal values) */
    for (int64_t c = 0; c < g->cell_count; ++c)
        for (uint32_t k = g->cell_start[c]; k < g->cell_start[c + 1]; ++k) cell_of[k] = (uint32_t)c;
}

/* Makes room for `extra` more entries in a chunk. Returns 0, or -1 when out of memory. */
static int chunk_reserve(pbf_neighbor_chunk *c, size_t extra) {
    if (c->size + extra <= c->capacity) return 0;
    size_t cap = c->capacity ? c->capacity : 4096;
    while (cap < c->size + extra) cap *= 2;
    uint32_t *q = realloc(c->index, cap * sizeof *q);
    if (!q) return -1;
    c->index = q;
    c->capacity = cap;
    return 0;
}

int pbf_neighbor_list_build(pbf_neighbor_list *nl, const pbf_grid *g, const float *positions,
                            float *scratch, int count, float h, int threads) {
    const float h2 = h * h;
    uint32_t *start = nl->start;
    if (threads > PBF_MAX_THREADS) threads = PBF_MAX_THREADS;
    if (threads > nl->chunk_count) {
        pbf_neighbor_chunk *c = realloc(nl->chunks, (size_t)threads * sizeof *c);
        if (!c) return -1;
        memset(c + nl->chunk_count, 0, (size_t)(threads - nl->chunk_count) * sizeof *c);
        nl->chunks = c;
        nl->chunk_count = threads;
    }
    /* One walk over the candidates: each thread takes a fixed slice of particles (the same
     * split as schedule(static)) and appends their neighbours in order; start[i+1] gets the
     * count. Concatenating the slices in order gives the same list for any thread count. */
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int lo = (int)((int64_t)count * t / nt), hi = (int)((int64_t)count * (t + 1) / nt);
        pbf_neighbor_chunk *c = &nl->chunks[t];
        c->size = 0;
        /* The positions as three arrays, so that a cell range's candidates load as vectors. */
        float *xs = scratch, *ys = scratch + count, *zs = scratch + 2 * (size_t)count;
#pragma omp for schedule(static)
        for (int i = 0; i < count; ++i) {
            xs[i] = positions[3 * (size_t)i];
            ys[i] = positions[3 * (size_t)i + 1];
            zs[i] = positions[3 * (size_t)i + 2];
        }
        for (int i = lo; i < hi && !failed; ++i) {
            pbf_v3 xi = v3_load(positions, i);
            uint32_t r[18];
            int nr = pbf_grid_ranges(g, g->cell_of[i], r);
            size_t candidates = 0, before = c->size, size = c->size;
            for (int k = 0; k < nr; ++k) candidates += r[2 * k + 1] - r[2 * k];
            if (chunk_reserve(c, candidates) != 0) {
                failed = 1;
                break;
            }
            /* A cell range's candidates are contiguous in memory: their test runs as a vector
             * loop over a chunk, then a branch-free append writes every candidate and advances
             * the size only for a neighbour (once particles are disordered the test is a coin
             * toss that a branch would mispredict). */
            uint32_t *out = c->index;
            for (int k = 0; k < nr; ++k)
                for (uint32_t j0 = r[2 * k]; j0 < r[2 * k + 1]; j0 += LIST_CHUNK) {
                    int m = r[2 * k + 1] - j0 < LIST_CHUNK ? (int)(r[2 * k + 1] - j0) : LIST_CHUNK;
                    const float *qx = xs + j0, *qy = ys + j0, *qz = zs + j0;
                    int32_t near[LIST_CHUNK];
#pragma omp simd
                    for (int a = 0; a < m; ++a) {
                        float dx = xi.x - qx[a], dy = xi.y - qy[a], dz = xi.z - qz[a];
                        near[a] = (dx * dx + dy * dy + dz * dz < h2) & ((int)j0 + a != i);
                    }
                    for (int a = 0; a < m; ++a) {
                        out[size] = j0 + (uint32_t)a;
                        size += (size_t)near[a];
                    }
                }
            c->size = size;
            start[i + 1] = (uint32_t)(size - before);
        }
    }
    if (failed) return -1;
    start[0] = 0;
    for (int i = 0; i < count; ++i) start[i + 1] += start[i];

    size_t total = start[count];
    if (total > nl->index_capacity) {
        size_t cap = total + total / 4 + 1024; /* headroom: the list grows rarely, not every step */
        uint32_t *idx = realloc(nl->index, cap * sizeof *idx);
        if (!idx) return -1;
        nl->index = idx;
        float *pg = realloc(nl->pair_g, cap * sizeof *pg);
        if (!pg) return -1;
        nl->pair_g = pg;
        nl->index_capacity = cap;
    }
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int lo = (int)((int64_t)count * t / nt);
        const pbf_neighbor_chunk *c = &nl->chunks[t];
        if (c->size) memcpy(nl->index + start[lo], c->index, c->size * sizeof *c->index);
    }
    return 0;
}

void pbf_neighbor_list_free(pbf_neighbor_list *nl) {
    for (int t = 0; t < nl->chunk_count; ++t) free(nl->chunks[t].index);
    free(nl->chunks);
    free(nl->index);
    free(nl->pair_g);
    nl->chunks = NULL;
    nl->index = NULL;
    nl->pair_g = NULL;
    nl->chunk_count = 0;
}
