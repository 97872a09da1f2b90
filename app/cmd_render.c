/* `pbf render EXPORT_DIR`: renders the particle files of a run after the fact; and the pieces
 * that `pbf run --png/--video` and `pbf bench --render` use to render while simulating
 * (render_run.h). Frames go to PNG files (frame_00042.png) and/or an H.264 MP4 through ffmpeg;
 * both are written atomically (a temporary name renamed into place). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "frame_files.h"
#include "interrupt.h"
#include "pbf/export.h"
#include "pbf/geometry.h"
#include "pbf/render.h"
#include "pbf/render_cuda.h"
#include "pbf/surface.h"
#include "progress.h"
#include "render_meshes.h"
#include "render_diffuse.h"
#include "render_phases.h"
#include "render_run.h"

/* ---- settings shared by the commands ---------------------------------------------------------- */

typedef struct render_settings {
    const char *png_dir; /* NULL: no PNG frames */
    const char *video; /* NULL: no video */
    int width, height;
    pbf_render_look look;
    pbf_render_splat splats; /* the fluid look's depth splats: ellipsoids (default) or spheres */
    pbf_render_color color;
    int crf;
} render_settings;

static void settings_init(render_settings *s) {
    memset(s, 0, sizeof *s);
    s->width = 1280;
    s->height = 720;
    s->look = PBF_LOOK_FLUID;
    s->splats = PBF_SPLAT_ELLIPSOID;
    s->color = PBF_COLOR_UNIFORM;
    s->crf = 20;
}

/* Takes one of the rendering options; 1 when the current argument was one. */
static int settings_option(render_settings *s, cli_parser *p) {
    const char *v;
    if (cli_option(p, "--png", &v)) {
        if (v[0] == '\0') cli_usage_error(p, "--png needs a folder");
        s->png_dir = v;
    } else if (cli_option(p, "--video", &v)) {
        if (v[0] == '\0') cli_usage_error(p, "--video needs a file name");
        s->video = v;
    } else if (cli_option(p, "--resolution", &v)) {
        int w = 0, h = 0, n = 0;
        if (sscanf(v, "%dx%d%n", &w, &h, &n) != 2 || v[n] != '\0' || w < 16 || h < 16 || w > 8192 ||
            h > 8192)
            cli_usage_error(p, "--resolution expects WxH between 16x16 and 8192x8192, got '%s'", v);
        s->width = w;
        s->height = h;
    } else if (cli_option(p, "--look", &v)) {
        if (strcmp(v, "fluid") == 0)
            s->look = PBF_LOOK_FLUID;
        else if (strcmp(v, "spheres") == 0)
            s->look = PBF_LOOK_SPHERES;
        else
            cli_usage_error(p, "--look expects fluid or spheres, got '%s'", v);
    } else if (cli_option(p, "--color", &v)) {
        if (strcmp(v, "uniform") == 0)
            s->color = PBF_COLOR_UNIFORM;
        else if (strcmp(v, "speed") == 0)
            s->color = PBF_COLOR_SPEED;
        else if (strcmp(v, "density") == 0)
            s->color = PBF_COLOR_DENSITY;
        else
            cli_usage_error(p, "--color expects uniform, speed or density, got '%s'", v);
    } else if (cli_option(p, "--splats", &v)) {
        if (strcmp(v, "ellipsoid") == 0)
            s->splats = PBF_SPLAT_ELLIPSOID;
        else if (strcmp(v, "sphere") == 0)
            s->splats = PBF_SPLAT_SPHERE;
        else
            cli_usage_error(p, "--splats expects ellipsoid or sphere, got '%s'", v);
    } else if (cli_option(p, "--crf", &v)) {
        cli_parse_int(p, "--crf", v, 0, 51, &s->crf);
    } else {
        return 0;
    }
    return 1;
}

const char render_run_help[] =
    "rendering (while simulating; see docs/rendering.md):\n"
    "  --video FILE        H.264 MP4 of every frame (needs ffmpeg on PATH)\n"
    "  --png DIR           one PNG per frame, DIR/frame_00000.png ...\n"
    "  --resolution WxH    image size (default 1280x720)\n"
    "  --look LOOK         fluid (screen-space surface, default) or spheres\n"
    "  --color MODE        spheres look: uniform (default), speed or density\n"
    "  --splats KIND       fluid look: ellipsoid (anisotropic, default) or sphere\n"
    "  --crf N             video quality, 0..51, lower is better (default 20)\n";

