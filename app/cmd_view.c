/* `pbf view [SCENE]`: a window on a running simulation.
 *
 * Two threads: the simulation steps the world in a thread of its own (paced to real time when
 * it is faster) and publishes a copy of the particles after every step; the window thread
 * draws the latest copy, handles input and the HUD. So the window stays responsive when a step
 * takes longer than a frame, and the simulation never waits for the renderer.
 *
 * Controls: left drag orbits, the wheel zooms, W A S D fly (Q/E down/up), Space pauses,
 * N steps once while paused, R resets the scene, Tab switches the look, H hides the HUD,
 * Esc closes. `--screenshot F.png --frames N` saves frame N and exits (tests, docs). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pbf/render.h"
#include "pbf/render_cuda.h"
#include "pbf/scene.h"
#include "render_meshes.h"
#include "render_diffuse.h"
#include "render_phases.h"

#ifdef PBF_WITH_GLFW
#include <GLFW/glfw3.h>
#endif

static const char view_synopsis[] =
    "usage: pbf view [SCENE] [--resolution WxH] [--look fluid|spheres] [--color MODE]\n"
    "                [--threads N] [--set key=value ...] [--paused] [--no-hud]\n"
    "                [--screenshot FILE.png --frames N] [--offscreen --frames N]\n";

static const char view_help[] =
    "Opens a window on SCENE (a JSON file; without it the built-in dam break) and simulates it\n"
    "while you look. The simulation runs in its own thread, in real time when the machine is\n"
    "fast enough, and the window draws its latest state.\n"
    "\n"
    "controls:\n"
    "  left drag           orbit around the target\n"
    "  wheel               zoom\n"
    "  W A S D, Q E        fly (forward, left, back, right, down, up)\n"
    "  Space               pause / resume\n"
    "  N                   one step while paused\n"
    "  R                   reset the scene\n"
    "  Tab                 switch the look (fluid / spheres)\n"
    "  C                   spheres colour: uniform / speed / density\n"
    "  H                   hide / show the HUD\n"
    "  right drag          move the scene's tool (docs/tool.md), in the plane facing you\n"
    "  Esc                 close\n"
    "\n"
    "options:\n"
    "  --resolution WxH    window size (default 1280x720)\n"
    "  --look LOOK         fluid (default) or spheres\n"
    "  --color MODE        spheres colour: uniform (default), speed or density\n"
    "  --threads N         simulation threads, 0 = all cores (default: the scene's)\n"
    "  --set KEY=VALUE     override a scene parameter; repeatable\n"
    "  --paused            start paused\n"
    "  --no-hud            start with the HUD hidden (H shows it)\n"
    "  --screenshot FILE   save the window's image as PNG after --frames frames, then exit\n"
    "  --frames N          frames of the simulation to draw before the screenshot or the end\n"
    "                      of --offscreen (default 60; counted from its first state)\n"
    "  --offscreen         no window: draw --frames frames into an off-screen image (EGL, as\n"
    "                      `pbf run --video` does), then print the frame rate drawn and how\n"
    "                      fast the simulation kept up; for machines without a display\n"
    "  --help, -h          this help\n"
    "\n"
    "Dragging with the right button carries the scene's tool (a scene with a \"tool\" section,\n"
    "e.g. scenes/tool_sphere.json) across the plane through its centre that faces you; the HUD\n"
    "shows the force on it. Without a display (e.g. over ssh), use `pbf run SCENE --video\n"
    "out.mp4`, or run under `xvfb-run -a pbf view ...` for a screenshot.\n"
    "\n"
    "A scene on the CUDA backend (--set solver.backend=\"cuda\") is drawn straight from device\n"
    "memory through CUDA-OpenGL interop when the window's OpenGL runs on that GPU; otherwise\n"
    "the particles are read back to host memory each frame (the message says why).\n";

#ifndef PBF_WITH_GLFW

int cmd_view(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("%s\n%s", view_synopsis, view_help);
        return CLI_EXIT_OK;
    }
    return cli_error("view: this pbf was built without GLFW (install libglfw3-dev and rebuild)");
}

#else

/* ---- the simulation thread ------------------------------------------------------------------ */

