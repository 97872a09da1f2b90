/* The opaque pbf_world: the state every part of the library reads and writes (never installed).
 * It has no source file of its own, so a feature that includes it depends on the state alone,
 * not on world.c, which creates and frees worlds. */
#ifndef PBF_WORLD_STATE_H
#define PBF_WORLD_STATE_H

#include <stdarg.h>

#include "fields.h"
#include "grid.h"
#include "params.h" /* pbf_params, pbf_v3 and pbf_solid; the math itself is kernels.h */
#include "pbf/pbf.h"

/* Points of a substep where a world split over processes (src/comm/mpi/, docs/mpi.md) exchanges
 * data
 * with its neighbours. The solver calls w->halo_hook at each, and knows nothing else of MPI. */
typedef enum pbf_halo_event {
    PBF_HALO_BEGIN, /* after predict: particles that left the slab migrate, then the halo
                         * (the arrays of fields.h marked PBF_FIELD_HALO of neighbours'
                         * particles within reach) is appended */
    PBF_HALO_SORTED, /* after the grid sort: the halo follows the new slot order */
    PBF_HALO_LAMBDA, /* after a λ pass: the halo's λ and density */
    PBF_HALO_NORMALS, /* after surface tension's normals pass: the halo's normals (w->omega) for
                       * its tension pass */
    PBF_HALO_POSITIONS, /* after a Δp pass: the halo's corrected positions p */
    PBF_HALO_OMEGA, /* after the vorticity pass: the halo's |ω| for the confinement pass */
    PBF_HALO_END, /* after the watchdog and the modules that read the ghosts last (diffuse
                   * particles): the halo is dropped */
    PBF_HALO_AGREE /* after the watchdog: every process stops if one does */
} pbf_halo_event;

/* The most values one w->halo_sum call reduces. */
#define PBF_HALO_SUM_MAX 160

/* Reductions over the processes whose result does not depend on their order (w->halo_reduce):
 * sums and maxima of ints, minima and maxima of floats. */
typedef enum pbf_halo_op {
    PBF_HALO_SUM_INT,
    PBF_HALO_MIN_FLOAT,
    PBF_HALO_MAX_FLOAT,
    PBF_HALO_MAX_INT
} pbf_halo_op;

/* What the λ and Δp passes take from the modules besides the solids of w->solids (module.h:
 * pass_extras): a solid that moves with the fluid's reaction, and an array the Δp pass fills for
 * a module. Every member NULL: none. */
typedef struct pbf_pass_extras {
    const pbf_tool_params *tool; /* the tool's kernels' view (kernels.h, the tool section) */
    float *tool_dx; /* 3 per particle: the tool's displacement of each, which Δp adds to */
    float *delta_target; /* 3 per particle: the fluid–fluid target of the last Δp pass */
} pbf_pass_extras;

struct pbf_world {
    pbf_world_def def;
    char error[PBF_ERROR_SIZE];

    /* Particles, structure of arrays in the solver's order (sorted by cell every substep). */
    int count;
    int capacity;
#define PBF_FIELD_MEMBER(name, type, components, flags, scratch) type *name;
    PBF_PARTICLE_FIELDS(PBF_FIELD_MEMBER) /* fields.h: every per-particle array */
#undef PBF_FIELD_MEMBER
    /* Ids are handed out in order and never reused: next_id is the next one (= count while no
     * particle was removed). */
    int32_t next_id;

    pbf_grid grid;
    pbf_neighbor_list neighbors;

    /* Solids: colliders as the kernels see them, plus the public defs for read-back. */
    int collider_count;
    pbf_collider_def colliders[PBF_MAX_SOLIDS];
    pbf_solid solids[PBF_MAX_SOLIDS];

    pbf_params params; /* constants; dt and walls are refreshed every substep */
    float lattice_grad2; /* S0 = Σ_j |V ∇W_ij|² of a particle inside the rest lattice (1/m²) */

    double time;
    pbf_profile profile;
    /* The last substep's average density error (fraction) at each iteration: entry k is the
     * error after k Δp passes; iteration_error_count entries (docs/physics.md). */
    float *iteration_error;
    int iteration_error_count;
    int substep_iterations; /* Δp passes over the current step's substeps */

    /* The energy audit (src/modules/energy_audit.c): the last step's, and the energy at the last
     * mark. */
    int energy_audit;
    pbf_energy_audit audit;
    double audit_mark;

    /* The tool (src/modules/tool.c, src/modules/tool.h, docs/tool.md): NULL when the world has
     * none. */
    struct pbf_tool_body *tool;

    /* Probes (src/modules/probes.c, src/modules/probes.h): NULL when the world has none. */
    struct pbf_probes *probes;

