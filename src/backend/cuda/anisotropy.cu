/* pbf_surface_gpu_anisotropy on the device (the C ABI: anisotropy.h). The CPU's algorithm
 * (src/surface/anisotropy.c), stage for stage, with its math (src/surface/anisotropy_math.h):
 *
 *  1. bounds: min/max of the positions and the lowest non-finite particle, a two-level tree
 *     reduction (exact and order-free: min, max); the host reads 40 bytes back and derives the
 *     grid with the CPU's code (surface_anisotropy_setup);
 *  2. keys: each particle's 64-bit cell key (cell_index.h), then a stable radix sort of
 *     (key, index) pairs (CUB): particles in a cell keep their index order, the CPU's order;
 *  3. cells: the occupied cells (a head flag where the key changes, an exclusive sum, a
 *     scatter) with their start offsets, and the positions gathered in sorted order (x, y, z
 *     arrays) so that threads of a cell read the same candidates;
 *  4. pass 1, one thread per particle in sorted order: its 9 rows of 3 cells found by binary
 *     search among the occupied cells (cell_keys_row, the CPU's function), the candidates of
 *     each row summed in float in sorted order, each row's sums added to double totals (the
 *     CPU's loop), the covariance and the ellipsoid, and the first smoothing step (λ) into a
 *     scratch array (or the centre itself when λ = 0);
 *  5. pass 2 (λ > 0): the inflating step μ from the moved neighbours, into the centres.
 *
 * Deterministic: no atomics; every sum has a fixed order, so two runs give the same bits. Not
 * the CPU's bits: its `omp simd` reduction adds a row's candidates in vector lanes, here they
 * are added one by one (docs: pbf_surface_gpu_anisotropy).
 *
 * Scratch arrays grow with the particle count and stay allocated between calls (the renderer
 * calls this every frame). */
#include "cuda/anisotropy.h"

#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "cub_ops.h"
#include "cuda/backend.h" /* pbf_cuda_probe */
#include "cuda/format.h"
#include "surface/anisotropy_math.h"
#include "surface/cell_index.h" /* cell_key_bits, cell_key_coords, cell_keys_row */

namespace {

constexpr int BLOCK = 128; /* threads per block of the per-particle kernels */
constexpr int REDUCE = 256; /* threads per block of the bounds reduction */
constexpr int REDUCE_BLOCKS = 1024; /* its first level's largest grid */
constexpr int SUB = SURFACE_ANISO_SUB;

/* What the bounds reduction combines: exact under any order (min, max, min index). */
struct Bounds {
    float lo[3], hi[3];
    int bad; /* lowest index with a non-finite coordinate, INT_MAX when none */
};

} // namespace

struct pbf_surface_gpu {
    int device; /* the device it was created on (the calls switch to it) */
    int pageable_access; /* the device reads pageable host memory (HMM, ATS) */
    cudaStream_t stream; /* its own: the calls synchronise it before they return */
    int capacity; /* particles the per-particle arrays hold */
    uint64_t *keys[2]; /* cell keys: unsorted, sorted */
    int32_t *order[2]; /* particle indices: identity, sorted (stable) */
    uint32_t *head; /* 1 where a sorted key differs from the one before */
    uint32_t *cell_of; /* exclusive sum of head: each sorted slot's occupied cell */
    uint64_t *cell_keys; /* the occupied cells' keys, sorted, unique */
    int32_t *cell_start; /* their offsets into the sorted order (capacity + 1) */
    int *cell_count; /* how many (one int, on the device: no read back) */
    float *sorted; /* positions in sorted order: x[capacity], y[...], z[...] */
    float *moved; /* the same after the first smoothing step */
    void *temp; /* CUB's scratch */
    size_t temp_bytes;
    int out_capacity; /* particles the scratch outputs hold (NULL centers or axes) */
    float *out_centers, *out_axes;
    Bounds *partial; /* the first reduction level's block results (REDUCE_BLOCKS) */
    pbf_cuda_surface_box *bounds; /* the total (device) */
    pbf_cuda_surface_box *h_bounds; /* and what the host reads (pinned) */
};

