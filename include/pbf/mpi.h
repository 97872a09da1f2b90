/* pbf — a world split over MPI processes (docs/mpi.md). Only in builds with MPI (PBF_MPI, CMake):
 * this header includes <mpi.h>, and nothing else of pbf does, so programs without MPI never see
 * it.
 *
 *   pbf_world *w;  pbf_scene_create_world(&scene, &w, err, sizeof err);   // on every rank
 *   if (pbf_mpi_world_split(w, MPI_COMM_WORLD, err, sizeof err) != PBF_OK) ...
 *   for (...) pbf_world_step(w, dt);                    // collective: every rank calls it
 *   pbf_world_get_positions(w, out);                     // this rank's particles, by id
 *
 * Decomposition: slabs along x, one per rank in rank order, cut at the quantiles of the
 * particles' x when the world is split (equal particle counts then); pbf_mpi_world_balance
 * moves them when the counts diverge. Each rank owns the particles whose predicted position lies in its slab and, for every
 * substep, holds a halo: copies of its neighbours' particles within PBF_MPI_HALO_FACTOR · h of
 * the cut. The halo is exchanged before every pass that reads neighbours (positions for λ, λ and
 * density for Δp, |ω| for the confinement), and particles crossing a cut migrate each substep.
 * Ids stay global: each particle keeps the id it had in the whole world.
 *
 * One rank gives the same bits as a world never split. Two or more ranks sum over each
 * particle's neighbours in another order, so the results agree to rounding, not bit for bit.
 *
 * Refused with PBF_ERR_INVALID_ARG and a message (not supported split yet): the CUDA backend
 * (the table of what runs where, docs/features.md, has the list). Diffuse particles work: each
 * rank generates them from the fluid it owns (the ghosts as neighbours), keeps those in its slab
 * (they follow their x to the rank that owns it every substep) and the cap is the whole world's,
 * the ranks' new particles taken in rank order. Emitters
 * work: each rank emits the nozzle points in its own slab and every rank hands out the whole
 * layer's ids in the same order, so the ids are one process's. A particle capacity
 * (pbf_world_set_capacity) is each rank's: before every step all ranks take the largest count
 * one of them would hold after its emission, and when that is past the capacity every rank
 * fails the step with the same PBF_ERR_CAPACITY message (no rank waits on another). Analytic colliders, moving walls, wall friction, adhesion and
 * surface drag work: they act on each particle alone. Mesh solids, floating bodies and sinks
 * work: every rank loads the meshes, the forces on them are the whole world's (rank order), and
 * each rank removes its own particles in a sink. Surface tension,
 * several fluids and the viscosity solve work: the ghosts get the values their passes read
 * (normals, phases, the solve's vectors before each product; its dot products are the whole
 * world's, in rank order). Error control
 * (solver.target_error > 0), probes, the tool and the energy audit work: the sums they need are
 * the whole world's, added in rank order (every rank does the same solver passes, moves the same
 * tool and reads the same values; pbf_world_sample_probes and pbf_world_set_tool are then
 * collective). */
#ifndef PBF_MPI_H
#define PBF_MPI_H

#include <mpi.h>

#include "export.h"
#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The halo's width in kernel radii h: more than 1 because in the cells neighbour mode the
 * neighbours are searched again in every pass, after the particles moved a little. */
#define PBF_MPI_HALO_FACTOR 1.25f

/* Splits a world that holds the whole scene, identical on every rank of comm, into this rank's
 * slab. Collective. Every rank gets the same status: an error names the reason (a feature not
 * supported split, or more ranks than slabs at least a halo wide fit in the particles' extent).
 * On error the world is unchanged. comm is duplicated: the caller may free its own. */
PBF_API pbf_status pbf_mpi_world_split(pbf_world *world, MPI_Comm comm, char *err, size_t err_size);

/* Splits a world like pbf_mpi_world_split, but at the given cuts (ranks + 1 values: cuts[r] and
 * cuts[r + 1] bound rank r's slab; the first and last slabs are open beyond cuts[0] and
 * cuts[ranks]), for a run resumed on the rank count its checkpoint was written with (the pieces
 * then go on bit for bit). Every slab must be at least a halo wide. Each rank's world is the
 * whole scene (the rank keeps its slab's particles) or its own piece of a checkpoint (it keeps
 * them all, also those just past a cut); told apart by their counts and ids. Collective. */
PBF_API pbf_status pbf_mpi_world_split_at(pbf_world *world, MPI_Comm comm, const double *cuts,
                                          char *err, size_t err_size);

/* The cuts of a split world into cuts (ranks + 1 values, as pbf_mpi_world_split_at takes them;
 * the same on every rank). Returns the rank count, 0 for a world that was not split (cuts then
 * untouched); cuts may be NULL to ask for the count. */
PBF_API int pbf_mpi_world_cuts(const pbf_world *world, double *cuts);

