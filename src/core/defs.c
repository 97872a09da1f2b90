/* Default definitions. Every default is documented next to its field in include/pbf/pbf.h. */
#include "pbf/pbf.h"

pbf_solver_def pbf_default_solver_def(void) {
    pbf_solver_def d;
    d.iterations = 4;
    d.relaxation = 0.05f;
    d.unilateral = 1;
    d.scorr_k = 0.1f;
    d.scorr_ratio = 0.0f;
    d.scorr_n = 1;
    d.scorr_dq = 0.2f;
    d.scorr_deficit = 0.05f;
    d.scorr_iterations = 4;
    d.vorticity = 0.02f;
    d.xsph = 0.01f;
    d.impulse_blend = 0.0f;
    d.cfl = 0.5f;
    d.target_error = 0.0f;
    d.min_iterations = 1;
    d.max_iterations = 100;
    d.chebyshev = 1;
    d.chebyshev_rho = 0.99f;
    d.chebyshev_gamma = 0.9f;
    d.chebyshev_delay = 4;
    d.step_weights = PBF_STEP_WEIGHTS_PLAIN;
    return d;
}

pbf_world_def pbf_default_world_def(void) {
    pbf_world_def d;
    d.particle_radius = 0.01f;
    d.kernel_scale = 4.0f;
    d.kernel = PBF_KERNEL_PAPER;
    d.rest_density = 1000.0f;
    d.gravity = (pbf_vec3){0.0f, -9.81f, 0.0f};
    d.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.domain_max = (pbf_vec3){1.0f, 1.0f, 1.0f};
    for (int k = 0; k < PBF_WALL_COUNT; ++k) {
        d.wall_motion[k].amplitude = 0.0f;
        d.wall_motion[k].period = 1.0f;
        d.wall_motion[k].phase = 0.0f;
    }
    d.substeps = 4;
    d.solver = pbf_default_solver_def();
    d.neighbor_mode = PBF_NEIGHBOR_LIST;
    d.backend = PBF_BACKEND_CPU;
    d.threads = 0;
    d.material.surface_tension = 0.0f;
    d.material.viscosity = 0.0f;
    d.material.viscosity_iterations = 100;
    d.material.viscosity_tolerance = 0.001f;
    d.material.surface_drag = 0.0f;
    d.wall_adhesion = 0.0f;
    d.wall_friction = 0.0f;
    d.wall_no_slip = 0;
    d.wall_clearance = 1.0f;
    d.phase_count = 0;
    for (int k = 0; k < PBF_MAX_PHASES; ++k) d.phases[k] = pbf_default_phase_def();
    return d;
}

pbf_phase_def pbf_default_phase_def(void) {
    pbf_phase_def p;
    p.density = 1000.0f;
    p.xsph = 0.01f;
    p.gravity_scale = 1.0f;
    return p;
}

pbf_block_def pbf_default_block_def(void) {
    pbf_block_def b;
    b.min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    b.velocity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    b.jitter = 0.0f;
    b.seed = 1;
    b.phase = 0;
    return b;
}

pbf_collider_def pbf_default_collider_def(void) {
    pbf_collider_def c;
    c.type = PBF_COLLIDER_SPHERE;
    c.center = (pbf_vec3){0.5f, 0.5f, 0.5f};
    c.half_extents = (pbf_vec3){0.1f, 0.1f, 0.1f};
    c.radius = 0.1f;
    c.a = (pbf_vec3){0.4f, 0.5f, 0.5f};
    c.b = (pbf_vec3){0.6f, 0.5f, 0.5f};
    c.adhesion = 0.0f;
    c.friction = 0.0f;
    return c;
}
