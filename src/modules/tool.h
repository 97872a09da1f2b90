/* The tool inside the library (docs/tool.md): the sphere's motion, its per-particle
 * scratch arrays and the hooks the step calls (solver.c). The per-particle math is in kernels.h
 * (the tool section); this file and tool.c hold only the loops, the reductions and the body. */
#ifndef PBF_TOOL_H
#define PBF_TOOL_H

#include "world_state.h"

typedef struct pbf_tool_body {
    pbf_tool_def def;
    pbf_tool_params k; /* the kernels' view, refreshed every substep */
    pbf_v3 position; /* centre at the end of the last substep */
    pbf_v3 velocity; /* over the last substep */

    /* Poses from pbf_tool_set_pose. */
    int external; /* a pose was given: a kinematic tool no longer follows its path */
    int pose_pending; /* the next step carries the tool to pose_target */
    pbf_v3 pose_target;

    /* Free body: the fluid force and the acceleration of the last substep (the coupling is
     * explicit, stabilised by an added mass: tool.c). */
    pbf_v3 force_prev;
    pbf_v3 accel_prev;

    /* The step in progress. */
    pbf_v3 step_start; /* centre when the step began */
    float step_dt;
    int substeps_done;
    double sum_reaction[3], sum_adhesion[3], sum_damping[3];

    /* Per-particle scratch (capacity slots, solver order). dx: the tool's displacement of each
     * particle summed over the iterations of a substep; f_adh, f_damp: forces on the tool;
     * dist: distance of the centre from the surface. */
    int capacity;
    float *dx, *f_adh, *f_damp, *dist;

    pbf_tool_state state; /* after the last step */
} pbf_tool_body;

/* Hooks of pbf_world_step, in this order:
 *   step_begin; per substep { substep_begin (moves the tool to the end of the substep, before
 *   the prediction), the solver's passes (lambda and delta call the kernels' tool functions and
 *   add to dx), substep_end (after the velocity passes, before the positions become the state) };
 *   step_end. */
void pbf__tool_step_begin(pbf_world *w, float dt);
pbf_status pbf__tool_substep_begin(pbf_world *w, float dt);
void pbf__tool_substep_end(pbf_world *w, float dt, int threads);
void pbf__tool_step_end(pbf_world *w);

/* The pieces of the substep hooks that a CUDA world (cuda/world_cuda.c) uses, whose passes run
 * on the device: the tool moved to where it is at t_end, the end of the substep `index` of the
 * step, with its kernels' view (t->k) filled; and the sums of a substep's passes (the tool's
 * displacement of the particles Σ dx, adhesion and damping forces, the smallest distance and
 * the contacts) turned into the forces and state, as substep_end does. */
void pbf__tool_move(pbf_world *w, float dt, double t_end, int index);
void pbf__tool_add_forces(pbf_world *w, float dt, const double sdx[3], const double sa[3],
                          const double sd[3], float md, int contacts);

void pbf__tool_free(pbf_world *w);
size_t pbf__tool_memory_bytes(const pbf_world *w);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__tool_module;

#endif