/* ---- a frame sink: one renderer, a PNG folder and a video --------------------------------------- */

typedef struct frame_sink {
    render_settings set;
    pbf_gl_context *ctx;
    pbf_renderer *renderer;
    pbf_video *video;
    uint8_t *rgba;
    int frames; /* frames rendered */
    double render_s; /* wall-clock seconds spent drawing and reading back */
    pbf_render_timings passes; /* GPU ms per pass, summed over the frames */
    int open;
} frame_sink;

/* Creates the GL context, the renderer, the PNG folder and starts ffmpeg. Prints the error. */
static int sink_open(frame_sink *s, const render_settings *set, double fps) {
    memset(s, 0, sizeof *s);
    s->set = *set;
    char err[PBF_ERROR_SIZE];
    if (set->png_dir != NULL) {
        int e = cli_make_dirs(set->png_dir);
        if (e != 0) return cli_error("--png %s: %s", set->png_dir, strerror(e));
    }
    if (pbf_gl_context_create_headless(&s->ctx, err, sizeof err) != PBF_OK)
        return cli_error("%s", err);
    pbf_render_def def = pbf_default_render_def();
    def.width = set->width;
    def.height = set->height;
    def.look = set->look;
    def.fluid_splats = set->splats;
    def.color = set->color;
    if (pbf_renderer_create(&def, &s->renderer, err, sizeof err) != PBF_OK) {
        pbf_gl_context_destroy(s->ctx);
        return cli_error("%s", err);
    }
    s->rgba = malloc((size_t)set->width * (size_t)set->height * 4);
    if (s->rgba == NULL) {
        pbf_renderer_destroy(s->renderer);
        pbf_gl_context_destroy(s->ctx);
        return cli_error("out of memory");
    }
    if (set->video != NULL && pbf_video_open(set->video, set->width, set->height, fps, set->crf,
                                             &s->video, err, sizeof err) != PBF_OK) {
        free(s->rgba);
        pbf_renderer_destroy(s->renderer);
        pbf_gl_context_destroy(s->ctx);
        return cli_error("%s", err);
    }
    s->open = 1;
    return 0;
}

/* Renders one frame to the PNG folder and the video. Returns 0, or 1 with err set. */
static int sink_frame(frame_sink *s, const pbf_render_scene *scene, int frame, char *err,
                      size_t err_size) {
    double t0 = cli_now();
    if (pbf_renderer_draw(s->renderer, scene, err, err_size) != PBF_OK ||
        pbf_renderer_read_rgba(s->renderer, s->rgba, err, err_size) != PBF_OK)
        return 1;
    s->render_s += cli_now() - t0;
    pbf_render_timings t = pbf_renderer_timings(s->renderer);
    s->passes.background_ms += t.background_ms;
    s->passes.depth_ms += t.depth_ms;
    s->passes.thickness_ms += t.thickness_ms;
    s->passes.smooth_ms += t.smooth_ms;
    s->passes.normal_ms += t.normal_ms;
    s->passes.shade_ms += t.shade_ms;
    if (s->set.png_dir != NULL) {
        char path[4096];
        snprintf(path, sizeof path, "%s/frame_%05d.png", s->set.png_dir, frame);
        if (pbf_png_write(path, s->rgba, s->set.width, s->set.height, err, err_size) != PBF_OK)
            return 1;
    }
    if (s->video != NULL && pbf_video_write(s->video, s->rgba, err, err_size) != PBF_OK) {
        /* ffmpeg is gone: what it wrote is not a video. */
        pbf_video_abort(s->video);
        s->video = NULL;
        return 1;
    }
    ++s->frames;
    return 0;
}

/* Finishes the video (with the frames so far) and frees everything. Prints what was written,
 * or the error; returns 0 or 1. */
