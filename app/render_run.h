/* Rendering from the pbf command, shared by `pbf run --png/--video` (cmd_run.c), `pbf render`
 * and `pbf bench --render`; implemented in cmd_render.c (built only with the renderer,
 * PBF_APP_HAVE_RENDER). */
#ifndef PBF_APP_RENDER_RUN_H
#define PBF_APP_RENDER_RUN_H

#include <stdio.h>

#include "cli.h"
#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "run.h"

/* Options of `pbf run` that render while simulating, for its --help. */
extern const char render_run_help[];

typedef struct render_run render_run;

/* NULL when out of memory. */
render_run *render_run_create(void);
void render_run_destroy(render_run *rr);
/* If the parser's current argument is --png DIR, --video FILE, --resolution WxH,
 * --look fluid|spheres or --color uniform|speed|density, takes it and returns 1 (a bad value
 * is a usage error: p->failed is set); otherwise returns 0. */
int render_run_option(render_run *rr, cli_parser *p);
/* Sets hooks (on_start, on_frame, on_finish, user) when --png or --video was given; leaves
 * them alone otherwise. The hooks print their own errors, and what they wrote unless quiet.
 * rr must outlive the run. */
void render_run_hooks(render_run *rr, int quiet, run_hooks *hooks);

/* Renders the world's current state `frames` times at width x height with the fluid look
 * (after one untimed frame) and stores the mean wall-clock milliseconds per frame, image read
 * back included, and the GL renderer's name. Prints nothing; returns 0, or 1 with err set. */
int render_bench_world(const pbf_world *world, const pbf_scene *scene, int width, int height,
                       int frames, double *ms_per_frame, char *renderer, size_t renderer_size,
                       char *err, size_t err_size);

#endif
