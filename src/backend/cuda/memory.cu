/* The CUDA backend's device state (backend_internal.h): creation and destruction, the arrays
 * and their growth, uploads and downloads, the stage-timing events. */
#include "backend_internal.h"
#include "cub_ops.h"

namespace {

__global__ void k_iota(int n, uint32_t *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (uint32_t)i;
}

void describe(int dev, const cudaDeviceProp &p, char *desc, size_t size) {
    pbf_cuda_format(desc, size, "%s (device %d, sm_%d%d, %d SMs, %.1f GiB)", p.name, dev, p.major,
                    p.minor, p.multiProcessorCount,
                    (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
}

} // namespace

namespace pbf_cu {

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

void invalidate(pbf_cuda *c) {
    destroy_graphs(c);
    c->generation++;
}

/* fields.h's device mirrors (PBF_FIELD_DEVICE): freed, allocated for cap slots, and their bytes
 * per slot, from the list. */
#define PBF_CUDA_FIELD_FREE(name, type, components, flags, scratch)                                \
    if ((flags)&PBF_FIELD_DEVICE) dfree(&c->f.name);
#define PBF_CUDA_FIELD_ALLOC(name, type, components, flags, scratch)                               \
    if ((flags)&PBF_FIELD_DEVICE) CK(dalloc(c, &c->f.name, (size_t)(components) * (size_t)cap));
#define PBF_CUDA_FIELD_BYTES(name, type, components, flags, scratch)                               \
    +(((flags)&PBF_FIELD_DEVICE) ? (size_t)(components) * sizeof(type) : (size_t)0)

void free_particles(pbf_cuda *c) {
    for (int k = 0; k < R_COUNT; ++k) dfree(&c->vec[k]);
    PBF_PARTICLE_FIELDS(PBF_CUDA_FIELD_FREE)
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
    viscosity_free(c); /* the modules' per-particle arrays: allocated again for the new room */
    mesh_forces_free(c);
    energy_free(c);
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
    PBF_PARTICLE_FIELDS(PBF_CUDA_FIELD_ALLOC)
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
    CK(cudaMemsetAsync(c->f.lambda, 0, (size_t)cap * sizeof(float), c->stream));
    CK(cudaMemsetAsync(c->f.neighbor_counts, 0, (size_t)cap * sizeof(int32_t), c->stream));
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
        /* one slot more: the error control's deficit (density.cu: read_error) */
        CK(dalloc(c, &c->d_hist, (size_t)history + 1));
        CK(cudaMallocHost((void **)&c->h_hist, ((size_t)history + 1) * sizeof(float)));
        c->hist_capacity = history;
    }
    return cudaSuccess;
}

/* ---- the modules' arrays ---------------------------------------------------------------------
 * Freed here, where the device state lives: the sources that allocate and use them (meshes.cu,
 * viscosity.cu, energy.cu, diffuse.cu) call into this file, never the reverse. */

void mesh_forces_free(pbf_cuda *c) {
    dfree(&c->mesh_target);
    dfree(&c->mesh_share);
    dfree(&c->mesh_owner);
    dfree(&c->mesh_parts);
    c->mesh_capacity = 0;
    c->mesh_part_meshes = 0;
}

void viscosity_free(pbf_cuda *c) {
    dfree(&c->visc_r);
    dfree(&c->visc_z);
    dfree(&c->visc_d);
    dfree(&c->visc_q);
    dfree(&c->visc_m);
    dfree(&c->visc_wall);
    dfree(&c->visc_parts);
    c->visc_capacity = 0;
    dfree(&c->visc_pair);
    c->visc_pair_capacity = 0;
}

void energy_free(pbf_cuda *c) {
    dfree(&c->energy_parts);
    c->energy_part_capacity = 0;
}

void diffuse_free_set(pbf_cuda *c) {
    for (int b = 0; b < 2; ++b) {
        dfree(&c->dif_x[b]);
        dfree(&c->dif_v[b]);
        dfree(&c->dif_life[b]);
        dfree(&c->dif_kind[b]);
    }
    dfree(&c->dif_keep);
    dfree(&c->dif_pos);
    c->dif_capacity = 0;
    c->dif_role = 0;
}

void diffuse_free_fluid(pbf_cuda *c) {
    dfree(&c->dif_normal);
    dfree(&c->dif_spawn);
    dfree(&c->dif_start);
    c->dif_fluid_capacity = 0;
}

void diffuse_free(pbf_cuda *c) {
    diffuse_free_set(c);
    diffuse_free_fluid(c);
    dfree(&c->dif_temp);
    c->dif_temp_bytes = 0;
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

} // namespace pbf_cu

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
    e = cudaFuncGetAttributes(&attr, k_iota);
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
    if (e == cudaSuccess)
        e = cudaMallocHost((void **)&c->h_sweep, 2 * PBF_MAX_SOLIDS * sizeof(pbf_solid));
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
    if (c->h_sweep) cudaFreeHost(c->h_sweep);
    meshes_free(c);
    dfree(&c->d_tool);
    if (c->h_tool) cudaFreeHost(c->h_tool);
    dfree(&c->d_patch_sums);
    dfree(&c->d_patch_counts);
    if (c->h_patch_sums) cudaFreeHost(c->h_patch_sums);
    if (c->h_patch_counts) cudaFreeHost(c->h_patch_counts);
    if (c->h_patches) cudaFreeHost(c->h_patches);
    dfree(&c->d_mesh_sums);
    if (c->h_mesh_sums) cudaFreeHost(c->h_mesh_sums);
    dfree(&c->d_visc);
    if (c->h_visc) cudaFreeHost(c->h_visc);
    dfree(&c->d_energy);
    if (c->h_energy) cudaFreeHost(c->h_energy);
    diffuse_free(c);
    dfree(&c->d_dif);
    if (c->h_dif) cudaFreeHost(c->h_dif);
    if (c->h_dif_def) cudaFreeHost(c->h_dif_def);
    for (int k = 0; k < c->event_capacity; ++k) cudaEventDestroy(c->events[k]);
    free(c->events);
    free(c->marks);
    if (c->stream) cudaStreamDestroy(c->stream);
    (void)cudaGetLastError();
    free(c);
}

/* The device bytes of the modules' arrays: mesh forces, viscosity, energy audit, diffuse. */
static size_t modules_bytes(const pbf_cuda *c) {
    size_t b = 0;
    b += (size_t)c->mesh_capacity * (2 * 12 + 4) +
         (size_t)c->mesh_part_meshes * (size_t)blocks_for(c->mesh_capacity) * sizeof(MeshAcc) +
         (size_t)c->mesh_sums_capacity * sizeof(double);
    b += (size_t)c->visc_capacity * (4 * 12 + 2 * sizeof(pbf_sym3)) +
         (size_t)blocks_for(c->visc_capacity) * sizeof(ViscAcc) +
         c->visc_pair_capacity * sizeof(float) + (c->d_visc ? sizeof(ViscState) : 0);
    b += (size_t)blocks_for(c->energy_part_capacity) * sizeof(Acc) +
         (size_t)c->energy_capacity * sizeof(double);
    b += (size_t)c->dif_capacity * 2 * (6 * 4 + 4 + 1) +
         ((size_t)c->dif_capacity + (c->dif_capacity > 0)) * 2 * sizeof(uint32_t) +
         (size_t)c->dif_fluid_capacity * (12 + 2 * 8) + (c->dif_fluid_capacity > 0 ? 16 : 0) +
         c->dif_temp_bytes + (c->d_dif ? sizeof(DiffuseState) : 0);
    return b;
}

extern "C" size_t pbf_cuda_memory_bytes(const pbf_cuda *c) {
    if (!c) return 0;
    const size_t cap = (size_t)c->capacity;
    const size_t mirrors = 0 PBF_PARTICLE_FIELDS(PBF_CUDA_FIELD_BYTES); /* fields.h's */
    const size_t per_particle = R_COUNT * 12 + mirrors +
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
           (size_t)c->hist_capacity * sizeof(float) + sizeof(Results) + meshes_bytes(c) +
           modules_bytes(c);
}
extern "C" pbf_cuda_sort pbf_cuda_get_sort(const pbf_cuda *c) { return c->sort; }

size_t pbf_cu::meshes_bytes(const pbf_cuda *c) {
    size_t bytes = 0;
    for (int k = 0; k < c->field_count; ++k) bytes += c->fields[k].bytes + sizeof(pbf_field);
    return bytes;
}

void pbf_cu::meshes_free(pbf_cuda *c) {
    for (int k = 0; k < c->field_count; ++k) {
        dfree(&c->fields[k].dev);
        dfree(&c->fields[k].node);
    }
    c->field_count = 0;
}

extern "C" pbf_status pbf_cuda_field(pbf_cuda *c, const pbf_field *host, const pbf_field **device,
                                     char *err, size_t err_size) {
    *device = nullptr;
    for (int k = 0; k < c->field_count; ++k)
        if (c->fields[k].host == host && c->fields[k].host_node == host->node) {
            *device = c->fields[k].dev;
            return PBF_OK;
        }
    if (c->field_count >= PBF_MAX_SOLIDS) {
        pbf_cuda_format(err, err_size, "more than %d mesh fields on the device", PBF_MAX_SOLIDS);
        return PBF_ERR_INVALID_ARG;
    }
    /* the nodes held (the whole grid: no CUDA world is split over MPI), then the struct with
     * its node pointer on the device */
    auto &f = c->fields[c->field_count];
    const size_t bytes = (size_t)host->block_n[0] * (size_t)host->block_n[1] *
                         (size_t)host->block_n[2] * PBF_FIELD_STRIDE * sizeof(float);
    pbf_field copy = *host;
    float *node = nullptr;
    pbf_field *dev = nullptr;
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess) e = dalloc(c, &node, bytes / sizeof(float));
    if (e == cudaSuccess) e = dalloc(c, &dev, 1);
    copy.node = node;
    if (e == cudaSuccess) e = to_device(c, node, host->node, bytes);
    if (e == cudaSuccess) e = to_device(c, dev, &copy, sizeof copy);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream); /* copy leaves this frame */
    if (e != cudaSuccess) {
        dfree(&node);
        dfree(&dev);
        char what[128];
        pbf_cuda_format(what, sizeof what, "copying a mesh field of %d x %d x %d nodes (%.1f MiB)",
                        host->nx, host->ny, host->nz, (double)bytes / (1024.0 * 1024.0));
        return fail(e, what, err, err_size);
    }
    f.host = host;
    f.host_node = host->node;
    f.dev = dev;
    f.node = node;
    f.bytes = bytes;
    c->field_count++;
    *device = dev;
    return PBF_OK;
}

