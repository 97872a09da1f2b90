/* probes.csv of `pbf run` (see probe_output.h). */
#include "probe_output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csv_file.h"

struct probe_output {
    csv_file csv;
    int count;
    pbf_probe_sample samples[PBF_MAX_PROBES];
};

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

/* No probes: no file, and none left from an earlier run. */
static int remove_csv(const char *dir) {
    size_t size = strlen(dir) + sizeof PROBE_OUTPUT_NAME + 1;
    char *path = malloc(size);
    if (path == NULL) return cli_error("out of memory");
    snprintf(path, size, "%s/%s", dir, PROBE_OUTPUT_NAME);
    int rc = unlink(path) != 0 && errno != ENOENT
                 ? cli_error("cannot remove '%s' of an earlier run: %s", path, strerror(errno))
                 : 0;
    free(path);
    return rc;
}

/* Opens (resume_frame < 0) or resumes probes.csv. */
static int open_csv(probe_output **out, const char *dir, const pbf_scene *scene, int resume_frame) {
    *out = NULL;
    if (scene->probe_count <= 0) return remove_csv(dir);
    probe_output *o = calloc(1, sizeof *o);
    if (o == NULL) return cli_error("out of memory");
    o->count = scene->probe_count;
    char header[PBF_MAX_PROBES * 2 * (PBF_PROBE_NAME_SIZE + 5) + 32];
    int n = probe_csv_header(header, sizeof header, scene->probes, scene->probe_count);
    int rc = resume_frame < 0 ? csv_file_create(&o->csv, dir, PROBE_OUTPUT_NAME, header, (size_t)n)
                              : csv_file_resume(&o->csv, dir, PROBE_OUTPUT_NAME, resume_frame,
                                                header, (size_t)n);
    if (rc != 0) {
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int probe_output_open(probe_output **out, const char *dir, const pbf_scene *scene) {
    return open_csv(out, dir, scene, -1);
}

int probe_output_resume(probe_output **out, const char *dir, const pbf_scene *scene, int frame) {
    return open_csv(out, dir, scene, frame);
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
    return probe_output_row_sampled(o, world, frame, o->samples, err, err_size);
}

int probe_output_row_sampled(probe_output *o, const pbf_world *world, int frame,
                             const pbf_probe_sample *samples, char *err, size_t err_size) {
    if (o == NULL) return 0;
    if (pbf_world_probe_count(world) != o->count) {
        snprintf(err, err_size, "the world has %d probes, the scene %d",
                 pbf_world_probe_count(world), o->count);
        return 1;
    }
    const pbf_probe_def *defs = pbf_world_get_probes(world);
    char row[PBF_MAX_PROBES * 2 * 24 + 64];
    int n = snprintf(row, sizeof row, "%d,%.9g", frame, pbf_world_time(world));
    for (int i = 0; i < o->count; ++i) {
        const pbf_probe_sample *s = &samples[i];
        if (defs[i].type == PBF_PROBE_FORCE)
            n += snprintf(row + n, sizeof row - (size_t)n, ",%.7g,%.7g", s->value, s->pressure);
        else if (isnan(s->value))
            n += snprintf(row + n, sizeof row - (size_t)n, ",nan");
        else
            n += snprintf(row + n, sizeof row - (size_t)n, ",%.7g", s->value);
    }
    n += snprintf(row + n, sizeof row - (size_t)n, "\n");
    return csv_file_append(&o->csv, row, (size_t)n, err, err_size);
}

void probe_output_close(probe_output *o) {
    if (o == NULL) return;
    csv_file_close(&o->csv);
    free(o);
}