namespace {

/* A CUDA error as a pbf_status, with the stage and the particle count (none when < 0). */
pbf_status fail(cudaError_t e, const char *stage, int count, char *err, size_t size) {
    char what[160];
    if (count >= 0)
        snprintf(what, sizeof what, "%s, %d particles", stage, count);
    else
        snprintf(what, sizeof what, "%s", stage);
    if (e == cudaErrorMemoryAllocation) {
        pbf_cuda_format(err, size, "surface anisotropy on the GPU: out of device memory (%s)",
                        what);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_cuda_format(err, size, "surface anisotropy on the GPU: %s failed: %s (%s)", what,
                    cudaGetErrorString(e), cudaGetErrorName(e));
    return PBF_ERR_NO_DEVICE;
}

/* Makes g's device current for the length of a call and restores the caller's device. */
struct DeviceScope {
    int previous = -1;
    cudaError_t error = cudaSuccess;
    explicit DeviceScope(int device) {
        error = cudaGetDevice(&previous);
        if (error == cudaSuccess && previous != device)
            error = cudaSetDevice(device);
        else
            previous = -1; /* nothing to restore */
    }
    ~DeviceScope() {
        if (previous >= 0) (void)cudaSetDevice(previous);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;
};

template <class T> cudaError_t dalloc(T **ptr, size_t count) {
    *ptr = nullptr;
    return cudaMalloc((void **)ptr, (count > 0 ? count : 1) * sizeof(T));
}

template <class T> void dfree(T **ptr) {
    if (*ptr) (void)cudaFree(*ptr);
    *ptr = nullptr;
}

int blocks_for(int n, int threads) { return (int)(((int64_t)n + threads - 1) / threads); }

/* Refuses a pointer the device cannot read: pageable host memory (where the device does not
 * read it through HMM or ATS) or another device's memory. Host memory passed by mistake would
 * otherwise be an illegal address inside a kernel, which ends the process's CUDA context.
 * Device, managed and pinned host memory pass, and so does a pointer the runtime cannot
 * describe (the query's error cleared): the check only refuses what it knows is wrong. */
pbf_status check_pointer(const pbf_surface_gpu *g, const void *ptr, const char *name, int count,
                         char *err, size_t err_size) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return PBF_OK;
    }
    if (a.type == cudaMemoryTypeUnregistered && !g->pageable_access) {
        pbf_cuda_format(
            err, err_size,
            "surface anisotropy on the GPU: %s (%p, %d particles) is host memory; it must be "
            "device memory (cudaMalloc, a mapped GL buffer)",
            name, ptr, count);
        return PBF_ERR_INVALID_ARG;
    }
    if (a.type == cudaMemoryTypeDevice && a.device != g->device) {
        pbf_cuda_format(
            err, err_size,
            "surface anisotropy on the GPU: %s (%p, %d particles) is on CUDA device %d; this "
            "pbf_surface_gpu was created on device %d",
            name, ptr, count, a.device, g->device);
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * 1. Bounds */

__device__ __forceinline__ Bounds bounds_empty() {
    Bounds b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = INFINITY;
        b.hi[d] = -INFINITY;
    }
    b.bad = INT_MAX;
    return b;
}

__device__ __forceinline__ Bounds bounds_combine(const Bounds &a, const Bounds &b) {
    Bounds r;
    for (int d = 0; d < 3; ++d) {
        r.lo[d] = b.lo[d] < a.lo[d] ? b.lo[d] : a.lo[d];
        r.hi[d] = b.hi[d] > a.hi[d] ? b.hi[d] : a.hi[d];
    }
    r.bad = b.bad < a.bad ? b.bad : a.bad;
    return r;
}

/* A block's tree over its REDUCE threads; every thread must call it; thread 0 gets the total. */
__device__ Bounds bounds_block(Bounds v) {
    __shared__ Bounds sh[REDUCE];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = REDUCE / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] = bounds_combine(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    return sh[0];
}

__global__ void __launch_bounds__(REDUCE)
    k_bounds(int n, const float *__restrict__ pos, Bounds *__restrict__ partial) {
    Bounds b = bounds_empty();
    for (int64_t i = (int64_t)blockIdx.x * REDUCE + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * REDUCE) {
        const float x = pos[3 * (size_t)i], y = pos[3 * (size_t)i + 1], z = pos[3 * (size_t)i + 2];
        if (!(isfinite(x) && isfinite(y) && isfinite(z))) {
            b.bad = (int)i < b.bad ? (int)i : b.bad;
            continue;
        }
        const float p[3] = {x, y, z};
        for (int d = 0; d < 3; ++d) {
            b.lo[d] = p[d] < b.lo[d] ? p[d] : b.lo[d];
            b.hi[d] = p[d] > b.hi[d] ? p[d] : b.hi[d];
        }
    }
    b = bounds_block(b);
    if (threadIdx.x == 0) partial[blockIdx.x] = b;
}

/* The second level: one block over the first's results, then the answer the host reads. */
__global__ void __launch_bounds__(REDUCE)
    k_bounds_final(int blocks, const float *__restrict__ pos, const Bounds *__restrict__ partial,
                   pbf_cuda_surface_box *__restrict__ out) {
    Bounds b = bounds_empty();
    for (int k = threadIdx.x; k < blocks; k += REDUCE) b = bounds_combine(b, partial[k]);
    b = bounds_block(b);
    if (threadIdx.x != 0) return;
    for (int d = 0; d < 3; ++d) {
        out->lo[d] = b.lo[d];
        out->hi[d] = b.hi[d];
        out->bad_position[d] = b.bad == INT_MAX ? 0.0f : pos[3 * (size_t)b.bad + d];
    }
    out->bad = b.bad == INT_MAX ? -1 : b.bad;
}

/* ---------------------------------------------------------------------------------------------
 * 2-3. Keys, sort, cells */

__global__ void __launch_bounds__(BLOCK)
    k_keys(int n, const float *__restrict__ pos, surface_aniso_params P,
           uint64_t *__restrict__ keys, int32_t *__restrict__ order) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    int64_t c[3];
    for (int d = 0; d < 3; ++d)
        c[d] = surface_aniso_cell(pos[3 * (size_t)i + d], P.origin[d], P.cell_size);
    keys[i] = cell_key_bits(P.bits, c[0], c[1], c[2]);
    order[i] = i;
}

__global__ void __launch_bounds__(BLOCK)
    k_heads(int n, const uint64_t *__restrict__ keys, uint32_t *__restrict__ head) {
    const int s = blockIdx.x * BLOCK + threadIdx.x;
    if (s >= n) return;
    head[s] = s == 0 || keys[s] != keys[s - 1];
}

/* The occupied cells (cell_index_build's loop): cell_of is the exclusive sum of head. */
__global__ void __launch_bounds__(BLOCK)
    k_cells(int n, const uint64_t *__restrict__ keys, const uint32_t *__restrict__ head,
            const uint32_t *__restrict__ cell_of, uint64_t *__restrict__ cell_keys,
            int32_t *__restrict__ cell_start, int *__restrict__ cell_count) {
    const int s = blockIdx.x * BLOCK + threadIdx.x;
    if (s >= n) return;
    if (head[s]) {
        cell_keys[cell_of[s]] = keys[s];
        cell_start[cell_of[s]] = s;
    }
    if (s == n - 1) {
        const int cells = (int)(cell_of[s] + head[s]);
        *cell_count = cells;
        cell_start[cells] = n;
    }
}

__global__ void __launch_bounds__(BLOCK)
    k_gather(int n, const float *__restrict__ pos, const int32_t *__restrict__ order,
             float *__restrict__ sorted) {
    const int s = blockIdx.x * BLOCK + threadIdx.x;
    if (s >= n) return;
    const size_t i = (size_t)order[s];
    for (int d = 0; d < 3; ++d) sorted[(size_t)d * n + s] = pos[3 * i + d];
}

/* ---------------------------------------------------------------------------------------------
 * 4-5. The passes (anisotropy.c, surface_anisotropy_run: the same loop body per particle) */

/* The candidates of a particle's rows, in the CPU's order (dz, then dy; neighbor_rows). */
__device__ __forceinline__ void row_range(const surface_aniso_params &P,
                                          const uint64_t *__restrict__ cell_keys,
                                          const int32_t *__restrict__ cell_start, int cells,
                                          const int32_t cc[3], int dy, int dz, int32_t *begin,
                                          int32_t *end) {
    cell_keys_row(cell_keys, cell_start, cells,
                  cell_key_bits(P.bits, cc[0] - SUB, cc[1] + dy, cc[2] + dz),
                  cell_key_bits(P.bits, cc[0] + SUB, cc[1] + dy, cc[2] + dz), begin, end);
}

struct PassArgs {
    int n;
    pbf_surface_def def;
    surface_aniso_params P;
    const uint64_t *keys; /* sorted */
    const int32_t *order; /* sorted slot -> particle */
    const uint64_t *cell_keys;
    const int32_t *cell_start;
    const int *cell_count;
    const float *sorted; /* x, y, z arrays of n */
    float *moved; /* x, y, z arrays of n */
    float *centers; /* 3 per particle, particle order */
    float *axes; /* 9 per particle, particle order */
};

/* Pass 1: covariance, axes, and the first smoothing step. */
__global__ void __launch_bounds__(BLOCK) k_pass1(PassArgs A) {
    const int s = blockIdx.x * BLOCK + threadIdx.x;
    if (s >= A.n) return;
    const size_t n = (size_t)A.n;
    const float *__restrict__ sx = A.sorted, *__restrict__ sy = A.sorted + n,
                              *__restrict__ sz = A.sorted + 2 * n;
    const int cells = *A.cell_count;
    const float inv_R2 = A.P.inv_R2;
    int32_t cc[3];
    cell_key_coords(A.P.bits, A.keys[s], cc);
    const float xi = sx[s], yi = sy[s], zi = sz[s];
    double sw = 0.0, s1[3] = {0, 0, 0}, s2[6] = {0, 0, 0, 0, 0, 0};
    int neighbors = -1; /* itself */
    for (int dz = -SUB; dz <= SUB; ++dz)
        for (int dy = -SUB; dy <= SUB; ++dy) {
            int32_t begin, end;
            row_range(A.P, A.cell_keys, A.cell_start, cells, cc, dy, dz, &begin, &end);
            float rw = 0, r1x = 0, r1y = 0, r1z = 0;
            float rxx = 0, rxy = 0, rxz = 0, ryy = 0, ryz = 0, rzz = 0;
            int rn = 0;
            for (int k = begin; k < end; ++k) {
                const float fx = sx[k] - xi, fy = sy[k] - yi, fz = sz[k] - zi;
                const float q2 = surface_aniso_q2(fx, fy, fz, inv_R2);
                const float w = surface_aniso_weight(q2);
                rw += w;
                r1x += w * fx, r1y += w * fy, r1z += w * fz;
                rxx += w * fx * fx, rxy += w * fx * fy, rxz += w * fx * fz;
                ryy += w * fy * fy, ryz += w * fy * fz, rzz += w * fz * fz;
                rn += surface_aniso_counts(q2);
            }
            sw += rw;
            s1[0] += r1x, s1[1] += r1y, s1[2] += r1z;
            s2[0] += rxx, s2[1] += rxy, s2[2] += rxz;
            s2[3] += ryy, s2[4] += ryz, s2[5] += rzz;
            neighbors += rn;
        }
    const size_t i = (size_t)A.order[s];
    double m[3], cov[9];
    surface_aniso_mean(sw, s1, m);
    surface_aniso_covariance(sw, s2, m, cov);
    surface_aniso_axes(&A.def, A.P.h, neighbors, cov, A.axes + 9 * i);
    const float x[3] = {xi, yi, zi};
    for (int e = 0; e < 3; ++e) {
        if (A.P.lambda > 0.0)
            A.moved[(size_t)e * n + (size_t)s] = surface_aniso_step(x[e], A.P.lambda, m[e]);
        else
            A.centers[3 * i + e] = x[e];
    }
}

/* Pass 2: the inflating step μ from the moved neighbours, with pass 1's weights. */
__global__ void __launch_bounds__(BLOCK) k_pass2(PassArgs A) {
    const int s = blockIdx.x * BLOCK + threadIdx.x;
    if (s >= A.n) return;
    const size_t n = (size_t)A.n;
    const float *__restrict__ sx = A.sorted, *__restrict__ sy = A.sorted + n,
                              *__restrict__ sz = A.sorted + 2 * n;
    const float *__restrict__ mx = A.moved, *__restrict__ my = A.moved + n,
                              *__restrict__ mz = A.moved + 2 * n;
    const int cells = *A.cell_count;
    const float inv_R2 = A.P.inv_R2;
    int32_t cc[3];
    cell_key_coords(A.P.bits, A.keys[s], cc);
    const float xi = sx[s], yi = sy[s], zi = sz[s];
    const float ui = mx[s], vi = my[s], ti = mz[s];
    double sw = 0.0, s1[3] = {0, 0, 0};
    for (int dz = -SUB; dz <= SUB; ++dz)
        for (int dy = -SUB; dy <= SUB; ++dy) {
            int32_t begin, end;
            row_range(A.P, A.cell_keys, A.cell_start, cells, cc, dy, dz, &begin, &end);
            float rw = 0, r1x = 0, r1y = 0, r1z = 0;
            for (int k = begin; k < end; ++k) {
                const float fx = sx[k] - xi, fy = sy[k] - yi, fz = sz[k] - zi;
                const float w = surface_aniso_weight(surface_aniso_q2(fx, fy, fz, inv_R2));
                rw += w;
                r1x += w * (mx[k] - ui);
                r1y += w * (my[k] - vi);
                r1z += w * (mz[k] - ti);
            }
            sw += rw;
            s1[0] += r1x, s1[1] += r1y, s1[2] += r1z;
        }
    const size_t i = (size_t)A.order[s];
    double m[3];
    surface_aniso_mean(sw, s1, m);
    A.centers[3 * i + 0] = surface_aniso_step(ui, A.P.mu, m[0]);
    A.centers[3 * i + 1] = surface_aniso_step(vi, A.P.mu, m[1]);
    A.centers[3 * i + 2] = surface_aniso_step(ti, A.P.mu, m[2]);
}

/* The isotropic kernel: the positions and round kernels of radius h. */
__global__ void __launch_bounds__(BLOCK)
    k_round(int n, double h, const float *__restrict__ pos, float *__restrict__ centers,
            float *__restrict__ axes) {
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) centers[3 * (size_t)i + d] = pos[3 * (size_t)i + d];
    surface_aniso_round(h, axes + 9 * (size_t)i);
}

