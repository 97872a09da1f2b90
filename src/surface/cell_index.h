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

typedef struct cell_index {
    int bits[3];          /* bits of each coordinate in a key */
    int count;            /* items (particles) */
    int32_t *order;       /* item indices sorted by cell, stable */
    int cell_count;       /* occupied cells */
    uint64_t *cell_keys;  /* sorted, unique */
    int32_t *cell_start;  /* cell_count + 1 offsets into order */
    int32_t *dense;       /* key -> stored cell or -1, when the keys span few enough values
                           * (at most 4 per item, or 2^16); NULL otherwise (binary search) */
} cell_index;

/* Bits needed for coordinates 0..max. */
int cell_index_bits(int64_t max);

static inline uint64_t cell_key(const cell_index *ci, int64_t x, int64_t y, int64_t z) {
    return (uint64_t)x | (uint64_t)y << ci->bits[0] | (uint64_t)z << (ci->bits[0] + ci->bits[1]);
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
