// Fluid thickness pass: every particle adds a soft splat (additive blending), unless a solid
// or the floor is in front of it. The splat is a Gaussian of the ray's distance q from the
// centre, sigma = the drawn radius, scaled so that it integrates to the volume the particle
// stands for ((2r)^3 at rest spacing 2r): the thickness is then the depth of fluid along the
// ray in metres. A hard sphere chord would print the particle lattice into the thickness, and
// through it into the colour and refraction. The quad covers 3 sigma (u_particle_radius = 3
// sigma here).
uniform sampler2D u_scene_depth; // full-resolution window depth of the opaque scene
uniform float u_thickness_scale; // target pixels -> scene-depth pixels
uniform float u_splat_sigma;     // m
uniform float u_splat_volume;    // m^3
// Several fluids: r is the thickness, gba the optical depth, the particle's fluid's absorption
// (per m, RGB) times its thickness; the composite tints by exp(-gba). One fluid: gba = 0.
uniform int u_use_phases;
uniform vec3 u_phase_absorption[8];
out vec4 o_thickness;
void main() {
    vec3 dir;
    float t, h;
    sphere_hit(dir, t, h);
    float b = dot(dir, v_center);
    float q2 = max(dot(v_center, v_center) - b * b, 0.0);
    vec3 p = b * dir;  // the ray's closest point to the centre
    float opaque = texelFetch(u_scene_depth, ivec2(gl_FragCoord.xy * u_thickness_scale), 0).r;
    if (window_depth(p.z) > opaque) discard;
    float s2 = u_splat_sigma * u_splat_sigma;
    // integral over the plane of A exp(-q^2 / 2 s^2) = 2 pi s^2 A = volume
    float amplitude = u_splat_volume / (2.0 * PI * s2);
    float splat = amplitude * exp(-0.5 * q2 / s2);
    vec3 absorb = u_use_phases == 1 ? u_phase_absorption[clamp(int(v_scalar + 0.5), 0, 7)]
                                    : vec3(0.0);
    o_thickness = vec4(splat, absorb * splat);
}
