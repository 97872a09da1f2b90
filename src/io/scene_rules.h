/* pbf — the scene tables' hooks (scene_rules.c), named by scene_keys.c: computed defaults and
 * checks across keys. Private to src/io. */
#ifndef PBF_IO_SCENE_RULES_H
#define PBF_IO_SCENE_RULES_H

#include "scene_schema.h"

/* Defaults of new structs (scene_table.defaults). */
void scene_defaults(void *scene); /* the whole scene before any key is read */
void scene_block_defaults(void *block);
void scene_collider_defaults(void *collider);
void scene_tool_defaults(void *tool);
void scene_probe_defaults(void *probe);
void scene_mesh_defaults(void *mesh); /* scene_rules_geometry.c from here */

/* The diffuse section (scene_rules.c): written when enabled; its checks across keys. */
int scene_has_diffuse(const void *scene);
pbf_status scene_diffuse_check(const scene_ctx *c, const cJSON *object, const char *path,
                               void *base, int index);

/* Table hooks (scene_hook). */
pbf_status scene_root_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                           int index);
pbf_status scene_domain_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                              int index);
pbf_status scene_fluid_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index);
pbf_status scene_block_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index);
pbf_status scene_camera_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                              int index);
pbf_status scene_output_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index);
pbf_status scene_tool_kinematic_check(const scene_ctx *c, const cJSON *object, const char *path,
                                      void *base, int index);
pbf_status scene_tool_free_check(const scene_ctx *c, const cJSON *object, const char *path,
                                 void *base, int index);
pbf_status scene_tool_path_check(const scene_ctx *c, const cJSON *object, const char *path,
                                 void *base, int index);
pbf_status scene_tool_key_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index);
pbf_status scene_probe_init(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index);
pbf_status scene_probe_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                             int index);

pbf_status scene_mesh_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index);
pbf_status scene_mesh_key_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index);

/* Key readers (scene_key_reader). */
pbf_status scene_mesh_scale(const scene_ctx *c, const scene_key *key, const cJSON *item,
                            const cJSON *parent, const char *path, void *base);
pbf_status scene_mesh_mass(const scene_ctx *c, const scene_key *key, const cJSON *item,
                           const cJSON *parent, const char *path, void *base);
pbf_status scene_tool_density(const scene_ctx *c, const scene_key *key, const cJSON *item,
                              const cJSON *parent, const char *path, void *base);

/* Whether a key is written (scene_key_written). */
int scene_tool_has_path(const void *tool);
int scene_tool_has_no_path(const void *tool);
int scene_has_probes(const void *scene);
int scene_has_meshes(const void *scene);
int scene_mesh_has_keys(const void *mesh);
int scene_mesh_has_no_keys(const void *mesh);
int scene_mesh_has_mass(const void *mesh);
int scene_mesh_has_no_mass(const void *mesh);

/* The flow section's hooks (scene_flow_rules.c). */
void scene_emitter_defaults(void *emitter);
void scene_sink_defaults(void *sink);
pbf_status scene_flow_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index);
pbf_status scene_sink_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index);
pbf_status scene_emitter_check(const scene_ctx *c, const cJSON *object, const char *path,
                               void *base, int index);
int scene_has_flow(const void *scene);
int scene_emitter_stops(const void *emitter);

/* The materials section's hooks (scene_material_rules.c). */
void scene_material_defaults(void *material);
int scene_has_materials(const void *scene);
int scene_block_has_material(const void *block);
int scene_emitter_has_material(const void *emitter);
pbf_status scene_material_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index);
pbf_status scene_material_name(const scene_ctx *c, const scene_key *key, const cJSON *item,
                               const cJSON *parent, const char *path, void *base);
/* Called by scene_fluid_check: the world def the materials give. */
pbf_status scene_materials_apply(const scene_ctx *c, const cJSON *fluid, pbf_scene *s);

#endif /* PBF_IO_SCENE_RULES_H */
