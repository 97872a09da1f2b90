/* The marching-cubes case table, built at run time from the cube's geometry (mc_table.c).
 *
 * Conventions. Corner c of a cell sits at (c & 1, (c >> 1) & 1, (c >> 2) & 1). Edge e runs
 * along axis a = e / 4 from its base corner, whose coordinate on a is 0 and whose coordinates
 * on u = (a + 1) % 3 and v = (a + 2) % 3 are the bits of e % 4 (u the low bit). Face f = 2a + s
 * holds the corners whose coordinate on axis a is s.
 *
 * An entry is found from the cell's case (bit c set when corner c is inside, φ ≥ iso) and the
 * decisions on its ambiguous faces (bit f set when face f's two inside corners are joined
 * through the face: its bilinear saddle is inside). Triangles name the crossing edge of each
 * vertex (0..11), or an extra vertex 12 + k at the mean of the crossing points in
 * extra_edges[k] (for the few loops no fan can triangulate without a diagonal that two cells
 * could share). */
#ifndef PBF_SURFACE_MC_TABLE_H
#define PBF_SURFACE_MC_TABLE_H

#include <stdint.h>

#define MC_MAX_TRIS 12
#define MC_MAX_EXTRA 4

typedef struct mc_entry {
    uint8_t tri_count;
    uint8_t extra_count;
    uint8_t tris[3 * MC_MAX_TRIS];
    uint16_t extra_edges[MC_MAX_EXTRA]; /* bit e: edge e's crossing point is averaged */
} mc_entry;

typedef struct mc_table {
    uint8_t ambiguous[256]; /* bit f: face f has four crossing points in this case */
    uint8_t face_corners[6][4]; /* the corners of each face, in order around it */
    uint8_t edge_corners[12][2]; /* base and end corner of each edge */
    mc_entry entries[256 * 64]; /* index: case << 6 | (face decisions & ambiguous[case]) */
} mc_table;

/* Fills the table. Returns 0, or -1 if the construction found an inconsistency (a crossing
 * point without exactly one segment in and one out): a programming error the tests catch. */
int mc_table_build(mc_table *t);

#endif
