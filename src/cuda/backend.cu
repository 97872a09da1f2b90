/* The CUDA backend (docs/cuda.md): the PBF step of src/solver.c with every stage on the
 * GPU and the particle data resident in device memory.
 *
 * One copy of the math: each __global__ kernel below is a thin loop body around the PBF_HD
 * functions of src/kernels.h and src/grid.h, the same functions the OpenMP loops of solver.c
 * call, in the same order, over the same neighbours in the same order (the list passes in the
 * four lanes of kernels.h's "Lane sums", as the CPU's vector loops). The stage order and the
 * buffer swaps mirror solver.c: substep() and its stages (grid: gather3, Δp: the Jacobi
 * rotation p_tmp → p → p_prev, x ↔ p at the end).
 *
 * Deterministic: every pass writes only its own particle (Jacobi); the only atomics are integer
 * counters (the grid histogram, whose totals do not depend on the order, and the counting
 * sort's ranks, whose order is then made stable again); every floating-point reduction is a
 * fixed tree (per block, then one block over the blocks' partials), so the same state and
 * launch size give the same bits on every run.
 *
 * Launch overhead: with a fixed iteration count the whole step (all substeps) is captured once
 * into a CUDA graph and replayed; the per-substep constants (dt, walls) come from a small device
 * array copied in before each launch, so a graph stays valid across steps. Error control needs a
 * host decision after each iteration, so it launches kernel by kernel (docs/cuda.md). */
#include <cuda_runtime.h>

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend.h"
#include "cub_ops.h"
#include "format.h"
#include "solve_control.h" /* the solve's stop and Chebyshev decisions, solver.c's */

namespace {

constexpr int BLOCK = 128; /* threads per block of the per-particle kernels */
constexpr int FINAL = 1024; /* threads of the one block that combines the blocks' partials */
/* Four threads per particle below this many particles (H200, bench/gpu.sh: 22 % faster steps at
 * 100k, 10 % slower at 1M and 4M than one thread per particle). */
constexpr int TPP_AUTO_LIMIT = 500000;
/* An extra block of the next pass reduces at most this many partials (8 per thread); more go to
 * a kernel of FINAL threads (one block of 128 threads over the 31k partials of 1M particles at
 * four threads per particle made each Δp pass 115 µs longer). */
constexpr int FUSE_MAX_PARTS = 8 * BLOCK;
constexpr int TOOL_FINAL = 256; /* threads of the tool sums' final block (80-byte partials) */
constexpr int PROBE_FINAL = 256; /* threads of a force probe's final block */
constexpr int MAX_GRAPHS = 8; /* cached graph executables (one per buffer rotation state) */
constexpr int MAX_EVENTS = 4096; /* stage-timing events per step before the timings are flushed */

__constant__ pbf_solid c_solids[PBF_MAX_SOLIDS];
__constant__ pbf_cuda_patch c_patches[PBF_MAX_PROBES];

/* ---------------------------------------------------------------------------------------------
 * Deterministic reductions: one accumulator type for every reduction of the step. */

struct Acc {
    double sum; /* Σ of a per-particle value (density error) */
    double sum2; /* Σ of a second value (neighbour counts) */
    float vmax; /* max of a value ... */
    int imax; /* ... at the lowest slot holding it */
    int ibad; /* lowest slot flagged (non-finite) */
    int pad_;
};

__device__ __forceinline__ Acc acc_identity() {
    Acc a;
    a.sum = 0.0;
    a.sum2 = 0.0;
    a.vmax = 0.0f;
    a.imax = INT_MAX;
    a.ibad = INT_MAX;
    a.pad_ = 0;
    return a;
}

__device__ __forceinline__ Acc combine(const Acc &a, const Acc &b) {
    Acc r;
    r.sum = a.sum + b.sum;
    r.sum2 = a.sum2 + b.sum2;
    if (b.vmax > a.vmax || (b.vmax == a.vmax && b.imax < a.imax)) {
        r.vmax = b.vmax;
        r.imax = b.imax;
    } else {
        r.vmax = a.vmax;
        r.imax = a.imax;
    }
    r.ibad = a.ibad < b.ibad ? a.ibad : b.ibad;
    r.pad_ = 0;
    return r;
}

/* The tool's sums of a substep (tool.c: pbf__tool_substep_end), reduced the same way. */
struct ToolAcc {
    double s[9]; /* Σ dx, Σ adhesion force, Σ damping force */
    float min_dist; /* smallest distance from the surface */
    int contacts; /* particles within 2 r of it */
};

__device__ __forceinline__ ToolAcc tool_identity() {
    ToolAcc a;
    for (int k = 0; k < 9; ++k) a.s[k] = 0.0;
    a.min_dist = __int_as_float(0x7f800000); /* +∞ */
    a.contacts = 0;
    return a;
}

__device__ __forceinline__ ToolAcc combine(const ToolAcc &a, const ToolAcc &b) {
    ToolAcc r;
    for (int k = 0; k < 9; ++k) r.s[k] = a.s[k] + b.s[k];
    r.min_dist = b.min_dist < a.min_dist ? b.min_dist : a.min_dist;
    r.contacts = a.contacts + b.contacts;
    return r;
}

/* A force probe's sum over a pass (probes.c: pbf__probes_force_pass). */
struct ProbeAcc {
    double sum; /* Σ share · n·Δx of the particles facing the patch */
    int count; /* how many */
    int pad_;
};

__device__ __forceinline__ ProbeAcc probe_identity() { return ProbeAcc{0.0, 0, 0}; }

__device__ __forceinline__ ProbeAcc combine(const ProbeAcc &a, const ProbeAcc &b) {
    return ProbeAcc{a.sum + b.sum, a.count + b.count, 0};
}

/* Fixed-shape tree over a block of NT threads; every thread of the block must call it. Thread 0
 * gets the block's total (returned to all threads). */
template <int NT, class T> __device__ __forceinline__ T block_reduce(T v) {
    __shared__ T sh[NT];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        const int t = (int)threadIdx.x;
        if (t < s) sh[t] = combine(sh[t], sh[t + s]);
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}

template <class T> __device__ __forceinline__ void block_store(T v, T *parts) {
    T r = block_reduce<BLOCK>(v);
    if (threadIdx.x == 0) parts[blockIdx.x] = r;
}

/* One block of NT threads combines the per-block partials: a fixed strided pass, then the tree.
 * (With 128 threads, the 7813 partials of 1M particles took 31 µs per reduction, 7 per step:
 * the strided pass is a chain of dependent loads; FINAL threads make it 8 loads long.) */
template <int NT, class T>
__device__ __forceinline__ T reduce_parts(int nparts, const T *parts, T identity) {
    T a = identity;
    for (int k = threadIdx.x; k < nparts; k += NT) a = combine(a, parts[k]);
    return block_reduce<NT>(a);
}

/* ---------------------------------------------------------------------------------------------
 * Results of a step, read back once per step (a few hundred bytes). */

struct Watch { /* the first substep whose watchdog fired */
    int failed, substep, kind, slot;
    int32_t id;
    float x[3], v[3];
    float speed2;
};

struct Prof { /* solver.c: finish_profile */
    double err_sum, nb_sum;
    float err_max;
    int bad_slot;
    int32_t bad_id;
    float bad_x[3];
};

struct Results {
    Watch watch;
    Prof prof;
    unsigned overflow; /* the neighbour list did not fit: passes walk the cells */
    unsigned needed; /* the largest list size seen */
};

/* ---------------------------------------------------------------------------------------------
 * Neighbour iteration, as src/cpu_passes.h: f(j, lane) for each neighbour j of particle i, with
 * the lane of kernels.h's "Lane sums". List mode reads the CSR list built at the start of the
 * substep (entry k to lane (k − start) mod 4); cells mode (and a list that overflowed) walks the
 * ≤ 9 index ranges of pbf_grid_ranges, skipping the particle itself and candidates at or beyond
 * h, the k-th neighbour found to lane k mod 4.
 *
 * Threads per particle (TPP): with 1, a thread sums all four lanes of its particle (unrolled, the
 * lanes stay registers). With PBF_LANES, thread l of a group of four sums lane l alone, in the
 * same order, into slot 0 of its lanes struct (a constant index: registers), and gather_lanes
 * then gives every thread of the group the four lanes, so *_lanes_end adds the same values in
 * the same order: the same bits. Four threads shorten each thread's chain of dependent loads
 * and arithmetic fourfold, which is what limits a system too small to fill the GPU. */

struct Nb {
    int list;
    const uint32_t *start, *index;
    const unsigned *overflow;
    pbf_grid grid; /* device pointers: cell_start, cell_of (sorted) */
};

template <int TPP, class F>
__device__ __forceinline__ void for_each_neighbor(const Nb &nb, const float *p, int i, int sub,
                                                  pbf_v3 xi, float h2, F &&f) {
    if (nb.list && *nb.overflow == 0u) {
        const uint32_t start = nb.start[i], end = nb.start[i + 1];
        if constexpr (TPP == 1) {
            for (uint32_t k = start; k < end; k += PBF_LANES) {
#pragma unroll
                for (int l = 0; l < PBF_LANES; ++l)
                    if (k + l < end) f((int)nb.index[k + l], l);
            }
        } else {
            for (uint32_t k = start + (uint32_t)sub; k < end; k += PBF_LANES)
                f((int)nb.index[k], 0);
        }
    } else {
        uint32_t r[18];
        int nr = pbf_grid_ranges(&nb.grid, nb.grid.cell_of[i], r), k = 0;
        for (int q = 0; q < nr; ++q)
            for (int j = (int)r[2 * q]; j < (int)r[2 * q + 1]; ++j) {
                pbf_v3 d = v3_sub(xi, v3_load(p, j));
                if (j == i || v3_dot(d, d) >= h2) continue;
                if (TPP == 1)
                    f(j, k % PBF_LANES);
                else if (k % PBF_LANES == sub)
                    f(j, 0);
                ++k;
            }
    }
}

/* With TPP = PBF_LANES: lane l of every field comes from slot 0 of thread l of the group of four
 * (kernels.h's lanes structs are arrays of PBF_LANES 4-byte words, so word k is lane k mod 4).
 * Every thread of the warp must call it. */
template <int TPP, class L> __device__ __forceinline__ void gather_lanes(L &acc) {
    static_assert(TPP == 1 || TPP == PBF_LANES, "one thread per particle, or one per lane");
    static_assert(sizeof(L) % (4 * PBF_LANES) == 0, "a lanes struct: PBF_LANES words per field");
    if constexpr (TPP == PBF_LANES) {
        constexpr int words = (int)(sizeof(L) / 4);
        uint32_t in[words], out[words];
        memcpy(in, &acc, sizeof in);
        const int base = (int)(threadIdx.x & 31u) & ~(PBF_LANES - 1);
#pragma unroll
        for (int k = 0; k < words; ++k)
            out[k] = __shfl_sync(0xffffffffu, in[k - k % PBF_LANES], base + k % PBF_LANES);
        memcpy(&acc, out, sizeof out);
    }
}

__device__ __forceinline__ int finite3(pbf_v3 a) {
    return isfinite(a.x) && isfinite(a.y) && isfinite(a.z);
}

/* ---------------------------------------------------------------------------------------------
 * Kernels. Each is one stage of solver.c; the comments name the CPU loop it mirrors. */

__global__ void k_iota(int n, uint32_t *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (uint32_t)i;
}

/* stage_predict */
__global__ void __launch_bounds__(BLOCK)
    k_predict(int n, const pbf_cuda_substep *S, const float *__restrict__ x, float *__restrict__ p,
              float *__restrict__ v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params P = S->params;
    pbf_v3 vi = pbf_predict_velocity(v3_load(v, i), &P);
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

/* stage_lambda, with the first level of average_density_error fused in */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_lambda(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
             float *__restrict__ lambda, float *__restrict__ density, int32_t *__restrict__ counts,
             Acc *parts) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    Acc acc = acc_identity();
    const pbf_params P = S->params;
    pbf_lambda_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    if (i < n) {
        xi = v3_load(p, i);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            /* the paper's pair: the backend refuses the Wendland pair (pbf_world_create) */
            (void)pbf_lambda_lane_k(&L, l, d.x, d.y, d.z, &P, 0);
        });
    }
    gather_lanes<TPP>(L);
    if (i < n && sub == 0) {
        pbf_lambda_acc a = pbf_lambda_lanes_end(&L, &P);
        float rho;
        lambda[i] = S->tool.active ? pbf_lambda_end_tool(&a, xi, &P, c_solids, &S->tool, &rho)
                                   : pbf_lambda_end(&a, xi, &P, c_solids, &rho);
        density[i] = rho;
        counts[i] = a.neighbors;
        float e = rho * P.inv_rest_density - 1.0f;
        acc.sum = e > 0.0f ? (double)e : 0.0;
    }
    block_store(acc, parts);
}

