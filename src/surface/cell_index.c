/* Particles sorted into sparse grid cells (see cell_index.h). */
#include "cell_index.h"

#include <stdlib.h>
#include <string.h>

#define RADIX_BITS 11
#define RADIX_SIZE (1 << RADIX_BITS)

int cell_index_bits(int64_t max) {
    int b = 1;
    while (b < 62 && ((int64_t)1 << b) <= max) ++b;
    return b;
}

int radix_sort_u64(uint64_t *keys, int32_t *values, size_t n, int bits, uint64_t *tmp_keys,
                   int32_t *tmp_values) {
    size_t *count = malloc(RADIX_SIZE * sizeof *count);
    if (count == NULL) return -1;
    uint64_t *src_k = keys, *dst_k = tmp_keys;
    int32_t *src_v = values, *dst_v = tmp_values;
    for (int shift = 0; shift < bits; shift += RADIX_BITS) {
        memset(count, 0, RADIX_SIZE * sizeof *count);
        for (size_t i = 0; i < n; ++i) ++count[(src_k[i] >> shift) & (RADIX_SIZE - 1)];
        size_t sum = 0;
        for (int d = 0; d < RADIX_SIZE; ++d) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; ++i) {
            size_t at = count[(src_k[i] >> shift) & (RADIX_SIZE - 1)]++;
            dst_k[at] = src_k[i];
            dst_v[at] = src_v[i];
        }
        uint64_t *tk = src_k;
        src_k = dst_k, dst_k = tk;
        int32_t *tv = src_v;
        src_v = dst_v, dst_v = tv;
    }
    if (src_k != keys) {
        memcpy(keys, src_k, n * sizeof *keys);
        memcpy(values, src_v, n * sizeof *values);
    }
    free(count);
    return 0;
}

int cell_index_build(cell_index *ci, const uint64_t *keys, int count) {
    int bits[3] = {ci->bits[0], ci->bits[1], ci->bits[2]};
    memset(ci, 0, sizeof *ci);
    memcpy(ci->bits, bits, sizeof bits);
    ci->count = count;
    size_t n = count > 0 ? (size_t)count : 1;
    uint64_t *k = malloc(n * sizeof *k), *tk = malloc(n * sizeof *tk);
    int32_t *tv = malloc(n * sizeof *tv);
    ci->order = malloc(n * sizeof *ci->order);
    int rc = -1;
    if (k != NULL && tk != NULL && tv != NULL && ci->order != NULL) {
        memcpy(k, keys, (size_t)count * sizeof *k);
        for (int i = 0; i < count; ++i) ci->order[i] = i;
        if (radix_sort_u64(k, ci->order, (size_t)count, bits[0] + bits[1] + bits[2], tk, tv) == 0) {
            int cells = 0;
            for (int i = 0; i < count; ++i)
                if (i == 0 || k[i] != k[i - 1]) ++cells;
            ci->cell_count = cells;
            ci->cell_keys = malloc((size_t)(cells > 0 ? cells : 1) * sizeof *ci->cell_keys);
            ci->cell_start = malloc((size_t)(cells + 1) * sizeof *ci->cell_start);
            if (ci->cell_keys != NULL && ci->cell_start != NULL) {
                int c = 0;
                for (int i = 0; i < count; ++i)
                    if (i == 0 || k[i] != k[i - 1]) {
                        ci->cell_keys[c] = k[i];
                        ci->cell_start[c++] = i;
                    }
                ci->cell_start[cells] = count;
                rc = 0;
                int total = bits[0] + bits[1] + bits[2];
                uint64_t span = total < 40 ? (uint64_t)1 << total : UINT64_MAX;
                if (span <= (uint64_t)4 * (uint64_t)count || span <= ((uint64_t)1 << 16)) {
                    ci->dense = malloc(span * sizeof *ci->dense);
                    if (ci->dense != NULL) {
                        for (uint64_t i = 0; i < span; ++i) ci->dense[i] = -1;
                        for (int i = 0; i < cells; ++i) ci->dense[ci->cell_keys[i]] = i;
                    } /* else: binary search, slower but fine */
                }
            }
        }
    }
    free(k);
    free(tk);
    free(tv);
    if (rc != 0) cell_index_free(ci);
    return rc;
}

void cell_index_free(cell_index *ci) {
    free(ci->order);
    free(ci->cell_keys);
    free(ci->cell_start);
    free(ci->dense);
    ci->dense = NULL;
    ci->order = NULL;
    ci->cell_keys = NULL;
    ci->cell_start = NULL;
    ci->cell_count = 0;
    ci->count = 0;
}

int cell_index_lower_bound(const cell_index *ci, uint64_t key) {
    return cell_keys_lower_bound(ci->cell_keys, ci->cell_count, key);
}

int cell_index_find(const cell_index *ci, uint64_t key) {
    if (ci->dense != NULL) return ci->dense[key];
    int at = cell_index_lower_bound(ci, key);
    return at < ci->cell_count && ci->cell_keys[at] == key ? at : -1;
}

void cell_index_row(const cell_index *ci, int64_t x0, int64_t x1, int64_t y, int64_t z,
                    int32_t *begin, int32_t *end) {
    if (ci->dense != NULL) {
        int first = -1, last = -1;
        for (int64_t x = x0; x <= x1; ++x) {
            int c = ci->dense[cell_key(ci, x, y, z)];
            if (c < 0) continue;
            if (first < 0) first = c;
            last = c;
        }
        *begin = first < 0 ? 0 : ci->cell_start[first];
        *end = first < 0 ? 0 : ci->cell_start[last + 1];
        return;
    }
    cell_keys_row(ci->cell_keys, ci->cell_start, ci->cell_count, cell_key(ci, x0, y, z),
                  cell_key(ci, x1, y, z), begin, end);
}
