/* The per-particle arrays of a world, declared once.
 *
 * PBF_PARTICLE_FIELDS(X) calls X(name, type, components, flags, scratch) for every array of
 * struct pbf_world that holds one entry per particle slot. The struct's members, their growth
 * and the byte count (particles.c), their frees (world.c), the sort's gathers (cpu_stages.c),
 * the compaction after sinks, migration and the halo (particles.c), the MPI packing
 * (particles.c, for src/comm/mpi/halo.c), the checkpoint's PARTICLE section
 * (src/io/checkpoint.c) and the CUDA backend's device mirrors (src/backend/cuda/memory.cu) are
 * made from this list: a new per-particle array is one line here (and one more in
 * PBF_EXPORTED_FIELDS below when programs read it back).
 *
 * flags, what the array takes part in:
 *   PBF_FIELD_SORTED   it follows its particle when the grid sort reorders the slots (through
 *                      `scratch`, an array of the same type and components that takes the
 *                      gathered copy and is swapped in)
 *   PBF_FIELD_KEPT     its value outlives the pass that writes it: compaction (sinks, MPI
 *                      migration, dropping the halo) moves it with its particle, and a particle
 *                      that arrives from another rank without it gets 0
 *   PBF_FIELD_MIGRATE  it travels with a particle that moves to the neighbouring rank
 *   PBF_FIELD_HALO     a ghost (a neighbouring rank's copy of a particle near the cut) gets it
 *                      when the halo is built, at the start of the substep
 *   PBF_FIELD_DEVICE   a CUDA world keeps a copy of it in device memory, one entry per slot: the
 *                      backend's mirrors (src/backend/cuda/memory.cu) are allocated, freed and
 *                      counted from this list (the xyz state arrays x, p, p_tmp, p_prev and v
 *                      rotate through the backend's own pool of buffers instead)
 *   PBF_FIELD_CHECKPOINT(v)  it is a column of the checkpoint's PARTICLE section since format
 *                      version v (a file of an older version is read with it 0); the columns
 *                      are in this list's order. A new one needs PBF_CHECKPOINT_VERSION raised.
 * Arrays without KEPT hold values that every substep writes afresh before it reads them.
 *
 * Vector quantities are xyz-interleaved float arrays: one cache line serves a gather. */
#ifndef PBF_FIELDS_H
#define PBF_FIELDS_H

#include <stdint.h>

enum {
    PBF_FIELD_SORTED = 1, /* gathered into the grid's order each substep */
    PBF_FIELD_KEPT = 2, /* moved by compaction; 0 on arrival from another rank without it */
    PBF_FIELD_MIGRATE = 4, /* sent with a particle that moves to another rank */
    PBF_FIELD_HALO = 8, /* sent to the neighbouring rank's ghost of the particle */
    PBF_FIELD_DEVICE = 16 /* mirrored in device memory by the CUDA backend */
};
/* A column of the checkpoint's PARTICLE section since format version v (1..255). */
#define PBF_FIELD_CHECKPOINT(v) ((v) << 8)
#define PBF_FIELD_CHECKPOINT_SINCE(flags) (((flags) >> 8) & 255)
/* What a particle carries: kept, sent on migration and to its ghosts. */
#define PBF_FIELD_STATE (PBF_FIELD_KEPT | PBF_FIELD_MIGRATE | PBF_FIELD_HALO)

