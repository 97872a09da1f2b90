/* The CPU backend's stages: the OpenMP loops of a substep over the pass bodies of kernels.h
 * (cpu_passes.h for the neighbour sums). The step (solver.c) calls them in the paper's order,
 * with the halo exchanges, the modules' hooks and the energy audit's marks between them; a stage
 * does nothing else: no exchange, no hook, no decision of the solve.
 *
 * Each stage is a parallel loop over the world's particles with a static schedule that writes
 * only its own particle (Jacobi), so the result is bit-identical for any thread count `nt`. */
#ifndef PBF_CPU_STAGES_H
#define PBF_CPU_STAGES_H

#include "world_state.h"

/* Gravity and the velocity move each particle to its predicted position p (several fluids:
 * each its gravity scale). */
void pbf__cpu_predict(pbf_world *w, int nt);
/* The grid's counting sort of p, then every sorted per-particle array (fields.h) gathered into
 * the new order. */
void pbf__cpu_grid(pbf_world *w, int nt);
/* The λ pass: each particle's density, neighbour count and constraint multiplier λ (times
 * weight, the pass's step weight: kernels.h, pbf_step_weight), with the solids of w->solids and
 * the modules' extra solid x->tool (list mode: it keeps each pair's gradient factor for the Δp
 * pass). */
void pbf__cpu_lambda(pbf_world *w, const pbf_pass_extras *x, float weight, int nt);
/* Surface tension's normals (into w->omega), from the λ pass's densities. */
void pbf__cpu_normals(pbf_world *w, int nt);
/* The materials' displacement dt Δv (surface tension with the normals, adhesion) into w->dv. */
void pbf__cpu_material(pbf_world *w, int nt);
/* One Δp pass with the parameters P (w->params, or a copy without s_corr), adding `shift` (the
 * materials' displacement) when it is not NULL; omega != 1 applies the Chebyshev step with
 * the def's solver.chebyshev_gamma. The modules' extras: the tool's boundary term and projection (its
 * reaction summed into x->tool_dx), each particle's fluid–fluid target into x->delta_target. The
 * new positions become w->p, the old ones w->p_prev. */
void pbf__cpu_delta(pbf_world *w, const pbf_params *P, float omega, const float *shift,
                    const pbf_pass_extras *x, int nt);
/* The velocity from the positions: v = (p − x) / dt. */
void pbf__cpu_velocity(pbf_world *w, int nt);
/* The vorticity's first pass: ω (w->omega, |ω| in w->omega_len), XSPH's velocity change (w->dv)
 * and the final density. */
void pbf__cpu_vorticity(pbf_world *w, int nt);
/* The vorticity's second pass: the confinement from the gradient of the neighbours' |ω|, and
 * XSPH's change, into w->v. */
void pbf__cpu_confinement(pbf_world *w, int nt);

#endif
