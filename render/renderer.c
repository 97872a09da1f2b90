/* The renderer: GL resources and the order of the passes. The shading itself lives in
 * render/shaders (embedded at build time); docs/rendering.md walks through the passes. */
#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "font.h"
#include "gl.h"
#include "mesh_draw.h"
#include "pbf/surface.h"
#include "shaders_gen.h"
#include "util.h"

/* Thickness is a smooth quantity: half resolution is enough and quarters its fill cost. */
#define THICKNESS_DOWNSAMPLE 2
/* Texture unit of the sky cube map in every program (a cube and a 2D sampler must never share
 * a unit). */
#define SKY_UNIT 7
#define PBF_RENDER_PI 3.14159265358979f

enum {
    STAGE_BACKGROUND,
    STAGE_DEPTH,
    STAGE_THICKNESS,
    STAGE_SMOOTH,
    STAGE_NORMAL,
    STAGE_SHADE,
    STAGE_COUNT
};

struct pbf_renderer {
    pbf_render_def def;
    int width, height;
    int thick_w, thick_h;

    GLuint prog_background, prog_solid, prog_lines, prog_depth, prog_thickness, prog_spheres,
        prog_smooth, prog_smooth2d, prog_normal, prog_composite, prog_text, prog_ellipsoid,
        prog_mesh, prog_diffuse;
    GLuint vao_empty, vao_particles, vbo_positions, vbo_scalars, vao_text, vbo_text;
    GLuint vao_ellipsoids, vbo_centers, vbo_axes;
    GLuint vao_diffuse, vbo_diffuse_positions, vbo_diffuse_kinds; /* diffuse particles */
    size_t diffuse_positions_capacity, diffuse_kinds_capacity; /* bytes in their buffers */
    float *diffuse_kinds; /* CPU side of the kinds, as floats */
    int diffuse_kinds_size;
    size_t positions_capacity, scalars_capacity; /* bytes in the GL buffers */
    size_t centers_capacity, axes_capacity;

    /* Mesh solids: their triangles on the GPU, one slot per pbf_render_scene.meshes entry. */
    mesh_slots meshes;

    /* Ellipsoid splats: the particles' anisotropy (pbf_surface_anisotropy), CPU side. */
    float *centers, *axes;
    int anisotropy_count;

    /* Targets (see create_targets). */
    GLuint tex_scene, tex_scene_depth, fbo_scene;
    GLuint tex_zbuf, tex_depth_raw, fbo_depth, fbo_spheres;
    GLuint tex_ping, tex_pong, fbo_ping, fbo_pong;
    GLuint tex_thickness, fbo_thickness;
    GLuint tex_normal, fbo_normal;
    GLuint tex_final, fbo_final;
    GLuint tex_font, tex_sky, tex_sky_empty;
    GLuint tex_smoothed; /* which of raw/ping/pong holds the final depth of the last frame */

    /* GL_TIMESTAMP queries at the start of each stage and at the end of the frame (time-elapsed
     * queries misreport the first stage of a frame on llvmpipe). */
    GLuint queries[STAGE_COUNT + 1];
    int query_used[STAGE_COUNT];
    int frame_drawn;
    int fluid_drawn;

    /* Per-frame camera, kept for the text overlay and the domain edges. */
    pbf_mat4 view, proj, inv_view;
    float camera[3];
    float tan_half_fov, aspect, znear, zfar;

    float *scalars; /* CPU side of the colour values */
    int scalars_count;
    float *text_vertices;
    size_t text_capacity; /* floats */
};

/* ---------------------------------------------------------------------------------------------
 * Definitions */

pbf_render_def pbf_default_render_def(void) {
    pbf_render_def d;
    memset(&d, 0, sizeof d);
    d.width = 1280;
    d.height = 720;
    d.look = PBF_LOOK_FLUID;
    d.color = PBF_COLOR_UNIFORM;
    d.color_min = 0.0f;
    d.color_max = 0.0f;
    d.radius_scale = 1.0f;
    d.fluid_radius_scale = 1.5f;
    d.fluid_splats = PBF_SPLAT_ELLIPSOID;
    d.smooth_iterations = 3;
    d.smooth_radius = 16;
    d.smooth_scale = 2.0f;
    d.smooth_depth = 4.0f;
    d.absorption[0] = 8.0f;
    d.absorption[1] = 3.0f;
    d.absorption[2] = 1.5f;
    d.fluid_color[0] = 0.02f;
    d.fluid_color[1] = 0.18f;
    d.fluid_color[2] = 0.30f;
    d.min_transmission = 0.15f;
    d.refraction = 0.5f;
    d.ior = 1.33f;
    d.sphere_color[0] = 0.15f;
    d.sphere_color[1] = 0.40f;
    d.sphere_color[2] = 0.85f;
    d.sky = PBF_SKY_GRADIENT;
    d.sky_dir = NULL;
    d.floor = 1;
    d.domain_edges = 1;
    d.passes = PBF_PASS_ALL;
    return d;
}

pbf_render_scene pbf_default_render_scene(void) {
    pbf_render_scene s;
    memset(&s, 0, sizeof s);
    s.particle_radius = 0.01f;
    s.rest_density = 1000.0f;
    s.domain_max = (pbf_vec3){1.0f, 1.0f, 1.0f};
    s.camera.fov = 40.0f;
    return s;
}

pbf_camera_def pbf_render_default_camera(pbf_vec3 lo, pbf_vec3 hi, float aspect) {
    pbf_camera_def c;
    float fov = 40.0f;
    float cx = 0.5f * (lo.x + hi.x), cy = 0.5f * (lo.y + hi.y), cz = 0.5f * (lo.z + hi.z);
    float ex = hi.x - lo.x, ey = hi.y - lo.y, ez = hi.z - lo.z;
    /* Look slightly down from the front; back off until the box's width and height fit. */
    float dir[3] = {0.0f, 0.42f, 1.0f};
    float len = sqrtf(dir[1] * dir[1] + dir[2] * dir[2]);
    dir[1] /= len;
    dir[2] /= len;
    float tan_v = tanf(0.5f * fov * PBF_RENDER_PI / 180.0f);
    float tan_h = tan_v * (aspect > 0.0f ? aspect : 1.0f);
    float fit_h = 0.5f * ex / tan_h + 0.5f * ez;
    float fit_v = 0.5f * (ey * dir[2] + ez * dir[1]) / tan_v + 0.5f * ez;
    float dist = 1.08f * (fit_h > fit_v ? fit_h : fit_v);
    c.target = (pbf_vec3){cx, cy - 0.08f * ey, cz};
    c.position = (pbf_vec3){cx + dir[0] * dist, c.target.y + dir[1] * dist, cz + dir[2] * dist};
    c.fov = fov;
    return c;
}

static pbf_status validate_def(const pbf_render_def *d, char *err, size_t n) {
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            pbf_render_set_error(err, n, __VA_ARGS__);                                             \
            return PBF_ERR_INVALID_ARG;                                                            \
        }                                                                                          \
    } while (0)
    CHECK(d->width >= 16 && d->width <= 8192 && d->height >= 16 && d->height <= 8192,
          "render: resolution %dx%d is outside 16..8192", d->width, d->height);
    CHECK(d->look == PBF_LOOK_FLUID || d->look == PBF_LOOK_SPHERES, "render: unknown look %d",
          (int)d->look);
    CHECK(d->fluid_splats == PBF_SPLAT_ELLIPSOID || d->fluid_splats == PBF_SPLAT_SPHERE,
          "render: unknown fluid_splats %d (expected ellipsoid or sphere)", (int)d->fluid_splats);
    CHECK(d->color >= PBF_COLOR_UNIFORM && d->color <= PBF_COLOR_DENSITY,
          "render: unknown colour mode %d", (int)d->color);
    CHECK(d->radius_scale > 0.0f && d->radius_scale <= 4.0f,
          "render: radius_scale %g is outside (0, 4]", (double)d->radius_scale);
    CHECK(d->fluid_radius_scale > 0.0f && d->fluid_radius_scale <= 4.0f,
          "render: fluid_radius_scale %g is outside (0, 4]", (double)d->fluid_radius_scale);
    CHECK(d->smooth_iterations >= 0 && d->smooth_iterations <= 16,
          "render: smooth_iterations %d is outside [0, 16]", d->smooth_iterations);
    CHECK(d->smooth_radius >= 1 && d->smooth_radius <= 64,
          "render: smooth_radius %d is outside [1, 64]", d->smooth_radius);
    CHECK(d->smooth_scale > 0.0f && d->smooth_scale <= 16.0f,
          "render: smooth_scale %g is outside (0, 16]", (double)d->smooth_scale);
    CHECK(d->smooth_depth > 0.0f && d->smooth_depth <= 64.0f,
          "render: smooth_depth %g is outside (0, 64]", (double)d->smooth_depth);
    for (int i = 0; i < 3; ++i) {
        CHECK(d->absorption[i] >= 0.0f && d->absorption[i] <= 1000.0f,
              "render: absorption[%d] %g is outside [0, 1000]", i, (double)d->absorption[i]);
    }
    CHECK(d->min_transmission >= 0.0f && d->min_transmission <= 1.0f,
          "render: min_transmission %g is outside [0, 1]", (double)d->min_transmission);
    CHECK(d->refraction >= 0.0f && d->refraction <= 4.0f, "render: refraction %g is outside [0, 4]",
          (double)d->refraction);
    CHECK(d->ior >= 1.0f && d->ior <= 3.0f, "render: ior %g is outside [1, 3]", (double)d->ior);
    CHECK(d->sky == PBF_SKY_GRADIENT || (d->sky == PBF_SKY_CUBEMAP && d->sky_dir != NULL),
          "render: a cube map sky needs sky_dir");
    CHECK((d->passes & ~(unsigned)PBF_PASS_ALL) == 0, "render: unknown pass bits 0x%x", d->passes);
