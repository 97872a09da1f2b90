/* pbf — every scene key, one line each: the scene schema (docs/scenes.md).
 *
 * These tables are the one place a scene key is described. The loader reads JSON through them
 * (types, ranges, unknown keys with "did you mean"), pbf_scene_to_json writes through them in
 * this order, and pbf_scene_keys lists them for `pbf info --scene-keys`, which generates the key
 * tables of docs/scenes.md (the scene_docs test fails when the two disagree).
 *
 * Adding a key to a section:
 *   1. the field in its def struct, with its default in the pbf_default_*_def function (or in
 *      scene_defaults, scene_rules.c, for pbf_scene's own fields);
 *   2. one line in the section's table below: name, struct, field, range, unit, one line of
 *      documentation (KEY_FLOAT, KEY_INT, KEY_VEC3, KEY_BOOL, KEY_CHOICE, ... in scene_schema.h);
 *   3. `bash scripts/scene_docs.sh` to regenerate the tables of docs/scenes.md.
 * A default that depends on other keys, or a check across keys, is a hook in scene_rules.c named
 * by the table (.init before the keys are read, .check after).
 *
 * Adding a section:
 *   1. its fields in pbf_scene (include/pbf/scene.h): a struct, or an array and a count for a list
 *      of objects (meshes[PBF_SCENE_MAX_MESHES] + mesh_count), or a struct and a has_ flag for
 *      an optional object;
 *   2. its keys' table below, with .own_doc_table = 1, and .defaults for a list element or an
 *      optional object (a function filling it from pbf_default_*_def); typed objects (a "type"
 *      picks the other keys) are one table per type, listed in .variants, like the colliders;
 *   3. one line in ROOT_KEYS (KEY_SECTION, KEY_LIST or KEY_OPTIONAL), where it is read in order:
 *      after the sections its hooks look at;
 *   4. a pair of markers `<!-- scene-keys NAME -->` `<!-- /scene-keys -->` in docs/scenes.md with
 *      some prose around them, then `bash scripts/scene_docs.sh`;
 *   5. what the world does with it in pbf_scene_create_world (scene.c).
 *
 * Units are those of the messages ("kg/m^3"); ranges follow the documented ranges in pbf.h (the
 * world checks them again, but only the scene knows the JSON path to report). A key that sets a
 * member of the world def takes what the member's row of src/core/def_fields.h takes, written
 * here as the decimals of the messages (0.9, where the row has the float 0.9f):
 * tests/test_scene_def_ranges.c compares the two. */
#include <limits.h>

#include "pbf/probes.h"
#include "scene_rules.h"

static int not_written(const void *base) {
    (void)base;
    return 0;
}

/* ---- domain ------------------------------------------------------------------------------- */

static const scene_key WALL_KEYS[] = {
    KEY_FLOAT("amplitude", pbf_wall_motion, amplitude, AT_LEAST(0.0), "m",
              "how far the wall moves from its rest coordinate, along its own axis; 0: static"),
    KEY_FLOAT("period", pbf_wall_motion, period, ABOVE(0.0), "s", "period of the motion"),
    KEY_FLOAT("phase", pbf_wall_motion, phase, ANY_VALUE, "rad", "phase of the motion at t = 0"),
};
static const scene_table WALL_TABLE = {TABLE(WALL_KEYS)};

/* Indexed by pbf_wall. */
static const scene_key WALLS_KEYS[] = {
    KEY_OBJECT("x_min", pbf_scene, world.wall_motion[PBF_WALL_X_MIN], WALL_TABLE, NULL),
    KEY_OBJECT("x_max", pbf_scene, world.wall_motion[PBF_WALL_X_MAX], WALL_TABLE, NULL),
    KEY_OBJECT("y_min", pbf_scene, world.wall_motion[PBF_WALL_Y_MIN], WALL_TABLE, NULL),
    KEY_OBJECT("y_max", pbf_scene, world.wall_motion[PBF_WALL_Y_MAX], WALL_TABLE, NULL),
    KEY_OBJECT("z_min", pbf_scene, world.wall_motion[PBF_WALL_Z_MIN], WALL_TABLE, NULL),
    KEY_OBJECT("z_max", pbf_scene, world.wall_motion[PBF_WALL_Z_MAX], WALL_TABLE, NULL),
};
_Static_assert(PBF_WALL_COUNT == 6, "WALLS_KEYS lists six walls");
static const scene_table WALLS_TABLE = {TABLE(WALLS_KEYS), .each = "W"};

static const scene_key DOMAIN_KEYS[] = {
    KEY_VEC3("min", pbf_scene, world.domain_min, ANY_VALUE, "m",
             "the box's lower corner at rest; below max on every axis"),
    KEY_VEC3("max", pbf_scene, world.domain_max, ANY_VALUE, "m",
             "the box's upper corner at rest; above min on every axis"),
    KEY_SECTION("walls", WALLS_TABLE,
                "the motion of each wall: offset = amplitude · sin(2π t / period + phase) along "
                "its axis (positive towards +x, +y or +z)",
                .default_doc = "all static"),
    KEY_FLOAT("adhesion", pbf_scene, world.wall_adhesion, CLOSED(0.0, 10.0), "N/m",
              "work of adhesion between the walls and the fluid (Akinci 2013): 2σ wets fully, σ "
              "gives a 90° contact angle; 0: the walls only push (docs/physics.md)"),
    KEY_FLOAT("friction", pbf_scene, world.wall_friction, CLOSED(0.0, 10.0), "",
              "Coulomb friction coefficient μ of the walls; 0: free-slip (docs/physics.md)"),
    KEY_BOOL("no_slip", pbf_scene, world.wall_no_slip,
             "with fluid.viscosity > 0, the fluid sticks to the walls through its viscosity "
             "(docs/physics.md, \"No-slip walls\"); false: the walls slip"),
    KEY_FLOAT("clearance", pbf_scene, world.wall_clearance, ABOVE_UP_TO(0.0, 1.0), "r",
              "the closest a particle centre comes to a wall, in particle radii; below 1 for a "
              "solve converged to the constraint, whose walls then hold the fluid through its "
              "density alone (docs/notes/physics_log.md, \"The walls' collision projection\")"),
};
static const scene_table DOMAIN_TABLE = {TABLE(DOMAIN_KEYS), .check = scene_domain_check,
                                         .own_doc_table = 1};

/* ---- materials: several fluids (docs/physics.md, "Several fluids") ------------------------- */