typedef struct sim_shared {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    /* Commands from the window (under lock). */
    int paused, step_once, reset, quit;
    /* The latest state (under lock). */
    float *positions, *velocities, *densities;
    uint8_t *phases; /* each particle's fluid, for the tints of several (all 0 for one) */
    int count, capacity;
    pbf_vec3 domain_min, domain_max;
    double sim_time;
    pbf_profile profile;
    unsigned long version; /* bumps with every published state */
    /* The tool (docs/tool.md): its state as published, and the window's drag (under lock). */
    int has_tool, tool_drag;
    pbf_tool_state tool;
    pbf_vec3 tool_target;
    /* The mesh solids: their triangles copied once (the same for every world of the scene, so a
     * reset keeps them), their poses with every state (under lock). */
    pbf_render_mesh meshes[PBF_MAX_MESHES];
    int mesh_count;
    float *mesh_vertices[PBF_MAX_MESHES];
    int32_t *mesh_triangles[PBF_MAX_MESHES];
    /* Spray, foam and bubbles as published (under lock). */
    render_diffuse diffuse;
    int diffuse_count;
    int failed;
    char error[PBF_ERROR_SIZE];
    /* Set before the thread starts, read-only after. */
    const pbf_scene *scene;
    /* A CUDA world drawn through interop: publish() snapshots the device arrays into it (under
     * lock) instead of copying them to host memory; NULL: the host copy. */
    pbf_render_cuda *interop;
} sim_shared;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s) {
    if (s <= 0.0) return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* A snapshot of a CUDA world's particles on the device (under lock), for the window's
 * pbf_render_cuda_fill. 0, or 1 with the reason in err. */
static int publish_device(sim_shared *sh, const pbf_world *w, char *err, size_t err_size) {
    pbf_device_view dv;
    if (pbf_world_device_view(w, &dv, err, err_size) != PBF_OK ||
        pbf_render_cuda_snapshot(sh->interop, &dv, err, err_size) != PBF_OK)
        return 1;
    sh->count = dv.count;
    return 0;
}

/* Copies the world's state for the window (under lock). 0, or 1 with the reason in err. */
static int publish(sim_shared *sh, const pbf_world *w, char *err, size_t err_size) {
    snprintf(err, err_size, "out of memory");
    pbf_particle_view v;
    memset(&v, 0, sizeof v);
    if (sh->interop == NULL) v = pbf_world_view(w);
    pthread_mutex_lock(&sh->lock);
    if (sh->interop != NULL) {
        if (publish_device(sh, w, err, err_size) != 0) {
            pthread_mutex_unlock(&sh->lock);
            return 1;
        }
    } else if (v.count > sh->capacity) {
        float *p = realloc(sh->positions, (size_t)v.count * 3 * sizeof *p);
        if (p != NULL) sh->positions = p;
        float *q = realloc(sh->velocities, (size_t)v.count * 3 * sizeof *q);
        if (q != NULL) sh->velocities = q;
        float *d = realloc(sh->densities, (size_t)v.count * sizeof *d);
        if (d != NULL) sh->densities = d;
        uint8_t *k = realloc(sh->phases, (size_t)v.count);
        if (k != NULL) sh->phases = k;
        if (p == NULL || q == NULL || d == NULL || k == NULL) {
            pthread_mutex_unlock(&sh->lock);
            return 1;
        }
        sh->capacity = v.count;
    }
    if (sh->interop == NULL) {
        memcpy(sh->positions, v.positions, (size_t)v.count * 3 * sizeof(float));
        memcpy(sh->velocities, v.velocities, (size_t)v.count * 3 * sizeof(float));
        memcpy(sh->densities, v.densities, (size_t)v.count * sizeof(float));
        if (v.phases != NULL)
            memcpy(sh->phases, v.phases, (size_t)v.count);
        else
            memset(sh->phases, 0, (size_t)v.count);
        sh->count = v.count;
    }
    pbf_render_scene ds = pbf_default_render_scene(); /* spray, foam and bubbles */
    if (render_diffuse_from_world(&sh->diffuse, w, &ds) != 0) {
        pthread_mutex_unlock(&sh->lock);
        return 1;
    }
    sh->diffuse_count = ds.diffuse_count;
    pbf_world_get_domain(w, &sh->domain_min, &sh->domain_max);
    sh->sim_time = pbf_world_time(w);
    sh->profile = pbf_world_get_profile(w);
    sh->has_tool = pbf_world_has_tool(w); /* tool */
    if (sh->has_tool) sh->tool = pbf_tool_get_state(w);
    pbf_render_mesh m[PBF_MAX_MESHES]; /* mesh solids */
    int nm = render_meshes_from_world(w, m);
    for (int i = 0; i < nm; ++i) {
        if (sh->mesh_vertices[i] == NULL) {
            size_t vb = 3 * (size_t)m[i].vertex_count * sizeof(float);
            size_t tb = 3 * (size_t)m[i].triangle_count * sizeof(int32_t);
            sh->mesh_vertices[i] = malloc(vb > 0 ? vb : 1);
            sh->mesh_triangles[i] = malloc(tb > 0 ? tb : 1);
            if (sh->mesh_vertices[i] == NULL || sh->mesh_triangles[i] == NULL) {
                pthread_mutex_unlock(&sh->lock);
                return 1;
            }
            memcpy(sh->mesh_vertices[i], m[i].vertices, vb);
            memcpy(sh->mesh_triangles[i], m[i].triangles, tb);
        }
        m[i].vertices = sh->mesh_vertices[i];
        m[i].triangles = sh->mesh_triangles[i];
        sh->meshes[i] = m[i];
    }
    sh->mesh_count = nm;
    ++sh->version;
    pthread_mutex_unlock(&sh->lock);
    return 0;
}

static void sim_fail(sim_shared *sh, const char *message) {
    pthread_mutex_lock(&sh->lock);
    sh->failed = 1;
    snprintf(sh->error, sizeof sh->error, "%s", message);
    pthread_mutex_unlock(&sh->lock);
}

static void *sim_main(void *arg) {
    sim_shared *sh = arg;
    const pbf_scene *scene = sh->scene;
    const float dt = 1.0f / scene->fps;
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    if (pbf_scene_create_world(scene, &w, err, sizeof err) != PBF_OK) {
        sim_fail(sh, err);
        return NULL;
    }
    if (publish(sh, w, err, sizeof err) != 0) sim_fail(sh, err);
    /* Real-time pacing: simulated time may not run ahead of the wall clock since `start`. */
    double start = now_s(), sim_since_start = 0.0;
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        while (!sh->quit && !sh->reset && !sh->step_once && (sh->paused || sh->failed))
            pthread_cond_wait(&sh->wake, &sh->lock);
        int quit = sh->quit, reset = sh->reset, paused = sh->paused;
        sh->reset = 0;
        sh->step_once = 0;
        pthread_mutex_unlock(&sh->lock);
        if (quit) break;
        if (reset) {
            pbf_world_destroy(w);
            w = NULL;
            if (pbf_scene_create_world(scene, &w, err, sizeof err) != PBF_OK) {
                sim_fail(sh, err);
                continue;
            }
            if (publish(sh, w, err, sizeof err) != 0) sim_fail(sh, err);
            start = now_s();
            sim_since_start = 0.0;
            continue;
        }
        if (paused) {
            start = now_s(); /* a single step must not let the clock run ahead afterwards */
            sim_since_start = 0.0;
        } else {
            sleep_s(sim_since_start - (now_s() - start));
        }
        pthread_mutex_lock(&sh->lock); /* tool: a right drag carries it to the cursor */
        int drag = sh->tool_drag && pbf_world_has_tool(w);
        pbf_vec3 target = sh->tool_target;
        pthread_mutex_unlock(&sh->lock);
        if (drag) pbf_tool_set_pose(w, target);
        if (pbf_world_step(w, dt) != PBF_OK) {
            sim_fail(sh, pbf_world_error(w));
            continue;
        }
        sim_since_start += dt;
        /* Far behind real time (a slow machine): do not try to catch up later. */
        if (now_s() - start - sim_since_start > 0.25) {
            start = now_s();
            sim_since_start = 0.0;
        }
        if (publish(sh, w, err, sizeof err) != 0) sim_fail(sh, err);
    }
    pbf_world_destroy(w);
    return NULL;
}