/* average_density_error, second level: (float)(Σ / n) into *dst */
__global__ void __launch_bounds__(FINAL)
    k_error_final(int nparts, const Acc *parts, int n, float *dst) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x == 0) *dst = (float)(a.sum / n);
}

/* The same second level, done by one extra block of the next kernel in the stream (the Δp pass
 * after a λ pass, confinement after vorticity), whose start already waits for every partial:
 * one launch fewer per reduction, and the block runs beside the pass's own. dst NULL: none. */
struct ErrFinish {
    const Acc *parts;
    int nparts, n;
    float *dst;
};

/* 1 in the extra block, which has then done the reduction. */
__device__ __forceinline__ int finish_error(const ErrFinish &f) {
    if (f.dst == nullptr || blockIdx.x != gridDim.x - 1) return 0;
    Acc a = reduce_parts<BLOCK>(f.nparts, f.parts, acc_identity());
    if (threadIdx.x == 0) *f.dst = (float)(a.sum / f.n);
    return 1;
}

/* stage_delta: one Jacobi Δp pass into out; omega != 1 is the Chebyshev step */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_delta(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
            const float *__restrict__ lambda, const float *__restrict__ density,
            const float *__restrict__ p_prev, float *__restrict__ out, float omega, float gamma,
            int scorr, float *__restrict__ tool_dx, ErrFinish fin) {
    if (finish_error(fin)) return; /* the λ pass's average density error */
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    pbf_params P = S->params;
    if (!scorr) P.scorr_scale = 0.0f; /* s_corr in the first scorr_iterations passes only */
    pbf_delta_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    float li = 0.0f;
    if (i < n) {
        xi = v3_load(p, i);
        li = lambda[i];
        const float wi = pbf_scorr_weight(density[i], &P);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            /* g recomputed: the CPU's cached g has the same bits */
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
            pbf_delta_lane(&L, l, d.x, d.y, d.z, li, lambda[j], wi, density[j], g, P.scorr_n, &P);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    pbf_delta_acc a = pbf_delta_lanes_end(&L);
    pbf_v3 xn = pbf_delta_end(&a, xi, li, &P, c_solids);
    if (omega != 1.0f)
        xn = pbf_collide(pbf_chebyshev(xn, xi, v3_load(p_prev, i), omega, gamma), &P, c_solids);
    if (S->tool.active) { /* the tool: its boundary term and projection; the move its reaction */
        pbf_v3 moved;
        xn = pbf_tool_delta(xn, xi, li, &S->tool, &P, &moved);
        v3_store(tool_dx, i, v3_add(v3_load(tool_dx, i), moved));
    }
    v3_store(out, i, xn);
}

/* stage_velocity */
__global__ void __launch_bounds__(BLOCK)
    k_velocity(int n, const pbf_cuda_substep *S, const float *__restrict__ x,
               const float *__restrict__ p, float *__restrict__ v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params P = S->params;
    v3_store(v, i, pbf_velocity_update(v3_load(x, i), v3_load(p, i), &P));
}

/* stage_vorticity, pass A (ω, XSPH, final density), with the density error's first level */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_vort(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
           const float *__restrict__ v, float *__restrict__ omega, float *__restrict__ dv,
           float *__restrict__ omega_len, float *__restrict__ density, Acc *parts) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    Acc acc = acc_identity();
    const pbf_params P = S->params;
    pbf_vort_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    if (i < n) {
        xi = v3_load(p, i);
        const pbf_v3 vi = v3_load(v, i);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), u = v3_sub(v3_load(v, j), vi);
            (void)pbf_vort_lane_k(&L, l, d.x, d.y, d.z, u.x, u.y, u.z, &P, 0); /* as in λ */
        });
    }
    gather_lanes<TPP>(L);
    if (i < n && sub == 0) {
        pbf_vort_acc a = pbf_vort_lanes_end(&L, &P);
        pbf_v3 om;
        float rho;
        v3_store(dv, i, pbf_vort_end(&a, xi, &P, c_solids, &om, &rho));
        density[i] = rho;
        v3_store(omega, i, om);
        omega_len[i] = v3_len(om);
        float e = rho * P.inv_rest_density - 1.0f;
        acc.sum = e > 0.0f ? (double)e : 0.0;
    }
    block_store(acc, parts);
}

