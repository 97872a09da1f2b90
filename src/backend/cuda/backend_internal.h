/* The CUDA backend's internals, shared by its sources (backend.h is the C ABI they implement):
 * the launch constants, the deterministic reductions, the results read back once per step, the
 * neighbour walk of the passes, the device state (struct pbf_cuda) and the host functions each
 * source offers the others.
 *
 * The sources, by stage:
 *   memory.cu       the device state: creation, growth, uploads and downloads, stage events
 *   sort.cu         prediction, the grid sort and gather, the neighbour list
 *   density.cu      the density solve: λ and Δp passes, error control
 *   velocity.cu     velocity, vorticity and XSPH, the watchdog, the end-of-step statistics
 *   tool_probes.cu  the tool's and the force probes' passes and sums
 *   meshes.cu       mesh solids: the sweep of the particles' paths, their forces (their fields:
 *                   memory.cu)
 *   viscosity.cu    the implicit viscosity: the conjugate gradients, host-checked per iteration
 *   diffuse.cu      diffuse particles: their motion, compaction and birth, on the device
 *   energy.cu       the energy audit's sums at the stages' ends
 *   step.cu         a whole step: the order of the stages, CUDA graphs, pbf_cuda_step
 *
 * One copy of the math: each __global__ kernel is a thin loop body around the PBF_HD functions
 * of src/math/kernels.h and src/core/grid.h, the same functions the OpenMP loops of solver.c call,
 * in the
 * same order, over the same neighbours in the same order (the list passes in the four lanes of
 * kernels.h's "Lane sums", as the CPU's vector loops). The stage order and the buffer swaps
 * mirror solver.c: substep() and its stages (grid: gather3, Δp: the Jacobi rotation p_tmp → p
 * → p_prev, x ↔ p at the end).
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
 * host decision after each iteration, so it launches kernel by kernel (docs/cuda.md).
 *
 * The sources are compiled apart (no relocatable device code): a kernel is launched only from
 * the source that defines it, and each source that reads the solids or the patches from constant
 * memory has its own copy, filled by its *_upload_* function before every step. */
#ifndef PBF_CUDA_BACKEND_INTERNAL_H
#define PBF_CUDA_BACKEND_INTERNAL_H

#include <cuda_runtime.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "backend.h"
#include "fields.h" /* the per-particle arrays: the device mirrors (PBF_FIELD_DEVICE) */
#include "format.h"

