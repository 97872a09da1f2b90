/* A feature of the simulator as the step and the world see it: its hooks at fixed points of
 * pbf_world_step, its memory and its free. The step (solver.c) and the world's lifecycle
 * (world.c) walk the list in modules.c and call what each module has; they name no feature.
 * Every hook may be NULL; a hook does nothing for a world that does not use its feature.
 *
 * The points, in the order of a step (docs/architecture.md):
 *   step_check     before anything moves; an error leaves the world unchanged (flow: capacity)
 *   step_begin     the step's start (tool, meshes)
 *   per substep:
 *     substep_begin  after the prediction and the halo (the tool's and the bodies' motion)
 *     pass_extras    before the density solve: what the λ and Δp passes take from the module
 *                    (world_state.h: pbf_pass_extras; the tool's solid, the meshes' targets)
 *     after_delta    after every Δp pass of the density solve (force measurements)
 *     after_velocity after the velocity update, XSPH and vorticity (the viscosity solve)
 *     substep_end    after those (the tool's and bodies' forces)
 *     after_watchdog after the watchdog has passed the substep, the ghosts still there when
 *                    split (diffuse particles)
 *     substep_final  last, once the corrected positions are the state (sinks, emitters)
 *   step_end       the step's means (forces)
 * With no particles (and no split) a substep runs only the modules marked empty_substeps, at
 * substep_begin, substep_end and substep_final. */
#ifndef PBF_MODULE_H
#define PBF_MODULE_H

#include "world_state.h"

typedef struct pbf_module {
    const char *name;
    int empty_substeps; /* 1: its substep hooks run even while the world has no particles */
    /* Whether a world with no particles must still run substeps for it (a body that moves, an
     * emitter that may start); NULL: no. */
    int (*keeps_stepping)(const pbf_world *w);
    void (*init_params)(pbf_world *w); /* the world's constants were (re)computed */
    void (*solids_changed)(pbf_world *w); /* a collider was added or the solver def changed */
    pbf_status (*step_check)(pbf_world *w, float dt, int substeps);
    void (*step_begin)(pbf_world *w, float dt);
    pbf_status (*substep_begin)(pbf_world *w, float dt, int threads);
    /* Fills the members of *x that are the module's (the others are left as they are); a world
     * without the feature leaves them NULL. */
    void (*pass_extras)(pbf_world *w, pbf_pass_extras *x);
    void (*after_delta)(pbf_world *w, const pbf_params *P, float omega, int threads);
    pbf_status (*after_velocity)(pbf_world *w, int threads);
    void (*substep_end)(pbf_world *w, float dt, int threads);
    pbf_status (*after_watchdog)(pbf_world *w, int threads);
    pbf_status (*substep_final)(pbf_world *w, double t_start);
    void (*step_end)(pbf_world *w);
    size_t (*memory_bytes)(const pbf_world *w);
    void (*free)(pbf_world *w);
} pbf_module;

/* The modules in the order their hooks run at each point (modules.c). */
extern const pbf_module *const pbf__modules[];
extern const int pbf__module_count;

#endif
