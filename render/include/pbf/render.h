/* pbf render — an OpenGL renderer for particle fluids, its own library (the simulation core
 * never links OpenGL). docs/rendering.md describes the passes and every parameter.
 *
 * Two looks:
 *   PBF_LOOK_FLUID   screen-space fluid rendering (van der Laan, Green & Sainz 2009; seed 003
 *                    chapter 3): sphere depth -> eye-space depth texture, additive thickness,
 *                    separable bilateral smoothing of depth, normals from depth (the smaller
 *                    one-sided difference at discontinuities), Schlick Fresnel reflection of the
 *                    sky and floor, refraction of the background offset along the normal,
 *                    Beer-Lambert absorption by thickness, a specular highlight.
 *   PBF_LOOK_SPHERES every particle ray-cast as a sphere (exact depth), Blinn-Phong, optionally
 *                    coloured by speed or density.
 * Both draw a sky (gradient or cube map), a checkerboard floor under the domain, the domain
 * edges faintly, and colliders, the tool and triangle-mesh solids (pbf_render_mesh) as solid
 * shapes that the fluid hides and refracts.
 *
 * Use:
 *
 *     pbf_gl_context *ctx = NULL;                       // or a GLFW window + pbf_render_load_gl
 *     if (pbf_gl_context_create_headless(&ctx, err, sizeof err) != PBF_OK) ...
 *     pbf_render_def def = pbf_default_render_def();    // 1280x720, fluid look
 *     pbf_renderer *r = NULL;
 *     pbf_renderer_create(&def, &r, err, sizeof err);
 *     pbf_render_scene s = pbf_default_render_scene();
 *     s.particle_count = n; s.positions = xyz; s.particle_radius = 0.01f;
 *     s.domain_min = lo; s.domain_max = hi;
 *     pbf_renderer_draw(r, &s, err, sizeof err);
 *     pbf_renderer_read_rgba(r, pixels, err, sizeof err);  // width*height*4 bytes, top row first
 *     pbf_png_write("frame.png", pixels, def.width, def.height, err, sizeof err);
 *
 * Threads: a renderer belongs to the GL context current when it was created; call it only from
 * the thread where that context is current.
 *
 * Errors: functions return a pbf_status and write a human message into err (when not NULL).
 * Nothing here prints or exits. */
#ifndef PBF_RENDER_H
#define PBF_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Contexts */

/* A function pointer as returned by eglGetProcAddress / glfwGetProcAddress. */
typedef void (*pbf_gl_proc)(void);
typedef pbf_gl_proc (*pbf_gl_get_proc)(const char *name);

/* Loads the OpenGL entry points through get_proc for the context current on this thread.
 * The headless context does this itself; a GLFW window calls it with glfwGetProcAddress after
 * glfwMakeContextCurrent. Needs OpenGL 3.3 core or later. */
PBF_API pbf_status pbf_render_load_gl(pbf_gl_get_proc get_proc, char *err, size_t err_size);

typedef struct pbf_gl_context pbf_gl_context;

/* An off-screen OpenGL 3.3+ core context through EGL, current on the calling thread. Tries, in
 * order: the EGL device platform (EGL_EXT_platform_device: NVIDIA without X, Mesa's software
 * device), Mesa's surfaceless platform, the default display. Renders into framebuffer objects,
 * so it has no window surface. */
PBF_API pbf_status pbf_gl_context_create_headless(pbf_gl_context **out, char *err, size_t err_size);
PBF_API void pbf_gl_context_destroy(pbf_gl_context *ctx);
/* "EGL device: llvmpipe (LLVM 15.0.6, 256 bits), OpenGL 4.5 (Core Profile) Mesa 22.3.6". */
PBF_API const char *pbf_gl_context_description(const pbf_gl_context *ctx);

/* ---------------------------------------------------------------------------------------------
 * Definitions */

typedef enum pbf_render_look {
    PBF_LOOK_FLUID = 0, /* screen-space fluid surface (default) */
    PBF_LOOK_SPHERES = 1 /* ray-cast spheres, Blinn-Phong */
} pbf_render_look;

/* What the fluid look's depth pass draws for a particle. */
typedef enum pbf_render_splat {
    PBF_SPLAT_ELLIPSOID = 0, /* the particle's anisotropic kernel (pbf_surface_anisotropy, Yu &
                              * Turk 2013, the same ellipsoids as the mesher): flat on calm
                              * surfaces, thin along sheets (default) */
    PBF_SPLAT_SPHERE = 1 /* a sphere of fluid_radius_scale particle radii */
} pbf_render_splat;

/* What colours the spheres look. */
typedef enum pbf_render_color {
    PBF_COLOR_UNIFORM = 0, /* one colour, def.sphere_color */
    PBF_COLOR_SPEED, /* |v| in m/s mapped through a colour ramp */
    PBF_COLOR_DENSITY /* ρ/ρ0 mapped through a colour ramp */
} pbf_render_color;