/* ---------------------------------------------------------------------------------------------
 * Scratch */

void free_particles(pbf_surface_gpu *g) {
    for (int k = 0; k < 2; ++k) {
        dfree(&g->keys[k]);
        dfree(&g->order[k]);
    }
    dfree(&g->head);
    dfree(&g->cell_of);
    dfree(&g->cell_keys);
    dfree(&g->cell_start);
    dfree(&g->sorted);
    dfree(&g->moved);
    g->capacity = 0;
}

/* The per-particle arrays for n particles (an eighth more when they grow, so that a slowly
 * growing count does not reallocate every frame) and CUB's scratch for n. */
cudaError_t reserve(pbf_surface_gpu *g, int n, int sort_bits) {
    if (n > g->capacity) {
        free_particles(g);
        const int64_t want = (int64_t)n + n / 8;
        const int cap = want < INT_MAX - 1 ? (int)want : INT_MAX - 1;
        const size_t c = (size_t)cap;
        cudaError_t e = cudaSuccess;
        for (int k = 0; k < 2 && e == cudaSuccess; ++k) {
            e = dalloc(&g->keys[k], c);
            if (e == cudaSuccess) e = dalloc(&g->order[k], c);
        }
        if (e == cudaSuccess) e = dalloc(&g->head, c);
        if (e == cudaSuccess) e = dalloc(&g->cell_of, c);
        if (e == cudaSuccess) e = dalloc(&g->cell_keys, c);
        if (e == cudaSuccess) e = dalloc(&g->cell_start, c + 1);
        if (e == cudaSuccess) e = dalloc(&g->sorted, 3 * c);
        if (e == cudaSuccess) e = dalloc(&g->moved, 3 * c);
        if (e != cudaSuccess) {
            free_particles(g);
            return e;
        }
        g->capacity = cap;
    }
    size_t sort_bytes = 0, scan_bytes = 0;
    cudaError_t e = pbf_cub_sort_pairs64(nullptr, &sort_bytes, g->keys[0], g->keys[1], g->order[0],
                                         g->order[1], n, sort_bits, g->stream);
    if (e == cudaSuccess)
        e = pbf_cub_exclusive_sum(nullptr, &scan_bytes, g->head, g->cell_of, n, g->stream);
    if (e != cudaSuccess) return e;
    const size_t bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    if (bytes > g->temp_bytes) {
        dfree(&g->temp);
        g->temp_bytes = 0;
        e = cudaMalloc(&g->temp, bytes);
        if (e != cudaSuccess) return e;
        g->temp_bytes = bytes;
    }
    return cudaSuccess;
}