/* stage_vorticity, pass B (confinement, XSPH applied, speed limit) */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_conf(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
           float *__restrict__ v, const float *__restrict__ dv, const float *__restrict__ omega,
           const float *__restrict__ omega_len, ErrFinish fin) {
    if (finish_error(fin)) return; /* the vorticity pass's average density error */
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    const pbf_params P = S->params;
    pbf_conf_lanes L = {};
    if (i < n && P.vorticity > 0.0f) {
        const pbf_v3 xi = v3_load(p, i);
        const float wi = omega_len[i];
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
            pbf_conf_lane(&L, l, d.x, d.y, d.z, omega_len[j] - wi, g);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    pbf_conf_acc a = pbf_conf_lanes_end(&L);
    v3_store(v, i, pbf_conf_end(&a, v3_load(v, i), v3_load(dv, i), v3_load(omega, i), &P));
}

/* tool.c: pbf__tool_substep_end, the per-particle pass (the tool's ghosts in the final density,
 * adhesion and damping on the velocity) with the first level of its sums */
__global__ void __launch_bounds__(BLOCK)
    k_tool(int n, const pbf_cuda_substep *S, const float *__restrict__ p, float *__restrict__ v,
           float *__restrict__ density, const float *__restrict__ tool_dx, ToolAcc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ToolAcc acc = tool_identity();
    if (i < n) {
        const pbf_params P = S->params;
        const pbf_tool_params *T = &S->tool;
        pbf_v3 xi = v3_load(p, i);
        float rho = density[i];
        pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
        pbf_tool_boundary(xi, T, &P, &rho, &g);
        density[i] = rho;
        pbf_v3 fa, fd;
        v3_store(v, i, pbf_tool_couple(xi, v3_load(v, i), rho, T, &P, &fa, &fd));
        pbf_v3 d = v3_load(tool_dx, i);
        const float f[9] = {d.x, d.y, d.z, fa.x, fa.y, fa.z, fd.x, fd.y, fd.z};
        for (int k = 0; k < 9; ++k) acc.s[k] = (double)f[k];
        acc.min_dist = v3_len(v3_sub(xi, T->center)) - T->radius;
        acc.contacts = acc.min_dist < 2.0f * P.radius;
    }
    block_store(acc, parts);
}

__global__ void __launch_bounds__(TOOL_FINAL)
    k_tool_final(int nparts, const ToolAcc *parts, pbf_cuda_tool_sums *out) {
    ToolAcc a = reduce_parts<TOOL_FINAL>(nparts, parts, tool_identity());
    if (threadIdx.x != 0) return;
    for (int k = 0; k < 3; ++k) {
        out->dx[k] = a.s[k];
        out->adhesion[k] = a.s[3 + k];
        out->damping[k] = a.s[6 + k];
    }
    out->min_distance = a.min_dist;
    out->contacts = a.contacts;
}

/* probes.c: pbf__probes_force_pass, per particle, after a Δp pass (x_new its result, x_old what
 * it read, x_back the iterate one further back): for a particle in the patches' box, the
 * displacement the solids gave it beyond its fluid correction (recomputed as the pass summed
 * it), with Chebyshev's carry of the solids' earlier share when carry is set; valid[i] 0 outside
 * the box. */
__global__ void __launch_bounds__(BLOCK)
    k_probe_pass(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ x_old,
                 const float *__restrict__ x_new, const float *__restrict__ x_back,
                 const float *__restrict__ lambda, const float *__restrict__ density, float omega,
                 float gamma, int scorr, int carry, int pass, float *__restrict__ moved,
                 int *__restrict__ valid, float *__restrict__ carry_dx,
                 int *__restrict__ carry_pass) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    pbf_params P = S->params;
    if (!scorr) P.scorr_scale = 0.0f;
    const pbf_v3 xi = v3_load(x_old, i);
    if (!(xi.x >= S->probe_lo[0] && xi.x <= S->probe_hi[0] && xi.y >= S->probe_lo[1] &&
          xi.y <= S->probe_hi[1] && xi.z >= S->probe_lo[2] && xi.z <= S->probe_hi[2])) {
        valid[i] = 0;
        return;
    }
    const float li = lambda[i], wi = pbf_scorr_weight(density[i], &P);
    pbf_delta_lanes L = {};
    for_each_neighbor<1>(nb, x_old, i, 0, xi, P.h2, [&](int j, int l) {
        pbf_v3 d = v3_sub(xi, v3_load(x_old, j));
        float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
        pbf_delta_lane(&L, l, d.x, d.y, d.z, li, lambda[j], wi, density[j], g, P.scorr_n, &P);
    });
    pbf_delta_acc a = pbf_delta_lanes_end(&L);
    pbf_v3 fluid = v3_add(xi, v3_scale(a.dp, P.volume));
    if (omega != 1.0f) fluid = pbf_chebyshev(fluid, xi, v3_load(x_back, i), omega, gamma);
    pbf_v3 m = v3_sub(v3_load(x_new, i), fluid);
    if (carry) { /* tracked in the pass before: its share carried by the (ω − 1) term */
        if (omega != 1.0f && carry_pass[i] == pass - 1)
            m = v3_madd(m, v3_load(carry_dx, i), omega - 1.0f);
        v3_store(carry_dx, i, m);
        carry_pass[i] = pass;
    }
    v3_store(moved, i, m);
    valid[i] = 1;
}

/* The sum over the particles of one patch (blockIdx.y), as the CPU's loop adds it: each facing
 * particle's share of its footprint on the patch times its move along the normal. */
__global__ void __launch_bounds__(BLOCK)
    k_probe_sum(int n, const pbf_cuda_substep *S, const float *__restrict__ x_old,
                const float *__restrict__ moved, const int *__restrict__ valid, ProbeAcc *parts) {
    const int k = (int)blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    ProbeAcc acc = probe_identity();
    if (i < n && valid[i]) {
        const pbf_cuda_patch &q = c_patches[k];
        const float h = S->params.h, r = S->params.radius;
        const float xs[3] = {x_old[3 * i], x_old[3 * i + 1], x_old[3 * i + 2]};
        const float d = q.sign * (xs[q.axis] - S->probe_plane[k]); /* into the fluid */
        if (d < h && d > -h) {
            float share = 1.0f;
            for (int t = 0; t < 3; ++t) {
                if (t == q.axis) continue;
                float a = xs[t] - r, b = xs[t] + r;
                float lo = a > q.lo[t] ? a : q.lo[t], hi = b < q.hi[t] ? b : q.hi[t];
                share *= hi > lo ? (hi - lo) / (b - a) : 0.0f;
            }
            if (share > 0.0f) {
                acc.sum = (double)(share * q.sign * moved[3 * i + q.axis]);
                acc.count = 1;
            }
        }
    }
    block_store(acc, parts + (size_t)k * gridDim.x);
}

/* One block per patch: the pass's sum times m/dt² added to the step's, the pass's count kept. */
__global__ void __launch_bounds__(PROBE_FINAL)
    k_probe_final(int nparts, const ProbeAcc *parts, const pbf_cuda_substep *S, double *sums,
                  int *counts) {
    const int k = (int)blockIdx.x;
    ProbeAcc a = reduce_parts<PROBE_FINAL>(nparts, parts + (size_t)k * nparts, probe_identity());
    if (threadIdx.x != 0) return;
    const pbf_params &P = S->params;
    const double scale = (double)P.mass * (double)P.inv_dt * (double)P.inv_dt;
    sums[k] += scale * a.sum;
    counts[k] = a.count;
}

/* solver.c: watchdog, first level: the lowest slot with a non-finite value, and the fastest
 * particle (lowest slot among equals, as the serial loop's strict comparison picks it). */
__global__ void __launch_bounds__(BLOCK)
    k_watch(int n, const pbf_cuda_substep *S, const float *__restrict__ x,
            const float *__restrict__ p, const float *__restrict__ v,
            const float *__restrict__ lambda, Acc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = acc_identity();
    if (i < n) {
        const float inv_dt = S->params.inv_dt;
        const float inv_dt2 = inv_dt * inv_dt;
        pbf_v3 xp = v3_load(p, i), vv = v3_load(v, i);
        pbf_v3 d = v3_sub(xp, v3_load(x, i));
        if (!finite3(xp) || !finite3(vv) || !isfinite(lambda[i])) acc.ibad = i;
        float v2 = v3_dot(vv, vv), d2 = v3_dot(d, d) * inv_dt2;
        if (!(d2 <= v2)) v2 = d2;
        if (v2 != v2) v2 = __int_as_float(0x7f800000); /* NaN counts as infinitely fast */
        acc.vmax = v2;
        acc.imax = i;
    }
    block_store(acc, parts);
}

/* watchdog, second level: records the first failing substep of the step (sticky) */
__global__ void __launch_bounds__(FINAL)
    k_watch_final(int nparts, const Acc *parts, const pbf_cuda_substep *S, int substep,
                  const float *p, const float *v, const float *lambda, const int32_t *ids,
                  Results *res) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x != 0 || res->watch.failed) return;
    int slot = -1, kind = PBF_CUDA_OK;
    if (a.ibad != INT_MAX) {
        slot = a.ibad;
        pbf_v3 xp = v3_load(p, slot), vv = v3_load(v, slot);
        kind = !finite3(xp)   ? PBF_CUDA_BAD_POSITION
               : !finite3(vv) ? PBF_CUDA_BAD_VELOCITY
                              : PBF_CUDA_BAD_LAMBDA;
        (void)lambda;
    } else if (a.imax != INT_MAX && a.vmax > 0.0f && !(a.vmax <= S->watchdog_speed2)) {
        slot = a.imax;
        kind = PBF_CUDA_TOO_FAST;
    }
    if (kind == PBF_CUDA_OK) return;
    Watch &w = res->watch;
    w.failed = 1;
    w.substep = substep;
    w.kind = kind;
    w.slot = slot;
    w.id = ids[slot];
    for (int k = 0; k < 3; ++k) {
        w.x[k] = p[3 * slot + k];
        w.v[k] = v[3 * slot + k];
    }
    w.speed2 = a.vmax;
}

/* solver.c: finish_profile, first level */
__global__ void __launch_bounds__(BLOCK)
    k_profile(int n, float inv_rest_density, const float *__restrict__ density,
              const int32_t *__restrict__ counts, Acc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = acc_identity();
    if (i < n) {
        float rho = density[i];
        if (!isfinite(rho)) acc.ibad = i;
        float e = rho * inv_rest_density - 1.0f;
        e = e > 0.0f ? e : 0.0f;
        acc.sum = (double)e;
        acc.vmax = e;
        acc.imax = i;
        acc.sum2 = (double)counts[i];
    }
    block_store(acc, parts);
}

__global__ void __launch_bounds__(FINAL)
    k_profile_final(int nparts, const Acc *parts, const float *x, const int32_t *ids,
                    Results *res) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x != 0) return;
    Prof &q = res->prof;
    q.err_sum = a.sum;
    q.nb_sum = a.sum2;
    q.err_max = a.vmax;
    q.bad_slot = a.ibad == INT_MAX ? -1 : a.ibad;
    if (q.bad_slot >= 0) {
        q.bad_id = ids[q.bad_slot];
        for (int k = 0; k < 3; ++k) q.bad_x[k] = x[3 * q.bad_slot + k];
    }
}

/* ---------------------------------------------------------------------------------------------
 * Host side */

inline int blocks_for(int n) { return (n + BLOCK - 1) / BLOCK; }

/* Roles of the xyz buffers (solver.c's pointers), over a pool whose entries rotate. */
enum { R_X, R_P, R_P_TMP, R_P_PREV, R_V, R_V_TMP, R_COUNT };

struct GraphKey {
    int n, substeps, iterations, scorr_iterations, mode, sort, timed, tpp, tool, patches;
    unsigned generation;
    int role[R_COUNT];
    int ids_role;
};