static const scene_key MATERIAL_KEYS[] = {
    KEY_STRING("name", pbf_scene_material, name,
               "the name blocks and emitters give as their 'material'", .required = 1,
               .default_doc = "required"),
    KEY_FLOAT("density", pbf_scene_material, phase.density, ABOVE(0.0), "kg/m^3",
              "rest density ρ0; a particle's mass is ρ0 (2r)^3. Any two materials at most "
              "6:1 apart (the measured range, docs/physics.md)"),
    KEY_FLOAT("xsph", pbf_scene_material, phase.xsph, CLOSED(0.0, 1.0), "",
              "XSPH viscosity c of this fluid (replaces solver.xsph for its particles; the "
              "implicit viscosity is fluid.viscosity, in m^2/s)"),
    KEY_FLOAT("surface_tension", pbf_scene_material, surface_tension, CLOSED(0.0, 10.0), "N/m",
              "surface tension σ as fluid.surface_tension; the same for every material (for now)"),
    KEY_FLOAT("gravity_scale", pbf_scene_material, phase.gravity_scale, CLOSED(-10.0, 10.0), "",
              "its particles feel gravity times this (FleX's buoyancy): 0 floats, < 0 rises"),
    KEY_VEC3("absorption", pbf_scene_material, absorption, CLOSED(0.0, 1000.0), "1/m",
             "Beer–Lambert coefficients (RGB): the colour the renderer tints this fluid with "
             "(docs/rendering.md)"),
};
static const scene_table MATERIAL_TABLE = {TABLE(MATERIAL_KEYS),
                                           .defaults = scene_material_defaults,
                                           .check = scene_material_check, .own_doc_table = 1};

/* ---- fluid -------------------------------------------------------------------------------- */

static const scene_key BLOCK_KEYS[] = {
    KEY_VEC3("min", pbf_block_def, min, ANY_VALUE, "m",
             "the box's lower corner; below max, inside the domain"),
    KEY_VEC3("max", pbf_block_def, max, ANY_VALUE, "m",
             "the box's upper corner; above min, inside the domain"),
    KEY_VEC3("velocity", pbf_block_def, velocity, ANY_VALUE, "m/s",
             "initial velocity of its particles"),
    KEY_FLOAT("jitter", pbf_block_def, jitter, CLOSED(0.0, 0.5), "",
              "random offset of each particle, uniform in ±jitter/2 of the spacing per axis"),
    KEY_UINT32("seed", pbf_block_def, seed, CLOSED(0.0, 4294967295.0),
               "seed of the jitter's random generator"),
    KEY_INT("material", pbf_block_def, phase, CLOSED(0.0, PBF_MAX_PHASES - 1),
            "the name of its particles' material (one of 'materials'; or its index)",
            .default_doc = "the first material", .read = scene_material_name,
            .written = scene_block_has_material),
};
static const scene_table BLOCK_TABLE = {TABLE(BLOCK_KEYS), .defaults = scene_block_defaults,
                                        .check = scene_block_check, .own_doc_table = 1};

static const char *const KERNEL_NAMES[] = {"paper", "wendland"};

/* "blocks" absent: one default block (scene_fluid_check). */
static const scene_key FLUID_KEYS[] = {
    KEY_FLOAT("particle_radius", pbf_scene, world.particle_radius, ABOVE_UP_TO(0.0, 10.0), "m",
              "particle radius r; the rest spacing is 2r"),
    KEY_FLOAT("kernel_scale", pbf_scene, world.kernel_scale, CLOSED(2.5, 8.0), "",
              "kernel support h as a multiple of r (h = 4r: about 33 neighbours)"),
    KEY_CHOICE("kernel", pbf_scene, world.kernel, KERNEL_NAMES,
               "the density kernel pair: \"paper\", poly6 with the spiky gradient (Macklin & "
               "Müller 2013), or \"wendland\", Wendland C2 with its own gradient, a fluid that "
               "stays at rest under a converged solve (with kernel_scale 5 and plain Jacobi; "
               "docs/physics.md, \"The Wendland C2 pair\")"),
    KEY_FLOAT("kernel_core", pbf_scene, world.kernel_core, HALF_OPEN(0.0, 1.0), "2r",
              "the Wendland pair only: between particles closer than kernel_core times the rest "
              "spacing 2r the gradient rises as they meet (to 4 times its value there at r = 0) "
              "instead of falling to zero, so that pairs pushed together part; 0: Wendland's "
              "exact gradient (docs/physics.md, \"Pairing in the Wendland fluid\")"),
    KEY_FLOAT("rest_density", pbf_scene, world.rest_density, ABOVE(0.0), "kg/m^3",
              "rest density ρ0"),
    KEY_FLOAT("surface_tension", pbf_scene, world.material.surface_tension, CLOSED(0.0, 10.0),
              "N/m",
              "surface tension σ (Akinci 2013's cohesion and curvature terms; water 0.0728); 0: "
              "off (docs/physics.md)"),
    KEY_FLOAT("viscosity", pbf_scene, world.material.viscosity, CLOSED(0.0, 100.0), "m^2/s",
              "kinematic viscosity ν, solved implicitly (Weiler 2018; water 1e-6, honey about "
              "1e-2); adds to solver.xsph; 0: off (docs/physics.md)"),
    KEY_INT("viscosity_iterations", pbf_scene, world.material.viscosity_iterations,
            CLOSED(1.0, 10000.0),
            "most conjugate-gradient iterations of the viscosity solve per substep"),
    KEY_FLOAT("viscosity_tolerance", pbf_scene, world.material.viscosity_tolerance, OPEN(0.0, 1.0),
              "", "the viscosity solve stops at a residual of this fraction of |v|"),
    KEY_FLOAT("surface_drag", pbf_scene, world.material.surface_drag, CLOSED(0.0, 1000.0), "1/s",
              "drag of the air at rest on particles at the free surface (FleX's drag): dv/dt = "
              "−c s v, s in [0, 1] from the neighbour count; 0: off (docs/physics.md)"),
    KEY_FLOAT("settle", pbf_scene, settle, CLOSED(0.0, 100.0), "s",
              "each block settles under gravity this long, held in its own box, before t = 0, "
              "so that it starts packed as water at rest; 0: off (starts on the lattice)"),
    KEY_LIST("blocks", pbf_scene, blocks, block_count, CLOSED(1.0, PBF_SCENE_MAX_BLOCKS),
             BLOCK_TABLE, "boxes filled with particles, in order",
             .default_doc = "one block with the defaults of fluid.blocks[i]",
             .too_few = "is empty: a scene needs at least one block of fluid"),
};
static const scene_table FLUID_TABLE = {TABLE(FLUID_KEYS), .check = scene_fluid_check,
                                        .own_doc_table = 1};

/* ---- colliders: one table per type, indexed by pbf_collider_type -------------------------- */

static const char *const COLLIDER_NAMES[] = {"sphere", "box", "capsule"};
#define COLLIDER_TYPE_KEY                                                                          \
    KEY_CHOICE("type", pbf_collider_def, type, COLLIDER_NAMES,                                     \
               "the solid's shape; it decides which other keys are allowed")
