uniform sampler2D u_font;  // glyph atlas, R8
uniform int u_mode;        // 0 box, 1 glyphs
in vec2 v_uv;
out vec4 o_color;
void main() {
    if (u_mode == 0) {
        o_color = vec4(0.0, 0.0, 0.0, 0.55);
    } else {
        float a = texelFetch(u_font, ivec2(v_uv), 0).r;
        if (a < 0.5) discard;
        o_color = vec4(1.0, 1.0, 1.0, 1.0);
    }
}
