/* `pbf info`: what a scene will cost and every parameter it runs with, without simulating. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pbf/features.h"
#include "pbf/scene.h"

static const char info_synopsis[] = "usage: pbf info [SCENE] [--set key=value ...]\n"
                                    "       pbf info --scene-keys\n";

static const char info_help[] =
    "Shows a scene's particle count, memory estimate, kernel radius and particle mass, then\n"
    "every parameter after defaults and overrides, as JSON (the same as the scene.json that\n"
    "`pbf run` writes). Without SCENE: the built-in dam break.\n"
    "\n"
    "With --scene-keys: every key a scene may have, with its type, unit, default, range and\n"
    "meaning, as the markdown tables of docs/scenes.md (scripts/scene_docs.sh puts them there).\n"
    "\n"
    "options:\n"
    "  --set KEY=VALUE     override a scene parameter; repeatable\n"
    "  --scene-keys        print the scene key reference instead\n"
    "  --help, -h          this help\n"
    "\n"
    "examples:\n"
    "  pbf info scenes/dam_break.json\n"
    "  pbf info --set fluid.particle_radius=0.005\n";

/* Kernel radius and particle mass come from the library (the mass is normalised by the kernel
 * sum of the rest lattice), so an empty world is built from the scene's definition. */
static int print_info(const pbf_scene *scene) {
    char err[PBF_ERROR_SIZE];
    pbf_world *world = NULL;
    if (pbf_world_create(&scene->world, &world, err, sizeof err) != PBF_OK)
        return cli_error("%s", err);
    int64_t particles = pbf_scene_particle_count(scene);
    /* a fixed capacity (emitters) is allocated at the start: the memory is for it */
    int64_t allocated = scene->capacity > particles ? scene->capacity : particles;
    size_t bytes = pbf_world_memory_estimate(&scene->world, allocated);
    char count[32], mem[32], formats[32];
    const pbf_world_def *d = &scene->world;
    printf("scene            %s (%s)\n", scene->name, scene->source);
    printf("particles        %s in %d block%s, %d collider%s\n",
           cli_format_count(particles, count, sizeof count), scene->block_count,
           scene->block_count == 1 ? "" : "s", scene->collider_count,
           scene->collider_count == 1 ? "" : "s");
    if (scene->emitter_count > 0 || scene->sink_count > 0 || scene->capacity > 0) {
        char cap[32];
        printf("flow             %d emitter%s, %d sink%s, capacity %s particles%s\n",
               scene->emitter_count, scene->emitter_count == 1 ? "" : "s", scene->sink_count,
               scene->sink_count == 1 ? "" : "s",
               scene->capacity > 0 ? cli_format_count(scene->capacity, cap, sizeof cap) : "no",
               scene->capacity > 0 ? " (flow.capacity)" : "");
        for (int i = 0; i < scene->emitter_count; ++i) { /* the rate is speed · area, exactly */
            const pbf_emitter_def *e = &scene->emitters[i];
            const int disc = e->shape == PBF_EMITTER_DISC;
            double area = disc ? 3.14159265358979 * e->radius * e->radius
                               : (double)e->width * (double)e->height;
            double rate = area * e->speed, s = 2.0 * d->particle_radius;
            /* a particle stands for s³ of fluid and weighs pbf_world_particle_mass */
            double kg = rate / (s * s * s) * pbf_world_particle_mass(world);
            int layer = pbf_world_add_emitter(world, e) == PBF_OK
                            ? pbf_world_emitter_layer_size(world, i)
                            : 0; /* refused here too: `pbf run` says why */
            printf("  emitter %-6d %s, %g m^3/s = %g kg/s, %d particles a layer, from %g s%s\n", i,
                   disc ? "disc" : "rectangle", rate, kg, layer, (double)e->start,
                   e->stop < pbf_default_emitter_def().stop ? "" : ", never stops");
        }
    }
    /* the same limit `pbf run` refuses a scene against, before allocating */
    size_t limit = pbf_memory_limit();
    char lim[32];
    /* the world's own arrays at their largest (pbf_world_memory_estimate), then the ceiling
     * that `pbf run` checks them against and what sets it */
    printf(
        "memory           %s, estimated: the world's particle arrays, neighbour lists and grid\n",
        cli_format_bytes((double)bytes, mem, sizeof mem));
    if (limit > 0)
        printf("memory limit     %s, %s: `pbf run` refuses a scene that needs more\n",
               cli_format_bytes((double)limit, lim, sizeof lim), pbf_memory_limit_source());
    else
        printf("memory limit     unknown (not checked before allocating)\n");
    if (limit > 0 && bytes > limit)
        fprintf(stderr,
                "pbf: warning: %s needs about %s, more than the %s this process may use: `pbf "
                "run` will refuse it; use a larger fluid.particle_radius or smaller blocks\n",
                scene->source, mem, lim);
    printf("particle radius  %g m (spacing %g m)\n", (double)d->particle_radius,
           2.0 * d->particle_radius);
    printf("kernel radius    %g m (h = %g r)\n", (double)pbf_world_kernel_radius(world),
           (double)d->kernel_scale);
    printf("particle mass    %g kg\n", (double)pbf_world_particle_mass(world));
    printf("domain           (%g, %g, %g) - (%g, %g, %g) m\n", (double)d->domain_min.x,
           (double)d->domain_min.y, (double)d->domain_min.z, (double)d->domain_max.x,
           (double)d->domain_max.y, (double)d->domain_max.z);
    printf("time             %d frames at %g fps = %.3f s, %d substeps, %d iterations\n",
           scene->frames, (double)scene->fps, scene->frames / (double)scene->fps, d->substeps,
           d->solver.iterations);
    printf("output           %s [%s]\n", scene->output_dir,
           cli_format_names(scene->formats, formats, sizeof formats));
    /* the cells of the table of what runs where (pbf features) that this scene uses */
    const uint32_t used = pbf_scene_features(scene);
    printf("features         backend %s; what each feature uses runs on:\n",
           d->backend == PBF_BACKEND_CUDA ? "cuda" : "cpu");
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        if (!(used & (1u << f))) continue;
        const pbf_feature_info *fi = pbf_feature_get((pbf_feature)f);
        printf("  %-16s cpu %s, cuda %s, mpi %s\n", fi->name,
               pbf_support_name(fi->support[PBF_COLUMN_CPU]),
               pbf_support_name(fi->support[PBF_COLUMN_CUDA]),
               pbf_support_name(fi->support[PBF_COLUMN_MPI]));
    }
    if (scene->has_tool) { /* the tool (docs/tool.md) */
        const pbf_tool_def *t = &scene->tool;
        if (t->motion == PBF_TOOL_FREE)
            printf("tool             sphere R %g m, free, %g kg\n", (double)t->radius,
                   (double)t->mass);
        else if (t->key_count > 0)
            printf("tool             sphere R %g m, on a %s path of %d keys (%g s)\n",
                   (double)t->radius, t->interpolation == PBF_TOOL_SMOOTH ? "smooth" : "linear",
                   t->key_count, (double)t->keys[t->key_count - 1].time);
        else
            printf("tool             sphere R %g m, kinematic, at (%g, %g, %g) m\n",
                   (double)t->radius, (double)t->position.x, (double)t->position.y,
                   (double)t->position.z);
    }
    pbf_world_destroy(world);

    char *json = pbf_scene_to_json(scene);
    if (json == NULL) return cli_error("out of memory");
    printf("parameters (after defaults and overrides):\n%s", json);
    if (json[0] != '\0' && json[strlen(json) - 1] != '\n') putchar('\n');
    free(json);
    return CLI_EXIT_OK;
}

