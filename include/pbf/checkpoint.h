/* pbf — checkpoints: the whole state of a world in one file, so that a run can stop (a crash,
 * Ctrl-C, the instability watchdog, a machine that goes away) and go on later with results
 * bit-identical to a run that never stopped.
 *
 *     pbf_checkpoint_save(world, "out/checkpoint.pbfck", app, app_size, err, sizeof err);
 *     ...
 *     pbf_checkpoint *ck = NULL;
 *     if (pbf_checkpoint_open("out/checkpoint.pbfck", &ck, err, sizeof err) != PBF_OK) ...
 *     pbf_world *w = NULL;
 *     pbf_checkpoint_create_world(ck, NULL, &w, err, sizeof err);
 *     pbf_checkpoint_close(ck);
 *
 * What is saved: the world def, the colliders, the time and step counter, the deterministic
 * part of the profile, every particle's position, velocity, density and stable id IN THE
 * SOLVER'S SLOT ORDER (the order decides the order of the neighbour sums, so it is part of the
 * state), the tool when there is one, a hash of the state, and an optional blob of the
 * application's own (the pbf command keeps its scene and frame number there).
 *
 * The file (all integers little-endian, floats IEEE-754, docs/robustness.md has the table):
 *
 *     header   32 bytes: magic "PBFCKPT\n", u32 version, u32 header size (32), u32 section count,
 *              u32 flags (0), u32 reserved (0), u32 CRC-32 of the 28 bytes before it
 *     section  char tag[8], u32 flags, u32 reserved, u64 payload size, payload,
 *              u32 CRC-32 of the tag, flags, reserved, size and payload
 *     ...      (section count sections, then the end of the file exactly)
 *
 * Sections (versions 1 to 5; version 5 added several fluids: the phases to WORLDDEF, each
 * particle's phase byte to PARTICLE and each emitter's phase to FLOW, and an older file reads as
 * one fluid; version 2 added solver.scorr_deficit and scorr_iterations to
 * WORLDDEF, and a version-1 file reads with both 0, the s_corr it ran with; version 3 added
 * material.surface_tension, wall_adhesion and wall_friction to WORLDDEF and adhesion and friction
 * to each COLLIDER, and older files read with them 0, off; version 4 added material.viscosity,
 * viscosity_iterations, viscosity_tolerance and surface_drag to WORLDDEF, and older files read
 * with the viscosity and the drag off): "WORLDDEF", "STATE", "COLLIDER",
 * "PARTICLE" and, when the world has a tool, "TOOL", when it has emitters, sinks or a capacity,
 * "FLOW" (include/pbf/flow.h: the defs, each emitter's carried travel, the counters and the next
 * id; a new required section, so no version bump), when it has meshes, "MESHES" (all required),
 * and "APPDATA" (optional). Extension rule: a later version may add
 * sections. A reader skips a section it does not know unless its flags say PBF_CHECKPOINT_REQUIRED,
 * in which case it refuses the file (the state would be incomplete without it); a change to an
 * existing section's payload bumps the version, and a reader refuses versions newer than its own.
 *
 * Every reader error names the file and says what is wrong: not a checkpoint (a foreign file),
 * a newer format version, a checksum mismatch (a corrupt file, naming the section), a file cut
 * short (naming the section), or a state that fails validation. The library never prints. */
#ifndef PBF_CHECKPOINT_H
#define PBF_CHECKPOINT_H

#include "pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this library writes, and the newest it reads. */
#define PBF_CHECKPOINT_VERSION 12
/* Section flag: a reader that does not know the section must refuse the file. */
#define PBF_CHECKPOINT_REQUIRED 1u

/* Writes the world's whole state to path atomically ("<path>.tmp.<pid>", fsync, rename): if
 * anything fails (disk full, folder not writable) the previous file at path is untouched, no
 * temporary file is left, and err names the path and the reason. app_data (app_size bytes, may
 * be NULL) is stored as is in the optional "APPDATA" section. Call it between steps. */
PBF_API pbf_status pbf_checkpoint_save(const pbf_world *world, const char *path,
                                       const void *app_data, size_t app_size, char *err,
                                       size_t err_size);

/* A checkpoint file read into memory and verified (every checksum, the version, the sections and
 * their sizes). */
typedef struct pbf_checkpoint pbf_checkpoint;

PBF_API pbf_status pbf_checkpoint_open(const char *path, pbf_checkpoint **out, char *err,
                                       size_t err_size);
PBF_API void pbf_checkpoint_close(pbf_checkpoint *ck);

/* The saved world def (valid until close). */
PBF_API const pbf_world_def *pbf_checkpoint_def(const pbf_checkpoint *ck);
/* The world's time in s and its pbf_world_step count at the save. */
PBF_API double pbf_checkpoint_time(const pbf_checkpoint *ck);
PBF_API int64_t pbf_checkpoint_steps(const pbf_checkpoint *ck);
PBF_API int pbf_checkpoint_particle_count(const pbf_checkpoint *ck);
/* 1 when the file is one rank's piece of a world split over MPI ranks (include/pbf/mpi.h): its
 * particles are that rank's, its ids some of the whole world's. Such a piece is written by
 * pbf_checkpoint_save of a split world (with a "PIECE" section, required, holding the whole
 * world's next id); pbf_checkpoint_create_world makes a world of the piece's particles alone,
 * pbf_checkpoint_create_world_merged one of all the pieces. */
PBF_API int pbf_checkpoint_is_piece(const pbf_checkpoint *ck);
/* The application's data (NULL and 0 when none). It is followed by a NUL byte, so text can be
 * used as a string. Valid until close. */
PBF_API const void *pbf_checkpoint_app_data(const pbf_checkpoint *ck, size_t *size);

/* Creates the saved world. def NULL: with the saved def. Otherwise with *def, which may change how
 * the solver runs (solver.*, substeps, neighbor_mode, backend, threads) but not what the
 * particles are: particle_radius, kernel_scale, kernel, rest_density, gravity, the domain and the
 * wall motion must equal the saved ones (an error names the first field that differs). With the
 * saved def (threads aside: results do not depend on them) stepping the new world gives
 * bit-identical results to stepping the saved one. The state hash is checked after the
 * restore. On failure *out is NULL. */
PBF_API pbf_status pbf_checkpoint_create_world(const pbf_checkpoint *ck, const pbf_world_def *def,
                                               pbf_world **out, char *err, size_t err_size);

/* Creates one world holding the particles of all `count` checkpoints (the pieces of a world split
 * over MPI ranks, in rank order; or a single whole checkpoint), as pbf_checkpoint_create_world
 * does for each: the first piece gives the def, colliders, time and profile, the particles
 * follow piece after piece. Every piece must be at the same time and step, and no id may be in
 * two pieces (an error names the pieces). The tool, the meshes (with the floating bodies' state)
 * and the flow state (emitters, sinks, the capacity, the next id and the counters), which every
 * rank of a split world holds whole and the same, are the first piece's: every other piece must
 * hold them bit for bit (PBF_ERR_PARSE naming the piece and the part otherwise). A capacity
 * (flow.capacity) bounds each process's particles: the merged world may hold more; split again
 * (pbf_mpi_world_split) each rank's share must fit it, and in one process its first step that
 * emits is refused. On failure *out is NULL. */
PBF_API pbf_status pbf_checkpoint_create_world_merged(const pbf_checkpoint *const *pieces,
                                                      int count, const pbf_world_def *def,
                                                      pbf_world **out, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_CHECKPOINT_H */
