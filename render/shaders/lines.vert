// The 12 edges of the domain box: 24 vertices from gl_VertexID.
uniform vec3 u_box_min, u_box_max;
const int EDGES[24] = int[24](0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7);
void main() {
    int c = EDGES[gl_VertexID];
    vec3 f = vec3(float(c & 1), float((c >> 1) & 1), float((c >> 2) & 1));
    gl_Position = u_proj * u_view * vec4(mix(u_box_min, u_box_max, f), 1.0);
}