    /* Mesh solids and bodies (src/modules/geometry/meshes.h): NULL when the world has none. */
    struct pbf_geometry *geometry;
    /* Emitters, sinks and the fixed capacity (src/modules/emitter.c, src/modules/emitter.h,
     * include/pbf/flow.h):
     * NULL when the world has none. */
    struct pbf_flow *flow;

    /* Diffuse particles: spray, foam, bubbles (src/modules/diffuse.c, include/pbf/diffuse.h): NULL
     * when
     * they are off. */
    struct pbf_diffuse *diffuse;

    /* The implicit viscosity solve's scratch (src/modules/viscosity.c): NULL until its first
     * substep. */
    struct pbf_viscosity *viscosity;

    /* The CUDA backend (src/backend/cuda/world_cuda.h, docs/cuda.md): NULL on the CPU. A CUDA
     * world's
     * particle arrays above are a host cache of the device state. */
    struct pbf_cuda_world *cuda;
    /* A backend that keeps the particles elsewhere (CUDA: on the device) makes the host arrays
     * current through this (pbf__cuda_pull); NULL when they always are. For the modules that
     * the backend calls itself (the tool, the probes: cuda/world_cuda.c), which cannot call it
     * back by name without a loop (pbf__host_pull below). */
    pbf_status (*host_pull)(const pbf_world *w);

    /* A world split over processes (src/comm/mpi/, include/pbf/mpi.h): NULL otherwise. The hook
     * gets the substep's status at PBF_HALO_AGREE and returns the agreed one; at the other
     * events `status` is PBF_OK and the hook returns its own. */
    struct pbf_halo *halo;
    pbf_status (*halo_hook)(pbf_world *w, pbf_halo_event event, pbf_status status);
    void (*halo_free)(pbf_world *w);
    /* Sums n (at most PBF_HALO_SUM_MAX) values over the processes in rank order, the same bits
     * on every process: values holds this process's partial sums and gets the totals.
     * Collective: every process calls it at the same point. */
    void (*halo_sum)(pbf_world *w, double *values, int n);
    /* values (n ints or floats as op says) become their sum, minimum or maximum over the
     * processes, the same on every process. Collective. */
    void (*halo_reduce)(const pbf_world *w, void *values, int n, pbf_halo_op op);
    /* Between PBF_HALO_SORTED and PBF_HALO_END: the ghosts' entries of `values` (`stride`
     * floats per slot, at most 3) become their owners' current ones, as the events above do
     * for the solver's arrays; for a module's own vectors (the viscosity solve's). Collective. */
    void (*halo_exchange)(pbf_world *w, float *values, int stride);
    /* Whether a particle at x (along the split axis) is this process's: inside its slab, as
     * migration decides (the emitters emit only their own nozzle points). Not collective. */
    int (*halo_owns)(const pbf_world *w, float x);
    /* Sends each of n records of `size` bytes, whose first float is its x along the split axis,
     * to the process whose slab holds that x (any process, not only a neighbour); *out (malloc'd,
     * the caller frees it) gets the *out_n records this process owns now, those from process 0
     * first, each process's in their order. Collective; PBF_ERR_OUT_OF_MEMORY on failure, the
     * same on every process (also when one passes records NULL with n > 0: it could not pack
     * them). For a module's own sets (the diffuse particles). */
    pbf_status (*halo_route)(pbf_world *w, const void *records, int n, size_t size, void **out,
                             int *out_n);
    /* For n integers per process: before[k] the sum of mine[k] over the processes of lower rank,
     * total[k] over all of them (n at most PBF_HALO_SUM_MAX). Collective. */
    void (*halo_scan)(pbf_world *w, const int64_t *mine, int64_t *before, int64_t *total, int n);
    /* From PBF_HALO_BEGIN to PBF_HALO_END: 1 for each slot that holds a ghost (a copy of a
     * neighbour's particle, not this process's), which sums over the world's particles skip.
     * NULL outside a substep and in a world that was not split. */
    const uint8_t *halo_ghost;
};

/* The host arrays made current before a module reads them (w->host_pull); PBF_OK on the CPU. */
static inline pbf_status pbf__host_pull(const pbf_world *w) {
    return w->host_pull ? w->host_pull(w) : PBF_OK;
}

/* Whether phase names one of the world's fluids (0 is the only one without phases). */
static inline int pbf__phase_valid(const pbf_world *w, int phase) {
    return phase >= 0 && phase < (w->def.phase_count > 0 ? w->def.phase_count : 1);
}

/* Formats the world's error message and returns status (for `return pbf__fail(w, ...)`). */
pbf_status pbf__fail(pbf_world *w, pbf_status status, const char *fmt, ...);
/* Formats into a caller's buffer (may be NULL). */
void pbf__format(char *buf, size_t size, const char *fmt, ...);

