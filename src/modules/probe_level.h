/* The level probe (src/modules/probe_level.c): the water level at a point from the interpolated
 * fluid
 * fraction. probes.c reads it for pbf_world_sample_probes. */
#ifndef PBF_PROBE_LEVEL_H
#define PBF_PROBE_LEVEL_H

#include "pbf/probes.h"
#include "world_state.h"

/* Reads one level probe. Collective in a world split over processes. */
pbf_status pbf__probe_level(const pbf_world *w, const pbf_probe_def *p, pbf_probe_sample *s);

#endif