/* Passes of the fluid look, a bit set; switching one off is for debugging and for the tests
 * that prove each pass matters. */
typedef enum pbf_render_pass {
    PBF_PASS_SMOOTH = 1 << 0, /* bilateral smoothing of the depth texture */
    PBF_PASS_THICKNESS = 1 << 1, /* additive thickness (off: a constant thickness of 8 radii) */
    PBF_PASS_SHADING = 1 << 2, /* Fresnel/refraction/absorption shading (off: normals as colour) */
    PBF_PASS_ALL = 7
} pbf_render_pass;

typedef enum pbf_render_sky {
    PBF_SKY_GRADIENT = 0, /* analytic sky: horizon to zenith gradient with a sun */
    PBF_SKY_CUBEMAP = 1 /* six PNG faces from def.sky_dir */
} pbf_render_sky;

typedef struct pbf_render_def {
    /* Image size in pixels. Default 1280x720, range [16, 8192]. */
    int width, height;
    /* Default PBF_LOOK_FLUID. */
    pbf_render_look look;
    /* Sphere colouring (spheres look). Default PBF_COLOR_UNIFORM. */
    pbf_render_color color;
    /* Values mapped to the two ends of the colour ramp; color_min == color_max (default 0, 0)
     * picks a range: speed 0 .. max speed of the frame, density 0.9 .. 1.1 ρ0. */
    float color_min, color_max;
    /* Spheres look: drawn radius as a multiple of the particle radius. Default 1 (spheres
     * touch at rest spacing 2r), range (0, 4]. */
    float radius_scale;
    /* Fluid look: radius of the depth spheres as a multiple of the particle radius. Default
     * 1.5: particles a little further apart than at rest (thin sheets, spray) still join into
     * one surface; the surface stands about half a radius proud of the particles. The
     * thickness splats have this width too, and hold the particle's volume (2r)^3 whatever
     * it is. Range (0, 4]. */
    float fluid_radius_scale;
    /* Fluid look: ellipsoids or spheres in the depth pass. Ellipsoids are scaled so that a
     * particle deep in the fluid (a round kernel) is the sphere of fluid_radius_scale; they
     * cost a neighbour search per frame on the CPU. Default PBF_SPLAT_ELLIPSOID. */
    pbf_render_splat fluid_splats;
    /* Bilateral smoothing iterations (each a horizontal and a vertical pass). Default 3,
     * range [0, 16]. */
    int smooth_iterations;
    /* Largest filter half-width in pixels. The filter's width follows the projected particle
     * size (smooth_scale particle radii) and is clamped to this. Default 16, range [1, 64]. */
    int smooth_radius;
    /* Spatial width of the filter (Gaussian σ) in particle radii. Default 2, range (0, 16]. */
    float smooth_scale;
    /* Depth range of the filter (σ of the edge-preserving term) in particle radii: depth steps
     * much larger than this are edges and are kept. Default 4, range (0, 64]. */
    float smooth_depth;
    /* Beer-Lambert absorption per metre of fluid, RGB. Default (8, 3, 1.5): water in a tank of
     * about a metre reads as clear where shallow and blue where deep (real water absorbs far
     * less; scale this down for larger scenes). Range [0, 1000]. */
    float absorption[3];
    /* Colour light takes on inside the fluid (what remains when it is thick). Linear RGB,
     * default (0.02, 0.18, 0.3). */
    float fluid_color[3];
    /* Smallest transmission (seed 003 eq. 3.23: thick fluid never turns fully opaque).
     * Default 0.15, range [0, 1]. */
    float min_transmission;
    /* Refraction offset of the background along the surface normal, as a fraction of the
     * thickness (seed 003 eq. 3.20 uses c = 0.2 on the direction). Default 0.5, range [0, 4]. */
    float refraction;
    /* Index of refraction of the fluid (Schlick's R0 = ((n-1)/(n+1))²). Default 1.33. */
    float ior;
    /* Colour of spheres in PBF_COLOR_UNIFORM. Linear RGB, default (0.15, 0.4, 0.85). */
    float sphere_color[3];
    /* Default PBF_SKY_GRADIENT. */
    pbf_render_sky sky;
    /* Folder with px.png nx.png py.png ny.png pz.png nz.png (PBF_SKY_CUBEMAP); NULL otherwise.
     * The renderer copies nothing: the string must live until pbf_renderer_create returns. */
    const char *sky_dir;
    /* Draw the checkerboard floor at the domain's bottom. Default 1. */
    int floor;
    /* Draw the domain box edges. Default 1. */
    int domain_edges;
    /* pbf_render_pass bits. Default PBF_PASS_ALL. */
    unsigned passes;
} pbf_render_def;

