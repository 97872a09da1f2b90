/* Diffuse particles on the CUDA backend (backend_internal.h, docs/cuda.md): diffuse.c's
 * pbf__diffuse_substep after every substep's watchdog, the set in device memory. Each stage is
 * the CPU's with the same per-particle bodies (kernels.h, "Diffuse particles"):
 *   advect     each diffuse particle classified by the fluid around it and moved (grid-stride
 *              over the device's count, which the host does not know inside a step)
 *   compact    the dead dropped, the others kept in their order: flags, CUB's exclusive scan
 *              over the set's whole room, scatter into the other buffer of the pair
 *   normals    each fluid particle's surface normal, its neighbours in the CPU's order
 *   spawn      each fluid particle's spawn count from its potentials and the hash of its id and
 *              the substep (the CPU's draw)
 *   place      the counts' exclusive scan (64-bit) cut where the set is full, as diffuse.c's
 *              serial prefix sum: particle i's births go to [min(S_i, room), min(S_i+1, room)),
 *              S its scan; then each new particle placed by the CPU's sampling
 * Every step of this is integer bookkeeping or one particle's own math, so the set is the
 * CPU's given the same fluid; only the cosine and sine of the placement (CUDA's cosf and sinf
 * against glibc's, within 2 ulp) may round differently. The set never grows on the device: its
 * room is the def's max_count (or the set uploaded, if larger), allocated when it is uploaded. */
#include "backend_internal.h"
#include "cub_ops.h"

namespace {

__constant__ pbf_solid c_solids[PBF_MAX_SOLIDS];
__constant__ pbf_diffuse_def c_def;

/* Blocks of a grid-stride loop over the set: enough to fill a GPU, few when the room is small. */
constexpr int DIFFUSE_BLOCKS = 1024;

/* diffuse.c: advect, for k < the device's count (x, v, life, kind: the current buffers; p, v_f
 * the fluid's corrected positions and final velocities, indexed by the substep's grid). */
__global__ void __launch_bounds__(BLOCK)
    k_dif_advect(const DiffuseState *st, int n, const pbf_cuda_substep *S, pbf_grid g,
                 const float *__restrict__ p, const float *__restrict__ vf, float *__restrict__ x,
                 float *__restrict__ v, float *__restrict__ life, uint8_t *__restrict__ kind) {
    const int m = st->count;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < m; k += gridDim.x * blockDim.x) {
        pbf_v3 xk = v3_load(x, k), vel = v3_load(v, k);
        pbf_diffuse_fluid f = pbf_diffuse_fluid_begin();
        uint32_t r[18];
        const int ranges = pbf_grid_ranges(&g, pbf_grid_cell(&g, xk), r);
        for (int q = 0; q < ranges; ++q)
            for (int j = (int)r[2 * q]; j < (int)r[2 * q + 1] && j < n; ++j)
                pbf_diffuse_fluid_add(&f, v3_sub(xk, v3_load(p, j)), v3_load(vf, j), P.h, P.h2);
        float lf = life[k];
        uint8_t kd = kind[k];
        xk = pbf_diffuse_advect(xk, &vel, &lf, &kd, f, &c_def, S->diffuse_damp, &P, c_solids);
        v3_store(x, k, xk);
        v3_store(v, k, vel);
        life[k] = lf;
        kind[k] = kd;
    }
}

/* diffuse.c: compact, the flags: 1 for a live particle of the set, 0 for a dead one and beyond
 * the count (entry cap too, so the scan's last entry is the count kept). */
__global__ void __launch_bounds__(BLOCK)
    k_dif_keep(int cap, const DiffuseState *st, const uint8_t *__restrict__ kind,
               uint32_t *__restrict__ keep) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k > cap) return;
    keep[k] = k < st->count && kind[k] != PBF_DIFFUSE_DEAD ? 1u : 0u;
}

/* diffuse.c: compact, the scatter into the other buffers (pos: the flags' exclusive scan); the
 * count becomes the kept. */
__global__ void __launch_bounds__(BLOCK)
    k_dif_compact(int cap, const uint32_t *__restrict__ keep, const uint32_t *__restrict__ pos,
                  const float *__restrict__ x, const float *__restrict__ v,
                  const float *__restrict__ life, const uint8_t *__restrict__ kind,
                  float *__restrict__ xo, float *__restrict__ vo, float *__restrict__ lifeo,
                  uint8_t *__restrict__ kindo, DiffuseState *st) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k == 0) st->count = (int)pos[cap]; /* no thread of this kernel reads the count */
    if (k >= cap || !keep[k]) return;
    const int o = (int)pos[k];
    v3_store(xo, o, v3_load(x, k));
    v3_store(vo, o, v3_load(v, k));
    lifeo[o] = life[k];
    kindo[o] = kind[k];
}