#define COLLIDER_CENTER_KEY                                                                        \
    KEY_VEC3("center", pbf_collider_def, center, ANY_VALUE, "m", "the centre")
#define COLLIDER_RADIUS_KEY                                                                        \
    KEY_FLOAT("radius", pbf_collider_def, radius, ABOVE(0.0), "m", "the radius")
#define COLLIDER_MATERIAL_KEYS                                                                     \
    KEY_FLOAT("adhesion", pbf_collider_def, adhesion, CLOSED(0.0, 10.0), "N/m",                    \
              "work of adhesion with the fluid, as domain.adhesion"),                              \
        KEY_FLOAT("friction", pbf_collider_def, friction, CLOSED(0.0, 10.0), "",                   \
                  "Coulomb friction coefficient μ, as domain.friction")
static const scene_key SPHERE_KEYS[] = {COLLIDER_TYPE_KEY, COLLIDER_CENTER_KEY, COLLIDER_RADIUS_KEY,
                                        COLLIDER_MATERIAL_KEYS};
static const scene_key BOX_KEYS[] = {
    COLLIDER_TYPE_KEY,
    COLLIDER_CENTER_KEY,
    KEY_VEC3("half_extents", pbf_collider_def, half_extents, ABOVE(0.0), "m",
             "half sizes along x, y and z (the box is axis-aligned)"),
    COLLIDER_MATERIAL_KEYS,
};
static const scene_key CAPSULE_KEYS[] = {
    COLLIDER_TYPE_KEY,
    KEY_VEC3("a", pbf_collider_def, a, ANY_VALUE, "m", "one end of the axis segment"),
    KEY_VEC3("b", pbf_collider_def, b, ANY_VALUE, "m", "the other end"),
    COLLIDER_RADIUS_KEY,
    COLLIDER_MATERIAL_KEYS,
};
static const scene_table SPHERE_TABLE = {TABLE(SPHERE_KEYS), .what = "for a sphere collider"};
static const scene_table BOX_TABLE = {TABLE(BOX_KEYS), .what = "for a box collider"};
static const scene_table CAPSULE_TABLE = {TABLE(CAPSULE_KEYS), .what = "for a capsule collider"};
static const scene_table *const COLLIDER_VARIANTS[] = {&SPHERE_TABLE, &BOX_TABLE, &CAPSULE_TABLE};
static const scene_table COLLIDER_TABLE = {.variants = COLLIDER_VARIANTS,
                                           .variant_count = COUNT_OF(COLLIDER_VARIANTS),
                                           .defaults = scene_collider_defaults,
                                           .own_doc_table = 1};

/* ---- the tool (docs/tool.md): one table per motion, indexed by pbf_tool_motion ------------ */

static const char *const TOOL_MOTION_NAMES[] = {"kinematic", "free"};
static const char *const TOOL_INTERPOLATION_NAMES[] = {"linear", "smooth"};

static const scene_key TOOL_ADHESION_KEYS[] = {
    KEY_FLOAT("k_tool", pbf_tool_def, adhesion_k_tool, AT_LEAST(0.0), "N/m^3",
              "adhesion coefficient K of the tool (seed 004 eq. 12); the force uses the mean of "
              "k_tool and k_fluid"),
    KEY_FLOAT("k_fluid", pbf_tool_def, adhesion_k_fluid, AT_LEAST(0.0), "N/m^3",
              "adhesion coefficient K of the fluid"),
    KEY_FLOAT("a", pbf_tool_def, adhesion_a, AT_LEAST(0.0), "m",
              "where the adhesion kernel starts, from the sphere's surface"),
    KEY_FLOAT("b", pbf_tool_def, adhesion_b, ABOVE(0.0), "m",
              "where the adhesion kernel ends, from the sphere's surface; above a"),
};
static const scene_table TOOL_ADHESION_TABLE = {TABLE(TOOL_ADHESION_KEYS)};

static const scene_key TOOL_KEY_KEYS[] = {
    KEY_FLOAT("time", pbf_tool_key, time, AT_LEAST(0.0), "s",
              "when the centre is at position; after the previous key's time", .required = 1),
    KEY_VEC3("position", pbf_tool_key, position, ANY_VALUE, "m", "the centre at that time",
             .required = 1),
};
static const scene_table TOOL_KEY_TABLE = {TABLE(TOOL_KEY_KEYS), .check = scene_tool_key_check};

static const scene_key TOOL_PATH_KEYS[] = {
    KEY_CHOICE("interpolation", pbf_tool_def, interpolation, TOOL_INTERPOLATION_NAMES,
               "\"linear\": straight segments at constant speed; \"smooth\": a monotone cubic "
               "through the keys (PCHIP: continuous speed, at rest at the end keys, at turns and "
               "at waits, never past a key)"),
    KEY_LIST("keys", pbf_tool_def, keys, key_count, CLOSED(1.0, PBF_TOOL_MAX_KEYS), TOOL_KEY_TABLE,
             "the centre over time; before the first key the tool waits there, after the last "
             "it stays at the last",
             .required = 1),
};
static const scene_table TOOL_PATH_TABLE = {TABLE(TOOL_PATH_KEYS), .check = scene_tool_path_check};

#define TOOL_MOTION_KEY                                                                            \
    KEY_CHOICE("motion", pbf_tool_def, motion, TOOL_MOTION_NAMES,                                  \
               "\"kinematic\": moved by its path (or pbf_tool_set_pose), not by forces; "          \
               "\"free\": a rigid body under gravity and the fluid's force. It decides which "     \
               "other keys are allowed")
#define TOOL_RADIUS_KEY                                                                            \
    KEY_FLOAT("radius", pbf_tool_def, radius, ABOVE_UP_TO(0.0, 10.0), "m", "the sphere's radius R")
#define TOOL_POSITION_KEY                                                                          \
    KEY_VEC3("position", pbf_tool_def, position, ANY_VALUE, "m",                                   \
             "the centre at the start; a kinematic tool with a path starts at the path's first "   \
             "key instead (giving both is an error)",                                              \
             .written = scene_tool_has_no_path)
#define TOOL_ADHESION_KEY KEY_SECTION("adhesion", TOOL_ADHESION_TABLE, NULL)
#define TOOL_DAMPING_KEY                                                                           \
    KEY_FLOAT("damping", pbf_tool_def, damping, AT_LEAST(0.0), "kg/(m^2 s)",                       \
              "k_damp of seed 004 eq. 14, per contact area (2r)²")

