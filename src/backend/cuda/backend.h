/* The CUDA backend's plain C ABI (docs/cuda.md).
 *
 * The .cu files of src/backend/cuda/ implement it, by stage (backend_internal.h lists them):
 * particle
 * data lives in device memory, every stage of the step runs as a thin __global__ wrapper around
 * the PBF_HD functions of src/math/kernels.h (the same functions the CPU loops of src/core/solver.c
 * call), and the host only moves parameters in and a few bytes of results out per step.
 * src/backend/cuda/world_cuda.c connects it to pbf_world.
 *
 * Every function returns a pbf_status and writes a message into err (may be NULL); nothing
 * prints, nothing exits. */
#ifndef PBF_CUDA_BACKEND_H
#define PBF_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h" /* pbf_grid (its layout), pbf_grid_cell, pbf_grid_ranges */
#include "kernels.h" /* pbf_params, pbf_solid, PBF_MAX_SOLIDS */
#include "pbf/geometry.h" /* PBF_MAX_MESHES */
#include "pbf/probes.h" /* PBF_MAX_PROBES */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pbf_cuda pbf_cuda;

/* How the grid build sorts particles by cell. Both are stable (equal cells keep their slot
 * order) and give the same permutation as the CPU's counting sort (src/core/grid.c). */
typedef enum pbf_cuda_sort {
    /* Histogram with integer atomics, CUB exclusive scan, scatter, then a pass that puts each
     * cell's particles back in slot order (the atomics' order is not deterministic). */
    PBF_CUDA_SORT_COUNTING = 0,
    /* cub::DeviceRadixSort::SortPairs on (cell, slot): stable by construction. */
    PBF_CUDA_SORT_RADIX = 1
} pbf_cuda_sort;

/* Whether a CUDA device can be used here. PBF_OK and a description of device 0 in desc
 * ("NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB"), or PBF_ERR_NO_DEVICE and the reason
 * (no device, no driver, driver too old for this build). desc may be NULL. */
pbf_status pbf_cuda_probe(char *desc, size_t desc_size);

typedef struct pbf_cuda_config {
    pbf_grid grid; /* the layout (origin, inv_cell, nx, ny, nz, cell_count); the
                                pointers are ignored */
    pbf_cuda_sort sort;
    float list_per_particle; /* initial neighbour list entries per particle */
    /* Threads per particle of the neighbour passes (λ, Δp, vorticity, confinement): 1, or 4 (one
     * per lane of kernels.h's lane sums; the same bits), or 0: chosen by the particle count. */
    int threads_per_particle;
    int stage_events; /* time the stages with CUDA events (pbf_profile.stage_ms) */
} pbf_cuda_config;

/* Creates the device state on device 0 (the grid arrays; particle arrays grow on upload). */
pbf_status pbf_cuda_create(const pbf_cuda_config *config, pbf_cuda **out, char *err,
                           size_t err_size);
void pbf_cuda_destroy(pbf_cuda *c);
/* Device bytes allocated. */
size_t pbf_cuda_memory_bytes(const pbf_cuda *c);
/* The sort in use (PBF_CUDA_SORT env override applied at creation by world_cuda.c). */
pbf_cuda_sort pbf_cuda_get_sort(const pbf_cuda *c);

/* Host -> device: count particles in slot order (xyz-interleaved x, v and, with the impulse
 * blend on, d_prev, its last displacement, else NULL; density, ids, and with several fluids
 * each particle's phase, else phase NULL). The device arrays grow as needed. */
pbf_status pbf_cuda_upload(pbf_cuda *c, int count, const float *x, const float *v,
                           const float *d_prev, const float *density, const int32_t *ids,
                           const uint8_t *phase, char *err, size_t err_size);
/* Device -> host: the state after the last step, in the device's slot order (phase or d_prev
 * NULL: not read back; the device keeps phases only for a world with several fluids, and
 * d_prev only with the impulse blend on). */
pbf_status pbf_cuda_download(pbf_cuda *c, float *x, float *v, float *d_prev, float *density,
                             int32_t *ids, uint8_t *phase, char *err, size_t err_size);

/* The device arrays of the state after the last step (or upload), in the device's slot order:
 * x and v xyz-interleaved, density one per particle; the CUDA device ordinal in *device. Valid
 * until the next step or upload (the step rotates its buffers). */
void pbf_cuda_device_arrays(const pbf_cuda *c, int *device, const float **x, const float **v,
                            const float **density);

/* What one substep needs from the host: the kernels' constants with this substep's dt and
 * walls, and the watchdog's speed limit. Copied to the device once per step. */