PBF_API pbf_render_def pbf_default_render_def(void);

/* A triangle mesh drawn as a solid (the mesh solids of include/pbf/geometry.h:
 * pbf_world_mesh_triangles gives the arrays, pbf_world_mesh_transform the pose). The renderer
 * keeps a copy of the triangles on the GPU per slot of pbf_render_scene.meshes: it uploads them
 * the first time it sees them in that slot and again only when the slot's arrays (pointers or
 * counts) or `version` change, so a moving body costs one matrix per frame. Arrays rewritten in
 * place, or freed and allocated again (the same address may come back), need a new version. */
#define PBF_RENDER_MAX_MESHES 64
typedef struct pbf_render_mesh {
    const float *vertices; /* 3*vertex_count, xyz in the mesh's local frame, m */
    int vertex_count;
    const int32_t *triangles; /* 3*triangle_count indices into vertices */
    int triangle_count;
    float transform[12]; /* local to world, row-major 3x4 [R | t] */
    float color[3]; /* linear RGB; (0, 0, 0): the colliders' grey */
    /* 1: the fluid is inside this closed mesh (PBF_MESH_CONTAINER): only its far walls are
     * drawn, so the fluid inside stays visible. Needs outward-facing triangles (counter-
     * clockwise seen from outside), as pbf_world_mesh_triangles gives a closed mesh. */
    int container;
    unsigned version; /* change it when the arrays' contents change */
} pbf_render_mesh;

/* What one frame shows. The renderer reads the arrays during pbf_renderer_draw only. */
typedef struct pbf_render_scene {
    int particle_count;
    const float *positions; /* 3*count, xyz, m */
    const float *velocities; /* 3*count or NULL; needed for PBF_COLOR_SPEED */
    const float *densities; /* count or NULL; needed for PBF_COLOR_DENSITY */
    float particle_radius; /* m, > 0 */
    float rest_density; /* kg/m³; default 1000 */
    pbf_vec3 domain_min, domain_max; /* the domain box; the floor lies at domain_min.y */
    int collider_count;
    const pbf_collider_def *colliders;
    /* The tool, drawn solid in its own colour; NULL when the scene has none. */
    const pbf_collider_def *tool;
    /* Triangle meshes, shaded like the colliders, hiding the fluid behind them and seen
     * through it (refraction). At most PBF_RENDER_MAX_MESHES. */
    int mesh_count;
    const pbf_render_mesh *meshes;
    /* position == target (e.g. all zero) means pbf_render_default_camera of the domain. */
    pbf_camera_def camera;
    /* Several fluids (the fluid look): each particle's phase (count entries, in the order of
     * positions) and each phase's Beer-Lambert absorption per metre, RGB. With phases the
     * fluid is tinted by the absorption of the fluid along each ray, and def.absorption is
     * unused; NULL (default): one fluid, def.absorption. */
    const uint8_t *phases;
    int phase_count; /* [1, PBF_MAX_PHASES] with phases */
    float phase_absorption[PBF_MAX_PHASES][3];
    /* Diffuse particles (include/pbf/diffuse.h), drawn as small white points over the fluid:
     * foam brightest, spray a little fainter, bubbles faint and hidden by the fluid in front
     * of them. diffuse_kinds: pbf_diffuse_kind per particle (NULL: all foam). 0: none. */
    int diffuse_count;
    const float *diffuse_positions; /* 3*diffuse_count, xyz, m */
    const uint8_t *diffuse_kinds;
    /* Particles already in OpenGL buffers of this renderer's context, for instance filled
     * from a CUDA world through interop (pbf/render_cuda.h: pbf_render_cuda_fill sets these).
     * With gl_positions not 0 the renderer draws particle_count particles from the buffers and
     * reads none of positions, velocities, densities and phases:
     *   gl_positions  3 floats per particle, xyz, m;
     *   gl_scalars    1 float per particle, the colour value (speed, density or phase as the
     *                 def asks), mapped through gl_scalar_range (unless def.color_min and
     *                 color_max set it); 0: every value 0;
     *   gl_centers, gl_axes  the ellipsoid splats: smoothed centres (3 floats) and axes (9,
     *                 pbf_surface_anisotropy's layout) per particle; required for
     *                 PBF_SPLAT_ELLIPSOID in the fluid look. */
    unsigned gl_positions, gl_scalars, gl_centers, gl_axes;
    float gl_scalar_range[2];
} pbf_render_scene;

PBF_API pbf_render_scene pbf_default_render_scene(void);

/* A camera that frames the box from the front (+z), slightly above, fov 40°. */
PBF_API pbf_camera_def pbf_render_default_camera(pbf_vec3 domain_min, pbf_vec3 domain_max,
                                                 float aspect);

/* ---------------------------------------------------------------------------------------------
 * Renderer */

typedef struct pbf_renderer pbf_renderer;