namespace pbf_cu {

constexpr int BLOCK = 128; /* threads per block of the per-particle kernels */
constexpr int FINAL = 1024; /* threads of the one block that combines the blocks' partials */
/* The λ pass runs four threads per particle below this many particles, one above (step.cu;
 * H200, 2026-11-28: λ at 500k 0.68 ms against 0.71, at 1M 1.25 against 1.19). */
constexpr int TPP_LAMBDA_LIMIT = 700000;
/* An extra block of the next pass reduces at most this many partials (8 per thread); more go to
 * a kernel of FINAL threads (one block of 128 threads over the 31k partials of 1M particles at
 * four threads per particle made each Δp pass 115 µs longer). */
constexpr int FUSE_MAX_PARTS = 8 * BLOCK;
constexpr int TOOL_FINAL = 256; /* threads of the tool sums' final block (80-byte partials) */
constexpr int PROBE_FINAL = 256; /* threads of a force probe's final block */
constexpr int MAX_GRAPHS = 8; /* cached graph executables (one per buffer rotation state) */
constexpr int MAX_EVENTS = 4096; /* stage-timing events per step before the timings are flushed */

/* ---------------------------------------------------------------------------------------------
 * Deterministic reductions: one accumulator type for every reduction of the step. */

struct Acc {
    double sum; /* Σ of a per-particle value (density error) */
    double sum2; /* Σ of a second value (neighbour counts; the density deficit) */
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

/* The viscosity solve's dot products of a pass (viscosity.cu), summed alike. */
struct ViscAcc {
    double s[3];
};

__device__ __forceinline__ ViscAcc visc_identity() { return ViscAcc{{0.0, 0.0, 0.0}}; }

__device__ __forceinline__ ViscAcc combine(const ViscAcc &a, const ViscAcc &b) {
    return ViscAcc{{a.s[0] + b.s[0], a.s[1] + b.s[1], a.s[2] + b.s[2]}};
}

/* A mesh's sums over a Δp pass (meshes.cu): Σ Δx and Σ r × Δx of the particles it takes. */
struct MeshAcc {
    double s[6];
};

__device__ __forceinline__ MeshAcc mesh_identity() {
    MeshAcc a;
    for (int k = 0; k < 6; ++k) a.s[k] = 0.0;
    return a;
}

__device__ __forceinline__ MeshAcc combine(const MeshAcc &a, const MeshAcc &b) {
    MeshAcc r;
    for (int k = 0; k < 6; ++k) r.s[k] = a.s[k] + b.s[k];
    return r;
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

/* The viscosity solve's scalars (viscosity.cu), on the device; the host reads them after every
 * iteration, as viscosity.c's loop tests them. */
struct ViscState {
    double rz, rr, tol_rr; /* r·z, r·r, and tol² v·v: the solve stops at rr <= tol_rr */
    float alpha, beta; /* this iteration's step and direction factors */
    int stop; /* d·A d <= 0 (converged to round-off): the iteration and those after it do nothing */
    int pad_;
};

/* The diffuse set on the device (diffuse.cu): its count, and those born since the step began. */
struct DiffuseState {
    int count;
    int pad_;
    long long generated;
};

struct Results {
    Watch watch;
    Prof prof;
    unsigned overflow; /* the neighbour list did not fit: passes walk the cells */
    unsigned needed; /* the largest list size seen */
};

/* ---------------------------------------------------------------------------------------------
 * Neighbour iteration, as src/backend/cpu/cpu_passes.h: f(j, lane) for each neighbour j of
 * particle i, with
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

/* ---------------------------------------------------------------------------------------------
 * Host side */

inline int blocks_for(int n) { return (n + BLOCK - 1) / BLOCK; }

/* fields.h's per-particle arrays in device memory: a pointer for each array of the list, those
 * flagged PBF_FIELD_DEVICE allocated for the capacity (memory.cu: reserve, free_particles and
 * pbf_cuda_memory_bytes walk the list), the others NULL: the xyz state arrays x, p, p_tmp,
 * p_prev and v rotate through struct pbf_cuda's vec pool. ids and ids_tmp are the two buffers
 * of the ids (ids_role says which is current), phase and phase_tmp likewise. */
struct DeviceFields {
#define PBF_CUDA_FIELD_MEMBER(name, type, components, flags, scratch) type *name;
    PBF_PARTICLE_FIELDS(PBF_CUDA_FIELD_MEMBER)
#undef PBF_CUDA_FIELD_MEMBER
};

/* Roles of the xyz buffers (solver.c's pointers), over a pool whose entries rotate. */
enum { R_X, R_P, R_P_TMP, R_P_PREV, R_V, R_V_TMP, R_COUNT };

struct GraphKey {
    int n, substeps, iterations, scorr_iterations, mode, sort, timed, tpp, tpp_lambda, tool,
        patches;
    int sweep; /* mesh solids whose sweep runs after the prediction (meshes.cu: k_sweep) */
    int material; /* the materials' passes (surface tension, adhesion) and k_delta's shift */
    int drag; /* surface drag's pass (k_drag) */
    int phases; /* several fluids: the phases carried through the sort */
    int mesh_forces; /* meshes whose force is measured after every Δp pass (meshes.cu) */
    int energy; /* the energy audit's sums (energy.cu) */
    int diffuse; /* diffuse particles' passes (diffuse.cu) */
    int blend; /* the impulse blend: d_prev sorted (sort.cu) and kept (velocity.cu) */
    float step_bound; /* solver.step_weights: the λ passes' weights are launch arguments */
    unsigned generation;
    int role[R_COUNT];
    int ids_role;
    int diffuse_role;
};

struct GraphEntry {
    int used;
    GraphKey key;
    cudaGraphExec_t exec;
    int end_role[R_COUNT]; /* the rotation state the step leaves */
    int end_ids_role;
    int end_diffuse_role;
    int mark_count; /* timing intervals, with their events and stages */
    cudaEvent_t *events;
    int *marks;
    unsigned long long last_use;
};

} // namespace pbf_cu

using namespace pbf_cu; /* the backend's sources only: this header is not included elsewhere */

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
    /* fields.h's mirrors: omega, dv, lambda, density, omega_len, neighbor_counts, and the ids
     * and (several fluids) phases in two buffers each, rotating with the sort */
    DeviceFields f;
    int ids_role; /* the current ids: f.ids (0) or f.ids_tmp (1); the phases follow them */
    int has_phases; /* the last upload had phases: the sort carries them */
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

