/* A world's diffuse particles (spray, foam, bubbles) as the renderer draws them, shared by
 * `pbf run --png/--video` (cmd_render.c) and `pbf view` (cmd_view.c); and a run's
 * diffuse_NNNNN.ply files for `pbf render` (cmd_render.c). Built with the renderer only. */
#ifndef PBF_APP_RENDER_DIFFUSE_H
#define PBF_APP_RENDER_DIFFUSE_H

#include "pbf/diffuse.h"
#include "pbf/render.h"

/* Copies of the world's diffuse set, grown as needed and kept between frames. */
typedef struct render_diffuse {
    float *positions;
    uint8_t *kinds;
    int capacity;
} render_diffuse;

/* Reads the world's diffuse particles into rd and points s at them (none when the world has
 * them off). Returns 0, or 1 when out of memory (s then shows none). */
int render_diffuse_from_world(render_diffuse *rd, const pbf_world *world, pbf_render_scene *s);
/* Reads DIR/diffuse_NNNNN.ply (`pbf run` writes one per frame for a scene with diffuse
 * particles) into rd and points s at them; none where there is no such file. 0, or 1 with err
 * set (a broken file, out of memory). */
int render_diffuse_from_file(render_diffuse *rd, const char *dir, int number, pbf_render_scene *s,
                             char *err, size_t err_size);
/* Copies count particles of src into dst (the viewer's window side). 0, or 1 when out of
 * memory. */
int render_diffuse_copy(render_diffuse *dst, const render_diffuse *src, int count);
void render_diffuse_free(render_diffuse *rd);

#endif
