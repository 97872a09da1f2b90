// Shared by every shader of the renderer (prepended after the #version line).
// Conventions: "view" space is OpenGL eye space (camera at the origin looking down -z);
// eye depth d = -z_view > 0; colours are linear RGB until the final pass.

uniform mat4 u_view;          // world -> view
uniform mat4 u_proj;          // view -> clip
uniform mat4 u_inv_view;      // view -> world
uniform vec2 u_resolution;    // target size in pixels
uniform float u_tan_half_fov; // tan(fov_y / 2)
uniform float u_aspect;       // width / height
uniform float u_near, u_far;
uniform vec3 u_camera;        // camera position, world
uniform vec3 u_sun;           // unit vector towards the sun, world

uniform int u_floor;          // 1: checkerboard floor at y = u_floor_y
uniform float u_floor_y;
uniform float u_checker;      // checker cell size, m
uniform float u_fog;          // distance over which the floor fades into the sky, m
uniform vec3 u_floor_center;  // floor is brightest under the domain
uniform int u_sky_mode;       // 0 gradient, 1 cube map
uniform samplerCube u_sky_cube;

const float PI = 3.14159265358979;

// View-space point on the ray through pixel coordinate frag (pixels) at eye depth d.
vec3 view_position(vec2 frag, float d) {
    vec2 ndc = frag / u_resolution * 2.0 - 1.0;
    return vec3(ndc.x * u_tan_half_fov * u_aspect * d, ndc.y * u_tan_half_fov * d, -d);
}

// Window depth [0,1] of a view-space z (as the fixed pipeline would write it).
float window_depth(float z_view) {
    vec4 clip = u_proj * vec4(0.0, 0.0, z_view, 1.0);
    return clamp(0.5 * clip.z / clip.w + 0.5, 0.0, 1.0);
}

// Eye depth (positive) from a window depth.
float eye_depth(float window) {
    float z_ndc = window * 2.0 - 1.0;
    return 2.0 * u_near * u_far / (u_far + u_near - z_ndc * (u_far - u_near));
}

vec3 sky_color(vec3 dir) {
    if (u_sky_mode == 1) return texture(u_sky_cube, dir).rgb;
    float h = dir.y;
    vec3 zenith = vec3(0.18, 0.36, 0.72);
    vec3 horizon = vec3(0.70, 0.80, 0.92);
    vec3 ground = vec3(0.32, 0.31, 0.30);
    vec3 c = h > 0.0 ? mix(horizon, zenith, pow(h, 0.6)) : mix(horizon, ground, pow(-h, 0.4));
    float s = max(dot(dir, u_sun), 0.0);
    c += vec3(1.0, 0.9, 0.7) * (pow(s, 800.0) * 8.0 + pow(s, 16.0) * 0.15);
    return c;
}

// Box-filtered checkerboard: 0 or 1 away from edges, averaged over the filter width w.
float checker(vec2 p, vec2 w) {
    w = max(w, vec2(1e-4));
    vec2 i = 2.0 * (abs(fract((p - 0.5 * w) * 0.5) - 0.5) - abs(fract((p + 0.5 * w) * 0.5) - 0.5)) / w;
    return 0.5 - 0.5 * i.x * i.y;
}

// Colour of the floor at world point p seen from distance dist; w: filter width in cells.
vec3 floor_color(vec3 p, float dist, vec2 w) {
    float c = checker(p.xz / u_checker, w);
    vec3 base = mix(vec3(0.62, 0.60, 0.56), vec3(0.34, 0.33, 0.31), c);
    float lit = 0.55 + 0.45 * max(u_sun.y, 0.0);
    vec3 col = base * lit;
    float fog = 1.0 - exp(-dist / u_fog);
    vec3 horizon_dir = normalize(vec3(p.x - u_camera.x, 1e-3, p.z - u_camera.z));
    return mix(col, sky_color(horizon_dir), fog);
}

// What a ray from o along unit dir sees outside the fluid: the floor or the sky.
vec3 environment(vec3 o, vec3 dir) {
    if (u_floor == 1 && dir.y < -1e-4 && o.y > u_floor_y) {
        float t = (u_floor_y - o.y) / dir.y;
        vec3 p = o + t * dir;
        return floor_color(p, distance(p, u_camera), vec2(0.02 + t * 0.02));
    }
    return sky_color(dir);
}

// Opaque solids (colliders, the tool, meshes): Blinn-Phong with the sun as key light and a
// softer fill from the opposite side, so that faces turned away from the sun keep their shape.
// n: unit normal facing the viewer, d: unit view ray direction.
vec3 shade_solid(vec3 n, vec3 d, vec3 color) {
    vec3 hv = normalize(u_sun - d);
    vec3 fill_dir = normalize(vec3(-u_sun.x, 0.6, -u_sun.z));
    float diff = max(dot(n, u_sun), 0.0) + 0.45 * max(dot(n, fill_dir), 0.0);
    float spec = pow(max(dot(n, hv), 0.0), 64.0);
    vec3 amb = 0.35 * mix(vec3(0.30, 0.29, 0.28), vec3(0.55, 0.65, 0.80), 0.5 + 0.5 * n.y);
    return color * (amb + 0.75 * diff) + vec3(0.25) * spec;
}
