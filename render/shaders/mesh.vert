// A triangle mesh solid: its local vertices placed by the model matrix (local to world).
layout(location = 0) in vec3 a_position;
uniform mat4 u_model;
out vec3 v_world;
void main() {
    v_world = (u_model * vec4(a_position, 1.0)).xyz;
    gl_Position = u_proj * u_view * vec4(v_world, 1.0);
}
