/* The checkpoint reader's part in merging the pieces of a world split over MPI ranks
 * (src/io/checkpoint.c for src/io/checkpoint_merge.c; docs/mpi.md "Checkpoints"). Every rank of
 * a split world holds the tool, the meshes with the floating bodies' state and the flow state
 * (emitters, sinks, the capacity, the next id and the counters) whole and the same, bit for bit:
 * the merged world takes them from the first piece, after checking that every other piece
 * holds the same. */
#ifndef PBF_CHECKPOINT_PIECES_H
#define PBF_CHECKPOINT_PIECES_H

#include <stddef.h>

#include "pbf/checkpoint.h"

/* 0 when a and b hold the same tool, meshes and flow state (as decoded, compared bit for bit);
 * 1 when not, `what` then naming the first part that differs; -1 out of memory. */
int pbf__checkpoint_shared_differs(const pbf_checkpoint *a, const pbf_checkpoint *b, char *what,
                                   size_t what_size);

/* pbf_checkpoint_create_world without the tool, the meshes and the flow state (nor the
 * capacity): the particles, colliders and diffuse particles of one more piece, to append. */
pbf_status pbf__checkpoint_create_particles(const pbf_checkpoint *ck, const pbf_world_def *def,
                                            pbf_world **out, char *err, size_t err_size);

#endif /* PBF_CHECKPOINT_PIECES_H */
