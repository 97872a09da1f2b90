/* What runs where (include/pbf/features.h, docs/features.md): the table of features ×
 * backends and the checks that refuse a combination from it. Every refusal of a feature on a
 * backend is made here and nowhere else; the rest of the library asks (pbf__caps_*). Every
 * feature runs with both kernel pairs (docs/physics.md, "The Wendland C2 pair"). */
#include "caps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow_state.h"
#include "geometry/geometry_state.h"
#include "probes_state.h"

#define Y PBF_SUPPORT_YES
#define U PBF_SUPPORT_UNVERIFIED
#define N PBF_SUPPORT_NO

/* The reasons a cell is refused; each says what to use instead. */
/* An unverified cell (U): CUDA code whose parity test (tests/test_cuda.c) has not passed on a
 * GPU: emitters and sinks (their host pass between device substeps, written without a GPU),
 * static and kinematic mesh solids (their fields' device copies and sweep, ditto), floating
 * bodies (the meshes' forces on the device, the bodies moved on the host), the implicit
 * viscosity (its conjugate gradients on the device), diffuse particles (their set on the
 * device) and the energy audit (its sums on the device), ditto; bench/gpu.sh's matrix stage runs
 * each cell's test. */
#define NOT_RUN                                                                                    \
    "its device code has not run on a GPU yet (docs/cuda.md); run the scene on the CPU "           \
    "(--backend cpu), or set PBF_ALLOW_UNVERIFIED=1 to try it"

static const pbf_feature_info table[PBF_FEATURE_COUNT] = {
    [PBF_FEATURE_FLUID] = {"fluid", "the fluid", {Y, Y, Y}, {"", "", ""}},
    [PBF_FEATURE_ERROR_CONTROL] = {"error_control",
                                   "error control (scene key 'solver.target_error')",
                                   {Y, Y, Y},
                                   {"", "", ""}},
    [PBF_FEATURE_WENDLAND] = {"wendland_kernel",
                              "the Wendland C2 kernel pair (scene key 'fluid.kernel')",
                              {Y, Y, Y},
                              {"", "", ""}},
    [PBF_FEATURE_TOOL] = {"tool", "the tool (scene key 'tool')", {Y, Y, Y}, {"", "", ""}},
    [PBF_FEATURE_PROBES] = {"probes",
                            "height, front and level probes (scene key 'probes')",
                            {Y, Y, Y},
                            {"", "", ""}},
    [PBF_FEATURE_FORCE_PROBES] = {"force_probes",
                                  "force probes (scene key 'probes', type \"force\")",
                                  {Y, Y, Y},
                                  {"", "", ""}},
    [PBF_FEATURE_MESHES] = {"meshes",
                            "mesh solids (scene key 'meshes')",
                            {Y, U, Y},
                            {"", NOT_RUN, ""}},
    [PBF_FEATURE_BODIES] = {"floating_bodies",
                            "floating mesh bodies (scene key 'meshes', motion \"floating\")",
                            {Y, U, Y},
                            {"", NOT_RUN, ""}},
    [PBF_FEATURE_EMITTERS] = {"emitters",
                              "emitters and a particle capacity (scene keys 'flow.emitters', "
                              "'flow.capacity')",
                              {Y, U, Y},
                              {"", NOT_RUN, ""}},
    [PBF_FEATURE_SINKS] = {"sinks",
                           "sinks (scene key 'flow.sinks', or a mesh with \"sink\": true)",
                           {Y, U, Y},
                           {"", NOT_RUN, ""}},
    [PBF_FEATURE_SURFACE_TENSION] = {"surface_tension",
                                     "surface tension (scene key 'fluid.surface_tension')",
                                     {Y, Y, Y},
                                     {"", "", ""}},
    [PBF_FEATURE_ADHESION] = {"adhesion",
                              "adhesion (scene keys 'domain.adhesion', 'colliders[].adhesion')",
                              {Y, Y, Y},
                              {"", "", ""}},
    [PBF_FEATURE_FRICTION] = {"wall_friction",
                              "wall friction (scene keys 'domain.friction', "
                              "'colliders[].friction')",
                              {Y, Y, Y},
                              {"", "", ""}},
    [PBF_FEATURE_VISCOSITY] = {"viscosity",
                               "the implicit viscosity (scene keys 'fluid.viscosity', "
                               "'domain.no_slip')",
                               {Y, U, Y},
                               {"", NOT_RUN, ""}},
    [PBF_FEATURE_SURFACE_DRAG] = {"surface_drag",
                                  "surface drag (scene key 'fluid.surface_drag')",
                                  {Y, Y, Y},
                                  {"", "", ""}},
    [PBF_FEATURE_PHASES] = {"several_fluids",
                            "several fluids (scene key 'materials')",
                            {Y, Y, Y},
                            {"", "", ""}},
    [PBF_FEATURE_DIFFUSE] = {"diffuse",
                             "diffuse particles: spray, foam and bubbles (scene key 'diffuse')",
                             {Y, U, Y},
                             {"", NOT_RUN, ""}},
    [PBF_FEATURE_ENERGY_AUDIT] = {"energy_audit",
                                  "the energy audit (the C API's world_set_energy_audit)",
                                  {Y, U, Y},
                                  {"", NOT_RUN, ""}},
};

static const char *const where[PBF_COLUMN_COUNT] = {"on the CPU backend", "on the CUDA backend",
                                                    "in a world split over MPI processes"};

const pbf_feature_info *pbf_feature_get(pbf_feature f) {
    return (int)f >= 0 && f < PBF_FEATURE_COUNT ? &table[f] : NULL;
}