typedef struct pbf_cuda_substep {
    pbf_params params;
    /* params with s_corr off (scorr_scale 0), for the Δp passes after scorr_iterations: the
     * backend fills it from params. The passes read both through a reference: a copy of the
     * struct in a kernel goes to local memory, as the phase arrays are indexed at run time. */
    pbf_params params_no_scorr;
    float watchdog_speed2; /* (10 · max(cfl, 0.5) · h / dt)²: see solver.c, watchdog() */
    pbf_tool_params tool; /* the tool at the end of this substep (tool.c); active 0: none */
    /* Force probes (probes.c, pbf__probes_reach): each patch's plane at this substep's walls,
     * and the box around their reach that a particle must be in to count. */
    float probe_plane[PBF_MAX_PROBES];
    float probe_lo[3], probe_hi[3];
    /* Diffuse particles (pbf_cuda_step_in.diffuse): the hash's counter of this substep
     * (diffuse.c: D->substeps) and 1 − e^(−drag dt), computed on the host as diffuse.c does. */
    uint32_t diffuse_step;
    float diffuse_damp;
} pbf_cuda_substep;

/* A force probe's patch on a wall (probes.c: pbf_patch): the particles within h of its plane
 * whose 2r-wide footprint overlaps [lo, hi) on the two other axes. */
typedef struct pbf_cuda_patch {
    int axis; /* the normal's axis */
    float sign; /* +1: the normal along +axis */
    float lo[3], hi[3];
} pbf_cuda_patch;

/* What a substep's passes give the tool (tool.c: pbf__tool_substep_end): sums over the
 * particles in a fixed order (deterministic; not the CPU's serial order, so the last bits of
 * the forces may differ from the CPU's). */
typedef struct pbf_cuda_tool_sums {
    double dx[3]; /* Σ of the tool's displacement of each particle over the substep, m */
    double adhesion[3]; /* Σ of the adhesion forces on the tool, N */
    double damping[3]; /* Σ of the damping forces on the tool, N */
    float min_distance; /* smallest distance of a particle centre from the surface, m */
    int contacts; /* particles within 2 r of the surface */
} pbf_cuda_tool_sums;

/* A mesh solid's baked field (kernels.h: pbf_field, its struct and its nodes) in device memory:
 * *device is the copy of `host`, a pointer for a pbf_solid's field on the device. The copy is
 * made the first time a field is asked for and kept until pbf_cuda_destroy (a world's fields
 * never change once baked, and stay at their address while the world lives). */
pbf_status pbf_cuda_field(pbf_cuda *c, const pbf_field *host, const pbf_field **device, char *err,
                          size_t err_size);

/* One pbf_world_step. */
typedef struct pbf_cuda_step_in {
    int substeps;
    const pbf_cuda_substep *sub; /* substeps entries */
    const pbf_solid *solids; /* params.solid_count entries */
    int neighbor_mode; /* pbf_neighbor_mode */
    /* the solver (pbf_solver_def, see solver.c: solve_density) */
    int iterations;
    int controlled; /* target_error > 0: error control, host checks every iteration */
    float target; /* target average density error, a fraction */
    int min_iterations, max_iterations;
    int chebyshev;
    float chebyshev_rho, chebyshev_gamma;
    int chebyshev_delay;
    int scorr_iterations; /* s_corr in the first this many passes of a substep; 0: all */
    /* the caller's per-iteration error history (max(iterations, max_iterations) + 2 entries) */
    float *iteration_error;
    int history_size;
    /* With a tool (sub[].tool.active): its sums, one entry per substep; NULL without. */
    pbf_cuda_tool_sums *tool_sums;
    /* Force probes: patch_count patches (0: none). After every Δp pass the device measures
     * what the solids moved each particle facing a patch by (probes.c: pbf__probes_force_pass,
     * with Chebyshev's carry when probe_carry) and adds (m/dt²) Σ Δx·n per patch to
     * patch_sums; patch_counts gets the particles of the last pass. */
    int patch_count;
    const pbf_cuda_patch *patches;
    int probe_carry;
    double *patch_sums;
    int *patch_counts;
    /* Mesh solids (the PBF_SOLID_MESH entries of solids; their fields' device copies, see
     * pbf_cuda_field): after the prediction each particle's path from x to p is walked in each
     * of sweep_count meshes' frames, from its pose at the substep's start (sweep_start) to its
     * pose at the end (sweep_end), as meshes.c's pbf__meshes_substep_begin (kernels.h:
     * pbf_mesh_sweep_path). The same poses serve every substep of the call: a step with moving
     * meshes is one call per substep. 0: no meshes. */
    int sweep_count;
    const pbf_solid *sweep_start, *sweep_end;
    /* The mesh solids' force measurement (meshes.c: pbf__meshes_after_delta): mesh_count meshes
     * (0: none), mesh_solid[k] mesh k's entry in solids (-1: a sink), mesh_position[3k ..] its
     * position (the torques' origin), mesh_colliders the solids before the meshes. After every
     * Δp pass each particle's share of the solids' push goes to the mesh nearest within h
     * (kernels.h: pbf_mesh_force_owner); mesh_sums gets, per substep and mesh, the passes' sums
     * of −(m/dt²) Σ Δx and of its torque: substeps × mesh_count × 6 doubles (force, torque). */
    int mesh_count, mesh_colliders;
    const int *mesh_solid;
    const double *mesh_position;
    double *mesh_sums;
    /* The implicit viscosity (params.viscosity_on): the conjugate gradients' most iterations
     * and tolerance (pbf_material_def). The host decides after every iteration from the
     * device's residual, as viscosity.c: such a step runs kernel by kernel. */
    int visc_iterations;
    float visc_tolerance;
    /* The energy audit (energy != 0): energy_out gets (Σ |v|²/2, Σ g·x) of the particles at the
     * call's start and after each stage of every substep (kernels.h, "The energy audit"):
     * 2 × (1 + PBF_ENERGY_COUNT × substeps) doubles, stage by stage in pbf_energy_stage's
     * order. */
    int energy;
    double *energy_out;
    /* Diffuse particles (NULL: off): their def (its max_count the device set's room, see
     * pbf_cuda_diffuse_upload). After every substep's watchdog they move, die and are born on
     * the device, as diffuse.c's pass. */
    const pbf_diffuse_def *diffuse;
} pbf_cuda_step_in;

