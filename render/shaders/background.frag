// Sky and floor, ray-traced per pixel; writes the floor's depth so solids and fluid sort
// against it.
in vec2 v_uv;
out vec4 o_color;
void main() {
    vec3 dir = normalize(mat3(u_inv_view) * normalize(view_position(gl_FragCoord.xy, 1.0)));
    bool hits = u_floor == 1 && dir.y < -1e-5 && u_camera.y > u_floor_y;
    float t = hits ? (u_floor_y - u_camera.y) / dir.y : 0.0;
    vec3 p = u_camera + t * dir;
    // Derivatives in uniform control flow: the checker's filter width per pixel.
    vec2 px = p.xz / u_checker;
    vec2 w = max(abs(dFdx(px)), abs(dFdy(px)));
    float z_view = (u_view * vec4(p, 1.0)).z;
    if (hits) {
        // Beyond the far plane the floor has faded into the horizon: colour, but no depth.
        o_color = vec4(floor_color(p, t, w), 1.0);
        gl_FragDepth = -z_view < u_far ? window_depth(z_view) : 1.0;
    } else {
        o_color = vec4(sky_color(dir), 1.0);
        gl_FragDepth = 1.0;
    }
}
