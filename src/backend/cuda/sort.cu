/* The CUDA backend's first stages (backend_internal.h): prediction, the grid sort and the gather
 * of the particles into the sorted order, the neighbour list: solver.c's substep() up to the
 * density solve. */
#include "backend_internal.h"
#include "cub_ops.h"

namespace {

/* stage_predict */
__global__ void __launch_bounds__(BLOCK)
    k_predict(int n, const pbf_cuda_substep *S, const float *__restrict__ x, float *__restrict__ p,
              float *__restrict__ v, const uint8_t *__restrict__ phase) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    /* several fluids (phase != NULL): the fluid's gravity scale */
    pbf_v3 vi = phase ? pbf_predict_velocity_phase(v3_load(v, i), P.phase_gravity[phase[i]], &P)
                      : pbf_predict_velocity(v3_load(v, i), &P);
    v3_store(v, i, vi);
    v3_store(p, i, v3_madd(v3_load(x, i), vi, P.dt));
}

/* pbf_grid_sort step 1 and the histogram of step 2 (integer atomics: the counts do not depend on
 * the order). rank != NULL also keeps each particle's arrival rank in its cell. */
__global__ void __launch_bounds__(BLOCK)
    k_cell(int n, pbf_grid g, const float *__restrict__ p, uint32_t *__restrict__ cell_key,
           uint32_t *__restrict__ rank, uint32_t *count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t c = pbf_grid_cell(&g, v3_load(p, i));
    cell_key[i] = c;
    uint32_t r = atomicAdd(&count[c], 1u);
    if (rank) rank[i] = r;
}

/* Counting sort, scatter: each particle to its cell's range, in arrival order. */
__global__ void __launch_bounds__(BLOCK)
    k_scatter(int n, const uint32_t *__restrict__ cell_key, const uint32_t *__restrict__ rank,
              const uint32_t *__restrict__ cell_start, uint32_t *__restrict__ tmp_order) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tmp_order[cell_start[cell_key[i]] + rank[i]] = (uint32_t)i;
}

/* Counting sort, stabilise: particle i goes to its cell's start plus the number of particles
 * of its cell with a smaller slot (about 8 per cell at h = 4r), as pbf_grid_sort's serial scatter
 * puts it. Also writes cell_of in sorted order. */
__global__ void __launch_bounds__(BLOCK)
    k_stabilize(int n, const uint32_t *__restrict__ cell_key,
                const uint32_t *__restrict__ cell_start, const uint32_t *__restrict__ tmp_order,
                uint32_t *__restrict__ order, uint32_t *__restrict__ cell_of) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t c = cell_key[i], a = cell_start[c], b = cell_start[c + 1], r = 0;
    for (uint32_t t = a; t < b; ++t) r += tmp_order[t] < (uint32_t)i;
    order[a + r] = (uint32_t)i;
    cell_of[a + r] = c;
}

/* stage_grid: gather3 of x, p, v and the ids into the sorted order */
__global__ void __launch_bounds__(BLOCK)
    k_gather(int n, const uint32_t *__restrict__ order, const float *__restrict__ x,
             const float *__restrict__ p, const float *__restrict__ v,
             const int32_t *__restrict__ ids, float *__restrict__ xo, float *__restrict__ po,
             float *__restrict__ vo, int32_t *__restrict__ ido) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s = (int)order[i];
    v3_store(xo, i, v3_load(x, s));
    v3_store(po, i, v3_load(p, s));
    v3_store(vo, i, v3_load(v, s));
    ido[i] = ids[s];
}

/* stage_grid: an xyz array of fields.h into the sorted order (d_prev, through dv) */
__global__ void __launch_bounds__(BLOCK)
    k_gather3(int n, const uint32_t *__restrict__ order, const float *__restrict__ src,
              float *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v3_store(out, i, v3_load(src, (int)order[i]));
}

/* stage_grid with several fluids: the phases into the sorted order, as the ids */
__global__ void __launch_bounds__(BLOCK)
    k_gather_phase(int n, const uint32_t *__restrict__ order, const uint8_t *__restrict__ phase,
                   uint8_t *__restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = phase[order[i]];
}

/* pbf_neighbor_list_build, pass 1: neighbours within h (self excluded) per particle; entry n
 * is 0 so the exclusive scan's last entry is the total. */
