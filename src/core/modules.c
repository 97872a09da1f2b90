/* The simulator's features as modules of the step (module.h), in the order their hooks run at
 * each point of a step. The step and the world walk this list; a new feature adds its module
 * here, and nowhere else in the core. */
#include "module.h"

#include "diffuse.h"
#include "emitter.h"
#include "geometry/meshes.h"
#include "probes.h"
#include "tool.h"
#include "viscosity.h"

const pbf_module *const pbf__modules[] = {
    &pbf__tool_module, /* the tool moves before the bodies; its forces first */
    &pbf__probes_module, /* force patches measure before the meshes take their share */
    &pbf__meshes_module, /* mesh solids and floating bodies */
    &pbf__flow_module, /* emitters and sinks */
    &pbf__viscosity_module, /* the implicit viscosity and surface drag */
    &pbf__diffuse_module, /* spray, foam and bubbles */
};
const int pbf__module_count = (int)(sizeof pbf__modules / sizeof pbf__modules[0]);
