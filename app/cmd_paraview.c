/* pbf paraview RUN_DIR: opens a run folder in ParaView (the particles coloured by speed, the
 * mesh solids, the surfaces, the diffuse particles, from the scene's camera), or renders one
 * frame headless. The work is ParaView's own Python, in the shipped script pbf_paraview.py,
 * which this command finds and runs with pvbatch (under xvfb-run where there is one: pvbatch's
 * own off-screen mode aborts in Debian's build). Debian's `paraview` GUI has no Python, so the
 * interactive case saves a state file with pvbatch and opens it with `paraview --state`. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

#ifndef PBF_PARAVIEW_SCRIPT_SOURCE
#define PBF_PARAVIEW_SCRIPT_SOURCE ""
#endif
#define SCRIPT_NAME "pbf_paraview.py"
#define SCRIPT_EXPLAINED 3 /* its exit status after explaining a refusal (EXIT_EXPLAINED) */

static const char synopsis[] =
    "usage: pbf paraview RUN_DIR [--render OUT.png] [--frame N] [--size WxH] [--state OUT.pvsm]\n"
    "                    [--source auto|pvd|vtk|ply]\n";

static const char help[] =
    "Opens a run folder in ParaView: the particles coloured by speed, the mesh solids, the\n"
    "fluid's surfaces (--mesh) and the diffuse particles, at the run's times in seconds, from\n"
    "the scene's camera. Reads frames.pvd (--format vtu) or the .series files of the .vtk/.ply\n"
    "series. Needs ParaView with Python (Debian: paraview, python3-paraview; xvfb for --render).\n"
    "\n"
    "options:\n"
    "  --render OUT.png   render one frame headless to a PNG instead of opening a window\n"
    "  --frame N          the frame to show (default: the last)\n"
    "  --size WxH         picture size (default 1280x720)\n"
    "  --state OUT.pvsm   where to save the ParaView state (default: RUN_DIR/pbf.pvsm when a\n"
    "                     window opens; with --render, none unless given)\n"
    "  --source KIND      auto (default: frames.pvd when present, else the .vtk series, else\n"
    "                     the .ply), pvd, vtk or ply\n"
    "  -h, --help         this text\n"
    "It prints one line `pbf_paraview: {json}` with the time steps it found and, per part,\n"
    "the point and cell counts and the arrays of the frame shown.\n"
    "\n"
    "examples:\n"
    "  pbf run scenes/floating.json --format vtu --frames 120 --out out/floating\n"
    "  pbf paraview out/floating\n"
    "  pbf paraview out/floating --render floating.png --frame 60\n";

/* Whether `path` names a regular file. */
static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The program `name` on PATH, into buf; 0 when there is none. */
static int find_program(const char *name, char *buf, size_t size) {
    const char *path = getenv("PATH");
    if (path == NULL) path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, size, "%.*s/%s", (int)len, len ? path : ".", name);
        if (access(buf, X_OK) == 0 && is_file(buf)) return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

/* The shipped script: $PBF_PARAVIEW_SCRIPT, then <prefix>/share/pbf/ beside an installed
 * bin/pbf, then the source tree this binary was built from. */
static int find_script(char *buf, size_t size) {
    const char *env = getenv("PBF_PARAVIEW_SCRIPT");
    if (env != NULL && env[0] != '\0') {
        snprintf(buf, size, "%s", env);
        return is_file(buf);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(buf, size, "%s/../share/pbf/%s", exe, SCRIPT_NAME);
            if (is_file(buf)) return 1;
        }
    }
    snprintf(buf, size, "%s", PBF_PARAVIEW_SCRIPT_SOURCE);
    return buf[0] != '\0' && is_file(buf);
}

/* Whether the folder that would hold `path` takes a new file; prints why not. */
static int writable_folder(const char *option, const char *path) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK) == 0) return 1;
    cli_error("%s %s: cannot write into '%s': %s", option, path, dir, strerror(errno));
    return 0;
}

/* Runs argv (argv[0] looked up on PATH) and waits; returns its exit status, or CLI_EXIT_ERROR
 * with a message when it cannot start or dies of a signal. */