struct GraphEntry {
    int used;
    GraphKey key;
    cudaGraphExec_t exec;
    int end_role[R_COUNT]; /* the rotation state the step leaves */
    int end_ids_role;
    int mark_count; /* timing intervals, with their events and stages */
    cudaEvent_t *events;
    int *marks;
    unsigned long long last_use;
};

} // namespace

struct pbf_cuda {
    int device;
    cudaStream_t stream;
    pbf_cuda_sort sort;
    pbf_grid grid; /* layout + device cell_start, cell_of (sorted), order */
    uint32_t *cell_count; /* cells + 1: histogram */
    int sort_bits;

    int count, capacity;
    float *vec[R_COUNT]; /* pool of 3·capacity float buffers */
    int role[R_COUNT]; /* role → pool index */
    int32_t *ids_pool[2];
    int ids_role; /* ids = ids_pool[ids_role], ids_tmp = the other */
    float *omega, *dv, *lambda, *density, *omega_len;
    int32_t *counts; /* neighbour counts */
    uint32_t *cell_key, *rank, *tmp_order, *iota;

    uint32_t *nb_count, *nb_start, *nb_index;
    size_t nb_capacity;
    float list_per_particle;

    void *cub_temp;
    size_t cub_temp_bytes;
    Acc *parts;
    float *tool_dx; /* with a tool: its displacement of each particle (3 floats) */
    ToolAcc *tool_parts; /* ... and the per-block partials of its sums */
    pbf_cuda_tool_sums *d_tool, *h_tool; /* one per substep */
    /* Force probes: each particle's move by the solids in the last pass (3 floats) and whether
     * it was in the patches' box; Chebyshev's carry and the pass that wrote it; the per-block
     * partials of probe_capacity patches; the step's sums and counts per patch. */
    float *probe_moved, *probe_carry;
    int *probe_valid, *probe_carry_pass;
    ProbeAcc *probe_parts;
    int probe_capacity, probe_pass;
    double *d_patch_sums, *h_patch_sums;
    pbf_cuda_patch *h_patches; /* pinned: the patches' copy to c_patches */
    int *d_patch_counts, *h_patch_counts;

    pbf_cuda_substep *d_sub, *h_sub;
    int sub_capacity;
    pbf_solid *h_solids;
    Results *d_res, *h_res;
    float *d_hist, *h_hist;
    int hist_capacity;

    GraphEntry graphs[MAX_GRAPHS];
    unsigned generation;
    unsigned long long use_clock;
    int graph_disabled; /* capture or instantiation failed once: launch kernel by kernel */
    int capturing;

    cudaEvent_t *events;
    int event_capacity;
    int *marks; /* marks[k]: the stage of the interval events[k] → events[k+1] */
    int mark_count;
    int timed; /* events are recorded */
    int tpp_config; /* threads per particle of the neighbour passes: 1, 4, 0 = by count */
    int tpp; /* ... for the current particle count */
    const char *stage; /* the stage being enqueued, for error messages */
    ErrFinish pending; /* a λ pass's error for the next Δp pass to reduce (dst NULL: none) */
    double *stage_acc; /* where flushes add the intervals */
};

namespace {

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return e_;                                                          \
    } while (0)