static const scene_key TOOL_KINEMATIC_KEYS[] = {
    TOOL_MOTION_KEY,
    TOOL_RADIUS_KEY,
    TOOL_POSITION_KEY,
    TOOL_ADHESION_KEY,
    TOOL_DAMPING_KEY,
    KEY_SECTION("path", TOOL_PATH_TABLE, "a scripted path", .default_doc = "none: the tool stays",
                .written = scene_tool_has_path),
};
static const scene_key TOOL_FREE_KEYS[] = {
    TOOL_MOTION_KEY,
    TOOL_RADIUS_KEY,
    TOOL_POSITION_KEY,
    KEY_VEC3("velocity", pbf_tool_def, velocity, ANY_VALUE, "m/s", "the initial velocity"),
    KEY_FLOAT("mass", pbf_tool_def, mass, ABOVE(0.0), "kg", "give mass or density, one of them",
              .default_doc = "none"),
    KEY_FLOAT("added_mass", pbf_tool_def, added_mass, CLOSED(0.0, 10.0), "",
              "added-mass coefficient of the stable coupling (docs/tool.md)"),
    TOOL_ADHESION_KEY,
    TOOL_DAMPING_KEY,
    KEY_FLOAT("density", pbf_tool_def, mass, ABOVE(0.0), "kg/m^3",
              "instead of mass: mass = density · (4/3)π R³ (written back as mass)",
              .default_doc = "none", .read = scene_tool_density, .written = not_written),
};
static const scene_table TOOL_KINEMATIC_TABLE = {TABLE(TOOL_KINEMATIC_KEYS),
                                                 .what = "for a kinematic tool",
                                                 .check = scene_tool_kinematic_check};
static const scene_table TOOL_FREE_TABLE = {TABLE(TOOL_FREE_KEYS), .what = "for a free tool",
                                            .check = scene_tool_free_check};
static const scene_table *const TOOL_VARIANTS[] = {&TOOL_KINEMATIC_TABLE, &TOOL_FREE_TABLE};
static const scene_table TOOL_TABLE = {.variants = TOOL_VARIANTS,
                                       .variant_count = COUNT_OF(TOOL_VARIANTS),
                                       .defaults = scene_tool_defaults,
                                       .own_doc_table = 1};

/* ---- solver ------------------------------------------------------------------------------- */

static const char *const NEIGHBOR_MODE_NAMES[] = {"list", "cells"}; /* by pbf_neighbor_mode */
static const char *const BACKEND_NAMES[] = {"cpu", "cuda"}; /* by pbf_backend */

static const scene_key SCORR_KEYS[] = {
    KEY_FLOAT("k", pbf_scene, world.solver.scorr_k, CLOSED(0.0, 1.0), "",
              "strength of the tensile instability correction s_corr"),
    KEY_FLOAT("ratio", pbf_scene, world.solver.scorr_ratio, CLOSED(0.0, 1000.0), "",
              "when > 0, k follows the step: k = ratio g dt^2 / r in each substep; 0: k as given"),
    KEY_INT("n", pbf_scene, world.solver.scorr_n, CLOSED(1.0, 8.0), "exponent of s_corr"),
    KEY_FLOAT("dq", pbf_scene, world.solver.scorr_dq, HALF_OPEN(0.0, 1.0), "h",
              "reference distance Δq of s_corr, as a fraction of h"),
    KEY_FLOAT("reach", pbf_scene, world.solver.scorr_reach, CLOSED(0.1, 1.0), "2r",
              "s_corr acts between particles closer than reach times the rest spacing 2r"),
    KEY_FLOAT("deficit", pbf_scene, world.solver.scorr_deficit, CLOSED(0.0, 1.0), "",
              "s_corr acts below rest density, fully at (1 - deficit) rest density; 0: everywhere"),
    KEY_INT("iterations", pbf_scene, world.solver.scorr_iterations, CLOSED(0.0, 1000.0),
            "s_corr acts in this many first iterations of a substep; 0: in all"),
};
static const scene_table SCORR_TABLE = {TABLE(SCORR_KEYS)};

static const scene_key CHEBYSHEV_KEYS[] = {
    KEY_BOOL("enabled", pbf_scene, world.solver.chebyshev,
             "Chebyshev acceleration of the error-controlled solve (a fixed count stays plain "
             "Jacobi)"),
    KEY_FLOAT("rho", pbf_scene, world.solver.chebyshev_rho, HALF_OPEN(0.0, 1.0), "",
              "spectral radius estimate ρ"),
    KEY_FLOAT("gamma", pbf_scene, world.solver.chebyshev_gamma, ABOVE_UP_TO(0.0, 1.0), "",
              "under-relaxation γ"),
    KEY_INT("delay", pbf_scene, world.solver.chebyshev_delay, CLOSED(0.0, 100.0),
            "plain iterations before the acceleration starts"),
};
static const scene_table CHEBYSHEV_TABLE = {TABLE(CHEBYSHEV_KEYS)};
static const char *const STEP_WEIGHT_NAMES[] = {"plain", "chebyshev"};

static const scene_key SOLVER_KEYS[] = {
    KEY_INT("iterations", pbf_scene, world.solver.iterations, CLOSED(1.0, 1000.0),
            "Jacobi iterations of the density constraint per substep"),
    KEY_FLOAT("relaxation", pbf_scene, world.solver.relaxation, CLOSED(0.0, 100.0), "",
              "constraint relaxation ε as a fraction of Σ|∇C|² at rest; larger is softer and "
              "more stable"),
    KEY_BOOL("unilateral", pbf_scene, world.solver.unilateral,
             "only push particles apart (no clustering at the free surface); false is the "
             "paper's bilateral constraint"),
    KEY_SECTION("scorr", SCORR_TABLE, NULL),
    KEY_FLOAT("vorticity", pbf_scene, world.solver.vorticity, CLOSED(0.0, 10.0), "m/s",
              "vorticity confinement ε"),
    KEY_FLOAT("xsph", pbf_scene, world.solver.xsph, CLOSED(0.0, 1.0), "", "XSPH viscosity c"),
    KEY_FLOAT("impulse_blend", pbf_scene, world.solver.impulse_blend, CLOSED(0.0, 0.9), "",
              "β: the velocity takes (1 − β) of this substep's constraint displacement and β of "
              "the last one's (a trapezoidal mean that keeps oscillations' energy); 0: plain PBF "
              "(docs/physics.md)"),
    KEY_FLOAT("cfl", pbf_scene, world.solver.cfl, CLOSED(0.0, 10.0), "",
              "speed limit |v| ≤ cfl · h / dt_substep; 0: no limit"),
    KEY_FLOAT("target_error", pbf_scene, world.solver.target_error, CLOSED(0.0, 100.0), "%",
              "iterate until the average density error is at most this (then iterations is "
              "unused); 0: off (docs/physics.md)"),
    KEY_INT("min_iterations", pbf_scene, world.solver.min_iterations, CLOSED(0.0, 10000.0),
            "with target_error, at least this many iterations; at most max_iterations"),
    KEY_INT("max_iterations", pbf_scene, world.solver.max_iterations, CLOSED(1.0, 10000.0),
            "with target_error, at most this many iterations"),
    KEY_SECTION("chebyshev", CHEBYSHEV_TABLE, NULL),
    KEY_CHOICE("step_weights", pbf_scene, world.solver.step_weights, STEP_WEIGHT_NAMES,
               "a fixed count of passes: \"plain\" Jacobi, or \"chebyshev\", each pass's "
               "correction weighted by Chebyshev's nodes over the plain step's eigenvalues on the "
               "rest lattice, which damps every lattice mode (docs/physics.md, \"Step weights\")"),
    KEY_CHOICE("neighbor_mode", pbf_scene, world.neighbor_mode, NEIGHBOR_MODE_NAMES,
               "\"list\": a neighbour list per substep; \"cells\": walk the 27 cells"),
    KEY_CHOICE("backend", pbf_scene, world.backend, BACKEND_NAMES,
               "where the solver runs; \"cuda\" is an error at world creation where the build or "
               "the machine has no CUDA"),
    KEY_INT("threads", pbf_scene, world.threads, CLOSED(0.0, 1024.0),
            "OpenMP threads, 0: all cores; results are bit-identical for any count"),
};
static const scene_table SOLVER_TABLE = {TABLE(SOLVER_KEYS), .own_doc_table = 1};

