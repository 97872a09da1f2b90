/* Floating bodies (bodies.c): their motion over a substep, their contacts with the other
 * solids, and the points that make those contacts. meshes.c calls these from its hooks. */
#ifndef PBF_GEOMETRY_BODIES_H
#define PBF_GEOMETRY_BODIES_H

#include "geometry_state.h"

/* A floating body's motion over one substep of dt (before the particles move): the
 * end-of-substep pose and velocities from gravity and the last substep's fluid force, stopped by
 * the domain's walls; and, at the substep's end, the force it then felt. */
void pbf__bodies_advance(const pbf_world *w, pbf_mesh_body *b, float dt);
/* After every body has moved, the floating bodies' contacts with the other solids
 * and with each other (include/pbf/geometry.h, "restitution"), serially in mesh order. */
void pbf__bodies_contacts(pbf_world *w, float dt);
/* The contact points of a floating body (b->samples), spacing about `spacing`; 0, or
 * -1 out of memory. */
int pbf__bodies_sample(pbf_mesh_body *b, float spacing);
void pbf__bodies_substep_end(pbf_mesh_body *b);

#endif
