/* The checkpoints of `pbf run` (see run_checkpoint.h). */
#include "run_checkpoint.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_comm.h"

#define APP_KEY "pbf_run_checkpoint"
#define APP_VERSION 1
#define MANIFEST_KEY "pbf_mpi_checkpoint"
#define MANIFEST_VERSION 1
/* frame, rank: every save has its own names (run_checkpoint.h) */
#define RUN_CHECKPOINT_PIECE "checkpoint_%05d_%04d.pbfck"

char *run_checkpoint_path(const char *dir) {
    size_t n = strlen(dir) + sizeof RUN_CHECKPOINT_NAME + 1;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, RUN_CHECKPOINT_NAME);
    return s;
}

/* dir + "/" + name, malloc'd. */
static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* Removes DIR/name where it exists (the other kind of checkpoint: resume must not take it). */
static int remove_other(const char *dir, const char *name) {
    char *path = join(dir, name);
    int rc = 0;
    if (path == NULL)
        rc = cli_error("out of memory");
    else if (unlink(path) != 0 && errno != ENOENT)
        rc = cli_error("cannot remove '%s': %s", path, strerror(errno));
    free(path);
    return rc;
}

static int save_to(const pbf_world *world, const pbf_scene *scene, int frame, int every,
                   char *path);

static int all_digits(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; ++i)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

int run_checkpoint_is_piece(const char *name, size_t len) {
    static const char pre[] = "checkpoint_", ext[] = ".pbfck";
    const size_t np = sizeof pre - 1, ne = sizeof ext - 1;
    if (len <= np + ne || strncmp(name, pre, np) != 0 || strncmp(name + len - ne, ext, ne) != 0)
        return 0;
    const char *d = name + np;
    size_t n = len - np - ne;
    const char *under = memchr(d, '_', n);
    if (under == NULL) return all_digits(d, n); /* checkpoint_RRRR.pbfck, earlier versions */
    size_t a = (size_t)(under - d);
    return all_digits(d, a) && all_digits(under + 1, n - a - 1);
}

/* Removes the pieces in dir that `keep` (count names, or none) does not name: those of earlier
 * saves, once the manifest names the new ones (or is gone). Temporary files stay: `pbf resume`
 * removes them. */
static int remove_pieces(const char *dir, char names[][64], int count) {
    DIR *d = opendir(dir);
    if (d == NULL) return cli_error("cannot read folder '%s': %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *e = readdir(d); e != NULL && rc == 0; e = readdir(d)) {
        if (!run_checkpoint_is_piece(e->d_name, strlen(e->d_name))) continue;
        int kept = 0;
        for (int k = 0; k < count && !kept; ++k) kept = strcmp(e->d_name, names[k]) == 0;
        if (!kept) rc = remove_other(dir, e->d_name);
    }
    closedir(d);
    return rc;
}

int run_checkpoint_save(const pbf_world *world, const pbf_scene *scene, int frame, int every) {
    int rc = save_to(world, scene, frame, every, run_checkpoint_path(scene->output_dir));
    if (rc == 0) rc = remove_other(scene->output_dir, RUN_CHECKPOINT_MANIFEST);
    /* the manifest first: a kill in between leaves no manifest naming missing pieces */
    return rc != 0 ? rc : remove_pieces(scene->output_dir, NULL, 0);
}

static int write_manifest(const pbf_world *world, const pbf_scene *scene, int frame,
                          const run_comm *comm, long long particles) {
    double *cuts = malloc((size_t)(comm->ranks + 1) * sizeof *cuts);
    cJSON *root = cJSON_CreateObject();
    cJSON *files = cJSON_CreateArray();
    char *text = NULL, *path = join(scene->output_dir, RUN_CHECKPOINT_MANIFEST);
    int rc = 0;
    if (cuts == NULL || root == NULL || files == NULL || path == NULL) {
        rc = cli_error("out of memory writing a checkpoint");
    } else {
        comm->cuts(world, cuts);
        cJSON_AddNumberToObject(root, MANIFEST_KEY, MANIFEST_VERSION);
        cJSON_AddNumberToObject(root, "ranks", comm->ranks);
        cJSON_AddNumberToObject(root, "frame", frame);
        cJSON_AddNumberToObject(root, "time", pbf_world_time(world));
        cJSON_AddNumberToObject(root, "steps", (double)pbf_world_get_profile(world).steps);
        cJSON_AddNumberToObject(root, "particles", (double)particles);
        cJSON_AddItemToObject(root, "cuts", cJSON_CreateDoubleArray(cuts, comm->ranks + 1));
        for (int r = 0; r < comm->ranks; ++r) {
            char name[64];
            snprintf(name, sizeof name, RUN_CHECKPOINT_PIECE, frame, r);
            cJSON_AddItemToArray(files, cJSON_CreateString(name));
        }
        cJSON_AddItemToObject(root, "files", files);
        files = NULL;
        text = cJSON_Print(root);
        char err[PBF_ERROR_SIZE];
        if (text == NULL)
            rc = cli_error("out of memory writing a checkpoint");
        else if (pbf_write_file_atomic(path, text, strlen(text), err, sizeof err) != PBF_OK)
            rc = cli_error("frame %d: checkpoint manifest not written: %s", frame, err);
    }
    cJSON_Delete(files);
    cJSON_Delete(root);
    free(text);
    free(path);
    free(cuts);
    return rc;
}

