/* `pbf run`: simulate a scene, write one particle file per frame, stats.csv and scene.json.
 *
 * This file reads the command line; the loop itself (run_simulation) is app/run.c, shared with
 * `pbf resume` and `pbf validate`. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run_comm.h"
#include "mesh_output.h"
#include "run.h"
#ifdef PBF_APP_HAVE_RENDER
#include "render_run.h"
#endif

static const char run_synopsis[] =
    "usage: pbf run [SCENE] [--frames N | --time T] [--out DIR] [--format ply,vtk,vtu,none]\n"
    "               [--threads N] [--set key=value ...] [--checkpoint-every N] [--quiet]\n"
    "               [--backend cpu|cuda] [--mesh] [--balance R]\n"
#ifdef PBF_APP_HAVE_RENDER
    "               [--video FILE] [--png DIR] [--resolution WxH] [--look fluid|spheres]\n"
#endif
    ;

static const char run_help[] =
    "Simulates SCENE (a JSON file; without it the built-in dam break) and writes, into the\n"
    "output folder, one particle file per frame (frame_00000.ply is the initial state),\n"
    "stats.csv (one row per frame) and scene.json (every parameter of the run).\n"
    "\n"
    "options:\n"
    "  --frames N          frames to simulate after frame 0 (default: the scene's time.frames)\n"
    "  --time T            simulated seconds instead of a frame count (frames = ceil(T * fps))\n"
    "  --out DIR           output folder (default: the scene's output folder, out/<name>)\n"
    "  --format LIST       ply, vtk, vtu (XML VTK + frames.pvd), a list such as ply,vtu,\n"
    "                      or none (default: the scene's, usually ply)\n"
    "  --threads N         CPU threads, 0 = all cores (default: the scene's world.threads)\n"
    "  --backend NAME      cpu or cuda (an NVIDIA GPU; fails at once where none is usable);\n"
    "                      default: the scene's solver.backend\n"
    "  --set KEY=VALUE     override a scene parameter before validation; repeatable\n"
    "                      (e.g. --set solver.iterations=6; the value is JSON)\n"
    "  --checkpoint-every N  save the whole state to DIR/checkpoint.pbfck every N frames (and\n"
    "                      at Ctrl-C); `pbf resume DIR` goes on from it bit-identically\n"
    "  --balance R         under mpirun: move the slabs' cuts when a rank holds more than R\n"
    "                      times the mean particle count, checked every frame (default 1.2;\n"
    "                      0: the cuts stay; docs/mpi.md)\n"
    "  --quiet, -q         no progress line and no summary\n"
    "  --help, -h          this help\n"
    "\n"
    "Ctrl-C finishes the frame in progress, writes its files and stops with exit status 130;\n"
    "the folder stays valid (stats.csv has one row per frame file). A second Ctrl-C stops at "
    "once.\n"
    "An unstable simulation (NaN, or a particle far beyond the CFL speed limit) stops with exit\n"
    "status 1, a message naming the step and the particle, and every frame written so far intact.\n"
    "Frame files of an earlier run in the same folder are removed first.\n"
    "\n"
    "examples:\n"
    "  pbf run --frames 60 --out out/dam\n"
    "  pbf run scenes/dam_break.json --time 2 --format ply,vtk --threads 8\n"
    "  pbf run scenes/dam_break.json --set solver.iterations=6 --set time.fps=30\n";

/* ---- the command --------------------------------------------------------------------------- */

/* The one place where per-frame work beyond the particle files is wired in: a renderer's
 * `--png DIR` / `--video FILE` sets hooks->on_frame (and on_start / on_finish) here from
 * options parsed in cmd_run. */
static void make_hooks(const run_options *o, run_hooks *hooks) {
    (void)o;
    memset(hooks, 0, sizeof *hooks);
}

int cmd_run(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "run", run_synopsis, argc, argv);
    run_options o;
    run_options_init(&o);
    cli_overrides sets = {NULL, 0, 0};
    int rc = CLI_EXIT_OK, help = 0;
    mesh_run *mesh = mesh_run_create(); /* --mesh: app/mesh_output.c */
    if (mesh == NULL) return cli_error("out of memory");
#ifdef PBF_APP_HAVE_RENDER
    render_run *render = render_run_create();
    if (render == NULL) return cli_error("out of memory");
#endif
    const char *a, *v;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--quiet", "-q")) {
            o.quiet = 1;
        } else if (cli_option(&p, "--frames", &v)) {
            if (o.time >= 0.0)
                rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_int(&p, "--frames", v, 0, 100000000, &o.frames))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--time", &v)) {
            if (o.frames >= 0)
                rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_double(&p, "--time", v, 0.0, 1e7, &o.time))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--out", &v)) {
            if (v[0] == '\0') rc = cli_usage_error(&p, "--out needs a folder");
            o.out_dir = v;
        } else if (cli_option(&p, "--format", &v)) {
            unsigned f = 0;
            if (!cli_parse_formats(&p, "--format", v, &f)) rc = CLI_EXIT_USAGE;
            o.formats = (int)f;
        } else if (cli_option(&p, "--threads", &v)) {
            if (!cli_parse_int(&p, "--threads", v, 0, 4096, &o.threads)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--backend", &v)) {
            if (strcmp(v, "cpu") == 0)
                o.backend = PBF_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0)
                o.backend = PBF_BACKEND_CUDA;
            else
                rc = cli_usage_error(&p, "--backend expects cpu or cuda, got '%s'", v);
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &sets);
        } else if (cli_option(&p, "--checkpoint-every", &v)) {
            if (!cli_parse_int(&p, "--checkpoint-every", v, 0, 100000000, &o.checkpoint_every))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--balance", &v)) {
            if (!cli_parse_double(&p, "--balance", v, 0.0, 1000.0, &o.balance)) rc = CLI_EXIT_USAGE;
        } else if (mesh_run_option(mesh, &p)) {
            if (p.failed) rc = CLI_EXIT_USAGE;
#ifdef PBF_APP_HAVE_RENDER
        } else if (render_run_option(render, &p)) {
            if (p.failed) rc = CLI_EXIT_USAGE;
#endif
        } else if (p.failed) {
            rc = CLI_EXIT_USAGE;
        } else {
            rc = cli_operand(&p, a, "scene", &o.scene_path);
        }
    }
    if (p.failed) rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", run_synopsis, run_help);
#ifdef PBF_APP_HAVE_RENDER
        printf("\n%s", render_run_help);
#endif
        printf("\n%s\n%s", mesh_run_help, mesh_settings_help);
    } else if (rc == CLI_EXIT_OK) {
        o.comm = run_comm_get(); /* under mpirun: split over the ranks (docs/mpi.md) */
        o.sets = sets.items;
        o.set_count = sets.count;
        run_hooks hooks;
        make_hooks(&o, &hooks);
#ifdef PBF_APP_HAVE_RENDER
        render_run_hooks(render, o.quiet, &hooks);
#endif
        mesh_run_hooks(mesh, o.quiet, &hooks);
        rc = run_simulation(&o, &hooks);
    }
#ifdef PBF_APP_HAVE_RENDER
    render_run_destroy(render);
#endif
    mesh_run_destroy(mesh);
    cli_overrides_free(&sets);
    return rc;
}
