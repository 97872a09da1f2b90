// Diffuse particles (spray, foam, bubbles) as round points over the composited frame. Foam and
// spray are lifted towards the camera by u_lift so that the fluid surface they sit on does not
// hide them; bubbles are not, so the fluid in front hides them where it is deeper than that.
layout(location = 0) in vec3 a_position;
layout(location = 1) in float a_kind; // 0 spray, 1 foam, 2 bubble
uniform float u_point_m;       // drawn diameter, m
uniform float u_pixels_per_m;  // at unit eye depth
uniform float u_lift;          // m
out float v_alpha;
void main() {
    vec4 eye = u_view * vec4(a_position, 1.0);
    float d = max(-eye.z, 1e-4);
    if (a_kind < 1.5) eye.xyz *= (d - u_lift) / d; // along the view ray, towards the camera
    gl_Position = u_proj * eye;
    gl_PointSize = max(1.5, u_point_m * u_pixels_per_m / d);
    v_alpha = a_kind < 0.5 ? 0.7 : (a_kind < 1.5 ? 0.95 : 0.45);
}