/* A CUDA error as a pbf_status with a message naming what failed. */
pbf_status fail(cudaError_t e, const char *what, char *err, size_t size) {
    if (e == cudaErrorMemoryAllocation) {
        pbf_cuda_format(err, size, "CUDA backend: out of device memory %s", what);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_cuda_format(err, size, "CUDA backend: %s failed: %s (%s)", what, cudaGetErrorString(e),
                    cudaGetErrorName(e));
    return PBF_ERR_NO_DEVICE;
}

template <class T> cudaError_t dalloc(pbf_cuda *c, T **ptr, size_t count) {
    *ptr = nullptr;
    if (count == 0) count = 1;
    (void)c;
    return cudaMalloc((void **)ptr, count * sizeof(T));
}

template <class T> void dfree(T **ptr) {
    if (*ptr) cudaFree(*ptr);
    *ptr = nullptr;
}

float *buf(pbf_cuda *c, int r) { return c->vec[c->role[r]]; }
int32_t *ids(pbf_cuda *c) { return c->ids_pool[c->ids_role]; }
int32_t *ids_tmp(pbf_cuda *c) { return c->ids_pool[1 - c->ids_role]; }
void swap_roles(pbf_cuda *c, int a, int b) {
    int t = c->role[a];
    c->role[a] = c->role[b];
    c->role[b] = t;
}

void destroy_graphs(pbf_cuda *c) {
    for (int k = 0; k < MAX_GRAPHS; ++k) {
        GraphEntry &g = c->graphs[k];
        if (!g.used) continue;
        cudaGraphExecDestroy(g.exec);
        free(g.events);
        free(g.marks);
        memset(&g, 0, sizeof g);
    }
}

/* Buffers moved: every cached graph refers to the old ones. */
void invalidate(pbf_cuda *c) {
    destroy_graphs(c);
    c->generation++;
}

void free_particles(pbf_cuda *c) {
    for (int k = 0; k < R_COUNT; ++k) dfree(&c->vec[k]);
    dfree(&c->ids_pool[0]);
    dfree(&c->ids_pool[1]);
    dfree(&c->omega);
    dfree(&c->dv);
    dfree(&c->lambda);
    dfree(&c->density);
    dfree(&c->omega_len);
    dfree(&c->counts);
    dfree(&c->cell_key);
    dfree(&c->rank);
    dfree(&c->tmp_order);
    dfree(&c->iota);
    dfree(&c->grid.cell_of);
    dfree(&c->grid.order);
    dfree(&c->nb_count);
    dfree(&c->nb_start);
    dfree(&c->nb_index);
    dfree(&c->parts);
    dfree(&c->tool_dx);
    dfree(&c->tool_parts);
    dfree(&c->probe_moved);
    dfree(&c->probe_carry);
    dfree(&c->probe_valid);
    dfree(&c->probe_carry_pass);
    dfree(&c->probe_parts);
    c->probe_capacity = 0;
    dfree(&c->cub_temp);
    c->capacity = 0;
    c->nb_capacity = 0;
    c->cub_temp_bytes = 0;
}

/* Scratch of the CUB calls for this capacity and list. */
cudaError_t size_cub_temp(pbf_cuda *c) {
    size_t need = 0, b = 0;
    const int cells = (int)c->grid.cell_count;
    CK(pbf_cub_exclusive_sum(nullptr, &b, nullptr, nullptr, cells + 1, c->stream));
    need = b > need ? b : need;
    CK(pbf_cub_exclusive_sum(nullptr, &b, nullptr, nullptr, c->capacity + 1, c->stream));
    need = b > need ? b : need;
    CK(pbf_cub_sort_pairs(nullptr, &b, nullptr, nullptr, nullptr, nullptr, c->capacity,
                          c->sort_bits, c->stream));
    need = b > need ? b : need;
    if (need <= c->cub_temp_bytes && c->cub_temp) return cudaSuccess;
    dfree(&c->cub_temp);
    uint8_t *t = nullptr;
    CK(dalloc(c, &t, need));
    c->cub_temp = t;
    c->cub_temp_bytes = need;
    return cudaSuccess;
}

/* Room for n particles (contents are not kept: an upload follows). */
cudaError_t reserve(pbf_cuda *c, int n) {
    if (n <= c->capacity) return cudaSuccess;
    free_particles(c);
    invalidate(c);
    int cap = n + n / 4;
    if (cap < 1024) cap = 1024;
    size_t v = 3 * (size_t)cap;
    for (int k = 0; k < R_COUNT; ++k) {
        CK(dalloc(c, &c->vec[k], v));
        c->role[k] = k;
    }
    c->ids_role = 0;
    CK(dalloc(c, &c->ids_pool[0], cap));
    CK(dalloc(c, &c->ids_pool[1], cap));
    CK(dalloc(c, &c->omega, v));
    CK(dalloc(c, &c->dv, v));
    CK(dalloc(c, &c->lambda, cap));
    CK(dalloc(c, &c->density, cap));
    CK(dalloc(c, &c->omega_len, cap));
    CK(dalloc(c, &c->counts, cap));
    CK(dalloc(c, &c->cell_key, cap));
    CK(dalloc(c, &c->rank, cap));
    CK(dalloc(c, &c->tmp_order, cap));
    CK(dalloc(c, &c->iota, cap));
    CK(dalloc(c, &c->grid.cell_of, cap));
    CK(dalloc(c, &c->grid.order, cap));
    CK(dalloc(c, &c->nb_count, (size_t)cap + 1));
    CK(dalloc(c, &c->nb_start, (size_t)cap + 1));
    size_t list = (size_t)((double)cap * c->list_per_particle) + 1024;
    CK(dalloc(c, &c->nb_index, list));
    c->nb_capacity = list;
    CK(dalloc(c, &c->parts, (size_t)blocks_for(cap * PBF_LANES) + 1)); /* either TPP */
    c->capacity = cap;
    k_iota<<<blocks_for(cap), BLOCK, 0, c->stream>>>(cap, c->iota);
    CK(cudaGetLastError());
    CK(cudaMemsetAsync(c->lambda, 0, (size_t)cap * sizeof(float), c->stream));
    CK(cudaMemsetAsync(c->counts, 0, (size_t)cap * sizeof(int32_t), c->stream));
    return size_cub_temp(c);
}

cudaError_t grow_list(pbf_cuda *c, size_t needed) {
    invalidate(c);
    dfree(&c->nb_index);
    size_t cap = needed + needed / 4 + 1024;
    CK(dalloc(c, &c->nb_index, cap));
    c->nb_capacity = cap;
    return cudaSuccess;
}

/* The force probes' arrays, for the current capacity and `patches` patches. */
cudaError_t reserve_probes(pbf_cuda *c, int patches) {
    if (!c->d_patch_sums) {
        CK(dalloc(c, &c->d_patch_sums, PBF_MAX_PROBES));
        CK(dalloc(c, &c->d_patch_counts, PBF_MAX_PROBES));
        CK(cudaMallocHost((void **)&c->h_patch_sums, PBF_MAX_PROBES * sizeof(double)));
        CK(cudaMallocHost((void **)&c->h_patch_counts, PBF_MAX_PROBES * sizeof(int)));
        CK(cudaMallocHost((void **)&c->h_patches, PBF_MAX_PROBES * sizeof(pbf_cuda_patch)));
    }
    if (c->probe_moved && patches <= c->probe_capacity) return cudaSuccess;
    invalidate(c);
    const size_t cap = (size_t)c->capacity;
    dfree(&c->probe_moved);
    dfree(&c->probe_carry);
    dfree(&c->probe_valid);
    dfree(&c->probe_carry_pass);
    dfree(&c->probe_parts);
    CK(dalloc(c, &c->probe_moved, 3 * cap));
    CK(dalloc(c, &c->probe_carry, 3 * cap));
    CK(dalloc(c, &c->probe_valid, cap));
    CK(dalloc(c, &c->probe_carry_pass, cap));
    CK(dalloc(c, &c->probe_parts, (size_t)patches * (size_t)blocks_for(c->capacity)));
    CK(cudaMemsetAsync(c->probe_carry_pass, 0xff, cap * sizeof(int), c->stream)); /* none: −1 */
    c->probe_capacity = patches;
    return cudaSuccess;
}

/* The tool's arrays, for the current capacity (the first step with a tool). */
cudaError_t reserve_tool(pbf_cuda *c) {
    if (c->tool_dx) return cudaSuccess;
    invalidate(c);
    CK(dalloc(c, &c->tool_dx, 3 * (size_t)c->capacity));
    return dalloc(c, &c->tool_parts, (size_t)blocks_for(c->capacity) + 1);
}

cudaError_t reserve_step(pbf_cuda *c, int substeps, int history) {
    if (substeps > c->sub_capacity) {
        invalidate(c);
        if (c->d_sub) cudaFree(c->d_sub);
        if (c->h_sub) cudaFreeHost(c->h_sub);
        if (c->d_tool) cudaFree(c->d_tool);
        if (c->h_tool) cudaFreeHost(c->h_tool);
        c->d_sub = c->h_sub = nullptr;
        c->d_tool = c->h_tool = nullptr;
        c->sub_capacity = 0;
        CK(dalloc(c, &c->d_sub, (size_t)substeps));
        CK(cudaMallocHost((void **)&c->h_sub, (size_t)substeps * sizeof(pbf_cuda_substep)));
        CK(dalloc(c, &c->d_tool, (size_t)substeps));
        CK(cudaMallocHost((void **)&c->h_tool, (size_t)substeps * sizeof(pbf_cuda_tool_sums)));
        c->sub_capacity = substeps;
    }
    if (history > c->hist_capacity) {
        invalidate(c);
        if (c->d_hist) cudaFree(c->d_hist);
        if (c->h_hist) cudaFreeHost(c->h_hist);
        c->d_hist = c->h_hist = nullptr;
        c->hist_capacity = 0;
        CK(dalloc(c, &c->d_hist, (size_t)history));
        CK(cudaMallocHost((void **)&c->h_hist, (size_t)history * sizeof(float)));
        c->hist_capacity = history;
    }
    return cudaSuccess;
}

/* ---- stage timing ---------------------------------------------------------------------------
 * events[0] is recorded at the start of the step; mark(stage) records the next event and files
 * the interval since the previous one under stage (-1: not a stage, like the watchdog). */

cudaError_t ensure_events(pbf_cuda *c, int n) {
    if (n <= c->event_capacity) return cudaSuccess;
    cudaEvent_t *e = (cudaEvent_t *)realloc(c->events, (size_t)n * sizeof *e);
    if (!e) return cudaErrorMemoryAllocation;
    c->events = e;
    int *m = (int *)realloc(c->marks, (size_t)n * sizeof *m);
    if (!m) return cudaErrorMemoryAllocation;
    c->marks = m;
    for (int k = c->event_capacity; k < n; ++k) {
        CK(cudaEventCreate(&c->events[k]));
        c->event_capacity = k + 1;
    }
    return cudaSuccess;
}

cudaError_t record(pbf_cuda *c, int k) {
    /* inside a capture, External makes the record a node of the graph (timing) */
    const unsigned flags = c->capturing ? cudaEventRecordExternal : cudaEventRecordDefault;
    return cudaEventRecordWithFlags(c->events[k], c->stream, flags);
}

/* Adds the intervals recorded so far to c->stage_acc (the stream must be idle). */
void add_intervals(const cudaEvent_t *ev, const int *marks, int count, double *acc) {
    for (int k = 0; k < count; ++k) {
        if (marks[k] < 0) continue;
        float ms = 0.0f;
        if (cudaEventElapsedTime(&ms, ev[k], ev[k + 1]) == cudaSuccess)
            acc[marks[k]] += ms;
        else
            (void)cudaGetLastError(); /* timing unavailable: that interval counts 0 */
    }
}

cudaError_t mark(pbf_cuda *c, int stage) {
    if (!c->timed) return cudaSuccess;
    if (c->mark_count + 1 >= MAX_EVENTS && !c->capturing) {
        /* a long error-controlled step: flush what is recorded and go on from the last event */
        CK(cudaStreamSynchronize(c->stream));
        add_intervals(c->events, c->marks, c->mark_count, c->stage_acc);
        cudaEvent_t t = c->events[0];
        c->events[0] = c->events[c->mark_count];
        c->events[c->mark_count] = t;
        c->mark_count = 0;
    }
    CK(ensure_events(c, c->mark_count + 2));
    c->marks[c->mark_count] = stage;
    c->mark_count++;
    return record(c, c->mark_count);
}

/* ---- the stages ---------------------------------------------------------------------------- */

Nb neighbors(pbf_cuda *c, int mode) {
    Nb nb;
    nb.list = mode == PBF_NEIGHBOR_LIST;
    nb.start = c->nb_start;
    nb.index = c->nb_index;
    nb.overflow = &c->d_res->overflow;
    nb.grid = c->grid;
    return nb;
}

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
    k_predict<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V));
    CK(cudaGetLastError());
    if (in->tool_sums) /* the tool's displacement of each particle, summed over the substep */
        CK(cudaMemsetAsync(c->tool_dx, 0, 3 * (size_t)n * sizeof(float), s));
    CK(mark(c, PBF_STAGE_PREDICT));

    c->stage = "grid sort";
    CK(enqueue_sort(c, buf(c, R_P)));
    /* gather3 for x, p, v and the ids, then the swaps (the scratch buffers become current) */
    k_gather<<<nb, BLOCK, 0, s>>>(n, c->grid.order, buf(c, R_X), buf(c, R_P), buf(c, R_V), ids(c),
                                  buf(c, R_P_TMP), buf(c, R_P_PREV), buf(c, R_V_TMP), ids_tmp(c));
    CK(cudaGetLastError());
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

/* stage_lambda plus average_density_error into d_hist[k] */
cudaError_t enqueue_lambda(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int k,
                           int host_checks) {
    const int n = c->count, nb = blocks_for(n * c->tpp);
    const Nb nbs = neighbors(c, in->neighbor_mode);
    float *p = buf(c, R_P);
    c->stage = "density (λ) pass";
    if (c->tpp == 1)
        k_lambda<1><<<nb, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->lambda, c->density,
                                                 c->counts, c->parts);
    else
        k_lambda<PBF_LANES><<<nb, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->lambda,
                                                         c->density, c->counts, c->parts);
    CK(cudaGetLastError());
    if (host_checks || nb > FUSE_MAX_PARTS) { /* error control reads it now; or too many */
        k_error_final<<<1, FINAL, 0, c->stream>>>(nb, c->parts, n, c->d_hist + k);
        CK(cudaGetLastError());
    } else { /* the Δp pass that follows reduces it */
        c->pending = ErrFinish{c->parts, nb, n, c->d_hist + k};
    }
    return mark(c, PBF_STAGE_LAMBDA);
}

/* probes.c: pbf__probes_force_pass after a Δp pass (the roles already rotated: p the pass's
 * result, p_prev what it read, p_tmp the iterate one further back). */
cudaError_t enqueue_probes(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, float omega,
                           int scorr) {
    const int n = c->count, nb = blocks_for(n);
    const pbf_cuda_substep *S = c->d_sub + sub;
    const float *x_old = buf(c, R_P_PREV);
    c->stage = "force probes";
    k_probe_pass<<<nb, BLOCK, 0, c->stream>>>(
        n, S, neighbors(c, in->neighbor_mode), x_old, buf(c, R_P), buf(c, R_P_TMP), c->lambda,
        c->density, omega, in->chebyshev_gamma, scorr, in->probe_carry, ++c->probe_pass,
        c->probe_moved, c->probe_valid, c->probe_carry, c->probe_carry_pass);
    CK(cudaGetLastError());
    k_probe_sum<<<dim3((unsigned)nb, (unsigned)in->patch_count), BLOCK, 0, c->stream>>>(
        n, S, x_old, c->probe_moved, c->probe_valid, c->probe_parts);
    CK(cudaGetLastError());
    k_probe_final<<<in->patch_count, PROBE_FINAL, 0, c->stream>>>(
        nb, c->probe_parts, S, c->d_patch_sums, c->d_patch_counts);
    return cudaGetLastError();
}