int run_checkpoint_save_split(const pbf_world *world, const pbf_scene *scene, int frame, int every,
                              const run_comm *comm) {
    char name[64];
    snprintf(name, sizeof name, RUN_CHECKPOINT_PIECE, frame, comm->rank);
    pbf_stats total;
    comm->totals(world, &total, NULL); /* collective */
    int rc = save_to(world, scene, frame, every, join(scene->output_dir, name));
    if (comm->max(rc != 0) != 0) /* a rank that failed printed why */
        return CLI_EXIT_ERROR;
    if (comm->rank == 0) {
        /* every piece is whole: the manifest now names them, then the older saves go */
        rc = write_manifest(world, scene, frame, comm, total.particles);
        if (rc == 0) rc = remove_other(scene->output_dir, RUN_CHECKPOINT_NAME);
        char(*names)[64] = rc == 0 ? malloc((size_t)comm->ranks * sizeof *names) : NULL;
        if (rc == 0 && names == NULL) rc = cli_error("out of memory writing a checkpoint");
        for (int r = 0; rc == 0 && r < comm->ranks; ++r)
            snprintf(names[r], sizeof names[r], RUN_CHECKPOINT_PIECE, frame, r);
        if (rc == 0) rc = remove_pieces(scene->output_dir, names, comm->ranks);
        free(names);
    }
    return comm->max(rc != 0) != 0 ? CLI_EXIT_ERROR : 0;
}

/* Saves to path (malloc'd, freed here; NULL: out of memory). */
static int save_to(const pbf_world *world, const pbf_scene *scene, int frame, int every,
                   char *path) {
    char *scene_json = pbf_scene_to_json(scene);
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
        else if (pbf_scene_parse(scene_text, source, sets, set_count, scene, err, sizeof err) !=
                 PBF_OK)
            rc = cli_error("%s", err);
        free(scene_text);
    }
    cJSON_Delete(root);
    return rc;
}

void run_manifest_free(run_manifest *m) {
    for (int r = 0; m->files != NULL && r < m->ranks; ++r) free(m->files[r]);
    free(m->files);
    free(m->cuts);
    memset(m, 0, sizeof *m);
}

int run_manifest_read(const char *dir, run_manifest *m) {
    memset(m, 0, sizeof *m);
    char *path = join(dir, RUN_CHECKPOINT_MANIFEST);
    if (path == NULL) return cli_error("out of memory");
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int absent = errno == ENOENT;
        int rc = absent ? -1 : cli_error("cannot read '%s': %s", path, strerror(errno));
        free(path);
        return rc;
    }
    char *text = malloc(1 << 20);
    size_t n = text != NULL ? fread(text, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    cJSON *root = text != NULL ? cJSON_ParseWithLength(text, n) : NULL;
    free(text);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(root, MANIFEST_KEY);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(root, "ranks");
    const cJSON *frame = cJSON_GetObjectItemCaseSensitive(root, "frame");
    const cJSON *time = cJSON_GetObjectItemCaseSensitive(root, "time");
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps");
    const cJSON *particles = cJSON_GetObjectItemCaseSensitive(root, "particles");
    const cJSON *cuts = cJSON_GetObjectItemCaseSensitive(root, "cuts");
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(root, "files");
    int rc = 0;
    if (!cJSON_IsNumber(key) || key->valuedouble != MANIFEST_VERSION) {
        rc = cli_error("%s: not a checkpoint manifest of version %d ('%s')", path, MANIFEST_VERSION,
                       MANIFEST_KEY);
    } else if (!cJSON_IsNumber(ranks) || ranks->valuedouble < 1 || ranks->valuedouble > 65536 ||
               !cJSON_IsNumber(frame) || !cJSON_IsNumber(time) || !cJSON_IsNumber(steps) ||
               !cJSON_IsNumber(particles) || !cJSON_IsArray(cuts) || !cJSON_IsArray(files) ||
               cJSON_GetArraySize(cuts) != ranks->valueint + 1 ||
               cJSON_GetArraySize(files) != ranks->valueint) {
        rc = cli_error("%s: expected ranks (1 to 65536), frame, time, steps, particles, cuts "
                       "(ranks + 1 numbers) and files (ranks names)",
                       path);
    } else {
        m->ranks = ranks->valueint;
        m->frame = frame->valueint;
        m->time = time->valuedouble;
        m->steps = (long long)steps->valuedouble;
        m->particles = (long long)particles->valuedouble;
        m->cuts = malloc((size_t)(m->ranks + 1) * sizeof *m->cuts);
        m->files = calloc((size_t)m->ranks, sizeof *m->files);
        if (m->cuts == NULL || m->files == NULL) rc = cli_error("out of memory");
        for (int k = 0; rc == 0 && k <= m->ranks; ++k) {
            const cJSON *c = cJSON_GetArrayItem(cuts, k);
            if (!cJSON_IsNumber(c))
                rc = cli_error("%s: cuts[%d] is not a number", path, k);
            else
                m->cuts[k] = c->valuedouble;
        }
        for (int r = 0; rc == 0 && r < m->ranks; ++r) {
            const cJSON *name = cJSON_GetArrayItem(files, r);
            if (!cJSON_IsString(name) || strchr(name->valuestring, '/') != NULL)
                rc = cli_error("%s: files[%d] is not a file name in the folder", path, r);
            else if ((m->files[r] = join(dir, name->valuestring)) == NULL)
                rc = cli_error("out of memory");
        }
    }
    cJSON_Delete(root);
    free(path);
    if (rc != 0) run_manifest_free(m);
    return rc;
}