/* ---- the window ---------------------------------------------------------------------------- */

typedef struct view_state {
    sim_shared *sim;
    pbf_render_def def;
    int look_changed;
    int hud;
    /* Orbit camera. */
    float target[3];
    float yaw, pitch, distance;
    float fov;
    double scroll;
    int dragging;
    double last_x, last_y;
    /* Right drag of the tool: the plane facing the camera through the tool's centre when the
     * drag began, and the offset of that centre from the point under the cursor. */
    int tool_dragging;
    float drag_point[3], drag_offset[3];
} view_state;

static void command(view_state *vs, int *field, int value) {
    pthread_mutex_lock(&vs->sim->lock);
    *field = value;
    pthread_cond_signal(&vs->sim->wake);
    pthread_mutex_unlock(&vs->sim->lock);
}

static void on_key(GLFWwindow *win, int key, int scancode, int action, int mods) {
    (void)scancode;
    (void)mods;
    if (action != GLFW_PRESS) return;
    view_state *vs = glfwGetWindowUserPointer(win);
    sim_shared *sh = vs->sim;
    switch (key) {
    case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(win, GLFW_TRUE); break;
    case GLFW_KEY_SPACE: command(vs, &sh->paused, !sh->paused); break;
    case GLFW_KEY_N: command(vs, &sh->step_once, 1); break;
    case GLFW_KEY_R: command(vs, &sh->reset, 1); break;
    case GLFW_KEY_TAB:
        vs->def.look = vs->def.look == PBF_LOOK_FLUID ? PBF_LOOK_SPHERES : PBF_LOOK_FLUID;
        vs->look_changed = 1;
        break;
    case GLFW_KEY_C:
        vs->def.color = (pbf_render_color)(((int)vs->def.color + 1) % 3);
        vs->look_changed = 1;
        break;
    case GLFW_KEY_H: vs->hud = !vs->hud; break;
    default: break;
    }
}

static void on_scroll(GLFWwindow *win, double dx, double dy) {
    (void)dx;
    view_state *vs = glfwGetWindowUserPointer(win);
    vs->scroll += dy;
}

static void camera_position(const view_state *vs, float out[3]) {
    out[0] = vs->target[0] + vs->distance * cosf(vs->pitch) * sinf(vs->yaw);
    out[1] = vs->target[1] + vs->distance * sinf(vs->pitch);
    out[2] = vs->target[2] + vs->distance * cosf(vs->pitch) * cosf(vs->yaw);
}

