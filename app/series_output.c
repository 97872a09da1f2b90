/* The time series of a run folder (see series_output.h). */
#include "series_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/export.h"

/* What a frame can have, in the order of the .pvd's parts. */
enum { K_PARTICLES, K_SOLIDS, K_SURFACES, K_DIFFUSE, KINDS };
static const char *const file_prefix[KINDS] = {"frame", "solids", "surface", "diffuse"};
static const char *const series_name[KINDS] = {"frames", "solids", "surfaces", "diffuse"};
static const char *const part_name[KINDS] = {"particles", "solids", "surfaces", "diffuse"};
/* extensions: the .vtu (and the particles' .pvtu) go into frames.pvd, the others into a
 * "<series>.<ext>.series" each */
enum { E_VTU, E_PVTU, E_PLY, E_VTK, E_OBJ, EXTS };
static const char *const extension[EXTS] = {"vtu", "pvtu", "ply", "vtk", "obj"};
#define BIT(k, e) (1u << ((k)*EXTS + (e)))

static const char pvd_name[] = "frames.pvd";

void series_output_init(series_output *s, const char *dir) {
    memset(s, 0, sizeof *s);
    s->dir = dir;
}

void series_output_free(series_output *s) {
    free(s->times);
    free(s->files);
    s->times = NULL;
    s->files = NULL;
    s->capacity = s->frames = 0;
}

int series_output_is_name(const char *name, size_t len) {
    char want[64];
    for (int k = 0; k < KINDS; ++k)
        for (int e = E_PLY; e < EXTS; ++e) {
            int n = snprintf(want, sizeof want, "%s.%s.series", series_name[k], extension[e]);
            if ((size_t)n == len && strncmp(name, want, len) == 0) return 1;
        }
    return 0;
}

static void file_name(int kind, int ext, int frame, char *buf, size_t size) {
    snprintf(buf, size, "%s_%05d.%s", file_prefix[kind], frame, extension[ext]);
}

/* Grows the arrays to hold frame `frame`. */
static int reserve(series_output *s, int frame) {
    if (frame < s->capacity) return 0;
    int cap = s->capacity ? 2 * s->capacity : 256;
    while (cap <= frame) cap *= 2;
    double *t = realloc(s->times, (size_t)cap * sizeof *t);
    if (t == NULL) return 1;
    s->times = t;
    uint32_t *f = realloc(s->files, (size_t)cap * sizeof *f);
    if (f == NULL) return 1;
    s->files = f;
    s->capacity = cap;
    return 0;
}

/* Which of the frame's files exist in the folder. */
static uint32_t frame_files(const series_output *s, int frame) {
    uint32_t bits = 0;
    char name[64], path[4200];
    for (int k = 0; k < KINDS; ++k)
        for (int e = 0; e < EXTS; ++e) {
            if (e == E_PVTU && k != K_PARTICLES) continue;
            if (e == E_OBJ && k != K_SURFACES) continue;
            file_name(k, e, frame, name, sizeof name);
            snprintf(path, sizeof path, "%s/%s", s->dir, name);
            if (access(path, F_OK) == 0) bits |= BIT(k, e);
        }
    if (bits & BIT(K_PARTICLES, E_PVTU)) bits &= ~BIT(K_PARTICLES, E_VTU); /* MPI: the .pvtu */
    return bits;
}