/* Creates the GL resources for def on the current context. */
PBF_API pbf_status pbf_renderer_create(const pbf_render_def *def, pbf_renderer **out, char *err,
                                       size_t err_size);
PBF_API void pbf_renderer_destroy(pbf_renderer *r);
PBF_API const pbf_render_def *pbf_renderer_get_def(const pbf_renderer *r);
/* Changes parameters; a new size reallocates the targets, a new sky reloads it. */
PBF_API pbf_status pbf_renderer_set_def(pbf_renderer *r, const pbf_render_def *def, char *err,
                                        size_t err_size);

/* Renders one frame into the renderer's off-screen image. */
PBF_API pbf_status pbf_renderer_draw(pbf_renderer *r, const pbf_render_scene *scene, char *err,
                                     size_t err_size);
/* Draws text over the last frame (the viewer's HUD): a built-in 5x7 pixel font (ASCII 32..126,
 * lower case shown as upper case), x/y in pixels from the top-left corner, scale >= 1 pixel
 * per font pixel, on a translucent dark box. Newlines start a new line. */
PBF_API void pbf_renderer_draw_text(pbf_renderer *r, int x, int y, int scale, const char *text);
/* Copies the image into rgba (width*height*4 bytes, top row first). Waits for the GPU. */
PBF_API pbf_status pbf_renderer_read_rgba(const pbf_renderer *r, uint8_t *rgba, char *err,
                                          size_t err_size);
/* Copies the image to the current context's default framebuffer (a window), scaled to
 * fb_width x fb_height. */
PBF_API void pbf_renderer_present(const pbf_renderer *r, int fb_width, int fb_height);

/* Intermediate images of the fluid look, for tests and debugging. Rows bottom first. */
typedef enum pbf_render_buffer {
    PBF_BUFFER_DEPTH = 0, /* eye-space depth before smoothing, m; 0 where no fluid (1 float) */
    PBF_BUFFER_DEPTH_SMOOTH, /* after smoothing (1 float) */
    PBF_BUFFER_THICKNESS, /* m (1 float) */
    PBF_BUFFER_NORMAL /* eye-space normal xyz (3 floats); 0 where no fluid */
} pbf_render_buffer;

/* out holds width*height floats (PBF_BUFFER_NORMAL: 3 per pixel). Valid after a draw with
 * the fluid look. */
PBF_API pbf_status pbf_renderer_read_buffer(const pbf_renderer *r, pbf_render_buffer which,
                                            float *out, char *err, size_t err_size);

/* GPU time of each pass of the last frame, ms (GL timer queries; 0 for passes not run). */
typedef struct pbf_render_timings {
    double background_ms; /* sky, floor, domain edges, colliders, meshes */
    double depth_ms; /* sphere depth (fluid) or shaded spheres (spheres look) */
    double thickness_ms;
    double smooth_ms;
    double normal_ms;
    double shade_ms; /* final composite */
    double total_ms; /* sum of the above */
} pbf_render_timings;

/* Timings of the last frame; waits for that frame's queries. */
PBF_API pbf_render_timings pbf_renderer_timings(pbf_renderer *r);

/* ---------------------------------------------------------------------------------------------
 * Images and video */

/* Writes an 8-bit RGBA PNG (rows top first) to a temporary name beside path, then renames it:
 * the file is complete or absent. */
PBF_API pbf_status pbf_png_write(const char *path, const uint8_t *rgba, int width, int height,
                                 char *err, size_t err_size);
/* Reads any PNG as 8-bit RGBA, rows top first; *rgba is malloc'd (free it). */
PBF_API pbf_status pbf_png_read(const char *path, uint8_t **rgba, int *width, int *height,
                                char *err, size_t err_size);

typedef struct pbf_video pbf_video;

/* Starts an H.264 MP4 encoder (ffmpeg, found on PATH, fed raw RGBA frames through a pipe).
 * The video goes to a temporary name beside path and is renamed in place by pbf_video_close
 * when ffmpeg succeeded. crf: x264 quality, 0..51, lower is better; 18 is visually lossless. */
PBF_API pbf_status pbf_video_open(const char *path, int width, int height, double fps, int crf,
                                  pbf_video **out, char *err, size_t err_size);
/* One frame, width*height*4 bytes, top row first. */
PBF_API pbf_status pbf_video_write(pbf_video *v, const uint8_t *rgba, char *err, size_t err_size);
/* Finishes the file; fails (and removes the partial file) when ffmpeg failed. Frees v. */
PBF_API pbf_status pbf_video_close(pbf_video *v, char *err, size_t err_size);
/* Stops ffmpeg and removes the partial file. Frees v. */
PBF_API void pbf_video_abort(pbf_video *v);

#ifdef __cplusplus
}
#endif

#endif /* PBF_RENDER_H */