/* s_corr's k for a substep of dt: scorr_k, or scorr_ratio · |g| · dt² / r when that is set
 * (include/pbf/pbf.h). */
static inline float pbf__scorr_k(const pbf_world_def *d, float dt) {
    if (!(d->solver.scorr_ratio > 0.0f)) return d->solver.scorr_k;
    const pbf_vec3 g = d->gravity;
    return d->solver.scorr_ratio * sqrtf(g.x * g.x + g.y * g.y + g.z * g.z) * dt * dt /
           d->particle_radius;
}

/* Split over processes: whether every process says ok (collective; `ok` is this one's). An
 * unsplit world returns ok. */
static inline int pbf__all_ok(const pbf_world *w, int ok) {
    int failed = !ok;
    if (w->halo) w->halo_reduce(w, &failed, 1, PBF_HALO_SUM_INT);
    return failed == 0;
}

/* Domain walls at time t (scripted motion applied). */
void pbf__walls_at(const pbf_world_def *def, double t, pbf_v3 *lo, pbf_v3 *hi);

/* A substep's constants in w->params, for every backend (solver.c's substep, the CUDA glue's
 * table of substeps): dt and 1/dt, s_corr's scale for this dt, the CFL speed limit (solver.cfl
 * kernel radii per substep; 0: none) and the walls at the substep's end t_end (boundary.c). */
void pbf__substep_params(pbf_world *w, float dt, double t_end);
/* The box every wall stays inside over all time: the grid covers it. */
void pbf__walls_envelope(const pbf_world_def *def, pbf_v3 *lo, pbf_v3 *hi);
/* Kernel constants, mass calibration and S0 from the def (solver.c). */
void pbf__init_params(pbf_world *w);
/* The largest eigenvalue of the plain Jacobi step on the rest lattice of this spacing, with
 * the relaxation ε (step_weights.c); p needs its kernel constants. */
float pbf__jacobi_bound(const pbf_params *p, double spacing, double relaxation);
/* solver.step_weights' bound b = PBF_STEP_BOUND_MARGIN × pbf__jacobi_bound (solver.c): the
 * margin is for the first layer at a wall, whose modes reach above the bulk lattice's. With the
 * walls' stop moved in (domain.clearance 0.1) the Wendland tank's wave blew up at 1.2 and kept
 * 0.902-0.905 per half swing at 1.4-1.6 (docs/physics.md, "Step weights"). */
#define PBF_STEP_BOUND_MARGIN 1.6f
/* Converts a collider def into the kernels' form. */
pbf_solid pbf__solid_from_def(const pbf_collider_def *c);
/* The particle arrays (particles.c). Checkpoint restore (src/io/checkpoint.c): makes room for
 * count particles (after the memory check) and sets the count; the caller fills every
 * per-particle array. */
pbf_status pbf__world_resize(pbf_world *w, int count);
/* Grows every per-particle array to hold n particles, with the memory check when they must
 * grow; fails (PBF_ERR_CAPACITY) past a fixed capacity. */
pbf_status pbf__world_reserve(pbf_world *w, int n);
/* The same without the memory check (the caller made it). */
pbf_status pbf__world_grow(pbf_world *w, int n);
/* PBF_ERR_OUT_OF_MEMORY, with the message set, when `total` particles would not fit. */
pbf_status pbf__check_particle_memory(pbf_world *w, int64_t total);
/* Appends one particle of fluid `phase` with the next id; the caller has reserved room. */
void pbf__push_particle(pbf_world *w, pbf_v3 x, pbf_v3 v, int phase);
/* Drops the slots i < count with gone[i] != 0 (fields.h's `gone`, or the caller's flags),
 * keeping the others in their order with every PBF_FIELD_KEPT array; returns how many went.
 * The one compaction of sinks, the MPI split, migration, balancing and the halo's end. */
int pbf__particles_compact(pbf_world *w, const uint8_t *gone);
/* Bytes of one particle's arrays that have `flag` (fields.h: PBF_FIELD_MIGRATE, _HALO). */
size_t pbf__particle_bytes(int flag);
/* Slot i's arrays with `flag`, in fields.h's order, packed into pbf__particle_bytes(flag)
 * bytes (the machine's own byte order: for the ranks of one run), and back into slot i; the
 * unpacked slot's other arrays are 0. */
void pbf__particle_pack(const pbf_world *w, int flag, int i, unsigned char *dst);
void pbf__particle_unpack(pbf_world *w, int flag, int i, const unsigned char *src);
/* Bytes per particle of the per-particle arrays. */
size_t pbf__bytes_per_particle(void);
/* The slots in increasing id order (count entries), in the world's scratch (world.c). */
const int32_t *pbf__slots_by_id(const pbf_world *w);

#endif
