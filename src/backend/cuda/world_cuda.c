/* The world's glue to the CUDA backend (world_cuda.h, docs/cuda.md): creation, the
 * host cache of the particle arrays, and the substeps of a CUDA world's step. Host-side control
 * only: the device stages are the .cu files of src/backend/cuda/ (backend.h), and their math is
 * src/math/kernels.h.
 *
 * solver.c's pbf_world_step is the step of every world: the profile, the modules' step hooks
 * (the tool's step_begin and step_end, the probes' means) and the substeps' count and dt. It
 * hands the substeps of a CUDA world to pbf__cuda_substeps, which runs them on the device in one
 * call (one graph launch) and fills what solver.c's substep() and finish_profile would: the
 * substeps' constants come from pbf__substep_params (world_state.h), the watchdog's limits and
 * messages from watchdog.h, both shared with solver.c. What the device batch still sequences
 * itself, because its passes run inside the batch: the tool's motion before each substep and its
 * forces after it, the force probes' planes and sums, the mesh solids' motion and forces (a
 * floating body moves on the host by the force the device measured in the substep before), the
 * energy audit's bookkeeping of the device's sums, and the diffuse particles' counters (their set
 * lives on the device; the host copy is a cache like the particles'). With emitters or sinks
 * solver.c asks for one substep at a time and runs their hooks on the host in between (they pull
 * the particles and mark the device stale when they change them). Calls go one way: solver.c
 * calls pbf__cuda_substeps here, never the reverse. */
#include "world_cuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "diffuse_state.h" /* the diffuse set's host copy; its passes run on the device */
#include "energy_audit.h" /* the audit's books; its sums are the device's */
#include "geometry/mesh_pose.h" /* mesh solids' poses, sweep frames, substeps' ends */
#include "probes.h" /* force probes' patches and sums; their pass runs on the device */
#include "tool.h" /* the tool's motion and forces; its passes run on the device */
#include "watchdog.h" /* the watchdog's limits and report, shared with solver.c */
#include "world_state.h"

struct pbf_cuda_world {
    pbf_cuda *dev;
    int host_current; /* the host arrays hold the latest state */
    int device_current; /* the device holds the latest state */
    pbf_cuda_substep *sub;
    pbf_cuda_tool_sums *tool_sums;
    int sub_capacity;
    pbf_cuda_patch patches[PBF_MAX_PROBES]; /* the force probes' patches */
    /* the solids as the device reads them (a mesh's field: its device copy), and the meshes'
     * sweep frames likewise */
    pbf_solid solids[PBF_MAX_SOLIDS];
    pbf_solid sweep_start[PBF_MAX_MESHES], sweep_end[PBF_MAX_MESHES];
    double patch_sums[PBF_MAX_PROBES];
    int patch_counts[PBF_MAX_PROBES];
    /* mesh forces: each mesh's solid and position for the device, the substeps' sums */
    int mesh_solid[PBF_MAX_MESHES];
    double mesh_position[3 * PBF_MAX_MESHES];
    double *mesh_sums;
    int mesh_sums_capacity;
    /* the energy audit: the sums of a call (2 doubles a mark) */
    double *energy;
    int energy_capacity;
    /* diffuse particles: like the particles, the host's set is a cache of the device's */
    int diffuse_host_current, diffuse_device_current;
    int diffuse_room; /* the device set's room (the def's max_count when uploaded) */
};

/* An integer setting from the environment, def when unset; -1 when it is not one of the
 * allowed values (a and b). */
static int int_from_env(const char *name, int def, int a, int b, char *err, size_t err_size) {
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0') return def;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (*end == '\0' && (v == a || v == b)) return (int)v;
    pbf__format(err, err_size,
                "world def: backend 'cuda': the environment variable %s must be %d or %d, got "
                "'%s'",
                name, a, b, s);
    return -1;
}

/* The sort of the grid build: PBF_CUDA_SORT=counting (default) or radix, for `pbf bench` and
 * bench/gpu.sh to compare the two (they give the same permutation). */