/* Mouse orbit, wheel zoom, WASD/QE flight; dt in seconds. */
static void update_camera(GLFWwindow *win, view_state *vs, double dt) {
    double x, y;
    glfwGetCursorPos(win, &x, &y);
    int left = glfwGetMouseButton(win, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
    if (left && vs->dragging) {
        vs->yaw -= (float)(x - vs->last_x) * 0.005f;
        vs->pitch += (float)(y - vs->last_y) * 0.005f;
        if (vs->pitch > 1.5f) vs->pitch = 1.5f;
        if (vs->pitch < -1.5f) vs->pitch = -1.5f;
    }
    vs->dragging = left;
    vs->last_x = x;
    vs->last_y = y;
    if (vs->scroll != 0.0) {
        vs->distance *= powf(0.9f, (float)vs->scroll);
        if (vs->distance < 1e-3f) vs->distance = 1e-3f;
        vs->scroll = 0.0;
    }
    /* Flight moves the target (and the camera with it) in the camera's horizontal frame. */
    float fwd[3] = {-sinf(vs->yaw), 0.0f, -cosf(vs->yaw)};
    float right[3] = {cosf(vs->yaw), 0.0f, -sinf(vs->yaw)};
    float speed = 0.6f * vs->distance * (float)dt;
    float mv[3] = {0.0f, 0.0f, 0.0f};
    if (glfwGetKey(win, GLFW_KEY_W) == GLFW_PRESS)
        for (int k = 0; k < 3; ++k) mv[k] += fwd[k];
    if (glfwGetKey(win, GLFW_KEY_S) == GLFW_PRESS)
        for (int k = 0; k < 3; ++k) mv[k] -= fwd[k];
    if (glfwGetKey(win, GLFW_KEY_D) == GLFW_PRESS)
        for (int k = 0; k < 3; ++k) mv[k] += right[k];
    if (glfwGetKey(win, GLFW_KEY_A) == GLFW_PRESS)
        for (int k = 0; k < 3; ++k) mv[k] -= right[k];
    if (glfwGetKey(win, GLFW_KEY_E) == GLFW_PRESS) mv[1] += 1.0f;
    if (glfwGetKey(win, GLFW_KEY_Q) == GLFW_PRESS) mv[1] -= 1.0f;
    for (int k = 0; k < 3; ++k) vs->target[k] += mv[k] * speed;
}

/* The ray from the eye through window pixel (x, y): its direction (not normalised). */
static void cursor_ray(GLFWwindow *win, const view_state *vs, double x, double y, float dir[3]) {
    int ww = 1, wh = 1;
    glfwGetWindowSize(win, &ww, &wh);
    if (ww < 1) ww = 1;
    if (wh < 1) wh = 1;
    float eye[3], f[3], side[3], up[3];
    camera_position(vs, eye);
    for (int k = 0; k < 3; ++k) f[k] = vs->target[k] - eye[k];
    float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int k = 0; k < 3; ++k) f[k] /= fl;
    /* the renderer's look-at frame (render/util.c): side = f × y, up = side × f */
    side[0] = -f[2], side[1] = 0.0f, side[2] = f[0];
    float sl = sqrtf(side[0] * side[0] + side[2] * side[2]);
    if (sl < 1e-6f) side[0] = 1.0f, side[2] = 0.0f, sl = 1.0f;
    side[0] /= sl, side[2] /= sl;
    up[0] = side[1] * f[2] - side[2] * f[1];
    up[1] = side[2] * f[0] - side[0] * f[2];
    up[2] = side[0] * f[1] - side[1] * f[0];
    float t = tanf(0.5f * vs->fov * 3.14159265f / 180.0f);
    float nx = (float)(2.0 * x / ww - 1.0) * t * (float)ww / (float)wh;
    float ny = (float)(1.0 - 2.0 * y / wh) * t;
    for (int k = 0; k < 3; ++k) dir[k] = f[k] + nx * side[k] + ny * up[k];
}

/* Right drag: carries the tool across the plane that faces the camera through the point where
 * the drag began (the tool's centre then), keeping the offset so it does not jump. */
