/* pbf — a batch of small worlds stepped together (docs/library.md, "Many small worlds").
 *
 * Dataset generation, reinforcement learning and haptic training step thousands of small scenes.
 * A batch holds `count` independent worlds built from one scene, each with its own parameters
 * (gravity, jitter seed, a few solver and material values, the tool's place), and steps them
 * together: on the CPU, OpenMP threads take whole worlds and each world runs with one thread
 * inside. Since a world gives the same bits for any thread count, every world of a batch ends
 * bit-identical to the same world built from the same scene and parameters and stepped alone.
 *
 *     pbf_batch_params p[256];
 *     for (int i = 0; i < 256; ++i) {
 *         p[i] = pbf_batch_default_params(&scene);
 *         p[i].seed = (uint32_t)i;              // a different jitter in every world
 *         p[i].jitter = 0.2f;
 *         p[i].gravity.x = 0.01f * (float)i;    // a different tilt
 *     }
 *     pbf_world_batch *b = NULL;
 *     char err[PBF_ERROR_SIZE];
 *     if (pbf_world_batch_create(&scene, 256, p, &b, err, sizeof err) != PBF_OK) puts(err);
 *     pbf_world_batch_step(b, 1.0f / 60.0f);
 *     float *x = malloc(sizeof(float) * 3 * 256 * pbf_world_batch_particle_count(b));
 *     pbf_world_batch_get_positions(b, x);       // [world][particle id][xyz]
 *     pbf_world_batch_destroy(b);
 *
 * Every world holds the same particles, so that one [worlds, particles, 3] array holds them
 * all: a scene with emitters or sinks (whose counts would drift apart) is refused. The batch
 * runs on the CPU backend; the GPU batch is not written yet (PBF_ERR_UNSUPPORTED). */
#ifndef PBF_BATCH_H
#define PBF_BATCH_H

#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What may differ between the worlds of a batch. pbf_batch_default_params(scene) holds the
 * scene's own values: a world built with them is the scene's world. */
typedef struct pbf_batch_params {
    pbf_vec3 gravity; /* world.gravity, m/s² */
    /* Added to every block's jitter seed (fluid.blocks[i].seed), wrapping. Default 0. Only
     * blocks with a jitter > 0 draw random numbers: set jitter too. */
    uint32_t seed;
    /* Every block's jitter as a fraction of the spacing, [0, 0.5]; < 0 keeps each block's own.
     * Default -1. */
    float jitter;
    float xsph; /* solver.xsph, [0, 1] */
    float vorticity; /* solver.vorticity, m/s, [0, 10] */
    float viscosity; /* material.viscosity (implicit), m²/s, [0, 100] */
    /* Where the tool is at time 0 (a scene with a tool; ignored without one): tool.position
     * becomes tool_position, and every key of a scripted path is moved by tool_position − the
     * scene's start, pbf_tool_path_position(&scene->tool, 0) (float arithmetic, axis by axis).
     * Default: the scene's start. */
    pbf_vec3 tool_position;
} pbf_batch_params;

typedef struct pbf_world_batch pbf_world_batch;

/* The scene's own values (above). */
PBF_API pbf_batch_params pbf_batch_default_params(const pbf_scene *scene);

/* Builds count worlds, [1, 1000000], world i from the scene with params[i] (params NULL: the
 * scene's own values for all). scene->world.threads is the batch's thread count (0: the OpenMP
 * default); each world runs with 1 thread. The worlds are built one after another through
 * pbf_scene_create_world. Errors (*out NULL, err names the world and the field): a bad count
 * or parameter (PBF_ERR_INVALID_ARG), emitters, sinks or the CUDA backend (PBF_ERR_UNSUPPORTED),
 * anything pbf_scene_create_world reports. */
PBF_API pbf_status pbf_world_batch_create(const pbf_scene *scene, int count,
                                          const pbf_batch_params *params, pbf_world_batch **out,
                                          char *err, size_t err_size);
PBF_API void pbf_world_batch_destroy(pbf_world_batch *batch);

PBF_API int pbf_world_batch_count(const pbf_world_batch *batch);
/* Particles of each world (every world has the same number). */
PBF_API int pbf_world_batch_particle_count(const pbf_world_batch *batch);
/* Message of the last failed call ("" if none), naming the world: "world 3: step 12 ...". */
PBF_API const char *pbf_world_batch_error(const pbf_world_batch *batch);

/* Steps every world that has not failed by dt (pbf_world_step), OpenMP threads across worlds.
 * A world whose step fails (the watchdog: PBF_ERR_UNSTABLE) is marked failed, keeps the state
 * it failed in and is not stepped again until pbf_world_batch_reset; the others step on. Returns
 * PBF_OK when every stepped world stepped, else the status of the first (lowest) world that
 * failed in this call, with "world i: <its message>" in pbf_world_batch_error. A batch whose
 * failed worlds were not reset returns PBF_OK for the rest; pbf_world_batch_status tells. */
PBF_API pbf_status pbf_world_batch_step(pbf_world_batch *batch, float dt);
/* PBF_OK, or the status world i failed with (its message: pbf_world_error of
 * pbf_world_batch_world). */
PBF_API pbf_status pbf_world_batch_status(const pbf_world_batch *batch, int world);
/* Builds world i again from the scene with params (NULL: the ones it has), at time 0: the end
 * of an episode, or a world that failed. On failure the world keeps its old state. */
PBF_API pbf_status pbf_world_batch_reset(pbf_world_batch *batch, int world,
                                         const pbf_batch_params *params);

/* Gather: every world's positions or velocities into out[(w * particles + id) * 3 + k], each
 * world's particles in stable id order (pbf_world_get_positions). out holds
 * 3 * count * particles floats. */
PBF_API void pbf_world_batch_get_positions(const pbf_world_batch *batch, float *out);
PBF_API void pbf_world_batch_get_velocities(const pbf_world_batch *batch, float *out);

/* Scatter: pbf_tool_set_pose of every world, poses[3 * w + k] (the driver's or the agent's
 * action for the next step). PBF_ERR_INVALID_ARG without a tool or with a non-finite pose,
 * naming the world; the worlds before it have their pose. */
PBF_API pbf_status pbf_world_batch_set_tool_poses(pbf_world_batch *batch, const float *poses);
/* Each world's pbf_tool_get_state after the last step (count entries). */
PBF_API void pbf_world_batch_get_tool_states(const pbf_world_batch *batch, pbf_tool_state *out);

/* World i itself, for everything else of the API (stats, hash, probes, exports). The batch owns
 * it: do not destroy it; it is replaced by pbf_world_batch_reset. NULL outside [0, count). */
PBF_API pbf_world *pbf_world_batch_world(pbf_world_batch *batch, int world);
/* The parameters world i was built with (NULL outside [0, count)). */
PBF_API const pbf_batch_params *pbf_world_batch_params(const pbf_world_batch *batch, int world);

#ifdef __cplusplus
}
#endif

#endif /* PBF_BATCH_H */
