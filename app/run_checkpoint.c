/* The checkpoints of `pbf run` (see run_checkpoint.h). */
#include "run_checkpoint.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define APP_KEY "pbf_run_checkpoint"
#define APP_VERSION 1

char *run_checkpoint_path(const char *dir) {
    size_t n = strlen(dir) + sizeof RUN_CHECKPOINT_NAME + 1;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, RUN_CHECKPOINT_NAME);
    return s;
}

int run_checkpoint_save(const pbf_world *world, const pbf_scene *scene, int frame, int every) {
    char *scene_json = pbf_scene_to_json(scene);
    char *path = run_checkpoint_path(scene->output_dir);
    size_t size = scene_json != NULL ? strlen(scene_json) + 128 : 0;
    char *app = scene_json != NULL ? malloc(size) : NULL;
    int rc = 0;
    if (scene_json == NULL || path == NULL || app == NULL) {
        rc = cli_error("out of memory writing a checkpoint");
    } else {
        int n = snprintf(app, size,
                         "{\"" APP_KEY "\": %d, \"frame\": %d, \"checkpoint_every\": %d, "
                         "\"scene\": %s}\n",
                         APP_VERSION, frame, every, scene_json);
        char err[PBF_ERROR_SIZE];
        if (pbf_checkpoint_save(world, path, app, (size_t)n, err, sizeof err) != PBF_OK)
            rc = cli_error("frame %d: checkpoint not written: %s", frame, err);
    }
    free(scene_json);
    free(path);
    free(app);
    return rc;
}

int run_checkpoint_read(const pbf_checkpoint *ck, const char *path, const char *const *sets,
                        int set_count, pbf_scene *scene, int *frame, int *every) {
    size_t size = 0;
    const char *text = pbf_checkpoint_app_data(ck, &size);
    if (text == NULL)
        return cli_error("%s: a checkpoint without the data of `pbf run` (written by another "
                         "program through the library?)",
                         path);
    cJSON *root = cJSON_ParseWithLength(text, size);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(root, APP_KEY);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "frame");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "checkpoint_every");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "scene");
    int rc = 0;
    if (!cJSON_IsNumber(key) || !cJSON_IsNumber(f) || !cJSON_IsNumber(e) || !cJSON_IsObject(s)) {
        rc = cli_error("%s: the checkpoint's run data is not what `pbf run` writes", path);
    } else if (key->valuedouble != APP_VERSION) {
        rc = cli_error("%s: run data version %g, this pbf reads %d", path, key->valuedouble,
                       APP_VERSION);
    } else {
        *frame = (int)f->valuedouble;
        *every = (int)e->valuedouble;
        char *scene_text = cJSON_PrintUnformatted(s);
        char source[1100];
        snprintf(source, sizeof source, "%s (the run's scene)", path);
        char err[PBF_ERROR_SIZE];
        if (scene_text == NULL)
            rc = cli_error("out of memory");
        else if (pbf_scene_parse(scene_text, source, sets, set_count, scene, err,
                                 sizeof err) != PBF_OK)
            rc = cli_error("%s", err);
        free(scene_text);
    }
    cJSON_Delete(root);
    return rc;
}
