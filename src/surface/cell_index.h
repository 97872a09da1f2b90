/* Particles sorted into the cells of a sparse grid (surface reconstruction, src/surface/).
 *
 * A cell is named by a 64-bit key that packs its integer coordinates, x in the low bits, then
 * y, then z: keys sort like (z, y, x), so the cells x−1, x, x+1 of a row are consecutive keys
 * and a 3×3×3 neighbourhood is 9 runs. Only occupied cells are stored, in key order, so a
 * fluid spread over a large domain costs memory by particles, not by volume. The sort is a
 * stable radix sort: particles within a cell keep their index order, which fixes the order of
 * every sum over neighbours (results do not depend on the thread count). */
#ifndef PBF_SURFACE_CELL_INDEX_H
#define PBF_SURFACE_CELL_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "pbf/base.h" /* PBF_HD: the key and search functions below also run in CUDA kernels
                       * (src/backend/cuda/anisotropy.cu) */

typedef struct cell_index {
    int bits[3]; /* bits of each coordinate in a key */
    int count; /* items (particles) */
    int32_t *order; /* item indices sorted by cell, stable */
    int cell_count; /* occupied cells */
    uint64_t *cell_keys; /* sorted, unique */
    int32_t *cell_start; /* cell_count + 1 offsets into order */
    int32_t *dense; /* key -> stored cell or -1, when the keys span few enough values
                           * (at most 4 per item, or 2^16); NULL otherwise (binary search) */
} cell_index;

/* Bits needed for coordinates 0..max. */
int cell_index_bits(int64_t max);

/* The key of cell (x, y, z), each coordinate in 0 .. 2^bits[d] − 1. */
PBF_HD static inline uint64_t cell_key_bits(const int bits[3], int64_t x, int64_t y, int64_t z) {
    return (uint64_t)x | (uint64_t)y << bits[0] | (uint64_t)z << (bits[0] + bits[1]);
}

static inline uint64_t cell_key(const cell_index *ci, int64_t x, int64_t y, int64_t z) {
    return cell_key_bits(ci->bits, x, y, z);
}

/* The coordinates of the cell with this key (cell_key_bits backwards). */
PBF_HD static inline void cell_key_coords(const int bits[3], uint64_t key, int32_t c[3]) {
    c[0] = (int32_t)(key & (((uint64_t)1 << bits[0]) - 1));
    c[1] = (int32_t)(key >> bits[0] & (((uint64_t)1 << bits[1]) - 1));
    c[2] = (int32_t)(key >> (bits[0] + bits[1]) & (((uint64_t)1 << bits[2]) - 1));
}

/* The position of the first of the n sorted keys that is >= key (n when none). */
PBF_HD static inline int cell_keys_lower_bound(const uint64_t *keys, int n, uint64_t key) {
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The items of the cells first..last of a row ([first, last] the keys of its cells x0 and x1,
 * consecutive keys): [*begin, *end) in the sorted order, by binary search among the n sorted
 * unique keys of the occupied cells (start: their n + 1 offsets). */
PBF_HD static inline void cell_keys_row(const uint64_t *keys, const int32_t *start, int n,
                                        uint64_t first, uint64_t last, int32_t *begin,
                                        int32_t *end) {
    int a = cell_keys_lower_bound(keys, n, first), b = a;
    while (b < n && keys[b] <= last) ++b;
    *begin = start[a];
    *end = start[b];
}

/* Sorts count items by keys[i] (made with cell_key). Returns 0, or -1 when out of memory. */
int cell_index_build(cell_index *ci, const uint64_t *keys, int count);
void cell_index_free(cell_index *ci);
/* The position of the first stored cell with key >= key (cell_count when none). */
int cell_index_lower_bound(const cell_index *ci, uint64_t key);
/* The position of the cell with this key, or -1. */
int cell_index_find(const cell_index *ci, uint64_t key);
/* The items in the cells x0..x1 of row (y, z): [*begin, *end) in `order`. */
void cell_index_row(const cell_index *ci, int64_t x0, int64_t x1, int64_t y, int64_t z,
                    int32_t *begin, int32_t *end);

/* Stable LSD radix sort of keys (with their values) on their low `bits` bits. tmp_keys and
 * tmp_values hold n items each. Returns 0, or -1 when out of memory. */
int radix_sort_u64(uint64_t *keys, int32_t *values, size_t n, int bits, uint64_t *tmp_keys,
                   int32_t *tmp_values);

#endif
