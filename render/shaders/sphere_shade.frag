// Spheres look: Blinn-Phong on the exact sphere, coloured uniformly or through a ramp.
uniform int u_color_mode;     // 0 uniform, else ramp of v_scalar
uniform vec3 u_sphere_color;
uniform vec2 u_color_range;   // scalar values at the ramp's ends
out vec4 o_color;

// A perceptually ordered ramp (viridis, five stops).
vec3 ramp(float x) {
    const vec3 c0 = vec3(0.267, 0.005, 0.329), c1 = vec3(0.229, 0.322, 0.545);
    const vec3 c2 = vec3(0.128, 0.567, 0.551), c3 = vec3(0.369, 0.789, 0.383);
    const vec3 c4 = vec3(0.993, 0.906, 0.144);
    x = clamp(x, 0.0, 1.0) * 4.0;
    if (x < 1.0) return mix(c0, c1, x);
    if (x < 2.0) return mix(c1, c2, x - 1.0);
    if (x < 3.0) return mix(c2, c3, x - 2.0);
    return mix(c3, c4, x - 3.0);
}

void main() {
    vec3 dir;
    float t, h;
    sphere_hit(dir, t, h);
    vec3 p = t * dir;
    vec3 n = (p - v_center) / u_particle_radius;
    vec3 base = u_sphere_color;
    if (u_color_mode != 0) {
        float x = (v_scalar - u_color_range.x) / max(u_color_range.y - u_color_range.x, 1e-20);
        base = pow(ramp(x), vec3(2.2));  // the ramp is in sRGB; shading is linear
    }
    vec3 l = normalize(mat3(u_view) * u_sun);
    vec3 v = -dir;
    vec3 hv = normalize(l + v);
    // Key light (the sun) and a softer fill from the opposite side.
    vec3 fill_dir = normalize(mat3(u_view) * normalize(vec3(-u_sun.x, 0.6, -u_sun.z)));
    float diff = max(dot(n, l), 0.0) + 0.45 * max(dot(n, fill_dir), 0.0);
    float spec = pow(max(dot(n, hv), 0.0), 80.0);
    vec3 nw = mat3(u_inv_view) * n;
    vec3 amb = mix(vec3(0.25, 0.24, 0.22), vec3(0.45, 0.55, 0.70), 0.5 + 0.5 * nw.y);
    o_color = vec4(base * (amb + 0.8 * diff) + vec3(0.35) * spec, 1.0);
    gl_FragDepth = window_depth(p.z);
}
