uniform vec4 u_line_color;  // sRGB, straight alpha
out vec4 o_color;
void main() { o_color = u_line_color; }