ErrFinish take_pending(pbf_cuda *c) {
    ErrFinish f = c->pending;
    c->pending = ErrFinish{nullptr, 0, 0, nullptr};
    return f;
}

/* stage_delta (pass k of the substep) and its rotation: out = p_tmp; p_tmp ← p_prev,
 * p_prev ← p, p ← out */
cudaError_t enqueue_delta(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int k, float omega) {
    const int n = c->count;
    const int scorr = in->scorr_iterations == 0 || k < in->scorr_iterations;
    const Nb nbs = neighbors(c, in->neighbor_mode);
    const float gamma = in->chebyshev_gamma;
    float *p = buf(c, R_P), *prev = buf(c, R_P_PREV), *out_p = buf(c, R_P_TMP);
    const ErrFinish fin = take_pending(c);
    const int blocks = blocks_for(n * c->tpp) + (fin.dst != nullptr);
    c->stage = "position (Δp) pass";
    if (c->tpp == 1)
        k_delta<1><<<blocks, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->lambda,
                                                    c->density, prev, out_p, omega, gamma, scorr,
                                                    c->tool_dx, fin);
    else
        k_delta<PBF_LANES><<<blocks, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->lambda,
                                                            c->density, prev, out_p, omega, gamma,
                                                            scorr, c->tool_dx, fin);
    CK(cudaGetLastError());
    int out = c->role[R_P_TMP];
    c->role[R_P_TMP] = c->role[R_P_PREV];
    c->role[R_P_PREV] = c->role[R_P];
    c->role[R_P] = out;
    if (in->patch_count > 0) CK(enqueue_probes(c, in, sub, omega, scorr));
    return mark(c, PBF_STAGE_DELTA);
}

/* Reads d_hist[k] back (error control: one small copy and a wait per iteration). */
cudaError_t read_error(pbf_cuda *c, int k, float *err) {
    CK(cudaMemcpyAsync(c->h_hist + k, c->d_hist + k, sizeof(float), cudaMemcpyDeviceToHost,
                       c->stream));
    CK(cudaStreamSynchronize(c->stream));
    *err = c->h_hist[k];
    return cudaSuccess;
}

/* solver.c: solve_density, with the same decisions (solve_control.h). With host_checks == 0 (a
 * fixed count) nothing is read back, so the sequence can be captured into a graph. Returns the
 * Δp passes done in *passes. */
cudaError_t enqueue_solve(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int host_checks,
                          int *passes, int *restarts, float *hist, int *hist_count) {
    const int controlled = in->controlled;
    const int max_it = controlled ? in->max_iterations : in->iterations;
    pbf_solve_control ctl =
        pbf_solve_control_begin(controlled ? in->target : 0.0f, in->min_iterations, max_it,
                                in->chebyshev, in->chebyshev_rho, in->chebyshev_delay);
    int k = 0;
    for (;; ++k) {
        if (!controlled && k == max_it) break;
        CK(enqueue_lambda(c, in, sub, k, host_checks));
        if (!host_checks) {
            CK(enqueue_delta(c, in, sub, k, 1.0f));
            continue;
        }
        float err = 0.0f;
        CK(read_error(c, k, &err));
        hist[k] = err;
        int restarted;
        if (pbf_solve_control_after_error(&ctl, k, err, &restarted)) break;
        *restarts += restarted;
        CK(enqueue_delta(c, in, sub, k, ctl.omega));
    }
    *hist_count = controlled ? k + 1 : k;
    *passes = k;
    return cudaSuccess;
}

/* Velocity, vorticity (+ the error after the last pass in fixed mode), watchdog, x ↔ p. */
cudaError_t enqueue_post(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int hist_slot) {
    const int n = c->count, nb = blocks_for(n);
    cudaStream_t s = c->stream;
    const pbf_cuda_substep *S = c->d_sub + sub;
    Nb nbv = neighbors(c, in->neighbor_mode);
    c->stage = "velocity update";
    k_velocity<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V));
    CK(cudaGetLastError());
    CK(mark(c, PBF_STAGE_VELOCITY));

    const int nbt = blocks_for(n * c->tpp); /* the neighbour passes' launch */
    c->stage = "vorticity and XSPH";
    float *p = buf(c, R_P), *v = buf(c, R_V);
    if (c->tpp == 1)
        k_vort<1><<<nbt, BLOCK, 0, s>>>(n, S, nbv, p, v, c->omega, c->dv, c->omega_len, c->density,
                                        c->parts);
    else
        k_vort<PBF_LANES><<<nbt, BLOCK, 0, s>>>(n, S, nbv, p, v, c->omega, c->dv, c->omega_len,
                                                c->density, c->parts);
    CK(cudaGetLastError());
    /* fixed count: the error after the last pass, reduced by confinement's extra block (or by
     * a kernel of its own when there are too many partials) */
    ErrFinish fin = ErrFinish{nullptr, 0, 0, nullptr};
    if (hist_slot >= 0 && nbt <= FUSE_MAX_PARTS) {
        fin = ErrFinish{c->parts, nbt, n, c->d_hist + hist_slot};
    } else if (hist_slot >= 0) {
        k_error_final<<<1, FINAL, 0, s>>>(nbt, c->parts, n, c->d_hist + hist_slot);
        CK(cudaGetLastError());
    }
    const int blocks = nbt + (fin.dst != nullptr);
    if (c->tpp == 1)
        k_conf<1><<<blocks, BLOCK, 0, s>>>(n, S, nbv, p, v, c->dv, c->omega, c->omega_len, fin);
    else
        k_conf<PBF_LANES>
            <<<blocks, BLOCK, 0, s>>>(n, S, nbv, p, v, c->dv, c->omega, c->omega_len, fin);
    CK(cudaGetLastError());
    CK(mark(c, PBF_STAGE_VORTICITY));
    if (in->tool_sums) { /* tool.c: pbf__tool_substep_end (the CPU files it under velocity) */
        c->stage = "tool";
        k_tool<<<nb, BLOCK, 0, s>>>(n, S, p, v, c->density, c->tool_dx, c->tool_parts);
        CK(cudaGetLastError());
        k_tool_final<<<1, TOOL_FINAL, 0, s>>>(nb, c->tool_parts, c->d_tool + sub);
        CK(cudaGetLastError());
        CK(mark(c, PBF_STAGE_VELOCITY));
    }

    c->stage = "watchdog";
    k_watch<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V), c->lambda, c->parts);
    CK(cudaGetLastError());
    k_watch_final<<<1, FINAL, 0, s>>>(nb, c->parts, S, sub, buf(c, R_P), buf(c, R_V), c->lambda,
                                      ids(c), c->d_res);
    CK(cudaGetLastError());
    swap_roles(c, R_X, R_P); /* the corrected positions become the state */
    return mark(c, -1);
}

cudaError_t enqueue_profile(pbf_cuda *c, float inv_rest_density) {
    const int n = c->count, nb = blocks_for(n);
    c->stage = "end-of-step statistics";
    k_profile<<<nb, BLOCK, 0, c->stream>>>(n, inv_rest_density, c->density, c->counts, c->parts);
    CK(cudaGetLastError());
    k_profile_final<<<1, FINAL, 0, c->stream>>>(nb, c->parts, buf(c, R_X), ids(c), c->d_res);
    CK(cudaGetLastError());
    return mark(c, -1);
}

/* The whole step. host_checks: error control (reads the error after each λ pass). */
cudaError_t enqueue_step(pbf_cuda *c, const pbf_cuda_step_in *in, int host_checks,
                         pbf_cuda_step_out *out) {
    CK(cudaMemsetAsync(&c->d_res->watch, 0, sizeof(Watch), c->stream));
    if (in->patch_count > 0)
        CK(cudaMemsetAsync(c->d_patch_sums, 0, PBF_MAX_PROBES * sizeof(double), c->stream));
    c->mark_count = 0;
    if (c->timed) {
        CK(ensure_events(c, 2));
        CK(record(c, 0));
    }
    for (int sub = 0; sub < in->substeps; ++sub) {
        CK(enqueue_pre(c, in, sub));
        int passes = 0, hist_count = 0;
        CK(enqueue_solve(c, in, sub, host_checks, &passes, &out->chebyshev_restarts,
                         in->iteration_error, &hist_count));
        out->substep_iterations += passes;
        if (passes > out->max_iterations_used) out->max_iterations_used = passes;
        out->iteration_error_count = in->controlled ? hist_count : hist_count + 1;
        CK(enqueue_post(c, in, sub, in->controlled ? -1 : hist_count));
    }
    return enqueue_profile(c, in->sub[0].params.inv_rest_density);
}

GraphKey make_key(const pbf_cuda *c, const pbf_cuda_step_in *in) {
    GraphKey k;
    memset(&k, 0, sizeof k);
    k.n = c->count;
    k.substeps = in->substeps;
    k.iterations = in->iterations;
    k.scorr_iterations = in->scorr_iterations; /* a launch argument of k_delta */
    k.mode = in->neighbor_mode;
    k.sort = c->sort;
    k.timed = c->timed;
    k.tpp = c->tpp;
    k.tool = in->tool_sums != nullptr;
    k.patches = in->patch_count;
    k.generation = c->generation;
    for (int r = 0; r < R_COUNT; ++r) k.role[r] = c->role[r];
    k.ids_role = c->ids_role;
    return k;
}

/* Captures the fixed-count step into a graph for the current rotation state. On failure the
 * roles are restored and *entry is NULL. */
