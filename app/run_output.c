/* The output folder of `pbf run` (see run_output.h). */
#include "run_output.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_comm.h"
#include "csv_file.h"
#include "run_checkpoint.h" /* RUN_CHECKPOINT_NAME */
#include "tool_output.h" /* forces.csv */
#include "solid_output.h" /* solids.csv */
#include "probe_output.h" /* probes.csv */
#include "series_output.h" /* frames.pvd, *.series */

/* Whether the run's stats.csv has the emitted and removed counts: emitters, sink boxes or sink
 * meshes. */
static int scene_has_flow(const pbf_scene *scene) {
    int sinks = scene->emitter_count > 0 || scene->sink_count > 0;
    for (int i = 0; i < scene->mesh_count && !sinks; ++i) sinks = scene->meshes[i].sink;
    return sinks;
}

static const char stats_name[] = "stats.csv";
static const char pvd_name[] = "frames.pvd"; /* app/series_output.h */

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

/* The length of the prefix of a per-frame file name: "frame_" (particles), "solids_" (the mesh
 * solids at their pose, pbf_export_solids_write) or "diffuse_" (spray, foam and bubbles,
 * pbf_export_diffuse_write); 0 for other names. */
static size_t frame_prefix(const char *name) {
    if (strncmp(name, "frame_", 6) == 0) return 6;
    if (strncmp(name, "solids_", 7) == 0) return 7;
    if (strncmp(name, "diffuse_", 8) == 0) return 8;
    if (strncmp(name, "surface_", 8) == 0) return 8; /* --mesh, pbf mesh */
    return 0;
}

static int has_suffix(const char *name, size_t len, const char *suffix) {
    size_t n = strlen(suffix);
    return len > n && strncmp(name + len - n, suffix, n) == 0;
}

/* Files a run writes: frame_<digits>.ply|vtk|vtu, solids_<digits>.ply|vtk|vtu,
 * diffuse_<digits>.ply|vtu, surface_<digits>.ply|obj|vtu (--mesh, or pbf mesh afterwards),
 * frames.pvd and the .series files, its checkpoint (or the pieces and manifest of one split over
 * MPI ranks), and the temporary files
 * "<ours>.tmp.<pid>" that a killed run can leave behind (for frames, stats.csv, scene.json and
 * the checkpoint). An earlier run's checkpoint goes too: resuming it would mix two runs. */
static int is_run_file(const char *name, int *is_frame) {
    const char *tmp = strstr(name, ".tmp.");
    size_t len = tmp ? (size_t)(tmp - name) : strlen(name);
    if (tmp && !all_digits(tmp + 5, strlen(tmp + 5))) return 0;
    *is_frame = 0;
    size_t pre = frame_prefix(name);
    if (pre > 0 && len > pre + 4) {
        /* frame_<digits>.ply|vtk|vtu|pvtu, the MPI pieces frame_<digits>_<digits>.vtu, and
         * the solids', diffuse particles' and surfaces' <prefix>_<digits>.<ext> */
        size_t ext = has_suffix(name, len, ".pvtu") ? 5
                     : has_suffix(name, len, ".ply") || has_suffix(name, len, ".vtk") ||
                             has_suffix(name, len, ".vtu") || has_suffix(name, len, ".obj")
                         ? 4
                         : 0;
        const char *digits = name + pre;
        size_t n = ext ? len - pre - ext : 0;
        const char *under = n ? memchr(digits, '_', n) : NULL;
        int ok = n > 0 && (under ? all_digits(digits, (size_t)(under - digits)) &&
                                       all_digits(under + 1, n - (size_t)(under - digits) - 1) &&
                                       ext == 4 && name[len - 1] == 'u'
                                 : all_digits(digits, n));
        if (ok) {
            *is_frame = 1;
            return 1;
        }
    }
    if (len == strlen(pvd_name) && strncmp(name, pvd_name, len) == 0) return 1;
    if (series_output_is_name(name, len)) return 1; /* frames.ply.series, ... */
    if (len == strlen(RUN_CHECKPOINT_NAME) && strncmp(name, RUN_CHECKPOINT_NAME, len) == 0)
        return 1;
    /* a checkpoint split over MPI ranks: its manifest and pieces (run_checkpoint.h) */
    if (len == strlen(RUN_CHECKPOINT_MANIFEST) && strncmp(name, RUN_CHECKPOINT_MANIFEST, len) == 0)
        return 1;
    if (run_checkpoint_is_piece(name, len)) return 1;
    if (!tmp) return 0;
    return (len == strlen(stats_name) && strncmp(name, stats_name, len) == 0) ||
           (len == 10 && strncmp(name, "scene.json", len) == 0);
}