static int sort_from_env(pbf_cuda_sort *sort, char *err, size_t err_size) {
    const char *s = getenv("PBF_CUDA_SORT");
    *sort = PBF_CUDA_SORT_COUNTING;
    if (s == NULL || s[0] == '\0' || strcmp(s, "counting") == 0) return 0;
    if (strcmp(s, "radix") == 0) {
        *sort = PBF_CUDA_SORT_RADIX;
        return 0;
    }
    pbf__format(err, err_size,
                "world def: backend 'cuda': the environment variable PBF_CUDA_SORT must be "
                "'counting' or 'radix', got '%s'",
                s);
    return -1;
}

pbf_status pbf__cuda_attach(pbf_world *w, char *err, size_t err_size) {
    char why[PBF_ERROR_SIZE];
    pbf_status st = pbf_cuda_probe(why, sizeof why);
    if (st != PBF_OK) {
        pbf__format(err, err_size,
                    "world def: backend 'cuda' cannot run here: %s; use the CPU backend "
                    "(--backend cpu, or \"backend\": \"cpu\" in the scene's solver section)",
                    why);
        return st;
    }
    pbf_cuda_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid = w->grid;
    if (sort_from_env(&cfg.sort, err, err_size) != 0) return PBF_ERR_INVALID_ARG;
    /* For bench/gpu.sh: PBF_CUDA_THREADS_PER_PARTICLE=1|4 fixes the neighbour passes' threads
     * per particle (default: by the count, the same bits either way); PBF_CUDA_STAGE_EVENTS=0
     * leaves out the events that time the stages, to measure what they cost. */
    cfg.threads_per_particle =
        int_from_env("PBF_CUDA_THREADS_PER_PARTICLE", 0, 1, 4, err, err_size);
    cfg.stage_events = int_from_env("PBF_CUDA_STAGE_EVENTS", 1, 0, 1, err, err_size);
    if (cfg.threads_per_particle < 0 || cfg.stage_events < 0) return PBF_ERR_INVALID_ARG;
    /* the list's room per particle, as pbf_world_memory_estimate: twice the rest count */
    double ratio = w->def.kernel_scale / 2.0;
    cfg.list_per_particle = (float)(2.0 * 4.18879 * ratio * ratio * ratio);
    struct pbf_cuda_world *c = calloc(1, sizeof *c);
    if (c == NULL) {
        pbf__format(err, err_size, "out of memory creating the CUDA backend");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    st = pbf_cuda_create(&cfg, &c->dev, why, sizeof why);
    if (st != PBF_OK) {
        free(c);
        pbf__format(err, err_size, "world def: backend 'cuda': %s", why);
        return st;
    }
    c->host_current = 1;
    c->device_current = 0;
    c->diffuse_host_current = 1;
    c->diffuse_device_current = 0;
    w->cuda = c;
    return PBF_OK;
}

void pbf__cuda_detach(pbf_world *w) {
    struct pbf_cuda_world *c = w->cuda;
    if (c == NULL) return;
    pbf_cuda_destroy(c->dev);
    free(c->sub);
    free(c->tool_sums);
    free(c->mesh_sums);
    free(c->energy);
    free(c);
    w->cuda = NULL;
}

/* Several fluids (def.phase_count > 0, even when their math is the same): the particles'
 * phases travel with them (the device sorts them too); a world of one fluid leaves them on the
 * host. */
static uint8_t *phases_of(pbf_world *w) { return w->def.phase_count > 0 ? w->phase : NULL; }

/* The impulse blend (solver.impulse_blend): each particle's last displacement travels with it
 * while the blend is on; off, the device neither reads nor keeps it. */
static float *blend_of(pbf_world *w) { return w->params.impulse_blend != 0.0f ? w->d_prev : NULL; }

/* The diffuse set's host copy made current (its count and counters always are). */
static pbf_status pull_diffuse(pbf_world *w) {
    struct pbf_cuda_world *c = w->cuda;
    pbf_diffuse *D = w->diffuse;
    if (D == NULL || c->diffuse_host_current) return PBF_OK;
    if (pbf__diffuse_grow_set(D, D->count) != PBF_OK)
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                         "out of memory reading %d diffuse particles back from the device",
                         D->count);
    char why[PBF_ERROR_SIZE];
    pbf_status st =
        pbf_cuda_diffuse_download(c->dev, D->x, D->v, D->life, D->kind, why, sizeof why);
    if (st != PBF_OK) return pbf__fail(w, st, "%s", why);
    c->diffuse_host_current = 1;
    return PBF_OK;
}

