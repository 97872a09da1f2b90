// A box around one solid (its bounding box, a little larger); the fragment shader ray-casts
// the exact shape. 36 vertices from gl_VertexID, no vertex buffer.
uniform vec3 u_box_min, u_box_max;
out vec3 v_world;
const int FACES[36] = int[36](0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                              2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5);
void main() {
    int c = FACES[gl_VertexID];
    vec3 f = vec3(float(c & 1), float((c >> 1) & 1), float((c >> 2) & 1));
    v_world = mix(u_box_min, u_box_max, f);
    gl_Position = u_proj * u_view * vec4(v_world, 1.0);
}