#undef CHECK
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * GL helpers */

pbf_status pbf_render_load_gl(pbf_gl_get_proc get_proc, char *err, size_t err_size) {
    pbf_status st = pbf_gl_load_functions(get_proc, err, err_size);
    if (st != PBF_OK) return st;
    GLint major = 0, minor = 0;
    glGetIntegerv(GL_MAJOR_VERSION, &major);
    glGetIntegerv(GL_MINOR_VERSION, &minor);
    if (major < 3 || (major == 3 && minor < 3)) {
        pbf_render_set_error(err, err_size, "OpenGL %d.%d found, the renderer needs 3.3 core",
                             (int)major, (int)minor);
        return PBF_ERR_UNSUPPORTED;
    }
    return PBF_OK;
}

static GLuint compile_shader(GLenum type, const char *name, const char *const *sources, int count,
                             char *err, size_t n) {
    GLuint s = glCreateShader(type);
    glShaderSource(s, count, sources, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, (GLsizei)sizeof log, NULL, log);
        pbf_render_set_error(err, n, "render: shader %s does not compile: %s", name, log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

/* A program from a vertex and a fragment shader, each after the version line and the shared
 * code; sphere fragment shaders get the sphere ray-cast too. */
static GLuint build_program(const char *vs_name, const char *vs, const char *fs_name,
                            const char *fs, int sphere, char *err, size_t n) {
    static const char version[] = "#version 330 core\n";
    const char *vsrc[] = {version, pbf_shader_common_glsl, vs};
    const char *fsrc[] = {version, pbf_shader_common_glsl, pbf_shader_sphere_common_glsl, fs};
    GLuint v = compile_shader(GL_VERTEX_SHADER, vs_name, vsrc, 3, err, n);
    if (v == 0) return 0;
    if (!sphere) fsrc[2] = "";
    GLuint f = compile_shader(GL_FRAGMENT_SHADER, fs_name, fsrc, 4, err, n);
    if (f == 0) {
        glDeleteShader(v);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(p, (GLsizei)sizeof log, NULL, log);
        pbf_render_set_error(err, n, "render: program %s + %s does not link: %s", vs_name, fs_name,
                             log);
        glDeleteProgram(p);
        return 0;
    }
    glUseProgram(p);
    glUniform1i(glGetUniformLocation(p, "u_sky_cube"), SKY_UNIT);
    glUseProgram(0);
    return p;
}

static void uniform1i(GLuint p, const char *name, int v) {
    glUniform1i(glGetUniformLocation(p, name), v);
}
static void uniform1f(GLuint p, const char *name, float v) {
    glUniform1f(glGetUniformLocation(p, name), v);
}
static void uniform2f(GLuint p, const char *name, float x, float y) {
    glUniform2f(glGetUniformLocation(p, name), x, y);
}
static void uniform3f(GLuint p, const char *name, float x, float y, float z) {
    glUniform3f(glGetUniformLocation(p, name), x, y, z);
}
static void uniform3v(GLuint p, const char *name, const float *v) {
    glUniform3f(glGetUniformLocation(p, name), v[0], v[1], v[2]);
}

/* Several fluids: u_use_phases and each phase's absorption (u_phase_absorption[k]). */
static void set_phase_absorption(GLuint p, const pbf_render_scene *s) {
    glUniform1i(glGetUniformLocation(p, "u_use_phases"), s->phases != NULL ? 1 : 0);
    int n = s->phases != NULL ? s->phase_count : 0;
    n = n < 0 ? 0 : n > PBF_MAX_PHASES ? PBF_MAX_PHASES : n;
    if (n > 0)
        glUniform3fv(glGetUniformLocation(p, "u_phase_absorption"), n, s->phase_absorption[0]);
}
static void uniform_mat4(GLuint p, const char *name, const pbf_mat4 *m) {
    glUniformMatrix4fv(glGetUniformLocation(p, name), 1, GL_FALSE, m->m);
}

static GLuint make_texture(GLenum internal, int w, int h, GLenum format, GLenum type,
                           GLenum filter) {
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, format, type, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, (GLint)filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, (GLint)filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

static GLuint make_fbo(GLuint color, GLuint depth, char *err, size_t n, const char *name) {
    GLuint f = 0;
    glGenFramebuffers(1, &f);
    glBindFramebuffer(GL_FRAMEBUFFER, f);
    if (color)
        glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color, 0);
    if (depth) glFramebufferTexture2D(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_TEXTURE_2D, depth, 0);
    GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        pbf_render_set_error(err, n, "render: framebuffer %s is incomplete (0x%x)", name,
                             (unsigned)status);
        glDeleteFramebuffers(1, &f);
        return 0;
    }
    return f;
}

static void delete_targets(pbf_renderer *r) {
    GLuint fbos[] = {r->fbo_scene, r->fbo_depth,     r->fbo_spheres, r->fbo_ping,
                     r->fbo_pong,  r->fbo_thickness, r->fbo_normal,  r->fbo_final};
    GLuint texs[] = {r->tex_scene, r->tex_scene_depth, r->tex_zbuf,   r->tex_depth_raw, r->tex_ping,
                     r->tex_pong,  r->tex_thickness,   r->tex_normal, r->tex_final};
    glDeleteFramebuffers((GLsizei)(sizeof fbos / sizeof fbos[0]), fbos);
    glDeleteTextures((GLsizei)(sizeof texs / sizeof texs[0]), texs);
    r->fbo_scene = r->fbo_depth = r->fbo_spheres = r->fbo_ping = r->fbo_pong = 0;
    r->fbo_thickness = r->fbo_normal = r->fbo_final = 0;
    r->tex_scene = r->tex_scene_depth = r->tex_zbuf = r->tex_depth_raw = r->tex_ping = 0;
    r->tex_pong = r->tex_thickness = r->tex_normal = r->tex_final = 0;
}

/* Render targets:
 *   scene   RGBA16F linear colour + DEPTH32F: sky, floor, solids (what refraction sees)
 *   depth   R32F eye depth of the nearest sphere + zbuf (DEPTH32F, starts as a copy of the
 *           scene depth so solids hide the fluid behind them)
 *   spheres scene colour + zbuf: the spheres look
 *   ping/pong R32F: the smoothing passes
 *   thickness RGBA16F at 1/THICKNESS_DOWNSAMPLE resolution, additive: r the thickness, gba
 *           the optical depth (absorption times thickness) with several fluids
 *   normal  RGBA16F eye-space normal
 *   final   RGBA8 sRGB image + zbuf (for the domain edges drawn over the fluid) */
static pbf_status create_targets(pbf_renderer *r, char *err, size_t n) {
    int w = r->def.width, h = r->def.height;
    r->width = w;
    r->height = h;
    r->thick_w = (w + THICKNESS_DOWNSAMPLE - 1) / THICKNESS_DOWNSAMPLE;
    r->thick_h = (h + THICKNESS_DOWNSAMPLE - 1) / THICKNESS_DOWNSAMPLE;
    r->tex_scene = make_texture(GL_RGBA16F, w, h, GL_RGBA, GL_FLOAT, GL_LINEAR);
    r->tex_scene_depth =
        make_texture(GL_DEPTH_COMPONENT32F, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, GL_NEAREST);
    r->tex_zbuf =
        make_texture(GL_DEPTH_COMPONENT32F, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, GL_NEAREST);
    r->tex_depth_raw = make_texture(GL_R32F, w, h, GL_RED, GL_FLOAT, GL_NEAREST);
    r->tex_ping = make_texture(GL_R32F, w, h, GL_RED, GL_FLOAT, GL_NEAREST);
    r->tex_pong = make_texture(GL_R32F, w, h, GL_RED, GL_FLOAT, GL_NEAREST);
    r->tex_thickness =
        make_texture(GL_RGBA16F, r->thick_w, r->thick_h, GL_RGBA, GL_FLOAT, GL_LINEAR);
    r->tex_normal = make_texture(GL_RGBA16F, w, h, GL_RGBA, GL_FLOAT, GL_NEAREST);
    r->tex_final = make_texture(GL_RGBA8, w, h, GL_RGBA, GL_UNSIGNED_BYTE, GL_LINEAR);
    if (!(r->fbo_scene = make_fbo(r->tex_scene, r->tex_scene_depth, err, n, "scene")) ||
        !(r->fbo_depth = make_fbo(r->tex_depth_raw, r->tex_zbuf, err, n, "depth")) ||
        !(r->fbo_spheres = make_fbo(r->tex_scene, r->tex_zbuf, err, n, "spheres")) ||
        !(r->fbo_ping = make_fbo(r->tex_ping, 0, err, n, "smooth ping")) ||
        !(r->fbo_pong = make_fbo(r->tex_pong, 0, err, n, "smooth pong")) ||
        !(r->fbo_thickness = make_fbo(r->tex_thickness, 0, err, n, "thickness")) ||
        !(r->fbo_normal = make_fbo(r->tex_normal, 0, err, n, "normal")) ||
        !(r->fbo_final = make_fbo(r->tex_final, r->tex_zbuf, err, n, "final"))) {
        delete_targets(r);
        return PBF_ERR_UNSUPPORTED;
    }
    r->tex_smoothed = r->tex_depth_raw;
    r->frame_drawn = 0;
    return PBF_OK;
}

/* The six faces of a cube map from def.sky_dir, or a 1x1 black cube when there is none (a
 * sampler must always have a complete texture behind it). */
static pbf_status load_sky(pbf_renderer *r, char *err, size_t n) {
    static const char *faces[6] = {"px", "nx", "py", "ny", "pz", "nz"};
    if (r->tex_sky != 0) glDeleteTextures(1, &r->tex_sky);
    r->tex_sky = 0;
    glGenTextures(1, &r->tex_sky);
    glBindTexture(GL_TEXTURE_CUBE_MAP, r->tex_sky);
    pbf_status st = PBF_OK;
    for (int i = 0; i < 6; ++i) {
        uint8_t black[4] = {0, 0, 0, 255};
        uint8_t *pixels = NULL;
        int w = 1, h = 1;
        if (r->def.sky == PBF_SKY_CUBEMAP) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.png", r->def.sky_dir, faces[i]);
            st = pbf_png_read(path, &pixels, &w, &h, err, n);
            if (st != PBF_OK) break;
            if (w != h) {
                pbf_render_set_error(err, n, "render: sky face %s is %dx%d, not square", path, w,
                                     h);
                free(pixels);
                st = PBF_ERR_INVALID_ARG;
                break;
            }
        }
        /* Sky images are sRGB; the shaders work in linear light. */
        glTexImage2D(GL_TEXTURE_CUBE_MAP_POSITIVE_X + (GLenum)i, 0, GL_SRGB8_ALPHA8, w, h, 0,
                     GL_RGBA, GL_UNSIGNED_BYTE, pixels != NULL ? pixels : black);
        free(pixels);
    }
    glTexParameteri(GL_TEXTURE_CUBE_MAP, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_CUBE_MAP, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_CUBE_MAP, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_CUBE_MAP, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_CUBE_MAP, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
    glBindTexture(GL_TEXTURE_CUBE_MAP, 0);
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Create / destroy */

pbf_status pbf_renderer_create(const pbf_render_def *def, pbf_renderer **out, char *err, size_t n) {
    if (out == NULL || def == NULL) {
        pbf_render_set_error(err, n, "pbf_renderer_create: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (!pbf_gl_loaded()) {
        pbf_render_set_error(err, n,
                             "render: no OpenGL loaded (create a headless context or call "
                             "pbf_render_load_gl first)");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_status st = validate_def(def, err, n);
    if (st != PBF_OK) return st;
    pbf_renderer *r = calloc(1, sizeof *r);
    if (r == NULL) {
        pbf_render_set_error(err, n, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    r->def = *def;
    r->def.sky_dir = NULL; /* not kept: see pbf_render_def.sky_dir */

    struct {
        GLuint *out;
        const char *vs_name, *vs, *fs_name, *fs;
        int sphere;
    } programs[] = {
        {&r->prog_background, "fullscreen.vert", pbf_shader_fullscreen_vert, "background.frag",
         pbf_shader_background_frag, 0},
        {&r->prog_solid, "solid.vert", pbf_shader_solid_vert, "solid.frag", pbf_shader_solid_frag,
         0},
        {&r->prog_lines, "lines.vert", pbf_shader_lines_vert, "lines.frag", pbf_shader_lines_frag,
         0},
        {&r->prog_depth, "sphere.vert", pbf_shader_sphere_vert, "sphere_depth.frag",
         pbf_shader_sphere_depth_frag, 1},
        {&r->prog_thickness, "sphere.vert", pbf_shader_sphere_vert, "sphere_thickness.frag",
         pbf_shader_sphere_thickness_frag, 1},
        {&r->prog_spheres, "sphere.vert", pbf_shader_sphere_vert, "sphere_shade.frag",
         pbf_shader_sphere_shade_frag, 1},
        {&r->prog_smooth, "fullscreen.vert", pbf_shader_fullscreen_vert, "smooth.frag",
         pbf_shader_smooth_frag, 0},
        {&r->prog_smooth2d, "fullscreen.vert", pbf_shader_fullscreen_vert, "smooth2d.frag",
         pbf_shader_smooth2d_frag, 0},
        {&r->prog_normal, "fullscreen.vert", pbf_shader_fullscreen_vert, "normal.frag",
         pbf_shader_normal_frag, 0},
        {&r->prog_composite, "fullscreen.vert", pbf_shader_fullscreen_vert, "composite.frag",
         pbf_shader_composite_frag, 0},
        {&r->prog_text, "text.vert", pbf_shader_text_vert, "text.frag", pbf_shader_text_frag, 0},
        {&r->prog_ellipsoid, "ellipsoid.vert", pbf_shader_ellipsoid_vert, "ellipsoid_depth.frag",
         pbf_shader_ellipsoid_depth_frag, 0},
        {&r->prog_mesh, "mesh.vert", pbf_shader_mesh_vert, "mesh.frag", pbf_shader_mesh_frag, 0},
        {&r->prog_diffuse, "diffuse.vert", pbf_shader_diffuse_vert, "diffuse.frag",
         pbf_shader_diffuse_frag, 0},
    };
    for (size_t i = 0; i < sizeof programs / sizeof programs[0]; ++i) {
        *programs[i].out = build_program(programs[i].vs_name, programs[i].vs, programs[i].fs_name,
                                         programs[i].fs, programs[i].sphere, err, n);
        if (*programs[i].out == 0) {
            pbf_renderer_destroy(r);
            return PBF_ERR_UNSUPPORTED;
        }
    }

    glGenVertexArrays(1, &r->vao_empty);
    glGenVertexArrays(1, &r->vao_particles);
    glGenBuffers(1, &r->vbo_positions);
    glGenBuffers(1, &r->vbo_scalars);
    glBindVertexArray(r->vao_particles);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_positions);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    glVertexAttribDivisor(0, 1);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_scalars);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, 0, NULL);
    glVertexAttribDivisor(1, 1);
    /* diffuse particles: position (location 0) and kind (1), one per point */
    glGenVertexArrays(1, &r->vao_diffuse);
    glGenBuffers(1, &r->vbo_diffuse_positions);
    glGenBuffers(1, &r->vbo_diffuse_kinds);
    glBindVertexArray(r->vao_diffuse);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_diffuse_positions);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_diffuse_kinds);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, 0, NULL);
    /* ellipsoids: centre (location 0) and the three axes (2, 3, 4), one set per instance */
    glGenVertexArrays(1, &r->vao_ellipsoids);
    glGenBuffers(1, &r->vbo_centers);
    glGenBuffers(1, &r->vbo_axes);
    glBindVertexArray(r->vao_ellipsoids);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_centers);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    glVertexAttribDivisor(0, 1);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_axes);
    for (int k = 0; k < 3; ++k) {
        /* per instance the three rows of the axes' matrix (see bind_particle_buffers) */
        glEnableVertexAttribArray((GLuint)(2 + k));
        glVertexAttribPointer((GLuint)(2 + k), 3, GL_FLOAT, GL_FALSE, 9 * sizeof(float),
                              (const void *)(uintptr_t)(3 * k * sizeof(float)));
        glVertexAttribDivisor((GLuint)(2 + k), 1);
    }
    glGenVertexArrays(1, &r->vao_text);
    glGenBuffers(1, &r->vbo_text);
    glBindVertexArray(r->vao_text);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_text);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float), NULL);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 2, GL_FLOAT, GL_FALSE, 4 * sizeof(float),
                          (const void *)(2 * sizeof(float)));
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    unsigned char atlas[PBF_FONT_ATLAS_W * PBF_FONT_ATLAS_H];
    pbf_font_build_atlas(atlas);
    r->tex_font = make_texture(GL_R8, PBF_FONT_ATLAS_W, PBF_FONT_ATLAS_H, GL_RED, GL_UNSIGNED_BYTE,
                               GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, r->tex_font);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, PBF_FONT_ATLAS_W, PBF_FONT_ATLAS_H, 0, GL_RED,
                 GL_UNSIGNED_BYTE, atlas);
    glBindTexture(GL_TEXTURE_2D, 0);

    glGenQueries(STAGE_COUNT + 1, r->queries);

    r->def.sky_dir = def->sky_dir;
    st = load_sky(r, err, n);
    r->def.sky_dir = NULL;
    if (st == PBF_OK) st = create_targets(r, err, n);
    if (st != PBF_OK) {
        pbf_renderer_destroy(r);
        return st;
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        pbf_render_set_error(err, n, "render: OpenGL error 0x%x while creating the renderer",
                             (unsigned)e);
        pbf_renderer_destroy(r);
        return PBF_ERR_UNSUPPORTED;
    }
    *out = r;
    return PBF_OK;
}