__global__ void __launch_bounds__(BLOCK)
    k_nb_count(int n, pbf_grid g, const float *__restrict__ p, const pbf_cuda_substep *S,
               uint32_t *__restrict__ nb_count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    if (i == n) {
        nb_count[n] = 0;
        return;
    }
    const float h2 = S->params.h2;
    pbf_v3 xi = v3_load(p, i);
    uint32_t r[18], count = 0;
    int nr = pbf_grid_ranges(&g, g.cell_of[i], r);
    for (int q = 0; q < nr; ++q)
        for (uint32_t j = r[2 * q]; j < r[2 * q + 1]; ++j) {
            pbf_v3 d = v3_sub(xi, v3_load(p, (int)j));
            count += (uint32_t)((v3_dot(d, d) < h2) & ((int)j != i));
        }
    nb_count[i] = count;
}

/* pbf_neighbor_list_build, pass 2: the same walk, writing the neighbours in order. A list that
 * does not fit sets the overflow flag (the passes then walk the cells) and the size needed. */
__global__ void __launch_bounds__(BLOCK)
    k_nb_fill(int n, pbf_grid g, const float *__restrict__ p, const pbf_cuda_substep *S,
              const uint32_t *__restrict__ nb_start, uint32_t *__restrict__ nb_index,
              uint32_t capacity, Results *res) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t total = nb_start[n];
    if (total > capacity) {
        if (i == 0) {
            res->overflow = 1u;
            if (total > res->needed) res->needed = total;
        }
        return;
    }
    const float h2 = S->params.h2;
    pbf_v3 xi = v3_load(p, i);
    uint32_t r[18], out = nb_start[i];
    int nr = pbf_grid_ranges(&g, g.cell_of[i], r);
    for (int q = 0; q < nr; ++q)
        for (uint32_t j = r[2 * q]; j < r[2 * q + 1]; ++j) {
            pbf_v3 d = v3_sub(xi, v3_load(p, (int)j));
            if ((v3_dot(d, d) < h2) & ((int)j != i)) nb_index[out++] = j;
        }
}

} // namespace