/* Scratch outputs for a NULL centers or axes. */
cudaError_t reserve_outputs(pbf_surface_gpu *g, int n) {
    if (n <= g->out_capacity) return cudaSuccess;
    dfree(&g->out_centers);
    dfree(&g->out_axes);
    g->out_capacity = 0;
    cudaError_t e = dalloc(&g->out_centers, 3 * (size_t)n);
    if (e == cudaSuccess) e = dalloc(&g->out_axes, 9 * (size_t)n);
    if (e != cudaSuccess) {
        dfree(&g->out_centers);
        dfree(&g->out_axes);
        return e;
    }
    g->out_capacity = n;
    return cudaSuccess;
}

#define CK(stage_name, call)                                                                       \
    do {                                                                                           \
        *stage = (stage_name);                                                                     \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return e_;                                                          \
    } while (0)

/* Stages 2-5 on g's stream, then a synchronisation; *stage names the one that failed. */
cudaError_t run(pbf_surface_gpu *g, const pbf_surface_def *def, const surface_aniso_params *P,
                const float *pos, int n, float *centers, float *axes, const char **stage) {
    const cudaStream_t st = g->stream;
    const int blocks = blocks_for(n, BLOCK);
    if (def->kernel == PBF_SURFACE_ISOTROPIC) {
        *stage = "the isotropic kernels";
        k_round<<<blocks, BLOCK, 0, st>>>(n, P->h, pos, centers, axes);
        CK("the isotropic kernels", cudaGetLastError());
        CK("waiting for the results", cudaStreamSynchronize(st));
        return cudaSuccess;
    }
    const int sort_bits = P->bits[0] + P->bits[1] + P->bits[2];
    CK("allocating the scratch arrays", reserve(g, n, sort_bits));
    k_keys<<<blocks, BLOCK, 0, st>>>(n, pos, *P, g->keys[0], g->order[0]);
    CK("the cell keys", cudaGetLastError());
    size_t bytes = g->temp_bytes;
    CK("the sort by cell", pbf_cub_sort_pairs64(g->temp, &bytes, g->keys[0], g->keys[1],
                                                g->order[0], g->order[1], n, sort_bits, st));
    k_heads<<<blocks, BLOCK, 0, st>>>(n, g->keys[1], g->head);
    CK("the occupied cells", cudaGetLastError());
    bytes = g->temp_bytes;
    CK("the occupied cells' scan",
       pbf_cub_exclusive_sum(g->temp, &bytes, g->head, g->cell_of, n, st));
    k_cells<<<blocks, BLOCK, 0, st>>>(n, g->keys[1], g->head, g->cell_of, g->cell_keys,
                                      g->cell_start, g->cell_count);
    CK("the occupied cells", cudaGetLastError());
    k_gather<<<blocks, BLOCK, 0, st>>>(n, pos, g->order[1], g->sorted);
    CK("gathering the positions", cudaGetLastError());
    PassArgs A;
    A.n = n;
    A.def = *def;
    A.P = *P;
    A.keys = g->keys[1];
    A.order = g->order[1];
    A.cell_keys = g->cell_keys;
    A.cell_start = g->cell_start;
    A.cell_count = g->cell_count;
    A.sorted = g->sorted;
    A.moved = g->moved;
    A.centers = centers;
    A.axes = axes;
    k_pass1<<<blocks, BLOCK, 0, st>>>(A);
    CK("the covariance pass", cudaGetLastError());
    if (P->lambda > 0.0) {
        k_pass2<<<blocks, BLOCK, 0, st>>>(A);
        CK("the smoothing pass", cudaGetLastError());
    }
    CK("waiting for the results", cudaStreamSynchronize(st));
    return cudaSuccess;
}

