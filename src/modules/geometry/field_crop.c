/* Split over MPI ranks (docs/mpi.md, "Mesh solids"), a static mesh's field is held only where
 * this process's particles can reach it: a block of the grid's nodes (kernels.h, pbf_field). A
 * point whose cell lies in the block reads the very bits it would read from the whole grid (the
 * cell and its weights come from the grid's own origin and counts; only the address of the
 * nodes changes), so a run whose particles never sample outside the block is bit for bit the
 * run with the whole field. Two things make sure they do not:
 *   - the split (src/comm/mpi/split.c, balance.c) says where the process's particles are when a
 *     substep begins (its slab widened by the halo, pbf__meshes_keep_region); the block holds
 *     that box widened by a substep's reach and 3 h (a particle's start lies within h of where
 *     it is; 2 h of room for the cuts to move before the block must grow);
 *   - every substep, before anything samples a field, the positions of the process's particles
 *     (owned and ghosts, at the substep's start and predicted) are checked against the block
 *     shrunk by a substep's reach (pbf__meshes_cover_particles); a field whose block falls short
 *     is cropped again, wider, before the sweep.
 * A substep's reach: the watchdog stops a run whose particle ends a substep farther than
 * WATCHDOG_CFL_FACTOR · max(cfl, WATCHDOG_MIN_CFL) · h from where it began (5 h by default),
 * and every position a particle takes in a substep (the sweep's path, the solver's iterates,
 * the collision's push) lies within that of its start; 2 h more are slack. The kernel's
 * support adds nothing: a particle reads a field at its own position (the bake summed the
 * boundary's density over the support). Diffuse particles read the solids too: each lies in its
 * process's slab when it moves (diffuse.c routes them first), well inside the block.
 * A field grows again from its cache file (only the block it needs is read and kept), or, when
 * the file has gone, from a bake with the same parameters (the same floats); a field that could
 * not be cached is never cropped. Kinematic and floating meshes move and keep their whole fields, and so do the static ones of a world
 * with floating bodies: a body's contacts read them wherever it goes (bodies.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "field_crop.h"
#include "geometry_state.h"
#include "rigid.h"
#include "watchdog.h" /* the farthest a particle moves in a substep */

/* How far a particle can get in one substep from where it began, m (see above). */
static double substep_reach(const pbf_world *w) {
    const double cfl = w->def.solver.cfl > WATCHDOG_MIN_CFL ? w->def.solver.cfl : WATCHDOG_MIN_CFL;
    return (WATCHDOG_CFL_FACTOR * cfl + 2.0) * (double)w->params.h;
}

static int croppable(const pbf_geometry *g, const pbf_mesh_body *b) {
    return g->floating == 0 && b->def.motion == PBF_MESH_STATIC && b->cache_dir[0] != '\0';
}

/* The grid's cell of local coordinate x along axis k, as pbf_field_locate finds it (float), not
 * clamped: the caller clamps. */
static int cell_of(const pbf_field *f, int k, float x) {
    const float o[3] = {f->origin.x, f->origin.y, f->origin.z};
    float g = (x - o[k]) * f->inv_cell;
    if (!(g > -1e9f)) return -1000000000;
    if (!(g < 1e9f)) return 1000000000;
    return (int)floorf(g);
}

/* The cells [lo, hi] (per axis, of the whole grid) that the local box a..b touches. */
static void cells_of_box(const pbf_field *f, const double a[3], const double b[3], int lo[3],
                         int hi[3]) {
    const int n[3] = {f->nx, f->ny, f->nz};
    for (int k = 0; k < 3; ++k) {
        int l = cell_of(f, k, (float)a[k]) - 1, h = cell_of(f, k, (float)b[k]) + 1; /* rounding */
        lo[k] = l < 0 ? 0 : l > n[k] - 2 ? n[k] - 2 : l;
        hi[k] = h < 0 ? 0 : h > n[k] - 2 ? n[k] - 2 : h;
    }
}

/* The cells that particles in the world box lo..hi (each bound may be infinite) can reach: the
 * box's corners in the mesh's frame, their box, clamped to the grid. */