pbf_status pbf__cuda_pull(const pbf_world *world) {
    /* The host arrays are a cache of the device state: filling them changes no observable
     * state, so read-back functions that take a const world may do it. */
    pbf_world *w = (pbf_world *)world;
    struct pbf_cuda_world *c = w->cuda;
    if (c == NULL) return PBF_OK;
    if (!c->host_current) {
        char why[PBF_ERROR_SIZE];
        pbf_status st = pbf_cuda_download(c->dev, w->x, w->v, blend_of(w), w->density, w->ids,
                                          phases_of(w), why, sizeof why);
        if (st != PBF_OK) /* the host keeps the last state it had; the message says why */
            return pbf__fail(w, st, "%s", why);
        c->host_current = 1;
    }
    return pull_diffuse(w);
}

void pbf__cuda_touch_diffuse(pbf_world *w) {
    if (w->cuda == NULL) return;
    pull_diffuse(w);
    w->cuda->diffuse_device_current = 0;
}

void pbf__cuda_touch(pbf_world *w) {
    if (w->cuda == NULL) return;
    pbf__cuda_pull(w);
    w->cuda->device_current = 0;
}

size_t pbf__cuda_memory_bytes(const pbf_world *w) {
    return w->cuda ? pbf_cuda_memory_bytes(w->cuda->dev) : 0;
}

pbf_status pbf__cuda_info(char *buf, size_t size) { return pbf_cuda_probe(buf, size); }

pbf_status pbf__cuda_device_view(const pbf_world *world, pbf_device_view *out, char *err,
                                 size_t err_size) {
    /* Like pbf__cuda_pull the other way: the device copy is brought up to date, which changes
     * no observable state. */
    pbf_world *w = (pbf_world *)world;
    struct pbf_cuda_world *c = w->cuda;
    if (!c->device_current && w->count > 0) {
        char why[PBF_ERROR_SIZE];
        pbf_status st = pbf_cuda_upload(c->dev, w->count, w->x, w->v, blend_of(w), w->density,
                                        w->ids, phases_of(w), why, sizeof why);
        if (st != PBF_OK) {
            pbf__format(err, err_size, "%s", why);
            return st;
        }
        c->device_current = 1;
    }
    out->count = w->count;
    pbf_cuda_device_arrays(c->dev, &out->device, &out->positions, &out->velocities,
                           &out->densities);
    if (w->count == 0) out->positions = out->velocities = out->densities = NULL;
    return PBF_OK;
}

/* the watchdog's report (watchdog.h), word for word the CPU's */
static pbf_status unstable(pbf_world *w, int32_t id, const float *x, double t, const char *what) {
    return pbf__unstable(w, id, v3(x[0], x[1], x[2]), t, what);
}

