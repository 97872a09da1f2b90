// One particle per instance, drawn as a quad facing the camera that exactly covers the
// sphere's projection (perspective included); the fragment shaders ray-cast the sphere.
layout(location = 0) in vec3 a_center;  // world, per instance
layout(location = 1) in float a_scalar; // colour value, per instance
uniform float u_particle_radius;        // drawn radius, m
out vec3 v_view;                        // view-space point on the quad
flat out vec3 v_center;                 // view-space sphere centre
flat out float v_scalar;
void main() {
    vec3 c = (u_view * vec4(a_center, 1.0)).xyz;
    float r = u_particle_radius;
    float d = length(c);
    v_center = c;
    v_scalar = a_scalar;
    if (d <= r * 1.001) {  // the camera is inside this sphere: draw nothing
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_view = c;
        return;
    }
    // The cone of rays tangent to the sphere cuts the plane through the centre,
    // perpendicular to the central ray, in a circle of radius r d / sqrt(d^2 - r^2).
    vec3 w = c / d;
    vec3 up = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(up, w));
    vec3 v = cross(w, u);
    float s = r * d / sqrt(d * d - r * r);
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    v_view = c + (corner.x * u + corner.y * v) * s;
    gl_Position = u_proj * vec4(v_view, 1.0);
}