/* Watchdog findings (solver.c: watchdog), in the order it checks a particle. */
enum {
    PBF_CUDA_OK = 0,
    PBF_CUDA_BAD_POSITION = 1, /* non-finite position */
    PBF_CUDA_BAD_VELOCITY = 2, /* non-finite velocity */
    PBF_CUDA_BAD_LAMBDA = 3, /* non-finite λ */
    PBF_CUDA_TOO_FAST = 4 /* beyond WATCHDOG_CFL_FACTOR times the CFL speed */
};

typedef struct pbf_cuda_step_out {
    double stage_ms[PBF_STAGE_COUNT]; /* CUDA events; 0 where they could not be read */
    int substep_iterations; /* Δp passes over all substeps */
    int max_iterations_used;
    int chebyshev_restarts;
    int iteration_error_count; /* entries written to in->iteration_error */
    /* The first substep whose watchdog fired (the device runs the remaining substeps of a
     * captured step anyway; the caller reports this one). */
    int unstable; /* PBF_CUDA_* */
    int unstable_substep; /* 0-based */
    int32_t unstable_id;
    float unstable_x[3], unstable_v[3];
    float unstable_speed2; /* max(|v|², |p − x|²/dt²) of the fastest particle */
    /* end of step (solver.c: finish_profile) */
    int bad_density; /* a particle has a non-finite density */
    int32_t bad_density_id;
    float bad_density_x[3];
    float avg_density_error, max_density_error, avg_neighbors;
    /* how the step ran */
    int viscosity_iterations; /* the most conjugate-gradient iterations of a substep */
    int diffuse_count; /* diffuse particles after the call */
    long long diffuse_generated; /* diffuse particles born in the call */
    int graph; /* 1: one CUDA graph launch; 0: kernel by kernel */
    int list_overflow; /* the neighbour list was too small: that step walked the cells
                              (the list grows for the next step) */
} pbf_cuda_step_out;

pbf_status pbf_cuda_step(pbf_cuda *c, const pbf_cuda_step_in *in, pbf_cuda_step_out *out, char *err,
                         size_t err_size);

/* Diffuse particles on the device: room for `capacity` (the def's max_count; the device set
 * never grows within a step) and the host's set of count (x, v xyz-interleaved, life, kind). */
pbf_status pbf_cuda_diffuse_upload(pbf_cuda *c, int capacity, int count, const float *x,
                                   const float *v, const float *life, const uint8_t *kind,
                                   char *err, size_t err_size);
/* The device's set after the last step (count entries: pbf_cuda_step_out.diffuse_count). */
pbf_status pbf_cuda_diffuse_download(pbf_cuda *c, float *x, float *v, float *life, uint8_t *kind,
                                     char *err, size_t err_size);

/* For tests (tests/test_cuda.c): sorts count positions into the grid on the device with the
 * given sort and returns cell_start (layout->cell_count + 1), order and cell_of (count each),
 * to compare with pbf_grid_sort. */
pbf_status pbf_cuda_grid_sort_test(const pbf_grid *layout, pbf_cuda_sort sort,
                                   const float *positions, int count, uint32_t *cell_start,
                                   uint32_t *order, uint32_t *cell_of, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_CUDA_BACKEND_H */