#undef CK

} // namespace

/* ================================================================================================
 * The C ABI */

extern "C" pbf_status pbf_cuda_surface_create(pbf_surface_gpu **out, char *err, size_t err_size) {
    *out = nullptr;
    char why[PBF_ERROR_SIZE];
    if (pbf_cuda_probe(why, sizeof why) != PBF_OK) {
        pbf_cuda_format(err, err_size, "surface anisotropy on the GPU: %s", why);
        return PBF_ERR_NO_DEVICE;
    }
    pbf_surface_gpu *g = (pbf_surface_gpu *)calloc(1, sizeof *g);
    if (!g) {
        pbf_cuda_format(err, err_size, "surface anisotropy on the GPU: out of host memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    cudaError_t e = cudaGetDevice(&g->device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&g->pageable_access, cudaDevAttrPageableMemoryAccess, g->device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = dalloc(&g->cell_count, 1);
    if (e == cudaSuccess) e = dalloc(&g->partial, REDUCE_BLOCKS);
    if (e == cudaSuccess) e = dalloc(&g->bounds, 1);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&g->h_bounds, sizeof *g->h_bounds);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        pbf_status st = fail(e, "creating the scratch", -1, err, err_size);
        pbf_cuda_surface_destroy(g);
        return st;
    }
    *out = g;
    return PBF_OK;
}

