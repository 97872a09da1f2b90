// Normals from the smoothed eye depth (seed 003 eq. 3.10-3.13): positions of the neighbours
// are rebuilt from depth, and at each axis the one-sided difference with the smaller depth
// step is used, so a discontinuity (the silhouette, fluid in front of fluid) does not tilt
// the normal.
uniform sampler2D u_depth;
out vec4 o_normal;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 size = textureSize(u_depth, 0);
    float d = texelFetch(u_depth, p, 0).r;
    if (d <= 0.0) { o_normal = vec4(0.0); return; }
    vec3 c = view_position(vec2(p) + 0.5, d);
    vec3 dx = vec3(0.0), dy = vec3(0.0);
    float best = 1e30;
    for (int s = -1; s <= 1; s += 2) {
        ivec2 q = p + ivec2(s, 0);
        if (q.x < 0 || q.x >= size.x) continue;
        float dq = texelFetch(u_depth, q, 0).r;
        if (dq <= 0.0 || abs(dq - d) >= best) continue;
        best = abs(dq - d);
        dx = (view_position(vec2(q) + 0.5, dq) - c) * float(s);
    }
    best = 1e30;
    for (int s = -1; s <= 1; s += 2) {
        ivec2 q = p + ivec2(0, s);
        if (q.y < 0 || q.y >= size.y) continue;
        float dq = texelFetch(u_depth, q, 0).r;
        if (dq <= 0.0 || abs(dq - d) >= best) continue;
        best = abs(dq - d);
        dy = (view_position(vec2(q) + 0.5, dq) - c) * float(s);
    }
    // An isolated pixel has no neighbour on an axis: take the axis of the image plane there.
    if (dx == vec3(0.0)) dx = vec3(1.0, 0.0, 0.0);
    if (dy == vec3(0.0)) dy = vec3(0.0, 1.0, 0.0);
    vec3 n = normalize(cross(dx, dy));
    o_normal = vec4(n, 1.0);
}