void pbf_renderer_destroy(pbf_renderer *r) {
    if (r == NULL) return;
    GLuint progs[] = {r->prog_background, r->prog_solid,     r->prog_lines,  r->prog_depth,
                      r->prog_thickness,  r->prog_spheres,   r->prog_smooth, r->prog_smooth2d,
                      r->prog_normal,     r->prog_composite, r->prog_text,   r->prog_ellipsoid,
                      r->prog_mesh,       r->prog_diffuse};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; ++i) {
        if (progs[i]) glDeleteProgram(progs[i]);
    }
    delete_targets(r);
    mesh_slots_free(&r->meshes);
    GLuint vaos[] = {r->vao_empty, r->vao_particles, r->vao_text, r->vao_ellipsoids,
                     r->vao_diffuse};
    GLuint bufs[] = {r->vbo_positions,    r->vbo_scalars, r->vbo_text,
                     r->vbo_centers,      r->vbo_axes,    r->vbo_diffuse_positions,
                     r->vbo_diffuse_kinds};
    GLuint texs[] = {r->tex_font, r->tex_sky};
    glDeleteVertexArrays(5, vaos);
    glDeleteBuffers(7, bufs);
    glDeleteTextures(2, texs);
    if (r->queries[0]) glDeleteQueries(STAGE_COUNT + 1, r->queries);
    free(r->scalars);
    free(r->diffuse_kinds);
    free(r->centers);
    free(r->axes);
    free(r->text_vertices);
    free(r);
}