    /* Mesh forces (meshes.cu): each particle's fluid target in a Δp pass and its share of the
     * solids' push with the mesh that takes it (capacity particles: mesh_capacity), the
     * per-block partials of mesh_part_meshes meshes, the sums per substep and mesh. */
    float *mesh_target, *mesh_share;
    int32_t *mesh_owner;
    int mesh_capacity;
    MeshAcc *mesh_parts;
    int mesh_part_meshes;
    double *d_mesh_sums, *h_mesh_sums;
    int mesh_sums_capacity; /* doubles */
    /* The implicit viscosity (viscosity.cu): the conjugate gradients' vectors (3 floats a
     * particle), each particle's inverse diagonal block and walls' block, each list entry's s_ij
     * (visc_pair_capacity entries), the partials, the solve's scalars (pinned for the host). */
    float *visc_r, *visc_z, *visc_d, *visc_q;
    pbf_sym3 *visc_m, *visc_wall;
    int visc_capacity;
    float *visc_pair;
    size_t visc_pair_capacity;
    ViscAcc *visc_parts;
    ViscState *d_visc, *h_visc;
    /* The energy audit (energy.cu): its own partials (c->parts may hold a pending error), and
     * the sums of a call (energy_capacity doubles, pinned copy for the host). */
    Acc *energy_parts;
    int energy_part_capacity;
    double *d_energy, *h_energy;
    int energy_capacity;
    /* Diffuse particles (diffuse.cu): the set in two rotating buffers (room for dif_capacity:
     * the def's max_count), the compaction's flags and their scan (dif_capacity + 1), per fluid
     * particle (dif_fluid_capacity) its normal, spawn count and their scan, the CUB scratch of
     * the two scans, the set's count on the device (and a pinned copy). */
    int dif_capacity, dif_role;
    float *dif_x[2], *dif_v[2], *dif_life[2];
    uint8_t *dif_kind[2];
    uint32_t *dif_keep, *dif_pos;
    int dif_fluid_capacity;
    float *dif_normal;
    unsigned long long *dif_spawn, *dif_start;
    void *dif_temp;
    size_t dif_temp_bytes;
    DiffuseState *d_dif, *h_dif;
    pbf_diffuse_def *h_dif_def; /* pinned: the def's copy to diffuse.cu's constant memory */

    pbf_cuda_substep *d_sub, *h_sub;
    int sub_capacity;
    pbf_solid *h_solids;
    /* Mesh solids: the sweep's frames (meshes.cu; pinned, 2 · PBF_MAX_SOLIDS: the starts, then
     * the ends) and the fields' device copies, by the host field they copy. */
    pbf_solid *h_sweep;
    struct DeviceField {
        const pbf_field *host;
        const float *host_node;
        pbf_field *dev; /* the struct, its node pointing at node below */
        float *node;
        size_t bytes;
    } fields[PBF_MAX_SOLIDS];
    int field_count;
    Results *d_res, *h_res;
    float *d_hist, *h_hist; /* the iteration errors, then one slot: the deficit (read_error) */
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
    int tpp; /* ... for the current particle count (the λ pass: tpp_lambda) */
    int tpp_lambda;
    const char *stage; /* the stage being enqueued, for error messages */
    ErrFinish pending; /* a λ pass's error for the next Δp pass to reduce (dst NULL: none) */
    double *stage_acc; /* where flushes add the intervals */
};

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return e_;                                                          \
    } while (0)

