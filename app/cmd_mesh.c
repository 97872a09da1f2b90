/* `pbf mesh RUN_DIR`: the fluid's surface as a closed triangle mesh for every particle file of
 * a run (surface_NNNNN.ply / .obj next to frame_NNNNN.ply, or in --out DIR), for renderers that
 * want a surface rather than points (Blender: the add-on in blender/, docs/blender.md). The method is the
 * library's (include/pbf/surface.h); docs/surface.md has the parameters and measured figures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "series_output.h"
#include "frame_files.h"
#include "interrupt.h"
#include "mesh_output.h"
#include "pbf/export.h"

static const char mesh_synopsis[] =
    "usage: pbf mesh RUN_DIR [--out DIR] [--frames A:B] [--threads N] [--quiet]\n"
    "                [--kernel anisotropic|isotropic] [--cell C] [--iso V] [--smooth N]\n"
    "                [--decimate F] [--stretch K] [--radius R] [--mesh-format ply,obj,vdb]\n";

static const char mesh_help[] =
    "Reconstructs the surface of the fluid in every particle file of RUN_DIR (the --out of\n"
    "`pbf run`): frame_00042.ply gives surface_00042.ply, a closed (watertight, manifold)\n"
    "triangle mesh with normals pointing out of the fluid (--mesh-format vdb: surface_00042.vdb,\n"
    "an OpenVDB level set of that mesh). Each file is written to a temporary name and renamed,\n"
    "so a file is complete or absent. The particle radius comes from RUN_DIR/scene.json (or\n"
    "--radius, or is estimated from the particle spacing).\n"
    "\n"
    "options:\n"
    "  --out DIR           write the meshes into DIR (created; default: RUN_DIR)\n"
    "  --frames A:B        only frames A to B (inclusive; A: or :B leave an end open)\n"
    "  --threads N         CPU threads, 0 = all cores (the meshes do not depend on it)\n"
    "  --quiet, -q         no progress line and no summary\n"
    "  --help, -h          this help\n"
    "\n"
    "%s"
    "\n"
    "Ctrl-C finishes the frame in progress and stops with exit status 130.\n"
    "\n"
    "examples:\n"
    "  pbf run scenes/dam_break.json --out out/dam && pbf mesh out/dam\n"
    "  pbf mesh out/dam --frames 60:60 --mesh-format ply,obj --cell 0.5\n"
    "  pbf mesh out/dam --mesh-format vdb   # OpenVDB level sets for Houdini and Blender\n"
    "  blender --python blender/pbf_blender/__init__.py -- out/dam   # the run in Blender\n";

/* Progress on stderr: one line redrawn on a terminal, a line per 10 % otherwise. */
typedef struct mesh_progress {
    int tty, total, next_percent, drawn;
    double start, last;
} mesh_progress;

static void progress_line(mesh_progress *p, int done, int frame, int particles, int triangles) {
    double now = cli_now(), per = done > 0 ? (now - p->start) / done : 0.0;
    int percent = p->total > 0 ? 100 * done / p->total : 100, last = done >= p->total;
    char eta[32], count[32], tris[32];
    cli_format_duration(per * (p->total - done), eta, sizeof eta);
    cli_format_count(particles, count, sizeof count);
    cli_format_count(triangles, tris, sizeof tris);
    if (p->tty) {
        if (!last && now - p->last < 0.1) return;
        fprintf(stderr,
                "\rpbf mesh: %d/%d (frame %d)  %s particles -> %s triangles  %.2f s/frame  "
                "ETA %s\033[K",
                done, p->total, frame, count, tris, per, eta);
        p->drawn = 1;
    } else {
        if (!last && percent < p->next_percent && now - p->last < 5.0) return;
        fprintf(stderr,
                "pbf mesh: %d/%d (%d%%) frame %d  %s particles -> %s triangles  "
                "%.2f s/frame  ETA %s\n",
                done, p->total, percent, frame, count, tris, per, eta);
        while (p->next_percent <= percent) p->next_percent += 10;
    }
    fflush(stderr);
    p->last = now;
}

