/* Small helpers shared by the renderer's sources (not part of the public API). */
#ifndef PBF_RENDER_UTIL_H
#define PBF_RENDER_UTIL_H

#include <stddef.h>

#if defined(__GNUC__)
#define PBF_RENDER_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PBF_RENDER_PRINTF(a, b)
#endif

/* snprintf into err when err is not NULL. */
void pbf_render_set_error(char *err, size_t err_size, const char *fmt, ...) PBF_RENDER_PRINTF(3, 4);

/* Column-major 4x4 matrices, as OpenGL takes them. */
typedef struct pbf_mat4 {
    float m[16];
} pbf_mat4;

pbf_mat4 pbf_mat4_identity(void);
pbf_mat4 pbf_mat4_mul(pbf_mat4 a, pbf_mat4 b);
/* Right-handed view matrix looking from eye at target, +y up. */
pbf_mat4 pbf_mat4_look_at(const float eye[3], const float target[3]);
/* OpenGL perspective projection: vertical fov in radians, depth range [-1, 1]. */
pbf_mat4 pbf_mat4_perspective(float fov_y, float aspect, float znear, float zfar);
/* Inverse of a rigid transform (rotation + translation). */
pbf_mat4 pbf_mat4_rigid_inverse(pbf_mat4 a);

#endif