namespace pbf_cu {

/* The grid build (stage_grid without the gather): cell_start, order, cell_of from positions p. */
cudaError_t enqueue_sort(pbf_cuda *c, const float *p) {
    const int n = c->count;
    cudaStream_t s = c->stream;
    const int cells = (int)c->grid.cell_count;
    CK(cudaMemsetAsync(c->cell_count, 0, ((size_t)cells + 1) * sizeof(uint32_t), s));
    const int counting = c->sort == PBF_CUDA_SORT_COUNTING;
    k_cell<<<blocks_for(n), BLOCK, 0, s>>>(n, c->grid, p, c->cell_key, counting ? c->rank : nullptr,
                                           c->cell_count);
    CK(cudaGetLastError());
    size_t tb = c->cub_temp_bytes;
    CK(pbf_cub_exclusive_sum(c->cub_temp, &tb, c->cell_count, c->grid.cell_start, cells + 1, s));
    if (counting) {
        k_scatter<<<blocks_for(n), BLOCK, 0, s>>>(n, c->cell_key, c->rank, c->grid.cell_start,
                                                  c->tmp_order);
        CK(cudaGetLastError());
        k_stabilize<<<blocks_for(n), BLOCK, 0, s>>>(n, c->cell_key, c->grid.cell_start,
                                                    c->tmp_order, c->grid.order, c->grid.cell_of);
        CK(cudaGetLastError());
    } else {
        tb = c->cub_temp_bytes;
        CK(pbf_cub_sort_pairs(c->cub_temp, &tb, c->cell_key, c->grid.cell_of, c->iota,
                              c->grid.order, n, c->sort_bits, s));
    }
    return cudaSuccess;
}

/* Predict, grid (with the gather), neighbour list: solver.c substep() up to solve_density. */
cudaError_t enqueue_pre(pbf_cuda *c, const pbf_cuda_step_in *in, int sub) {
    const int n = c->count, nb = blocks_for(n);
    cudaStream_t s = c->stream;
    const pbf_cuda_substep *S = c->d_sub + sub;
    c->stage = "prediction";
    k_predict<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V),
                                   phases_of(c, &in->sub[sub].params)); /* several fluids */
    CK(cudaGetLastError());
    CK(enqueue_sweep(c, in, sub)); /* mesh solids: no path through a thin part */
    if (in->energy) /* solver.c: after the modules' substep_begin (the sweep) */
        CK(enqueue_energy(c, 1 + PBF_ENERGY_COUNT * sub + PBF_ENERGY_PREDICT, buf(c, R_P),
                          buf(c, R_V), nullptr, nullptr, S));
    c->stage = "prediction";
    if (in->tool_sums) /* the tool's displacement of each particle, summed over the substep */
        CK(cudaMemsetAsync(c->tool_dx, 0, 3 * (size_t)n * sizeof(float), s));
    CK(mark(c, PBF_STAGE_PREDICT));

    c->stage = "grid sort";
    CK(enqueue_sort(c, buf(c, R_P)));
    /* gather3 for x, p, v and the ids, then the swaps (the scratch buffers become current) */
    k_gather<<<nb, BLOCK, 0, s>>>(n, c->grid.order, buf(c, R_X), buf(c, R_P), buf(c, R_V), ids(c),
                                  buf(c, R_P_TMP), buf(c, R_P_PREV), buf(c, R_V_TMP), ids_tmp(c));
    CK(cudaGetLastError());
    if (c->has_phases) { /* the phases follow their particles into the other buffer, as the ids */
        k_gather_phase<<<nb, BLOCK, 0, s>>>(n, c->grid.order, phase_buf(c, c->ids_role),
                                            phase_buf(c, 1 - c->ids_role));
        CK(cudaGetLastError());
    }
    if (in->sub[sub].params.impulse_blend != 0.0f) {
        /* the impulse blend's d_prev: gathered into dv, which is free until the vorticity
         * pass, and copied back (the arrays keep their addresses: the step graphs hold them) */
        k_gather3<<<nb, BLOCK, 0, s>>>(n, c->grid.order, c->f.d_prev, c->f.dv);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(c->f.d_prev, c->f.dv, 3 * (size_t)n * sizeof(float),
                           cudaMemcpyDeviceToDevice, s));
    }
    swap_roles(c, R_X, R_P_TMP);
    swap_roles(c, R_P, R_P_PREV);
    swap_roles(c, R_V, R_V_TMP);
    c->ids_role = 1 - c->ids_role;
    CK(mark(c, PBF_STAGE_GRID));

    if (in->neighbor_mode == PBF_NEIGHBOR_LIST) {
        c->stage = "neighbour list";
        k_nb_count<<<blocks_for(n + 1), BLOCK, 0, s>>>(n, c->grid, buf(c, R_P), S, c->nb_count);
        CK(cudaGetLastError());
        size_t tb = c->cub_temp_bytes;
        CK(pbf_cub_exclusive_sum(c->cub_temp, &tb, c->nb_count, c->nb_start, n + 1, s));
        k_nb_fill<<<nb, BLOCK, 0, s>>>(
            n, c->grid, buf(c, R_P), S, c->nb_start, c->nb_index,
            (uint32_t)(c->nb_capacity > 0xffffffffu ? 0xffffffffu : c->nb_capacity), c->d_res);
        CK(cudaGetLastError());
        CK(mark(c, PBF_STAGE_NEIGHBORS));
    }
    return cudaSuccess;
}

} // namespace pbf_cu

extern "C" pbf_status pbf_cuda_grid_sort_test(const pbf_grid *layout, pbf_cuda_sort sort,
                                              const float *positions, int count,
                                              uint32_t *cell_start, uint32_t *order,
                                              uint32_t *cell_of, char *err, size_t err_size) {
    pbf_cuda_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid = *layout;
    cfg.sort = sort;
    cfg.list_per_particle = 1.0f;
    pbf_cuda *c = nullptr;
    pbf_status st = pbf_cuda_create(&cfg, &c, err, err_size);
    if (st != PBF_OK) return st;
    cudaError_t e = reserve(c, count);
    c->count = count;
    const size_t nb = (size_t)count * sizeof(uint32_t);
    if (e == cudaSuccess && count > 0)
        e = to_device(c, buf(c, R_P), positions, 3 * (size_t)count * sizeof(float));
    if (e == cudaSuccess && count > 0) e = enqueue_sort(c, buf(c, R_P));
    if (e == cudaSuccess)
        e = to_host(c, cell_start, c->grid.cell_start,
                    ((size_t)c->grid.cell_count + 1) * sizeof(uint32_t));
    if (e == cudaSuccess && count > 0) e = to_host(c, order, c->grid.order, nb);
    if (e == cudaSuccess && count > 0) e = to_host(c, cell_of, c->grid.cell_of, nb);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    st = e == cudaSuccess ? PBF_OK : fail(e, "the grid sort", err, err_size);
    pbf_cuda_destroy(c);
    return st;
}