/* ---- time, camera, output ----------------------------------------------------------------- */

static const scene_key TIME_KEYS[] = {
    KEY_FLOAT("fps", pbf_scene, fps, ABOVE(0.0), "",
              "output frames per second; one world step per frame"),
    KEY_INT("frames", pbf_scene, frames, CLOSED(1.0, (double)INT_MAX),
            "frames to simulate (duration = frames / fps)"),
    KEY_INT("substeps", pbf_scene, world.substeps, CLOSED(1.0, 1000.0),
            "solver substeps per frame (dt_substep = 1 / (fps · substeps))"),
};
static const scene_table TIME_TABLE = {TABLE(TIME_KEYS), .own_doc_table = 1};

static const scene_key CAMERA_KEYS[] = {
    KEY_VEC3("position", pbf_scene, camera.position, ANY_VALUE, "m",
             "where the camera is; not equal to target",
             .default_doc = "in front of the target along +z, about 17° above it, far enough "
                            "that the whole domain fits the field of view"),
    KEY_VEC3("target", pbf_scene, camera.target, ANY_VALUE, "m", "the point looked at",
             .default_doc = "the domain centre"),
    KEY_FLOAT("fov", pbf_scene, camera.fov, OPEN(0.0, 180.0), "deg", "vertical field of view"),
};
static const scene_table CAMERA_TABLE = {TABLE(CAMERA_KEYS), .check = scene_camera_check,
                                         .own_doc_table = 1};

static const char *const FORMAT_NAMES[] = {"ply", "vtk", "vtu"}; /* bit i of pbf_format */
static const scene_key OUTPUT_KEYS[] = {
    KEY_STRING("dir", pbf_scene, output_dir, "the run's output folder",
               .default_doc = "\"out/<name>\""),
    KEY_FLAGS("format", pbf_scene, formats, FORMAT_NAMES,
              "particle files per frame: \"ply\" (binary PLY: Blender, Houdini, splashsurf), "
              "\"vtk\" (legacy VTK: ParaView), \"vtu\" (XML VTK with a .pvd time series: ParaView, "
              "VTK 9, meshio); [] writes none; one name alone is accepted too"),
};
static const scene_table OUTPUT_TABLE = {TABLE(OUTPUT_KEYS), .init = scene_output_init,
                                         .own_doc_table = 1};

/* ---- probes (include/pbf/probes.h): one table per type, indexed by pbf_probe_type --------- */

static const char *const PROBE_TYPE_NAMES[] = {"height", "front", "force", "level"};
static const char *const DIRECTION_NAMES[] = {"+x", "-x", "+y", "-y", "+z", "-z"};
#define PROBE_TYPE_KEY                                                                             \
    KEY_CHOICE("type", pbf_probe_def, type, PROBE_TYPE_NAMES,                                      \
               "what it reads; it decides which other keys are allowed")
#define PROBE_NAME_KEY                                                                             \
    KEY_STRING("name", pbf_probe_def, name,                                                        \
               "letters, digits, _, - and .; unique (it names the columns of probes.csv)",         \
               .default_doc = "type and index: \"height0\", \"front1\", …")
#define PROBE_POSITION_KEY                                                                         \
    KEY_VEC3("position", pbf_probe_def, position, ANY_VALUE, "m",                                  \
             "inside the domain. Height: the point whose water height is read, counted from its "  \
             "y (the floor, or an obstacle's top). Force: the patch's centre, on the face")
#define PROBE_MAX_GAP_KEY                                                                          \
    KEY_FLOAT("max_gap", pbf_probe_def, max_gap, AT_LEAST(0.0), "m",                               \
              "a gap between particle surfaces wider than this separates the fluid body from "     \
              "splash",                                                                            \
              .default_doc = "the kernel radius h = kernel_scale · r")
static const scene_key PROBE_HEIGHT_KEYS[] = {
    PROBE_TYPE_KEY,
    PROBE_NAME_KEY,
    PROBE_POSITION_KEY,
    KEY_FLOAT("radius", pbf_probe_def, radius, ABOVE(0.0), "m", "the radius of the column read",
              .default_doc = "2 · fluid.particle_radius"),
    PROBE_MAX_GAP_KEY,
};
static const scene_key PROBE_FRONT_KEYS[] = {
    PROBE_TYPE_KEY,
    PROBE_NAME_KEY,
    KEY_CHOICE("direction", pbf_probe_def, direction, DIRECTION_NAMES, "the way the front moves"),
    PROBE_MAX_GAP_KEY,
    KEY_INT("min_particles", pbf_probe_def, min_particles, CLOSED(1.0, 1000000.0),
            "a slab 2r thick across the front's axis belongs to the fluid body when it holds at "
            "least this many particles"),
};
static const scene_key PROBE_FORCE_KEYS[] = {
    PROBE_TYPE_KEY,
    PROBE_NAME_KEY,
    PROBE_POSITION_KEY,
    KEY_CHOICE("normal", pbf_probe_def, direction, DIRECTION_NAMES,
               "the patch normal, pointing out of the solid into the fluid"),
    KEY_VEC3("size", pbf_probe_def, size, AT_LEAST(0.0), "m",
             "the patch's extent on each axis: > 0 on the two axes across the normal, 0 along it",
             .default_doc = "none: give it"),
};
static const scene_key PROBE_LEVEL_KEYS[] = {
    PROBE_TYPE_KEY,
    PROBE_NAME_KEY,
    PROBE_POSITION_KEY,
    KEY_FLOAT("fraction", pbf_probe_def, fraction, OPEN(0.0, 1.0), "",
              "the interpolated fluid fraction read as the surface (docs/validation.md, Probes)"),
};
static const scene_table PROBE_HEIGHT_TABLE = {
    TABLE(PROBE_HEIGHT_KEYS), .what = "for a height probe", .init = scene_probe_init,
    .check = scene_probe_check};