/* what solver.c's watchdog() would report, for what the device found in substep `sub` */
static pbf_status report_unstable(pbf_world *w, const pbf_cuda_step_out *o, double t) {
    const pbf_params *P = &w->cuda->sub[o->unstable_substep].params;
    char what[192];
    switch (o->unstable) {
    case PBF_CUDA_BAD_POSITION:
        return unstable(w, o->unstable_id, o->unstable_x, t, "has a non-finite position");
    case PBF_CUDA_BAD_VELOCITY:
        pbf__format(what, sizeof what, "has a non-finite velocity (%g, %g, %g)",
                    (double)o->unstable_v[0], (double)o->unstable_v[1], (double)o->unstable_v[2]);
        return unstable(w, o->unstable_id, o->unstable_x, t, what);
    case PBF_CUDA_BAD_LAMBDA:
        return unstable(w, o->unstable_id, o->unstable_x, t,
                        "has a non-finite constraint multiplier (lambda): the density "
                        "constraint has no solution; raise solver.relaxation");
    default: {
        const float cfl =
            w->def.solver.cfl > WATCHDOG_MIN_CFL ? w->def.solver.cfl : WATCHDOG_MIN_CFL;
        const float *x = o->unstable_x;
        return pbf__unstable_speed(w, o->unstable_id, v3(x[0], x[1], x[2]), t,
                                   sqrtf(o->unstable_speed2), cfl * P->h * P->inv_dt, P->dt);
    }
    }
}

/* A copy of count solids for the device: each mesh's field pointer becomes its device copy's
 * (pbf_cuda_field copies a field the first time it is seen: once per mesh added). */
static pbf_status device_solids(pbf_world *w, const pbf_solid *in, int count, pbf_solid *out) {
    char why[PBF_ERROR_SIZE];
    for (int k = 0; k < count; ++k) {
        out[k] = in[k];
        if (in[k].type != PBF_SOLID_MESH) continue;
        pbf_status st = pbf_cuda_field(w->cuda->dev, in[k].field, &out[k].field, why, sizeof why);
        if (st != PBF_OK) return pbf__fail(w, st, "%s", why);
    }
    return PBF_OK;
}

/* The meshes whose force the device measures (all of a world's meshes, as the CPU): each one's
 * entry in the solids (-1: a sink) and position; 0 when no mesh is a solid. */
static int mesh_forces(pbf_world *w) {
    struct pbf_cuda_world *c = w->cuda;
    const pbf_geometry *g = w->geometry;
    int solids = 0;
    for (int k = 0; g != NULL && k < g->count; ++k) {
        const pbf_mesh_body *b = g->body[k];
        c->mesh_solid[k] = b->solid;
        for (int q = 0; q < 3; ++q) c->mesh_position[3 * k + q] = b->position[q];
        solids += b->solid >= 0;
    }
    return solids > 0 ? g->count : 0;
}

/* Room in the host's scratch: *buf of at least n doubles. */
static int reserve_doubles(double **buf, int *capacity, int n) {
    if (n <= *capacity) return 1;
    double *b = realloc(*buf, (size_t)n * sizeof *b);
    if (b == NULL) return 0;
    *buf = b;
    *capacity = n;
    return 1;
}

/* The energy audit's books from the device's sums of the call (energy_audit.c's energy():
 * m (Σ |v|²/2 − Σ g·x)): the step's start in its first call, then every stage of every
 * substep, in the CPU's order. */
static void book_energy(pbf_world *w, int first_call, int count) {
    const double *e = w->cuda->energy, m = (double)w->params.mass;
    if (first_call) w->audit.start = w->audit_mark = m * (e[0] - e[1]);
    for (int s = 0; s < count; ++s)
        for (int k = 0; k < PBF_ENERGY_COUNT; ++k) {
            const double *q = e + 2 * (1 + PBF_ENERGY_COUNT * s + k);
            pbf__energy_book(w, (pbf_energy_stage)k, m * (q[0] - q[1]));
        }
}

/* The mesh solids' forces of the call's substeps (meshes.c: pbf__meshes_after_delta's sums and
 * pbf__meshes_substep_end): the step's sums and each substep's, which a floating body moves by
 * in the next substep. */
static void add_mesh_forces(pbf_world *w, int meshes, int count, float dt_sub) {
    const double *sums = w->cuda->mesh_sums;
    for (int s = 0; s < count; ++s) {
        for (int k = 0; k < meshes; ++k) {
            pbf_mesh_body *b = w->geometry->body[k];
            const double *f = sums + 6 * ((size_t)s * meshes + k);
            for (int q = 0; q < 3; ++q) {
                b->sum_force[q] += f[q];
                b->sum_torque[q] += f[3 + q];
                b->sub_force[q] = f[q];
                b->sub_torque[q] = f[3 + q];
            }
        }
        pbf__meshes_substep_end(w, dt_sub);
    }
}