static void update_tool_drag(GLFWwindow *win, view_state *vs) {
    sim_shared *sh = vs->sim;
    int right = glfwGetMouseButton(win, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
    pthread_mutex_lock(&sh->lock);
    int has_tool = sh->has_tool;
    pbf_vec3 c = sh->tool.position;
    pthread_mutex_unlock(&sh->lock);
    if (!right || !has_tool) {
        if (vs->tool_dragging) command(vs, &sh->tool_drag, 0);
        vs->tool_dragging = 0;
        return;
    }
    double x, y;
    glfwGetCursorPos(win, &x, &y);
    float eye[3], dir[3], f[3];
    camera_position(vs, eye);
    cursor_ray(win, vs, x, y, dir);
    for (int k = 0; k < 3; ++k) f[k] = vs->target[k] - eye[k];
    if (!vs->tool_dragging) {
        vs->drag_point[0] = c.x;
        vs->drag_point[1] = c.y;
        vs->drag_point[2] = c.z;
    }
    /* the point on the plane (normal f, through drag_point) under the cursor */
    float num = 0.0f, den = 0.0f;
    for (int k = 0; k < 3; ++k) {
        num += (vs->drag_point[k] - eye[k]) * f[k];
        den += dir[k] * f[k];
    }
    if (!(den > 1e-6f)) return;
    float hit[3];
    for (int k = 0; k < 3; ++k) hit[k] = eye[k] + dir[k] * (num / den);
    if (!vs->tool_dragging) {
        for (int k = 0; k < 3; ++k) vs->drag_offset[k] = vs->drag_point[k] - hit[k];
        vs->tool_dragging = 1;
    }
    pthread_mutex_lock(&sh->lock);
    sh->tool_target = (pbf_vec3){hit[0] + vs->drag_offset[0], hit[1] + vs->drag_offset[1],
                                 hit[2] + vs->drag_offset[2]};
    sh->tool_drag = 1;
    pthread_cond_signal(&sh->wake);
    pthread_mutex_unlock(&sh->lock);
}

static void glfw_error(int code, const char *message) {
    fprintf(stderr, "pbf view: GLFW error 0x%x: %s\n", (unsigned)code, message);
}

/* The window and GLFW, or the headless context (--offscreen). */
static void close_display(GLFWwindow *win, pbf_gl_context *headless) {
    if (win != NULL) {
        glfwDestroyWindow(win);
        glfwTerminate();
    }
    pbf_gl_context_destroy(headless);
}

static int parse_resolution(cli_parser *p, const char *v, int *w, int *h) {
    int n = 0;
    if (sscanf(v, "%dx%d%n", w, h, &n) != 2 || v[n] != '\0' || *w < 16 || *h < 16 || *w > 8192 ||
        *h > 8192) {
        cli_usage_error(p, "--resolution expects WxH between 16x16 and 8192x8192, got '%s'", v);
        return 0;
    }
    return 1;
}

int cmd_view(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "view", view_synopsis, argc, argv);
    cli_overrides sets = {NULL, 0, 0};
    const char *scene_path = NULL, *screenshot = NULL, *a, *v;
    int width = 1280, height = 720, frames = 60, threads = -1, help = 0, start_paused = 0,
        show_hud = 1, offscreen = 0;
    pbf_render_look look = PBF_LOOK_FLUID;
    pbf_render_color color = PBF_COLOR_UNIFORM;
    int rc = CLI_EXIT_OK;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--paused", NULL)) {
            start_paused = 1;
        } else if (cli_flag(&p, "--no-hud", NULL)) {
            show_hud = 0;
        } else if (cli_flag(&p, "--offscreen", NULL)) {
            offscreen = 1;
        } else if (cli_option(&p, "--resolution", &v)) {
            parse_resolution(&p, v, &width, &height);
        } else if (cli_option(&p, "--look", &v)) {
            if (strcmp(v, "fluid") == 0)
                look = PBF_LOOK_FLUID;
            else if (strcmp(v, "spheres") == 0)
                look = PBF_LOOK_SPHERES;
            else
                cli_usage_error(&p, "--look expects fluid or spheres, got '%s'", v);
        } else if (cli_option(&p, "--color", &v)) {
            if (strcmp(v, "uniform") == 0)
                color = PBF_COLOR_UNIFORM;
            else if (strcmp(v, "speed") == 0)
                color = PBF_COLOR_SPEED;
            else if (strcmp(v, "density") == 0)
                color = PBF_COLOR_DENSITY;
            else
                cli_usage_error(&p, "--color expects uniform, speed or density, got '%s'", v);
        } else if (cli_option(&p, "--threads", &v)) {
            cli_parse_int(&p, "--threads", v, 0, 4096, &threads);
        } else if (cli_option(&p, "--screenshot", &v)) {
            if (v[0] == '\0') cli_usage_error(&p, "--screenshot needs a file name");
            screenshot = v;
        } else if (cli_option(&p, "--frames", &v)) {
            cli_parse_int(&p, "--frames", v, 1, 100000000, &frames);
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &sets);
        } else if (p.failed) {
            break;
        } else {
            cli_operand(&p, a, "scene", &scene_path);
        }
        if (p.failed) rc = CLI_EXIT_USAGE;
    }
    if (rc != CLI_EXIT_OK || help) {
        if (help && rc == CLI_EXIT_OK) printf("%s\n%s", view_synopsis, view_help);
        cli_overrides_free(&sets);
        return rc;
    }

    pbf_scene *scene = malloc(sizeof *scene);
    if (scene == NULL) return cli_error("out of memory");
    rc = cli_load_scene(scene_path, sets.items, sets.count, scene);
    cli_overrides_free(&sets);
    if (rc != 0) {
        free(scene);
        return rc;
    }
    if (threads >= 0) scene->world.threads = threads;

    /* A window, or with --offscreen a headless context and no input. */
    GLFWwindow *win = NULL;
    pbf_gl_context *headless = NULL;
    char err[PBF_ERROR_SIZE];
    int fb_w = width, fb_h = height;
    if (offscreen) {
        if (pbf_gl_context_create_headless(&headless, err, sizeof err) != PBF_OK) {
            free(scene);
            return cli_error("view: %s", err);
        }
    } else {
        glfwSetErrorCallback(glfw_error);
        if (!glfwInit()) {
            free(scene);
            return cli_error("view: cannot open a window (no display?). Use `pbf run SCENE "
                             "--video out.mp4`, `pbf view --offscreen`, or `xvfb-run -a pbf "
                             "view ...`");
        }
        glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
        glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
        glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
        glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
        char title[256];
        snprintf(title, sizeof title, "pbf view - %s", scene->name);
        win = glfwCreateWindow(width, height, title, NULL, NULL);
        if (win == NULL) {
            glfwTerminate();
            free(scene);
            return cli_error("view: cannot create an OpenGL 3.3 core window");
        }
        glfwMakeContextCurrent(win);
        glfwSwapInterval(screenshot != NULL ? 0 : 1);
        glfwGetFramebufferSize(win, &fb_w, &fb_h);
    }
    pbf_renderer *renderer = NULL;
    if (fb_w < 16) fb_w = 16;
    if (fb_h < 16) fb_h = 16;
    view_state vs;
    memset(&vs, 0, sizeof vs);
    vs.def = pbf_default_render_def();
    vs.def.width = fb_w;
    vs.def.height = fb_h;
    vs.def.look = look;
    vs.def.color = color;
    vs.hud = show_hud;
    if ((win != NULL && pbf_render_load_gl(glfwGetProcAddress, err, sizeof err) != PBF_OK) ||
        pbf_renderer_create(&vs.def, &renderer, err, sizeof err) != PBF_OK) {
        close_display(win, headless);
        free(scene);
        return cli_error("view: %s", err);
    }
    /* A CUDA world: its particles go from device memory into the vertex buffers where this
     * context runs on that GPU; otherwise through host memory, and the reason is shown. */
    pbf_render_cuda *interop = NULL;
    if (scene->world.backend == PBF_BACKEND_CUDA &&
        pbf_render_cuda_create(&interop, err, sizeof err) != PBF_OK)
        fprintf(stderr, "pbf view: particles through host memory: %s\n", err);
    else if (interop != NULL)
        fprintf(stderr, "pbf view: particles through CUDA-OpenGL interop\n");

    /* The orbit camera starts where the scene's camera is. */
    const pbf_camera_def *cam = &scene->camera;
    float d[3] = {cam->position.x - cam->target.x, cam->position.y - cam->target.y,
                  cam->position.z - cam->target.z};
    vs.distance = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    vs.pitch = asinf(d[1] / vs.distance);
    vs.yaw = atan2f(d[0], d[2]);
    vs.target[0] = cam->target.x;
    vs.target[1] = cam->target.y;
    vs.target[2] = cam->target.z;
    vs.fov = cam->fov;

    sim_shared sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.lock, NULL);
    pthread_cond_init(&sh.wake, NULL);
    sh.scene = scene;
    sh.paused = start_paused;
    sh.interop = interop;
    vs.sim = &sh;
    if (win != NULL) {
        glfwSetWindowUserPointer(win, &vs);
        glfwSetKeyCallback(win, on_key);
        glfwSetScrollCallback(win, on_scroll);
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, sim_main, &sh) != 0) {
        pbf_render_cuda_destroy(interop);
        pbf_renderer_destroy(renderer);
        close_display(win, headless);
        free(scene);
        return cli_error("view: cannot start the simulation thread");
    }

    /* The window's copy of the state: drawn without holding the lock. */
    float *pos = NULL, *vel = NULL, *rho = NULL;
    uint8_t *phase = NULL;
    render_diffuse diffuse = {0}; /* the window's copy of the published diffuse particles */
    int diffuse_count = 0;
    int count = 0, capacity = 0;
    unsigned long seen = 0, filled = 0; /* the states drawn, and filled in through interop */
    pbf_vec3 dmin = scene->world.domain_min, dmax = scene->world.domain_max;
    double sim_time = 0.0;
    pbf_profile prof;
    int has_tool = 0; /* tool: drawn as a solid sphere, its force in the HUD */
    pbf_tool_state tool;
    pbf_collider_def tool_shape = pbf_default_collider_def();
    memset(&tool, 0, sizeof tool);
    memset(&prof, 0, sizeof prof);
    double fps = 0.0, fps_t0 = now_s(), last = now_s();
    int fps_frames = 0, drawn = 0, failed = 0, mesh_count = 0;
    pbf_render_mesh meshes[PBF_MAX_MESHES];
    char hud[1024], sim_error[PBF_ERROR_SIZE] = "";
    uint8_t *shot = NULL;
    /* interop: the GL buffers of the latest snapshot */
    pbf_render_scene gpu = pbf_default_render_scene();
    gpu.particle_radius = scene->world.particle_radius;
    gpu.rest_density = scene->world.rest_density;
    /* --offscreen: the rates from the first counted frame on */
    double off_t0 = 0.0, off_sim0 = 0.0, off_render_ms = 0.0;
    int64_t off_steps0 = 0;
    while (win == NULL || !glfwWindowShouldClose(win)) {
        double t = now_s();
        if (win != NULL) {
            glfwPollEvents();
            update_camera(win, &vs, t - last);
            update_tool_drag(win, &vs); /* tool */
        }
        last = t;

        pthread_mutex_lock(&sh.lock);
        if (sh.version != seen) {
            if (interop != NULL) {
                count = sh.count; /* the particles stay on the device */
            } else if (sh.count > capacity) {
                float *np = realloc(pos, (size_t)sh.count * 3 * sizeof *np);
                if (np) pos = np;
                float *nv = realloc(vel, (size_t)sh.count * 3 * sizeof *nv);
                if (nv) vel = nv;
                float *nr = realloc(rho, (size_t)sh.count * sizeof *nr);
                if (nr) rho = nr;
                uint8_t *nk = realloc(phase, (size_t)sh.count);
                if (nk) phase = nk;
                if (np && nv && nr && nk) capacity = sh.count;
            }
            if (interop == NULL && sh.count <= capacity) {
                memcpy(pos, sh.positions, (size_t)sh.count * 3 * sizeof(float));
                memcpy(vel, sh.velocities, (size_t)sh.count * 3 * sizeof(float));
                memcpy(rho, sh.densities, (size_t)sh.count * sizeof(float));
                memcpy(phase, sh.phases, (size_t)sh.count);
                count = sh.count;
            }
            diffuse_count = render_diffuse_copy(&diffuse, &sh.diffuse, sh.diffuse_count) == 0
                                ? sh.diffuse_count
                                : 0;
            dmin = sh.domain_min;
            dmax = sh.domain_max;
            sim_time = sh.sim_time;
            prof = sh.profile;
            has_tool = sh.has_tool;
            tool = sh.tool;
            mesh_count = sh.mesh_count; /* the arrays stay put: only the poses change */
            memcpy(meshes, sh.meshes, (size_t)mesh_count * sizeof *meshes);
            seen = sh.version;
        }
        int paused = sh.paused;
        if (sh.failed && !failed) {
            failed = 1;
            snprintf(sim_error, sizeof sim_error, "%s", sh.error);
            fprintf(stderr, "pbf view: simulation stopped: %s\n", sim_error);
        }
        pthread_mutex_unlock(&sh.lock);

        if (win != NULL) glfwGetFramebufferSize(win, &fb_w, &fb_h);
        if (fb_w >= 16 && fb_h >= 16 && (fb_w != vs.def.width || fb_h != vs.def.height)) {
            vs.def.width = fb_w;
            vs.def.height = fb_h;
            vs.look_changed = 1;
        }
        if (vs.look_changed) {
            if (pbf_renderer_set_def(renderer, &vs.def, err, sizeof err) != PBF_OK) {
                rc = cli_error("view: %s", err);
                break;
            }
            vs.look_changed = 0;
            filled = 0; /* the new look may need other buffers (colours, ellipsoids) */
        }
        /* interop: a new snapshot, or a new look, into the vertex buffers; the lock keeps the
         * simulation thread from replacing the snapshot meanwhile */
        if (interop != NULL && seen != 0 && filled != seen) {
            pthread_mutex_lock(&sh.lock);
            pbf_status fst = pbf_render_cuda_fill(interop, renderer, NULL, &gpu, err, sizeof err);
            filled = sh.version;
            pthread_mutex_unlock(&sh.lock);
            if (fst != PBF_OK) {
                rc = cli_error("view: %s", err);
                break;
            }
        }
        pbf_render_scene s = pbf_default_render_scene();
        s.particle_count = count;
        s.positions = pos;
        s.velocities = vel;
        s.densities = rho;
        if (interop != NULL) {
            s.particle_count = seen != 0 ? gpu.particle_count : 0;
            s.gl_positions = gpu.gl_positions;
            s.gl_scalars = gpu.gl_scalars;
            s.gl_centers = gpu.gl_centers;
            s.gl_axes = gpu.gl_axes;
            s.gl_scalar_range[0] = gpu.gl_scalar_range[0];
            s.gl_scalar_range[1] = gpu.gl_scalar_range[1];
        } else if (render_phases_from_scene(scene, &s) > 0) { /* several fluids: own tints */
            s.phases = phase;
        }
        s.particle_radius = scene->world.particle_radius;
        s.rest_density = scene->world.rest_density;
        s.domain_min = dmin;
        s.domain_max = dmax;
        s.collider_count = scene->collider_count;
        s.colliders = scene->colliders;
        s.mesh_count = mesh_count;
        s.meshes = meshes;
        s.diffuse_count = diffuse_count; /* spray, foam and bubbles */
        s.diffuse_positions = diffuse.positions;
        s.diffuse_kinds = diffuse.kinds;
        if (has_tool) { /* tool */
            tool_shape.type = PBF_COLLIDER_SPHERE;
            tool_shape.center = tool.position;
            tool_shape.radius = tool.radius;
            s.tool = &tool_shape;
        }
        float eye[3];
        camera_position(&vs, eye);
        s.camera.position = (pbf_vec3){eye[0], eye[1], eye[2]};
        s.camera.target = (pbf_vec3){vs.target[0], vs.target[1], vs.target[2]};
        s.camera.fov = vs.fov;
        double r0 = now_s();
        if (pbf_renderer_draw(renderer, &s, err, sizeof err) != PBF_OK) {
            rc = cli_error("view: %s", err);
            break;
        }
        pbf_render_timings rt = pbf_renderer_timings(renderer);
        double render_ms = 1000.0 * (now_s() - r0);
        ++fps_frames;
        if (t - fps_t0 >= 0.5) {
            fps = fps_frames / (t - fps_t0);
            fps_frames = 0;
            fps_t0 = t;
        }
        if (vs.hud) {
            char n[32];
            size_t len = (size_t)snprintf(
                hud, sizeof hud, "%s  %.1f fps  %s particles  t %.2f s%s\nstep %.1f ms ",
                scene->name, fps, cli_format_count(count, n, sizeof n), sim_time,
                failed   ? "  STOPPED"
                : paused ? "  PAUSED"
                         : "",
                prof.step_ms);
            for (int k = 0; k < PBF_STAGE_COUNT && len < sizeof hud; ++k)
                len +=
                    (size_t)snprintf(hud + len, sizeof hud - len, "%s %s %.1f", k == 4 ? "\n " : "",
                                     pbf_stage_name((pbf_stage)k), prof.stage_ms[k]);
            if (has_tool && len < sizeof hud) /* tool: the force on it, N */
                len += (size_t)snprintf(hud + len, sizeof hud - len,
                                        "\ntool F (%+.2f %+.2f %+.2f) N  [right drag] move",
                                        (double)tool.total.x, (double)tool.total.y,
                                        (double)tool.total.z);
            if (len < sizeof hud)
                snprintf(hud + len, sizeof hud - len,
                         "\nrender %.1f ms  sky %.1f  depth %.1f  thick %.1f\n  smooth %.1f  "
                         "normal %.1f  shade %.1f\n"
                         "[Tab] %s  [Space] pause  [N] step  [R] reset  [H] hud",
                         render_ms, rt.background_ms, rt.depth_ms, rt.thickness_ms, rt.smooth_ms,
                         rt.normal_ms, rt.shade_ms,
                         vs.def.look == PBF_LOOK_FLUID ? "fluid" : "spheres");
            pbf_renderer_draw_text(renderer, 8, 8, fb_w >= 1200 ? 2 : 1, hud);
        }
        /* Frames count from the first state the simulation published (or its failure): a
         * screenshot never shows the empty scene of a window faster than world creation. */
        if (seen != 0 || failed) ++drawn;
        if (drawn == 1) { /* --offscreen's rates count from here */
            off_t0 = now_s();
            off_sim0 = sim_time;
            off_steps0 = prof.steps;
            off_render_ms = 0.0;
        } else if (drawn > 1) {
            off_render_ms += render_ms;
        }
        if (offscreen && screenshot == NULL && drawn >= frames) {
            double wall = now_s() - off_t0;
            int n = drawn - 1;
            char particles[32];
            printf("pbf view --offscreen: %dx%d, %s particles, %s\n"
                   "  %d frames in %.3f s: %.1f fps drawn, %.2f ms per frame in the renderer\n"
                   "  simulation: %lld steps, %.3f s simulated per s of wall time (1 = real "
                   "time)%s\n",
                   vs.def.width, vs.def.height,
                   cli_format_count(count, particles, sizeof particles),
                   interop != NULL ? "through CUDA-OpenGL interop" : "through host memory", n, wall,
                   wall > 0.0 ? n / wall : 0.0, n > 0 ? off_render_ms / n : 0.0,
                   (long long)(prof.steps - off_steps0),
                   wall > 0.0 ? (sim_time - off_sim0) / wall : 0.0,
                   failed ? " (STOPPED: see above)" : "");
            if (failed) rc = CLI_EXIT_ERROR;
            break;
        }
        if (screenshot != NULL && drawn >= frames) {
            shot = malloc((size_t)vs.def.width * (size_t)vs.def.height * 4);
            if (shot == NULL) {
                rc = cli_error("out of memory");
            } else if (pbf_renderer_read_rgba(renderer, shot, err, sizeof err) != PBF_OK ||
                       pbf_png_write(screenshot, shot, vs.def.width, vs.def.height, err,
                                     sizeof err) != PBF_OK) {
                rc = cli_error("view: %s", err);
            } else {
                fprintf(stderr, "pbf view: wrote %s (%dx%d, frame %d, t = %.3f s)\n", screenshot,
                        vs.def.width, vs.def.height, drawn, sim_time);
            }
            free(shot);
            break;
        }
        if (win != NULL) {
            pbf_renderer_present(renderer, fb_w, fb_h);
            glfwSwapBuffers(win);
        }
    }

    command(&vs, &sh.quit, 1);
    pthread_join(thread, NULL);
    pthread_mutex_destroy(&sh.lock);
    pthread_cond_destroy(&sh.wake);
    free(sh.positions);
    render_diffuse_free(&sh.diffuse);
    free(sh.velocities);
    free(sh.densities);
    free(sh.phases);
    for (int i = 0; i < PBF_MAX_MESHES; ++i) {
        free(sh.mesh_vertices[i]);
        free(sh.mesh_triangles[i]);
    }
    free(pos);
    render_diffuse_free(&diffuse);
    free(vel);
    free(rho);
    free(phase);
    pbf_render_cuda_destroy(interop);
    pbf_renderer_destroy(renderer);
    close_display(win, headless);
    free(scene);
    return rc;
}

#endif /* PBF_WITH_GLFW */
