/* probes.csv of `pbf run` (issue 6; see probe_output.h). */
#include "probe_output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pbf/export.h" /* pbf_write_file_atomic */

struct probe_output {
    char *path;
    FILE *csv;
    int count;
    pbf_probe_sample samples[PBF_MAX_PROBES];
};

static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

int probe_csv_header(char *buf, size_t size, const pbf_probe_def *probes, int count) {
    int n = snprintf(buf, size, "frame,time");
    for (int i = 0; i < count && n >= 0 && (size_t)n < size; ++i) {
        const pbf_probe_def *p = &probes[i];
        if (p->type == PBF_PROBE_FORCE)
            n += snprintf(buf + n, size - (size_t)n, ",%s_N,%s_Pa", p->name, p->name);
        else
            n += snprintf(buf + n, size - (size_t)n, ",%s_m", p->name);
    }
    if (n >= 0 && (size_t)n < size) n += snprintf(buf + n, size - (size_t)n, "\n");
    return n;
}

static void destroy(probe_output *o) {
    if (o == NULL) return;
    if (o->csv != NULL) fclose(o->csv);
    free(o->path);
    free(o);
}

static int make(probe_output **out, const char *dir, const pbf_scene *scene) {
    probe_output *o = calloc(1, sizeof *o);
    if (o != NULL) o->path = join(dir, PROBE_OUTPUT_NAME);
    if (o == NULL || o->path == NULL) {
        destroy(o);
        return cli_error("out of memory");
    }
    o->count = scene->probe_count;
    *out = o;
    return 0;
}

static int open_append(probe_output *o) {
    o->csv = fopen(o->path, "a");
    if (o->csv == NULL) return cli_error("cannot write '%s': %s", o->path, strerror(errno));
    return 0;
}

int probe_output_open(probe_output **out, const char *dir, const pbf_scene *scene) {
    *out = NULL;
    if (scene->probe_count <= 0) { /* no probes: no file, and none left from an earlier run */
        char *path = join(dir, PROBE_OUTPUT_NAME);
        int rc = path != NULL && unlink(path) != 0 && errno != ENOENT
                     ? cli_error("cannot remove '%s' of an earlier run: %s", path, strerror(errno))
                     : 0;
        free(path);
        return rc;
    }
    probe_output *o = NULL;
    if (make(&o, dir, scene) != 0) return 1;
    char header[PBF_MAX_PROBES * 2 * (PBF_PROBE_NAME_SIZE + 5) + 32];
    int n = probe_csv_header(header, sizeof header, scene->probes, scene->probe_count);
    char err[PBF_ERROR_SIZE];
    int rc = pbf_write_file_atomic(o->path, header, (size_t)n, err, sizeof err) == PBF_OK
                 ? open_append(o)
                 : cli_error("%s", err);
    if (rc != 0) {
        destroy(o);
        return rc;
    }
    *out = o;
    return 0;
}

int probe_output_resume(probe_output **out, const char *dir, const pbf_scene *scene, int frame) {
    *out = NULL;
    if (scene->probe_count <= 0) return probe_output_open(out, dir, scene);
    probe_output *o = NULL;
    if (make(&o, dir, scene) != 0) return 1;
    FILE *f = fopen(o->path, "rb");
    if (f == NULL) { /* a folder from before probes.csv existed: start it here */
        destroy(o);
        return probe_output_open(out, dir, scene);
    }
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    while (text != NULL) {
        len += fread(text + len, 1, cap - len - 1, f);
        if (len + 1 < cap) break;
        char *bigger = realloc(text, cap * 2);
        if (bigger == NULL) free(text);
        text = bigger;
        cap *= 2;
    }
    fclose(f);
    if (text == NULL) {
        destroy(o);
        return cli_error("out of memory reading '%s'", PROBE_OUTPUT_NAME);
    }
    text[len] = '\0';
    /* the header, then the rows of frames 0..frame */
    char *end = strchr(text, '\n');
    while (end != NULL) {
        char *row = end + 1, *next = strchr(row, '\n');
        if (next == NULL || !(row[0] >= '0' && row[0] <= '9') || strtol(row, NULL, 10) > frame)
            break;
        end = next;
    }
    char err[PBF_ERROR_SIZE];
    int rc = end == NULL ? cli_error("cannot resume: '%s' has no header", o->path)
             : pbf_write_file_atomic(o->path, text, (size_t)(end + 1 - text), err, sizeof err) !=
                     PBF_OK
                 ? cli_error("%s", err)
                 : open_append(o);
    free(text);
    if (rc != 0) {
        destroy(o);
        return rc;
    }
    *out = o;
    return 0;
}

int probe_output_row(probe_output *o, const pbf_world *world, int frame, char *err,
                     size_t err_size) {
    if (o == NULL) return 0;
    if (pbf_world_probe_count(world) != o->count) {
        snprintf(err, err_size, "the world has %d probes, the scene %d",
                 pbf_world_probe_count(world), o->count);
        return 1;
    }
    if (pbf_world_sample_probes(world, o->samples) != PBF_OK) {
        snprintf(err, err_size, "out of memory sampling the probes");
        return 1;
    }
    const pbf_probe_def *defs = pbf_world_get_probes(world);
    char row[PBF_MAX_PROBES * 2 * 24 + 64];
    int n = snprintf(row, sizeof row, "%d,%.9g", frame, pbf_world_time(world));
    for (int i = 0; i < o->count; ++i) {
        const pbf_probe_sample *s = &o->samples[i];
        if (defs[i].type == PBF_PROBE_FORCE)
            n += snprintf(row + n, sizeof row - (size_t)n, ",%.7g,%.7g", s->value, s->pressure);
        else if (isnan(s->value))
            n += snprintf(row + n, sizeof row - (size_t)n, ",nan");
        else
            n += snprintf(row + n, sizeof row - (size_t)n, ",%.7g", s->value);
    }
    n += snprintf(row + n, sizeof row - (size_t)n, "\n");
    errno = 0;
    /* one fwrite + fflush = one write() call, like stats.csv */
    if (fwrite(row, 1, (size_t)n, o->csv) != (size_t)n || fflush(o->csv) != 0) {
        snprintf(err, err_size, "cannot write '%s': %s", o->path,
                 strerror(errno != 0 ? errno : EIO));
        return 1;
    }
    return 0;
}

void probe_output_close(probe_output *o) { destroy(o); }