cudaError_t pbf_cu::to_device(pbf_cuda *c, void *dst, const void *src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->stream);
}
cudaError_t pbf_cu::to_host(pbf_cuda *c, void *dst, const void *src, size_t bytes) {
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->stream);
}

extern "C" pbf_status pbf_cuda_upload(pbf_cuda *c, int count, const float *x, const float *v,
                                      const float *d_prev, const float *density, const int32_t *id,
                                      const uint8_t *phase, char *err, size_t err_size) {
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
        if (e == cudaSuccess && d_prev) e = to_device(c, c->f.d_prev, d_prev, v3b);
        if (e == cudaSuccess) e = to_device(c, c->f.density, density, sb);
        if (e == cudaSuccess) e = to_device(c, ids(c), id, (size_t)count * sizeof(int32_t));
        if (e == cudaSuccess && phase)
            e = to_device(c, phase_buf(c, c->ids_role), phase, (size_t)count);
    }
    c->has_phases = phase != nullptr; /* the graphs are keyed by it (step.cu: make_key) */
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? PBF_OK : fail(e, "uploading the particles", err, err_size);
}

extern "C" pbf_status pbf_cuda_download(pbf_cuda *c, float *x, float *v, float *d_prev,
                                        float *density, int32_t *id, uint8_t *phase, char *err,
                                        size_t err_size) {
    cudaError_t e = cudaSetDevice(c->device);
    const int n = c->count;
    const size_t v3b = 3 * (size_t)n * sizeof(float), sb = (size_t)n * sizeof(float);
    if (n > 0) {
        if (e == cudaSuccess && x) e = to_host(c, x, buf(c, R_X), v3b);
        if (e == cudaSuccess && v) e = to_host(c, v, buf(c, R_V), v3b);
        if (e == cudaSuccess && d_prev) e = to_host(c, d_prev, c->f.d_prev, v3b);
        if (e == cudaSuccess && density) e = to_host(c, density, c->f.density, sb);
        if (e == cudaSuccess && id) e = to_host(c, id, ids(c), (size_t)n * sizeof(int32_t));
        if (e == cudaSuccess && phase && c->has_phases)
            e = to_host(c, phase, phase_buf(c, c->ids_role), n);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? PBF_OK : fail(e, "reading the particles back", err, err_size);
}

extern "C" void pbf_cuda_device_arrays(const pbf_cuda *c, int *device, const float **x,
                                       const float **v, const float **density) {
    *device = c->device;
    *x = c->vec[c->role[R_X]];
    *v = c->vec[c->role[R_V]];
    *density = c->f.density;
}