/* frames.pvd: every .vtu / .pvtu of frames 0..frames-1; a part per kind that has any. */
static int write_pvd(const series_output *s, uint32_t all, char *err, size_t err_size) {
    int part[KINDS], parts = 0;
    const char *names[KINDS];
    for (int k = 0; k < KINDS; ++k) {
        part[k] = -1;
        if (all & (BIT(k, E_VTU) | BIT(k, E_PVTU))) {
            names[parts] = part_name[k];
            part[k] = parts++;
        }
    }
    if (parts == 0) return 0;
    size_t most = (size_t)s->frames * KINDS;
    pbf_pvd_entry *entries = malloc(most * sizeof *entries);
    char *text = malloc(most * 32);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", s->dir, pvd_name);
    int n = 0, rc = 0;
    if (entries == NULL || text == NULL) {
        snprintf(err, err_size, "out of memory writing %s", path);
        rc = 1;
    } else {
        for (int f = 0; f < s->frames; ++f)
            for (int k = 0; k < KINDS; ++k) {
                int e = s->files[f] & BIT(k, E_PVTU)  ? E_PVTU
                        : s->files[f] & BIT(k, E_VTU) ? E_VTU
                                                      : -1;
                if (e < 0) continue;
                file_name(k, e, f, text + 32 * n, 32);
                entries[n] = (pbf_pvd_entry){s->times[f], part[k], text + 32 * n};
                ++n;
            }
        if (pbf_export_write_pvd_parts(path, entries, n, names, parts, err, err_size) != PBF_OK)
            rc = 1;
    }
    free(entries);
    free(text);
    return rc;
}

/* "<series>.<ext>.series" of one kind and extension. */
static int write_series(const series_output *s, int kind, int ext, char *err, size_t err_size) {
    double *times = malloc((size_t)s->frames * sizeof *times);
    const char **files = malloc((size_t)s->frames * sizeof *files);
    char *text = malloc((size_t)s->frames * 32);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.%s.series", s->dir, series_name[kind], extension[ext]);
    int n = 0, rc = 0;
    if (times == NULL || files == NULL || text == NULL) {
        snprintf(err, err_size, "out of memory writing %s", path);
        rc = 1;
    } else {
        for (int f = 0; f < s->frames; ++f) {
            if (!(s->files[f] & BIT(kind, ext))) continue;
            file_name(kind, ext, f, text + 32 * n, 32);
            files[n] = text + 32 * n;
            times[n] = s->times[f];
            ++n;
        }
        if (pbf_export_write_series(path, times, files, n, err, err_size) != PBF_OK) rc = 1;
    }
    free(times);
    free(files);
    free(text);
    return rc;
}

static int write_all(const series_output *s, char *err, size_t err_size) {
    uint32_t all = 0;
    for (int f = 0; f < s->frames; ++f) all |= s->files[f];
    if (write_pvd(s, all, err, err_size) != 0) return 1;
    for (int k = 0; k < KINDS; ++k)
        for (int e = E_PLY; e < EXTS; ++e)
            if ((all & BIT(k, e)) && write_series(s, k, e, err, err_size) != 0) return 1;
    return 0;
}

int series_output_frame(series_output *s, int frame, double time, char *err, size_t err_size) {
    if (reserve(s, frame) != 0) {
        snprintf(err, err_size, "out of memory writing the series of '%s'", s->dir);
        return 1;
    }
    for (int f = s->frames; f < frame; ++f) s->files[f] = 0; /* none recorded: none listed */
    s->times[frame] = time;
    s->files[frame] = frame_files(s, frame);
    s->frames = frame + 1;
    return write_all(s, err, err_size);
}

/* The time column of stats.csv's rows for frames 0..frame (frame, time, ... per row). */
static void read_times(series_output *s, int frame) {
    char path[4200], line[4096];
    snprintf(path, sizeof path, "%s/stats.csv", s->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    for (int row = 0; fgets(line, sizeof line, f) != NULL; ++row) {
        int number;
        double t;
        if (row > 0 && sscanf(line, "%d,%lf", &number, &t) == 2 && number >= 0 && number <= frame)
            s->times[number] = t;
        /* a line longer than the buffer: skip the rest of it */
        while (strchr(line, '\n') == NULL && fgets(line, sizeof line, f) != NULL) continue;
    }
    fclose(f);
}

int series_output_resume(series_output *s, int frame, double fps, char *err, size_t err_size) {
    if (reserve(s, frame) != 0) {
        snprintf(err, err_size, "out of memory writing the series of '%s'", s->dir);
        return 1;
    }
    for (int f = 0; f <= frame; ++f) {
        s->times[f] = f / fps;
        s->files[f] = frame_files(s, f);
    }
    read_times(s, frame);
    s->frames = frame + 1;
    return write_all(s, err, err_size);
}