static void cells_of_world_box(const pbf_mesh_body *b, const double lo[3], const double hi[3],
                               int clo[3], int chi[3]) {
    const pbf_field *f = &b->field.field;
    const double o[3] = {f->origin.x, f->origin.y, f->origin.z};
    const int n[3] = {f->nx, f->ny, f->nz};
    /* first the box cut to the grid's own box in the world: no infinite corner is turned */
    double glo[3] = {INFINITY, INFINITY, INFINITY}, ghi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int c = 0; c < 8; ++c) {
        double p[3], q[3];
        for (int k = 0; k < 3; ++k) p[k] = o[k] + ((c >> k) & 1) * (n[k] - 1) * (double)f->cell;
        pbf__mat_apply(b->R, p, q);
        for (int k = 0; k < 3; ++k) {
            q[k] += b->position[k];
            glo[k] = fmin(glo[k], q[k]);
            ghi[k] = fmax(ghi[k], q[k]);
        }
    }
    double wlo[3], whi[3];
    for (int k = 0; k < 3; ++k) {
        wlo[k] = fmax(lo[k], glo[k]);
        whi[k] = fmin(hi[k], ghi[k]);
        if (!(wlo[k] <= whi[k])) { /* the box misses the grid: its nearest cell */
            wlo[k] = whi[k] = lo[k] > ghi[k] ? ghi[k] : glo[k];
        }
    }
    double a[3] = {INFINITY, INFINITY, INFINITY}, e[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int c = 0; c < 8; ++c) {
        double p[3], d[3];
        for (int k = 0; k < 3; ++k) p[k] = ((c >> k) & 1 ? whi[k] : wlo[k]) - b->position[k];
        for (int k = 0; k < 3; ++k) /* R^T p */
            d[k] = b->R[k] * p[0] + b->R[3 + k] * p[1] + b->R[6 + k] * p[2];
        for (int k = 0; k < 3; ++k) a[k] = fmin(a[k], d[k]), e[k] = fmax(e[k], d[k]);
    }
    cells_of_box(f, a, e, clo, chi);
}

/* Makes b hold the nodes of cells lo..hi (whole-grid indices): from what it holds when that
 * covers them, else that block read from the cache file (the rest of the file is only checked,
 * not kept), else from a bake of the whole field. */
static pbf_status crop(pbf_world *w, pbf_geometry *g, pbf_mesh_body *b, const int lo[3],
                       const int hi[3]) {
    pbf_field *f = &b->field.field;
    const int n[3] = {f->nx, f->ny, f->nz};
    int want_n[3], whole = 1, inside = 1;
    for (int k = 0; k < 3; ++k) {
        want_n[k] = hi[k] - lo[k] + 2;
        whole &= lo[k] == 0 && want_n[k] == n[k];
        inside &= lo[k] >= f->block_lo[k] && lo[k] + want_n[k] <= f->block_lo[k] + f->block_n[k];
    }
    const int was_cropped = f->block_n[0] != n[0] || f->block_n[1] != n[1] || f->block_n[2] != n[2];
    pbf_baked_field from = b->field, loaded;
    memset(&loaded, 0, sizeof loaded);
    int done = 0; /* loaded is already the block wanted */
    if (!inside) { /* the block from the cache file; else the whole field baked again */
        pbf_field layout = *f;
        layout.node = NULL;
        for (int k = 0; k < 3; ++k) layout.block_lo[k] = 0, layout.block_n[k] = n[k];
        done = pbf__field_cache_load_block(b->cache_dir, b->key, &layout, lo, want_n, &loaded) ==
               PBF_OK;
        if (!done) {
            char why[PBF_ERROR_SIZE];
            pbf_status st = pbf__field_bake(&b->mesh, &b->bake, &loaded, why, sizeof why);
            if (st != PBF_OK) return pbf__fail(w, st, "mesh '%s': %s", b->def.path, why);
        }
        from = loaded;
    }
    pbf_baked_field out = from;
    if (!whole && !done) {
        const size_t records = (size_t)want_n[0] * want_n[1] * want_n[2];
        float *data = malloc(records * PBF_FIELD_STRIDE * sizeof *data);
        if (data == NULL) {
            pbf__baked_field_free(&loaded);
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                             "mesh '%s': out of memory keeping a part of its field", b->def.path);
        }
        const pbf_field *s = &from.field;
        const size_t row = (size_t)want_n[0] * PBF_FIELD_STRIDE;
        for (int z = 0; z < want_n[2]; ++z)
            for (int y = 0; y < want_n[1]; ++y) {
                const size_t src = (((size_t)(lo[2] + z - s->block_lo[2]) * s->block_n[1] +
                                     (size_t)(lo[1] + y - s->block_lo[1])) *
                                        s->block_n[0] +
                                    (size_t)(lo[0] - s->block_lo[0])) *
                                   PBF_FIELD_STRIDE;
                memcpy(data + ((size_t)z * want_n[1] + y) * row, s->node + src, row * sizeof *data);
            }
        out.data = data;
        out.field.node = data;
        out.bytes = records * PBF_FIELD_STRIDE * sizeof *data;
        for (int k = 0; k < 3; ++k) out.field.block_lo[k] = lo[k], out.field.block_n[k] = want_n[k];
        pbf__baked_field_free(&loaded);
    }
    if (out.data != b->field.data) pbf__baked_field_free(&b->field);
    out.seconds = b->info.bake_seconds; /* the run's load or bake, as reported */
    out.from_cache = b->info.from_cache;
    b->field = out;
    b->info.field_bytes = out.bytes;
    g->cropped += !whole - was_cropped; /* the solids point at b->field.field: nothing to sync */
    return PBF_OK;
}

/* The cells lo..hi grown by `room` cells on each side, within the grid. */
static void grow(const pbf_field *f, int lo[3], int hi[3], int room) {
    const int n[3] = {f->nx, f->ny, f->nz};
    for (int k = 0; k < 3; ++k) {
        lo[k] = lo[k] - room < 0 ? 0 : lo[k] - room;
        hi[k] = hi[k] + room > n[k] - 2 ? n[k] - 2 : hi[k] + room;
    }
}