/* clang-format off */
#define PBF_PARTICLE_FIELDS(X)                                                                     \
    /* positions at the start of the substep (and at its end) */                                   \
    X(x, float, 3, PBF_FIELD_SORTED | PBF_FIELD_STATE | PBF_FIELD_CHECKPOINT(1), p_tmp)            \
    /* predicted positions, corrected by the solver (a checkpoint restores them as x) */           \
    X(p, float, 3, PBF_FIELD_SORTED | PBF_FIELD_STATE, p_tmp)                                      \
    /* Jacobi output of a Δp pass; also the reorder scratch of the float3 arrays */                \
    X(p_tmp, float, 3, 0, p_tmp)                                                                   \
    /* predicted positions one iteration back (Chebyshev acceleration) */                          \
    X(p_prev, float, 3, 0, p_prev)                                                                 \
    /* velocities */                                                                               \
    X(v, float, 3, PBF_FIELD_SORTED | PBF_FIELD_STATE | PBF_FIELD_CHECKPOINT(1), p_tmp)            \
    /* vorticity ω */                                                                              \
    X(omega, float, 3, PBF_FIELD_DEVICE, omega)                                                    \
    /* XSPH velocity change */                                                                     \
    X(dv, float, 3, PBF_FIELD_DEVICE, dv)                                                          \
    /* λ of the current iteration */                                                               \
    X(lambda, float, 1, PBF_FIELD_KEPT | PBF_FIELD_DEVICE, lambda)                                 \
    /* ρ at the end of the last substep */                                                         \
    X(density, float, 1, PBF_FIELD_KEPT | PBF_FIELD_CHECKPOINT(1) | PBF_FIELD_DEVICE, density)     \
    /* |ω|, so the confinement pass takes no sqrt per pair */                                      \
    X(omega_len, float, 1, PBF_FIELD_DEVICE, omega_len)                                            \
    /* stable id of each slot (handed out in order, never reused: pbf_world.next_id) */            \
    X(ids, int32_t, 1,                                                                             \
      PBF_FIELD_SORTED | PBF_FIELD_STATE | PBF_FIELD_CHECKPOINT(1) | PBF_FIELD_DEVICE, ids_tmp)    \
    X(ids_tmp, int32_t, 1, PBF_FIELD_DEVICE, ids_tmp)                                              \
    /* each slot's fluid, an index into def.phases (0 with one fluid) */                           \
    X(phase, uint8_t, 1,                                                                           \
      PBF_FIELD_SORTED | PBF_FIELD_STATE | PBF_FIELD_CHECKPOINT(5) | PBF_FIELD_DEVICE, phase_tmp)  \
    X(phase_tmp, uint8_t, 1, PBF_FIELD_DEVICE, phase_tmp)                                          \
    /* the last substep's constraint displacement d (solver.impulse_blend) */                    \
    X(d_prev, float, 3,                                                                            \
      PBF_FIELD_SORTED | PBF_FIELD_STATE | PBF_FIELD_CHECKPOINT(9) | PBF_FIELD_DEVICE, p_tmp)      \
    /* neighbours within h (self excluded), for the profile */                                     \
    X(neighbor_counts, int32_t, 1, PBF_FIELD_KEPT | PBF_FIELD_DEVICE, neighbor_counts)             \
    /* per slot, 1 where a compaction drops the particle (sinks, migration: particles.c) */        \
    X(gone, uint8_t, 1, 0, gone)                                                                   \
    /* the read-back's slots sorted by id, and its scratch (world.c) */                            \
    X(id_order, int32_t, 1, 0, id_order)                                                           \
    X(id_scratch, int32_t, 1, 0, id_scratch)

/* The arrays a program reads back by name, in increasing id order (include/pbf/pbf.h:
 * pbf_world_get_array and the pbf_world_get_* functions; Python's World.array, World.arrays;
 * readback.c makes them from this list): X(array, public name, unit, adjust, what). The type and
 * the components are the array's above. `adjust` is 0, or a function of readback.c that the
 * read-back calls on the gathered values (the densities of several fluids). A newly exported
 * array is one line here. */
#define PBF_EXPORTED_FIELDS(X)                                                                     \
    X(x, "positions", "m", 0, "positions, xyz")                                                    \
    X(v, "velocities", "m/s", 0, "velocities, xyz")                                                \
    X(density, "densities", "kg/m^3", densities_of_phases,                                         \
      "density at the end of the last step (0 before the first step)")                             \
    X(ids, "ids", "", 0, "stable ids (increasing)")                                                \
    X(phase, "phases", "", 0, "each particle's fluid, an index into def.phases")
/* clang-format on */

#endif
