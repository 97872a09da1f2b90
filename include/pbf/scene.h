/* pbf — scenes: a JSON description of a world, its fluid, its solids, its timing, camera and
 * output (docs/scenes.md). Loading is strict: an unknown key, a wrong type or an out-of-range
 * value is an error that names the file, the JSON path and what was expected. */
#ifndef PBF_SCENE_H
#define PBF_SCENE_H

#include "geometry.h" /* the "meshes" section */
#include "pbf.h"
#include "probes.h" /* the "probes" section */
#include "flow.h" /* the "flow" section: emitters, sinks, capacity */
#include "diffuse.h" /* the "diffuse" section: spray, foam and bubbles */

#ifdef __cplusplus
extern "C" {
#endif

#define PBF_SCENE_MAX_BLOCKS 64
#define PBF_SCENE_MAX_COLLIDERS 64
#define PBF_SCENE_PATH_SIZE 1024
#define PBF_SCENE_MAX_MESHES 16

/* Output formats, a bit set. */
typedef enum pbf_format {
    PBF_FORMAT_NONE = 0,
    PBF_FORMAT_PLY = 1 << 0, /* binary little-endian PLY: Blender, Houdini, splashsurf */
    PBF_FORMAT_VTK = 1 << 1, /* legacy VTK, binary big-endian: ParaView */
    PBF_FORMAT_VTU = 1 << 2 /* XML VTK UnstructuredGrid: ParaView, VTK 9, meshio (+ a .pvd) */
} pbf_format;

/* One fluid of the "materials" section (docs/scenes.md, docs/physics.md "Several fluids"): a name
 * that blocks and emitters use, the library's pbf_phase_def, its surface tension and the colour
 * the renderer gives it. */
#define PBF_SCENE_MATERIAL_NAME_SIZE 32
typedef struct pbf_scene_material {
    char name[PBF_SCENE_MATERIAL_NAME_SIZE];
    pbf_phase_def phase; /* rest density, viscosity (XSPH c), gravity scale */
    float surface_tension; /* N/m; every material of a scene has the same (for now) */
    pbf_vec3 absorption; /* Beer–Lambert coefficients, 1/m, RGB: the renderer's tint */
} pbf_scene_material;

typedef struct pbf_camera_def {
    pbf_vec3 position; /* m; default: frames the domain from the front, slightly above */
    pbf_vec3 target; /* m; default: the domain centre */
    float fov; /* vertical field of view in degrees; default 45 */
} pbf_camera_def;

typedef struct pbf_scene {
    char name[128]; /* "name" key, or the file's base name */
    char source[PBF_SCENE_PATH_SIZE]; /* the file it came from, or "<built-in>" */
    pbf_world_def world;
    /* The "materials" section: several fluids. With materials the loader sets world.phases
     * (phase k is materials[k]), world.rest_density (the first material's) and
     * world.material.surface_tension from them. */
    int material_count;
    pbf_scene_material materials[PBF_MAX_PHASES];
    int block_count;
    pbf_block_def blocks[PBF_SCENE_MAX_BLOCKS];
    /* "fluid.settle": seconds each block settles under gravity, held in its own box, before t = 0
     * (a lattice is not water at rest: it collapses into a denser packing when released). The
     * world then starts from the settled positions with the block's velocity. Default 0: none. */
    float settle;
    int collider_count;
    pbf_collider_def colliders[PBF_SCENE_MAX_COLLIDERS];
    /* The "meshes" section (include/pbf/geometry.h): triangle meshes as obstacles, containers,
     * keyframed and floating bodies. A relative file name is taken from the scene file's
     * folder, and kept as an absolute path. */
    int mesh_count;
    pbf_mesh_def meshes[PBF_SCENE_MAX_MESHES];
    float fps; /* frames per second of output; one pbf_world_step per frame. Default 60 */
    int frames; /* frames to simulate. Default 120 */
    pbf_camera_def camera;
    char output_dir[PBF_SCENE_PATH_SIZE]; /* default "out/<name>" */
    unsigned formats; /* pbf_format bits; default PBF_FORMAT_PLY */
    /* The "tool" section (docs/tool.md): a rigid sphere in the fluid. has_tool 0: none. */
    int has_tool;
    pbf_tool_def tool;
    /* The "probes" section (docs/scenes.md, include/pbf/probes.h): water height, front
     * and wall force probes, written to probes.csv next to stats.csv. */
    int probe_count;
    pbf_probe_def probes[PBF_MAX_PROBES];
    /* The "flow" section (include/pbf/flow.h): inlets, outlets and the particle capacity (0:
     * none; with emitters the loader computes one when the key is absent). */
    int emitter_count;
    pbf_emitter_def emitters[PBF_MAX_EMITTERS];
    int sink_count;
    pbf_sink_def sinks[PBF_MAX_SINKS];
    int capacity;
    /* The "diffuse" section (include/pbf/diffuse.h): spray, foam and bubbles; off unless
     * diffuse_enabled. */
    int diffuse_enabled;
    pbf_diffuse_def diffuse;
} pbf_scene;

/* Loads a scene file. overrides are "path=value" strings (the CLI's --set), applied in order to
 * the JSON before validation: "solver.iterations=6", "time.frames=10",
 * "fluid.blocks[0].max=[1,1,1]". The value is JSON; anything that does not parse as JSON is taken
 * as a string. Missing objects along a path are created; an array index must already exist.
 *
 * Returns PBF_OK, or: PBF_ERR_IO (file missing or unreadable), PBF_ERR_PARSE (broken JSON,
 * unknown or duplicate key, wrong type), PBF_ERR_INVALID_ARG (value out of range, inconsistent
 * values, malformed override), PBF_ERR_OUT_OF_MEMORY. err (may be NULL) gets a message naming the
 * file, the JSON path and what was expected, always NUL-terminated and cut to err_size. On
 * failure *out is left unchanged. */
PBF_API pbf_status pbf_scene_load(const char *path, const char *const *overrides,
                                  int override_count, pbf_scene *out, char *err, size_t err_size);
/* The same from JSON text; source names it in messages and gives the default name (its base name
 * without ".json"); NULL is "<string>". */
PBF_API pbf_status pbf_scene_parse(const char *json, const char *source,
                                   const char *const *overrides, int override_count, pbf_scene *out,
                                   char *err, size_t err_size);
/* The built-in default dam break (what `pbf run` runs with no scene): the same scene as
 * scenes/dam_break.json, with source "<built-in>". */
PBF_API pbf_status pbf_scene_default(const char *const *overrides, int override_count,
                                     pbf_scene *out, char *err, size_t err_size);
/* The JSON text of the built-in default scene. */
PBF_API const char *pbf_scene_default_json(void);

/* Creates the world (pbf_world_create) and adds the scene's blocks, colliders and meshes, in
 * order (a mesh is baked, or loaded from the field cache, here), then the flow section
 * (capacity, sinks, emitters). On failure *out is NULL and the world's message is passed
 * through, prefixed with the scene's source (and "fluid.blocks[i]: ", "colliders[i]: ",
 * "meshes[i]: " or "flow.emitters[i]: " ... when adding one failed). */
PBF_API pbf_status pbf_scene_create_world(const pbf_scene *scene, pbf_world **out, char *err,
                                          size_t err_size);
/* Particles the scene's blocks will hold: the sum of pbf_block_particle_count. */
PBF_API int64_t pbf_scene_particle_count(const pbf_scene *scene);
/* The features the scene's world will use (include/pbf/features.h), as bits 1u << feature:
 * what pbf_world_features reads from the world once the scene has built it. */
PBF_API uint32_t pbf_scene_features(const pbf_scene *scene);
/* Checks beyond the loader's ranges (docs/robustness.md): values each legal that
 * together cannot give a useful simulation. Returns PBF_ERR_INVALID_ARG, with err naming the
 * fields, for a time step in which gravity alone moves a particle more than the kernel radius.
 * Warnings (the run can go on): a time step too coarse for the fastest expected particle,
 * particles that start inside a collider, overlapping blocks. They are written one per line
 * ("SOURCE: message naming the JSON path") into warnings (may be NULL), and counted in
 * *warning_count (may be NULL). `pbf run`, `pbf info` and `pbf resume` call it. */
PBF_API pbf_status pbf_scene_check(const pbf_scene *scene, char *warnings, size_t warnings_size,
                                   int *warning_count, char *err, size_t err_size);
/* Every parameter after defaults, as pretty JSON that loads back to the same scene (source aside):
 * floats are written with the fewest digits that read back as the same float. Returns a malloc'd
 * string (free it), or NULL when out of memory or scene is NULL. */
PBF_API char *pbf_scene_to_json(const pbf_scene *scene);

/* ---------------------------------------------------------------------------------------------
 * The schema: every key the loader knows, with its type, unit, default, range and meaning, for
 * help texts, editors and bindings. `pbf info --scene-keys` prints it as the key tables of
 * docs/scenes.md. */
typedef struct pbf_scene_key_info {
    /* The reference table that lists it (a heading of docs/scenes.md): "top" for the top-level
     * keys, else a section or a list of objects: "domain", "fluid", "fluid.blocks", "tool", ... */
    char table[32];
    /* JSON path: "solver.scorr.k"; "fluid.blocks[i].min" for every element of a list;
     * "domain.walls.W.period" for each of several objects of one kind. */
    char path[96];
    /* Typed objects (colliders, probes, the tool): the types it belongs to, "sphere, capsule";
     * "" when it belongs to every type. */
    char only[64];
    /* "number", "integer", "boolean", "[x, y, z]", "string", "array of strings", "object" or
     * "array of objects". */
    const char *type;
    const char *unit; /* SI, as in messages: "m", "kg/m^3"; "" when dimensionless */
    char default_value[96]; /* the default as JSON text: 0.01, [0, -9.81, 0], "list"; or "" */
    const char *default_note; /* the default in words where it is computed or there is none
                                  ("the domain centre", "required"), else "" */
    char range[96]; /* "(0, 10]", ">= 0", "[1, 1000]", "finite", "at most 64", ... */
    const char *doc; /* what it does, one line; "" for none */
} pbf_scene_key_info;

/* Writes the first max keys (in schema order: by table, in the order keys are read and written)
 * to keys (NULL when max is 0) and returns how many keys there are in all, or -1 when out of
 * memory. */
PBF_API int pbf_scene_keys(pbf_scene_key_info *keys, int max);

#ifdef __cplusplus
}
#endif

#endif /* PBF_SCENE_H */