cudaError_t capture(pbf_cuda *c, const pbf_cuda_step_in *in, GraphEntry **entry) {
    *entry = nullptr;
    GraphKey key = make_key(c, in);
    int role0[R_COUNT], ids0 = c->ids_role;
    memcpy(role0, c->role, sizeof role0);
    /* events are created outside the capture (the worst case of this step) */
    if (c->timed) CK(ensure_events(c, 2 + in->substeps * (7 + 2 * in->iterations)));
    pbf_cuda_step_out scratch;
    memset(&scratch, 0, sizeof scratch);
    CK(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed));
    c->capturing = 1;
    cudaError_t e = enqueue_step(c, in, 0, &scratch);
    cudaGraph_t graph = nullptr;
    cudaError_t e2 = cudaStreamEndCapture(c->stream, &graph);
    c->capturing = 0;
    cudaGraphExec_t exec = nullptr;
    if (e == cudaSuccess) e = e2;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    int end_role[R_COUNT], end_ids = c->ids_role;
    memcpy(end_role, c->role, sizeof end_role);
    memcpy(c->role, role0, sizeof role0); /* nothing ran yet */
    c->ids_role = ids0;
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return e;
    }
    /* the least recently used slot */
    GraphEntry *g = &c->graphs[0];
    for (int k = 0; k < MAX_GRAPHS; ++k) {
        if (!c->graphs[k].used) {
            g = &c->graphs[k];
            break;
        }
        if (c->graphs[k].last_use < g->last_use) g = &c->graphs[k];
    }
    if (g->used) {
        cudaGraphExecDestroy(g->exec);
        free(g->events);
        free(g->marks);
    }
    memset(g, 0, sizeof *g);
    g->key = key;
    g->exec = exec;
    memcpy(g->end_role, end_role, sizeof end_role);
    g->end_ids_role = end_ids;
    g->mark_count = c->mark_count;
    if (c->timed) {
        g->events = (cudaEvent_t *)malloc((size_t)(c->mark_count + 1) * sizeof *g->events);
        g->marks = (int *)malloc((size_t)(c->mark_count + 1) * sizeof *g->marks);
        if (!g->events || !g->marks) {
            cudaGraphExecDestroy(exec);
            free(g->events);
            free(g->marks);
            memset(g, 0, sizeof *g);
            return cudaErrorMemoryAllocation;
        }
        memcpy(g->events, c->events, (size_t)(c->mark_count + 1) * sizeof *g->events);
        memcpy(g->marks, c->marks, (size_t)(c->mark_count + 1) * sizeof *g->marks);
    }
    g->used = 1;
    *entry = g;
    return cudaSuccess;
}

GraphEntry *find_graph(pbf_cuda *c, const pbf_cuda_step_in *in) {
    GraphKey key = make_key(c, in);
    for (int k = 0; k < MAX_GRAPHS; ++k)
        if (c->graphs[k].used && memcmp(&c->graphs[k].key, &key, sizeof key) == 0)
            return &c->graphs[k];
    return nullptr;
}

void describe(int dev, const cudaDeviceProp &p, char *desc, size_t size) {
    pbf_cuda_format(desc, size, "%s (device %d, sm_%d%d, %d SMs, %.1f GiB)", p.name, dev, p.major,
                    p.minor, p.multiProcessorCount,
                    (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
}

} // namespace

/* ================================================================================================
 * The C ABI */

extern "C" pbf_status pbf_cuda_probe(char *desc, size_t desc_size) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        const char *why = e == cudaErrorNoDevice ? "no CUDA-capable GPU found"
                          : e == cudaErrorInsufficientDriver
                              ? "no NVIDIA driver found, or it is older than this build's CUDA "
                                "runtime needs"
                              : "the CUDA runtime cannot start";
        pbf_cuda_format(desc, desc_size,
                        "no usable CUDA device: %s (cudaGetDeviceCount: %s, %s; built "
                        "with CUDA runtime %d.%d)",
                        why, cudaGetErrorName(e), cudaGetErrorString(e), CUDART_VERSION / 1000,
                        CUDART_VERSION % 1000 / 10);
        return PBF_ERR_NO_DEVICE;
    }
    if (n <= 0) {
        pbf_cuda_format(desc, desc_size, "no CUDA device found (cudaGetDeviceCount returned 0)");
        return PBF_ERR_NO_DEVICE;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        pbf_cuda_format(desc, desc_size, "CUDA device 0 cannot be queried: %s",
                        cudaGetErrorString(e));
        return PBF_ERR_NO_DEVICE;
    }
    /* Is there code for this device in the build (sm_90 SASS and compute_90 PTX by default)? */
    cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, k_lambda<1>);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        pbf_cuda_format(
            desc, desc_size,
            "CUDA device 0, %s (sm_%d%d), cannot run this build's kernels: %s; rebuild with "
            "-DPBF_CUDA_ARCHITECTURES=%d%d",
            p.name, p.major, p.minor, cudaGetErrorString(e), p.major, p.minor);
        return PBF_ERR_NO_DEVICE;
    }
    describe(0, p, desc, desc_size);
    return PBF_OK;
}

extern "C" pbf_status pbf_cuda_create(const pbf_cuda_config *cfg, pbf_cuda **out, char *err,
                                      size_t err_size) {
    *out = nullptr;
    pbf_status st = pbf_cuda_probe(err, err_size);
    if (st != PBF_OK) return st;
    pbf_cuda *c = (pbf_cuda *)calloc(1, sizeof *c);
    if (!c) {
        pbf_cuda_format(err, err_size, "out of memory creating the CUDA backend");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    c->device = 0;
    c->sort = cfg->sort;
    c->list_per_particle = cfg->list_per_particle > 1.0f ? cfg->list_per_particle : 1.0f;
    c->grid = cfg->grid;
    c->grid.cell_start = c->grid.cursor = c->grid.cell_of = c->grid.order = nullptr;
    c->timed = cfg->stage_events != 0;
    c->tpp_config = cfg->threads_per_particle;
    c->sort_bits = 1;
    while (c->sort_bits < 32 && ((int64_t)1 << c->sort_bits) < c->grid.cell_count) c->sort_bits++;
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = dalloc(c, &c->grid.cell_start, (size_t)c->grid.cell_count + 1);
    if (e == cudaSuccess) e = dalloc(c, &c->cell_count, (size_t)c->grid.cell_count + 1);
    if (e == cudaSuccess) e = dalloc(c, &c->d_res, 1);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&c->h_res, sizeof(Results));
    if (e == cudaSuccess)
        e = cudaMallocHost((void **)&c->h_solids, PBF_MAX_SOLIDS * sizeof(pbf_solid));
    if (e == cudaSuccess) e = cudaMemsetAsync(c->d_res, 0, sizeof(Results), c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) {
        st = fail(e, "creating the device state", err, err_size);
        pbf_cuda_destroy(c);
        return st;
    }
    *out = c;
    return PBF_OK;
}

extern "C" void pbf_cuda_destroy(pbf_cuda *c) {
    if (!c) return;
    cudaSetDevice(c->device);
    if (c->stream) cudaStreamSynchronize(c->stream);
    destroy_graphs(c);
    free_particles(c);
    dfree(&c->grid.cell_start);
    dfree(&c->cell_count);
    dfree(&c->d_res);
    dfree(&c->d_sub);
    dfree(&c->d_hist);
    if (c->h_res) cudaFreeHost(c->h_res);
    if (c->h_sub) cudaFreeHost(c->h_sub);
    if (c->h_hist) cudaFreeHost(c->h_hist);
    if (c->h_solids) cudaFreeHost(c->h_solids);
    dfree(&c->d_tool);
    if (c->h_tool) cudaFreeHost(c->h_tool);
    dfree(&c->d_patch_sums);
    dfree(&c->d_patch_counts);
    if (c->h_patch_sums) cudaFreeHost(c->h_patch_sums);
    if (c->h_patch_counts) cudaFreeHost(c->h_patch_counts);
    if (c->h_patches) cudaFreeHost(c->h_patches);
    for (int k = 0; k < c->event_capacity; ++k) cudaEventDestroy(c->events[k]);
    free(c->events);
    free(c->marks);
    if (c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    free(c);
}

extern "C" size_t pbf_cuda_memory_bytes(const pbf_cuda *c) {
    if (!c) return 0;
    const size_t cap = (size_t)c->capacity;
    const size_t per_particle = R_COUNT * 12 + 2 * 4 /* ids */ + 2 * 12 /* omega, dv */ +
                                4 * 4 /* lambda, density, |ω|, counts */ +
                                6 * 4 /* cell_key, rank, tmp_order, iota, cell_of, order */ +
                                2 * 4 /* nb_count, nb_start */;
    return 2 * ((size_t)c->grid.cell_count + 1) * sizeof(uint32_t) + cap * per_particle +
           c->nb_capacity * sizeof(uint32_t) +
           ((size_t)blocks_for(c->capacity * PBF_LANES) + 1) * sizeof(Acc) + c->cub_temp_bytes +
           (c->tool_dx ? cap * 12 + ((size_t)blocks_for(c->capacity) + 1) * sizeof(ToolAcc) : 0) +
           (c->probe_moved ? cap * 32 + (size_t)c->probe_capacity *
                                            (size_t)blocks_for(c->capacity) * sizeof(ProbeAcc)
                           : 0) +
           (size_t)c->sub_capacity * (sizeof(pbf_cuda_substep) + sizeof(pbf_cuda_tool_sums)) +
           (size_t)c->hist_capacity * sizeof(float) + sizeof(Results);
}
extern "C" pbf_cuda_sort pbf_cuda_get_sort(const pbf_cuda *c) { return c->sort; }

/* Stream-ordered copies: the backend's stream does not wait for the legacy default stream. */
static cudaError_t to_device(pbf_cuda *c, void *dst, const void *src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream);
}
static cudaError_t to_host(pbf_cuda *c, void *dst, const void *src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream);
}

