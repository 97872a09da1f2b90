/* The renderer's component of an installed pbf (tests/install/test_install.sh): its header and
 * library link, and its default camera frames the box from the front (+z), above its centre. No
 * GL context is needed for that. */
#include <stdio.h>

#include <pbf/render.h>

int main(void) {
    pbf_render_def def = pbf_default_render_def();
    pbf_vec3 lo = {0.0f, 0.0f, 0.0f}, hi = {1.0f, 1.0f, 1.0f};
    pbf_camera_def cam = pbf_render_default_camera(lo, hi, 16.0f / 9.0f);
    printf("render: %dx%d, camera at (%.2f, %.2f, %.2f)\n", def.width, def.height,
           (double)cam.position.x, (double)cam.position.y, (double)cam.position.z);
    return def.width > 0 && def.height > 0 && cam.position.z > 1.0f && cam.position.y > 0.5f ? 0
                                                                                             : 1;
}
