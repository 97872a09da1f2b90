// Final pass: the opaque scene, and where there is fluid in front of it the shaded surface
// (seed 003 section 3.5): Schlick Fresnel mixes the reflected environment (sky and floor) with the
// refracted background (the scene image read at an offset along the normal), tinted by
// Beer-Lambert absorption over the thickness; a sun highlight on top. Output in sRGB.
uniform sampler2D u_scene;        // linear colour of the opaque scene
uniform sampler2D u_scene_depth;  // its window depth
uniform sampler2D u_depth;        // smoothed fluid eye depth (0: no fluid)
uniform sampler2D u_normal;       // fluid eye-space normal
uniform sampler2D u_thickness;    // fluid thickness, m (maybe lower resolution: filtered)
uniform int u_fluid;              // 0: no fluid this frame (spheres look)
uniform int u_shading;            // 0: show normals (debug)
uniform int u_use_thickness;      // 0: constant thickness u_default_thickness
uniform float u_default_thickness;
uniform vec3 u_absorption;        // per m
uniform int u_use_phases;         // several fluids: the thickness's gba is the optical depth
uniform vec3 u_fluid_color;
uniform float u_min_transmission;
uniform float u_refraction;
uniform float u_r0;               // Fresnel reflectance at normal incidence
uniform float u_pixels_per_m;     // projected size of 1 m at eye depth 1, pixels
out vec4 o_color;

vec3 to_srgb(vec3 c) {
    c = max(c, vec3(0.0));
    // A soft shoulder above 1 (sun glints), then the sRGB curve.
    c = mix(c, 1.0 - exp(-c), step(vec3(0.8), c) * clamp((c - 0.8) * 5.0, 0.0, 1.0));
    c = clamp(c, 0.0, 1.0);
    return mix(12.92 * c, 1.055 * pow(c, vec3(1.0 / 2.4)) - 0.055, step(vec3(0.0031308), c));
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec3 scene = texelFetch(u_scene, p, 0).rgb;
    float d = u_fluid == 1 ? texelFetch(u_depth, p, 0).r : 0.0;
    if (d <= 0.0 || d > eye_depth(texelFetch(u_scene_depth, p, 0).r) + 1e-4) {
        o_color = vec4(to_srgb(scene), 1.0);
        return;
    }
    vec3 n = texelFetch(u_normal, p, 0).xyz;
    if (u_shading == 0) {
        o_color = vec4(n * 0.5 + 0.5, 1.0);
        return;
    }
    vec3 pos = view_position(gl_FragCoord.xy, d);
    vec3 v = normalize(-pos);
    vec2 uv = gl_FragCoord.xy / u_resolution;
    float thick = u_use_thickness == 1 ? texture(u_thickness, uv).r : u_default_thickness;

    // Refraction: the background seen through the fluid, displaced along the normal by a
    // fraction of the thickness (seed 003 eq. 3.20), projected to pixels at this depth.
    vec2 offset_px = -n.xy * u_refraction * min(thick, 4.0 * d) * u_pixels_per_m / d;
    float len = length(offset_px);
    float max_px = 0.08 * u_resolution.y;
    if (len > max_px) offset_px *= max_px / len;
    vec2 ruv = clamp(uv + offset_px / u_resolution, vec2(0.0), vec2(1.0));
    // Only what lies behind the fluid can be seen through it.
    if (eye_depth(texture(u_scene_depth, ruv).r) < d) ruv = uv;
    vec3 behind = texture(u_scene, ruv).rgb;
    // Beer-Lambert, floored so that deep fluid keeps a colour of its own (seed 003 eq. 3.22-23).
    vec3 depth = u_use_phases == 1 && u_use_thickness == 1 ? texture(u_thickness, uv).gba
                                                           : u_absorption * thick;
    vec3 transmit = max(exp(-depth), vec3(u_min_transmission));
    vec3 light = sky_color(vec3(0.0, 1.0, 0.0)) * 0.6 + vec3(0.3);
    vec3 refracted = behind * transmit + u_fluid_color * light * (1.0 - transmit);

    // Reflection of the environment, in world space.
    vec3 nw = normalize(mat3(u_inv_view) * n);
    vec3 vw = normalize(mat3(u_inv_view) * v);
    vec3 pw = (u_inv_view * vec4(pos, 1.0)).xyz;
    vec3 reflected = environment(pw, reflect(-vw, nw));
    float cos_t = clamp(dot(nw, vw), 0.0, 1.0);
    float fresnel = u_r0 + (1.0 - u_r0) * pow(1.0 - cos_t, 5.0);

    vec3 h = normalize(u_sun + vw);
    float spec = pow(max(dot(nw, h), 0.0), 400.0) * 4.0 * step(0.0, u_sun.y);

    vec3 c = mix(refracted, reflected, fresnel) + vec3(1.0, 0.95, 0.85) * spec;
    o_color = vec4(to_srgb(c), 1.0);
}
