// Ray from the eye through the quad point against the sphere: t of the near hit and the half
// chord h (both along the unit ray dir), or discard.
uniform float u_particle_radius;
in vec3 v_view;
flat in vec3 v_center;
flat in float v_scalar;

void sphere_hit(out vec3 dir, out float t, out float half_chord) {
    dir = normalize(v_view);
    float b = dot(dir, v_center);
    float h2 = b * b - (dot(v_center, v_center) - u_particle_radius * u_particle_radius);
    if (h2 < 0.0) discard;
    half_chord = sqrt(h2);
    t = b - half_chord;
}