/* diffuse.c: normals, each fluid particle's outward unit surface normal, its neighbours summed
 * in the CPU's order (the list's, or the cells' walk). */
__global__ void __launch_bounds__(BLOCK)
    k_dif_normal(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
                 float *__restrict__ normal) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params;
    const pbf_v3 xi = v3_load(p, i);
    pbf_v3 gsum = v3(0.0f, 0.0f, 0.0f);
    for_each_neighbor<1>(nb, p, i, 0, xi, P.h2, [&](int j, int) {
        if (j >= n) return;
        gsum = pbf_diffuse_normal_add(gsum, v3_sub(xi, v3_load(p, j)), &P);
    });
    v3_store(normal, i, pbf_diffuse_normal_end(gsum, &P));
}

/* diffuse.c: spawn_counts (entry n is 0, so the scan's last entry is the total). */
__global__ void __launch_bounds__(BLOCK)
    k_dif_spawn(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
                const float *__restrict__ v, const float *__restrict__ normal,
                const int32_t *__restrict__ ids, unsigned long long *__restrict__ spawn) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    if (i == n) {
        spawn[n] = 0ull;
        return;
    }
    const pbf_params &P = S->params;
    const pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i), ni = v3_load(normal, i);
    const float phi_k = pbf_diffuse_kinetic(vi, &c_def);
    if (!(phi_k > 0.0f)) {
        spawn[i] = 0ull;
        return;
    }
    const int crest = pbf_diffuse_crest(vi, ni);
    float ta = 0.0f, wc = 0.0f;
    for_each_neighbor<1>(nb, p, i, 0, xi, P.h2, [&](int j, int) {
        if (j >= n) return;
        pbf_diffuse_potentials_add(&ta, &wc, v3_sub(xi, v3_load(p, j)), v3_sub(vi, v3_load(v, j)),
                                   ni, v3_load(normal, j), crest, P.h);
    });
    const int32_t count =
        pbf_diffuse_spawn_count(phi_k, ta, wc, &c_def, P.dt, (uint32_t)ids[i], S->diffuse_step);
    spawn[i] = count > 0 ? (unsigned long long)count : 0ull;
}

/* The room left: max_count − count, at least 0 (a max_count lowered below the set: no births). */
__device__ __forceinline__ unsigned long long room_of(const DiffuseState *st) {
    const long long room = (long long)c_def.max_count - (long long)st->count;
    return room > 0 ? (unsigned long long)room : 0ull;
}

/* diffuse.c: place, fluid particle i's births at the count + [min(S_i, room), min(S_i+1, room))
 * of the new buffers (start: the counts' exclusive scan S). */
__global__ void __launch_bounds__(BLOCK)
    k_dif_place(int n, const pbf_cuda_substep *S, const DiffuseState *st,
                const float *__restrict__ p, const float *__restrict__ v,
                const int32_t *__restrict__ counts, const int32_t *__restrict__ ids,
                const unsigned long long *__restrict__ start, float *__restrict__ x,
                float *__restrict__ dv, float *__restrict__ life, uint8_t *__restrict__ kind) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned long long room = room_of(st);
    const unsigned long long a = start[i] < room ? start[i] : room,
                             b = start[i + 1] < room ? start[i + 1] : room;
    if (a == b) return;
    const pbf_params &P = S->params;
    const pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i);
    const pbf_diffuse_frame f = pbf_diffuse_frame_of(vi);
    const uint8_t born = pbf_diffuse_born_kind(counts[i], &c_def);
    const uint32_t id = (uint32_t)ids[i];
    const int first = st->count;
    for (unsigned long long k = a; k < b; ++k) {
        const int slot = first + (int)k;
        v3_store(x, slot,
                 pbf_diffuse_place(xi, &f, id, S->diffuse_step, (int)(k - a), &P, c_solids));
        v3_store(dv, slot, vi);
        life[slot] = c_def.lifetime;
        kind[slot] = born;
    }
}