namespace pbf_cu {

/* ---- memory.cu ------------------------------------------------------------------------------ */

pbf_status fail(cudaError_t e, const char *what, char *err, size_t size);

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

inline float *buf(pbf_cuda *c, int r) { return c->vec[c->role[r]]; }
/* buffer r (0, 1) of the ids and of the phases */
inline int32_t *ids_buf(pbf_cuda *c, int r) { return r == 0 ? c->f.ids : c->f.ids_tmp; }
inline uint8_t *phase_buf(pbf_cuda *c, int r) { return r == 0 ? c->f.phase : c->f.phase_tmp; }
inline int32_t *ids(pbf_cuda *c) { return ids_buf(c, c->ids_role); }
inline int32_t *ids_tmp(pbf_cuda *c) { return ids_buf(c, 1 - c->ids_role); }
/* several fluids whose math differs (pbf_params.phases_on): the particles' phases for the
 * passes, else NULL */
inline uint8_t *phases_of(pbf_cuda *c, const pbf_params *hp) {
    return hp->phases_on && c->has_phases ? phase_buf(c, c->ids_role) : nullptr;
}
inline void swap_roles(pbf_cuda *c, int a, int b) {
    int t = c->role[a];
    c->role[a] = c->role[b];
    c->role[b] = t;
}

void destroy_graphs(pbf_cuda *c);
/* Buffers moved: every cached graph refers to the old ones. */
void invalidate(pbf_cuda *c);
/* Room for n particles (contents are not kept: an upload follows). */
cudaError_t reserve(pbf_cuda *c, int n);
cudaError_t grow_list(pbf_cuda *c, size_t needed);
/* The force probes' arrays, for the current capacity and `patches` patches. */
cudaError_t reserve_probes(pbf_cuda *c, int patches);
/* The tool's arrays, for the current capacity (the first step with a tool). */
cudaError_t reserve_tool(pbf_cuda *c);
cudaError_t reserve_step(pbf_cuda *c, int substeps, int history);
/* Stage timing: events[0] is recorded at the start of the step; mark(stage) records the next
 * event and files the interval since the previous one under stage (-1: not a stage). */
cudaError_t ensure_events(pbf_cuda *c, int n);
cudaError_t record(pbf_cuda *c, int k);
/* Adds the intervals recorded so far to acc (the stream must be idle). */
void add_intervals(const cudaEvent_t *ev, const int *marks, int count, double *acc);
cudaError_t mark(pbf_cuda *c, int stage);
/* The mesh fields' device copies (pbf_cuda_field): their bytes, and their release. */
size_t meshes_bytes(const pbf_cuda *c);
void meshes_free(pbf_cuda *c);
/* The modules' arrays, freed (each source that allocates them calls these): the mesh forces',
 * the viscosity solve's, the energy audit's partials, the diffuse set (its two buffers and the
 * compaction's flags), the diffuse particles' per-fluid-particle scratch, and all of diffuse's. */
void mesh_forces_free(pbf_cuda *c);
void viscosity_free(pbf_cuda *c);
void energy_free(pbf_cuda *c);
void diffuse_free_set(pbf_cuda *c);
void diffuse_free_fluid(pbf_cuda *c);
void diffuse_free(pbf_cuda *c);
/* Stream-ordered copies: the backend's stream does not wait for the legacy default stream. */
cudaError_t to_device(pbf_cuda *c, void *dst, const void *src, size_t bytes);
cudaError_t to_host(pbf_cuda *c, void *dst, const void *src, size_t bytes);

/* The neighbours the passes walk: the list, or the cells (cells mode, or a list that overflowed) */
inline Nb neighbors(pbf_cuda *c, int mode) {
    Nb nb;
    nb.list = mode == PBF_NEIGHBOR_LIST;
    nb.start = c->nb_start;
    nb.index = c->nb_index;
    nb.overflow = &c->d_res->overflow;
    nb.grid = c->grid;
    return nb;
}

/* ---- sort.cu -------------------------------------------------------------------------------- */

/* The grid build (stage_grid without the gather): cell_start, order, cell_of from positions p. */
cudaError_t enqueue_sort(pbf_cuda *c, const float *p);
/* Predict, grid (with the gather), neighbour list: solver.c substep() up to solve_density. */
cudaError_t enqueue_pre(pbf_cuda *c, const pbf_cuda_step_in *in, int sub);

/* ---- density.cu ----------------------------------------------------------------------------- */

/* The step's solids (c->h_solids, `solids` of them) into density.cu's constant memory. */
cudaError_t density_upload_solids(pbf_cuda *c, int solids);
/* average_density_error's second level over nparts partials into *dst, as its own kernel */
cudaError_t launch_error_final(pbf_cuda *c, int nparts, const Acc *parts, int n, float *dst);
/* solver.c: solve_density. Returns the Δp passes done in *passes. */
cudaError_t enqueue_solve(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int host_checks,
                          int *passes, int *restarts, float *hist, int *hist_count);

/* ---- velocity.cu ---------------------------------------------------------------------------- */

/* The step's solids (c->h_solids) into velocity.cu's constant memory. */
cudaError_t velocity_upload_solids(pbf_cuda *c, int solids);
/* Velocity, vorticity (+ the error after the last pass in fixed mode), the viscosity solve
 * (its iterations in *visc_iterations), surface drag, the tool, watchdog, diffuse particles,
 * x ↔ p. */
cudaError_t enqueue_post(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int hist_slot,
                         int *visc_iterations);
/* solver.c: finish_profile */
cudaError_t enqueue_profile(pbf_cuda *c, float inv_rest_density);

/* ---- tool_probes.cu ------------------------------------------------------------------------- */

/* The step's patches (c->h_patches, `count` of them) into tool_probes.cu's constant memory. */
cudaError_t probes_upload_patches(pbf_cuda *c, int count);
/* probes.c: pbf__probes_force_pass after a Δp pass */
cudaError_t enqueue_probes(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, float omega,
                           int scorr);
/* tool.c: pbf__tool_substep_end's pass and sums of substep sub (filed under velocity) */
cudaError_t enqueue_tool(pbf_cuda *c, int sub);

/* ---- meshes.cu ------------------------------------------------------------------------------ */

/* The step's sweep frames (c->h_sweep, `count` meshes) into meshes.cu's constant memory. */
cudaError_t meshes_upload_sweep(pbf_cuda *c, int count);
/* meshes.c: pbf__meshes_substep_begin's sweep of every particle's path, after the prediction */
cudaError_t enqueue_sweep(pbf_cuda *c, const pbf_cuda_step_in *in, int sub);
/* The mesh forces' arrays for the current capacity and in->mesh_count meshes, and the step's
 * solids and meshes into meshes.cu's constant memory. */
cudaError_t reserve_mesh_forces(pbf_cuda *c, const pbf_cuda_step_in *in, int solids);
/* meshes.c: pbf__meshes_after_delta after a Δp pass (the roles rotated: p its result, p_prev
 * what it read), into the sums of substep sub. */
cudaError_t enqueue_mesh_forces(pbf_cuda *c, const pbf_cuda_step_in *in, int sub);

/* ---- viscosity.cu --------------------------------------------------------------------------- */

/* viscosity.c: the solve of substep sub on v at the positions p (after confinement, before
 * surface drag); the host reads the residual after every iteration. *iterations: those done. */
cudaError_t enqueue_viscosity(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int *iterations);

/* ---- diffuse.cu ----------------------------------------------------------------------------- */

/* The def and the step's solids into diffuse.cu's constant memory; the fluid's scratch for the
 * current capacity. */
cudaError_t diffuse_prepare(pbf_cuda *c, const pbf_cuda_step_in *in, int solids);
/* diffuse.c: pbf__diffuse_substep after substep sub's watchdog (p the corrected positions). */
cudaError_t enqueue_diffuse(pbf_cuda *c, const pbf_cuda_step_in *in, int sub);

/* ---- energy.cu ------------------------------------------------------------------------------ */

/* The energy audit's partials for the current capacity. */
cudaError_t reserve_energy(pbf_cuda *c, int marks);
/* energy_audit.c: the sums of (pos, vel or (pos − x_old)/dt, plus dv) into d_energy[2 slot ..]. */
cudaError_t enqueue_energy(pbf_cuda *c, int slot, const float *pos, const float *vel,
                           const float *x_old, const float *dv, const pbf_cuda_substep *S);

} // namespace pbf_cu

#endif /* PBF_CUDA_BACKEND_INTERNAL_H */