/* Substeps s0 .. s0 + count − 1 of the step (s0 counted from the step's start) on the device: substep()'s constants of each
 * (pbf__substep_params), the tool moved to each one's end, one pbf_cuda_step, then its results:
 * the profile, the watchdog's report, the tool's forces substep by substep. */
static pbf_status run_substeps(pbf_world *w, int s0, int count, float dt_sub) {
    struct pbf_cuda_world *c = w->cuda;
    pbf_params *P = &w->params;
    const float cfl = w->def.solver.cfl > WATCHDOG_MIN_CFL ? w->def.solver.cfl : WATCHDOG_MIN_CFL;
    const pbf_solver_def *sd = &w->def.solver;
    /* force probes: with Chebyshev the solids' share is carried, tracked an h further out */
    const int patches = w->probes != NULL ? w->probes->patch_count : 0;
    const int carry = sd->chebyshev && sd->target_error > 0.0f;
    double t = w->time;
    for (int s = 0; s < count; ++s) {
        pbf__substep_params(w, dt_sub, t + dt_sub); /* as solver.c's substep() */
        memset(&c->sub[s], 0, sizeof c->sub[s]);
        c->sub[s].params = *P;
        if (w->diffuse != NULL) { /* diffuse.c: the draws' counter, the bubbles' damping */
            c->sub[s].diffuse_step = (uint32_t)(w->diffuse->substeps + (uint64_t)s);
            c->sub[s].diffuse_damp = 1.0f - expf(-w->diffuse->def.drag * P->dt);
        }
        for (int k = 0; w->geometry != NULL && k < w->geometry->count; ++k) /* substep_begin */
            for (int q = 0; q < 3; ++q)
                w->geometry->body[k]->sub_force[q] = w->geometry->body[k]->sub_torque[q] = 0.0;
        const float limit = WATCHDOG_CFL_FACTOR * (cfl * P->h * P->inv_dt);
        c->sub[s].watchdog_speed2 = limit * limit;
        if (w->tool != NULL) { /* tool: where it is at the substep's end */
            pbf__tool_move(w, dt_sub, t + dt_sub, s0 + s);
            c->sub[s].tool = w->tool->k;
        }
        /* meshes: the moving ones where they are at the substep's end (as their substep_begin;
         * with moving meshes count is 1, so w->time is this substep's start) */
        pbf__meshes_move(w, dt_sub);
        if (patches > 0) /* probes: the patches' planes at this substep's walls */
            pbf__probes_reach(w->probes, P, carry ? P->h : 0.0f, c->sub[s].probe_plane,
                              c->sub[s].probe_lo, c->sub[s].probe_hi);
        t += dt_sub;
    }
    for (int k = 0; k < patches; ++k) {
        const pbf_patch *q = &w->probes->patches[k];
        c->patches[k].axis = q->axis;
        c->patches[k].sign = q->sign;
        memcpy(c->patches[k].lo, q->lo, sizeof q->lo);
        memcpy(c->patches[k].hi, q->hi, sizeof q->hi);
    }
    /* the solids after the meshes' move, and the meshes' sweep frames, with device fields */
    const int solids = P->solid_count < PBF_MAX_SOLIDS ? P->solid_count : PBF_MAX_SOLIDS;
    const int sweeps = pbf__meshes_sweep_frames(w, c->sweep_start, c->sweep_end);
    pbf_status st = device_solids(w, w->solids, solids, c->solids);
    if (st == PBF_OK) st = device_solids(w, c->sweep_start, sweeps, c->sweep_start);
    if (st == PBF_OK) st = device_solids(w, c->sweep_end, sweeps, c->sweep_end);
    if (st != PBF_OK) return st;
    pbf_cuda_step_in in;
    memset(&in, 0, sizeof in);
    in.substeps = count;
    in.sub = c->sub;
    in.solids = c->solids;
    in.sweep_count = sweeps;
    in.sweep_start = c->sweep_start;
    in.sweep_end = c->sweep_end;
    in.neighbor_mode = (int)w->def.neighbor_mode;
    in.iterations = sd->iterations;
    in.controlled = sd->target_error > 0.0f;
    in.target = sd->target_error * 0.01f;
    in.min_iterations = sd->min_iterations;
    in.max_iterations = sd->max_iterations;
    in.chebyshev = sd->chebyshev;
    in.chebyshev_rho = sd->chebyshev_rho;
    in.chebyshev_gamma = sd->chebyshev_gamma;
    in.chebyshev_delay = sd->chebyshev_delay;
    in.scorr_iterations = sd->scorr_iterations;
    in.iteration_error = w->iteration_error;
    in.history_size =
        (sd->iterations > sd->max_iterations ? sd->iterations : sd->max_iterations) + 2;
    in.tool_sums = w->tool != NULL ? c->tool_sums : NULL;
    in.patch_count = patches;
    in.patches = c->patches;
    in.probe_carry = carry;
    in.patch_sums = c->patch_sums;
    in.patch_counts = c->patch_counts;
    /* mesh forces: every mesh's, after every Δp pass, as meshes.c */
    const int meshes = mesh_forces(w);
    if (meshes > 0 && !reserve_doubles(&c->mesh_sums, &c->mesh_sums_capacity, 6 * meshes * count))
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory");
    in.mesh_count = meshes;
    in.mesh_colliders = w->collider_count;
    in.mesh_solid = c->mesh_solid;
    in.mesh_position = c->mesh_position;
    in.mesh_sums = c->mesh_sums;
    in.visc_iterations = w->def.material.viscosity_iterations; /* the implicit viscosity */
    in.visc_tolerance = w->def.material.viscosity_tolerance;
    in.energy = w->energy_audit; /* the energy audit: the sums at its marks */
    if (in.energy &&
        !reserve_doubles(&c->energy, &c->energy_capacity, 2 * (1 + PBF_ENERGY_COUNT * count)))
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory");
    in.energy_out = c->energy;
    in.diffuse = w->diffuse != NULL ? &w->diffuse->def : NULL; /* diffuse particles */
    pbf_cuda_step_out out;
    char why[PBF_ERROR_SIZE];
    st = pbf_cuda_step(c->dev, &in, &out, why, sizeof why);
    if (st != PBF_OK) return pbf__fail(w, st, "%s", why);
    c->host_current = 0;
    for (int k = 0; k < PBF_STAGE_COUNT; ++k) w->profile.stage_ms[k] += out.stage_ms[k];
    w->substep_iterations += out.substep_iterations;
    if (out.max_iterations_used > w->profile.max_iterations_used)
        w->profile.max_iterations_used = out.max_iterations_used;
    w->profile.chebyshev_restarts += out.chebyshev_restarts;
    w->iteration_error_count = out.iteration_error_count;
    if (out.viscosity_iterations > w->profile.viscosity_iterations)
        w->profile.viscosity_iterations = out.viscosity_iterations;
    if (w->diffuse != NULL) { /* the set stays on the device; its counters come back */
        const int ran = out.unstable != PBF_CUDA_OK ? out.unstable_substep : count;
        w->diffuse->count = out.diffuse_count;
        w->diffuse->generated += out.diffuse_generated;
        w->diffuse->substeps += (uint64_t)ran;
        c->diffuse_host_current = 0;
    }
    if (out.unstable != PBF_CUDA_OK) {
        /* the CPU stops in that substep: time has advanced over the ones before it */
        double tf = w->time;
        for (int s = 0; s < out.unstable_substep; ++s) tf += dt_sub;
        w->time = tf;
        return report_unstable(w, &out, tf + dt_sub);
    }
    w->time = t;
    for (int s = 0; s < count && w->tool != NULL; ++s) { /* tool: substep_end's forces */
        const pbf_cuda_tool_sums *ts = &c->tool_sums[s];
        pbf__tool_add_forces(w, dt_sub, ts->dx, ts->adhesion, ts->damping, ts->min_distance,
                             ts->contacts);
    }
    if (patches > 0) pbf__probes_add_sums(w, c->patch_sums, c->patch_counts); /* probes */
    /* meshes: their forces (none without particles: the device ran nothing, as the CPU's empty
     * substeps measure nothing) */
    if (meshes > 0 && w->count == 0)
        memset(c->mesh_sums, 0, (size_t)(6 * meshes * count) * sizeof *c->mesh_sums);
    if (meshes > 0) add_mesh_forces(w, meshes, count, dt_sub);
    /* the energy audit (the CPU's empty substeps mark nothing) */
    if (in.energy && w->count > 0) book_energy(w, s0 == 0, count);
    /* finish_profile (the last call of the step has the step's end) */
    if (out.bad_density)
        return unstable(w, out.bad_density_id, out.bad_density_x, w->time,
                        "has a non-finite density");
    w->profile.avg_density_error = out.avg_density_error;
    w->profile.max_density_error = out.max_density_error;
    w->profile.avg_neighbors = out.avg_neighbors;
    return PBF_OK;
}