static int sink_close(frame_sink *s, const char *command, int quiet) {
    if (!s->open) return 0;
    int rc = 0;
    char err[PBF_ERROR_SIZE];
    if (s->video != NULL) {
        if (s->frames == 0) {
            pbf_video_abort(s->video);
        } else if (pbf_video_close(s->video, err, sizeof err) != PBF_OK) {
            rc = cli_error("%s", err);
        } else if (!quiet) {
            fprintf(stderr, "pbf %s: wrote %s (%d frames, %dx%d)\n", command, s->set.video,
                    s->frames, s->set.width, s->set.height);
        }
        s->video = NULL;
    }
    if (!quiet && s->set.png_dir != NULL && s->frames > 0)
        fprintf(stderr, "pbf %s: wrote %d PNG frames to %s\n", command, s->frames, s->set.png_dir);
    if (!quiet && s->frames > 0) {
        const pbf_render_timings *t = &s->passes;
        double n = s->frames;
        fprintf(stderr,
                "pbf %s: rendering took %.1f ms per frame (passes: sky %.1f, depth %.1f, "
                "thickness %.1f, smoothing %.1f, normals %.1f, shading %.1f; %s)\n",
                command, 1000.0 * s->render_s / n, t->background_ms / n, t->depth_ms / n,
                t->thickness_ms / n, t->smooth_ms / n, t->normal_ms / n, t->shade_ms / n,
                pbf_gl_context_description(s->ctx));
    }
    free(s->rgba);
    pbf_renderer_destroy(s->renderer);
    pbf_gl_context_destroy(s->ctx);
    s->open = 0;
    return rc;
}

/* ---- `pbf run --png/--video`: hooks ----------------------------------------------------------- */

struct render_run {
    render_settings set;
    frame_sink sink;
    const pbf_scene *scene;
    pbf_collider_def *colliders;
    int collider_count;
    pbf_collider_def tool; /* the tool's sphere of the frame being drawn */
    pbf_render_mesh meshes[PBF_MAX_MESHES]; /* the mesh solids, posed for the frame drawn */
    render_diffuse diffuse; /* spray, foam and bubbles of the frame drawn */
    uint8_t *phases; /* split over MPI ranks: the gathered particles' fluids, as drawn */
    int phase_capacity;
    int closed;
    int quiet;
};

render_run *render_run_create(void) {
    render_run *rr = calloc(1, sizeof *rr);
    if (rr != NULL) settings_init(&rr->set);
    return rr;
}

void render_run_destroy(render_run *rr) {
    if (rr == NULL) return;
    free(rr->colliders);
    render_diffuse_free(&rr->diffuse);
    free(rr->phases);
    free(rr);
}

int render_run_option(render_run *rr, cli_parser *p) { return settings_option(&rr->set, p); }

static int run_on_start(const pbf_world *world, const pbf_scene *scene, void *user) {
    render_run *rr = user;
    rr->scene = scene;
    rr->collider_count = pbf_world_collider_count(world);
    if (rr->collider_count > 0) {
        rr->colliders = malloc((size_t)rr->collider_count * sizeof *rr->colliders);
        if (rr->colliders == NULL) return cli_error("out of memory");
        for (int i = 0; i < rr->collider_count; ++i)
            rr->colliders[i] = pbf_world_get_collider(world, i);
    }
    return sink_open(&rr->sink, &rr->set, scene->fps);
}

/* What the renderer needs from a world, straight from its read-only view (no copy); with
 * particles 0, all but the particles (CUDA interop fills them). gathered: the particles to draw
 * instead of the world's (a run split over MPI ranks: the whole world's on rank 0), or NULL. */
static pbf_render_scene world_scene_of(const pbf_world *world, const pbf_scene *scene,
                                       const pbf_collider_def *colliders, int collider_count,
                                       pbf_collider_def *tool, pbf_render_mesh *meshes,
                                       int particles, const pbf_particles *gathered) {
    pbf_render_scene s = pbf_default_render_scene();
    pbf_particle_view v;
    memset(&v, 0, sizeof v);
    if (particles && gathered != NULL) {
        v.count = gathered->count;
        v.positions = gathered->positions;
        v.velocities = gathered->velocities;
        v.densities = gathered->densities;
    } else if (particles) {
        v = pbf_world_view(world);
    }
    const pbf_world_def *def = pbf_world_get_def(world);
    s.particle_count = v.count;
    s.positions = v.positions;
    s.velocities = v.velocities;
    s.densities = v.densities;
    s.particle_radius = def->particle_radius;
    s.rest_density = def->rest_density;
    pbf_world_get_domain(world, &s.domain_min, &s.domain_max);
    s.collider_count = collider_count;
    s.colliders = colliders;
    if (tool != NULL && pbf_world_has_tool(world)) { /* the tool (docs/tool.md), drawn solid */
        pbf_tool_state ts = pbf_tool_get_state(world);
        *tool = pbf_default_collider_def();
        tool->type = PBF_COLLIDER_SPHERE;
        tool->center = ts.position;
        tool->radius = ts.radius;
        s.tool = tool;
    }
    s.mesh_count = render_meshes_from_world(world, meshes);
    s.meshes = meshes;
    s.camera = scene->camera;
    if (particles && render_phases_from_scene(scene, &s) > 0) /* several fluids: own tints */
        s.phases = v.phases;
    return s;
}