static int run_program(char *const *argv) {
    pid_t pid;
    int e = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (e != 0) return cli_error("cannot run %s: %s", argv[0], strerror(e));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return cli_error("waiting for %s: %s", argv[0], strerror(errno));
    if (WIFSIGNALED(status))
        return cli_error("%s was stopped by signal %d", argv[0], WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : CLI_EXIT_ERROR;
}

int cmd_paraview(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "paraview", synopsis, argc, argv);
    const char *dir = NULL, *render = NULL, *state = NULL, *size = NULL, *source = NULL, *a, *v;
    const char *frame_text = NULL;
    int frame = 0, want_help = 0;
    while ((a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h"))
            want_help = 1;
        else if (cli_option(&p, "--render", &v))
            render = v;
        else if (cli_option(&p, "--state", &v))
            state = v;
        else if (cli_option(&p, "--size", &v)) {
            int w = 0, h = 0, end = 0;
            if (sscanf(v, "%dx%d%n", &w, &h, &end) != 2 || v[end] != '\0' || w < 16 || h < 16 ||
                w > 8192 || h > 8192)
                cli_usage_error(&p, "--size expects WxH, 16..8192 pixels each, got '%s'", v);
            size = v;
        } else if (cli_option(&p, "--frame", &v)) {
            if (cli_parse_int(&p, "--frame", v, 0, 100000000, &frame)) frame_text = v;
        } else if (cli_option(&p, "--source", &v)) {
            if (strcmp(v, "auto") != 0 && strcmp(v, "pvd") != 0 && strcmp(v, "vtk") != 0 &&
                strcmp(v, "ply") != 0)
                cli_usage_error(&p, "--source expects auto, pvd, vtk or ply, got '%s'", v);
            source = v;
        } else if (p.failed) {
            break;
        } else {
            cli_operand(&p, a, "run folder", &dir);
        }
        if (p.failed) break;
    }
    if (p.failed) return CLI_EXIT_USAGE;
    if (want_help) {
        printf("%s\n%s", synopsis, help);
        return CLI_EXIT_OK;
    }
    if (dir == NULL) return cli_usage_error(&p, "which run folder? (pbf paraview RUN_DIR)");
    struct stat st;
    if (stat(dir, &st) != 0) return cli_error("%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return cli_error("%s: not a folder (expected a pbf run folder)", dir);

    /* a run folder: its series (app/series_output.h), before ParaView takes seconds to start */
    static const char *const series[] = {"frames.pvd", "frames.vtk.series", "frames.ply.series"};
    int found = 0;
    for (size_t i = 0; i < sizeof series / sizeof series[0] && !found; ++i) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", dir, series[i]);
        found = is_file(path);
    }
    if (!found)
        return cli_error("%s: no frames.pvd, frames.vtk.series or frames.ply.series: not a pbf run "
                         "folder, or one written before pbf wrote them (pbf run --format vtu, vtk "
                         "or ply writes them)",
                         dir);
    /* the state file that the window opens */
    char default_state[PATH_MAX + 16];
    int open_window = render == NULL && state == NULL;
    if (open_window) {
        snprintf(default_state, sizeof default_state, "%s/pbf.pvsm", dir);
        state = default_state;
    }

    const char *display = getenv("DISPLAY");
    int has_display = display != NULL && display[0] != '\0';
    if (open_window && !has_display)
        return cli_error("no display to open ParaView's window on: render a frame with --render "
                         "OUT.png, or save the state with --state OUT.pvsm and open it elsewhere");

    /* the picture and the state are written where asked: a folder that does not take them is
     * an error now, not after ParaView's start */
    if (render != NULL && !writable_folder("--render", render)) return CLI_EXIT_ERROR;
    if (state != NULL && !writable_folder(open_window ? "the state file" : "--state", state)) {
        if (open_window) fprintf(stderr, "pbf paraview: save it elsewhere with --state FILE\n");
        return CLI_EXIT_ERROR;
    }

    char script[PATH_MAX + 64], pvbatch[PATH_MAX + 64], xvfb[PATH_MAX + 64], gui[PATH_MAX + 64];
    if (!find_script(script, sizeof script))
        return cli_error("cannot find %s (set PBF_PARAVIEW_SCRIPT to its path)", SCRIPT_NAME);
    if (!find_program("pvbatch", pvbatch, sizeof pvbatch))
        return cli_error("pvbatch not found: install ParaView with Python (Debian: apt-get install "
                         "paraview python3-paraview xvfb)");
    if (open_window && !find_program("paraview", gui, sizeof gui))
        return cli_error("paraview not found: install it (Debian: apt-get install paraview), or "
                         "render a frame with --render OUT.png");
    /* xvfb-run -a -s "-screen 0 WxHx24" pvbatch SCRIPT DIR [options] */
    const char *args[32];
    int n = 0, under_xvfb = find_program("xvfb-run", xvfb, sizeof xvfb);
    if (under_xvfb) {
        args[n++] = xvfb;
        args[n++] = "-a";
        args[n++] = "-s";
        args[n++] = "-screen 0 1920x1080x24"; /* a true-colour screen for OpenGL */
    }
    args[n++] = pvbatch;
    args[n++] = script;
    args[n++] = dir;
    if (render != NULL) args[n++] = "--render", args[n++] = render;
    if (state != NULL) args[n++] = "--state", args[n++] = state;
    if (frame_text != NULL) args[n++] = "--frame", args[n++] = frame_text;
    if (size != NULL) args[n++] = "--size", args[n++] = size;
    if (source != NULL) args[n++] = "--source", args[n++] = source;
    args[n] = NULL;
    /* The script explains its own refusals (exit status 3). Anything else is pvbatch's crash or
     * xvfb-run's failure: `xvfb-run -a` picks a free display by looking, and two started at
     * once can pick the same one (pvbatch then aborts: "bad X server connection"), so that is
     * tried again, twice at most. */
    int rc = 0;
    for (int attempt = 1; attempt <= 3; ++attempt) {
        rc = run_program((char *const *)args);
        if (rc == 0 || rc == SCRIPT_EXPLAINED || rc == 2) break; /* 2: its usage error */
        fprintf(stderr, "pbf: pvbatch %s failed (exit status %d)%s\n", script, rc,
                under_xvfb && attempt < 3 ? "; trying again on another X display" : "");
        if (!under_xvfb) break;
    }
    if (rc != 0) return CLI_EXIT_ERROR;
    if (!open_window) return CLI_EXIT_OK;
    char state_arg[PATH_MAX + 32];
    snprintf(state_arg, sizeof state_arg, "--state=%s", state);
    char *const window[] = {gui, state_arg, NULL};
    rc = run_program(window);
    return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
}