/* Substeps first .. first + substeps − 1 of a CUDA world's step (solver.c: pbf_world_step has
 * set up the step and ran the modules' step_begin; it runs their step_end and closes the profile
 * after this, and with emitters or sinks asks for one substep at a time and runs their hooks in
 * between): all in one call or, with a free tool, one substep at a time. */
pbf_status pbf__cuda_substeps(pbf_world *w, float dt_sub, int first, int substeps) {
    struct pbf_cuda_world *c = w->cuda;
    /* what the world uses was checked against the table when it was added (caps.c) */
    char why[PBF_ERROR_SIZE];
    pbf_status st;
    if (!c->device_current) {
        st = pbf_cuda_upload(c->dev, w->count, w->x, w->v, blend_of(w), w->density, w->ids,
                             phases_of(w), why, sizeof why);
        if (st != PBF_OK) return pbf__fail(w, st, "%s", why);
        c->device_current = 1;
    }
    const pbf_diffuse *D = w->diffuse;
    if (D != NULL && (!c->diffuse_device_current || c->diffuse_room != D->def.max_count)) {
        /* the set to the device, with room for the def's max_count (its set never grows) */
        st = pull_diffuse(w);
        if (st != PBF_OK) return st;
        st = pbf_cuda_diffuse_upload(c->dev, D->def.max_count, D->count, D->x, D->v, D->life,
                                     D->kind, why, sizeof why);
        if (st != PBF_OK) return pbf__fail(w, st, "%s", why);
        c->diffuse_device_current = 1;
        c->diffuse_room = D->def.max_count;
    }
    if (substeps > c->sub_capacity) {
        pbf_cuda_substep *s = realloc(c->sub, (size_t)substeps * sizeof *s);
        pbf_cuda_tool_sums *ts = realloc(c->tool_sums, (size_t)substeps * sizeof *ts);
        if (s != NULL) c->sub = s;
        if (ts != NULL) c->tool_sums = ts;
        if (s == NULL || ts == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory");
        c->sub_capacity = substeps;
    }
    /* A free tool moves by the force of the substep before: the device runs one substep
     * at a time and the host integrates the body in between. Moving meshes (kinematic) move
     * on the host too, to each substep's end (their poses go to the device with the solids,
     * once per call). Otherwise the whole step is one call (one graph launch with a fixed
     * iteration count). */
    const int moving = w->geometry != NULL && w->geometry->moving > 0;
    const int chunk =
        moving || (w->tool != NULL && w->tool->def.motion == PBF_TOOL_FREE) ? 1 : substeps;
    for (int s0 = 0; s0 < substeps; s0 += chunk) {
        st = run_substeps(w, first + s0, chunk, dt_sub);
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}