const pbf_render_def *pbf_renderer_get_def(const pbf_renderer *r) { return &r->def; }

pbf_status pbf_renderer_set_def(pbf_renderer *r, const pbf_render_def *def, char *err, size_t n) {
    pbf_status st = validate_def(def, err, n);
    if (st != PBF_OK) return st;
    int resize = def->width != r->def.width || def->height != r->def.height;
    int sky = def->sky != r->def.sky || def->sky == PBF_SKY_CUBEMAP;
    r->def = *def;
    if (sky) {
        st = load_sky(r, err, n);
        if (st != PBF_OK) {
            r->def.sky = PBF_SKY_GRADIENT;
            r->def.sky_dir = NULL;
            load_sky(r, NULL, 0);
            return st;
        }
    }
    r->def.sky_dir = NULL;
    if (resize) {
        delete_targets(r);
        st = create_targets(r, err, n);
    }
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Drawing */

static void begin_stage(pbf_renderer *r, int stage) {
    glQueryCounter(r->queries[stage], GL_TIMESTAMP);
    r->query_used[stage] = 1;
}
/* Stages run back to back: a stage ends where the next one starts, the last at the frame's
 * final stamp. */
static void end_stage(void) {}

/* Uniforms of common.glsl, for one program. */
static void set_common(const pbf_renderer *r, GLuint p, const pbf_render_scene *s,
                       const float sun[3], float checker, float fog) {
    uniform_mat4(p, "u_view", &r->view);
    uniform_mat4(p, "u_proj", &r->proj);
    uniform_mat4(p, "u_inv_view", &r->inv_view);
    uniform2f(p, "u_resolution", (float)r->width, (float)r->height);
    uniform1f(p, "u_tan_half_fov", r->tan_half_fov);
    uniform1f(p, "u_aspect", r->aspect);
    uniform1f(p, "u_near", r->znear);
    uniform1f(p, "u_far", r->zfar);
    uniform3v(p, "u_camera", r->camera);
    uniform3v(p, "u_sun", sun);
    uniform1i(p, "u_floor", r->def.floor ? 1 : 0);
    uniform1f(p, "u_floor_y", s->domain_min.y);
    uniform1f(p, "u_checker", checker);
    uniform1f(p, "u_fog", fog);
    uniform1i(p, "u_sky_mode", r->def.sky == PBF_SKY_CUBEMAP ? 1 : 0);
}

/* 1, 2 or 5 times a power of ten, near x. */
static float nice_length(float x) {
    float e = powf(10.0f, floorf(log10f(x)));
    float m = x / e;
    return e * (m < 1.5f ? 1.0f : (m < 3.5f ? 2.0f : (m < 7.5f ? 5.0f : 10.0f)));
}

static void upload(GLuint buffer, size_t *capacity, const void *data, size_t bytes);

/* Ellipsoid splats: the particles' anisotropic kernels (pbf_surface_anisotropy with the
 * mesher's defaults: the same ellipsoids as `pbf mesh`), uploaded as centres and axes in its
 * layout; the shader scales them from the kernel's support to the drawn radius
 * (ellipsoid_scale). */
static pbf_status upload_anisotropy(pbf_renderer *r, const pbf_render_scene *s, char *err,
                                    size_t n) {
    const int count = s->particle_count;
    if (count > r->anisotropy_count) {
        float *c = realloc(r->centers, 3 * (size_t)count * sizeof *c);
        if (c != NULL) r->centers = c;
        float *a = realloc(r->axes, 9 * (size_t)count * sizeof *a);
        if (a != NULL) r->axes = a;
        if (c == NULL || a == NULL) {
            pbf_render_set_error(err, n, "render: out of memory for %d ellipsoids", count);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        r->anisotropy_count = count;
    }
    pbf_surface_def sd = pbf_default_surface_def();
    sd.particle_radius = s->particle_radius;
    char why[PBF_ERROR_SIZE];
    pbf_status st =
        pbf_surface_anisotropy(&sd, s->positions, count, r->centers, r->axes, why, sizeof why);
    if (st != PBF_OK) {
        pbf_render_set_error(err, n, "render: ellipsoid splats: %s", why);
        return st;
    }
    upload(r->vbo_centers, &r->centers_capacity, r->centers, 3 * (size_t)count * sizeof(float));
    upload(r->vbo_axes, &r->axes_capacity, r->axes, 9 * (size_t)count * sizeof(float));
    return PBF_OK;
}

/* From the support of pbf_surface_anisotropy's ellipsoids (its default kernel radius, as
 * upload_anisotropy and interop compute them) to the drawn radius. */
static float ellipsoid_scale(float drawn_radius, float particle_radius) {
    return drawn_radius / (pbf_default_surface_def().kernel_radius * particle_radius);
}

/* Points the particles' vertex arrays at the buffers to draw from: the renderer's own (the
 * arrays uploaded) or the caller's (pbf_render_scene.gl_*). A scalar buffer 0 reads 0; centres
 * or axes 0 (no ellipsoids drawn) leave the ellipsoids' array as it was. */
static void bind_particle_buffers(const pbf_renderer *r, GLuint positions, GLuint scalars,
                                  GLuint centers, GLuint axes) {
    glBindVertexArray(r->vao_particles);
    glBindBuffer(GL_ARRAY_BUFFER, positions);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
    if (scalars != 0) {
        glEnableVertexAttribArray(1);
        glBindBuffer(GL_ARRAY_BUFFER, scalars);
        glVertexAttribPointer(1, 1, GL_FLOAT, GL_FALSE, 0, NULL);
    } else {
        glDisableVertexAttribArray(1);
        glVertexAttrib1f(1, 0.0f);
    }
    if (centers != 0 && axes != 0) {
        glBindVertexArray(r->vao_ellipsoids);
        glBindBuffer(GL_ARRAY_BUFFER, centers);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
        glBindBuffer(GL_ARRAY_BUFFER, axes);
        for (int k = 0; k < 3; ++k) /* the three rows of each particle's 3x3, one by one */
            glVertexAttribPointer((GLuint)(2 + k), 3, GL_FLOAT, GL_FALSE, 9 * sizeof(float),
                                  (const void *)(uintptr_t)(3 * k * sizeof(float)));
    }
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glBindVertexArray(r->vao_empty);
}

/* Fills r->scalars with the colour value of each particle; returns the range to map. */
static pbf_status compute_scalars(pbf_renderer *r, const pbf_render_scene *s, float range[2],
                                  char *err, size_t n) {
    int count = s->particle_count;
    if (count > r->scalars_count) {
        float *p = realloc(r->scalars, (size_t)count * sizeof *p);
        if (p == NULL) {
            pbf_render_set_error(err, n, "out of memory");
            return PBF_ERR_OUT_OF_MEMORY;
        }
        r->scalars = p;
        r->scalars_count = count;
    }
    float lo = FLT_MAX, hi = 0.0f;
    if (r->def.look == PBF_LOOK_SPHERES && r->def.color == PBF_COLOR_SPEED && s->velocities) {
        for (int i = 0; i < count; ++i) {
            const float *v = s->velocities + 3 * (size_t)i;
            float sp = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            r->scalars[i] = sp;
            if (sp > hi) hi = sp;
        }
        lo = 0.0f;
        if (hi < 1e-6f) hi = 1e-6f;
    } else if (r->def.look == PBF_LOOK_SPHERES && r->def.color == PBF_COLOR_DENSITY &&
               s->densities) {
        for (int i = 0; i < count; ++i) r->scalars[i] = s->densities[i];
        float rho0 = s->rest_density > 0.0f ? s->rest_density : 1000.0f;
        lo = 0.9f * rho0;
        hi = 1.1f * rho0;
    } else if (r->def.look == PBF_LOOK_FLUID && s->phases) { /* several fluids: the phase */
        for (int i = 0; i < count; ++i) r->scalars[i] = (float)s->phases[i];
        lo = 0.0f;
        hi = 1.0f;
    } else {
        if (count > 0) memset(r->scalars, 0, (size_t)count * sizeof *r->scalars);
        lo = 0.0f;
        hi = 1.0f;
    }
    if (r->def.color_min != r->def.color_max) {
        lo = r->def.color_min;
        hi = r->def.color_max;
    }
    range[0] = lo;
    range[1] = hi;
    return PBF_OK;
}

/* Diffuse particles (spray, foam, bubbles) as points over the composited frame, depth-tested
 * against the fluid and the solids (diffuse.vert lifts foam and spray off the surface). */
static pbf_status draw_diffuse(pbf_renderer *r, const pbf_render_scene *s, const float sun[3],
                               float checker, float fog, float pixels_per_m, char *err,
                               size_t err_size) {
    const int count = s->diffuse_count;
    if (count > r->diffuse_kinds_size) {
        float *k = realloc(r->diffuse_kinds, (size_t)count * sizeof *k);
        if (k == NULL) {
            if (err && err_size)
                snprintf(err, err_size, "out of memory for %d diffuse particles", count);
            return PBF_ERR_OUT_OF_MEMORY;
        }
        r->diffuse_kinds = k;
        r->diffuse_kinds_size = count;
    }
    for (int i = 0; i < count; ++i)
        r->diffuse_kinds[i] = s->diffuse_kinds ? (float)s->diffuse_kinds[i] : 1.0f;
    upload(r->vbo_diffuse_positions, &r->diffuse_positions_capacity, s->diffuse_positions,
           (size_t)count * 3 * sizeof(float));
    upload(r->vbo_diffuse_kinds, &r->diffuse_kinds_capacity, r->diffuse_kinds,
           (size_t)count * sizeof(float));
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glDepthMask(GL_FALSE);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
    glEnable(GL_PROGRAM_POINT_SIZE);
    GLuint p = r->prog_diffuse;
    glUseProgram(p);
    set_common(r, p, s, sun, checker, fog);
    uniform1f(p, "u_point_m", 0.8f * s->particle_radius);
    uniform1f(p, "u_pixels_per_m", pixels_per_m);
    uniform1f(p, "u_lift", 2.0f * s->particle_radius);
    glBindVertexArray(r->vao_diffuse);
    glDrawArrays(GL_POINTS, 0, count);
    glBindVertexArray(r->vao_empty);
    glDisable(GL_PROGRAM_POINT_SIZE);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    return PBF_OK;
}

static void upload(GLuint buffer, size_t *capacity, const void *data, size_t bytes) {
    glBindBuffer(GL_ARRAY_BUFFER, buffer);
    if (bytes > *capacity) {
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, data, GL_STREAM_DRAW);
        *capacity = bytes;
    } else {
        /* Orphan the old storage so the driver need not wait for the last frame's draws. */
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)*capacity, NULL, GL_STREAM_DRAW);
        if (bytes > 0) glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, data);
    }
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

