// A triangle mesh solid, flat-shaded like the ray-cast colliders. The face normal comes from the
// screen-space derivatives of the world position (exact on a plane: no normals to upload), turned
// towards the viewer so both sides of an open mesh and the inner walls of a container are lit.
uniform vec3 u_color;
in vec3 v_world;
out vec4 o_color;
void main() {
    vec3 d = normalize(v_world - u_camera);
    vec3 n = normalize(cross(dFdx(v_world), dFdy(v_world)));
    if (dot(n, d) > 0.0) n = -n;
    o_color = vec4(shade_solid(n, d, u_color), 1.0);
}
