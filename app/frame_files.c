/* The particle files of a run folder (see frame_files.h). */
#include "frame_files.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int compare_frames(const void *a, const void *b) {
    const frame_file *x = a, *y = b;
    return (x->number > y->number) - (x->number < y->number);
}

int frame_files_list(const char *dir, frame_file **out, int *count) {
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return cli_error("%s: %s", dir, strerror(errno));
    int cap = 0, n = 0, rc = 0;
    frame_file *files = NULL;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        int number = 0, len = 0;
        char ext[8] = "";
        if (sscanf(e->d_name, "frame_%d.%3s%n", &number, ext, &len) != 2 ||
            e->d_name[len] != '\0' || (strcmp(ext, "ply") != 0 && strcmp(ext, "vtk") != 0))
            continue;
        int dup = -1;
        for (int i = 0; i < n; ++i)
            if (files[i].number == number) dup = i;
        if (dup >= 0) {
            if (strcmp(ext, "ply") != 0) continue; /* keep one file per frame, PLY first */
            free(files[dup].path);
            files[dup] = files[--n];
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            frame_file *f = realloc(files, (size_t)cap * sizeof *f);
            if (f == NULL) {
                rc = cli_error("out of memory");
                break;
            }
            files = f;
        }
        size_t len_path = strlen(dir) + strlen(e->d_name) + 2;
        files[n].number = number;
        files[n].path = malloc(len_path);
        if (files[n].path == NULL) {
            rc = cli_error("out of memory");
            break;
        }
        snprintf(files[n].path, len_path, "%s/%s", dir, e->d_name);
        ++n;
    }
    closedir(d);
    if (rc == 0 && n == 0) rc = cli_error("%s: no frame_NNNNN.ply or .vtk files", dir);
    if (rc != 0) {
        for (int i = 0; i < n; ++i) free(files[i].path);
        free(files);
        return rc;
    }
    qsort(files, (size_t)n, sizeof *files, compare_frames);
    *out = files;
    *count = n;
    return 0;
}

float particles_estimate_radius(const pbf_particles *p) {
    int samples = p->count < 256 ? p->count : 256;
    float *d = malloc((size_t)samples * sizeof *d);
    if (d == NULL || p->count < 2) {
        free(d);
        return 0.01f;
    }
    for (int k = 0; k < samples; ++k) {
        int i = (int)((long long)k * p->count / samples);
        const float *a = p->positions + 3 * (size_t)i;
        float best = INFINITY;
        for (int j = 0; j < p->count; ++j) {
            if (j == i) continue;
            const float *b = p->positions + 3 * (size_t)j;
            float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
            float q = dx * dx + dy * dy + dz * dz;
            if (q < best && q > 0.0f) best = q;
        }
        d[k] = sqrtf(best);
    }
    /* insertion sort: a few hundred values */
    for (int i = 1; i < samples; ++i)
        for (int j = i; j > 0 && d[j - 1] > d[j]; --j) {
            float t = d[j];
            d[j] = d[j - 1];
            d[j - 1] = t;
        }
    float r = 0.5f * d[samples / 2];
    free(d);
    return isfinite(r) && r > 0.0f ? r : 0.01f;
}

void frame_files_free(frame_file *files, int count) {
    for (int i = 0; i < count; ++i) free(files[i].path);
    free(files);
}