/* This rank's slab [lo, hi) along x (the first starts at -inf, the last ends at +inf), its rank
 * and the number of ranks. Returns 0 for a world that was not split. */
PBF_API int pbf_mpi_world_slab(const pbf_world *world, double *lo, double *hi, int *rank,
                               int *ranks);

/* The halo of this rank's last substep: particles received from the neighbours (ghosts) and
 * copies sent to them, and the bytes this rank received in that substep (migration included:
 * 40 bytes per particle for x, p, v and id, then 8 per ghost after each λ pass, 12 after each
 * Δp pass and 4 for |ω|). Returns 0 for a world that was not split. */
PBF_API int pbf_mpi_world_halo(const pbf_world *world, int *received, int *sent,
                               int64_t *bytes_received);

/* The ranks' balance, measured by pbf_mpi_world_balance: max over mean of the ranks' particle
 * counts before and after, of their work in the last step (its time less the time spent in the
 * halo's messages, where a rank waits for the slower ones; a timing: it varies from run to run),
 * whether the cuts moved and how many particles changed rank then. `wait` is the share of the
 * ranks' time in the last step spent in the halo's messages and agreements (their waits summed
 * over their step times summed), `wait_least` that share for the rank that waited least (the
 * slowest: what it spent there is mostly the messages' own cost, not waiting for another rank);
 * timings too. */
typedef struct pbf_mpi_balance {
    double count_before, count_after, time;
    int moved;
    int64_t migrated;
    double wait, wait_least;
} pbf_mpi_balance;

/* Dynamic load balancing, between steps (collective): when the largest rank's particle count is
 * more than `threshold` times the mean (threshold > 1; 0 only measures), the cuts move to the
 * global quantiles of the particles' x, from a histogram of x summed over the ranks (no rank
 * gathers the particles; the cuts land within 1/4096 of the particles' extent of the
 * quantiles, then are spaced at least a halo apart), and every particle goes to the rank that
 * owns its slab. Counts decide, not times, so a run is reproducible. The same status on every
 * rank; on error (out of memory) nothing moved. report may be NULL. A world that was not split
 * reports 1s and does nothing. */
PBF_API pbf_status pbf_mpi_world_balance(pbf_world *world, double threshold,
                                         pbf_mpi_balance *report);

/* Writes one PLY file of the particles of every rank of comm (collective), with MPI-IO: rank 0
 * writes the header for the whole count, every rank its particles p (NULL: none) at its offset,
 * an exclusive prefix sum of the counts (so rank 0's first, then rank 1's, ...; each rank's in
 * its own order). No rank gathers the particles. The file is the format pbf_export_write writes
 * and pbf_export_read reads; it is written under "<path>.tmp.<pid of rank 0>" and renamed by rank 0 when
 * every rank is done. The same status on every rank; the message names the first rank that
 * failed. */
PBF_API pbf_status pbf_mpi_export_ply(const pbf_particles *p, MPI_Comm comm, const char *path,
                                      char *err, size_t err_size);

/* The particles of every rank of a split world gathered to rank 0 (collective), for outputs that
 * need the whole world in one process (a legacy VTK file, a surface mesh, a picture). On rank 0
 * out holds the whole world's particles in id order, as pbf_particles_from_world gives them for
 * a world never split (positions, velocities, densities, ids, and phases where the world has
 * several fluids): the same set whatever the rank count. On the other ranks out is empty (count
 * 0). Whatever out held before is freed first; free it with pbf_particles_free. Rank 0's memory
 * at the peak is 52 bytes per particle of the whole world, 32 (36 with phases) kept in out. The
 * same status on every rank (out of memory on any). A world that was not split: its particles,
 * as pbf_particles_from_world. */
PBF_API pbf_status pbf_mpi_world_gather(const pbf_world *world, pbf_particles *out, char *err,
                                        size_t err_size);

/* The diffuse particles (spray, foam, bubbles) of every rank gathered to rank 0 (collective), for
 * its diffuse_NNNNN.ply and .vtu: rank 0's first, then rank 1's, ..., each rank's in its set's
 * order (one rank: the set of a world never split, as it is). The other ranks' out is empty.
 * Whatever out held is freed first; free it with pbf_diffuse_particles_free. The same status on
 * every rank; PBF_ERR_INVALID_ARG for a world that was not split. */
PBF_API pbf_status pbf_mpi_world_gather_diffuse(const pbf_world *world, pbf_diffuse_particles *out,
                                                char *err, size_t err_size);

/* The whole world's statistics and profile, reduced over the ranks in rank order (the same
 * value on every rank, for any thread count): counts and energies summed, maxima taken, means
 * weighted by the particle counts, stage times the slowest rank's. Collective. */
PBF_API void pbf_mpi_world_totals(const pbf_world *world, pbf_stats *stats, pbf_profile *profile);

#ifdef __cplusplus
}
#endif

#endif /* PBF_MPI_H */
