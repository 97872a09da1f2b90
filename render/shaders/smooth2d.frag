// The last smoothing pass: a small 2D plane-aware bilateral filter (5x5). One-dimensional
// passes filter every row (or column) on its own, and on surfaces seen at a grazing angle the
// last pass leaves rows that differ by fractions of a millimetre - enough to show as streaks in
// the normals. This pass fits the local plane from the (already smooth) depth and averages the
// samples carried onto it in both directions at once.
uniform sampler2D u_depth;
uniform float u_sigma_depth;    // range sigma, m
out float o_depth;

float fetch(ivec2 q, ivec2 size) {
    if (q.x < 0 || q.y < 0 || q.x >= size.x || q.y >= size.y) return 0.0;
    return texelFetch(u_depth, q, 0).r;
}

// Depth slope along one axis: the one-sided difference with the smaller step (an edge on one
// side must not tilt the plane), 0 with no neighbour.
float slope(ivec2 p, ivec2 dir, float d, ivec2 size) {
    float a = fetch(p + dir, size), b = fetch(p - dir, size);
    float ga = a > 0.0 ? a - d : 1e30, gb = b > 0.0 ? d - b : 1e30;
    if (a > 0.0 && b > 0.0 && abs(ga - gb) < u_sigma_depth) return 0.5 * (ga + gb);
    float g = abs(ga) < abs(gb) ? ga : gb;
    return abs(g) < 1e29 ? g : 0.0;
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 size = textureSize(u_depth, 0);
    float d = texelFetch(u_depth, p, 0).r;
    if (d <= 0.0) { o_depth = 0.0; return; }
    vec2 g = vec2(slope(p, ivec2(1, 0), d, size), slope(p, ivec2(0, 1), d, size));
    float inv_r = 1.0 / (2.0 * u_sigma_depth * u_sigma_depth);
    float sum = 0.0, wsum = 0.0;
    for (int j = -2; j <= 2; ++j) {
        for (int i = -2; i <= 2; ++i) {
            float di = fetch(p + ivec2(i, j), size);
            if (di <= 0.0) continue;
            float moved = di - dot(g, vec2(i, j));
            float dz = moved - d;
            float w = exp(-float(i * i + j * j) / 4.5 - dz * dz * inv_r);
            sum += moved * w;
            wsum += w;
        }
    }
    o_depth = sum / wsum;
}