static void draw_solid(const pbf_renderer *r, const pbf_collider_def *c, const float color[3]) {
    GLuint p = r->prog_solid;
    float lo[3], hi[3];
    const float pad = 1.02f;
    if (c->type == PBF_COLLIDER_SPHERE) {
        float e = c->radius * pad;
        lo[0] = c->center.x - e, lo[1] = c->center.y - e, lo[2] = c->center.z - e;
        hi[0] = c->center.x + e, hi[1] = c->center.y + e, hi[2] = c->center.z + e;
    } else if (c->type == PBF_COLLIDER_BOX) {
        lo[0] = c->center.x - c->half_extents.x * pad,
        hi[0] = c->center.x + c->half_extents.x * pad;
        lo[1] = c->center.y - c->half_extents.y * pad,
        hi[1] = c->center.y + c->half_extents.y * pad;
        lo[2] = c->center.z - c->half_extents.z * pad,
        hi[2] = c->center.z + c->half_extents.z * pad;
    } else {
        float e = c->radius * pad;
        lo[0] = fminf(c->a.x, c->b.x) - e, hi[0] = fmaxf(c->a.x, c->b.x) + e;
        lo[1] = fminf(c->a.y, c->b.y) - e, hi[1] = fmaxf(c->a.y, c->b.y) + e;
        lo[2] = fminf(c->a.z, c->b.z) - e, hi[2] = fmaxf(c->a.z, c->b.z) + e;
    }
    /* Widen the proxy box a hair beyond the shape so its faces never clip the silhouette. */
    for (int k = 0; k < 3; ++k) {
        float m = 0.01f * (hi[k] - lo[k]) + 1e-6f;
        lo[k] -= m;
        hi[k] += m;
    }
    uniform3v(p, "u_box_min", lo);
    uniform3v(p, "u_box_max", hi);
    uniform1i(p, "u_shape", (int)c->type);
    uniform3f(p, "u_center", c->center.x, c->center.y, c->center.z);
    uniform3f(p, "u_half", c->half_extents.x, c->half_extents.y, c->half_extents.z);
    uniform1f(p, "u_radius", c->radius);
    uniform3f(p, "u_a", c->a.x, c->a.y, c->a.z);
    uniform3f(p, "u_b", c->b.x, c->b.y, c->b.z);
    uniform3v(p, "u_color", color);
    glDrawArrays(GL_TRIANGLES, 0, 36);
}

static void bind_texture(int unit, GLenum target, GLuint tex) {
    glActiveTexture(GL_TEXTURE0 + (GLenum)unit);
    glBindTexture(target, tex);
}

