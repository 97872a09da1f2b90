// Fluid depth pass with ellipsoid splats: eye depth of the nearest ellipsoid surface. In the
// ellipsoid's unit-sphere space the ray o + t d (o = -M c, d = M dir) meets |x| = 1 where
// (d.d) t^2 + 2 (o.d) t + o.o - 1 = 0; t is the same parameter along the view ray.
in vec3 v_view;
flat in vec3 v_center;
flat in mat3 v_to_unit;
out float o_depth;
void main() {
    vec3 dir = normalize(v_view);
    vec3 o = -(v_to_unit * v_center);
    vec3 d = v_to_unit * dir;
    float a = dot(d, d), b = dot(o, d), c = dot(o, o) - 1.0;
    float disc = b * b - a * c;
    if (disc < 0.0) discard;
    float t = (-b - sqrt(disc)) / a;
    vec3 p = t * dir;
    o_depth = -p.z;
    gl_FragDepth = window_depth(p.z);
}