extern "C" pbf_status pbf_cuda_upload(pbf_cuda *c, int count, const float *x, const float *v,
                                      const float *density, const int32_t *id, char *err,
                                      size_t err_size) {
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess) e = reserve(c, count);
    if (e != cudaSuccess) {
        char what[96];
        pbf_cuda_format(what, sizeof what, "allocating %d particles", count);
        return fail(e, what, err, err_size);
    }
    c->count = count;
    const size_t v3b = 3 * (size_t)count * sizeof(float), sb = (size_t)count * sizeof(float);
    if (count > 0) {
        e = to_device(c, buf(c, R_X), x, v3b);
        if (e == cudaSuccess) e = to_device(c, buf(c, R_P), x, v3b);
        if (e == cudaSuccess) e = to_device(c, buf(c, R_V), v, v3b);
        if (e == cudaSuccess) e = to_device(c, c->density, density, sb);
        if (e == cudaSuccess) e = to_device(c, ids(c), id, (size_t)count * sizeof(int32_t));
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? PBF_OK : fail(e, "uploading the particles", err, err_size);
}

extern "C" pbf_status pbf_cuda_download(pbf_cuda *c, float *x, float *v, float *density,
                                        int32_t *id, char *err, size_t err_size) {
    cudaError_t e = cudaSetDevice(c->device);
    const int n = c->count;
    const size_t v3b = 3 * (size_t)n * sizeof(float), sb = (size_t)n * sizeof(float);
    if (n > 0) {
        if (e == cudaSuccess && x) e = to_host(c, x, buf(c, R_X), v3b);
        if (e == cudaSuccess && v) e = to_host(c, v, buf(c, R_V), v3b);
        if (e == cudaSuccess && density) e = to_host(c, density, c->density, sb);
        if (e == cudaSuccess && id) e = to_host(c, id, ids(c), (size_t)n * sizeof(int32_t));
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? PBF_OK : fail(e, "reading the particles back", err, err_size);
}

extern "C" void pbf_cuda_device_arrays(const pbf_cuda *c, int *device, const float **x,
                                       const float **v, const float **density) {
    *device = c->device;
    *x = c->vec[c->role[R_X]];
    *v = c->vec[c->role[R_V]];
    *density = c->density;
}

extern "C" pbf_status pbf_cuda_step(pbf_cuda *c, const pbf_cuda_step_in *in, pbf_cuda_step_out *out,
                                    char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    if (c->count == 0 || in->substeps <= 0) return PBF_OK;
    const int n = c->count;
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess)
        e = reserve_step(c, in->substeps, in->history_size > 2 ? in->history_size : 2);
    if (e == cudaSuccess && in->tool_sums) e = reserve_tool(c);
    if (e == cudaSuccess && in->patch_count > 0) e = reserve_probes(c, in->patch_count);
    char what[192];
    if (e != cudaSuccess) {
        pbf_cuda_format(what, sizeof what, "preparing a step of %d particles", n);
        return fail(e, what, err, err_size);
    }

    /* inputs: the substeps' constants and the solids */
    memcpy(c->h_sub, in->sub, (size_t)in->substeps * sizeof(pbf_cuda_substep));
    int solids = in->sub[0].params.solid_count;
    if (solids < 0) solids = 0;
    if (solids > PBF_MAX_SOLIDS) solids = PBF_MAX_SOLIDS;
    if (solids > 0) memcpy(c->h_solids, in->solids, (size_t)solids * sizeof(pbf_solid));
    e = cudaMemcpyAsync(c->d_sub, c->h_sub, (size_t)in->substeps * sizeof(pbf_cuda_substep),
                        cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess && solids > 0)
        e = cudaMemcpyToSymbolAsync(c_solids, c->h_solids, (size_t)solids * sizeof(pbf_solid), 0,
                                    cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess && in->patch_count > 0) {
        memcpy(c->h_patches, in->patches, (size_t)in->patch_count * sizeof(pbf_cuda_patch));
        e = cudaMemcpyToSymbolAsync(c_patches, c->h_patches,
                                    (size_t)in->patch_count * sizeof(pbf_cuda_patch), 0,
                                    cudaMemcpyHostToDevice, c->stream);
    }
    if (e != cudaSuccess) return fail(e, "copying the step's parameters", err, err_size);

    /* Below TPP_AUTO_LIMIT particles the GPU is not full with one thread per particle: four
     * per particle (one per lane) shorten the chains that then set the time. */
    c->tpp = c->tpp_config == 1 || c->tpp_config == PBF_LANES ? c->tpp_config
             : n < TPP_AUTO_LIMIT                             ? PBF_LANES
                                                              : 1;
    double stage[PBF_STAGE_COUNT];
    memset(stage, 0, sizeof stage);
    c->stage_acc = stage;
    /* A fixed count runs as one graph launch; error control kernel by kernel (it waits for the
     * error after every λ pass). A step with too many passes to time in one graph also runs
     * kernel by kernel. */
    const long long events = 2 + (long long)in->substeps * (7 + 2 * (long long)in->iterations);
    const int want_graph = !in->controlled && !c->graph_disabled && events < MAX_EVENTS;
    GraphEntry *g = nullptr;
    if (want_graph) {
        g = find_graph(c, in);
        if (!g && capture(c, in, &g) != cudaSuccess) {
            c->graph_disabled = 1; /* never again for this world: launch kernel by kernel */
            g = nullptr;
        }
    }
    const char *where = nullptr; /* where a launch failed; an error in a kernel shows at the end */
    if (g) {
        g->last_use = ++c->use_clock;
        e = cudaGraphLaunch(g->exec, c->stream);
        if (e != cudaSuccess) where = "launch of the step's CUDA graph";
        memcpy(c->role, g->end_role, sizeof c->role);
        c->ids_role = g->end_ids_role;
        out->graph = 1;
        out->substep_iterations = in->iterations * in->substeps;
        out->max_iterations_used = in->iterations;
        out->iteration_error_count = in->iterations + 1;
    } else {
        e = enqueue_step(c, in, in->controlled, out);
        if (e != cudaSuccess) where = c->stage;
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(c->h_res, c->d_res, sizeof(Results), cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess && !in->controlled)
        e = cudaMemcpyAsync(c->h_hist, c->d_hist, (size_t)(in->iterations + 1) * sizeof(float),
                            cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess && in->tool_sums)
        e = cudaMemcpyAsync(c->h_tool, c->d_tool, (size_t)in->substeps * sizeof *c->h_tool,
                            cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess && in->patch_count > 0)
        e = cudaMemcpyAsync(c->h_patch_sums, c->d_patch_sums,
                            (size_t)in->patch_count * sizeof(double), cudaMemcpyDeviceToHost,
                            c->stream);
    if (e == cudaSuccess && in->patch_count > 0)
        e = cudaMemcpyAsync(c->h_patch_counts, c->d_patch_counts,
                            (size_t)in->patch_count * sizeof(int), cudaMemcpyDeviceToHost,
                            c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) {
        if (where)
            pbf_cuda_format(what, sizeof what, "a step of %d particles, at or before its %s", n,
                            where);
        else
            pbf_cuda_format(
                what, sizeof what,
                "a step of %d particles (a kernel failed; it showed when the step finished: "
                "CUDA_LAUNCH_BLOCKING=1 stops at the kernel)",
                n);
        return fail(e, what, err, err_size);
    }

    if (in->tool_sums)
        memcpy(in->tool_sums, c->h_tool, (size_t)in->substeps * sizeof *in->tool_sums);
    if (in->patch_count > 0) {
        memcpy(in->patch_sums, c->h_patch_sums, (size_t)in->patch_count * sizeof(double));
        memcpy(in->patch_counts, c->h_patch_counts, (size_t)in->patch_count * sizeof(int));
    }
    if (g)
        add_intervals(g->events, g->marks, g->mark_count, stage);
    else if (c->timed)
        add_intervals(c->events, c->marks, c->mark_count, stage);
    memcpy(out->stage_ms, stage, sizeof stage);
    c->stage_acc = nullptr;

    if (!in->controlled) {
        int m = in->iterations + 1;
        if (m > in->history_size) m = in->history_size;
        memcpy(in->iteration_error, c->h_hist, (size_t)m * sizeof(float));
        out->iteration_error_count = m;
    }
    const Results &r = *c->h_res;
    if (r.watch.failed) {
        out->unstable = r.watch.kind;
        out->unstable_substep = r.watch.substep;
        out->unstable_id = r.watch.id;
        memcpy(out->unstable_x, r.watch.x, sizeof out->unstable_x);
        memcpy(out->unstable_v, r.watch.v, sizeof out->unstable_v);
        out->unstable_speed2 = r.watch.speed2;
    }
    out->bad_density = r.prof.bad_slot >= 0;
    if (out->bad_density) {
        out->bad_density_id = r.prof.bad_id;
        memcpy(out->bad_density_x, r.prof.bad_x, sizeof out->bad_density_x);
    }
    out->avg_density_error = (float)(r.prof.err_sum / n);
    out->max_density_error = r.prof.err_max;
    out->avg_neighbors = (float)(r.prof.nb_sum / n);
    if (r.overflow) { /* grow the list; this step walked the cells */
        out->list_overflow = 1;
        e = grow_list(c, r.needed);
        if (e == cudaSuccess) e = cudaMemsetAsync(c->d_res, 0, sizeof(Results), c->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
        if (e != cudaSuccess) {
            pbf_cuda_format(what, sizeof what,
                            "growing the neighbour list of %d particles to %u entries", n,
                            r.needed);
            return fail(e, what, err, err_size);
        }
    }
    return PBF_OK;
}

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