/* One markdown table cell, " text |": '|' would end it, and "<name" would start an HTML tag. A
 * value (code) goes between backticks. */
static void print_cell(const char *text, int code) {
    putchar(' ');
    if (code && text[0] != '\0') putchar('`');
    for (const char *c = text; *c != '\0'; ++c) {
        if (*c == '|')
            fputs("\\|", stdout);
        else if (*c == '<' && !code)
            fputs("&lt;", stdout);
        else
            putchar(*c);
    }
    if (code && text[0] != '\0') putchar('`');
    fputs(text[0] != '\0' ? " |" : "|", stdout);
}

/* Every scene key (pbf_scene_keys) as markdown: one table per section or list of objects, each
 * between the markers that scripts/scene_docs.sh replaces in docs/scenes.md. */
static int print_scene_keys(void) {
    int n = pbf_scene_keys(NULL, 0);
    pbf_scene_key_info *keys = n > 0 ? malloc((size_t)n * sizeof *keys) : NULL;
    if (keys == NULL || pbf_scene_keys(keys, n) != n) {
        free(keys);
        return cli_error("out of memory");
    }
    for (int i = 0; i < n; ++i) {
        const pbf_scene_key_info *k = &keys[i];
        if (i == 0 || strcmp(k->table, keys[i - 1].table) != 0) {
            if (i > 0) printf("<!-- /scene-keys -->\n\n");
            printf("<!-- scene-keys %s -->\n", k->table);
            printf("| key | type | unit | default | range | meaning |\n");
            printf("|---|---|---|---|---|---|\n");
        }
        char meaning[512];
        snprintf(meaning, sizeof meaning, "%s%s%s", k->only[0] ? k->only : "",
                 k->only[0] ? " only: " : "", k->doc);
        putchar('|');
        print_cell(k->path, 1);
        print_cell(k->type, 0);
        print_cell(k->unit, 0);
        if (k->default_note[0] != '\0')
            print_cell(k->default_note, 0);
        else
            print_cell(k->default_value, 1);
        print_cell(k->range, 0);
        print_cell(meaning, 0);
        putchar('\n');
    }
    if (n > 0) printf("<!-- /scene-keys -->\n");
    free(keys);
    return CLI_EXIT_OK;
}

int cmd_info(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "info", info_synopsis, argc, argv);
    cli_overrides sets = {NULL, 0, 0};
    const char *scene_path = NULL, *a, *v;
    int rc = CLI_EXIT_OK, help = 0, scene_keys = 0;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--scene-keys", NULL)) {
            scene_keys = 1;
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &sets);
        } else if (p.failed) {
            rc = CLI_EXIT_USAGE;
        } else {
            rc = cli_operand(&p, a, "scene", &scene_path);
        }
    }
    if (p.failed) rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", info_synopsis, info_help);
    } else if (rc == CLI_EXIT_OK && scene_keys) {
        if (scene_path != NULL || sets.count > 0)
            rc = cli_usage_error(&p, "--scene-keys takes no scene and no --set");
        else
            rc = print_scene_keys();
    } else if (rc == CLI_EXIT_OK) {
        pbf_scene *scene = malloc(sizeof *scene);
        if (scene == NULL)
            rc = cli_error("out of memory");
        else if ((rc = cli_load_scene(scene_path, sets.items, sets.count, scene)) == CLI_EXIT_OK)
            rc = print_info(scene);
        free(scene);
    }
    cli_overrides_free(&sets);
    return rc;
}