static pbf_render_scene world_scene(const pbf_world *world, const pbf_scene *scene,
                                    const pbf_collider_def *colliders, int collider_count,
                                    pbf_collider_def *tool, pbf_render_mesh *meshes,
                                    const pbf_particles *gathered) {
    return world_scene_of(world, scene, colliders, collider_count, tool, meshes, 1, gathered);
}

/* The gathered particles' fluids (int32 per particle) as the renderer reads them (one byte per
 * particle), into rr's buffer; s keeps no tints when the world has one fluid. 0, or 1 when out
 * of memory. */
static int gathered_phases(render_run *rr, const pbf_particles *particles, pbf_render_scene *s) {
    if (s->phase_count == 0 || particles->phases == NULL) return 0;
    if (particles->count > rr->phase_capacity) {
        uint8_t *grown = realloc(rr->phases, (size_t)particles->count);
        if (grown == NULL) return 1;
        rr->phases = grown;
        rr->phase_capacity = particles->count;
    }
    for (int i = 0; i < particles->count; ++i) rr->phases[i] = (uint8_t)particles->phases[i];
    s->phases = rr->phases;
    return 0;
}

/* particles: split over MPI ranks, the whole world's gathered to rank 0 (run.h), their fluids
 * with them; the rest of what is drawn (colliders, the tool, the domain, the mesh solids' poses)
 * is the same on every rank. NULL: the world's. (Diffuse particles are refused split,
 * include/pbf/mpi.h: no spray to gather.) */
static int run_on_frame(const pbf_world *world, const pbf_particles *particles, int frame,
                        void *user) {
    render_run *rr = user;
    char err[PBF_ERROR_SIZE];
    pbf_render_scene s = world_scene(world, rr->scene, rr->colliders, rr->collider_count, &rr->tool,
                                     rr->meshes, particles);
    if (particles != NULL && gathered_phases(rr, particles, &s) != 0)
        return cli_error("frame %d: out of memory for the particles' fluids", frame);
    if (render_diffuse_from_world(&rr->diffuse, world, &s) != 0)
        return cli_error("frame %d: out of memory for the diffuse particles", frame);
    if (sink_frame(&rr->sink, &s, frame, err, sizeof err) != 0)
        return cli_error("frame %d: %s", frame, err);
    /* The last frame: finish the video here, so that a failure is the run's exit status. */
    if (frame == rr->scene->frames) {
        rr->closed = 1;
        return sink_close(&rr->sink, "run", rr->quiet);
    }
    return 0;
}

static void run_on_finish(const pbf_world *world, int frames_done, void *user) {
    (void)world;
    (void)frames_done;
    render_run *rr = user;
    /* Stopped early (Ctrl-C, an error): the video keeps the frames done so far. */
    if (!rr->closed) sink_close(&rr->sink, "run", rr->quiet);
    rr->closed = 1;
}

void render_run_hooks(render_run *rr, int quiet, run_hooks *hooks) {
    if (rr == NULL || (rr->set.png_dir == NULL && rr->set.video == NULL)) return;
    rr->quiet = quiet;
    hooks->on_start = run_on_start;
    hooks->on_frame = run_on_frame;
    hooks->on_finish = run_on_finish;
    hooks->user = rr;
}

/* ---- `pbf bench --render` --------------------------------------------------------------------- */