pbf_status pbf_renderer_draw(pbf_renderer *r, const pbf_render_scene *s, char *err, size_t n) {
    if (r == NULL || s == NULL) {
        pbf_render_set_error(err, n, "pbf_renderer_draw: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    const int external = s->gl_positions != 0; /* particles in the caller's GL buffers */
    if (s->particle_count < 0 || (s->particle_count > 0 && s->positions == NULL && !external)) {
        pbf_render_set_error(err, n, "render: %d particles but no positions", s->particle_count);
        return PBF_ERR_INVALID_ARG;
    }
    if (external && r->def.look == PBF_LOOK_FLUID && r->def.fluid_splats == PBF_SPLAT_ELLIPSOID &&
        (s->gl_centers == 0 || s->gl_axes == 0)) {
        pbf_render_set_error(err, n,
                             "render: particles in GL buffers (gl_positions) with ellipsoid "
                             "splats need gl_centers and gl_axes too");
        return PBF_ERR_INVALID_ARG;
    }
    if (!(s->particle_radius > 0.0f)) {
        pbf_render_set_error(err, n, "render: particle radius %g is not positive",
                             (double)s->particle_radius);
        return PBF_ERR_INVALID_ARG;
    }
    if (s->collider_count < 0 || (s->collider_count > 0 && s->colliders == NULL)) {
        pbf_render_set_error(err, n, "render: %d colliders but no array", s->collider_count);
        return PBF_ERR_INVALID_ARG;
    }
    pbf_status mst = mesh_slots_check(s, err, n);
    if (mst != PBF_OK) return mst;
    const pbf_render_def *d = &r->def;
    int w = r->width, h = r->height;
    memset(r->query_used, 0, sizeof r->query_used);

    /* Camera. */
    pbf_camera_def cam = s->camera;
    if (cam.position.x == cam.target.x && cam.position.y == cam.target.y &&
        cam.position.z == cam.target.z) {
        cam = pbf_render_default_camera(s->domain_min, s->domain_max, (float)w / (float)h);
    }
    if (!(cam.fov > 1.0f && cam.fov < 179.0f)) cam.fov = 40.0f;
    float eye[3] = {cam.position.x, cam.position.y, cam.position.z};
    float target[3] = {cam.target.x, cam.target.y, cam.target.z};
    float center[3] = {0.5f * (s->domain_min.x + s->domain_max.x),
                       0.5f * (s->domain_min.y + s->domain_max.y),
                       0.5f * (s->domain_min.z + s->domain_max.z)};
    float ext[3] = {s->domain_max.x - s->domain_min.x, s->domain_max.y - s->domain_min.y,
                    s->domain_max.z - s->domain_min.z};
    float radius = 0.5f * sqrtf(ext[0] * ext[0] + ext[1] * ext[1] + ext[2] * ext[2]);
    if (!(radius > 0.0f)) radius = 1.0f;
    float dist = sqrtf((eye[0] - center[0]) * (eye[0] - center[0]) +
                       (eye[1] - center[1]) * (eye[1] - center[1]) +
                       (eye[2] - center[2]) * (eye[2] - center[2]));
    r->znear = fmaxf(0.002f * radius, 0.5f * (dist - 1.5f * radius));
    r->zfar = dist + 60.0f * radius;
    r->aspect = (float)w / (float)h;
    r->tan_half_fov = tanf(0.5f * cam.fov * PBF_RENDER_PI / 180.0f);
    r->view = pbf_mat4_look_at(eye, target);
    r->inv_view = pbf_mat4_rigid_inverse(r->view);
    r->proj = pbf_mat4_perspective(cam.fov * PBF_RENDER_PI / 180.0f, r->aspect, r->znear, r->zfar);
    memcpy(r->camera, eye, sizeof eye);
    /* The sun stands behind the scene, to the right: flat water facing the camera then shows
     * its glints, and solids still get light on their tops. */
    float sun[3] = {0.3f, 0.6f, -0.7f};
    float sl = sqrtf(sun[0] * sun[0] + sun[1] * sun[1] + sun[2] * sun[2]);
    for (int k = 0; k < 3; ++k) sun[k] /= sl;
    float checker = nice_length(fmaxf(ext[0], ext[2]) / 8.0f);
    float fog = 8.0f * radius;
    /* Drawn radius: spheres as they are; the fluid's depth spheres a little larger, so that
     * particles a bit more than 2r apart (sheets, spray) still join into one surface. */
    float pr = s->particle_radius *
               (d->look == PBF_LOOK_SPHERES ? d->radius_scale : d->fluid_radius_scale);
    float pixels_per_m = 0.5f * (float)h / r->tan_half_fov;

    /* Particles. */
    float range[2];
    pbf_status st = PBF_OK;
    size_t count = (size_t)s->particle_count;
    if (external) {
        range[0] = s->gl_scalar_range[0];
        range[1] = s->gl_scalar_range[1];
        if (d->color_min != d->color_max) {
            range[0] = d->color_min;
            range[1] = d->color_max;
        }
        bind_particle_buffers(r, s->gl_positions, s->gl_scalars, s->gl_centers, s->gl_axes);
    } else {
        st = compute_scalars(r, s, range, err, n);
        if (st != PBF_OK) return st;
        upload(r->vbo_positions, &r->positions_capacity, s->positions, count * 3 * sizeof(float));
        upload(r->vbo_scalars, &r->scalars_capacity, r->scalars, count * sizeof(float));
        bind_particle_buffers(r, r->vbo_positions, r->vbo_scalars, r->vbo_centers, r->vbo_axes);
    }

    glDisable(GL_BLEND);
    glDisable(GL_CULL_FACE);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    glDepthMask(GL_TRUE);
    bind_texture(SKY_UNIT, GL_TEXTURE_CUBE_MAP, r->tex_sky);

    /* 1. Opaque scene: sky and floor, then solids. */
    begin_stage(r, STAGE_BACKGROUND);
    glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_scene);
    glViewport(0, 0, w, h);
    glBindVertexArray(r->vao_empty);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_ALWAYS);
    glUseProgram(r->prog_background);
    set_common(r, r->prog_background, s, sun, checker, fog);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDepthFunc(GL_LESS);
    glUseProgram(r->prog_solid);
    set_common(r, r->prog_solid, s, sun, checker, fog);
    static const float collider_color[3] = {0.50f, 0.47f, 0.44f};
    static const float tool_color[3] = {0.85f, 0.38f, 0.10f};
    for (int i = 0; i < s->collider_count; ++i) draw_solid(r, &s->colliders[i], collider_color);
    if (s->tool != NULL) draw_solid(r, s->tool, tool_color);
    if (s->mesh_count > 0) { /* mesh solids, rasterized with their pose of the frame */
        mesh_slots_sync(&r->meshes, s);
        glUseProgram(r->prog_mesh);
        set_common(r, r->prog_mesh, s, sun, checker, fog);
        mesh_slots_draw(&r->meshes, r->prog_mesh, s, collider_color);
        glBindVertexArray(r->vao_empty);
    }
    /* The fluid's depth buffer starts as the scene's, so solids hide the fluid behind them. */
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->fbo_scene);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, r->fbo_depth);
    glBlitFramebuffer(0, 0, w, h, 0, 0, w, h, GL_DEPTH_BUFFER_BIT, GL_NEAREST);
    end_stage();

    glBindVertexArray(r->vao_particles);
    r->fluid_drawn = 0;
    if (d->look == PBF_LOOK_SPHERES) {
        begin_stage(r, STAGE_DEPTH);
        glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_spheres);
        glUseProgram(r->prog_spheres);
        set_common(r, r->prog_spheres, s, sun, checker, fog);
        uniform1f(r->prog_spheres, "u_particle_radius", pr);
        uniform1i(r->prog_spheres, "u_color_mode", (int)d->color);
        uniform3v(r->prog_spheres, "u_sphere_color", d->sphere_color);
        uniform2f(r->prog_spheres, "u_color_range", range[0], range[1]);
        if (count > 0) glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)count);
        end_stage();
    } else {
        /* 2. Eye depth of the nearest sphere surface. */
        begin_stage(r, STAGE_DEPTH);
        glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_depth);
        static const float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        glClearBufferfv(GL_COLOR, 0, zero);
        if (d->fluid_splats == PBF_SPLAT_ELLIPSOID) {
            /* flat where the fluid is calm, thin along sheets: as FleX does (Macklin) */
            if (count > 0 && !external) {
                st = upload_anisotropy(r, s, err, n);
                if (st != PBF_OK) {
                    end_stage();
                    return st;
                }
            }
            glBindVertexArray(r->vao_ellipsoids);
            glUseProgram(r->prog_ellipsoid);
            set_common(r, r->prog_ellipsoid, s, sun, checker, fog);
            uniform1f(r->prog_ellipsoid, "u_axes_scale", ellipsoid_scale(pr, s->particle_radius));
            if (count > 0) glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)count);
            glBindVertexArray(r->vao_particles);
        } else {
            glUseProgram(r->prog_depth);
            set_common(r, r->prog_depth, s, sun, checker, fog);
            uniform1f(r->prog_depth, "u_particle_radius", pr);
            if (count > 0) glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)count);
        }
        end_stage();

        /* 3. Thickness: chords of all spheres added up, hidden only by solids. */
        glDisable(GL_DEPTH_TEST);
        glDepthMask(GL_FALSE);
        if (d->passes & PBF_PASS_THICKNESS) {
            begin_stage(r, STAGE_THICKNESS);
            glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_thickness);
            glViewport(0, 0, r->thick_w, r->thick_h);
            glClearBufferfv(GL_COLOR, 0, zero);
            glEnable(GL_BLEND);
            glBlendFunc(GL_ONE, GL_ONE);
            glUseProgram(r->prog_thickness);
            set_common(r, r->prog_thickness, s, sun, checker, fog);
            uniform1f(r->prog_thickness, "u_particle_radius", 3.0f * pr);
            uniform1f(r->prog_thickness, "u_splat_sigma", pr);
            /* Each particle stands for the volume (2r)^3 of the rest lattice. */
            float spacing = 2.0f * s->particle_radius;
            uniform1f(r->prog_thickness, "u_splat_volume", spacing * spacing * spacing);
            uniform1f(r->prog_thickness, "u_thickness_scale", (float)THICKNESS_DOWNSAMPLE);
            bind_texture(1, GL_TEXTURE_2D, r->tex_scene_depth);
            uniform1i(r->prog_thickness, "u_scene_depth", 1);
            set_phase_absorption(r->prog_thickness, s);
            if (count > 0) glDrawArraysInstanced(GL_TRIANGLE_STRIP, 0, 4, (GLsizei)count);
            glDisable(GL_BLEND);
            glViewport(0, 0, w, h);
            end_stage();
        }

        /* 4. Bilateral smoothing, separable, ping-pong. */
        glBindVertexArray(r->vao_empty);
        r->tex_smoothed = r->tex_depth_raw;
        if ((d->passes & PBF_PASS_SMOOTH) && d->smooth_iterations > 0) {
            begin_stage(r, STAGE_SMOOTH);
            glUseProgram(r->prog_smooth);
            set_common(r, r->prog_smooth, s, sun, checker, fog);
            uniform1f(r->prog_smooth, "u_pixels_per_m", pixels_per_m);
            uniform1f(r->prog_smooth, "u_sigma_scale", d->smooth_scale);
            uniform1f(r->prog_smooth, "u_radius_m", pr);
            uniform1f(r->prog_smooth, "u_sigma_depth", d->smooth_depth * pr);
            uniform1i(r->prog_smooth, "u_max_radius", d->smooth_radius);
            uniform1i(r->prog_smooth, "u_depth", 0);
            GLint dir_loc = glGetUniformLocation(r->prog_smooth, "u_dir");
            GLuint src = r->tex_depth_raw;
            for (int it = 0; it < d->smooth_iterations; ++it) {
                /* Odd iterations filter along the diagonals: a separable filter run only
                 * along the axes leaves streaks along them. */
                int diagonal = it % 2;
                glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_ping);
                bind_texture(0, GL_TEXTURE_2D, src);
                glUniform2i(dir_loc, 1, diagonal ? 1 : 0);
                glDrawArrays(GL_TRIANGLES, 0, 3);
                glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_pong);
                bind_texture(0, GL_TEXTURE_2D, r->tex_ping);
                glUniform2i(dir_loc, diagonal ? 1 : 0, diagonal ? -1 : 1);
                glDrawArrays(GL_TRIANGLES, 0, 3);
                src = r->tex_pong;
            }
            /* A last small 2D pass removes the streaks the 1D passes leave. */
            glUseProgram(r->prog_smooth2d);
            uniform1f(r->prog_smooth2d, "u_sigma_depth", d->smooth_depth * pr);
            uniform1i(r->prog_smooth2d, "u_depth", 0);
            glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_ping);
            bind_texture(0, GL_TEXTURE_2D, src);
            glDrawArrays(GL_TRIANGLES, 0, 3);
            r->tex_smoothed = r->tex_ping;
            end_stage();
        }

        /* 5. Normals from the smoothed depth. */
        begin_stage(r, STAGE_NORMAL);
        glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_normal);
        glUseProgram(r->prog_normal);
        set_common(r, r->prog_normal, s, sun, checker, fog);
        bind_texture(0, GL_TEXTURE_2D, r->tex_smoothed);
        uniform1i(r->prog_normal, "u_depth", 0);
        glDrawArrays(GL_TRIANGLES, 0, 3);
        end_stage();
        r->fluid_drawn = 1;
    }

    /* 6. Composite: opaque scene, fluid surface, to sRGB. */
    begin_stage(r, STAGE_SHADE);
    glBindVertexArray(r->vao_empty);
    glDisable(GL_DEPTH_TEST);
    glDepthMask(GL_FALSE);
    glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_final);
    glViewport(0, 0, w, h);
    GLuint p = r->prog_composite;
    glUseProgram(p);
    set_common(r, p, s, sun, checker, fog);
    bind_texture(0, GL_TEXTURE_2D, r->tex_scene);
    bind_texture(1, GL_TEXTURE_2D, r->tex_scene_depth);
    bind_texture(2, GL_TEXTURE_2D, r->tex_smoothed);
    bind_texture(3, GL_TEXTURE_2D, r->tex_normal);
    bind_texture(4, GL_TEXTURE_2D, r->tex_thickness);
    uniform1i(p, "u_scene", 0);
    uniform1i(p, "u_scene_depth", 1);
    uniform1i(p, "u_depth", 2);
    uniform1i(p, "u_normal", 3);
    uniform1i(p, "u_thickness", 4);
    uniform1i(p, "u_fluid", r->fluid_drawn);
    uniform1i(p, "u_shading", (d->passes & PBF_PASS_SHADING) ? 1 : 0);
    uniform1i(p, "u_use_thickness", (d->passes & PBF_PASS_THICKNESS) ? 1 : 0);
    uniform1f(p, "u_default_thickness", 8.0f * s->particle_radius);
    uniform3v(p, "u_absorption", d->absorption);
    uniform1i(p, "u_use_phases", s->phases != NULL ? 1 : 0);
    uniform3v(p, "u_fluid_color", d->fluid_color);
    uniform1f(p, "u_min_transmission", d->min_transmission);
    uniform1f(p, "u_refraction", d->refraction);
    float r0 = (d->ior - 1.0f) / (d->ior + 1.0f);
    uniform1f(p, "u_r0", r0 * r0);
    uniform1f(p, "u_pixels_per_m", pixels_per_m);
    glDrawArrays(GL_TRIANGLES, 0, 3);

    /* Domain edges, faint, over everything but hidden by fluid and solids in front. */
    if (d->domain_edges) {
        glEnable(GL_DEPTH_TEST);
        glDepthFunc(GL_LEQUAL);
        glEnable(GL_BLEND);
        glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
        glUseProgram(r->prog_lines);
        set_common(r, r->prog_lines, s, sun, checker, fog);
        uniform3f(r->prog_lines, "u_box_min", s->domain_min.x, s->domain_min.y, s->domain_min.z);
        uniform3f(r->prog_lines, "u_box_max", s->domain_max.x, s->domain_max.y, s->domain_max.z);
        glUniform4f(glGetUniformLocation(r->prog_lines, "u_line_color"), 1.0f, 1.0f, 1.0f, 0.3f);
        glDrawArrays(GL_LINES, 0, 24);
        glDisable(GL_BLEND);
        glDisable(GL_DEPTH_TEST);
    }
    if (s->diffuse_count > 0 && s->diffuse_positions != NULL) {
        st = draw_diffuse(r, s, sun, checker, fog, pixels_per_m, err, n);
        if (st != PBF_OK) {
            end_stage();
            return st;
        }
    }
    end_stage();

    glQueryCounter(r->queries[STAGE_COUNT], GL_TIMESTAMP);
    glDepthFunc(GL_LESS);
    glDepthMask(GL_TRUE);
    glBindVertexArray(0);
    glUseProgram(0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glActiveTexture(GL_TEXTURE0);
    r->frame_drawn = 1;
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        pbf_render_set_error(err, n, "render: OpenGL error 0x%x while drawing", (unsigned)e);
        return PBF_ERR_UNSUPPORTED;
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Text overlay */

void pbf_renderer_draw_text(pbf_renderer *r, int x, int y, int scale, const char *text) {
    if (r == NULL || text == NULL || !r->frame_drawn) return;
    if (scale < 1) scale = 1;
    /* Box size: the longest line and the number of lines. */
    int lines = 1, col = 0, cols = 0;
    size_t glyphs = 0;
    for (const char *c = text; *c; ++c) {
        if (*c == '\n') {
            ++lines;
            col = 0;
            continue;
        }
        ++col;
        if (col > cols) cols = col;
        if (*c != ' ') ++glyphs;
    }
    size_t quads = glyphs + 1;
    size_t need = quads * 6 * 4;
    if (need > r->text_capacity) {
        float *p = realloc(r->text_vertices, need * sizeof *p);
        if (p == NULL) return;
        r->text_vertices = p;
        r->text_capacity = need;
    }
    float *v = r->text_vertices;
    size_t k = 0;
    float pad = 3.0f * (float)scale;
    float cw = (float)(PBF_FONT_CELL_W * scale), ch = (float)(PBF_FONT_CELL_H * scale);
#define QUAD(x0, y0, x1, y1, u0, v0, u1, v1)                                                       \
    do {                                                                                           \
        float q_[6][4] = {{x0, y0, u0, v0}, {x1, y0, u1, v0}, {x0, y1, u0, v1},                    \
                          {x1, y0, u1, v0}, {x1, y1, u1, v1}, {x0, y1, u0, v1}};                   \
        memcpy(v + k, q_, sizeof q_);                                                              \
        k += 24;                                                                                   \
    } while (0)
    float bx0 = (float)x, by0 = (float)y;
    float bx1 = bx0 + 2.0f * pad + (float)cols * cw - (float)scale;
    float by1 = by0 + 2.0f * pad + (float)lines * ch - 2.0f * (float)scale;
    QUAD(bx0, by0, bx1, by1, 0.0f, 0.0f, 0.0f, 0.0f);
    int line = 0;
    col = 0;
    for (const char *c = text; *c; ++c) {
        if (*c == '\n') {
            ++line;
            col = 0;
            continue;
        }
        int code = (unsigned char)*c;
        if (code < 32 || code > 126) code = '?';
        if (code != ' ') {
            int cell = code - 32;
            float u0 = (float)((cell % 16) * PBF_FONT_CELL_W);
            float v0 = (float)((cell / 16) * PBF_FONT_CELL_H);
            float x0 = bx0 + pad + (float)col * cw, y0 = by0 + pad + (float)line * ch;
            float gw = (float)(PBF_FONT_GLYPH_W * scale), gh = (float)(PBF_FONT_GLYPH_H * scale);
            QUAD(x0, y0, x0 + gw, y0 + gh, u0, v0, u0 + (float)PBF_FONT_GLYPH_W,
                 v0 + (float)PBF_FONT_GLYPH_H);
        }
        ++col;
    }
#undef QUAD
    glBindFramebuffer(GL_FRAMEBUFFER, r->fbo_final);
    glViewport(0, 0, r->width, r->height);
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
    glBindVertexArray(r->vao_text);
    glBindBuffer(GL_ARRAY_BUFFER, r->vbo_text);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(k * sizeof(float)), v, GL_STREAM_DRAW);
    glUseProgram(r->prog_text);
    uniform2f(r->prog_text, "u_resolution", (float)r->width, (float)r->height);
    bind_texture(0, GL_TEXTURE_2D, r->tex_font);
    uniform1i(r->prog_text, "u_font", 0);
    uniform1i(r->prog_text, "u_mode", 0);
    glDrawArrays(GL_TRIANGLES, 0, 6);
    uniform1i(r->prog_text, "u_mode", 1);
    glDrawArrays(GL_TRIANGLES, 6, (GLsizei)(k / 4 - 6));
    glDisable(GL_BLEND);
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    glUseProgram(0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

/* ---------------------------------------------------------------------------------------------
 * Read back */

pbf_status pbf_renderer_read_rgba(const pbf_renderer *r, uint8_t *rgba, char *err, size_t n) {
    if (r == NULL || rgba == NULL) {
        pbf_render_set_error(err, n, "pbf_renderer_read_rgba: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    if (!r->frame_drawn) {
        pbf_render_set_error(err, n, "render: nothing drawn yet");
        return PBF_ERR_INVALID_ARG;
    }
    int w = r->width, h = r->height;
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->fbo_final);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    /* OpenGL's rows run bottom to top; images run top to bottom. */
    size_t stride = (size_t)w * 4;
    uint8_t tmp[4096];
    for (int y = 0; y < h / 2; ++y) {
        uint8_t *a = rgba + (size_t)y * stride, *b = rgba + (size_t)(h - 1 - y) * stride;
        for (size_t off = 0; off < stride; off += sizeof tmp) {
            size_t len = stride - off < sizeof tmp ? stride - off : sizeof tmp;
            memcpy(tmp, a + off, len);
            memcpy(a + off, b + off, len);
            memcpy(b + off, tmp, len);
        }
    }
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        pbf_render_set_error(err, n, "render: OpenGL error 0x%x while reading the image",
                             (unsigned)e);
        return PBF_ERR_UNSUPPORTED;
    }
    return PBF_OK;
}

pbf_status pbf_renderer_read_buffer(const pbf_renderer *r, pbf_render_buffer which, float *out,
                                    char *err, size_t n) {
    if (r == NULL || out == NULL) {
        pbf_render_set_error(err, n, "pbf_renderer_read_buffer: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    if (!r->fluid_drawn) {
        pbf_render_set_error(err, n, "render: no fluid frame drawn yet");
        return PBF_ERR_INVALID_ARG;
    }
    GLuint tex = 0;
    GLenum format = GL_RED;
    int w = r->width, h = r->height;
    switch (which) {
    case PBF_BUFFER_DEPTH: tex = r->tex_depth_raw; break;
    case PBF_BUFFER_DEPTH_SMOOTH: tex = r->tex_smoothed; break;
    case PBF_BUFFER_NORMAL:
        tex = r->tex_normal;
        format = GL_RGB;
        break;
    case PBF_BUFFER_THICKNESS: break;
    default:
        pbf_render_set_error(err, n, "render: unknown buffer %d", (int)which);
        return PBF_ERR_INVALID_ARG;
    }
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    if (which == PBF_BUFFER_THICKNESS) {
        /* Thickness lives at a lower resolution: read it, then repeat each texel. */
        int tw = r->thick_w, th = r->thick_h;
        float *small = malloc((size_t)tw * (size_t)th * sizeof *small);
        if (small == NULL) {
            glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
            glDeleteFramebuffers(1, &fbo);
            pbf_render_set_error(err, n, "out of memory");
            return PBF_ERR_OUT_OF_MEMORY;
        }
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D,
                               r->tex_thickness, 0);
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glReadPixels(0, 0, tw, th, GL_RED, GL_FLOAT, small);
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                out[(size_t)y * (size_t)w + (size_t)x] =
                    small[(size_t)(y / THICKNESS_DOWNSAMPLE) * (size_t)tw +
                          (size_t)(x / THICKNESS_DOWNSAMPLE)];
            }
        }
        free(small);
    } else {
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glReadPixels(0, 0, w, h, format, GL_FLOAT, out);
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        pbf_render_set_error(err, n, "render: OpenGL error 0x%x while reading a buffer",
                             (unsigned)e);
        return PBF_ERR_UNSUPPORTED;
    }
    return PBF_OK;
}

