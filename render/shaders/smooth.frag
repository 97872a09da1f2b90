// One direction of the separable bilateral filter of the eye-depth texture (seed 003 eq.
// 3.14-3.16; van der Laan et al. 2009), made plane-aware: the range term compares each sample
// with the depth the local slope predicts at its place, and the filter averages the samples
// moved back along that slope. A plain bilateral filter treats a surface seen at a grazing
// angle (depth changing fast across pixels) as a stack of edges and leaves its particle bumps
// in place; this one smooths tilted surfaces as well as ones facing the camera, and still keeps
// real depth steps (fluid in front of fluid) sharp. The spatial Gaussian's width follows the
// projected particle size. Pixels without fluid neither receive nor give depth, so the
// silhouette stays where it is.
uniform sampler2D u_depth;
uniform ivec2 u_dir;            // (1,0), (0,1), (1,1) or (1,-1)
uniform float u_pixels_per_m;   // projected size of 1 m at eye depth 1, pixels
uniform float u_sigma_scale;    // spatial sigma in particle radii
uniform float u_radius_m;       // particle radius, m
uniform float u_sigma_depth;    // range sigma, m
uniform int u_max_radius;       // pixels
out float o_depth;

float fetch(ivec2 q, ivec2 size) {
    if (q.x < 0 || q.y < 0 || q.x >= size.x || q.y >= size.y) return 0.0;
    return texelFetch(u_depth, q, 0).r;
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 size = textureSize(u_depth, 0);
    float d = texelFetch(u_depth, p, 0).r;
    if (d <= 0.0) { o_depth = 0.0; return; }
    // Spatial sigma in steps along u_dir (a diagonal step is sqrt(2) pixels long).
    float step_len = length(vec2(u_dir));
    float sigma = max(u_sigma_scale * u_radius_m * u_pixels_per_m / d / step_len, 0.5);
    int radius = min(int(ceil(2.0 * sigma)), int(float(u_max_radius) / step_len));

    // Local slope (depth per pixel) from the two one-sided differences over half the filter;
    // where they disagree (an edge on one side) the gentler one is taken.
    int k = max(radius / 2, 1);
    float dp = fetch(p + u_dir * k, size), dm = fetch(p - u_dir * k, size);
    float gp = (dp - d) / float(k), gm = (d - dm) / float(k);
    float slope = 0.0;
    if (dp > 0.0 && dm > 0.0) {
        slope = abs(gp - gm) * float(k) < 2.0 * u_sigma_depth ? 0.5 * (gp + gm)
                                                              : (abs(gp) < abs(gm) ? gp : gm);
    } else if (dp > 0.0) {
        slope = gp;
    } else if (dm > 0.0) {
        slope = gm;
    }

    float inv_s = 1.0 / (2.0 * sigma * sigma);
    float inv_r = 1.0 / (2.0 * u_sigma_depth * u_sigma_depth);
    float sum = 0.0, wsum = 0.0;
    for (int i = -radius; i <= radius; ++i) {
        float di = fetch(p + u_dir * i, size);
        if (di <= 0.0) continue;
        float moved = di - slope * float(i);  // the sample carried back to this pixel
        float dz = moved - d;
        float w = exp(-float(i * i) * inv_s - dz * dz * inv_r);
        sum += moved * w;
        wsum += w;
    }
    o_depth = sum / wsum;
}
