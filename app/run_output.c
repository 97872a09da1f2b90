/* The output folder of `pbf run` (see run_output.h). */
#include "run_output.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csv_file.h"
#include "run_checkpoint.h" /* RUN_CHECKPOINT_NAME */
#include "tool_output.h" /* forces.csv */
#include "solid_output.h" /* solids.csv */
#include "probe_output.h" /* probes.csv */

/* Whether the run's stats.csv has the emitted and removed counts: emitters, sink boxes or sink
 * meshes. */
static int scene_has_flow(const pbf_scene *scene) {
    int sinks = scene->emitter_count > 0 || scene->sink_count > 0;
    for (int i = 0; i < scene->mesh_count && !sinks; ++i) sinks = scene->meshes[i].sink;
    return sinks;
}

static const char stats_name[] = "stats.csv";

const char *run_output_frame_name(int frame, pbf_format format, char *buf, size_t size) {
    snprintf(buf, size, "frame_%05d.%s", frame, pbf_format_extension(format));
    return buf;
}

/* dir + "/" + name, malloc'd. */
static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

static int all_digits(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; ++i)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* Files a run writes: frame_<digits>.ply|vtk, its checkpoint, and the temporary files
 * "<ours>.tmp.<pid>" that a killed run can leave behind (for frames, stats.csv, scene.json and
 * the checkpoint). An earlier run's checkpoint goes too: resuming it would mix two runs. */
static int is_run_file(const char *name, int *is_frame) {
    const char *tmp = strstr(name, ".tmp.");
    size_t len = tmp ? (size_t)(tmp - name) : strlen(name);
    if (tmp && !all_digits(tmp + 5, strlen(tmp + 5))) return 0;
    *is_frame = 0;
    if (len > 10 && strncmp(name, "frame_", 6) == 0 &&
        (strncmp(name + len - 4, ".ply", 4) == 0 || strncmp(name + len - 4, ".vtk", 4) == 0) &&
        all_digits(name + 6, len - 10)) {
        *is_frame = 1;
        return 1;
    }
    if (len == strlen(RUN_CHECKPOINT_NAME) && strncmp(name, RUN_CHECKPOINT_NAME, len) == 0)
        return 1;
    if (!tmp) return 0;
    return (len == strlen(stats_name) && strncmp(name, stats_name, len) == 0) ||
           (len == 10 && strncmp(name, "scene.json", len) == 0);
}

/* The frame number of a frame file name (frame_00042.ply, or its temporary file), or -1. */
static long frame_number(const char *name) {
    int is_frame = 0;
    if (!is_run_file(name, &is_frame) || !is_frame) return -1;
    return strtol(name + 6, NULL, 10);
}

/* Removes an earlier run's frame files, so the folder never mixes two runs and stats.csv
 * always matches the frame files. */
static int remove_earlier_run(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return cli_error("cannot read folder '%s': %s", dir, strerror(errno));
    int removed = 0, failed = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        int is_frame = 0;
        if (!is_run_file(e->d_name, &is_frame)) continue;
        char *path = join(dir, e->d_name);
        if (path == NULL || (unlink(path) != 0 && errno != ENOENT)) {
            cli_error("cannot remove '%s' of an earlier run: %s", path ? path : e->d_name,
                      strerror(errno));
            failed = 1;
        } else if (is_frame) {
            ++removed;
        }
        free(path);
        if (failed) break;
    }
    closedir(d);
    if (removed > 0)
        fprintf(stderr, "pbf run: removed %d frame file%s of an earlier run from '%s'\n", removed,
                removed == 1 ? "" : "s", dir);
    return failed;
}

static int write_scene_json(const char *dir, const pbf_scene *scene) {
    char *json = pbf_scene_to_json(scene);
    char *path = join(dir, "scene.json");
    char err[PBF_ERROR_SIZE];
    int rc = 0;
    if (json == NULL || path == NULL)
        rc = cli_error("out of memory writing scene.json");
    else if (pbf_write_file_atomic(path, json, strlen(json), err, sizeof err) != PBF_OK)
        rc = cli_error("%s", err);
    free(json);
    free(path);
    return rc;
}

