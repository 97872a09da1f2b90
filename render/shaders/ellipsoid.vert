// One particle per instance as an ellipsoid: the support ellipsoid of its anisotropic kernel
// (pbf_surface_anisotropy, Yu & Turk 2013; the mesher uses the same one), scaled to the drawn
// size. The quad covers the projection of the bounding sphere (the longest axis); the fragment
// shader ray-casts the ellipsoid exactly.
layout(location = 0) in vec3 a_center; // world, smoothed centre, per instance
layout(location = 2) in vec3 a_row0;   // world, the rows of the matrix whose columns are the
layout(location = 3) in vec3 a_row1;   // principal axes at the kernel's support (m), as
layout(location = 4) in vec3 a_row2;   // pbf_surface_anisotropy lays them out
uniform float u_axes_scale;            // support -> drawn size
out vec3 v_view;             // view-space point on the quad
flat out vec3 v_center;      // view-space centre
flat out mat3 v_to_unit;     // view space -> the ellipsoid's unit-sphere space
void main() {
    mat3 rot = mat3(u_view);
    vec3 c = (u_view * vec4(a_center, 1.0)).xyz;
    mat3 axes = rot * (transpose(mat3(a_row0, a_row1, a_row2)) * u_axes_scale);
    float r = max(length(axes[0]), max(length(axes[1]), length(axes[2])));
    float d = length(c);
    v_center = c;
    v_to_unit = inverse(axes);
    if (d <= r * 1.001 || !(r > 0.0)) { // the camera is inside the bounding sphere: skip
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        v_view = c;
        return;
    }
    // as sphere.vert for the bounding sphere of radius r
    vec3 w = c / d;
    vec3 up = abs(w.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0);
    vec3 u = normalize(cross(up, w));
    vec3 v = cross(w, u);
    float s = r * d / sqrt(d * d - r * r);
    vec2 corner = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1)) * 2.0 - 1.0;
    v_view = c + (corner.x * u + corner.y * v) * s;
    gl_Position = u_proj * vec4(v_view, 1.0);
}
