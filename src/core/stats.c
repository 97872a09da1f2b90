/* Whole-state statistics and the state hash, reduced serially in slot order. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/world_cuda.h" /* cuda: pbf__cuda_pull before reading a CUDA world */
#include "world_state.h"

pbf_stats pbf_world_get_stats(const pbf_world *w) {
    pbf__cuda_pull(w); /* cuda */
    pbf_stats s;
    memset(&s, 0, sizeof s);
    s.particles = w->count;
    if (w->count == 0) return s;
    double v2_sum = 0.0;
    float v2_max = 0.0f;
    pbf_v3 lo = v3(FLT_MAX, FLT_MAX, FLT_MAX), hi = v3(-FLT_MAX, -FLT_MAX, -FLT_MAX);
    for (int i = 0; i < w->count; ++i) {
        pbf_v3 v = v3_load(w->v, i), x = v3_load(w->x, i);
        float v2 = v3_dot(v, v);
        v2_sum += v2;
        if (v2 > v2_max) v2_max = v2;
        lo = v3(fminf(lo.x, x.x), fminf(lo.y, x.y), fminf(lo.z, x.z));
        hi = v3(fmaxf(hi.x, x.x), fmaxf(hi.y, x.y), fmaxf(hi.z, x.z));
    }
    s.kinetic_energy = 0.5 * w->params.mass * v2_sum;
    s.max_speed = sqrtf(v2_max);
    s.bounds_min = (pbf_vec3){lo.x, lo.y, lo.z};
    s.bounds_max = (pbf_vec3){hi.x, hi.y, hi.z};
    return s;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; ++i) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t pbf_world_hash(const pbf_world *w) {
    /* hash in id order so the hash does not depend on the internal sort */
    uint64_t h = 1469598103934665603ull;
    pbf__cuda_pull(w); /* cuda */
    const int32_t *slot = pbf__slots_by_id(w);
    for (int k = 0; k < w->count; ++k) {
        h = fnv1a(h, w->x + 3 * slot[k], 3 * sizeof(float));
        h = fnv1a(h, w->v + 3 * slot[k], 3 * sizeof(float));
    }
    return h;
}