extern "C" void pbf_cuda_surface_destroy(pbf_surface_gpu *g) {
    if (!g) return;
    DeviceScope scope(g->device);
    free_particles(g);
    dfree(&g->temp);
    dfree(&g->out_centers);
    dfree(&g->out_axes);
    dfree(&g->cell_count);
    dfree(&g->partial);
    dfree(&g->bounds);
    if (g->h_bounds) (void)cudaFreeHost(g->h_bounds);
    if (g->stream) (void)cudaStreamDestroy(g->stream);
    free(g);
}

extern "C" pbf_status pbf_cuda_surface_bounds(pbf_surface_gpu *g, const float *positions, int count,
                                              pbf_cuda_surface_box *out, char *err,
                                              size_t err_size) {
    DeviceScope scope(g->device);
    if (scope.error != cudaSuccess)
        return fail(scope.error, "selecting the device", count, err, err_size);
    pbf_status st = check_pointer(g, positions, "positions", count, err, err_size);
    if (st != PBF_OK) return st;
    int blocks = blocks_for(count, REDUCE);
    if (blocks > REDUCE_BLOCKS) blocks = REDUCE_BLOCKS;
    const char *stage = "the bounding box";
    k_bounds<<<blocks, REDUCE, 0, g->stream>>>(count, positions, g->partial);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) {
        k_bounds_final<<<1, REDUCE, 0, g->stream>>>(blocks, positions, g->partial, g->bounds);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(g->h_bounds, g->bounds, sizeof *g->h_bounds, cudaMemcpyDeviceToHost,
                            g->stream);
    if (e == cudaSuccess) {
        stage = "reading the bounding box back";
        e = cudaStreamSynchronize(g->stream);
    }
    if (e != cudaSuccess) return fail(e, stage, count, err, err_size);
    *out = *g->h_bounds;
    return PBF_OK;
}

extern "C" pbf_status pbf_cuda_surface_anisotropy(pbf_surface_gpu *g, const pbf_surface_def *def,
                                                  const surface_aniso_params *params,
                                                  const float *positions, int count, float *centers,
                                                  float *axes, char *err, size_t err_size) {
    DeviceScope scope(g->device);
    if (scope.error != cudaSuccess)
        return fail(scope.error, "selecting the device", count, err, err_size);
    pbf_status st = check_pointer(g, positions, "positions", count, err, err_size);
    if (st == PBF_OK && centers) st = check_pointer(g, centers, "centers", count, err, err_size);
    if (st == PBF_OK && axes) st = check_pointer(g, axes, "axes", count, err, err_size);
    if (st != PBF_OK) return st;
    const char *stage = "allocating the scratch outputs";
    cudaError_t e = cudaSuccess;
    if (!centers || !axes) {
        e = reserve_outputs(g, count);
        if (e != cudaSuccess) return fail(e, stage, count, err, err_size);
        if (!centers) centers = g->out_centers;
        if (!axes) axes = g->out_axes;
    }
    e = run(g, def, params, positions, count, centers, axes, &stage);
    return e == cudaSuccess ? PBF_OK : fail(e, stage, count, err, err_size);
}