const char *pbf_column_name(pbf_column c) {
    return c == PBF_COLUMN_CPU    ? "cpu"
           : c == PBF_COLUMN_CUDA ? "cuda"
           : c == PBF_COLUMN_MPI  ? "mpi"
                                  : "?";
}

const char *pbf_support_name(pbf_support s) {
    return s == PBF_SUPPORT_YES ? "yes" : s == PBF_SUPPORT_UNVERIFIED ? "unverified" : "no";
}

static int unverified_allowed(void) {
    const char *a = getenv("PBF_ALLOW_UNVERIFIED");
    return a != NULL && strcmp(a, "1") == 0;
}

pbf_status pbf_feature_check(pbf_feature f, pbf_column c, char *err, size_t err_size) {
    const pbf_feature_info *i = pbf_feature_get(f);
    if (i == NULL || (int)c < 0 || c >= PBF_COLUMN_COUNT) {
        if (err != NULL && err_size > 0) snprintf(err, err_size, "no such feature or column");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_support s = i->support[c];
    if (s == PBF_SUPPORT_YES || (s == PBF_SUPPORT_UNVERIFIED && unverified_allowed()))
        return PBF_OK;
    if (err != NULL && err_size > 0)
        snprintf(err, err_size, "%s: %s %s yet; %s", i->what,
                 s == PBF_SUPPORT_UNVERIFIED ? "not verified" : "not available", where[c],
                 i->reason[c]);
    return PBF_ERR_UNSUPPORTED;
}

uint32_t pbf_world_def_features(const pbf_world_def *d) {
    uint32_t m = 1u << PBF_FEATURE_FLUID;
    if (d->solver.target_error > 0.0f) m |= 1u << PBF_FEATURE_ERROR_CONTROL;
    if (d->kernel == PBF_KERNEL_WENDLAND) m |= 1u << PBF_FEATURE_WENDLAND;
    if (d->material.surface_tension > 0.0f) m |= 1u << PBF_FEATURE_SURFACE_TENSION;
    if (d->wall_adhesion > 0.0f) m |= 1u << PBF_FEATURE_ADHESION;
    if (d->wall_friction > 0.0f) m |= 1u << PBF_FEATURE_FRICTION;
    if (d->material.viscosity > 0.0f || d->wall_no_slip) m |= 1u << PBF_FEATURE_VISCOSITY;
    if (d->material.surface_drag > 0.0f) m |= 1u << PBF_FEATURE_SURFACE_DRAG;
    if (d->phase_count > 0) m |= 1u << PBF_FEATURE_PHASES;
    return m;
}

/* Read from the features' state, not asked of them: the features ask this file (caps.h). */
uint32_t pbf_world_features(const pbf_world *w) {
    uint32_t m = pbf_world_def_features(&w->def);
    for (int k = 0; k < w->collider_count; ++k) {
        if (w->colliders[k].adhesion > 0.0f) m |= 1u << PBF_FEATURE_ADHESION;
        if (w->colliders[k].friction > 0.0f) m |= 1u << PBF_FEATURE_FRICTION;
    }
    if (w->tool != NULL) m |= 1u << PBF_FEATURE_TOOL;
    for (int k = 0; w->probes != NULL && k < w->probes->count; ++k)
        m |= 1u << (w->probes->defs[k].type == PBF_PROBE_FORCE ? PBF_FEATURE_FORCE_PROBES
                                                               : PBF_FEATURE_PROBES);
    for (int k = 0; w->geometry != NULL && k < w->geometry->count; ++k) {
        const pbf_mesh_def *d = &w->geometry->body[k]->def;
        m |= 1u << (d->sink                          ? PBF_FEATURE_SINKS
                    : d->motion == PBF_MESH_FLOATING ? PBF_FEATURE_BODIES
                                                     : PBF_FEATURE_MESHES);
        if (d->sink) m |= 1u << PBF_FEATURE_MESHES; /* a sink mesh is a mesh too */
    }
    if (w->flow != NULL && (w->flow->emitter_count > 0 || w->flow->capacity > 0))
        m |= 1u << PBF_FEATURE_EMITTERS;
    if (w->flow != NULL && w->flow->sink_count > 0) m |= 1u << PBF_FEATURE_SINKS;
    if (w->diffuse != NULL) m |= 1u << PBF_FEATURE_DIFFUSE;
    if (w->energy_audit) m |= 1u << PBF_FEATURE_ENERGY_AUDIT;
    return m;
}

pbf_status pbf__caps_check(uint32_t have, uint32_t adding, pbf_column column, char *err,
                           size_t err_size) {
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        if (!(adding & (1u << f))) continue;
        pbf_status st = pbf_feature_check((pbf_feature)f, column, err, err_size);
        if (st != PBF_OK) return st;
    }
    (void)have; /* every feature runs with every other: none is refused for another's sake */
    return PBF_OK;
}

pbf_status pbf__caps_require(pbf_world *w, pbf_feature f) {
    const uint32_t have = pbf_world_features(w), adding = 1u << f;
    pbf_status st = PBF_OK;
    if (w->def.backend == PBF_BACKEND_CUDA)
        st = pbf__caps_check(have, adding, PBF_COLUMN_CUDA, w->error, sizeof w->error);
    if (st == PBF_OK && w->halo != NULL)
        st = pbf__caps_check(have, adding, PBF_COLUMN_MPI, w->error, sizeof w->error);
    if (st == PBF_OK) st = pbf__caps_check(have, adding, PBF_COLUMN_CPU, w->error, sizeof w->error);
    return st;
}
