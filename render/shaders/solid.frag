// Ray-cast sphere, axis-aligned box or capsule; Blinn-Phong; exact depth.
uniform int u_shape;          // 0 sphere, 1 box, 2 capsule (pbf_collider_type)
uniform vec3 u_center;
uniform vec3 u_half;
uniform float u_radius;
uniform vec3 u_a, u_b;
uniform vec3 u_color;
in vec3 v_world;
out vec4 o_color;

// Nearest hit t > 0 of the ray o + t d (d unit), or -1; n: outward normal there.
float hit_sphere(vec3 o, vec3 d, vec3 c, float r, out vec3 n) {
    vec3 oc = o - c;
    float b = dot(oc, d);
    float h = b * b - (dot(oc, oc) - r * r);
    n = vec3(0.0, 1.0, 0.0);
    if (h < 0.0) return -1.0;
    float t = -b - sqrt(h);
    if (t < 0.0) return -1.0;
    n = (o + t * d - c) / r;
    return t;
}

float hit_box(vec3 o, vec3 d, vec3 c, vec3 h, out vec3 n) {
    vec3 inv = 1.0 / d;
    vec3 t0 = (c - h - o) * inv;
    vec3 t1 = (c + h - o) * inv;
    vec3 tmin = min(t0, t1), tmax = max(t0, t1);
    float tn = max(max(tmin.x, tmin.y), tmin.z);
    float tf = min(min(tmax.x, tmax.y), tmax.z);
    n = vec3(0.0, 1.0, 0.0);
    if (tn > tf || tn < 0.0) return -1.0;
    if (tn == tmin.x) n = vec3(-sign(d.x), 0.0, 0.0);
    else if (tn == tmin.y) n = vec3(0.0, -sign(d.y), 0.0);
    else n = vec3(0.0, 0.0, -sign(d.z));
    return tn;
}

// Capsule: the cylinder body where the hit projects inside the segment, else the end spheres.
float hit_capsule(vec3 o, vec3 d, vec3 a, vec3 b, float r, out vec3 n) {
    vec3 ba = b - a, oa = o - a;
    float baba = dot(ba, ba), bard = dot(ba, d), baoa = dot(ba, oa);
    float qa = baba - bard * bard;
    float qb = baba * dot(d, oa) - baoa * bard;
    float qc = baba * dot(oa, oa) - baoa * baoa - r * r * baba;
    float h = qb * qb - qa * qc;
    n = vec3(0.0, 1.0, 0.0);
    if (h < 0.0) return -1.0;
    float t = qa > 1e-12 ? (-qb - sqrt(h)) / qa : -1.0;
    float y = baoa + t * bard;
    if (t > 0.0 && y > 0.0 && y < baba) {
        vec3 p = o + t * d;
        n = normalize(p - (a + ba * (y / baba)));
        return t;
    }
    float ts;
    vec3 ns;
    float best = -1.0;
    ts = hit_sphere(o, d, a, r, ns);
    if (ts > 0.0) { best = ts; n = ns; }
    ts = hit_sphere(o, d, b, r, ns);
    if (ts > 0.0 && (best < 0.0 || ts < best)) { best = ts; n = ns; }
    return best;
}

void main() {
    vec3 o = u_camera;
    vec3 d = normalize(v_world - u_camera);
    vec3 n;
    float t;
    if (u_shape == 0) t = hit_sphere(o, d, u_center, u_radius, n);
    else if (u_shape == 1) t = hit_box(o, d, u_center, u_half, n);
    else t = hit_capsule(o, d, u_a, u_b, u_radius, n);
    if (t <= 0.0) discard;
    vec3 p = o + t * d;
    o_color = vec4(shade_solid(n, d, u_color), 1.0);
    gl_FragDepth = window_depth((u_view * vec4(p, 1.0)).z);
}