static const scene_table PROBE_FRONT_TABLE = {TABLE(PROBE_FRONT_KEYS), .what = "for a front probe",
                                              .init = scene_probe_init, .check = scene_probe_check};
static const scene_table PROBE_FORCE_TABLE = {TABLE(PROBE_FORCE_KEYS), .what = "for a force probe",
                                              .init = scene_probe_init, .check = scene_probe_check};
static const scene_table PROBE_LEVEL_TABLE = {TABLE(PROBE_LEVEL_KEYS), .what = "for a level probe",
                                              .init = scene_probe_init, .check = scene_probe_check};
static const scene_table *const PROBE_VARIANTS[] = {&PROBE_HEIGHT_TABLE, &PROBE_FRONT_TABLE,
                                                    &PROBE_FORCE_TABLE, &PROBE_LEVEL_TABLE};
static const scene_table PROBE_TABLE = {.variants = PROBE_VARIANTS,
                                        .variant_count = COUNT_OF(PROBE_VARIANTS),
                                        .defaults = scene_probe_defaults,
                                        .own_doc_table = 1};

/* ---- meshes (include/pbf/geometry.h): one table per motion, indexed by pbf_mesh_motion ------ */

static const char *const MESH_MOTION_NAMES[] = {"static", "kinematic", "floating"};
static const char *const MESH_ROLE_NAMES[] = {"obstacle", "container"};

static const scene_key MESH_KEY_KEYS[] = {
    KEY_FLOAT("time", pbf_mesh_key, time, AT_LEAST(0.0), "s",
              "when the mesh is placed so; after the previous key's time", .required = 1),
    KEY_VEC3("position", pbf_mesh_key, position, ANY_VALUE, "m", "the translation at that time"),
    KEY_VEC3("rotation", pbf_mesh_key, rotation, ANY_VALUE, "deg",
             "the rotation at that time, about x, then y, then z; interpolated per axis, so 720 "
             "turns twice"),
};
static const scene_table MESH_KEY_TABLE = {TABLE(MESH_KEY_KEYS), .check = scene_mesh_key_check};

#define MESH_MOTION_KEY                                                                            \
    KEY_CHOICE("motion", pbf_mesh_def, motion, MESH_MOTION_NAMES,                                  \
               "\"static\"; \"kinematic\": moved by its keys (forces are measured, they do not "   \
               "move it); \"floating\": a rigid body under gravity and the fluid's force. It "     \
               "decides which other keys are allowed")
#define MESH_FILE_KEY                                                                              \
    KEY_STRING("file", pbf_mesh_def, path,                                                         \
               ".obj, .stl (ASCII or binary) or .ply; relative to the scene file's folder",        \
               .required = 1)
#define MESH_SCALE_KEY                                                                             \
    KEY_VEC3("scale", pbf_mesh_def, scale, ABOVE(0.0), "",                                         \
             "scale per axis, applied first (one number scales all three)",                        \
             .read = scene_mesh_scale)
#define MESH_ROTATION_KEY(written_)                                                                \
    KEY_VEC3("rotation", pbf_mesh_def, rotation, ANY_VALUE, "deg",                                 \
             "rotation about x, then y, then z (after the scale)", .written = written_)
#define MESH_POSITION_KEY(written_)                                                                \
    KEY_VEC3("position", pbf_mesh_def, position, ANY_VALUE, "m",                                   \
             "translation (after the rotation): x_world = R (S x_file) + position",                \
             .written = written_)
#define MESH_ROLE_KEY                                                                              \
    KEY_CHOICE(                                                                                    \
        "role", pbf_mesh_def, role, MESH_ROLE_NAMES,                                               \
        "\"obstacle\": the solid is inside the mesh; \"container\": the fluid is (a closed "       \
        "tank; a glass with walls is an obstacle)")
#define MESH_CELL_KEY                                                                              \
    KEY_FLOAT("cell", pbf_mesh_def, cell, AT_LEAST(0.0), "m",                                      \
              "node spacing of its distance field and density map (docs/physics.md); 0: the "      \
              "default",                                                                           \
              .default_doc = "0: 0.75 · fluid.particle_radius")
#define MESH_CACHE_KEY                                                                             \
    KEY_BOOL("cache", pbf_mesh_def, cache,                                                         \
             "keep the baked field in the cache folder ($PBF_CACHE_DIR, $XDG_CACHE_HOME/pbf or "   \
             "~/.cache/pbf): the next run loads it instead of baking")

#define MESH_SINK_KEY                                                                              \
    KEY_BOOL("sink", pbf_mesh_def, sink,                                                           \
             "a sink, not a solid: the particles inside the mesh at the end of a substep are "     \
             "removed (counted as flow.sinks' are); role must be \"obstacle\"")

static const scene_key MESH_STATIC_KEYS[] = {
    MESH_MOTION_KEY,         MESH_FILE_KEY,           MESH_SCALE_KEY,
    MESH_ROTATION_KEY(NULL), MESH_POSITION_KEY(NULL), MESH_ROLE_KEY,
    MESH_CELL_KEY,           MESH_CACHE_KEY,          MESH_SINK_KEY,
};
static const scene_key MESH_KINEMATIC_KEYS[] = {
    MESH_MOTION_KEY,
    MESH_FILE_KEY,
    MESH_SCALE_KEY,
    MESH_ROTATION_KEY(scene_mesh_has_no_keys),
    MESH_POSITION_KEY(scene_mesh_has_no_keys),
    MESH_ROLE_KEY,
    MESH_CELL_KEY,
    MESH_CACHE_KEY,
    KEY_LIST("keys", pbf_mesh_def, keys, key_count, CLOSED(1.0, PBF_MESH_MAX_KEYS), MESH_KEY_TABLE,
             "its placement over time, interpolated linearly; before the first key it waits at "
             "the first, after the last at the last (give these or position and rotation)",
             .default_doc = "none: it stays at position and rotation",
             .written = scene_mesh_has_keys),
    MESH_SINK_KEY,
};
static const scene_key MESH_FLOATING_KEYS[] = {
    MESH_MOTION_KEY,
    MESH_FILE_KEY,
    MESH_SCALE_KEY,
    MESH_ROTATION_KEY(NULL),
    MESH_POSITION_KEY(NULL),
    MESH_CELL_KEY,
    MESH_CACHE_KEY,
    KEY_FLOAT("density", pbf_mesh_def, density, ABOVE(0.0), "kg/m^3",
              "mass = density · the mesh's volume (give density or mass)",
              .written = scene_mesh_has_no_mass),
    KEY_FLOAT("mass", pbf_mesh_def, mass, ABOVE(0.0), "kg", "instead of density",
              .default_doc = "from the density", .read = scene_mesh_mass,
              .written = scene_mesh_has_mass),
    KEY_VEC3("velocity", pbf_mesh_def, velocity, ANY_VALUE, "m/s", "initial velocity"),
    KEY_VEC3("angular_velocity", pbf_mesh_def, angular_velocity, ANY_VALUE, "rad/s",
             "initial angular velocity (world axes)"),
    KEY_FLOAT("added_mass", pbf_mesh_def, added_mass, CLOSED(0.0, 10.0), "",
              "added-mass coefficient of the stable coupling, as the tool's (docs/tool.md)"),
    KEY_FLOAT("restitution", pbf_mesh_def, restitution, CLOSED(0.0, 1.0), "",
              "contact with the other solids and floating bodies: the share of the approach "
              "speed given back (0: no bounce)"),
    KEY_FLOAT("friction", pbf_mesh_def, friction, CLOSED(0.0, 10.0), "",
              "contact with the other solids and floating bodies: Coulomb friction coefficient "
              "(two floating bodies: the mean of theirs)"),
};
static const scene_table MESH_STATIC_TABLE = {TABLE(MESH_STATIC_KEYS), .what = "for a static mesh",
                                              .check = scene_mesh_check};