/* The frame number of a frame file name (frame_00042.ply, or its temporary file), or -1. */
static long frame_number(const char *name) {
    int is_frame = 0;
    if (!is_run_file(name, &is_frame) || !is_frame) return -1;
    return strtol(name + frame_prefix(name), NULL, 10);
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
static int stats_header(char *header, size_t size, int flow, int split) {
    int n = snprintf(header, size,
                     "frame,time,particles,avg_density_error,max_density_error,kinetic_energy,"
                     "max_speed,avg_neighbors,ms_per_step");
    for (int s = 0; s < PBF_STAGE_COUNT; ++s)
        n += snprintf(header + n, size - (size_t)n, ",ms_%s", pbf_stage_name((pbf_stage)s));
    /* the solver's work: mean and most Δp passes per substep, Chebyshev restarts (docs/cli.md) */
    n += snprintf(header + n, size - (size_t)n, ",iterations,max_iterations,chebyshev_restarts");
    /* emitters and sinks (include/pbf/flow.h): particles added and removed since the start */
    n += snprintf(header + n, size - (size_t)n, flow ? ",emitted,removed" : "");
    /* split over MPI ranks (docs/mpi.md): max over mean of the ranks' particle counts before and
     * after balancing, of their step times, whether the cuts moved, the particles that moved */
    n += snprintf(header + n, size - (size_t)n,
                  split ? ",rank_imbalance,rank_imbalance_after,rank_time_imbalance,rebalanced,"
                          "rebalance_migrated\n"
                        : "\n");
    return n;
}

/* Split over MPI ranks, rank 0 prepares the folder and writes the CSV files, scene.json, the
 * .pvtu headers and frames.pvd; every rank writes its own pieces. */
static int is_rank0(const run_output *o) { return o->comm == NULL || o->comm->rank == 0; }
/* Every rank learns whether any failed (collective under MPI). */
static int agree(const run_output *o, int rc) { return o->comm ? o->comm->max(rc != 0) : rc; }

static int open_folder(run_output *o, const char *dir, const pbf_scene *scene);

int run_output_open(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene) {
    const struct run_comm *comm = o->comm;
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->dir = dir;
    o->formats = formats;
    o->split_stats = comm != NULL;
    series_output_init(&o->series, dir);
    int rc = is_rank0(o) ? open_folder(o, dir, scene) : 0;
    if (agree(o, rc) != 0) return 1; /* rank 0 printed why */
    return 0;
}

static int open_folder(run_output *o, const char *dir, const pbf_scene *scene) {
    int e = cli_make_dirs(dir);
    if (e != 0) return cli_error("cannot create output folder '%s': %s", dir, strerror(e));
    if (remove_earlier_run(dir) != 0) return 1;
    if (write_scene_json(dir, scene) != 0) return 1;
    o->flow = scene_has_flow(scene);
    char header[1024];
    int n = stats_header(header, sizeof header, o->flow, o->comm != NULL);
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

/* Reads the world into the reused buffer (allocating only when the count changes, and every
 * frame with several fluids: the phases are read with the rest, and the particles can change
 * with the count the same, under MPI or with emitters and sinks). */
static int read_back(run_output *o, const pbf_world *world) {
    int count = pbf_world_particle_count(world);
    if (o->particles.positions != NULL && o->particles.count == count &&
        o->particles.phases == NULL) {
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

static int write_stats_row(run_output *o, const pbf_world *world, int frame, const pbf_stats *stats,
                           const pbf_profile *profile) {
    const pbf_profile prof = *profile;
    const pbf_stats st = *stats;
    /* Before the first step the profile holds zeros, which is what frame 0 should say. */
    char row[1024];
    int n = snprintf(row, sizeof row, "%d,%.9g,%d,%.9g,%.9g,%.9g,%.9g,%.6g,%.6f", frame,
                     pbf_world_time(world), st.particles, (double)prof.avg_density_error,
                     (double)prof.max_density_error, st.kinetic_energy, (double)st.max_speed,
                     (double)prof.avg_neighbors, frame > 0 ? prof.step_ms : 0.0);
    for (int s = 0; s < PBF_STAGE_COUNT; ++s)
        n += snprintf(row + n, sizeof row - (size_t)n, ",%.6f", frame > 0 ? prof.stage_ms[s] : 0.0);
    n +=
        snprintf(row + n, sizeof row - (size_t)n, ",%d,%d,%d", frame > 0 ? prof.iterations : 0,
                 frame > 0 ? prof.max_iterations_used : 0, frame > 0 ? prof.chebyshev_restarts : 0);
    if (o->flow) {
        pbf_flow_state f = pbf_world_get_flow(world);
        n += snprintf(row + n, sizeof row - (size_t)n, ",%lld,%lld", (long long)f.emitted,
                      (long long)f.removed);
    }
    if (o->split_stats) {
        const run_balance *b = &o->balance;
        n += snprintf(row + n, sizeof row - (size_t)n, ",%.6f,%.6f,%.4f,%d,%lld", b->count_before,
                      b->count_after, frame > 0 ? b->time : 1.0, b->moved, b->migrated);
    }
    n += snprintf(row + n, sizeof row - (size_t)n, "\n");
    return csv_file_append(&o->stats, row, (size_t)n, o->error, sizeof o->error);
}

static const pbf_format all_formats[] = {PBF_FORMAT_PLY, PBF_FORMAT_VTK, PBF_FORMAT_VTU};
#define FORMAT_COUNT (sizeof all_formats / sizeof all_formats[0])

/* Removes the files of a frame that could not be completed, so that the folder keeps exactly
 * one stats row per frame file. */
static void remove_frame_files(run_output *o, char *const *paths) {
    for (size_t f = 0; f < FORMAT_COUNT; ++f)
        if (paths[f] != NULL && unlink(paths[f]) == 0) --o->files_written;
    for (size_t f = FORMAT_COUNT; f < 2 * FORMAT_COUNT; ++f)
        if (paths[f] != NULL) unlink(paths[f]);
}

/* The mesh solids at their pose of the frame, beside the particles: solids_<frame>.<ext>. On
 * success *written is its path (the caller frees it). */
static int write_solids(run_output *o, const pbf_world *world, int frame, pbf_format format,
                        char **written) {
    char name[64];
    snprintf(name, sizeof name, "solids_%05d.%s", frame, pbf_format_extension(format));
    char *path = join(o->dir, name);
    if (path == NULL) return frame_fail(o, "out of memory");
    if ((format == PBF_FORMAT_VTU
             ? pbf_export_solids_write_vtu(world, path, o->error, sizeof o->error)
             : pbf_export_solids_write(world, format, path, o->error, sizeof o->error)) != PBF_OK) {
        free(path);
        return 1;
    }
    *written = path;
    return 0;
}

/* One frame split over MPI ranks: every rank writes its vtu piece, then rank 0 the .pvtu naming
 * them, frames.pvd and the stats row of the whole world; the frame's PLY is one file that every
 * rank writes its part of (MPI-IO); the legacy VTK file rank 0 writes from the particles gathered
 * to it (kept in o->gathered for the run's hooks). Any failure stops all ranks, and the frame's
 * files go again. */
static int frame_split(run_output *o, const pbf_world *world, int frame) {
    const int ranks = o->comm->ranks;
    char name[64];
    char *piece = NULL, *header = NULL;
    int rc = 0;
    if (o->formats & PBF_FORMAT_VTU) {
        snprintf(name, sizeof name, "frame_%05d_%04d.vtu", frame, o->comm->rank);
        piece = join(o->dir, name);
        rc = read_back(o, world);
        if (rc == 0 && piece == NULL) rc = frame_fail(o, "out of memory");
        if (rc == 0 && pbf_export_write(&o->particles, PBF_FORMAT_VTU, piece, o->error,
                                        sizeof o->error) != PBF_OK)
            rc = 1;
        else if (rc == 0)
            ++o->files_written;
    }
    char *ply = NULL;
    if (o->formats & PBF_FORMAT_PLY) { /* collective: every rank takes part, even after a failure */
        if (rc == 0 && !(o->formats & PBF_FORMAT_VTU)) rc = read_back(o, world); /* else read */
        int ready = rc == 0;
        ply = join(o->dir, run_output_frame_name(frame, PBF_FORMAT_PLY, name, sizeof name));
        char err[sizeof o->error];
        if (ply == NULL) {
            if (rc == 0) rc = frame_fail(o, "out of memory");
            ready = 0;
        }
        /* the path matters on rank 0 only (it renames); the others pass it too */
        int ply_rc = o->comm->write_ply(ready ? &o->particles : NULL,
                                        ply != NULL ? ply : "frame.ply", err, sizeof err);
        if (ply_rc != 0 && rc == 0) rc = frame_fail(o, "%s", err);
        if (ply_rc == 0 && rc == 0) ++o->files_written;
        if (ply_rc != 0) {
            free(ply);
            ply = NULL;
        }
    }
    /* the whole world gathered to rank 0 (collective): the legacy VTK file and the hooks */
    char *vtk = NULL;
    if ((o->formats & PBF_FORMAT_VTK) || o->gather) {
        char err[sizeof o->error];
        int gather_rc = o->comm->gather(world, &o->gathered, err, sizeof err);
        if (gather_rc != 0 && rc == 0) rc = frame_fail(o, "%s", err);
        if (rc == 0 && is_rank0(o) && (o->formats & PBF_FORMAT_VTK)) {
            vtk = join(o->dir, run_output_frame_name(frame, PBF_FORMAT_VTK, name, sizeof name));
            if (vtk == NULL) {
                rc = frame_fail(o, "out of memory");
            } else if (pbf_export_write(&o->gathered, PBF_FORMAT_VTK, vtk, o->error,
                                        sizeof o->error) != PBF_OK) {
                rc = 1;
                free(vtk);
                vtk = NULL;
            } else {
                ++o->files_written;
            }
        }
    }
    /* spray, foam and bubbles: every rank's gathered to rank 0 (collective), which writes them
     * as one process does (a PLY, and a .vtu with vtu) */
    char *diffuse[2] = {NULL, NULL};
    if (o->formats != 0 && pbf_world_get_diffuse_def(world, NULL)) {
        char err[sizeof o->error];
        pbf_diffuse_particles all;
        memset(&all, 0, sizeof all);
        if (o->comm->gather_diffuse(world, &all, err, sizeof err) != 0 && rc == 0)
            rc = frame_fail(o, "%s", err);
        for (int f = 0; f < 2 && rc == 0 && is_rank0(o); ++f) {
            if (f == 1 && !(o->formats & PBF_FORMAT_VTU)) break;
            snprintf(name, sizeof name, "diffuse_%05d.%s", frame, f == 0 ? "ply" : "vtu");
            diffuse[f] = join(o->dir, name);
            if (diffuse[f] == NULL)
                rc = frame_fail(o, "out of memory");
            else if (pbf_export_diffuse_write_particles(&all, f, diffuse[f], o->error,
                                                        sizeof o->error) != PBF_OK)
                rc = 1, free(diffuse[f]), diffuse[f] = NULL;
        }
        pbf_diffuse_particles_free(&all);
    }
    /* probes: every rank samples (collective: the whole world's values), rank 0 writes below */
    pbf_probe_sample samples[PBF_MAX_PROBES];
    if (pbf_world_probe_count(world) > 0 && pbf_world_sample_probes(world, samples) != PBF_OK &&
        rc == 0)
        rc = frame_fail(o, "out of memory sampling the probes");
    int failed = o->comm->max(rc != 0);
    if (failed && rc == 0) rc = frame_fail(o, "another MPI rank failed to write frame %d", frame);
    pbf_stats stats;
    pbf_profile profile;
    o->comm->totals(world, &stats, &profile); /* collective: every rank */
    o->total_particles = stats.particles;
    if (!failed && is_rank0(o) && (o->formats & PBF_FORMAT_VTU)) {
        char *names = malloc((size_t)ranks * 32);
        const char **pieces = malloc((size_t)ranks * sizeof *pieces);
        snprintf(name, sizeof name, "frame_%05d.pvtu", frame);
        header = join(o->dir, name);
        if (names == NULL || pieces == NULL || header == NULL) {
            rc = frame_fail(o, "out of memory");
        } else {
            for (int r = 0; r < ranks; ++r) {
                snprintf(names + 32 * r, 32, "frame_%05d_%04d.vtu", frame, r);
                pieces[r] = names + 32 * r;
            }
            if (pbf_export_write_pvtu(header, pieces, ranks, o->error, sizeof o->error) != PBF_OK)
                rc = 1;
        }
        free(names);
        free(pieces);
    }
    if (!failed && is_rank0(o) && rc == 0) rc = write_stats_row(o, world, frame, &stats, &profile);
    if (!failed && is_rank0(o) && rc == 0)
        rc = probe_output_row_sampled(o->probes, world, frame, samples, o->error, sizeof o->error);
    /* the tool: its state is the same on every rank (its forces summed over them) */
    if (!failed && is_rank0(o) && rc == 0)
        rc = tool_output_row(o->tool, world, frame, o->error, sizeof o->error);
    /* the mesh solids: their poses are the same on every rank (a floating body's forces summed
     * over them), so rank 0 writes their files and solids.csv (o->solids: rank 0's only) */
    char *solids[FORMAT_COUNT] = {NULL};
    for (size_t f = 0; f < FORMAT_COUNT && !failed && rc == 0 && o->solids != NULL; ++f)
        if (o->formats & (unsigned)all_formats[f])
            rc = write_solids(o, world, frame, all_formats[f], &solids[f]);
    if (!failed && rc == 0)
        rc = solid_output_row(o->solids, world, frame, o->error, sizeof o->error);
    if (!failed) failed = o->comm->max(rc != 0);
    for (size_t f = 0; f < FORMAT_COUNT; ++f) {
        if (failed && solids[f] != NULL) unlink(solids[f]);
        free(solids[f]);
    }
    for (int f = 0; f < 2; ++f) {
        if (failed && diffuse[f] != NULL) unlink(diffuse[f]);
        free(diffuse[f]);
    }
    if (failed) { /* nothing of the frame stays */
        if (piece != NULL && rc == 0) unlink(piece), --o->files_written;
        if (header != NULL) unlink(header);
        if (ply != NULL && is_rank0(o)) unlink(ply);
        if (ply != NULL) --o->files_written;
        if (vtk != NULL) unlink(vtk), --o->files_written;
        if (rc == 0) rc = frame_fail(o, "another MPI rank failed to write frame %d", frame);
    }
    free(ply);
    free(vtk);
    free(piece);
    free(header);
    return rc;
}

int run_output_frame(run_output *o, const pbf_world *world, int frame) {
    if (o->comm != NULL) return frame_split(o, world, frame);
    char *written[2 * FORMAT_COUNT] = {NULL}; /* particles, then the mesh solids */
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
        /* the mesh solids at their pose of the frame, beside the particles */
        if (rc != 0 || o->solids == NULL) continue;
        rc = write_solids(o, world, frame, all_formats[f], &written[FORMAT_COUNT + f]);
    }
    /* spray, foam and bubbles beside the particles, when the scene has them: always a PLY (what
     * `pbf render` reads), and a .vtu for frames.pvd with vtu */
    char *diffuse[2] = {NULL, NULL};
    for (int f = 0; f < 2 && rc == 0; ++f) {
        if (o->formats == 0 || !pbf_world_get_diffuse_def(world, NULL)) break;
        if (f == 1 && !(o->formats & PBF_FORMAT_VTU)) break;
        char name[64];
        snprintf(name, sizeof name, "diffuse_%05d.%s", frame, f == 0 ? "ply" : "vtu");
        diffuse[f] = join(o->dir, name);
        if (diffuse[f] == NULL)
            rc = frame_fail(o, "out of memory");
        else if ((f == 0 ? pbf_export_diffuse_write(world, diffuse[f], o->error, sizeof o->error)
                         : pbf_export_diffuse_write_vtu(world, diffuse[f], o->error,
                                                        sizeof o->error)) != PBF_OK)
            rc = 1, free(diffuse[f]), diffuse[f] = NULL;
    }
    if (rc == 0) {
        pbf_stats stats = pbf_world_get_stats(world);
        pbf_profile profile = pbf_world_get_profile(world);
        rc = write_stats_row(o, world, frame, &stats, &profile);
    }
    if (rc == 0) rc = tool_output_row(o->tool, world, frame, o->error, sizeof o->error);
    if (rc == 0) rc = probe_output_row(o->probes, world, frame, o->error, sizeof o->error);
    if (rc == 0) rc = solid_output_row(o->solids, world, frame, o->error, sizeof o->error);
    if (rc != 0) remove_frame_files(o, written);
    for (int f = 0; f < 2; ++f) {
        if (rc != 0 && diffuse[f] != NULL) unlink(diffuse[f]);
        free(diffuse[f]);
    }
    for (size_t f = 0; f < 2 * FORMAT_COUNT; ++f) free(written[f]);
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

/* Whether the folder's stats.csv has the columns of a run split over MPI ranks. */
static int earlier_split_stats(const char *dir) {
    char *path = join(dir, stats_name);
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    char line[2048] = "";
    if (f != NULL && fgets(line, sizeof line, f) == NULL) line[0] = '\0';
    if (f != NULL) fclose(f);
    free(path);
    return strstr(line, ",rank_imbalance,") != NULL;
}

static int resume_folder(run_output *o, const char *dir, const pbf_scene *scene, int frame);

int run_output_resume(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene,
                      int frame) {
    const struct run_comm *comm = o->comm;
    memset(o, 0, sizeof *o);
    o->comm = comm;
    o->dir = dir;
    o->formats = formats;
    o->flow = scene_has_flow(scene);
    series_output_init(&o->series, dir);
    o->balance = (run_balance){1.0, 1.0, 1.0, 0, 0, 0.0, 0.0}; /* one process: balanced */
    /* the stats columns of the run that wrote frames 0..frame go on */
    o->split_stats = earlier_split_stats(dir);
    /* split over MPI ranks, rank 0 alone changes the folder */
    int rc = is_rank0(o) ? resume_folder(o, dir, scene, frame) : 0;
    return agree(o, rc) != 0;
}

static int resume_folder(run_output *o, const char *dir, const pbf_scene *scene, int frame) {
    if (remove_after(dir, frame) != 0) return 1;
    if (write_scene_json(dir, scene) != 0) return 1;
    /* stats.csv must have the rows up to the checkpoint: its row is written first */
    if (csv_file_resume(&o->stats, dir, stats_name, frame, NULL, 0) != 0) return 1;
    if (probe_output_resume(&o->probes, dir, scene, frame) != 0) return 1; /* probes */
    if (solid_output_resume(&o->solids, dir, scene, frame) != 0) return 1; /* meshes */
    if (tool_output_resume(&o->tool, dir, scene, frame) != 0) return 1; /* tool */
    /* frames.pvd and the .series files of frames 0..frame, with stats.csv's times */
    if (series_output_resume(&o->series, frame, scene->fps, o->error, sizeof o->error) != 0)
        return cli_error("%s", o->error);
    return 0;
}

int run_output_series(run_output *o, const pbf_world *world, int frame) {
    int rc = is_rank0(o) ? series_output_frame(&o->series, frame, pbf_world_time(world), o->error,
                                               sizeof o->error)
                         : 0;
    if (agree(o, rc) == 0) return 0;
    if (rc == 0)
        snprintf(o->error, sizeof o->error, "MPI rank 0 failed to write the series of frame %d",
                 frame);
    return 1;
}

double run_output_estimate(int particles, unsigned formats, int frames, int checkpoints) {
    double per_frame = 200.0; /* the stats row */
    if (formats & PBF_FORMAT_PLY) per_frame += 400.0 + 32.0 * particles;
    if (formats & PBF_FORMAT_VTK) per_frame += 600.0 + 44.0 * particles;
    if (formats & PBF_FORMAT_VTU) per_frame += 1400.0 + 41.0 * particles + 100.0 * frames;
    return per_frame * (frames > 0 ? frames : 0) + (checkpoints ? 2.0 * 36.0 * particles : 0.0);
}

void run_output_close(run_output *o) {
    csv_file_close(&o->stats);
    pbf_particles_free(&o->particles);
    pbf_particles_free(&o->gathered);
    series_output_free(&o->series);
    tool_output_close(o->tool); /* draws forces.png */
    o->tool = NULL;
    probe_output_close(o->probes);
    o->probes = NULL;
    solid_output_close(o->solids);
    o->solids = NULL;
}