void pbf_renderer_present(const pbf_renderer *r, int fb_width, int fb_height) {
    if (r == NULL || !r->frame_drawn) return;
    glBindFramebuffer(GL_READ_FRAMEBUFFER, r->fbo_final);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glViewport(0, 0, fb_width, fb_height);
    glBlitFramebuffer(0, 0, r->width, r->height, 0, 0, fb_width, fb_height, GL_COLOR_BUFFER_BIT,
                      GL_LINEAR);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

pbf_render_timings pbf_renderer_timings(pbf_renderer *r) {
    pbf_render_timings t;
    memset(&t, 0, sizeof t);
    if (r == NULL || !r->frame_drawn) return t;
    double ms[STAGE_COUNT] = {0};
    GLuint64 end = 0;
    glGetQueryObjectui64v(r->queries[STAGE_COUNT], GL_QUERY_RESULT, &end);
    for (int i = STAGE_COUNT - 1; i >= 0; --i) {
        if (!r->query_used[i]) continue;
        GLuint64 start = 0;
        glGetQueryObjectui64v(r->queries[i], GL_QUERY_RESULT, &start);
        ms[i] = end > start ? (double)(end - start) * 1e-6 : 0.0;
        end = start;
    }
    t.background_ms = ms[STAGE_BACKGROUND];
    t.depth_ms = ms[STAGE_DEPTH];
    t.thickness_ms = ms[STAGE_THICKNESS];
    t.smooth_ms = ms[STAGE_SMOOTH];
    t.normal_ms = ms[STAGE_NORMAL];
    t.shade_ms = ms[STAGE_SHADE];
    t.total_ms =
        t.background_ms + t.depth_ms + t.thickness_ms + t.smooth_ms + t.normal_ms + t.shade_ms;
    return t;
}