/* The count and the births after place (one thread). */
__global__ void k_dif_count(int n, const unsigned long long *__restrict__ start, DiffuseState *st) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    const unsigned long long room = room_of(st);
    const long long total = (long long)(start[n] < room ? start[n] : room);
    st->count += (int)total;
    st->generated += total;
}

/* CUB's scratch for the two scans: the flags over the room, the counts over the fluid. */
cudaError_t size_temp(pbf_cuda *c) {
    size_t a = 0, b = 0;
    CK(pbf_cub_exclusive_sum(nullptr, &a, nullptr, nullptr, c->dif_capacity + 1, c->stream));
    CK(pbf_cub_exclusive_sum64(nullptr, &b, nullptr, nullptr, c->dif_fluid_capacity + 1,
                               c->stream));
    const size_t need = a > b ? a : b;
    if (need <= c->dif_temp_bytes && c->dif_temp) return cudaSuccess;
    invalidate(c);
    dfree(&c->dif_temp);
    c->dif_temp_bytes = 0;
    uint8_t *t = nullptr;
    CK(dalloc(c, &t, need));
    c->dif_temp = t;
    c->dif_temp_bytes = need;
    return cudaSuccess;
}

} // namespace

namespace pbf_cu {

cudaError_t diffuse_prepare(pbf_cuda *c, const pbf_cuda_step_in *in, int solids) {
    if (c->dif_capacity == 0 || !c->d_dif) return cudaErrorInvalidValue; /* no upload yet */
    if (c->dif_fluid_capacity < c->capacity) {
        invalidate(c); /* the graphs hold the old pointers */
        diffuse_free_fluid(c);
        const size_t cap = (size_t)c->capacity;
        CK(dalloc(c, &c->dif_normal, 3 * cap));
        CK(dalloc(c, &c->dif_spawn, cap + 1));
        CK(dalloc(c, &c->dif_start, cap + 1));
        c->dif_fluid_capacity = c->capacity;
    }
    CK(size_temp(c));
    *c->h_dif_def = *in->diffuse;
    CK(cudaMemcpyToSymbolAsync(c_def, c->h_dif_def, sizeof(pbf_diffuse_def), 0,
                               cudaMemcpyHostToDevice, c->stream));
    if (solids > 0)
        CK(cudaMemcpyToSymbolAsync(c_solids, c->h_solids, (size_t)solids * sizeof(pbf_solid), 0,
                                   cudaMemcpyHostToDevice, c->stream));
    return cudaSuccess;
}

cudaError_t enqueue_diffuse(pbf_cuda *c, const pbf_cuda_step_in *in, int sub) {
    const int n = c->count, cap = c->dif_capacity, a = c->dif_role, b = 1 - a;
    cudaStream_t s = c->stream;
    const pbf_cuda_substep *S = c->d_sub + sub;
    const Nb nbv = neighbors(c, in->neighbor_mode);
    const float *p = buf(c, R_P), *v = buf(c, R_V);
    c->stage = "diffuse particles";
    const int sweep = blocks_for(cap) < DIFFUSE_BLOCKS ? blocks_for(cap) : DIFFUSE_BLOCKS;
    k_dif_advect<<<sweep, BLOCK, 0, s>>>(c->d_dif, n, S, c->grid, p, v, c->dif_x[a], c->dif_v[a],
                                         c->dif_life[a], c->dif_kind[a]);
    CK(cudaGetLastError());
    k_dif_keep<<<blocks_for(cap + 1), BLOCK, 0, s>>>(cap, c->d_dif, c->dif_kind[a], c->dif_keep);
    CK(cudaGetLastError());
    size_t tb = c->dif_temp_bytes;
    CK(pbf_cub_exclusive_sum(c->dif_temp, &tb, c->dif_keep, c->dif_pos, cap + 1, s));
    k_dif_compact<<<blocks_for(cap), BLOCK, 0, s>>>(
        cap, c->dif_keep, c->dif_pos, c->dif_x[a], c->dif_v[a], c->dif_life[a], c->dif_kind[a],
        c->dif_x[b], c->dif_v[b], c->dif_life[b], c->dif_kind[b], c->d_dif);
    CK(cudaGetLastError());
    const int nb = blocks_for(n);
    k_dif_normal<<<nb, BLOCK, 0, s>>>(n, S, nbv, p, c->dif_normal);
    CK(cudaGetLastError());
    k_dif_spawn<<<blocks_for(n + 1), BLOCK, 0, s>>>(n, S, nbv, p, v, c->dif_normal, ids(c),
                                                    c->dif_spawn);
    CK(cudaGetLastError());
    tb = c->dif_temp_bytes;
    CK(pbf_cub_exclusive_sum64(c->dif_temp, &tb, c->dif_spawn, c->dif_start, n + 1, s));
    k_dif_place<<<nb, BLOCK, 0, s>>>(n, S, c->d_dif, p, v, c->f.neighbor_counts, ids(c),
                                     c->dif_start, c->dif_x[b], c->dif_v[b], c->dif_life[b],
                                     c->dif_kind[b]);
    CK(cudaGetLastError());
    k_dif_count<<<1, 1, 0, s>>>(n, c->dif_start, c->d_dif);
    CK(cudaGetLastError());
    c->dif_role = b; /* the new set is current */
    return cudaSuccess;
}

} // namespace pbf_cu