static const scene_table MESH_KINEMATIC_TABLE = {
    TABLE(MESH_KINEMATIC_KEYS), .what = "for a kinematic mesh", .check = scene_mesh_check};
static const scene_table MESH_FLOATING_TABLE = {
    TABLE(MESH_FLOATING_KEYS), .what = "for a floating mesh", .check = scene_mesh_check};
static const scene_table *const MESH_VARIANTS[] = {&MESH_STATIC_TABLE, &MESH_KINEMATIC_TABLE,
                                                   &MESH_FLOATING_TABLE};
static const scene_table MESH_TABLE = {.variants = MESH_VARIANTS,
                                       .variant_count = COUNT_OF(MESH_VARIANTS),
                                       .defaults = scene_mesh_defaults,
                                       .own_doc_table = 1};

/* ---- flow (include/pbf/flow.h): emitters, one table per shape, sinks, the capacity -------- */

static const char *const EMITTER_SHAPE_NAMES[] = {"disc", "rectangle"}; /* by pbf_emitter_shape */
#define EMITTER_SHAPE_KEY                                                                          \
    KEY_CHOICE("shape", pbf_emitter_def, shape, EMITTER_SHAPE_NAMES,                               \
               "the nozzle's outline; it decides which other keys are allowed")
#define EMITTER_COMMON_KEYS                                                                        \
    KEY_VEC3("position", pbf_emitter_def, position, ANY_VALUE, "m",                                \
             "the nozzle's centre; every nozzle particle inside the domain (at least r from the "  \
             "walls) and outside the colliders"),                                                  \
        KEY_VEC3("direction", pbf_emitter_def, direction, ANY_VALUE, "",                           \
                 "where the fluid goes (normalized; not zero); one kernel radius ahead of the "    \
                 "nozzle must be free fluid space, not a wall or a collider"),                     \
        KEY_FLOAT("speed", pbf_emitter_def, speed, ABOVE_UP_TO(0.0, 1000.0), "m/s",                \
                  "exit speed; volume rate = speed · area"),                                       \
        KEY_FLOAT("start", pbf_emitter_def, start, AT_LEAST(0.0), "s", "when it starts emitting"), \
        KEY_FLOAT("stop", pbf_emitter_def, stop, AT_LEAST(0.0), "s", "when it stops; after start", \
                  .default_doc = "never", .written = scene_emitter_stops),                         \
        KEY_INT("material", pbf_emitter_def, phase, CLOSED(0.0, PBF_MAX_PHASES - 1),               \
                "the name of the material it emits (one of 'materials'; or its index)",            \
                .default_doc = "the first material", .read = scene_material_name,                  \
                .written = scene_emitter_has_material)
static const scene_key EMITTER_DISC_KEYS[] = {
    EMITTER_SHAPE_KEY,
    EMITTER_COMMON_KEYS,
    KEY_FLOAT("radius", pbf_emitter_def, radius, ABOVE(0.0), "m", "the disc's radius"),
};
static const scene_key EMITTER_RECTANGLE_KEYS[] = {
    EMITTER_SHAPE_KEY,
    EMITTER_COMMON_KEYS,
    KEY_FLOAT("width", pbf_emitter_def, width, ABOVE(0.0), "m",
              "size along the horizontal axis across the direction (x for a vertical nozzle)"),
    KEY_FLOAT("height", pbf_emitter_def, height, ABOVE(0.0), "m",
              "size along the third axis (direction × width axis)"),
};
static const scene_table EMITTER_DISC_TABLE = {
    TABLE(EMITTER_DISC_KEYS), .what = "for a disc emitter", .check = scene_emitter_check};
static const scene_table EMITTER_RECTANGLE_TABLE = {
    TABLE(EMITTER_RECTANGLE_KEYS), .what = "for a rectangle emitter", .check = scene_emitter_check};
static const scene_table *const EMITTER_VARIANTS[] = {&EMITTER_DISC_TABLE,
                                                      &EMITTER_RECTANGLE_TABLE};
static const scene_table EMITTER_TABLE = {.variants = EMITTER_VARIANTS,
                                          .variant_count = COUNT_OF(EMITTER_VARIANTS),
                                          .defaults = scene_emitter_defaults,
                                          .own_doc_table = 1};

static const scene_key SINK_KEYS[] = {
    KEY_VEC3("min", pbf_sink_def, min, ANY_VALUE, "m",
             "the box's lower corner; it may lie outside the domain"),
    KEY_VEC3("max", pbf_sink_def, max, ANY_VALUE, "m", "the box's upper corner; above min"),
};
static const scene_table SINK_TABLE = {TABLE(SINK_KEYS), .defaults = scene_sink_defaults,
                                       .check = scene_sink_check, .own_doc_table = 1};

static const scene_key FLOW_KEYS[] = {
    KEY_LIST("emitters", pbf_scene, emitters, emitter_count, CLOSED(0.0, PBF_MAX_EMITTERS),
             EMITTER_TABLE,
             "nozzles that add fluid: a layer each time the last one travelled one pitch (>= 2r)"),
    KEY_LIST("sinks", pbf_scene, sinks, sink_count, CLOSED(0.0, PBF_MAX_SINKS), SINK_TABLE,
             "boxes that remove the particles entering them (an outflow: past a domain face)"),
    KEY_INT("capacity", pbf_scene, capacity, CLOSED(0.0, (double)(INT_MAX / 4)),
            "most particles at once, allocated at the start; a run that fills it stops, its "
            "frames kept. 0: none (the arrays grow)",
            .default_doc = "with emitters: the blocks' particles plus all the emitters add over "
                           "time.frames / time.fps; else 0"),
};
static const scene_table FLOW_TABLE = {TABLE(FLOW_KEYS), .check = scene_flow_check,
                                       .own_doc_table = 1};

