/* The per-particle arrays of a world, declared once.
 *
 * PBF_PARTICLE_FIELDS(X) calls X(name, type, components, flags, scratch) for every array of
 * struct pbf_world that holds one entry per particle slot. The struct's members, their growth
 * and the byte count (particles.c), their frees (world.c) and the sort's gathers (solver.c) are
 * made from this list: a new per-particle array is one line here.
 *
 * flags: PBF_FIELD_SORTED arrays follow their particle when the grid sort reorders the slots
 * (through `scratch`, an array of the same type and components that takes the gathered copy and
 * is swapped in); the others hold values that every substep writes afresh before it reads them.
 *
 * Vector quantities are xyz-interleaved float arrays: one cache line serves a gather. */
#ifndef PBF_FIELDS_H
#define PBF_FIELDS_H

#include <stdint.h>

enum {
    PBF_FIELD_SORTED = 1 /* gathered into the grid's order each substep */
};

/* clang-format off */
#define PBF_PARTICLE_FIELDS(X)                                                                 \
    /* positions at the start of the substep (and at its end) */                               \
    X(x, float, 3, PBF_FIELD_SORTED, p_tmp)                                                    \
    /* predicted positions, corrected by the solver */                                         \
    X(p, float, 3, PBF_FIELD_SORTED, p_tmp)                                                    \
    /* Jacobi output of a Δp pass; also the reorder scratch of the float3 arrays */            \
    X(p_tmp, float, 3, 0, p_tmp)                                                               \
    /* predicted positions one iteration back (Chebyshev acceleration) */                      \
    X(p_prev, float, 3, 0, p_prev)                                                             \
    /* velocities */                                                                           \
    X(v, float, 3, PBF_FIELD_SORTED, p_tmp)                                                    \
    /* vorticity ω */                                                                          \
    X(omega, float, 3, 0, omega)                                                               \
    /* XSPH velocity change */                                                                 \
    X(dv, float, 3, 0, dv)                                                                     \
    /* λ of the current iteration */                                                           \
    X(lambda, float, 1, 0, lambda)                                                             \
    /* ρ at the end of the last substep */                                                     \
    X(density, float, 1, 0, density)                                                           \
    /* |ω|, so the confinement pass takes no sqrt per pair */                                  \
    X(omega_len, float, 1, 0, omega_len)                                                       \
    /* stable id of each slot (handed out in order, never reused: pbf_world.next_id) */        \
    X(ids, int32_t, 1, PBF_FIELD_SORTED, ids_tmp)                                              \
    X(ids_tmp, int32_t, 1, 0, ids_tmp)                                                         \
    /* each slot's fluid, an index into def.phases (0 with one fluid) */                       \
    X(phase, uint8_t, 1, PBF_FIELD_SORTED, phase_tmp)                                          \
    X(phase_tmp, uint8_t, 1, 0, phase_tmp)                                                     \
    /* neighbours within h (self excluded), for the profile */                                 \
    X(neighbor_counts, int32_t, 1, 0, neighbor_counts)                                         \
    /* the read-back's slots sorted by id, and its scratch (world.c) */                        \
    X(id_order, int32_t, 1, 0, id_order)                                                       \
    X(id_scratch, int32_t, 1, 0, id_scratch)
/* clang-format on */

#endif