extern "C" pbf_status pbf_cuda_diffuse_upload(pbf_cuda *c, int capacity, int count, const float *x,
                                              const float *v, const float *life,
                                              const uint8_t *kind, char *err, size_t err_size) {
    if (capacity < count) capacity = count;
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess && !c->d_dif) {
        e = dalloc(c, &c->d_dif, 1);
        if (e == cudaSuccess) e = cudaMallocHost((void **)&c->h_dif, sizeof(DiffuseState));
        if (e == cudaSuccess) e = cudaMallocHost((void **)&c->h_dif_def, sizeof(pbf_diffuse_def));
    }
    if (e == cudaSuccess && capacity != c->dif_capacity) { /* the room: the def's max_count */
        invalidate(c);
        diffuse_free_set(c);
        const size_t cap = (size_t)(capacity > 0 ? capacity : 1);
        for (int b = 0; b < 2 && e == cudaSuccess; ++b) {
            e = dalloc(c, &c->dif_x[b], 3 * cap);
            if (e == cudaSuccess) e = dalloc(c, &c->dif_v[b], 3 * cap);
            if (e == cudaSuccess) e = dalloc(c, &c->dif_life[b], cap);
            if (e == cudaSuccess) e = dalloc(c, &c->dif_kind[b], cap);
        }
        if (e == cudaSuccess) e = dalloc(c, &c->dif_keep, cap + 1);
        if (e == cudaSuccess) e = dalloc(c, &c->dif_pos, cap + 1);
        if (e == cudaSuccess) c->dif_capacity = capacity;
    }
    const int r = c->dif_role;
    if (e == cudaSuccess && count > 0) {
        e = to_device(c, c->dif_x[r], x, 3 * (size_t)count * sizeof(float));
        if (e == cudaSuccess) e = to_device(c, c->dif_v[r], v, 3 * (size_t)count * sizeof(float));
        if (e == cudaSuccess) e = to_device(c, c->dif_life[r], life, (size_t)count * sizeof(float));
        if (e == cudaSuccess) e = to_device(c, c->dif_kind[r], kind, (size_t)count);
    }
    if (e == cudaSuccess) {
        c->h_dif->count = count;
        c->h_dif->pad_ = 0;
        c->h_dif->generated = 0;
        e = to_device(c, c->d_dif, c->h_dif, sizeof(DiffuseState));
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) {
        diffuse_free_set(c); /* nothing half-made: the next step uploads again */
        char what[96];
        pbf_cuda_format(what, sizeof what, "uploading %d diffuse particles (room for %d)", count,
                        capacity);
        return fail(e, what, err, err_size);
    }
    return PBF_OK;
}

extern "C" pbf_status pbf_cuda_diffuse_download(pbf_cuda *c, float *x, float *v, float *life,
                                                uint8_t *kind, char *err, size_t err_size) {
    if (!c->d_dif || c->dif_capacity == 0) return PBF_OK;
    const int n = c->h_dif->count, r = c->dif_role;
    cudaError_t e = cudaSetDevice(c->device);
    if (n > 0) {
        if (e == cudaSuccess) e = to_host(c, x, c->dif_x[r], 3 * (size_t)n * sizeof(float));
        if (e == cudaSuccess) e = to_host(c, v, c->dif_v[r], 3 * (size_t)n * sizeof(float));
        if (e == cudaSuccess) e = to_host(c, life, c->dif_life[r], (size_t)n * sizeof(float));
        if (e == cudaSuccess) e = to_host(c, kind, c->dif_kind[r], (size_t)n);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? PBF_OK : fail(e, "reading the diffuse particles back", err, err_size);
}