/* ---- diffuse (include/pbf/diffuse.h): spray, foam and bubbles ------------------------------ */

static const scene_key DIFFUSE_KEYS[] = {
    KEY_BOOL("enabled", pbf_scene, diffuse_enabled,
             "generate spray, foam and bubbles (Ihmsen 2012; docs/physics.md)"),
    KEY_FLOAT("trapped_air_rate", pbf_scene, diffuse.trapped_air_rate, CLOSED(0.0, 1e6), "1/s",
              "diffuse particles per fluid particle per second at full trapped-air potential"),
    KEY_FLOAT("wave_crest_rate", pbf_scene, diffuse.wave_crest_rate, CLOSED(0.0, 1e6), "1/s",
              "diffuse particles per fluid particle per second at full wave-crest potential"),
    KEY_FLOAT("trapped_air_min", pbf_scene, diffuse.trapped_air_min, AT_LEAST(0.0), "m/s",
              "trapped-air potential (neighbours' velocity difference) where generation starts"),
    KEY_FLOAT("trapped_air_max", pbf_scene, diffuse.trapped_air_max, ABOVE_UP_TO(0.0, 1e6), "m/s",
              "trapped-air potential where it is full; above trapped_air_min"),
    KEY_FLOAT("wave_crest_min", pbf_scene, diffuse.wave_crest_min, AT_LEAST(0.0), "",
              "wave-crest potential (surface curvature of a crest moving along its normal) "
              "where generation starts"),
    KEY_FLOAT("wave_crest_max", pbf_scene, diffuse.wave_crest_max, ABOVE_UP_TO(0.0, 1e6), "",
              "wave-crest potential where it is full; above wave_crest_min"),
    KEY_FLOAT("energy_min", pbf_scene, diffuse.energy_min, AT_LEAST(0.0), "J/kg",
              "kinetic energy per mass |v|²/2 below which a particle spawns nothing"),
    KEY_FLOAT("energy_max", pbf_scene, diffuse.energy_max, ABOVE_UP_TO(0.0, 1e6), "J/kg",
              "kinetic energy per mass of full generation; above energy_min"),
    KEY_FLOAT("lifetime", pbf_scene, diffuse.lifetime, ABOVE_UP_TO(0.0, 1e6), "s",
              "how long a particle lives as foam"),
    KEY_FLOAT("buoyancy", pbf_scene, diffuse.buoyancy, CLOSED(0.0, 100.0), "",
              "a bubble accelerates by −buoyancy · gravity"),
    KEY_FLOAT("drag", pbf_scene, diffuse.drag, CLOSED(0.0, 1e6), "1/s",
              "rate at which a bubble takes the fluid's velocity"),
    KEY_INT("spray_neighbors", pbf_scene, diffuse.spray_neighbors, CLOSED(0.0, 1000.0),
            "fewer fluid neighbours than this: spray (ballistic)"),
    KEY_INT("bubble_neighbors", pbf_scene, diffuse.bubble_neighbors, CLOSED(0.0, 1000.0),
            "more fluid neighbours than this: a bubble; in between: foam"),
    KEY_INT("max_count", pbf_scene, diffuse.max_count, CLOSED(1.0, 1e8),
            "most diffuse particles at once; generation pauses while full"),
};
static const scene_table DIFFUSE_TABLE = {TABLE(DIFFUSE_KEYS), .check = scene_diffuse_check,
                                          .own_doc_table = 1};

/* ---- the root ------------------------------------------------------------------------------
 * Read in this order, so each section's hooks see the ones they depend on: the domain before the
 * blocks that must lie inside it, the name before the output folder named after it, the fluid
 * (r, h) and the colliders before the probes, the time before the flow (its default capacity).
 * Also the order of pbf_scene_to_json. */
static const scene_key ROOT_KEYS[] = {
    KEY_STRING("name", pbf_scene, name, "the scene's name",
               .default_doc = "the file's base name without .json (\"scene\" for JSON text with "
                              "no file)"),
    KEY_SECTION("domain", DOMAIN_TABLE, "the tank: a box whose walls can move"),
    KEY_LIST("materials", pbf_scene, materials, material_count, CLOSED(0.0, PBF_MAX_PHASES),
             MATERIAL_TABLE,
             "several fluids: each block and emitter names its material (docs/physics.md)",
             .default_doc = "none: one fluid (fluid.rest_density, solver.xsph)",
             .written = scene_has_materials),
    KEY_SECTION("fluid", FLUID_TABLE, "the particles and where they start"),
    KEY_VEC3("gravity", pbf_scene, world.gravity, ANY_VALUE, "m/s^2", "external acceleration"),
    KEY_LIST("colliders", pbf_scene, colliders, collider_count,
             CLOSED(0.0, PBF_SCENE_MAX_COLLIDERS), COLLIDER_TABLE,
             "static solids: spheres, boxes, capsules"),
    KEY_LIST("meshes", pbf_scene, meshes, mesh_count, CLOSED(0.0, PBF_SCENE_MAX_MESHES), MESH_TABLE,
             "triangle meshes: obstacles, containers, keyframed and floating bodies "
             "(include/pbf/geometry.h)",
             .written = scene_has_meshes),
    KEY_SECTION("solver", SOLVER_TABLE, "the solver's parameters"),
    KEY_SECTION("time", TIME_TABLE, "frames, frame rate and substeps"),
    KEY_SECTION("camera", CAMERA_TABLE, "for rendered pictures and the viewer"),
    KEY_SECTION("output", OUTPUT_TABLE, "where the run's files go"),
    KEY_OPTIONAL("tool", pbf_scene, tool, has_tool, TOOL_TABLE,
                 "one rigid sphere in the fluid, with the force on it (docs/tool.md)",
                 .default_doc = "none"),
    KEY_LIST("probes", pbf_scene, probes, probe_count, CLOSED(0.0, PBF_MAX_PROBES), PROBE_TABLE,
             "measurements, written to probes.csv (docs/validation.md)",
             .written = scene_has_probes),
    KEY_SECTION("flow", FLOW_TABLE, "inlets, outlets and the particle capacity",
                .default_doc = "none", .written = scene_has_flow),
    KEY_SECTION("diffuse", DIFFUSE_TABLE, "spray, foam and bubbles (docs/physics.md)",
                .default_doc = "off", .written = scene_has_diffuse),
};

const scene_table scene_root_table = {TABLE(ROOT_KEYS), .defaults = scene_defaults,
                                      .init = scene_root_init, .own_doc_table = 1};