/* The header of stats.csv, with its newline; returns its length. */
static int stats_header(char *header, size_t size, int flow) {
    int n = snprintf(header, size,
                     "frame,time,particles,avg_density_error,max_density_error,kinetic_energy,"
                     "max_speed,avg_neighbors,ms_per_step");
    for (int s = 0; s < PBF_STAGE_COUNT; ++s)
        n += snprintf(header + n, size - (size_t)n, ",ms_%s", pbf_stage_name((pbf_stage)s));
    /* the solver's work: mean and most Δp passes per substep, Chebyshev restarts (docs/cli.md) */
    n += snprintf(header + n, size - (size_t)n, ",iterations,max_iterations,chebyshev_restarts");
    /* emitters and sinks (include/pbf/flow.h): particles added and removed since the start */
    n += snprintf(header + n, size - (size_t)n, flow ? ",emitted,removed\n" : "\n");
    return n;
}

int run_output_open(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene) {
    memset(o, 0, sizeof *o);
    o->dir = dir;
    o->formats = formats;
    int e = cli_make_dirs(dir);
    if (e != 0) return cli_error("cannot create output folder '%s': %s", dir, strerror(e));
    if (remove_earlier_run(dir) != 0) return 1;
    if (write_scene_json(dir, scene) != 0) return 1;
    o->flow = scene_has_flow(scene);
    char header[1024];
    int n = stats_header(header, sizeof header, o->flow);
    if (csv_file_create(&o->stats, dir, stats_name, header, (size_t)n) != 0) return 1;
    if (probe_output_open(&o->probes, dir, scene) != 0) return 1; /* probes */
    if (solid_output_open(&o->solids, dir, scene) != 0) return 1; /* meshes */
    return tool_output_open(&o->tool, dir, scene); /* tool */
}

/* Per-frame failures go into o->error instead of stderr: the caller first clears its
 * progress line, then prints. */
static int frame_fail(run_output *o, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(o->error, sizeof o->error, fmt, args);
    va_end(args);
    return 1;
}

/* Reads the world into the reused buffer (allocating only when the count changes). */
static int read_back(run_output *o, const pbf_world *world) {
    int count = pbf_world_particle_count(world);
    if (o->particles.positions != NULL && o->particles.count == count) {
        pbf_world_get_positions(world, o->particles.positions);
        pbf_world_get_velocities(world, o->particles.velocities);
        pbf_world_get_densities(world, o->particles.densities);
        pbf_world_get_ids(world, o->particles.ids); /* emitters and sinks change them */
        return 0;
    }
    pbf_particles_free(&o->particles);
    if (pbf_particles_from_world(world, &o->particles, o->error, sizeof o->error) != PBF_OK)
        return 1;
    return 0;
}

static int write_stats_row(run_output *o, const pbf_world *world, int frame) {
    pbf_profile prof = pbf_world_get_profile(world);
    pbf_stats st = pbf_world_get_stats(world);
    /* Before the first step the profile holds zeros, which is what frame 0 should say. */
    char row[1024];
    int n = snprintf(row, sizeof row, "%d,%.9g,%d,%.9g,%.9g,%.9g,%.9g,%.6g,%.6f", frame,
                     pbf_world_time(world), st.particles, (double)prof.avg_density_error,
                     (double)prof.max_density_error, st.kinetic_energy, (double)st.max_speed,
                     (double)prof.avg_neighbors, frame > 0 ? prof.step_ms : 0.0);
    for (int s = 0; s < PBF_STAGE_COUNT; ++s)
        n += snprintf(row + n, sizeof row - (size_t)n, ",%.6f", frame > 0 ? prof.stage_ms[s] : 0.0);
    n += snprintf(row + n, sizeof row - (size_t)n, ",%d,%d,%d", frame > 0 ? prof.iterations : 0,
                  frame > 0 ? prof.max_iterations_used : 0, frame > 0 ? prof.chebyshev_restarts : 0);
    if (o->flow) {
        pbf_flow_state f = pbf_world_get_flow(world);
        n += snprintf(row + n, sizeof row - (size_t)n, ",%lld,%lld", (long long)f.emitted,
                      (long long)f.removed);
    }
    n += snprintf(row + n, sizeof row - (size_t)n, "\n");
    return csv_file_append(&o->stats, row, (size_t)n, o->error, sizeof o->error);
}

static const pbf_format all_formats[] = {PBF_FORMAT_PLY, PBF_FORMAT_VTK};
#define FORMAT_COUNT (sizeof all_formats / sizeof all_formats[0])

