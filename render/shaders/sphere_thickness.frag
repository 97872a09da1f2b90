// Fluid thickness pass: every particle adds a soft splat (additive blending), unless a solid
// or the floor is in front of it. The splat is a Gaussian of the ray's distance q from the
// centre, sigma = the particle radius, scaled to hold the particle's volume (4/3 pi r^3): a
// hard sphere chord would print the particle lattice into the thickness, and through it into
// the colour and refraction. The quad covers 3 sigma (u_particle_radius = 3 r here).
uniform sampler2D u_scene_depth; // full-resolution window depth of the opaque scene
uniform float u_thickness_scale; // target pixels -> scene-depth pixels
uniform float u_splat_sigma;     // m
out float o_thickness;
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
    // integral over the plane of A exp(-q^2 / 2 s^2) = 2 pi s^2 A = 4/3 pi r^3, with r = s
    float amplitude = (2.0 / 3.0) * u_splat_sigma;
    o_thickness = amplitude * exp(-0.5 * q2 / s2);
}
