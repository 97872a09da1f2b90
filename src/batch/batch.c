/* A batch of small worlds stepped together (include/pbf/batch.h). Each world is an ordinary
 * pbf_world built by pbf_scene_create_world from a copy of the scene with its parameters: the
 * batch adds no physics, only the loop across worlds, the gather of their arrays and the naming
 * of a world that failed. */
#include "pbf/batch.h"

#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PBF_BATCH_MAX_WORLDS 1000000

struct pbf_world_batch {
    pbf_scene *scene; /* the template, a copy */
    int count; /* worlds */
    int particles; /* of each world */
    int threads; /* across worlds; 0: the OpenMP default */
    pbf_world **worlds; /* count */
    pbf_batch_params *params; /* count: what each world was built with */
    pbf_status *status; /* count: PBF_OK, or how the world failed */
    char error[PBF_ERROR_SIZE];
};

static void set_message(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* Where the scene's tool is at time 0: its path's position then, else tool.position. */
static pbf_vec3 tool_start(const pbf_scene *scene) {
    return pbf_tool_path_position(&scene->tool, 0.0);
}

pbf_batch_params pbf_batch_default_params(const pbf_scene *scene) {
    pbf_batch_params p;
    memset(&p, 0, sizeof p);
    p.jitter = -1.0f;
    if (scene == NULL) return p;
    p.gravity = scene->world.gravity;
    p.xsph = scene->world.solver.xsph;
    p.vorticity = scene->world.solver.vorticity;
    p.viscosity = scene->world.material.viscosity;
    p.tool_position = tool_start(scene);
    return p;
}

static int finite3(pbf_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

/* Checks what the world's own validation would not name as a batch parameter. */
static pbf_status check_params(const pbf_batch_params *p, int world, char *err, size_t size) {
    if (!finite3(p->gravity)) {
        set_message(err, size, "world %d: params.gravity must be finite", world);
        return PBF_ERR_INVALID_ARG;
    }
    if (!(p->jitter <= 0.5f)) { /* NaN fails too */
        set_message(err, size,
                    "world %d: params.jitter must be in [0, 0.5] (or < 0: the blocks' own), got %g",
                    world, (double)p->jitter);
        return PBF_ERR_INVALID_ARG;
    }
    if (!finite3(p->tool_position)) {
        set_message(err, size, "world %d: params.tool_position must be finite", world);
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

/* The scene of one world: the template with p applied, into s. */
static void apply_params(const pbf_scene *base, const pbf_batch_params *p, pbf_scene *s) {
    *s = *base;
    s->world.threads = 1; /* the batch's threads run across worlds */
    s->world.gravity = p->gravity;
    s->world.solver.xsph = p->xsph;
    s->world.solver.vorticity = p->vorticity;
    s->world.material.viscosity = p->viscosity;
    for (int b = 0; b < s->block_count; ++b) {
        s->blocks[b].seed += p->seed;
        if (p->jitter >= 0.0f) s->blocks[b].jitter = p->jitter;
    }
    if (s->has_tool) {
        const pbf_vec3 start = tool_start(base);
        const pbf_vec3 d = {p->tool_position.x - start.x, p->tool_position.y - start.y,
                            p->tool_position.z - start.z};
        s->tool.position = p->tool_position;
        for (int k = 0; k < s->tool.key_count; ++k) {
            pbf_vec3 *x = &s->tool.keys[k].position;
            x->x += d.x, x->y += d.y, x->z += d.z;
        }
    }
}

/* Builds one world of the batch; on failure err holds "world i: ...". */
static pbf_status build_world(const pbf_world_batch *b, int i, const pbf_batch_params *p,
                              pbf_scene *scratch, pbf_world **out, char *err, size_t size) {
    *out = NULL;
    pbf_status st = check_params(p, i, err, size);
    if (st != PBF_OK) return st;
    apply_params(b->scene, p, scratch);
    char msg[PBF_ERROR_SIZE];
    st = pbf_scene_create_world(scratch, out, msg, sizeof msg);
    if (st != PBF_OK) {
        set_message(err, size, "world %d: %s", i, msg);
        return st;
    }
    if (b->particles >= 0 && pbf_world_particle_count(*out) != b->particles) {
        set_message(err, size, "world %d: %d particles where world 0 has %d", i,
                    pbf_world_particle_count(*out), b->particles);
        pbf_world_destroy(*out);
        *out = NULL;
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

static pbf_status check_scene(const pbf_scene *scene, int count, char *err, size_t size) {
    if (scene == NULL) {
        set_message(err, size, "batch: scene must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    if (count < 1 || count > PBF_BATCH_MAX_WORLDS) {
        set_message(err, size, "%s: batch: count must be in [1, %d], got %d", scene->source,
                    PBF_BATCH_MAX_WORLDS, count);
        return PBF_ERR_INVALID_ARG;
    }
    if (scene->emitter_count > 0 || scene->sink_count > 0) {
        set_message(err, size,
                    "%s: batch: flow.emitters and flow.sinks are not available in a batch (its "
                    "worlds share one particle count, one [worlds, particles, 3] array); "
                    "remove the flow section",
                    scene->source);
        return PBF_ERR_UNSUPPORTED;
    }
    if (scene->world.backend != PBF_BACKEND_CPU) {
        set_message(err, size,
                    "%s: batch: world.backend must be cpu: the batch steps its worlds with CPU "
                    "threads (the GPU batch is not written yet)",
                    scene->source);
        return PBF_ERR_UNSUPPORTED;
    }
    return PBF_OK;
}

pbf_status pbf_world_batch_create(const pbf_scene *scene, int count, const pbf_batch_params *params,
                                  pbf_world_batch **out, char *err, size_t err_size) {
    if (out == NULL) {
        set_message(err, err_size, "batch: out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
    pbf_status st = check_scene(scene, count, err, err_size);
    if (st != PBF_OK) return st;
    pbf_world_batch *b = calloc(1, sizeof *b);
    pbf_scene *scratch = malloc(sizeof *scratch);
    if (b != NULL) {
        b->scene = malloc(sizeof *b->scene);
        b->worlds = calloc((size_t)count, sizeof *b->worlds);
        b->params = calloc((size_t)count, sizeof *b->params);
        b->status = calloc((size_t)count, sizeof *b->status);
    }
    if (b == NULL || scratch == NULL || b->scene == NULL || b->worlds == NULL ||
        b->params == NULL || b->status == NULL) {
        free(scratch);
        pbf_world_batch_destroy(b);
        set_message(err, err_size, "batch: out of memory for %d worlds", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    *b->scene = *scene;
    b->count = count;
    b->threads = scene->world.threads;
    b->particles = -1;
    /* One after another: building a world may bake or cache a mesh's field in a file. */
    for (int i = 0; i < count && st == PBF_OK; ++i) {
        b->params[i] = params != NULL ? params[i] : pbf_batch_default_params(scene);
        st = build_world(b, i, &b->params[i], scratch, &b->worlds[i], err, err_size);
        if (st == PBF_OK && i == 0) b->particles = pbf_world_particle_count(b->worlds[0]);
    }
    free(scratch);
    if (st != PBF_OK) {
        pbf_world_batch_destroy(b);
        return st;
    }
    *out = b;
    return PBF_OK;
}

void pbf_world_batch_destroy(pbf_world_batch *b) {
    if (b == NULL) return;
    if (b->worlds != NULL)
        for (int i = 0; i < b->count; ++i) pbf_world_destroy(b->worlds[i]);
    free(b->worlds);
    free(b->params);
    free(b->status);
    free(b->scene);
    free(b);
}

int pbf_world_batch_count(const pbf_world_batch *b) { return b != NULL ? b->count : 0; }

int pbf_world_batch_particle_count(const pbf_world_batch *b) {
    return b != NULL ? b->particles : 0;
}

const char *pbf_world_batch_error(const pbf_world_batch *b) { return b != NULL ? b->error : ""; }

static int batch_threads(const pbf_world_batch *b) {
    return b->threads > 0 ? b->threads : omp_get_max_threads();
}

pbf_status pbf_world_batch_step(pbf_world_batch *b, float dt) {
    if (b == NULL) return PBF_ERR_INVALID_ARG;
    const int nt = batch_threads(b);
    int first = -1;
    /* The worlds' costs differ (a tool, a splash): threads take the next world when free. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int i = 0; i < b->count; ++i) {
        if (b->status[i] != PBF_OK) continue;
        pbf_status st = pbf_world_step(b->worlds[i], dt);
        if (st != PBF_OK) {
            b->status[i] = st;
#pragma omp critical(pbf_batch_first)
            if (first < 0 || i < first) first = i;
        }
    }
    if (first < 0) return PBF_OK;
    set_message(b->error, sizeof b->error, "world %d: %s", first,
                pbf_world_error(b->worlds[first]));
    return b->status[first];
}

pbf_status pbf_world_batch_status(const pbf_world_batch *b, int i) {
    if (b == NULL || i < 0 || i >= b->count) return PBF_ERR_INVALID_ARG;
    return b->status[i];
}

pbf_status pbf_world_batch_reset(pbf_world_batch *b, int i, const pbf_batch_params *params) {
    if (b == NULL) return PBF_ERR_INVALID_ARG;
    if (i < 0 || i >= b->count) {
        set_message(b->error, sizeof b->error, "batch reset: world must be in [0, %d), got %d",
                    b->count, i);
        return PBF_ERR_INVALID_ARG;
    }
    pbf_scene *scratch = malloc(sizeof *scratch);
    if (scratch == NULL) {
        set_message(b->error, sizeof b->error, "world %d: out of memory", i);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    const pbf_batch_params p = params != NULL ? *params : b->params[i];
    pbf_world *w = NULL;
    pbf_status st = build_world(b, i, &p, scratch, &w, b->error, sizeof b->error);
    free(scratch);
    if (st != PBF_OK) return st;
    pbf_world_destroy(b->worlds[i]);
    b->worlds[i] = w;
    b->params[i] = p;
    b->status[i] = PBF_OK;
    return PBF_OK;
}

void pbf_world_batch_get_positions(const pbf_world_batch *b, float *out) {
    const size_t stride = (size_t)3 * (size_t)b->particles;
#pragma omp parallel for schedule(static) num_threads(batch_threads(b))
    for (int i = 0; i < b->count; ++i) pbf_world_get_positions(b->worlds[i], out + stride * i);
}

void pbf_world_batch_get_velocities(const pbf_world_batch *b, float *out) {
    const size_t stride = (size_t)3 * (size_t)b->particles;
#pragma omp parallel for schedule(static) num_threads(batch_threads(b))
    for (int i = 0; i < b->count; ++i) pbf_world_get_velocities(b->worlds[i], out + stride * i);
}

pbf_status pbf_world_batch_set_tool_poses(pbf_world_batch *b, const float *poses) {
    if (b == NULL || poses == NULL) return PBF_ERR_INVALID_ARG;
    for (int i = 0; i < b->count; ++i) {
        const pbf_vec3 x = {poses[3 * i], poses[3 * i + 1], poses[3 * i + 2]};
        pbf_status st = pbf_tool_set_pose(b->worlds[i], x);
        if (st != PBF_OK) {
            set_message(b->error, sizeof b->error, "world %d: %s", i,
                        pbf_world_error(b->worlds[i]));
            return st;
        }
    }
    return PBF_OK;
}

void pbf_world_batch_get_tool_states(const pbf_world_batch *b, pbf_tool_state *out) {
    for (int i = 0; i < b->count; ++i) out[i] = pbf_tool_get_state(b->worlds[i]);
}

pbf_world *pbf_world_batch_world(pbf_world_batch *b, int i) {
    return b != NULL && i >= 0 && i < b->count ? b->worlds[i] : NULL;
}

const pbf_batch_params *pbf_world_batch_params(const pbf_world_batch *b, int i) {
    return b != NULL && i >= 0 && i < b->count ? &b->params[i] : NULL;
}
