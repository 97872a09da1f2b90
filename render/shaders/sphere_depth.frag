// Fluid depth pass: eye depth of the nearest sphere surface (depth test keeps the nearest).
out float o_depth;
void main() {
    vec3 dir;
    float t, h;
    sphere_hit(dir, t, h);
    vec3 p = t * dir;
    o_depth = -p.z;
    gl_FragDepth = window_depth(p.z);
}
