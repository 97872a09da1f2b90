// A soft white disc; foam the brightest, bubbles the faintest (v_alpha, diffuse.vert).
in float v_alpha;
out vec4 o_color;
void main() {
    vec2 c = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(c, c);
    if (r2 > 1.0) discard;
    o_color = vec4(1.0, 1.0, 1.0, v_alpha * (1.0 - 0.5 * r2));
}
