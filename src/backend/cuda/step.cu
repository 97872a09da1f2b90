/* A whole step of the CUDA backend (backend_internal.h): the stages in solver.c's order for
 * every substep (sort.cu, meshes.cu, density.cu, velocity.cu, viscosity.cu, diffuse.cu, with
 * energy.cu's marks), the capture of a fixed-count step into a CUDA graph and its replay, and
 * pbf_cuda_step around them: the inputs in, the results out. */
#include "backend_internal.h"

namespace {

/* The whole step. host_checks: error control (reads the error after each λ pass). */
cudaError_t enqueue_step(pbf_cuda *c, const pbf_cuda_step_in *in, int host_checks,
                         pbf_cuda_step_out *out) {
    CK(cudaMemsetAsync(&c->d_res->watch, 0, sizeof(Watch), c->stream));
    if (in->patch_count > 0)
        CK(cudaMemsetAsync(c->d_patch_sums, 0, PBF_MAX_PROBES * sizeof(double), c->stream));
    if (in->mesh_count > 0) /* the substeps' mesh forces */
        CK(cudaMemsetAsync(c->d_mesh_sums, 0,
                           (size_t)in->substeps * (size_t)in->mesh_count * 6 * sizeof(double),
                           c->stream));
    if (in->diffuse) /* the births of this call */
        CK(cudaMemsetAsync(&c->d_dif->generated, 0, sizeof(long long), c->stream));
    c->mark_count = 0;
    if (c->timed) {
        CK(ensure_events(c, 2));
        CK(record(c, 0));
    }
    if (in->energy) /* energy_audit.c: the energy at the start (the step's, in its first call) */
        CK(enqueue_energy(c, 0, buf(c, R_X), buf(c, R_V), nullptr, nullptr, c->d_sub));
    for (int sub = 0; sub < in->substeps; ++sub) {
        CK(enqueue_pre(c, in, sub));
        int passes = 0, hist_count = 0;
        CK(enqueue_solve(c, in, sub, host_checks, &passes, &out->chebyshev_restarts,
                         in->iteration_error, &hist_count));
        out->substep_iterations += passes;
        if (passes > out->max_iterations_used) out->max_iterations_used = passes;
        out->iteration_error_count = in->controlled ? hist_count : hist_count + 1;
        if (in->energy) /* solver.c: after the solve, the velocity the positions imply */
            CK(enqueue_energy(c, 1 + PBF_ENERGY_COUNT * sub + PBF_ENERGY_PROJECT, buf(c, R_P),
                              nullptr, buf(c, R_X), nullptr, c->d_sub + sub));
        int visc = 0;
        CK(enqueue_post(c, in, sub, in->controlled ? -1 : hist_count, &visc));
        if (visc > out->viscosity_iterations) out->viscosity_iterations = visc;
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
    k.tpp_lambda = c->tpp_lambda;
    k.tool = in->tool_sums != nullptr;
    k.patches = in->patch_count;
    k.sweep = in->sweep_count;
    k.material = in->sub[0].params.surface_tension_on * 2 + in->sub[0].params.adhesion_on;
    k.drag = in->sub[0].params.surface_drag > 0.0f;
    k.phases = c->has_phases + 2 * in->sub[0].params.phases_on;
    k.mesh_forces = in->mesh_count;
    k.energy = in->energy != 0;
    k.diffuse = in->diffuse != nullptr;
    k.blend = in->sub[0].params.impulse_blend != 0.0f;
    k.step_bound = in->sub[0].params.step_bound;
    k.generation = c->generation;
    for (int r = 0; r < R_COUNT; ++r) k.role[r] = c->role[r];
    k.ids_role = c->ids_role;
    k.diffuse_role = c->dif_role;
    return k;
}

/* Captures the fixed-count step into a graph for the current rotation state. On failure the
 * roles are restored and *entry is NULL. */
cudaError_t capture(pbf_cuda *c, const pbf_cuda_step_in *in, GraphEntry **entry) {
    *entry = nullptr;
    GraphKey key = make_key(c, in);
    int role0[R_COUNT], ids0 = c->ids_role, dif0 = c->dif_role;
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
    int end_role[R_COUNT], end_ids = c->ids_role, end_dif = c->dif_role;
    memcpy(end_role, c->role, sizeof end_role);
    memcpy(c->role, role0, sizeof role0); /* nothing ran yet */
    c->ids_role = ids0;
    c->dif_role = dif0;
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
    g->end_diffuse_role = end_dif;
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

} // namespace

extern "C" pbf_status pbf_cuda_step(pbf_cuda *c, const pbf_cuda_step_in *in, pbf_cuda_step_out *out,
                                    char *err, size_t err_size) {
    memset(out, 0, sizeof *out);
    if (c->count == 0 || in->substeps <= 0) {
        if (c->h_dif) out->diffuse_count = c->h_dif->count; /* the set as it was */
        return PBF_OK;
    }
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
    for (int k = 0; k < in->substeps; ++k) {
        c->h_sub[k].params_no_scorr = c->h_sub[k].params;
        c->h_sub[k].params_no_scorr.scorr_scale = 0.0f;
    }
    int solids = in->sub[0].params.solid_count;
    if (solids < 0) solids = 0;
    if (solids > PBF_MAX_SOLIDS) solids = PBF_MAX_SOLIDS;
    if (solids > 0) memcpy(c->h_solids, in->solids, (size_t)solids * sizeof(pbf_solid));
    e = cudaMemcpyAsync(c->d_sub, c->h_sub, (size_t)in->substeps * sizeof(pbf_cuda_substep),
                        cudaMemcpyHostToDevice, c->stream);
    if (e == cudaSuccess && solids > 0) e = density_upload_solids(c, solids);
    if (e == cudaSuccess && solids > 0) e = velocity_upload_solids(c, solids);
    if (e == cudaSuccess && in->sweep_count > 0) { /* mesh solids: the sweep's frames */
        const int m = in->sweep_count < PBF_MAX_SOLIDS ? in->sweep_count : PBF_MAX_SOLIDS;
        memcpy(c->h_sweep, in->sweep_start, (size_t)m * sizeof(pbf_solid));
        memcpy(c->h_sweep + PBF_MAX_SOLIDS, in->sweep_end, (size_t)m * sizeof(pbf_solid));
        e = meshes_upload_sweep(c, m);
    }
    if (e == cudaSuccess && in->patch_count > 0) {
        memcpy(c->h_patches, in->patches, (size_t)in->patch_count * sizeof(pbf_cuda_patch));
        e = probes_upload_patches(c, in->patch_count);
    }
    if (e == cudaSuccess && in->mesh_count > 0) e = reserve_mesh_forces(c, in, solids);
    if (e == cudaSuccess && in->energy) e = reserve_energy(c, 1 + PBF_ENERGY_COUNT * in->substeps);
    if (e == cudaSuccess && in->diffuse) e = diffuse_prepare(c, in, solids);
    if (e != cudaSuccess) return fail(e, "copying the step's parameters", err, err_size);

    /* By count: four threads per particle (one per lane) in every neighbour pass but λ's at any
     * size, and in λ's below TPP_LAMBDA_LIMIT particles. Measured on an H200 (docs/cuda.md): the
     * four shorten the dependent chains of the Δp and vorticity passes at every size (10M
     * particles: 10.5 ms against 11.0 and 4.6 against 6.7); λ's, with more registers, runs
     * faster on one thread per particle once the GPU is full (1M: 1.19 ms against 1.25). */
    const int fixed = c->tpp_config == 1 || c->tpp_config == PBF_LANES;
    c->tpp = fixed ? c->tpp_config : PBF_LANES;
    c->tpp_lambda = fixed ? c->tpp_config : n < TPP_LAMBDA_LIMIT ? PBF_LANES : 1;
    double stage[PBF_STAGE_COUNT];
    memset(stage, 0, sizeof stage);
    c->stage_acc = stage;
    /* A fixed count runs as one graph launch; error control kernel by kernel (it waits for the
     * error after every λ pass). A step with too many passes to time in one graph also runs
     * kernel by kernel. */
    const long long events = 2 + (long long)in->substeps * (7 + 2 * (long long)in->iterations);
    const int want_graph = !in->controlled && !c->graph_disabled && events < MAX_EVENTS &&
                           !in->sub[0].params.viscosity_on; /* the viscosity's host checks */
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
        c->dif_role = g->end_diffuse_role;
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
    const size_t mesh_doubles = (size_t)in->substeps * (size_t)in->mesh_count * 6;
    if (e == cudaSuccess && in->mesh_count > 0)
        e = cudaMemcpyAsync(c->h_mesh_sums, c->d_mesh_sums, mesh_doubles * sizeof(double),
                            cudaMemcpyDeviceToHost, c->stream);
    const size_t energy_doubles = 2 * (1 + (size_t)PBF_ENERGY_COUNT * (size_t)in->substeps);
    if (e == cudaSuccess && in->energy)
        e = cudaMemcpyAsync(c->h_energy, c->d_energy, energy_doubles * sizeof(double),
                            cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess && in->diffuse)
        e = cudaMemcpyAsync(c->h_dif, c->d_dif, sizeof(DiffuseState), cudaMemcpyDeviceToHost,
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
    if (in->mesh_count > 0) memcpy(in->mesh_sums, c->h_mesh_sums, mesh_doubles * sizeof(double));
    if (in->energy) memcpy(in->energy_out, c->h_energy, energy_doubles * sizeof(double));
    if (in->diffuse) {
        out->diffuse_count = c->h_dif->count;
        out->diffuse_generated = c->h_dif->generated;
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