static int parse_range(cli_parser *p, const char *v, int *first, int *last) {
    const char *colon = strchr(v, ':');
    char *end;
    if (colon == NULL) return cli_usage_error(p, "--frames expects A:B, A: or :B, got '%s'", v);
    *first = 0;
    *last = 100000000;
    if (colon != v) {
        long a = strtol(v, &end, 10);
        if (end != colon || a < 0 || a > 100000000)
            return cli_usage_error(p, "--frames: bad first frame in '%s'", v);
        *first = (int)a;
    }
    if (colon[1] != '\0') {
        long b = strtol(colon + 1, &end, 10);
        if (*end != '\0' || b < 0 || b > 100000000)
            return cli_usage_error(p, "--frames: bad last frame in '%s'", v);
        *last = (int)b;
    }
    if (*first > *last) return cli_usage_error(p, "--frames: %d comes after %d", *first, *last);
    return 0;
}

int cmd_mesh(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "mesh", mesh_synopsis, argc, argv);
    mesh_settings set;
    mesh_settings_init(&set);
    const char *dir = NULL, *a, *v;
    int help = 0, quiet = 0, first = 0, last = 100000000, threads = 0;
    while ((a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h"))
            help = 1;
        else if (cli_flag(&p, "--quiet", "-q"))
            quiet = 1;
        else if (mesh_settings_option(&set, &p)) {
        } else if (cli_option(&p, "--out", &v)) {
            if (v[0] == '\0') cli_usage_error(&p, "--out needs a folder");
            set.out_dir = v;
        } else if (cli_option(&p, "--frames", &v)) {
            parse_range(&p, v, &first, &last);
        } else if (cli_option(&p, "--threads", &v)) {
            cli_parse_int(&p, "--threads", v, 0, 4096, &threads);
        } else if (p.failed) {
            break;
        } else {
            cli_operand(&p, a, "run folder", &dir);
        }
        if (p.failed) break;
    }
    if (p.failed) return CLI_EXIT_USAGE;
    if (help) {
        printf("%s\n", mesh_synopsis);
        printf(mesh_help, mesh_settings_help);
        return CLI_EXIT_OK;
    }
    if (dir == NULL) return cli_usage_error(&p, "which run folder? (the --out of `pbf run`)");
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_usage_error(&p, "'%s' is a file; give the run folder that holds frame_NNNNN.ply",
                               dir);
    set.def.threads = threads;
    if (mesh_settings_check(&set, "--mesh-format") != 0) return 1;

    frame_file *files = NULL;
    int count = 0, rc = frame_files_list(dir, &files, &count);
    if (rc != 0) return rc;
    int selected = 0;
    for (int i = 0; i < count; ++i) selected += files[i].number >= first && files[i].number <= last;
    if (selected == 0) {
        rc = cli_error("%s: no frame in %d:%d (the folder has frames %d to %d)", dir, first, last,
                       files[0].number, files[count - 1].number);
        frame_files_free(files, count);
        return rc;
    }
    /* The particle radius: --radius, else the run's scene.json, else estimated. The series'
     * times come from stats.csv; frame / fps only for a row it lacks (pbf's default fps when
     * the scene was not read). */
    char json[4096];
    double fps = 60.0;
    snprintf(json, sizeof json, "%s/scene.json", dir);
    if (set.def.particle_radius <= 0.0f && stat(json, &st) == 0) {
        pbf_scene *scene = calloc(1, sizeof *scene);
        if (scene == NULL)
            rc = cli_error("out of memory");
        else if ((rc = cli_load_scene(json, NULL, 0, scene)) == 0) {
            set.def.particle_radius = scene->world.particle_radius;
            fps = scene->fps;
        }
        free(scene);
    }
    const char *out = set.out_dir != NULL ? set.out_dir : dir;
    if (rc == 0 && set.out_dir != NULL && cli_make_dirs(set.out_dir) != 0)
        rc = cli_error("--out %s: cannot create the folder", set.out_dir);

    char err[PBF_ERROR_SIZE];
    pbf_particles parts;
    memset(&parts, 0, sizeof parts);
    mesh_progress bar = {isatty(fileno(stderr)), selected, 10, 0, cli_now(), cli_now()};
    double sum_ms[5] = {0, 0, 0, 0, 0};
    long long sum_tris = 0, sum_particles = 0;
    size_t peak = 0;
    int done = 0, interrupted = 0;
    const int installed = rc == 0;
    if (installed) interrupt_install();
    for (int i = 0; i < count && rc == 0; ++i) {
        if (files[i].number < first || files[i].number > last) continue;
        if ((interrupted = interrupt_pending()) != 0) break;
        pbf_particles_free(&parts);
        if (pbf_export_read(files[i].path, &parts, err, sizeof err) != PBF_OK) {
            rc = cli_error("%s", err);
            break;
        }
        if (set.def.particle_radius <= 0.0f) {
            set.def.particle_radius = particles_estimate_radius(&parts);
            if (!quiet)
                fprintf(stderr,
                        "pbf mesh: no scene.json in %s: particle radius %.4g m (estimated "
                        "from frame %d; --radius R to set it)\n",
                        dir, (double)set.def.particle_radius, files[i].number);
        }
        if (done == 0 && !quiet)
            fprintf(stderr,
                    "pbf mesh: %d frame%s of %s, r = %.4g m, %s kernel, cell %.3g r -> %s\n",
                    selected, selected == 1 ? "" : "s", dir, (double)set.def.particle_radius,
                    set.def.kernel == PBF_SURFACE_ANISOTROPIC ? "anisotropic" : "isotropic",
                    (double)set.def.cell_size, out);
        pbf_surface_stats stats;
        int triangles = 0;
        double files_ms = 0.0;
        if (mesh_frame(&set, parts.positions, parts.count, out, files[i].number, &stats, &triangles,
                       &files_ms, err, sizeof err) != 0) {
            if (bar.drawn) fputc('\n', stderr);
            rc = cli_error("%s: %s", files[i].path, err);
            break;
        }
        ++done;
        sum_ms[0] += stats.total_ms, sum_ms[1] += stats.anisotropy_ms;
        sum_ms[2] += stats.field_ms, sum_ms[3] += stats.mesh_ms, sum_ms[4] += files_ms;
        sum_tris += triangles;
        sum_particles += parts.count;
        if (stats.peak_bytes > peak) peak = stats.peak_bytes;
        if (!quiet) progress_line(&bar, done, files[i].number, parts.count, triangles);
    }
    if (bar.drawn) fputc('\n', stderr);
    if (installed) interrupt_restore();
    /* meshed into the run folder: its series name the surfaces too (surfaces.ply.series, and
     * frames.pvd with vtu), with the run's times */
    snprintf(json, sizeof json, "%s/stats.csv", dir);
    if (done > 0 && set.out_dir == NULL && stat(json, &st) == 0) {
        series_output series;
        series_output_init(&series, dir);
        if (series_output_resume(&series, files[count - 1].number, fps, err, sizeof err) != 0 &&
            rc == 0)
            rc = cli_error("%s", err);
        series_output_free(&series);
    }
    if (!quiet && done > 0) {
        char bytes[32];
        char ext[32];
        printf("pbf mesh: %d mesh%s in %s (surface_NNNNN.%s)\n", done, done == 1 ? "" : "es", out,
               mesh_formats_text(set.formats, ext, sizeof ext));
        printf("  per frame        %.0f particles, %.0f triangles\n", (double)sum_particles / done,
               (double)sum_tris / done);
        printf("  time per frame   %.1f ms (anisotropy %.1f, field and marching cubes %.1f, "
               "smoothing and normals %.1f)\n",
               sum_ms[0] / done, sum_ms[1] / done, sum_ms[2] / done, sum_ms[3] / done);
        printf("  files per frame  %.1f ms (writing%s)\n", sum_ms[4] / done,
               (set.formats & MESH_VDB) ? "; the .vdb's level set included" : "");
        printf("  working memory   %s at most\n",
               cli_format_bytes((double)peak, bytes, sizeof bytes));
    }
    if (interrupted) {
        fprintf(stderr, "pbf mesh: stopped after %d of %d frames\n", done, selected);
        if (rc == 0) rc = 128 + interrupted;
    }
    pbf_particles_free(&parts);
    frame_files_free(files, count);
    return rc;
}