int render_bench_world(const pbf_world *world, const pbf_scene *scene, int width, int height,
                       int frames, double *ms_per_frame, char *renderer, size_t renderer_size,
                       char *err, size_t err_size) {
    pbf_gl_context *ctx = NULL;
    pbf_renderer *r = NULL;
    pbf_render_cuda *interop = NULL;
    char why[PBF_ERROR_SIZE] = "";
    uint8_t *rgba = malloc((size_t)width * (size_t)height * 4);
    int rc = rgba == NULL;
    if (rc) snprintf(err, err_size, "out of memory");
    if (!rc) rc = pbf_gl_context_create_headless(&ctx, err, err_size) != PBF_OK;
    if (!rc) {
        pbf_render_def def = pbf_default_render_def();
        def.width = width;
        def.height = height;
        rc = pbf_renderer_create(&def, &r, err, err_size) != PBF_OK;
    }
    /* A CUDA world: every frame takes the particles from device memory through interop, as
     * the viewer does, where the context runs on that GPU; else from host memory (why says
     * why). */
    const int cuda = pbf_world_get_def(world)->backend == PBF_BACKEND_CUDA;
    if (!rc && cuda && pbf_render_cuda_create(&interop, why, sizeof why) != PBF_OK) interop = NULL;
    int nc = pbf_world_collider_count(world);
    pbf_collider_def colliders[64];
    if (nc > 64) nc = 64;
    for (int i = 0; i < nc; ++i) colliders[i] = pbf_world_get_collider(world, i);
    pbf_collider_def tool;
    pbf_render_mesh meshes[PBF_MAX_MESHES];
    pbf_render_scene s =
        world_scene_of(world, scene, colliders, nc, &tool, meshes, interop == NULL, NULL);
    double t0 = 0.0;
    for (int f = -1; !rc && f < frames; ++f) {
        if (f == 0) t0 = cli_now(); /* frame -1 warms up (shader compilation, allocations) */
        if (interop != NULL) {
            pbf_device_view dv;
            rc = pbf_world_device_view(world, &dv, err, err_size) != PBF_OK ||
                 pbf_render_cuda_fill(interop, r, &dv, &s, err, err_size) != PBF_OK;
            if (rc) break;
        }
        rc = pbf_renderer_draw(r, &s, err, err_size) != PBF_OK ||
             pbf_renderer_read_rgba(r, rgba, err, err_size) != PBF_OK;
    }
    if (!rc) {
        *ms_per_frame = 1000.0 * (cli_now() - t0) / (frames > 0 ? frames : 1);
        snprintf(renderer, renderer_size, "%s; particles %s%s%s", pbf_gl_context_description(ctx),
                 interop != NULL ? "through CUDA-OpenGL interop" : "from host memory",
                 cuda && interop == NULL ? ": " : "", cuda && interop == NULL ? why : "");
    }
    pbf_render_cuda_destroy(interop);
    pbf_renderer_destroy(r);
    pbf_gl_context_destroy(ctx);
    free(rgba);
    return rc;
}

/* ---- `pbf render EXPORT_DIR` ------------------------------------------------------------------ */

static const char render_synopsis[] =
    "usage: pbf render EXPORT_DIR (--video FILE | --png DIR) [--resolution WxH]\n"
    "                  [--look fluid|spheres] [--color MODE] [--splats ellipsoid|sphere]\n"
    "                  [--fps N] [--scene FILE] [--radius R] [--crf N] [--quiet]\n";

static const char render_help[] =
    "Renders the particle files of a run (frame_00000.ply ... or .vtk, as `pbf run` writes\n"
    "them), its mesh solids where solids_00000.ply ... are there and its spray, foam and\n"
    "bubbles where diffuse_00000.ply ... are there, to a video and/or PNG frames. The domain,\n"
    "colliders, camera, particle radius, frame rate and the fluids' colours (each particle\n"
    "tinted by its material's absorption, from the files' phase field) come from\n"
    "EXPORT_DIR/scene.json (written by `pbf run`), or from --scene FILE;\n"
    "without either, the domain is the particles' bounding box, the camera frames it and the\n"
    "radius is estimated from the particle spacing.\n"
    "\n"
    "options:\n"
    "  --video FILE        H.264 MP4 (needs ffmpeg on PATH)\n"
    "  --png DIR           one PNG per frame, DIR/frame_00000.png ...\n"
    "  --resolution WxH    image size (default 1280x720)\n"
    "  --look LOOK         fluid (default) or spheres\n"
    "  --color MODE        spheres look: uniform (default), speed or density\n"
    "  --splats KIND       fluid look: ellipsoid (anisotropic, default) or sphere\n"
    "  --fps N             video frame rate (default: the scene's, else 60)\n"
    "  --scene FILE        take domain, colliders, camera, radius and materials from it\n"
    "  --radius R          particle radius in m (default: the scene's)\n"
    "  --crf N             video quality, 0..51, lower is better (default 20)\n"
    "  --quiet, -q         no progress line\n"
    "  --help, -h          this help\n"
    "\n"
    "To render while simulating, use `pbf run SCENE --video FILE` instead.\n"
    "\n"
    "examples:\n"
    "  pbf run scenes/dam_break.json --out out/dam\n"
    "  pbf render out/dam --video dam.mp4\n"
    "  pbf render out/dam --png frames --look spheres --color speed --resolution 640x360\n";

