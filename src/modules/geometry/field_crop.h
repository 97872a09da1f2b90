/* The part of a static mesh's field a process split over MPI ranks keeps (field_crop.c,
 * docs/mpi.md "Mesh solids"). */
#ifndef PBF_GEOMETRY_FIELD_CROP_H
#define PBF_GEOMETRY_FIELD_CROP_H

#include "world_state.h"

/* Split over MPI ranks (field_crop.c, docs/mpi.md): the world box lo..hi (bounds may be
 * infinite) where this process's particles are when a substep begins; each static mesh's field
 * then keeps only the block they can reach (with room for the cuts to move), grown again from
 * the cache when the box leaves it. Called by the split (src/comm/mpi/) after every change of
 * the slab; a process's own business (no messages): the results are the same bits. */
pbf_status pbf__meshes_keep_region(pbf_world *w, const double lo[3], const double hi[3]);
/* Before anything reads the fields in a substep: crops again, wider, any field whose block
 * falls short of where the particles (x and p) can reach in it. */
pbf_status pbf__meshes_cover_particles(pbf_world *w, int threads);

#endif