/* Removes the files of a frame that could not be completed, so that the folder keeps exactly
 * one stats row per frame file. */
static void remove_frame_files(run_output *o, char *const *paths) {
    for (size_t f = 0; f < FORMAT_COUNT; ++f)
        if (paths[f] != NULL && unlink(paths[f]) == 0) --o->files_written;
}

int run_output_frame(run_output *o, const pbf_world *world, int frame) {
    char *written[FORMAT_COUNT] = {NULL};
    int rc = 0;
    if (o->formats != 0) rc = read_back(o, world);
    for (size_t f = 0; rc == 0 && f < FORMAT_COUNT; ++f) {
        if (!(o->formats & (unsigned)all_formats[f])) continue;
        char name[64];
        char *path = join(o->dir, run_output_frame_name(frame, all_formats[f], name, sizeof name));
        if (path == NULL) {
            rc = frame_fail(o, "out of memory");
        } else if (pbf_export_write(&o->particles, all_formats[f], path, o->error,
                                    sizeof o->error) != PBF_OK) {
            rc = 1;
            free(path);
        } else {
            written[f] = path;
            ++o->files_written;
        }
    }
    if (rc == 0) rc = write_stats_row(o, world, frame);
    if (rc == 0) rc = tool_output_row(o->tool, world, frame, o->error, sizeof o->error);
    if (rc == 0) rc = probe_output_row(o->probes, world, frame, o->error, sizeof o->error);
    if (rc == 0) rc = solid_output_row(o->solids, world, frame, o->error, sizeof o->error);
    if (rc != 0) remove_frame_files(o, written);
    for (size_t f = 0; f < FORMAT_COUNT; ++f) free(written[f]);
    return rc;
}

/* ---- resume (docs/robustness.md) ------------------------------------------------------------- */

/* Removes frame files after `frame` and temporary files: the resumed run writes them again. */
static int remove_after(const char *dir, int frame) {
    DIR *d = opendir(dir);
    if (d == NULL) return cli_error("cannot read folder '%s': %s", dir, strerror(errno));
    int failed = 0;
    for (struct dirent *e = readdir(d); e != NULL && !failed; e = readdir(d)) {
        int is_frame = 0;
        if (!is_run_file(e->d_name, &is_frame)) continue;
        int temporary = strstr(e->d_name, ".tmp.") != NULL;
        if (!temporary && !(is_frame && frame_number(e->d_name) > frame)) continue;
        char *path = join(dir, e->d_name);
        if (path == NULL || (unlink(path) != 0 && errno != ENOENT)) {
            cli_error("cannot remove '%s': %s", path ? path : e->d_name, strerror(errno));
            failed = 1;
        }
        free(path);
    }
    closedir(d);
    return failed;
}

int run_output_resume(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene,
                      int frame) {
    memset(o, 0, sizeof *o);
    o->dir = dir;
    o->formats = formats;
    o->flow = scene_has_flow(scene);
    if (remove_after(dir, frame) != 0) return 1;
    if (write_scene_json(dir, scene) != 0) return 1;
    /* stats.csv must have the rows up to the checkpoint: its row is written first */
    if (csv_file_resume(&o->stats, dir, stats_name, frame, NULL, 0) != 0) return 1;
    if (probe_output_resume(&o->probes, dir, scene, frame) != 0) return 1; /* probes */
    if (solid_output_resume(&o->solids, dir, scene, frame) != 0) return 1; /* meshes */
    return tool_output_resume(&o->tool, dir, scene, frame); /* tool */
}

double run_output_estimate(int particles, unsigned formats, int frames, int checkpoints) {
    double per_frame = 200.0; /* the stats row */
    if (formats & PBF_FORMAT_PLY) per_frame += 400.0 + 32.0 * particles;
    if (formats & PBF_FORMAT_VTK) per_frame += 600.0 + 44.0 * particles;
    return per_frame * (frames > 0 ? frames : 0) + (checkpoints ? 2.0 * 36.0 * particles : 0.0);
}

void run_output_close(run_output *o) {
    csv_file_close(&o->stats);
    pbf_particles_free(&o->particles);
    tool_output_close(o->tool); /* draws forces.png */
    o->tool = NULL;
    probe_output_close(o->probes);
    o->probes = NULL;
    solid_output_close(o->solids);
    o->solids = NULL;
}