/* The tool's centre per frame from DIR/forces.csv (`pbf run` writes it for a scene with
 * a tool; columns frame,time,x,y,z,...). *out[f] is frame f's centre, *count the frames read;
 * NULL and 0 when there is no such file. */
static void load_tool_track(const char *dir, pbf_vec3 **out, int *count) {
    *out = NULL;
    *count = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/forces.csv", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    char line[1024];
    int cap = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        int frame;
        double t;
        float x, y, z;
        if (sscanf(line, "%d,%lf,%f,%f,%f", &frame, &t, &x, &y, &z) != 5 || frame < 0 ||
            frame > 100000000)
            continue; /* the header */
        if (frame >= cap) {
            int c = cap ? cap : 1024;
            while (c <= frame) c *= 2;
            pbf_vec3 *bigger = realloc(*out, (size_t)c * sizeof *bigger);
            if (bigger == NULL) break;
            memset(bigger + cap, 0, (size_t)(c - cap) * sizeof *bigger);
            *out = bigger;
            cap = c;
        }
        (*out)[frame] = (pbf_vec3){x, y, z};
        if (frame + 1 > *count) *count = frame + 1;
    }
    fclose(f);
}

/* The mesh solids of a frame from DIR/solids_NNNNN.ply (`pbf run` writes it beside the particles
 * when the scene has meshes), already posed: one grey mesh with the identity transform. Leaves
 * *mesh empty (and draws none) when there is no such file; a broken one is an error. */
/* Several fluids: the frame's phases as the renderer takes them (one byte each, into *buf,
 * grown as needed), each checked against the scene's materials. 0, or 1 with err set. */
static int load_phases(const pbf_particles *parts, int materials, const char *path, uint8_t **buf,
                       int *capacity, char *err, size_t err_size) {
    if (parts->count > *capacity) {
        uint8_t *bigger = realloc(*buf, (size_t)parts->count);
        if (bigger == NULL) {
            snprintf(err, err_size, "%s: out of memory for %d phases", path, parts->count);
            return 1;
        }
        *buf = bigger;
        *capacity = parts->count;
    }
    for (int i = 0; i < parts->count; ++i) {
        int32_t k = parts->phases[i];
        if (k < 0 || k >= materials) {
            snprintf(err, err_size,
                     "%s: particle %d has phase %d, but the scene has %d material%s (phases 0 "
                     "to %d)",
                     path, i, (int)k, materials, materials == 1 ? "" : "s", materials - 1);
            return 1;
        }
        (*buf)[i] = (uint8_t)k;
    }
    return 0;
}

static int load_solids(const char *dir, int number, pbf_mesh *mesh, pbf_render_mesh *out, char *err,
                       size_t err_size) {
    pbf_mesh_free(mesh);
    memset(out, 0, sizeof *out);
    char path[4096];
    snprintf(path, sizeof path, "%s/solids_%05d.ply", dir, number);
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (pbf_mesh_read_ply(path, mesh, err, err_size) != PBF_OK) return 1;
    out->vertices = mesh->positions;
    out->vertex_count = mesh->vertex_count;
    out->triangles = mesh->triangles;
    out->triangle_count = mesh->triangle_count;
    out->transform[0] = out->transform[5] = out->transform[10] = 1.0f;
    out->version = (unsigned)number + 1; /* new arrays every frame: upload them again */
    return 0;
}

