/* One world from the checkpoint pieces of a world split over MPI ranks
 * (include/pbf/checkpoint.h, pbf_checkpoint_create_world_merged): resuming on another rank count,
 * or in one process. The particles are each piece's own; the tool, the meshes with the floating
 * bodies' state and the flow state are every rank's, the same on each (docs/mpi.md): taken from
 * the first piece, checked against the others (checkpoint_pieces.h). */
#include "pbf/checkpoint.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_pieces.h" /* the state every piece holds whole */
#include "diffuse.h" /* the pieces' diffuse particles, appended */
#include "flow_state.h" /* the capacity, lifted while the pieces are appended */
#include "world_state.h"

static pbf_status fail(char *err, size_t err_size, pbf_status st, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err, err_size, fmt, args);
        va_end(args);
    }
    return st;
}

/* Appends the particles of `part` to w: every array that outlives a substep (fields.h,
 * PBF_FIELD_KEPT) copied, the others 0. */
static pbf_status append(pbf_world *w, const pbf_world *part) {
    pbf_status st = pbf__world_grow(w, w->count + part->count);
    if (st != PBF_OK) return st;
    const size_t at = (size_t)w->count, n = (size_t)part->count;
    if (n == 0) return PBF_OK;
#define PBF_FIELD_APPEND(name, type, components, flags, scratch)                                   \
    if ((flags)&PBF_FIELD_KEPT)                                                                    \
        memcpy(w->name + (components)*at, part->name, (components)*n * sizeof(type));              \
    else                                                                                           \
        memset(w->name + (components)*at, 0, (components)*n * sizeof(type));
    PBF_PARTICLE_FIELDS(PBF_FIELD_APPEND) /* fields.h */
#undef PBF_FIELD_APPEND
    w->count += part->count;
    return PBF_OK;
}

PBF_API pbf_status pbf_checkpoint_create_world_merged(const pbf_checkpoint *const *pieces,
                                                      int count, const pbf_world_def *def,
                                                      pbf_world **out, char *err, size_t err_size) {
    if (out != NULL) *out = NULL;
    if (pieces == NULL || count < 1 || out == NULL)
        return fail(err, err_size, PBF_ERR_INVALID_ARG,
                    "pbf_checkpoint_create_world_merged: no pieces, or out is NULL");
    for (int k = 1; k < count; ++k)
        if (pbf_checkpoint_time(pieces[k]) != pbf_checkpoint_time(pieces[0]) ||
            pbf_checkpoint_steps(pieces[k]) != pbf_checkpoint_steps(pieces[0]))
            return fail(err, err_size, PBF_ERR_PARSE,
                        "checkpoint piece %d is at step %lld (t = %.9g s), piece 0 at step %lld "
                        "(t = %.9g s): the pieces are of different saves",
                        k, (long long)pbf_checkpoint_steps(pieces[k]),
                        pbf_checkpoint_time(pieces[k]), (long long)pbf_checkpoint_steps(pieces[0]),
                        pbf_checkpoint_time(pieces[0]));
    pbf_world *w = NULL;
    pbf_status st = pbf_checkpoint_create_world(pieces[0], def, &w, err, err_size);
    if (st != PBF_OK) return st;
    /* flow.capacity bounds each process's particles (docs/mpi.md): the merged world holds them
     * all until it is split again, so the pieces are appended past it */
    const int capacity = w->flow != NULL ? w->flow->capacity : 0;
    if (w->flow != NULL) w->flow->capacity = 0;
    int next_id = w->next_id;
    for (int k = 1; k < count && st == PBF_OK; ++k) {
        char what[160];
        const int differs = pbf__checkpoint_shared_differs(pieces[0], pieces[k], what, sizeof what);
        if (differs != 0) {
            st = differs < 0 ? fail(err, err_size, PBF_ERR_OUT_OF_MEMORY,
                                    "out of memory merging checkpoint pieces")
                             : fail(err, err_size, PBF_ERR_PARSE,
                                    "checkpoint piece %d: %s differs from piece 0's; every rank "
                                    "of a split world holds the same, so the pieces are not of "
                                    "one save",
                                    k, what);
            break;
        }
        pbf_world *part = NULL;
        st = pbf__checkpoint_create_particles(pieces[k], def, &part, err, err_size);
        if (st != PBF_OK) break;
        if (part->next_id > next_id) next_id = part->next_id;
        st = append(w, part);
        /* spray, foam and bubbles: each piece holds those in its slab, every piece the same
         * def, substep counter and whole world's generated count */
        if (st == PBF_OK) st = pbf__diffuse_append(w, part);
        if (st != PBF_OK) fail(err, err_size, st, "out of memory merging checkpoint pieces");
        pbf_world_destroy(part);
    }
    /* every id once: a piece of another save (or a copied piece) would repeat some */
    unsigned char *seen = st == PBF_OK ? calloc((size_t)next_id + 1, 1) : NULL;
    if (st == PBF_OK && seen == NULL)
        st = fail(err, err_size, PBF_ERR_OUT_OF_MEMORY, "out of memory merging checkpoint pieces");
    for (int i = 0; st == PBF_OK && i < w->count; ++i) {
        int32_t id = w->ids[i];
        if (id < 0 || id >= next_id || seen[id])
            st = fail(err, err_size, PBF_ERR_PARSE,
                      "checkpoint pieces: particle id %d is %s: the pieces are not of one save", id,
                      id < 0 || id >= next_id ? "out of range" : "in two pieces");
        else
            seen[id] = 1;
    }
    free(seen);
    if (st != PBF_OK) {
        pbf_world_destroy(w);
        return st;
    }
    w->next_id = next_id;
    if (w->flow != NULL) w->flow->capacity = capacity;
    *out = w;
    return PBF_OK;
}