/* The cells the process's particles can reach under the split's box: the box where they are
 * (p) when a substep begins, widened by the guard's reach and h more for x, which lies well
 * within h of p (a substep's move), and 2 h of room for the cuts to move before the field must
 * grow again. */
static void wanted(const pbf_world *w, const pbf_geometry *g, const pbf_mesh_body *b, int with_room,
                   int lo[3], int hi[3]) {
    const double room = substep_reach(w) + (with_room ? 3.0 : 1.0) * (double)w->params.h;
    double a[3], e[3];
    for (int k = 0; k < 3; ++k) a[k] = g->keep_lo[k] - room, e[k] = g->keep_hi[k] + room;
    cells_of_world_box(b, a, e, lo, hi);
}

pbf_status pbf__meshes_keep_region(pbf_world *w, const double lo[3], const double hi[3]) {
    pbf_geometry *g = w->geometry;
    if (g == NULL) return PBF_OK;
    g->keep_set = 1;
    memcpy(g->keep_lo, lo, sizeof g->keep_lo);
    memcpy(g->keep_hi, hi, sizeof g->keep_hi);
    for (int i = 0; i < g->count; ++i) {
        pbf_mesh_body *b = g->body[i];
        const pbf_field *f = &b->field.field;
        if (!croppable(g, b)) { /* whole again if it was cropped (a floating body added since) */
            const int all_lo[3] = {0, 0, 0}, all_hi[3] = {f->nx - 2, f->ny - 2, f->nz - 2};
            pbf_status st =
                f->block_n[0] == f->nx && f->block_n[1] == f->ny && f->block_n[2] == f->nz
                    ? PBF_OK
                    : crop(w, g, b, all_lo, all_hi);
            if (st != PBF_OK) return st;
            continue;
        }
        int nlo[3], nhi[3], clo[3], chi[3];
        wanted(w, g, b, 0, nlo, nhi); /* what must be held */
        wanted(w, g, b, 1, clo, chi); /* what a crop keeps */
        /* what it holds serves unless it falls short or is over twice what a crop keeps */
        double held = 1.0, want = 1.0;
        int covers = 1;
        for (int k = 0; k < 3; ++k) {
            held *= f->block_n[k];
            want *= chi[k] - clo[k] + 2;
            covers &= nlo[k] >= f->block_lo[k] && nhi[k] + 2 <= f->block_lo[k] + f->block_n[k];
        }
        if (covers && held <= 2.0 * want && !(held == (double)f->nx * f->ny * f->nz && want < held))
            continue;
        pbf_status st = crop(w, g, b, clo, chi);
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}

pbf_status pbf__meshes_cover_particles(pbf_world *w, int nt) {
    pbf_geometry *g = w->geometry;
    if (g == NULL || g->cropped == 0) return PBF_OK;
    const int n = w->count;
    const float *x = w->x, *p = w->p;
    for (int i = 0; i < g->count; ++i) {
        pbf_mesh_body *b = g->body[i];
        const pbf_field *f = &b->field.field;
        if (f->block_n[0] == f->nx && f->block_n[1] == f->ny && f->block_n[2] == f->nz) continue;
        pbf_solid s;
        pbf__mesh_body_solid(b, &s);
        float a0 = INFINITY, a1 = INFINITY, a2 = INFINITY, e0 = -INFINITY, e1 = -INFINITY,
              e2 = -INFINITY;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min                            \
                                                                    : a0, a1, a2)                  \
    reduction(max                                                                                  \
              : e0, e1, e2)
        for (int j = 0; j < n; ++j)
            for (int q = 0; q < 2; ++q) {
                pbf_v3 l = pbf_mesh_local(&s, v3_load(q ? p : x, j));
                a0 = fminf(a0, l.x), a1 = fminf(a1, l.y), a2 = fminf(a2, l.z);
                e0 = fmaxf(e0, l.x), e1 = fmaxf(e1, l.y), e2 = fmaxf(e2, l.z);
            }
        if (n == 0) continue;
        const double r = substep_reach(w);
        const double a[3] = {a0 - r, a1 - r, a2 - r}, e[3] = {e0 + r, e1 + r, e2 + r};
        int clo[3], chi[3], short_of = 0;
        cells_of_box(f, a, e, clo, chi);
        for (int k = 0; k < 3; ++k)
            short_of |= clo[k] < f->block_lo[k] || chi[k] + 2 > f->block_lo[k] + f->block_n[k];
        if (!short_of) continue;
        /* the particles' reach and the split's box, with the split's room */
        int wlo[3], whi[3];
        wanted(w, g, b, 1, wlo, whi);
        grow(f, clo, chi, (int)ceil(r / (double)f->cell));
        for (int k = 0; k < 3; ++k) {
            clo[k] = clo[k] < wlo[k] ? clo[k] : wlo[k];
            chi[k] = chi[k] > whi[k] ? chi[k] : whi[k];
        }
        pbf_status st = crop(w, g, b, clo, chi);
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}