int cmd_render(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "render", render_synopsis, argc, argv);
    render_settings set;
    settings_init(&set);
    const char *dir = NULL, *scene_path = NULL, *a, *v;
    double fps = 0.0, radius = 0.0;
    int help = 0, quiet = 0;
    while ((a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h"))
            help = 1;
        else if (cli_flag(&p, "--quiet", "-q"))
            quiet = 1;
        else if (settings_option(&set, &p)) {
        } else if (cli_option(&p, "--fps", &v)) {
            cli_parse_double(&p, "--fps", v, 0.1, 1000.0, &fps);
        } else if (cli_option(&p, "--scene", &v)) {
            scene_path = v;
        } else if (cli_option(&p, "--radius", &v)) {
            cli_parse_double(&p, "--radius", v, 1e-6, 100.0, &radius);
        } else if (p.failed) {
            break;
        } else {
            cli_operand(&p, a, "export folder", &dir);
        }
        if (p.failed) break;
    }
    if (p.failed) return CLI_EXIT_USAGE;
    if (help) {
        printf("%s\n%s", render_synopsis, render_help);
        return CLI_EXIT_OK;
    }
    if (dir == NULL) return cli_usage_error(&p, "which export folder? (the --out of `pbf run`)");
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_usage_error(&p,
                               "'%s' is a file; to render a scene while simulating it use "
                               "`pbf run %s --video FILE`",
                               dir, dir);
    if (set.png_dir == NULL && set.video == NULL)
        return cli_usage_error(&p, "nothing to write: give --video FILE and/or --png DIR");

    /* The scene: --scene, else DIR/scene.json, else none. */
    pbf_scene *scene = calloc(1, sizeof *scene);
    if (scene == NULL) return cli_error("out of memory");
    char json[4096];
    snprintf(json, sizeof json, "%s/scene.json", dir);
    int have_scene = 0, rc = 0;
    if (scene_path != NULL) {
        rc = cli_load_scene(scene_path, NULL, 0, scene);
        have_scene = rc == 0;
    } else if (stat(json, &st) == 0) {
        rc = cli_load_scene(json, NULL, 0, scene);
        have_scene = rc == 0;
    }
    frame_file *files = NULL;
    int count = 0;
    if (rc == 0) rc = frame_files_list(dir, &files, &count);
    if (rc != 0) {
        free(scene);
        return rc;
    }
    if (fps <= 0.0) fps = have_scene ? scene->fps : 60.0;
    /* the tool: its sphere from the scene, its track from forces.csv */
    pbf_vec3 *tool_track = NULL;
    int tool_frames = 0;
    pbf_collider_def tool_shape = pbf_default_collider_def();
    if (have_scene && scene->has_tool) {
        load_tool_track(dir, &tool_track, &tool_frames);
        tool_shape.type = PBF_COLLIDER_SPHERE;
        tool_shape.radius = scene->tool.radius;
    }

    char err[PBF_ERROR_SIZE];
    pbf_particles parts;
    memset(&parts, 0, sizeof parts);
    pbf_mesh solids; /* the mesh solids of the frame (solids_NNNNN.ply) */
    memset(&solids, 0, sizeof solids);
    pbf_render_mesh solids_mesh;
    render_diffuse diffuse; /* spray, foam and bubbles of the frame (diffuse_NNNNN.ply) */
    memset(&diffuse, 0, sizeof diffuse);
    uint8_t *phases = NULL; /* several fluids: the frame's phases, one byte each */
    int phase_capacity = 0;
    pbf_render_scene rs = pbf_default_render_scene();
    frame_sink sink;
    memset(&sink, 0, sizeof sink);
    if (pbf_export_read(files[0].path, &parts, err, sizeof err) != PBF_OK)
        rc = cli_error("%s", err);
    if (rc == 0) {
        if (have_scene) {
            rs.particle_radius = scene->world.particle_radius;
            rs.rest_density = scene->world.rest_density;
            rs.domain_min = scene->world.domain_min;
            rs.domain_max = scene->world.domain_max;
            rs.collider_count = scene->collider_count;
            rs.colliders = scene->colliders;
            rs.camera = scene->camera;
            /* several fluids: each tinted by its own material's absorption */
            render_phases_from_scene(scene, &rs);
        } else {
            /* No scene: the first frame's bounding box, the floor under its lowest particle. */
            float r = radius > 0.0 ? (float)radius : particles_estimate_radius(&parts);
            pbf_vec3 lo = {INFINITY, INFINITY, INFINITY}, hi = {-INFINITY, -INFINITY, -INFINITY};
            for (int i = 0; i < parts.count; ++i) {
                const float *q = parts.positions + 3 * (size_t)i;
                lo.x = fminf(lo.x, q[0]), lo.y = fminf(lo.y, q[1]), lo.z = fminf(lo.z, q[2]);
                hi.x = fmaxf(hi.x, q[0]), hi.y = fmaxf(hi.y, q[1]), hi.z = fmaxf(hi.z, q[2]);
            }
            lo.x -= r, lo.y -= r, lo.z -= r;
            hi.x += r, hi.y += r, hi.z += r;
            rs.particle_radius = r;
            rs.domain_min = lo;
            rs.domain_max = hi;
            rs.camera = pbf_render_default_camera(lo, hi, (float)set.width / (float)set.height);
            if (!quiet)
                fprintf(stderr,
                        "pbf render: no scene.json in %s: particle radius %.4g m "
                        "(estimated), domain = bounding box of frame %d\n",
                        dir, (double)r, files[0].number);
        }
        if (radius > 0.0) rs.particle_radius = (float)radius;
        rc = sink_open(&sink, &set, fps);
    }
    int interrupted = 0;
    if (rc == 0) {
        if (!quiet)
            fprintf(stderr, "pbf render: %d frames from %s, %dx%d %s -> %s%s%s\n", count, dir,
                    set.width, set.height, set.look == PBF_LOOK_FLUID ? "fluid" : "spheres",
                    set.video ? set.video : "", set.video && set.png_dir ? " + " : "",
                    set.png_dir ? set.png_dir : "");
        progress bar;
        if (!quiet) progress_begin(&bar, stderr, count);
        interrupt_install();
        for (int i = 0; i < count && rc == 0; ++i) {
            if ((interrupted = interrupt_pending()) != 0) break;
            if (i > 0) pbf_particles_free(&parts);
            if (i > 0 && pbf_export_read(files[i].path, &parts, err, sizeof err) != PBF_OK) {
                rc = cli_error("%s", err);
                break;
            }
            rs.particle_count = parts.count;
            rs.positions = parts.positions;
            rs.velocities = parts.velocities;
            rs.densities = parts.densities;
            rs.phases = NULL; /* one look for all without materials or a phase field */
            if (rs.phase_count > 0 && parts.phases != NULL) {
                if (load_phases(&parts, rs.phase_count, files[i].path, &phases, &phase_capacity,
                                err, sizeof err) != 0) {
                    rc = cli_error("%s", err);
                    break;
                }
                rs.phases = phases;
            }
            if (render_diffuse_from_file(&diffuse, dir, files[i].number, &rs, err, sizeof err) !=
                0) {
                rc = cli_error("%s", err);
                break;
            }
            rs.tool = NULL; /* the tool where forces.csv has the frame */
            if (tool_track != NULL && files[i].number < tool_frames) {
                tool_shape.center = tool_track[files[i].number];
                rs.tool = &tool_shape;
            }
            if (load_solids(dir, files[i].number, &solids, &solids_mesh, err, sizeof err) != 0) {
                rc = cli_error("%s", err);
                break;
            }
            rs.mesh_count = solids.triangle_count > 0;
            rs.meshes = &solids_mesh;
            if (sink_frame(&sink, &rs, files[i].number, err, sizeof err) != 0) {
                if (!quiet) progress_end(&bar);
                rc = cli_error("%s: %s", files[i].path, err);
                break;
            }
            if (!quiet) progress_update(&bar, i + 1, files[i].number / fps, parts.count);
        }
        interrupt_restore();
        if (!quiet) progress_end(&bar);
        int close_rc = sink_close(&sink, "render", quiet);
        if (rc == 0) rc = close_rc;
    }
    if (interrupted) {
        fprintf(stderr, "pbf render: stopped after %d of %d frames\n", sink.frames, count);
        if (rc == 0) rc = 128 + interrupted;
    }
    pbf_particles_free(&parts);
    pbf_mesh_free(&solids);
    render_diffuse_free(&diffuse);
    free(phases);
    frame_files_free(files, count);
    free(tool_track);
    free(scene);
    return rc;
}
