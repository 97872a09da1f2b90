/* The per-particle math of Position Based Fluids (Macklin & Müller 2013): the ONE copy, called by
 * the CPU loops (src/backend/cpu/cpu_stages.c) and the CUDA kernels (src/backend/cuda/) alike.
 * Only the loops differ.
 *
 * Every function is PBF_HD static inline and pure: it reads its arguments and returns a value.
 * A neighbour pass adds each neighbour j of particle i with a *_lane() function into one of four
 * partial sums ("Lane sums" below: the order of summation is part of the math), turns them into
 * an accumulator with *_lanes_end(), and finishes with the boundary terms in *_end(). Pairs
 * beyond h contribute exactly zero.
 *
 * Notation: h kernel support, ρ0 rest density, m particle mass, V = m/ρ0 rest volume.
 * Kernel constants are precomputed once in pbf_params (no pow, no division by h^9 per pair). */
#ifndef PBF_KERNELS_H
#define PBF_KERNELS_H

#include <math.h>

#include "params.h" /* pbf_v3 and its helpers, pbf_solid, pbf_params */
#include "pbf/diffuse.h" /* pbf_diffuse_def, pbf_diffuse_kind */

/* ---------------------------------------------------------------------------------------------
 * SPH kernels: the density kernel pair, the paper's (poly6 for the density, the spiky gradient for
 * ∇C; Müller et al. 2003) or Wendland C2 with its own gradient. */

/* One pair's kernel values, as pure functions of r² = |p_i − p_j|². They are written with plain
 * selects (a > b ? a : b), no early exit and no intrinsics, so that the CPU's list passes
 * (src/backend/cpu/cpu_passes.h) can run them in `#pragma omp simd` loops, where each select
 * becomes a
 * vector blend and four pairs go through one instruction; the scalar accumulators below and
 * the CUDA kernels call the same functions. A pair at or beyond h gets exactly zero. */
PBF_KERNEL_INLINE float pbf_pos(float a) { return a > 0.0f ? a : 0.0f; }

/* The paper's pair (Macklin & Müller 2013), world def kernel PBF_KERNEL_PAPER: poly6 gives the
 * density and the spiky gradient its correction. */

/* poly6 W from r², zero beyond h. */
PBF_KERNEL_INLINE float pbf_poly6_w(float r2, const pbf_params *p) {
    float q = pbf_pos(p->h2 - r2);
    return p->poly6_k * q * q * q;
}

/* The spiky gradient as a factor g of the pair vector, ∇_i W = g (p_i − p_j), from r²;
 * *magnitude gets the signed |∇W| = K_s (h − r)². Zero at and beyond h; coincident particles
 * have no direction and get none. */
PBF_KERNEL_INLINE float pbf_spiky_only_factor(float r2, const pbf_params *p, float *magnitude) {
    float r = sqrtf(r2);
    float t = pbf_pos(p->h - r);
    float r_min = 1e-9f * p->h;
    float gm = p->spiky_k * t * t; /* computed before the select: a load under a condition
                                      would keep the compiler from vectorizing the select */
    gm = r > r_min ? gm : 0.0f;
    *magnitude = gm;
    return gm / (r > r_min ? r : r_min);
}

/* The consistent pair, PBF_KERNEL_WENDLAND (docs/physics.md, "The Wendland C2 pair"): Wendland
 * C2 gives the density and its exact gradient ∇C, so each correction moves along the
 * constraint's own gradient. With q = r/h,
 *   W = K (1 − q)⁴ (1 + 4q),  K = 21/(2π h³)             (stored in poly6_k)
 *   ∇_i W = K_s (1 − q)³ (p_i − p_j),  K_s = −210/(π h⁵)  (stored in spiky_k) */
PBF_KERNEL_INLINE float pbf_wendland_w(float r2, const pbf_params *p) {
    float q = sqrtf(r2) / p->h;
    float a = pbf_pos(1.0f - q);
    return p->poly6_k * a * a * a * a * (1.0f + 4.0f * q);
}

/* How much the Wendland core's gradient rises from r0 to r = 0: |∇W| there is 1 + this times
 * |∇W(r0)| (pbf_wendland_factor). 3 keeps the standing wave and the tank at rest as they are and
 * parts the dam break's pairs (docs/notes/physics_log.md, "A core that rises"). */
#define PBF_KERNEL_CORE_GAIN 3.0f

/* Its gradient factor g, ∇_i W = g (p_i − p_j), and *magnitude = g r (the signed |∇W|). Smooth
 * at r = 0, where the pair vector is zero and so is the gradient.
 * With the core on (p->core_r > 0, pbf_world_def.kernel_core), pairs closer than r0 = core_r get
 *   |∇W| = |∇W(r0)| (1 + PBF_KERNEL_CORE_GAIN (1 − r/r0))
 * instead: continuous at r0 and rising as the pair closes, as the paper pair's spiky gradient
 * does, where Wendland's falls to zero and so hardly parts a pair pushed together. Inside r0
 * the correction is then not the exact gradient of the density; the density is Wendland's. At
 * r = 0 the pair vector is zero and the pair's correction with it. */
PBF_KERNEL_INLINE float pbf_wendland_factor(float r2, const pbf_params *p, float *magnitude) {
    float r = sqrtf(r2);
    float a = pbf_pos(1.0f - r / p->h);
    float g = p->spiky_k * a * a * a;
    float r_safe = r > 1e-6f * p->h ? r : 1e-6f * p->h;
    float core = p->core_grad * (1.0f + PBF_KERNEL_CORE_GAIN * (1.0f - r * p->core_inv_r)) / r_safe;
    g = r < p->core_r ? core : g;
    *magnitude = g * r;
    return g;
}

/* The world's pair, `kernel` being p->kernel. Every pass calls these: W for the density and g
 * for ∇W = g (p_i − p_j). The CPU's vectorized loops pass `kernel` as a constant (src/
 * cpu_passes.h), so that each loop holds one pair's math and no select between the two. */
PBF_KERNEL_INLINE float pbf_pair_w_k(float r2, const pbf_params *p, int kernel) {
    return kernel ? pbf_wendland_w(r2, p) : pbf_poly6_w(r2, p);
}

PBF_KERNEL_INLINE float pbf_pair_factor_k(float r2, const pbf_params *p, int kernel,
                                          float *magnitude) {
    return kernel ? pbf_wendland_factor(r2, p, magnitude) : pbf_spiky_only_factor(r2, p, magnitude);
}

/* The same with the world's pair read from p (the names are the paper pair's, the default). */
PBF_KERNEL_INLINE float pbf_pair_w(float r2, const pbf_params *p) {
    return pbf_pair_w_k(r2, p, p->kernel);
}

PBF_KERNEL_INLINE float pbf_spiky_factor(float r2, const pbf_params *p, float *magnitude) {
    return pbf_pair_factor_k(r2, p, p->kernel, magnitude);
}

/* W from r² (pbf_pair_w, for the scalar callers). */
PBF_KERNEL_INLINE float pbf_poly6(float r2, const pbf_params *p) { return pbf_pair_w(r2, p); }

/* ∇_i W for d = p_i − p_j, r = |d|. Zero at r = 0 and beyond h. */
PBF_KERNEL_INLINE pbf_v3 pbf_spiky_grad(pbf_v3 d, float r, const pbf_params *p) {
    float gm;
    return v3_scale(d, pbf_spiky_factor(r * r, p, &gm));
}

/* x^n for n in [1, 15] by squaring, unrolled over four bits so that it has no loop (n = 4, the
 * default s_corr exponent, takes the same two products as a loop would; the unused squarings
 * change nothing). */
PBF_KERNEL_INLINE float pbf_ipow(float x, int n) {
    float r = 1.0f;
    r = (n & 1) ? r * x : r;
    x *= x;
    r = (n & 2) ? r * x : r;
    x *= x;
    r = (n & 4) ? r * x : r;
    x *= x;
    r = (n & 8) ? r * x : r;
    return r;
}

/* s_corr's weight for a particle of density rho: 0 at or above rest density, rising linearly to
 * 1 at (1 − δ) ρ0 (δ = solver.scorr.deficit) and 1 below. s_corr exists to keep particles from
 * pairing up where a neighbourhood is deficient (the free surface, splashes); in fluid at rest
 * density it would act as a pairwise repulsion that the density solve has to balance, and once
 * the solve converges that balance holds shear stress like a packing with friction (two joined
 * vessels stop short of level). With δ = 0 the weight is 1 everywhere (the paper's s_corr). */
PBF_KERNEL_INLINE float pbf_scorr_weight(float rho, const pbf_params *p) {
    float w = (1.0f - rho * p->inv_rest_density) * p->scorr_inv_deficit;
    w = w < 1.0f ? w : 1.0f;
    w = w > 0.0f ? w : 0.0f;
    return p->scorr_inv_deficit > 0.0f ? w : 1.0f;
}

/* The Δp coefficient of a pair (Algorithm 1 line 13): λ_i + λ_j + s_corr, with
 * s_corr = −k w_ij y^n in the units of λ, where
 *   y = max(0, (W(r) − W(s)) / (W(Δq) − W(s))),  s = 2r the rest spacing,
 * the poly6 shape W(r)/W(Δq) = ((h² − r²)/(h² − Δq²))³, and w_ij = (w_i + w_j)/2 the pair's mean
 * pbf_scorr_weight (symmetric, so the pair's corrections stay equal and opposite). y is 1 at Δq,
 * as the paper's W(r)/W(Δq) is, but 0 from the rest spacing on: s_corr is a repulsion between
 * particles closer than the rest lattice puts them, and a surface on the lattice feels none. The
 * paper's shape pushes every pair apart, the lattice's too; where no density constraint holds
 * the surface in (below rest density the unilateral constraint is off) it pushed every free
 * surface apart: a block without gravity grew 2.6x in half a second (docs/physics.md, "s_corr").
 * Below y = 1e-3 the term (< 1e-12 k) is set to zero: its powers would be denormal numbers, which
 * cost a hundred cycles each on x86. n is p->scorr_n; a loop may pass it as a constant so that
 * pbf_ipow folds to its products (src/backend/cpu/cpu_passes.h). */
PBF_KERNEL_INLINE float pbf_delta_coef(float r2, float lambda_i, float lambda_j, float weight_ij,
                                       int n, const pbf_params *p) {
    float x = pbf_pos(p->h2 - r2) * p->scorr_inv_q;
    float y = x * x * x * p->scorr_gain - p->scorr_shift;
    y = y > 1e-3f ? y : 0.0f;
    return lambda_i + lambda_j - p->scorr_scale * weight_ij * pbf_ipow(y, n);
}

/* ---------------------------------------------------------------------------------------------
 * Boundary density (DESIGN.md §9). A solid acts like rest fluid behind its surface: layers of
 * ghost particles parallel to the surface, spacing s = 2r, the first layer r behind the surface
 * (exactly where the next lattice layer of resting fluid would be). Each layer is summed in
 * closed form as a continuous plane of areal density 1/s², so the cost is a few flops per
 * nearby solid and particles at rest against a wall see the density of the rest lattice.
 *   plane at distance z:  Σ W   = (1/s²) π K (h² − z²)⁴ / 4                   (K = poly6_k)
 *                         Σ ∇W  = (1/s²) (2π/3) K_s z (h − z)³ n               (K_s = spiky_k)
 * Where two domain walls meet, their ghost half-spaces overlap; the overlap (ghost lines along
 * the edge, linear density 1/s) is subtracted, and the corners' ghost points added back
 * (inclusion–exclusion), so a particle in a corner is not counted as compressed:
 *   line at distance ρ:   Σ W   = (1/s) K (32/35) T⁷,          T² = h² − ρ²
 *                         Σ ∇W  = (1/s) K_s F(ρ) ρ⃗,  F(ρ) = (2h² + ρ²) ln((h + T)/ρ) − 3 h T
 * n and ρ⃗ point from the ghosts to the particle. Curved colliders use their tangent plane. */

/* Accumulates one plane of ghosts at distance z along unit normal n. */
PBF_KERNEL_INLINE void pbf_ghost_plane_paper(float z, pbf_v3 n, const pbf_params *p, float *w_sum,
                                             pbf_v3 *grad) {
    float inv_s2 = 1.0f / (4.0f * p->radius * p->radius);
    float a = p->h2 - z * z, hz = p->h - z;
    *w_sum += inv_s2 * 0.78539816f * p->poly6_k * a * a * a * a;
    *grad = v3_madd(*grad, n, inv_s2 * 2.0943951f * p->spiky_k * z * hz * hz * hz);
}

/* Accumulates one line of ghosts at perpendicular offset rho_vec (|rho_vec| < h). */
PBF_KERNEL_INLINE void pbf_ghost_line_paper(pbf_v3 rho_vec, float sign, const pbf_params *p,
                                            float *w_sum, pbf_v3 *grad) {
    float inv_s = 1.0f / (2.0f * p->radius);
    float r2 = v3_dot(rho_vec, rho_vec), rho = sqrtf(r2);
    float t = sqrtf(p->h2 - r2), t2 = t * t;
    *w_sum += sign * inv_s * p->poly6_k * (32.0f / 35.0f) * t2 * t2 * t2 * t;
    float f = (2.0f * p->h2 + r2) * logf((p->h + t) / rho) - 3.0f * p->h * t;
    *grad = v3_madd(*grad, rho_vec, sign * inv_s * p->spiky_k * f);
}

/* The walls' sums for Wendland C2 (K and K_s as above, a = 1 − z/h):
 *   plane at distance z:  Σ W  = (2π/s²) K h² a⁵ (1 − 3a/2 + 4a²/7)
 *                         Σ ∇W = −(2π/s²) z W(z) n       (∫ (dW/dR) dR from z to h = −W(z))
 *   line at distance ρ:   Σ W and Σ ∇W by 8-point Gauss–Legendre along the line, T = √(h² − ρ²)
 * (W is a polynomial in R = √(ρ² + x²) with odd powers, whose integral over x has no short
 * closed form; the quadrature agrees with a fine lattice sum within 10⁻⁵, tests/test_wendland.c).
 */
PBF_KERNEL_COLD void pbf_ghost_plane_wendland(float z, pbf_v3 n, const pbf_params *p, float *w_sum,
                                              pbf_v3 *grad) {
    float inv_s2 = 1.0f / (4.0f * p->radius * p->radius);
    float a = pbf_pos(1.0f - z / p->h);
    float a5 = a * a * a * a * a;
    *w_sum +=
        inv_s2 * 6.2831853f * p->poly6_k * p->h2 * a5 * (1.0f - 1.5f * a + (4.0f / 7.0f) * a * a);
    *grad = v3_madd(*grad, n, -inv_s2 * 6.2831853f * z * pbf_wendland_w(z * z, p));
}

PBF_KERNEL_COLD void pbf_ghost_line_wendland(pbf_v3 rho_vec, float sign, const pbf_params *p,
                                             float *w_sum, pbf_v3 *grad) {
    /* nodes and weights of Gauss–Legendre on [0, 1] */
    const float gx[8] = {0.0198550718f, 0.1016667613f, 0.2372337950f, 0.4082826788f,
                         0.5917173212f, 0.7627662050f, 0.8983332387f, 0.9801449282f};
    const float gw[8] = {0.0506142681f, 0.1111905172f, 0.1568533229f, 0.1813418917f,
                         0.1813418917f, 0.1568533229f, 0.1111905172f, 0.0506142681f};
    float inv_s = 1.0f / (2.0f * p->radius);
    float r2 = v3_dot(rho_vec, rho_vec);
    float t = sqrtf(pbf_pos(p->h2 - r2));
    float ws = 0.0f, gs = 0.0f;
    for (int k = 0; k < 8; ++k) {
        float x = gx[k] * t, gm;
        ws += gw[k] * pbf_wendland_w(r2 + x * x, p);
        gs += gw[k] * pbf_wendland_factor(r2 + x * x, p, &gm);
    }
    /* the line runs from −T to T: twice the half line's integral */
    *w_sum += sign * inv_s * 2.0f * t * ws;
    *grad = v3_madd(*grad, rho_vec, sign * inv_s * 2.0f * t * gs);
}

/* The world's pair's sums. */
PBF_KERNEL_INLINE void pbf_ghost_plane(float z, pbf_v3 n, const pbf_params *p, float *w_sum,
                                       pbf_v3 *grad) {
    if (p->kernel)
        pbf_ghost_plane_wendland(z, n, p, w_sum, grad);
    else
        pbf_ghost_plane_paper(z, n, p, w_sum, grad);
}

PBF_KERNEL_INLINE void pbf_ghost_line(pbf_v3 rho_vec, float sign, const pbf_params *p, float *w_sum,
                                      pbf_v3 *grad) {
    if (p->kernel)
        pbf_ghost_line_wendland(rho_vec, sign, p, w_sum, grad);
    else
        pbf_ghost_line_paper(rho_vec, sign, p, w_sum, grad);
}

/* Ghost layers of one surface at particle distance d (>= 0): z = d + r, d + 3r, ... < h. */
PBF_KERNEL_INLINE void pbf_ghost_surface(float d, pbf_v3 n, const pbf_params *p, float *w_sum,
                                         pbf_v3 *grad) {
    for (float z = d + p->radius; z < p->h; z += 2.0f * p->radius)
        pbf_ghost_plane(z, n, p, w_sum, grad);
}

/* ---------------------------------------------------------------------------------------------
 * Mesh solids (src/modules/geometry/, docs/physics.md "Mesh solids"). A triangle mesh becomes a
 * field on
 * a regular grid in the solid's own frame, baked once (src/modules/geometry/bake.c): per node the
 * signed
 * distance φ (positive in the fluid) and what the tangent plane misses of the boundary's density
 * and ∇C. The boundary is the walls' ghost layers, generalised to any shape: sheets of ghosts
 * parallel to the surface at depths r, 3r, 5r, ... (the level sets φ = −r, −3r, ...), areal
 * density 1/(2r)². Their kernel integral at each node is a density map (Koschier & Bender 2017,
 * with the walls' layered mass instead of a uniform one, so that a flat mesh wall and a domain
 * wall agree): it is right in concave corners, beside edges and on curved parts, where one
 * tangent plane is not. A lookup adds the plane's closed form at the interpolated distance (the
 * walls' pbf_ghost_surface) and the baked residual, map − plane, interpolated trilinearly: ~0 on
 * flat parts, the corners' and curves' share elsewhere. One lookup reads 8 nodes of 5 floats;
 * the field is one flat float array (the layout of a GPU texture). */

#define PBF_FIELD_STRIDE 5 /* floats per node: φ, Δw, Δg (x, y, z) */

typedef struct pbf_field {
    pbf_v3 origin; /* local coordinates of node (0, 0, 0), m */
    float cell; /* node spacing, m */
    float inv_cell;
    int nx, ny, nz; /* nodes per axis, each at least 2 */
    float outside; /* sign of φ beyond the grid: +1 an obstacle (fluid), −1 a container */
    /* The nodes held: a block of the grid, block_n[0]·block_n[1]·block_n[2] records of
     * PBF_FIELD_STRIDE floats, x fastest, from node block_lo of the grid. The whole grid
     * (block_lo 0, block_n = nx, ny, nz) unless a process split over MPI keeps only the part
     * its particles can reach (field_crop.c, docs/mpi.md): a point whose cell lies in the block
     * reads the same bits as from the whole grid, since the cell and its weights are still
     * found from the grid's own origin and counts. */
    const float *node;
    int block_lo[3]; /* first node held per axis */
    int block_n[3]; /* nodes held per axis, each at least 2 */
} pbf_field;

typedef struct pbf_field_sample {
    float phi; /* signed distance to the surface, m, positive in the fluid */
    pbf_v3 grad; /* ∇φ in the local frame, not normalised */
    float dw; /* density residual (×m: kg/m³), 1/m³ */
    pbf_v3 dg; /* ∇C residual (×V), 1/m⁴, local frame */
} pbf_field_sample;

/* The cell of local x and the weights in it; beyond the grid box the nearest point of the box,
 * with the distance to it in *beyond (0 inside). */
typedef struct pbf_field_cell {
    const float *c000; /* the cell's first node */
    float t[3]; /* position in the cell, 0..1 per axis */
    pbf_v3 excess; /* x minus the nearest point of the box */
    float beyond; /* |excess| */
} pbf_field_cell;

PBF_KERNEL_INLINE pbf_field_cell pbf_field_locate(const pbf_field *f, pbf_v3 x) {
    const float rel[3] = {x.x - f->origin.x, x.y - f->origin.y, x.z - f->origin.z};
    const int n[3] = {f->nx, f->ny, f->nz};
    float excess[3];
    int i[3];
    pbf_field_cell c;
    for (int k = 0; k < 3; ++k) {
        float g = rel[k] * f->inv_cell;
        float cl = pbf_minf(pbf_maxf(g, 0.0f), (float)(n[k] - 1)); /* NaN becomes 0 */
        excess[k] = (g - cl) * f->cell;
        int ik = (int)cl;
        ik = ik < n[k] - 2 ? ik : n[k] - 2;
        /* a cropped field: the cell kept in the block (no-op for the whole grid; a point whose
         * cell lies outside the block is one its process never samples: field_crop.c) */
        const int lo = f->block_lo[k], top = lo + f->block_n[k] - 2;
        ik = ik < lo ? lo : ik > top ? top : ik;
        i[k] = ik - lo;
        c.t[k] = cl - (float)ik;
    }
    const int *m = f->block_n;
    c.c000 = f->node +
             ((size_t)i[2] * (size_t)m[1] + (size_t)i[1]) * (size_t)m[0] * PBF_FIELD_STRIDE +
             (size_t)i[0] * PBF_FIELD_STRIDE;
    c.excess = v3(excess[0], excess[1], excess[2]);
    float out2 = v3_dot(c.excess, c.excess);
    c.beyond = out2 > 0.0f ? sqrtf(out2) : 0.0f;
    return c;
}

/* Component q of the records, interpolated in the cell. */
PBF_KERNEL_INLINE float pbf_field_interp(const pbf_field *f, const pbf_field_cell *c, int q) {
    const size_t sx = PBF_FIELD_STRIDE, sy = sx * (size_t)f->block_n[0],
                 sz = sy * (size_t)f->block_n[1];
    const float *p = c->c000 + q;
    const float tx = c->t[0], ty = c->t[1], tz = c->t[2], ux = 1.0f - tx, uy = 1.0f - ty,
                uz = 1.0f - tz;
    float a0 = p[0] * ux + p[sx] * tx, a1 = p[sy] * ux + p[sy + sx] * tx;
    float b0 = p[sz] * ux + p[sz + sx] * tx, b1 = p[sz + sy] * ux + p[sz + sy + sx] * tx;
    return (a0 * uy + a1 * ty) * uz + (b0 * uy + b1 * ty) * tz;
}

/* φ at local x: trilinear inside the grid box, continued by outside × the distance beyond it
 * (far from an obstacle is fluid; far outside a container's inside is deep in its solid). */
PBF_KERNEL_INLINE float pbf_field_phi(const pbf_field *f, const pbf_field_cell *c) {
    return pbf_field_interp(f, c, 0) + f->outside * c->beyond;
}

/* The rest of a sample at a located point: ∇φ (the interpolant's own gradient) and the
 * residuals (none beyond the box). */
PBF_KERNEL_INLINE pbf_field_sample pbf_field_complete(const pbf_field *f, const pbf_field_cell *c,
                                                      float phi) {
    const size_t sx = PBF_FIELD_STRIDE, sy = sx * (size_t)f->block_n[0],
                 sz = sy * (size_t)f->block_n[1];
    const float *p = c->c000;
    const float tx = c->t[0], ty = c->t[1], tz = c->t[2], ux = 1.0f - tx, uy = 1.0f - ty,
                uz = 1.0f - tz;
    pbf_field_sample s;
    s.phi = phi;
    if (c->beyond > 0.0f) {
        s.grad = v3_scale(c->excess, f->outside / c->beyond);
        s.dw = 0.0f;
        s.dg = v3(0.0f, 0.0f, 0.0f);
        return s;
    }
    const float *q000 = p, *q100 = p + sx, *q010 = p + sy, *q110 = p + sy + sx, *q001 = p + sz,
                *q101 = p + sz + sx, *q011 = p + sz + sy, *q111 = p + sz + sy + sx;
    s.grad = v3_scale(v3(((q100[0] - q000[0]) * uy + (q110[0] - q010[0]) * ty) * uz +
                             ((q101[0] - q001[0]) * uy + (q111[0] - q011[0]) * ty) * tz,
                         ((q010[0] - q000[0]) * ux + (q110[0] - q100[0]) * tx) * uz +
                             ((q011[0] - q001[0]) * ux + (q111[0] - q101[0]) * tx) * tz,
                         ((q001[0] - q000[0]) * ux + (q101[0] - q100[0]) * tx) * uy +
                             ((q011[0] - q010[0]) * ux + (q111[0] - q110[0]) * tx) * ty),
                      f->inv_cell);
    /* the eight corners' weights, once for the four residuals */
    const float w000 = ux * uy * uz, w100 = tx * uy * uz, w010 = ux * ty * uz, w110 = tx * ty * uz,
                w001 = ux * uy * tz, w101 = tx * uy * tz, w011 = ux * ty * tz, w111 = tx * ty * tz;
    float v[4];
    for (int q = 1; q < PBF_FIELD_STRIDE; ++q)
        v[q - 1] = ((w000 * q000[q] + w100 * q100[q]) + (w010 * q010[q] + w110 * q110[q])) +
                   ((w001 * q001[q] + w101 * q101[q]) + (w011 * q011[q] + w111 * q111[q]));
    s.dw = v[0];
    s.dg = v3(v[1], v[2], v[3]);
    return s;
}

/* The whole sample at local x. */
PBF_KERNEL_INLINE pbf_field_sample pbf_field_lookup(const pbf_field *f, pbf_v3 x) {
    pbf_field_cell c = pbf_field_locate(f, x);
    return pbf_field_complete(f, &c, pbf_field_phi(f, &c));
}

/* Whether local x lies beyond an obstacle's grid box, where nothing of it is in reach: the box
 * holds every point within h + 2 cells of the surface (bake.c). */
PBF_KERNEL_INLINE int pbf_field_far(const pbf_field *f, pbf_v3 x) {
    if (f->outside < 0.0f) return 0;
    float gx = (x.x - f->origin.x) * f->inv_cell, gy = (x.y - f->origin.y) * f->inv_cell,
          gz = (x.z - f->origin.z) * f->inv_cell;
    return !(gx >= 0.0f && gy >= 0.0f && gz >= 0.0f && gx <= (float)(f->nx - 1) &&
             gy <= (float)(f->ny - 1) && gz <= (float)(f->nz - 1));
}

/* A mesh solid's local frame: R^T (x − a), and a local direction in the world: R v. */
PBF_KERNEL_INLINE pbf_v3 pbf_mesh_local(const pbf_solid *s, pbf_v3 x) {
    const float *R = s->rot;
    pbf_v3 d = v3_sub(x, s->a);
    return v3(R[0] * d.x + R[3] * d.y + R[6] * d.z, R[1] * d.x + R[4] * d.y + R[7] * d.z,
              R[2] * d.x + R[5] * d.y + R[8] * d.z);
}

PBF_KERNEL_INLINE pbf_v3 pbf_mesh_world_dir(const pbf_solid *s, pbf_v3 v) {
    const float *R = s->rot;
    return v3(R[0] * v.x + R[1] * v.y + R[2] * v.z, R[3] * v.x + R[4] * v.y + R[5] * v.z,
              R[6] * v.x + R[7] * v.y + R[8] * v.z);
}

/* pbf_ghost_surface for any signed distance d: a particle inside the solid (d < 0) has ghost
 * layers on both sides, each taken with its own side's normal. For d >= 0 it is exactly the
 * walls' function. */
PBF_KERNEL_INLINE void pbf_ghost_surface_signed(float d, pbf_v3 n, const pbf_params *p,
                                                float *w_sum, pbf_v3 *grad) {
    if (d >= 0.0f) {
        pbf_ghost_surface(d, n, p, w_sum, grad);
        return;
    }
    const float s = 2.0f * p->radius;
    float z = d + p->radius;
    if (z < -p->h) z += s * ceilf((-p->h - z) / s);
    for (; z < p->h; z += s) {
        if (z >= 0.0f)
            pbf_ghost_plane(z, n, p, w_sum, grad);
        else if (z > -p->h)
            pbf_ghost_plane(-z, v3_scale(n, -1.0f), p, w_sum, grad);
    }
}

/* The unit normal of a sample, from ∇φ (up when the gradient vanishes). */
PBF_KERNEL_INLINE pbf_v3 pbf_field_normal(const pbf_field_sample *s) {
    float len = v3_len(s->grad);
    return len > 1e-12f ? v3_scale(s->grad, 1.0f / len) : v3(0.0f, 1.0f, 0.0f);
}

/* Adds a mesh solid's ghost density (into w_sum, ×m) and ∇C (into grad, ×V) at x. Nothing of it
 * is in reach where φ >= h: no layer, no wedge (φ alone is read there). */
PBF_KERNEL_INLINE void pbf_mesh_boundary(pbf_v3 x, const pbf_solid *s, const pbf_params *p,
                                         float *w_sum, pbf_v3 *grad) {
    pbf_v3 xl = pbf_mesh_local(s, x);
    if (pbf_field_far(s->field, xl)) return;
    pbf_field_cell c = pbf_field_locate(s->field, xl);
    float phi = pbf_field_phi(s->field, &c);
    if (!(phi < p->h)) return;
    pbf_field_sample fs = pbf_field_complete(s->field, &c, phi);
    float w = 0.0f;
    pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
    pbf_ghost_surface_signed(fs.phi, pbf_field_normal(&fs), p, &w, &g);
    *w_sum += w + fs.dw;
    *grad = v3_add(*grad, pbf_mesh_world_dir(s, v3_add(g, fs.dg)));
}

/* Signed distance of x from a mesh solid's surface and the world normal (pbf_solid_sdf). */
PBF_KERNEL_INLINE float pbf_mesh_sdf(const pbf_solid *s, pbf_v3 x, pbf_v3 *n) {
    pbf_field_sample fs = pbf_field_lookup(s->field, pbf_mesh_local(s, x));
    *n = pbf_mesh_world_dir(s, pbf_field_normal(&fs));
    return fs.phi;
}

/* Projects x out of a mesh solid along ∇φ, to φ = r (pbf_collide). */
PBF_KERNEL_INLINE pbf_v3 pbf_mesh_collide(pbf_v3 x, const pbf_solid *s, const pbf_params *p) {
    pbf_v3 xl = pbf_mesh_local(s, x);
    if (pbf_field_far(s->field, xl)) return x;
    pbf_field_cell c = pbf_field_locate(s->field, xl);
    float phi = pbf_field_phi(s->field, &c);
    if (!(phi < p->radius)) return x;
    pbf_field_sample fs = pbf_field_complete(s->field, &c, phi);
    return v3_madd(x, pbf_mesh_world_dir(s, pbf_field_normal(&fs)), p->radius - phi);
}

/* Where a particle moving from a to b (local frame) must stop so that it never passes through a
 * thin part: it walks the segment in steps of r/2 and stops one step before the first point that
 * is deeper than r/2 into the contact band (φ < r/2) and deeper than the point before. A plate
 * thinner than 2r has its middle 2r + thickness away from where the band starts, so the walk
 * always stops on the side the particle came from; the collision then pushes it back out along
 * ∇φ of that side (bake.c makes the grid resolve thin parts). Returns b when the way is free. */
PBF_KERNEL_INLINE pbf_v3 pbf_field_sweep(const pbf_field *f, pbf_v3 a, pbf_v3 b, float r) {
    if (pbf_field_far(f, a) && pbf_field_far(f, b)) return b;
    pbf_v3 d = v3_sub(b, a);
    float len = v3_len(d), step = 0.5f * r;
    if (!(len > 0.0f)) return b;
    /* φ changes at most about as fast as the distance: nothing in reach, nothing to do */
    pbf_field_cell cb = pbf_field_locate(f, b);
    if (pbf_field_phi(f, &cb) - 1.5f * len >= step) return b;
    int steps = (int)ceilf(len / step);
    steps = steps < 64 ? steps : 64;
    pbf_field_cell ca = pbf_field_locate(f, a);
    float prev = pbf_field_phi(f, &ca);
    for (int k = 1; k <= steps; ++k) {
        pbf_field_cell ck = pbf_field_locate(f, v3_madd(a, d, (float)k / (float)steps));
        float phi = pbf_field_phi(f, &ck);
        if (phi < step && phi < prev) return v3_madd(a, d, (float)(k - 1) / (float)steps);
        prev = phi;
    }
    return b;
}

/* A fluid particle's predicted move from x (the substep's start) to p (its end) against `count`
 * mesh solids in turn, each walked in its own frame: x in its pose at the substep's start
 * (start[k]), p in its pose at the end (end[k]), the relative motion, so that neither a fast
 * particle nor a fast mesh passes through a thin part (pbf_field_sweep). Returns the new p. The
 * CPU's (src/modules/geometry/meshes.c) and the device's (src/backend/cuda/meshes.cu) sweep. */
PBF_KERNEL_INLINE pbf_v3 pbf_mesh_sweep_path(pbf_v3 x, pbf_v3 p, const pbf_solid *start,
                                             const pbf_solid *end, int count, float r) {
    for (int k = 0; k < count; ++k) {
        pbf_v3 a = pbf_mesh_local(&start[k], x), b = pbf_mesh_local(&end[k], p);
        pbf_v3 stop = pbf_field_sweep(end[k].field, a, b, r);
        if (stop.x != b.x || stop.y != b.y || stop.z != b.z)
            p = v3_add(end[k].a, pbf_mesh_world_dir(&end[k], stop));
    }
    return p;
}

/* Signed distance from x to a solid's surface (positive outside the solid) and the outward unit
 * normal (pointing into the fluid). */
PBF_KERNEL_INLINE float pbf_solid_sdf(const pbf_solid *s, pbf_v3 x, pbf_v3 *n) {
    if (s->type == PBF_SOLID_MESH) return pbf_mesh_sdf(s, x, n);
    if (s->type == PBF_SOLID_SPHERE) {
        pbf_v3 d = v3_sub(x, s->a);
        float len = v3_len(d);
        *n = len > 1e-12f ? v3_scale(d, 1.0f / len) : v3(0.0f, 1.0f, 0.0f);
        return len - s->radius;
    }
    if (s->type == PBF_SOLID_BOX) {
        pbf_v3 d = v3_sub(x, s->a);
        pbf_v3 q = v3(fabsf(d.x) - s->b.x, fabsf(d.y) - s->b.y, fabsf(d.z) - s->b.z);
        float sx = d.x < 0.0f ? -1.0f : 1.0f, sy = d.y < 0.0f ? -1.0f : 1.0f,
              sz = d.z < 0.0f ? -1.0f : 1.0f;
        if (q.x > 0.0f || q.y > 0.0f || q.z > 0.0f) { /* outside: distance to the nearest point */
            pbf_v3 o = v3(fmaxf(q.x, 0.0f) * sx, fmaxf(q.y, 0.0f) * sy, fmaxf(q.z, 0.0f) * sz);
            float len = v3_len(o);
            *n = v3_scale(o, 1.0f / len);
            return len;
        }
        /* inside: leave through the nearest face */
        if (q.x >= q.y && q.x >= q.z) {
            *n = v3(sx, 0.0f, 0.0f);
            return q.x;
        }
        if (q.y >= q.z) {
            *n = v3(0.0f, sy, 0.0f);
            return q.y;
        }
        *n = v3(0.0f, 0.0f, sz);
        return q.z;
    }
    /* capsule: distance to the segment ab minus the radius */
    pbf_v3 ab = v3_sub(s->b, s->a);
    float len2 = v3_dot(ab, ab);
    float t = len2 > 0.0f ? v3_dot(v3_sub(x, s->a), ab) / len2 : 0.0f;
    t = fminf(fmaxf(t, 0.0f), 1.0f);
    pbf_v3 d = v3_sub(x, v3_madd(s->a, ab, t));
    float len = v3_len(d);
    *n = len > 1e-12f ? v3_scale(d, 1.0f / len) : v3(0.0f, 1.0f, 0.0f);
    return len - s->radius;
}

/* Density and ∇C contribution of all solids near x. rho_out in kg/m³; grad_out is added to
 * ∇_i C_i (already divided by ρ0, i.e. scaled by V). */
PBF_KERNEL_INLINE void pbf_boundary_terms(pbf_v3 x, const pbf_params *p, const pbf_solid *solids,
                                          float *rho_out, pbf_v3 *grad_out) {
    float w_sum = 0.0f;
    pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
    /* The six domain walls. For axis k the near wall is the one the particle is closer to
     * (a domain is at least 4r wide, so only one side of an axis can matter when h = 4r; for
     * larger h both sides are visited). dist < h means that wall's ghosts are in reach. */
    float lo[3], hi[3], xs[3];
    lo[0] = p->wall_lo.x, lo[1] = p->wall_lo.y, lo[2] = p->wall_lo.z;
    hi[0] = p->wall_hi.x, hi[1] = p->wall_hi.y, hi[2] = p->wall_hi.z;
    xs[0] = x.x, xs[1] = x.y, xs[2] = x.z;
    float dist[6];
    for (int k = 0; k < 3; ++k) {
        dist[2 * k] = pbf_maxf(xs[k] - lo[k], 0.0f); /* min wall, normal +axis */
        dist[2 * k + 1] = pbf_maxf(hi[k] - xs[k], 0.0f); /* max wall, normal −axis */
    }
    const float r = p->radius, s = 2.0f * r;
    for (int wl = 0; wl < 6; ++wl) {
        if (dist[wl] + r >= p->h) continue;
        int k = wl >> 1;
        float sg = (wl & 1) ? -1.0f : 1.0f;
        pbf_v3 n = v3(k == 0 ? sg : 0.0f, k == 1 ? sg : 0.0f, k == 2 ? sg : 0.0f);
        pbf_ghost_surface(dist[wl], n, p, &w_sum, &g);
        /* edges with walls of a later axis: subtract the doubly counted ghost lines */
        for (int wm = (k + 1) * 2; wm < 6; ++wm) {
            if (dist[wm] + r >= p->h) continue;
            int k2 = wm >> 1;
            float sg2 = (wm & 1) ? -1.0f : 1.0f;
            pbf_v3 n2 = v3(k2 == 0 ? sg2 : 0.0f, k2 == 1 ? sg2 : 0.0f, k2 == 2 ? sg2 : 0.0f);
            for (float a = dist[wl] + r; a < p->h; a += s)
                for (float b = dist[wm] + r; a * a + b * b < p->h2; b += s)
                    pbf_ghost_line(v3_add(v3_scale(n, a), v3_scale(n2, b)), -1.0f, p, &w_sum, &g);
            /* corners with a wall of the third axis: add the triply counted ghost points back */
            for (int wn = (k2 + 1) * 2; wn < 6; ++wn) {
                if (dist[wn] + r >= p->h) continue;
                int k3 = wn >> 1;
                float sg3 = (wn & 1) ? -1.0f : 1.0f;
                pbf_v3 n3 = v3(k3 == 0 ? sg3 : 0.0f, k3 == 1 ? sg3 : 0.0f, k3 == 2 ? sg3 : 0.0f);
                for (float a = dist[wl] + r; a < p->h; a += s)
                    for (float b = dist[wm] + r; a * a + b * b < p->h2; b += s)
                        for (float c = dist[wn] + r; a * a + b * b + c * c < p->h2; c += s) {
                            pbf_v3 dv =
                                v3_add(v3_add(v3_scale(n, a), v3_scale(n2, b)), v3_scale(n3, c));
                            float r2 = v3_dot(dv, dv);
                            w_sum += pbf_poly6(r2, p);
                            g = v3_add(g, pbf_spiky_grad(dv, sqrtf(r2), p));
                        }
            }
        }
    }
    for (int i = 0; i < p->solid_count; ++i) {
        if (solids[i].type == PBF_SOLID_MESH) { /* its density map (see "Mesh solids") */
            pbf_mesh_boundary(x, &solids[i], p, &w_sum, &g);
            continue;
        }
        pbf_v3 n;
        float d = fmaxf(pbf_solid_sdf(&solids[i], x, &n), 0.0f);
        if (d + r < p->h) pbf_ghost_surface(d, n, p, &w_sum, &g);
    }
    *rho_out = p->mass * w_sum;
    *grad_out = v3_scale(g, p->volume);
}

/* Projects x out of every solid, keeping centres `radius` from each surface, and into the domain
 * box, `wall_clear` from each wall. Projection (not stopping) lets particles slide along walls
 * (seed 002). */
PBF_KERNEL_HOT pbf_v3 pbf_collide(pbf_v3 x, const pbf_params *p, const pbf_solid *solids) {
    for (int s = 0; s < p->solid_count; ++s) {
        if (solids[s].type == PBF_SOLID_MESH) { /* along its field's gradient */
            x = pbf_mesh_collide(x, &solids[s], p);
            continue;
        }
        pbf_v3 n;
        float d = pbf_solid_sdf(&solids[s], x, &n);
        if (d < p->radius) x = v3_madd(x, n, p->radius - d);
    }
    float r = p->wall_clear;
    x.x = pbf_minf(pbf_maxf(x.x, p->wall_lo.x + r), p->wall_hi.x - r);
    x.y = pbf_minf(pbf_maxf(x.y, p->wall_lo.y + r), p->wall_hi.y - r);
    x.z = pbf_minf(pbf_maxf(x.z, p->wall_lo.z + r), p->wall_hi.z - r);
    return x;
}

/* Where a point moving from a to b must stop so that it does not pass through solid s (a thin
 * part, or a fast point against any part). A mesh walks its field in its current frame
 * (pbf_field_sweep); an analytic solid walks its exact distance the same way: steps of r/2 (at
 * most 64), stopping one step before the first point closer than r/2 and closer than the one
 * before. The distance changes at most as fast as the position, so that point is still outside,
 * on the side the path came from; pbf_collide then puts it at r. Returns b when the way is
 * free. (The fluid's particles need no such walk for the analytic solids: the speed limit keeps
 * their substep's travel short; meshes are walked for them in the solid's moving frame.) */
PBF_KERNEL_INLINE pbf_v3 pbf_solid_sweep(const pbf_solid *s, pbf_v3 a, pbf_v3 b, float r) {
    if (s->type == PBF_SOLID_MESH) {
        pbf_v3 bl = pbf_mesh_local(s, b);
        pbf_v3 stop = pbf_field_sweep(s->field, pbf_mesh_local(s, a), bl, r);
        if (stop.x == bl.x && stop.y == bl.y && stop.z == bl.z) return b;
        return v3_add(s->a, pbf_mesh_world_dir(s, stop));
    }
    pbf_v3 d = v3_sub(b, a), n;
    float len = v3_len(d), step = 0.5f * r;
    if (!(len > 0.0f)) return b;
    if (pbf_solid_sdf(s, b, &n) - len >= step) return b; /* nothing within reach of the path */
    int steps = (int)ceilf(len / step);
    steps = steps < 64 ? steps : 64;
    float prev = pbf_solid_sdf(s, a, &n);
    for (int k = 1; k <= steps; ++k) {
        float phi = pbf_solid_sdf(s, v3_madd(a, d, (float)k / (float)steps), &n);
        if (phi < step && phi < prev) return v3_madd(a, d, (float)(k - 1) / (float)steps);
        prev = phi;
    }
    return b;
}

/* 1 when x lies inside an analytic solid (sphere, box, capsule: its distance below 0). */
PBF_KERNEL_INLINE int pbf_inside_analytic_solid(pbf_v3 x, const pbf_params *p,
                                                const pbf_solid *solids) {
    for (int s = 0; s < p->solid_count; ++s) {
        pbf_v3 n;
        if (solids[s].type != PBF_SOLID_MESH && pbf_solid_sdf(&solids[s], x, &n) < 0.0f) return 1;
    }
    return 0;
}

/* A diffuse particle's move from a to b against the solids and the domain walls: each solid's
 * walk (pbf_solid_sweep) shortens the path, then pbf_collide projects the end out of every solid
 * and into the domain, like a fluid particle. Where a solid reaches a domain wall, projecting out
 * of it through the face on the wall and then into the domain puts the point back inside; such
 * a move is not made (the particle stays at a). *contact is set when anything changed the end. */
PBF_KERNEL_INLINE pbf_v3 pbf_diffuse_collide(pbf_v3 a, pbf_v3 b, const pbf_params *p,
                                             const pbf_solid *solids, int *contact) {
    pbf_v3 x = b;
    for (int s = 0; s < p->solid_count; ++s) x = pbf_solid_sweep(&solids[s], a, x, p->radius);
    x = pbf_collide(x, p, solids);
    if (pbf_inside_analytic_solid(x, p, solids)) x = a;
    *contact = x.x != b.x || x.y != b.y || x.z != b.z;
    return x;
}

/* The mesh solids' force measurement (src/modules/geometry/meshes.c: pbf__meshes_after_delta;
 * src/backend/cuda/meshes.cu): which mesh takes particle i's share of the solids' push in a Δp
 * pass, from where the pass read it (xo): the mesh whose field is nearest within h, unless a
 * domain wall or a collider is nearer. solid[k] is mesh k's entry in the solids (-1: a sink, not
 * a solid), m meshes; the first `colliders` solids are the colliders. Returns the mesh, or -1. */
PBF_KERNEL_INLINE int pbf_mesh_force_owner(pbf_v3 xo, const pbf_params *P, const pbf_solid *S,
                                           const int *solid, int m, int colliders) {
    int best = -1;
    float nearest = P->h;
    for (int k = 0; k < m; ++k) {
        if (solid[k] < 0) continue;
        const pbf_solid *s = &S[solid[k]];
        pbf_v3 xl = pbf_mesh_local(s, xo);
        if (pbf_field_far(s->field, xl)) continue;
        pbf_field_cell c = pbf_field_locate(s->field, xl);
        float phi = pbf_field_phi(s->field, &c);
        if (phi < nearest) nearest = phi, best = k;
    }
    if (best >= 0) {
        float wall = pbf_minf(pbf_minf(pbf_minf(xo.x - P->wall_lo.x, P->wall_hi.x - xo.x),
                                       pbf_minf(xo.y - P->wall_lo.y, P->wall_hi.y - xo.y)),
                              pbf_minf(xo.z - P->wall_lo.z, P->wall_hi.z - xo.z));
        if (wall < nearest) best = -1;
        for (int c = 0; c < colliders && best >= 0; ++c) {
            pbf_v3 nrm;
            if (pbf_solid_sdf(&S[c], xo, &nrm) < nearest) best = -1;
        }
    }
    return best;
}

/* A particle's terms of its mesh's force and torque sums, in double: its share d (the solids'
 * push beyond its fluid target) and r × d, r = xo − the mesh's position. */
PBF_KERNEL_INLINE void pbf_mesh_force_terms(pbf_v3 share, pbf_v3 xo, const double position[3],
                                            double d[3], double t[3]) {
    d[0] = share.x, d[1] = share.y, d[2] = share.z;
    const double r[3] = {xo.x - position[0], xo.y - position[1], xo.z - position[2]};
    t[0] = r[1] * d[2] - r[2] * d[1];
    t[1] = r[2] * d[0] - r[0] * d[2];
    t[2] = r[0] * d[1] - r[1] * d[0];
}

/* ---------------------------------------------------------------------------------------------
 * The energy audit (src/modules/energy_audit.c, src/backend/cuda/energy.cu; include/pbf/pbf.h,
 * pbf_world_set_energy_audit): E = m Σ (|v|²/2 − g·x), each particle's terms in double. */

/* The velocity the audit books for particle i at x: vel's, or the one the positions imply,
 * (x − x_old)/dt, when vel is NULL; plus dv's when dv is not NULL (XSPH's change). */
PBF_KERNEL_INLINE pbf_v3 pbf_energy_velocity(pbf_v3 x, const float *vel, const float *x_old,
                                             const float *dv, int i, float inv_dt) {
    pbf_v3 v = vel ? v3_load(vel, i) : v3_scale(v3_sub(x, v3_load(x_old, i)), inv_dt);
    if (dv) v = v3_add(v, v3_load(dv, i));
    return v;
}

/* |v|²/2, the kinetic energy per mass, J/kg. */
PBF_KERNEL_INLINE double pbf_energy_kinetic(pbf_v3 v) { return 0.5 * (double)v3_dot(v, v); }

/* g·x, minus the potential energy per mass, J/kg. */
PBF_KERNEL_INLINE double pbf_energy_height(pbf_v3 gravity, pbf_v3 x) {
    return (double)v3_dot(gravity, x);
}

/* ---------------------------------------------------------------------------------------------
 * Stage 1: external forces, speed limit, prediction (Algorithm 1, lines 1–4). */

PBF_KERNEL_INLINE pbf_v3 pbf_limit_speed(pbf_v3 v, const pbf_params *p) {
    if (p->max_speed <= 0.0f) return v;
    float s2 = v3_dot(v, v);
    if (s2 <= p->max_speed * p->max_speed) return v;
    return v3_scale(v, p->max_speed / sqrtf(s2));
}

PBF_KERNEL_INLINE pbf_v3 pbf_predict_velocity(pbf_v3 v, const pbf_params *p) {
    return pbf_limit_speed(v3_madd(v, p->gravity, p->dt), p);
}

/* ---------------------------------------------------------------------------------------------
 * Stage 2: density and λ (Algorithm 1, lines 10–12).
 *   ρ_i = m Σ_j W_ij  (j includes i itself: W(0))        C_i = ρ_i/ρ0 − 1
 *   ∇_{p_i} C_i = (V) Σ_j ∇W_ij  (+ boundary),  ∇_{p_j} C_i = −V ∇W_ij   (the 1/ρ0 is in V=m/ρ0)
 *   λ_i = −C_i / (Σ_k |∇_{p_k} C_i|² + ε) */

typedef struct pbf_lambda_acc {
    float w_sum; /* Σ_j W_ij, self included */
    pbf_v3 grad_i; /* Σ_j ∇W_ij */
    float grad2_sum; /* Σ_j |∇W_ij|² */
    int neighbors; /* j within h, self excluded */
} pbf_lambda_acc;

PBF_KERNEL_INLINE pbf_lambda_acc pbf_lambda_begin(const pbf_params *p) {
    pbf_lambda_acc a;
    a.w_sum = p->w_self;
    a.grad_i = v3(0.0f, 0.0f, 0.0f);
    a.grad2_sum = 0.0f;
    a.neighbors = 0;
    return a;
}

/* λ_i from the pairs and the boundary's density rho_b and gradient grad_b, computed by the
 * caller (pbf_lambda_end below; the tool adds its own terms: see the tool section at the end). */
PBF_KERNEL_INLINE float pbf_lambda_finish(const pbf_lambda_acc *a, float rho_b, pbf_v3 grad_b,
                                          const pbf_params *p, float *density) {
    float rho = p->mass * a->w_sum + rho_b;
    *density = rho;
    float c = rho * p->inv_rest_density - 1.0f;
    if (p->unilateral && c <= 0.0f) return 0.0f;
    pbf_v3 gi = v3_add(v3_scale(a->grad_i, p->volume), grad_b);
    float denom = v3_dot(gi, gi) + p->volume * p->volume * a->grad2_sum + p->eps;
    return -c / denom;
}

/* Returns λ_i; *density receives ρ_i including the boundary. */
PBF_KERNEL_INLINE float pbf_lambda_end(const pbf_lambda_acc *a, pbf_v3 xi, const pbf_params *p,
                                       const pbf_solid *solids, float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    return pbf_lambda_finish(a, rho_b, grad_b, p, density);
}

/* ---------------------------------------------------------------------------------------------
 * Stage 3: position correction with tensile instability correction (Algorithm 1, line 13).
 *   Δp_i = V Σ_j (λ_i + λ_j + s_corr) ∇W_ij  + λ_i ∇_i C_i|boundary
 *   s_corr = −k (W_ij / W(Δq))^n, scaled into the units of λ (k/S0). */

typedef struct pbf_delta_acc {
    pbf_v3 dp;
} pbf_delta_acc;

PBF_KERNEL_INLINE pbf_delta_acc pbf_delta_begin(void) {
    pbf_delta_acc a;
    a.dp = v3(0.0f, 0.0f, 0.0f);
    return a;
}

/* Returns the corrected, collision-projected position of particle i. */
PBF_KERNEL_HOT pbf_v3 pbf_delta_end(const pbf_delta_acc *a, pbf_v3 xi, float lambda_i,
                                    const pbf_params *p, const pbf_solid *solids) {
    pbf_v3 dp = v3_scale(a->dp, p->volume);
    if (lambda_i != 0.0f) {
        float rho_b;
        pbf_v3 grad_b;
        pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
        dp = v3_madd(dp, grad_b, lambda_i);
    }
    return pbf_collide(v3_add(xi, dp), p, solids);
}

/* Chebyshev semi-iterative acceleration (Wang 2015, eq. 12) of one Jacobi iterate:
 *   p^{k+1} = ω (γ (p̂ − p^k) + p^k − p^{k−1}) + p^{k−1}
 * p_hat is the plain Jacobi result from p (= p^k), p_prev is p^{k−1}. ω = γ = 1 gives p_hat. */
PBF_KERNEL_INLINE pbf_v3 pbf_chebyshev(pbf_v3 p_hat, pbf_v3 p, pbf_v3 p_prev, float omega,
                                       float gamma) {
    pbf_v3 step = v3_add(v3_scale(v3_sub(p_hat, p), gamma), v3_sub(p, p_prev));
    return v3_madd(p_prev, step, omega);
}

/* The weight of density pass k of m (pbf_solver_def.step_weights): 1/μ_k for the Chebyshev
 * nodes μ_k = c + h cos((2(m − 1 − k) + 1)π/(2m)) of [a, b] = [b/11, b] (c and h its centre
 * and half width), b = p->step_bound; 1 when step_bound is 0 (plain passes). A linear iteration
 * whose plain step leaves (1 − μ) of each mode of eigenvalue μ in (0, b] then leaves
 * Π (1 − μ/μ_k), which Chebyshev's nodes keep smallest over [a, b]. The modes below a (long
 * waves) converge as the weights' sum says: 4 passes add up to 3.05 for the paper pair and 2.23
 * for Wendland C2, against plain passes' 4 (b's margin, world_state.h, costs that). The order, the smallest μ (largest weight) first, is the stable
 * one for PBF's nonlinear step: each later pass is a smaller step that damps what the large one
 * overshot. With surface tension or adhesion on, the first pass, which carries their
 * displacement, is plain and the other m − 1 take the weights of m − 1 passes: a large first
 * weight against the cohesion tore a droplet apart (2.04 R against 0.95 R, the droplet of
 * tests/material_cases.h). */
PBF_KERNEL_INLINE float pbf_step_weight(int k, int m, const pbf_params *p) {
    if (p->surface_tension_on || p->adhesion_on) { /* materials: the first pass plain */
        if (k == 0) return 1.0f;
        k -= 1, m -= 1;
    }
    if (!(p->step_bound > 0.0f) || m < 1) return 1.0f;
    const float b = p->step_bound, a = b / 11.0f, c = 0.5f * (a + b), h = 0.5f * (b - a);
    const float mu = c + h * cosf((float)(2 * (m - 1 - k) + 1) * 3.14159265f / (float)(2 * m));
    return 1.0f / mu;
}

/* ---------------------------------------------------------------------------------------------
 * Stage 4: velocity from positions (Algorithm 1, line 21). */

PBF_KERNEL_INLINE pbf_v3 pbf_velocity_update(pbf_v3 x_old, pbf_v3 x_new, const pbf_params *p) {
    return v3_scale(v3_sub(x_new, x_old), p->inv_dt);
}

/* The velocity update with the impulse blend β (pbf_solver_def.impulse_blend): v_pred is the
 * predicted velocity, so d = x_new − x_old − v_pred dt is what the density solve and the
 * collisions moved the particle by, and
 *   v = (x_new − x_old)/dt − β (d − d_prev)/dt = v_pred + ((1 − β) d + β d_prev)/dt,
 * the positions keeping the whole of d. *d_prev is the last substep's d on entry and this one's
 * on return. With β = 0 it is pbf_velocity_update, bit for bit. Why it keeps oscillations'
 * energy: docs/physics.md, "The impulse blend". */
PBF_KERNEL_INLINE pbf_v3 pbf_velocity_blend(pbf_v3 x_old, pbf_v3 x_new, pbf_v3 v_pred,
                                            pbf_v3 *d_prev, const pbf_params *p) {
    pbf_v3 moved = v3_sub(x_new, x_old);
    pbf_v3 d = v3_sub(moved, v3_scale(v_pred, p->dt));
    pbf_v3 v = v3_scale(moved, p->inv_dt);
    if (p->impulse_blend != 0.0f) v = v3_madd(v, v3_sub(*d_prev, d), p->impulse_blend * p->inv_dt);
    *d_prev = d;
    return v;
}

/* ---------------------------------------------------------------------------------------------
 * Stage 5a: vorticity ω_i, XSPH velocity change and the final density, in one neighbour pass.
 *   ω_i = V Σ_j ∇_i W_ij × (v_j − v_i)      (the curl; = Σ v_ij × ∇_{p_j} W_ij of the paper)
 *   Δv_i = c V Σ_j (v_j − v_i) W_ij         (XSPH, Schechter & Bridson 2012) */

typedef struct pbf_vort_acc {
    pbf_v3 omega;
    pbf_v3 dv;
    float w_sum;
} pbf_vort_acc;

PBF_KERNEL_INLINE pbf_vort_acc pbf_vort_begin(const pbf_params *p) {
    pbf_vort_acc a;
    a.omega = v3(0.0f, 0.0f, 0.0f);
    a.dv = v3(0.0f, 0.0f, 0.0f);
    a.w_sum = p->w_self;
    return a;
}

/* Finishes: *omega = ω_i, returns the XSPH velocity change, *density = ρ_i at the final
 * positions (boundary included). */
PBF_KERNEL_INLINE pbf_v3 pbf_vort_end(const pbf_vort_acc *a, pbf_v3 xi, const pbf_params *p,
                                      const pbf_solid *solids, pbf_v3 *omega, float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    *density = p->mass * a->w_sum + rho_b;
    *omega = v3_scale(a->omega, p->volume);
    return v3_scale(a->dv, p->xsph * p->volume);
}

/* ---------------------------------------------------------------------------------------------
 * Stage 5b: vorticity confinement (Fedkiw et al. 2001; paper eq. 16).
 *   η_i = ∇|ω|_i = V Σ_j (|ω_j| − |ω_i|) ∇W_ij,  N = η/|η|,  a_i = ε (N × ω_i) */

typedef struct pbf_conf_acc {
    pbf_v3 eta;
} pbf_conf_acc;

PBF_KERNEL_INLINE pbf_conf_acc pbf_conf_begin(void) {
    pbf_conf_acc a;
    a.eta = v3(0.0f, 0.0f, 0.0f);
    return a;
}

/* Returns the final velocity of particle i: v + Δv_xsph + dt ε (N × ω), speed-limited. */
PBF_KERNEL_INLINE pbf_v3 pbf_conf_end(const pbf_conf_acc *a, pbf_v3 vi, pbf_v3 dv_xsph,
                                      pbf_v3 omega_i, const pbf_params *p) {
    pbf_v3 v = v3_add(vi, dv_xsph);
    float eta_len = v3_len(a->eta);
    if (p->vorticity > 0.0f && eta_len > 1e-12f) {
        pbf_v3 n = v3_scale(a->eta, 1.0f / eta_len);
        v = v3_madd(v, v3_cross(n, omega_i), p->vorticity * p->dt);
    }
    return pbf_limit_speed(v, p);
}

/* ---------------------------------------------------------------------------------------------
 * Lane sums of a neighbour list. A particle's neighbour list is summed in PBF_LANES interleaved
 * partial sums: entry k of the list (counted from the particle's first entry) goes to lane
 * k mod 4, and the lanes are added as (l0 + l1) + (l2 + l3) at the end (pbf_lanes_sum). The
 * order is part of the method, not left to a compiler: the CPU runs the four lanes as one SSE
 * vector (src/backend/cpu/cpu_passes.h), the CUDA kernels as four registers
 * (src/backend/cuda/density.cu, velocity.cu), and both
 * get the same bits for any vector width or thread count. A lane without entries stays +0, and
 * a pair beyond h adds only zeros, so a loop may pad a list with such pairs. The 27-cell walk
 * counts the neighbours it finds the same way: the k-th goes to lane k mod 4. */

#define PBF_LANES 4

PBF_KERNEL_INLINE float pbf_lanes_sum(const float *l) { return (l[0] + l[1]) + (l[2] + l[3]); }

typedef struct pbf_lambda_lanes {
    float w[PBF_LANES], gx[PBF_LANES], gy[PBF_LANES], gz[PBF_LANES], g2[PBF_LANES];
    int near[PBF_LANES];
} pbf_lambda_lanes;

typedef struct pbf_delta_lanes {
    float x[PBF_LANES], y[PBF_LANES], z[PBF_LANES];
} pbf_delta_lanes;

typedef struct pbf_vort_lanes {
    float ox[PBF_LANES], oy[PBF_LANES], oz[PBF_LANES]; /* ω */
    float vx[PBF_LANES], vy[PBF_LANES], vz[PBF_LANES]; /* XSPH */
    float w[PBF_LANES];
} pbf_vort_lanes;

typedef pbf_delta_lanes pbf_conf_lanes; /* η */

/* λ pass: adds pair d = x_i − x_j to lane l: W, the neighbour count, ∇W = g d and |∇W|².
 * Returns the pair's gradient factor g: the Δp pass of the same iteration sees the same
 * positions, so a caller may keep g per pair and save the square root and the division there. */
PBF_KERNEL_INLINE float pbf_lambda_lane_k(pbf_lambda_lanes *L, int l, float dx, float dy, float dz,
                                          const pbf_params *p, int kernel) {
    float r2 = dx * dx + dy * dy + dz * dz;
    L->w[l] += pbf_pair_w_k(r2, p, kernel);
    L->near[l] += r2 < p->h2;
    float gm, g = pbf_pair_factor_k(r2, p, kernel, &gm);
    L->gx[l] += dx * g;
    L->gy[l] += dy * g;
    L->gz[l] += dz * g;
    L->g2[l] += gm * gm;
    return g;
}

/* The same with the world's pair (kernel = p->kernel). */
PBF_KERNEL_INLINE float pbf_lambda_lane(pbf_lambda_lanes *L, int l, float dx, float dy, float dz,
                                        const pbf_params *p) {
    return pbf_lambda_lane_k(L, l, dx, dy, dz, p, p->kernel);
}

PBF_KERNEL_INLINE pbf_lambda_acc pbf_lambda_lanes_end(const pbf_lambda_lanes *L,
                                                      const pbf_params *p) {
    pbf_lambda_acc a = pbf_lambda_begin(p);
    a.w_sum += pbf_lanes_sum(L->w);
    a.grad_i = v3(pbf_lanes_sum(L->gx), pbf_lanes_sum(L->gy), pbf_lanes_sum(L->gz));
    a.grad2_sum = pbf_lanes_sum(L->g2);
    a.neighbors = (L->near[0] + L->near[1]) + (L->near[2] + L->near[3]);
    return a;
}

/* Δp pass: pair d with λ_j, the s_corr weights w_i (pbf_scorr_weight of ρ_i) and of ρ_j, and
 * the pair's gradient factor g at these positions (from the λ pass, or pbf_spiky_factor); n is
 * p->scorr_n (see pbf_delta_coef). */
PBF_KERNEL_INLINE void pbf_delta_lane(pbf_delta_lanes *L, int l, float dx, float dy, float dz,
                                      float lambda_i, float lambda_j, float weight_i, float rho_j,
                                      float g, int n, const pbf_params *p) {
    float w = 0.5f * (weight_i + pbf_scorr_weight(rho_j, p));
    float f = pbf_delta_coef(dx * dx + dy * dy + dz * dz, lambda_i, lambda_j, w, n, p) * g;
    L->x[l] += dx * f;
    L->y[l] += dy * f;
    L->z[l] += dz * f;
}

PBF_KERNEL_INLINE pbf_delta_acc pbf_delta_lanes_end(const pbf_delta_lanes *L) {
    pbf_delta_acc a = pbf_delta_begin();
    a.dp = v3(pbf_lanes_sum(L->x), pbf_lanes_sum(L->y), pbf_lanes_sum(L->z));
    return a;
}

/* Vorticity pass A: pair d with v_ij = v_j − v_i: ω += (g d) × v_ij, Δv += W v_ij. Returns g, for
 * the confinement pass (same positions). */
PBF_KERNEL_INLINE float pbf_vort_lane_k(pbf_vort_lanes *L, int l, float dx, float dy, float dz,
                                        float ux, float uy, float uz, const pbf_params *p,
                                        int kernel) {
    float r2 = dx * dx + dy * dy + dz * dz;
    float w = pbf_pair_w_k(r2, p, kernel);
    float gm, g = pbf_pair_factor_k(r2, p, kernel, &gm);
    pbf_v3 om = v3_cross(v3(dx * g, dy * g, dz * g), v3(ux, uy, uz));
    L->ox[l] += om.x;
    L->oy[l] += om.y;
    L->oz[l] += om.z;
    L->vx[l] += ux * w;
    L->vy[l] += uy * w;
    L->vz[l] += uz * w;
    L->w[l] += w;
    return g;
}

/* The same with the world's pair (kernel = p->kernel). */
PBF_KERNEL_INLINE float pbf_vort_lane(pbf_vort_lanes *L, int l, float dx, float dy, float dz,
                                      float ux, float uy, float uz, const pbf_params *p) {
    return pbf_vort_lane_k(L, l, dx, dy, dz, ux, uy, uz, p, p->kernel);
}

PBF_KERNEL_INLINE pbf_vort_acc pbf_vort_lanes_end(const pbf_vort_lanes *L, const pbf_params *p) {
    pbf_vort_acc a = pbf_vort_begin(p);
    a.omega = v3(pbf_lanes_sum(L->ox), pbf_lanes_sum(L->oy), pbf_lanes_sum(L->oz));
    a.dv = v3(pbf_lanes_sum(L->vx), pbf_lanes_sum(L->vy), pbf_lanes_sum(L->vz));
    a.w_sum += pbf_lanes_sum(L->w);
    return a;
}

/* Vorticity pass B: pair d with f = |ω_j| − |ω_i| and pass A's g: η += (g d) f. */
PBF_KERNEL_INLINE void pbf_conf_lane(pbf_conf_lanes *L, int l, float dx, float dy, float dz,
                                     float f, float g) {
    L->x[l] += dx * g * f;
    L->y[l] += dy * g * f;
    L->z[l] += dz * g * f;
}

PBF_KERNEL_INLINE pbf_conf_acc pbf_conf_lanes_end(const pbf_conf_lanes *L) {
    pbf_conf_acc a = pbf_conf_begin();
    a.eta = v3(pbf_lanes_sum(L->x), pbf_lanes_sum(L->y), pbf_lanes_sum(L->z));
    return a;
}

/* =============================================================================================
 * Materials (docs/physics.md, "Materials"): surface tension, adhesion and wall friction. Every
 * term here is off (never called) unless its parameter is set, so a world without them steps
 * exactly as before.
 *
 * Surface tension (Akinci, Akinci & Teschner 2013, "Versatile surface tension and adhesion for
 * SPH fluids"), as a velocity change after the solve, over the final positions:
 *   n_i   = h Σ_j (m/ρ_j) ∇W_ij                  (∇W_ij = ∇_i W(x_i − x_j): into the fluid)
 *   Δv_i  = −dt γ Σ_j K_ij [ m C(r) d/r + (ρ0/1000) (n_i − n_j) ],  K_ij = 2ρ0 / (ρ_i + ρ_j)
 *   C(r)  = 32/(π h^9) · { (h − r)³ r³                 h/2 < r <= h
 *                          2 (h − r)³ r³ − h^6/64      0 < r <= h/2 }
 * with d = x_i − x_j, r = |d|. The first term is the cohesion (attraction at the range of a
 * neighbour, repulsion up close, so particles do not clump), the second the curvature term,
 * which evens the surface out. Akinci writes the curvature term γ m_i (n_i − n_j), a force only
 * with γ in SI numbers; pbf scales it by ρ0/(1000 kg/m³): Akinci's term for water, and the same
 * ratio to the cohesion for other rest densities. γ comes from σ (pbf__init_params) so that a
 * flat surface holds the energy σ per area. The solver adds dt Δv to the positions in its first
 * Δp pass (src/backend/cpu/cpu_stages.c, above pbf__cpu_normals, says why not to the
 * velocities).
 *
 * Adhesion (Akinci 2013's adhesion kernel) between the fluid and the walls and colliders:
 *   A(q) = 0.007/h^3.25 · (−4q²/h + 6q − 2h)^(1/4)  for h/2 < q <= h, else 0
 * summed over the ghost layers of the solid (as for the density): a layer at distance z gives
 * (2π z/s²) V ∫_{max(z, h/2)}^{h} A(q) dq towards the solid. Their sum T(d) over the layers at a
 * particle distance d is tabulated once (adh_table); Δv_i = −dt W adhesion_scale T(d) n.
 *
 * Wall friction (Macklin, Müller, Chentanez & Kim 2014, "Unified particle physics", §6.1): in
 * every Δp pass, after the boundary's push Δx_n along a surface's normal, the particle's slide
 * along that surface since the start of the substep is shortened by μ |Δx_n|, and stopped when
 * it is shorter than that (static friction). */

/* Akinci's cohesion kernel C(r) for r = |d| (zero beyond h). */
PBF_KERNEL_INLINE float pbf_cohesion_kernel(float r, const pbf_params *p) {
    float hr = pbf_pos(p->h - r);
    float t = hr * hr * hr * r * r * r;
    float c = 2.0f * r > p->h ? t : 2.0f * t - p->coh_h6;
    return p->coh_k * c;
}

typedef struct pbf_normal_lanes {
    float x[PBF_LANES], y[PBF_LANES], z[PBF_LANES];
} pbf_normal_lanes;

/* Normal pass: pair d with the neighbour's density rho_j and the pair's gradient factor g
 * (pbf_spiky_factor at these positions, zero beyond h): Σ d g / ρ_j. */
PBF_KERNEL_INLINE void pbf_normal_lane(pbf_normal_lanes *L, int l, float dx, float dy, float dz,
                                       float rho_j, float g) {
    float f = g / rho_j;
    L->x[l] += dx * f;
    L->y[l] += dy * f;
    L->z[l] += dz * f;
}

/* n_i from the lanes. */
PBF_KERNEL_INLINE pbf_v3 pbf_normal_lanes_end(const pbf_normal_lanes *L, const pbf_params *p) {
    pbf_v3 n = v3(pbf_lanes_sum(L->x), pbf_lanes_sum(L->y), pbf_lanes_sum(L->z));
    return v3_scale(n, p->normal_scale);
}

typedef struct pbf_tension_lanes {
    float x[PBF_LANES], y[PBF_LANES], z[PBF_LANES];
} pbf_tension_lanes;

/* Surface tension pass: pair d with ρ_i + ρ_j and n_i − n_j. Pairs at or beyond h add zero. */
PBF_KERNEL_INLINE void pbf_tension_lane(pbf_tension_lanes *L, int l, float dx, float dy, float dz,
                                        float rho_sum, float nx, float ny, float nz,
                                        const pbf_params *p) {
    float r2 = dx * dx + dy * dy + dz * dz;
    float r = sqrtf(r2);
    float inv_r = 1.0f / (r > 1e-9f * p->h ? r : 1e-9f * p->h);
    float k = r2 < p->h2 ? 2.0f * p->rest_density / rho_sum : 0.0f;
    float c = k * p->st_cohesion * pbf_cohesion_kernel(r, p) * inv_r;
    float q = k * p->st_curvature;
    L->x[l] += dx * c + nx * q;
    L->y[l] += dy * c + ny * q;
    L->z[l] += dz * c + nz * q;
}

/* The velocity change of particle i from its surface tension sum (over dt). */
PBF_KERNEL_INLINE pbf_v3 pbf_tension_lanes_end(const pbf_tension_lanes *L, const pbf_params *p) {
    pbf_v3 f = v3(pbf_lanes_sum(L->x), pbf_lanes_sum(L->y), pbf_lanes_sum(L->z));
    return v3_scale(f, -p->dt);
}

/* T(d): the adhesion profile of a solid at particle distance d >= 0 (1/m; zero from h on). */
PBF_KERNEL_INLINE float pbf_adhesion_profile(float d, const pbf_params *p) {
    float u = d * p->adh_inv_step;
    if (!(u < (float)PBF_ADH_TABLE)) return 0.0f;
    int k = (int)u;
    float f = u - (float)k;
    return p->adh_table[k] * (1.0f - f) + p->adh_table[k + 1] * f;
}

/* The velocity change of a particle at x from the adhesion of the walls and colliders. */
PBF_KERNEL_INLINE pbf_v3 pbf_adhesion_dv(pbf_v3 x, const pbf_params *p, const pbf_solid *solids) {
    pbf_v3 a = v3(0.0f, 0.0f, 0.0f);
    if (p->wall_adhesion > 0.0f) {
        float lo[3], hi[3], xs[3];
        lo[0] = p->wall_lo.x, lo[1] = p->wall_lo.y, lo[2] = p->wall_lo.z;
        hi[0] = p->wall_hi.x, hi[1] = p->wall_hi.y, hi[2] = p->wall_hi.z;
        xs[0] = x.x, xs[1] = x.y, xs[2] = x.z;
        float f[3];
        for (int k = 0; k < 3; ++k) /* towards the min wall is −, towards the max wall + */
            f[k] = pbf_adhesion_profile(pbf_maxf(hi[k] - xs[k], 0.0f), p) -
                   pbf_adhesion_profile(pbf_maxf(xs[k] - lo[k], 0.0f), p);
        a = v3_scale(v3(f[0], f[1], f[2]), p->wall_adhesion);
    }
    for (int s = 0; s < p->solid_count; ++s) {
        if (solids[s].adhesion <= 0.0f) continue;
        pbf_v3 n;
        float d = pbf_maxf(pbf_solid_sdf(&solids[s], x, &n), 0.0f);
        a = v3_madd(a, n, -solids[s].adhesion * pbf_adhesion_profile(d, p));
    }
    return v3_scale(a, p->dt * p->adhesion_scale);
}

/* Shortens the slide of x along a surface of unit normal n since the substep started (at x0) by
 * mu · push, stopping it when it is shorter than that. */
PBF_KERNEL_INLINE pbf_v3 pbf_friction_slide(pbf_v3 x, pbf_v3 x0, pbf_v3 n, float push, float mu) {
    pbf_v3 d = v3_sub(x, x0);
    pbf_v3 t = v3_madd(d, n, -v3_dot(d, n));
    float len = v3_len(t), cut = mu * push;
    if (!(cut > 0.0f)) return x;
    return len <= cut ? v3_sub(x, t) : v3_madd(x, t, -cut / len);
}

/* pbf_delta_end with wall friction: x_new as pbf_delta_end gives it, then for each surface in
 * reach, its push (the part of the boundary's displacement x_new − (xi + fluid Δp) along its
 * normal) shortens the slide since x0. */
PBF_KERNEL_INLINE pbf_v3 pbf_delta_end_friction(const pbf_delta_acc *a, pbf_v3 xi, pbf_v3 x0,
                                                float lambda_i, const pbf_params *p,
                                                const pbf_solid *solids) {
    pbf_v3 x = pbf_delta_end(a, xi, lambda_i, p, solids);
    pbf_v3 b = v3_sub(x, v3_madd(xi, a->dp, p->volume)); /* the boundary's displacement */
    const float reach = p->h - p->radius;
    if (p->wall_friction > 0.0f) {
        float lo[3], hi[3], xs[3], bs[3];
        lo[0] = p->wall_lo.x, lo[1] = p->wall_lo.y, lo[2] = p->wall_lo.z;
        hi[0] = p->wall_hi.x, hi[1] = p->wall_hi.y, hi[2] = p->wall_hi.z;
        xs[0] = xi.x, xs[1] = xi.y, xs[2] = xi.z;
        bs[0] = b.x, bs[1] = b.y, bs[2] = b.z;
        for (int k = 0; k < 3; ++k) {
            float sg = xs[k] - lo[k] < hi[k] - xs[k] ? 1.0f : -1.0f; /* the nearer wall */
            float dist = sg > 0.0f ? xs[k] - lo[k] : hi[k] - xs[k];
            float push = bs[k] * sg;
            if (dist >= reach || !(push > 0.0f)) continue;
            pbf_v3 n = v3(k == 0 ? sg : 0.0f, k == 1 ? sg : 0.0f, k == 2 ? sg : 0.0f);
            x = pbf_friction_slide(x, x0, n, push, p->wall_friction);
        }
    }
    for (int s = 0; s < p->solid_count; ++s) {
        if (solids[s].friction <= 0.0f) continue;
        pbf_v3 n;
        float d = pbf_solid_sdf(&solids[s], xi, &n);
        float push = v3_dot(b, n);
        if (d >= reach || !(push > 0.0f)) continue;
        x = pbf_friction_slide(x, x0, n, push, solids[s].friction);
    }
    return x;
}

/* =============================================================================================
 * Viscosity for thick fluids and free-surface drag (docs/physics.md, "Viscosity for thick
 * fluids", "Surface drag"). Off (never called) unless material.viscosity or
 * material.surface_drag is set.
 *
 * Implicit viscosity (Weiler, Koschier, Brochard & Bender 2018, "A physically consistent
 * implicit viscosity solver for SPH fluids"): the Laplacian of the velocity is
 *   ∇²v_i ≈ 2(d + 2) Σ_j V ((v_i − v_j) · d) / (r² + 0.01 h²) ∇W_ij,   d = x_i − x_j, r = |d|,
 * with d = 3 dimensions and the rest volume V = m/ρ0 of every particle (so the matrix below is
 * symmetric). With ∇W_ij = g d (g < 0, the spiky gradient factor) this is
 *   ν ∇²v_i = −Σ_j s_ij d dᵀ (v_i − v_j),   s_ij = −10 ν V g / (r² + 0.01 h²) >= 0,
 * and the backward Euler step v' − dt ν ∇²v' = v is the linear system
 *   A v' = v,   (A u)_i = u_i + dt Σ_j s_ij d dᵀ (u_i − u_j):
 * the identity plus a weighted graph Laplacian of positive semi-definite 3×3 blocks, so A is
 * symmetric positive definite for any ν and dt, and conjugate gradients (src/modules/viscosity.c,
 * with
 * the 3×3 diagonal blocks as preconditioner) solve it however thick the fluid. XSPH stays as
 * it is; the two add up.
 *
 * Surface drag (NVIDIA FleX's "drag"): particles at the free surface are pulled towards the
 * velocity of the air, which is at rest: dv/dt = −c s_i v_i, with c in 1/s and a surface
 * weight s_i from the particle's neighbourhood, its density ρ_i at the end of the substep
 * (the kernel-weighted count of its neighbours, with the walls' and colliders' ghost layers):
 *   s_i = clamp((ρ0 − ρ_i) / (ρ0 − ρ_top), 0, 1),
 * where ρ_top is the density of a particle in the top layer of the rest lattice (0.73 ρ0 with
 * h = 4r): 0 inside the fluid and against walls, 1 at a flat free surface and beyond (edges,
 * spray). The neighbour count alone would also drag the layers along the walls, which have
 * half a neighbourhood too. It is applied implicitly, v ← v / (1 + dt c s_i), which never
 * overshoots past rest. */

/* s_ij of a pair at r² (zero at and beyond h): visc_eps = 0.01 h², visc_k = 10 ν V scaled so
 * that the rest lattice gives the exact Laplacian of a shear (src/modules/viscosity.c: 1.54 × with
 * h = 4r). */
PBF_KERNEL_INLINE float pbf_visc_pair(float r2, const pbf_params *p) {
    float gm, g = pbf_pair_factor_k(r2, p, p->kernel, &gm); /* the world's pair's ∇W */
    return -p->visc_k * g / (r2 + p->visc_eps);
}

typedef struct pbf_visc_lanes {
    float x[PBF_LANES], y[PBF_LANES], z[PBF_LANES];
} pbf_visc_lanes;

/* The product pass: pair d with u_i − u_j and the pair's s_ij adds s_ij d (d · (u_i − u_j)).
 * The solve's iterations see the same positions, so a caller may keep s_ij per pair. */
PBF_KERNEL_INLINE void pbf_visc_lane_s(pbf_visc_lanes *L, int l, float dx, float dy, float dz,
                                       float ux, float uy, float uz, float s) {
    float f = s * (dx * ux + dy * uy + dz * uz);
    L->x[l] += dx * f;
    L->y[l] += dy * f;
    L->z[l] += dz * f;
}

/* The same with s_ij computed from d. */
PBF_KERNEL_INLINE void pbf_visc_lane(pbf_visc_lanes *L, int l, float dx, float dy, float dz,
                                     float ux, float uy, float uz, const pbf_params *p) {
    pbf_visc_lane_s(L, l, dx, dy, dz, ux, uy, uz, pbf_visc_pair(dx * dx + dy * dy + dz * dz, p));
}

/* (A u)_i from u_i and the lanes of its product pass. */
PBF_KERNEL_INLINE pbf_v3 pbf_visc_apply_end(const pbf_visc_lanes *L, pbf_v3 ui,
                                            const pbf_params *p) {
    pbf_v3 s = v3(pbf_lanes_sum(L->x), pbf_lanes_sum(L->y), pbf_lanes_sum(L->z));
    return v3_madd(ui, s, p->dt);
}

/* ν ∇²u_i (m/s³ for u in m/s) from the lanes of a product pass over u: −Σ s_ij d dᵀ (u_i − u_j)
 * (tests/test_viscosity.c checks it against analytic fields). */
PBF_KERNEL_INLINE pbf_v3 pbf_visc_laplacian_end(const pbf_visc_lanes *L) {
    return v3(-pbf_lanes_sum(L->x), -pbf_lanes_sum(L->y), -pbf_lanes_sum(L->z));
}

/* A symmetric 3×3 matrix: xx, yy, zz, xy, xz, yz. */
typedef struct pbf_sym3 {
    float xx, yy, zz, xy, xz, yz;
} pbf_sym3;

typedef struct pbf_visc_diag_lanes {
    float xx[PBF_LANES], yy[PBF_LANES], zz[PBF_LANES], xy[PBF_LANES], xz[PBF_LANES], yz[PBF_LANES];
} pbf_visc_diag_lanes;

/* The diagonal block pass: pair d with its s_ij adds s_ij d dᵀ. */
PBF_KERNEL_INLINE void pbf_visc_diag_lane(pbf_visc_diag_lanes *L, int l, float dx, float dy,
                                          float dz, float s) {
    L->xx[l] += s * dx * dx;
    L->yy[l] += s * dy * dy;
    L->zz[l] += s * dz * dz;
    L->xy[l] += s * dx * dy;
    L->xz[l] += s * dx * dz;
    L->yz[l] += s * dy * dz;
}

/* The inverse of the diagonal block A_ii = I + dt Σ_j s_ij d dᵀ (symmetric positive definite:
 * its determinant is at least 1), the preconditioner of the solve. */
PBF_KERNEL_INLINE pbf_sym3 pbf_visc_diag_end(const pbf_visc_diag_lanes *L, const pbf_params *p) {
    float a = 1.0f + p->dt * pbf_lanes_sum(L->xx), b = 1.0f + p->dt * pbf_lanes_sum(L->yy),
          c = 1.0f + p->dt * pbf_lanes_sum(L->zz), d = p->dt * pbf_lanes_sum(L->xy),
          e = p->dt * pbf_lanes_sum(L->xz), f = p->dt * pbf_lanes_sum(L->yz);
    /* [[a d e] [d b f] [e f c]]⁻¹ by cofactors */
    float cxx = b * c - f * f, cxy = e * f - d * c, cxz = d * f - b * e;
    float inv = 1.0f / (a * cxx + d * cxy + e * cxz);
    pbf_sym3 m;
    m.xx = cxx * inv;
    m.yy = (a * c - e * e) * inv;
    m.zz = (a * b - d * d) * inv;
    m.xy = cxy * inv;
    m.xz = cxz * inv;
    m.yz = (d * e - a * f) * inv;
    return m;
}

PBF_KERNEL_INLINE pbf_v3 pbf_sym3_apply(pbf_sym3 m, pbf_v3 u) {
    return v3(m.xx * u.x + m.xy * u.y + m.xz * u.z, m.xy * u.x + m.yy * u.y + m.yz * u.z,
              m.xz * u.x + m.yz * u.y + m.zz * u.z);
}

/* The no-slip walls (`domain.no_slip`): the domain walls' ghost layers (the sheets of
 * "Boundary density") enter the Laplacian as neighbours. A sheet at rest would put the zero of
 * the velocity behind the wall, at the sheet, and let the first particle layer slip; so each
 * sheet takes the velocity that extends the fluid's linear profile through zero at the wall
 * (Morris, Fox & Zhu 1997): a particle at distance d from the wall sees a sheet at distance z
 * (that is z − d behind the wall) moving at −(z − d)/d u_i, and the pair term
 * s_ij d dᵀ (u_i − u_sheet) becomes (z/d) s_ij d dᵀ u_i. d is taken at least wall_clear (r
 * unless domain.clearance is set), the closest a particle centre stays to a wall, so the factor
 * stays bounded. One sheet at distance z, areal density 1/s², adds to particle i
 *   Σ s_ij d dᵀ = (1/s²) ∫ s(R) d dᵀ dA,
 * whose tangential block, the in-plane offsets averaged over the angle, is T(z) (I − n nᵀ) with
 *   T(z) = (π/s²) ∫_z^h s(R) (R² − z²) R dR = visc_wall_k ∫_z^h (h − R)² (R² − z²)/(R² + ε) dR
 * (s(R) R = −visc_k K_s (h − R)²/(R² + ε), K_s = spiky_k; with the Wendland pair (h − R)²
 * becomes (1 − R/h)³ R, its g(R) R / K_s). Only the tangential block is kept:
 * the wall's normal motion is the density constraint's. The integrand is smooth on [z, h]; with
 * 4-point Gauss–Legendre the block agrees with the sheets summed point by point on a fine
 * lattice within 0.2 % (tests/test_viscosity.c). The
 * walls' edges are not corrected as the density's are: a particle in an edge is held by both
 * walls' sheets, each in its own tangential plane. */
PBF_KERNEL_INLINE float pbf_visc_wall_sheet(float z, const pbf_params *p) {
    const float xg[4] = {-0.86113631f, -0.33998104f, 0.33998104f, 0.86113631f};
    const float wg[4] = {0.34785485f, 0.65214515f, 0.65214515f, 0.34785485f};
    float half = 0.5f * (p->h - z), mid = 0.5f * (p->h + z), sum = 0.0f;
    for (int k = 0; k < 4; ++k) {
        float R = mid + half * xg[k], hr = p->h - R, a = hr / p->h;
        float gr = p->kernel ? a * a * a * R : hr * hr; /* g(R) R / K_s of the world's pair */
        sum += wg[k] * gr * (R * R - z * z) / (R * R + p->visc_eps);
    }
    return p->visc_wall_k * half * sum;
}

/* T of one wall at distance d: its ghost layers z = d + r, d + 3r, ... < h, each weighted by
 * z / max(d, wall_clear) (the sheets' mirrored velocity, above). */
PBF_KERNEL_INLINE float pbf_visc_wall_side(float d, const pbf_params *p) {
    const float e = pbf_maxf(d, p->wall_clear);
    float t = 0.0f;
    for (float z = d + p->radius; z < p->h; z += 2.0f * p->radius)
        t += (z / e) * pbf_visc_wall_sheet(z, p);
    return t;
}

/* The walls' block of particle i at x: Σ over the walls in reach of T (I − n nᵀ), T from
 * pbf_visc_wall_side. Zero when the walls slip. */
PBF_KERNEL_INLINE pbf_sym3 pbf_visc_wall(pbf_v3 x, const pbf_params *p) {
    pbf_sym3 m = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    if (p->visc_wall_k == 0.0f) return m;
    const float lo[3] = {p->wall_lo.x, p->wall_lo.y, p->wall_lo.z};
    const float hi[3] = {p->wall_hi.x, p->wall_hi.y, p->wall_hi.z};
    const float xs[3] = {x.x, x.y, x.z};
    float t[3] = {0.0f, 0.0f, 0.0f}; /* T of the walls normal to each axis */
    for (int k = 0; k < 3; ++k) {
        t[k] = pbf_visc_wall_side(pbf_maxf(xs[k] - lo[k], 0.0f), p) +
               pbf_visc_wall_side(pbf_maxf(hi[k] - xs[k], 0.0f), p);
    }
    /* a wall normal to axis k holds the two other axes */
    m.xx = t[1] + t[2];
    m.yy = t[0] + t[2];
    m.zz = t[0] + t[1];
    return m;
}

/* The preconditioned conjugate gradients of the solve, per particle (src/modules/viscosity.c,
 * src/backend/cuda/viscosity.cu): the dot products' terms in double (the sums are the caller's),
 * the walls' share of the diagonal block and of a product, and the updates of an iteration. */
PBF_KERNEL_INLINE double pbf_dot_d(pbf_v3 a, pbf_v3 b) {
    return (double)a.x * b.x + (double)a.y * b.y + (double)a.z * b.z;
}

/* No-slip walls: the walls' block m (pbf_visc_wall, diagonal) into the diagonal block's lanes. */
PBF_KERNEL_INLINE void pbf_visc_diag_wall(pbf_visc_diag_lanes *L, pbf_sym3 m) {
    L->xx[0] += m.xx;
    L->yy[0] += m.yy;
    L->zz[0] += m.zz;
}

/* No-slip walls (visc_wall_k != 0): (A u)_i from the neighbours' part a (pbf_visc_apply_end)
 * and the walls' block of particle i. */
PBF_KERNEL_INLINE pbf_v3 pbf_visc_apply_wall(pbf_v3 a, pbf_sym3 wall, pbf_v3 ui,
                                             const pbf_params *p) {
    return v3_madd(a, pbf_sym3_apply(wall, ui), p->dt);
}

/* An iteration's update of particle i: v += α d, r −= α q; returns z = M r. */
PBF_KERNEL_INLINE pbf_v3 pbf_visc_cg_update(pbf_v3 *v, pbf_v3 *r, pbf_v3 d, pbf_v3 q, pbf_sym3 m,
                                            float alpha) {
    *v = v3_madd(*v, d, alpha);
    *r = v3_madd(*r, q, -alpha);
    return pbf_sym3_apply(m, *r);
}

/* The surface weight s_i of a particle of density rho. */
PBF_KERNEL_INLINE float pbf_surface_weight(float rho, const pbf_params *p) {
    float s = (p->rest_density - rho) * p->drag_inv_span;
    return s < 0.0f ? 0.0f : s > 1.0f ? 1.0f : s;
}

/* The velocity after a substep of surface drag. */
PBF_KERNEL_INLINE pbf_v3 pbf_surface_drag(pbf_v3 v, float rho, const pbf_params *p) {
    return v3_scale(v, 1.0f / (1.0f + p->dt * p->surface_drag * pbf_surface_weight(rho, p)));
}

/* =============================================================================================
 * Several fluids (docs/physics.md, "Several fluids"). Every fluid k of a world has its rest
 * density ρ0_k; all share the spacing 2r, so a particle's mass is m_k = m_ref ρ0_k / ρ_ref
 * (Macklin, Müller, Chentanez & Kim 2014, §7.1: mass ratios at one particle size), with m_ref
 * the mass pbf__init_params calibrates for the reference density ρ_ref (def.rest_density).
 *
 * Density (Solenthaler & Pajarola 2008, "Density contrast SPH interfaces"): a particle's density
 * is its own mass times its number density, ρ_i = m_i Σ_j W_ij, not Σ_j m_j W_ij, which smears a
 * density jump over a kernel radius and pushes the interface apart. Against ρ0 of i's own fluid
 *   C_i = m_i Σ_j W_ij / ρ0_i − 1 = (m_ref / ρ_ref) Σ_j W_ij − 1,
 * the same function of the positions as with one fluid: λ's numerator and the gradients ∇C are
 * unchanged, and the solver keeps ρ̃_i = m_ref Σ_j W_ij (reported as ρ̃_i m_i / m_ref).
 *
 * Mass weights (PBD's generalized inverse masses, Macklin 2014 eq. 4): each particle's share of
 * a correction is weighted by w_k = m_ref / m_k, so a heavy particle moves less than a light one
 * and the heavier fluid sinks through the lighter one:
 *   λ_i  = −C_i / (w_i |∇_i C_i|² + Σ_j w_j |∇_j C_i|² + ε)
 *   Δp_i = w_i [V Σ_j (λ_i + λ_j + s_corr) ∇W_ij + λ_i ∇_i C_i|boundary]
 * With every w_k = 1 these are the one-fluid formulas above. The gravity scale g_k of a fluid
 * multiplies gravity in the prediction (FleX's buoyancy), and XSPH uses each fluid's own c. */

/* λ pass of a world with several fluids: as pbf_lambda_lane, with |∇W|² weighted by the
 * neighbour's inverse mass w_j. */
PBF_KERNEL_INLINE float pbf_lambda_lane_phase(pbf_lambda_lanes *L, int l, float dx, float dy,
                                              float dz, float w_j, const pbf_params *p,
                                              int kernel) {
    float r2 = dx * dx + dy * dy + dz * dz;
    L->w[l] += pbf_pair_w_k(r2, p, kernel);
    L->near[l] += r2 < p->h2;
    float gm, g = pbf_pair_factor_k(r2, p, kernel, &gm);
    L->gx[l] += dx * g;
    L->gy[l] += dy * g;
    L->gz[l] += dz * g;
    L->g2[l] += w_j * gm * gm;
    return g;
}

/* pbf_lambda_finish with particle i's inverse mass weight w_i on its own gradient. */
PBF_KERNEL_INLINE float pbf_lambda_finish_phase(const pbf_lambda_acc *a, float rho_b, pbf_v3 grad_b,
                                                float w_i, const pbf_params *p, float *density) {
    float rho = p->mass * a->w_sum + rho_b;
    *density = rho;
    float c = rho * p->inv_rest_density - 1.0f;
    if (p->unilateral && c <= 0.0f) return 0.0f;
    pbf_v3 gi = v3_add(v3_scale(a->grad_i, p->volume), grad_b);
    float denom = w_i * v3_dot(gi, gi) + p->volume * p->volume * a->grad2_sum + p->eps;
    return -c / denom;
}

/* pbf_lambda_end for particle i of inverse mass weight w_i. */
PBF_KERNEL_INLINE float pbf_lambda_end_phase(const pbf_lambda_acc *a, pbf_v3 xi, float w_i,
                                             const pbf_params *p, const pbf_solid *solids,
                                             float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    return pbf_lambda_finish_phase(a, rho_b, grad_b, w_i, p, density);
}

/* Weights particle i's fluid sum by w_i: afterwards a->dp holds w_i Σ(...), and the returned
 * w_i λ_i is the multiplier the boundary terms take (pbf_delta_end, the friction and the tool
 * functions use λ_i only for them). */
PBF_KERNEL_INLINE float pbf_delta_weight_phase(pbf_delta_acc *a, float lambda_i, float w_i) {
    a->dp = v3_scale(a->dp, w_i);
    return lambda_i * w_i;
}

/* The prediction's velocity with the fluid's gravity scale gs. */
PBF_KERNEL_INLINE pbf_v3 pbf_predict_velocity_phase(pbf_v3 v, float gs, const pbf_params *p) {
    return pbf_limit_speed(v3_madd(v, p->gravity, gs * p->dt), p);
}

/* pbf_vort_end with the fluid's own XSPH coefficient c_i. */
PBF_KERNEL_INLINE pbf_v3 pbf_vort_end_phase(const pbf_vort_acc *a, pbf_v3 xi, float c_i,
                                            const pbf_params *p, const pbf_solid *solids,
                                            pbf_v3 *omega, float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    *density = p->mass * a->w_sum + rho_b;
    *omega = v3_scale(a->omega, p->volume);
    return v3_scale(a->dv, c_i * p->volume);
}

/* =============================================================================================
 * The tool (docs/tool.md). A rigid sphere of centre c and radius R moving at v_t through
 * the fluid, after seed 004 (Wang, Yu, Liang & Guo 2018, "Real-time interaction simulation with
 * position-based fluid"). Everything the solver does with it per particle is here;
 * src/modules/tool.c
 * moves the sphere and reduces the per-particle forces in slot order.
 *
 *  - Boundary: the sphere is a solid like the colliders (ghost shells curved with the sphere give
 *    density and ∇C, so the pressure reaches it smoothly), and every solver iteration projects
 *    particles out to |x − c| >= R + r. The displacement these two terms give particle j over a
 *    substep, Δx_j, is the momentum m Δx_j / dt the tool hands it; the reaction ON the tool is
 *        F_reaction = − (m / dt²) Σ_j Δx_j
 *    (buoyancy, pressure drag and wall squeeze all come out of it).
 *  - Adhesion (seed 004 eq. 12–13, after Tse et al. 2015), with r_j = c − x_j:
 *        F_adh = Σ_j K̄ (m/ρ_j) W_adh(|r_j|) r_j/|r_j|,   K̄ = (K_tool + K_fluid)/2
 *        W_adh(d) = C_d [((d−A)/Q)³ − ((d−A)/Q)²]  for A <= d <= B, else 0,   Q = B − A
 *    (ε = 3, ζ = 2). W_adh <= 0, so the force pulls the tool towards the fluid; C_d = 27/4 makes
 *    its minimum −1.
 *  - Damping (seed 004 eq. 14), over particles in contact (|r_j| < R + 2r):
 *        F_damp = − Σ_j κ (v_t − v_j),   κ = min(k_damp (2r)², m/dt)
 *    (opposing the relative motion; (2r)² makes k_damp a per-area coefficient, so the force does
 *    not grow with the resolution; the cap keeps the particle update below v_t − v_j).
 * Adhesion and damping act on the particles too (Newton's third law: Δv_j = −F_j dt / m), so
 * the coupling conserves momentum both ways. */

/* pbf_tool_params, the tool's constants for these functions, is in params.h. */

/* One spherical shell of ghosts of radius s (areal density 1/(2r)², like the planes above) seen
 * from distance D > 0 of its centre, in closed form. With q the distance to a shell point,
 * dA = 2π s q dq / D, so for poly6 and the spiky gradient's radial part:
 *   Σ W   = (2π s / D)(1/(2r)²) (K/8) [(h² − q₀²)⁴ − (h² − q₁²)⁴]
 *   Σ ∇W  = (2π s / D)(1/(2r)²) (K_s / 2D) [J(h − q₀) − J(h − q₁)] n,
 *           J(u) = u³ ((D² − s² + h²)/3 − h u/2 + u²/5)
 * over q₀ = |D − s| .. q₁ = min(D + s, h); n points from the centre to the particle. As s → ∞
 * these become the plane's formulas; on a sphere of a few particle radii the tangent plane would
 * count too many ghosts (the solid curves away) and push the fluid off the tool. */
PBF_KERNEL_INLINE void pbf_ghost_shell_paper(float s, float dist, const pbf_params *p, float *w_sum,
                                             float *g_radial) {
    float q0 = fabsf(dist - s);
    if (q0 >= p->h) return;
    float q1 = pbf_minf(dist + s, p->h);
    float f = 6.2831853f * s / (dist * 4.0f * p->radius * p->radius);
    float a = p->h2 - q0 * q0, b = p->h2 - q1 * q1;
    *w_sum += f * 0.125f * p->poly6_k * (a * a * a * a - b * b * b * b);
    float c = ((dist - s) * (dist + s) + p->h2) * (1.0f / 3.0f); /* (D² − s² + h²)/3 */
    float u0 = p->h - q0, u1 = p->h - q1;
    float j0 = u0 * u0 * u0 * (c - 0.5f * p->h * u0 + 0.2f * u0 * u0);
    float j1 = u1 * u1 * u1 * (c - 0.5f * p->h * u1 + 0.2f * u1 * u1);
    *g_radial += f * p->spiky_k * (0.5f / dist) * (j0 - j1);
}

/* The same shell for Wendland C2 (K = poly6_k, K_s = spiky_k, a = 1 − q/h, u = h − q), from the
 * plane's integral P(q) = ∫_q^h W(R) R dR = K h² a⁵ (1 − 3a/2 + 4a²/7) and, for the radial part
 * ∫ K_s (u/h)³ (D² − s² + q²) q dq / 2D, with c = D² − s²:
 *   Σ W   = (2π s / D)(1/(2r)²) [P(q₀) − P(q₁)]
 *   Σ ∇W  = (2π s / D)(1/(2r)²) (K_s / (2D h³)) [J(u₀) − J(u₁)] n,
 *           J(u) = u⁴ ((c + h²) h/4 − (c + 3h²) u/5 + h u²/2 − u³/7)
 * (tests/test_wendland.c checks both against a quadrature over the shell). */
PBF_KERNEL_COLD void pbf_ghost_shell_wendland(float s, float dist, const pbf_params *p,
                                              float *w_sum, float *g_radial) {
    float q0 = fabsf(dist - s);
    if (q0 >= p->h) return;
    float q1 = pbf_minf(dist + s, p->h);
    float f = 6.2831853f * s / (dist * 4.0f * p->radius * p->radius);
    float inv_h = 1.0f / p->h;
    float a0 = 1.0f - q0 * inv_h, a1 = pbf_pos(1.0f - q1 * inv_h);
    float p0 = a0 * a0 * a0 * a0 * a0 * (1.0f - 1.5f * a0 + (4.0f / 7.0f) * a0 * a0);
    float p1 = a1 * a1 * a1 * a1 * a1 * (1.0f - 1.5f * a1 + (4.0f / 7.0f) * a1 * a1);
    *w_sum += f * p->poly6_k * p->h2 * (p0 - p1);
    float c = (dist - s) * (dist + s); /* D² − s² */
    float c1 = (c + p->h2) * p->h * 0.25f, c2 = (c + 3.0f * p->h2) * 0.2f;
    float u0 = p->h - q0, u1 = p->h - q1;
    float j0 = u0 * u0 * u0 * u0 * (c1 - c2 * u0 + 0.5f * p->h * u0 * u0 - u0 * u0 * u0 / 7.0f);
    float j1 = u1 * u1 * u1 * u1 * (c1 - c2 * u1 + 0.5f * p->h * u1 * u1 - u1 * u1 * u1 / 7.0f);
    *g_radial += f * p->spiky_k * (0.5f / dist) * inv_h * inv_h * inv_h * (j0 - j1);
}

/* The world's pair's shell. */
PBF_KERNEL_INLINE void pbf_ghost_shell(float s, float dist, const pbf_params *p, float *w_sum,
                                       float *g_radial) {
    if (p->kernel)
        pbf_ghost_shell_wendland(s, dist, p, w_sum, g_radial);
    else
        pbf_ghost_shell_paper(s, dist, p, w_sum, g_radial);
}

/* Adds the sphere's ghost density (kg/m³) to *rho and its ∇C term (×V, as pbf_boundary_terms)
 * to *grad, for a particle at x: ghost shells at R − r, R − 3r, ... (rest fluid behind the
 * surface, like the planes of the walls, but curved with the sphere). */
PBF_KERNEL_INLINE void pbf_tool_boundary(pbf_v3 x, const pbf_tool_params *t, const pbf_params *p,
                                         float *rho, pbf_v3 *grad) {
    pbf_v3 d = v3_sub(x, t->center);
    float dist = v3_len(d);
    float s_top = t->radius - p->radius, spacing = 2.0f * p->radius;
    if (dist - s_top >= p->h || dist <= 1e-6f * t->radius) return;
    /* the first shell in reach: s < dist + h */
    float skip = s_top - (dist + p->h);
    float s = skip > 0.0f ? s_top - spacing * ceilf(skip / spacing) : s_top;
    float w_sum = 0.0f, g = 0.0f;
    for (; s > 0.0f && dist - s < p->h; s -= spacing) pbf_ghost_shell(s, dist, p, &w_sum, &g);
    *rho += p->mass * w_sum;
    *grad = v3_madd(*grad, d, g * p->volume / dist);
}

/* pbf_lambda_end with the tool's boundary terms added. */
PBF_KERNEL_INLINE float pbf_lambda_end_tool(const pbf_lambda_acc *a, pbf_v3 xi, const pbf_params *p,
                                            const pbf_solid *solids, const pbf_tool_params *t,
                                            float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    pbf_tool_boundary(xi, t, p, &rho_b, &grad_b);
    return pbf_lambda_finish(a, rho_b, grad_b, p, density);
}

/* pbf_lambda_end_phase with the tool's boundary terms added. */
PBF_KERNEL_INLINE float pbf_lambda_end_tool_phase(const pbf_lambda_acc *a, pbf_v3 xi, float w_i,
                                                  const pbf_params *p, const pbf_solid *solids,
                                                  const pbf_tool_params *t, float *density) {
    float rho_b;
    pbf_v3 grad_b;
    pbf_boundary_terms(xi, p, solids, &rho_b, &grad_b);
    pbf_tool_boundary(xi, t, p, &rho_b, &grad_b);
    return pbf_lambda_finish_phase(a, rho_b, grad_b, w_i, p, density);
}

/* Projects x out of the sphere to |x − c| = R + r, then back into the domain box (wall_clear
 * from each wall). A particle at the very centre leaves upwards. */
PBF_KERNEL_INLINE pbf_v3 pbf_tool_project(pbf_v3 x, const pbf_tool_params *t, const pbf_params *p) {
    pbf_v3 d = v3_sub(x, t->center);
    float reach = t->radius + p->radius;
    float len2 = v3_dot(d, d);
    if (len2 < reach * reach) {
        float len = sqrtf(len2);
        pbf_v3 n = len > 1e-6f * reach ? v3_scale(d, 1.0f / len) : v3(0.0f, 1.0f, 0.0f);
        x = v3_madd(t->center, n, reach);
    }
    float r = p->wall_clear;
    x.x = pbf_minf(pbf_maxf(x.x, p->wall_lo.x + r), p->wall_hi.x - r);
    x.y = pbf_minf(pbf_maxf(x.y, p->wall_lo.y + r), p->wall_hi.y - r);
    x.z = pbf_minf(pbf_maxf(x.z, p->wall_lo.z + r), p->wall_hi.z - r);
    return x;
}

/* The tool's part of a Δp pass, after pbf_delta_end gave x_new for the particle that started the
 * pass at xi with λ_i: the tool's ghost term λ_i ∇C|tool (evaluated at xi like the other
 * boundary terms), then the projection. *moved receives the displacement the tool caused. */
PBF_KERNEL_INLINE pbf_v3 pbf_tool_delta(pbf_v3 x_new, pbf_v3 xi, float lambda_i,
                                        const pbf_tool_params *t, const pbf_params *p,
                                        pbf_v3 *moved) {
    pbf_v3 x = x_new;
    if (lambda_i != 0.0f) {
        float rho = 0.0f;
        pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
        pbf_tool_boundary(xi, t, p, &rho, &g);
        x = v3_madd(x, g, lambda_i);
    }
    x = pbf_tool_project(x, t, p);
    *moved = v3_sub(x, x_new);
    return x;
}

/* W_adh of seed 004 eq. 13 (C_d = 27/4) at distance d from the centre: zero outside [A, B],
 * minimum −1 at two thirds of the way from A to B. */
PBF_KERNEL_INLINE float pbf_tool_adhesion_kernel(float d, float a, float b, float inv_q) {
    if (d < a || d > b) return 0.0f;
    float s = (d - a) * inv_q;
    return 6.75f * (s * s * s - s * s);
}

/* Adhesion and damping between the tool and the particle at x with velocity v and density rho:
 * *f_adh and *f_damp receive the forces ON the tool (N); returns the particle's velocity after
 * the opposite impulse over dt. */
PBF_KERNEL_INLINE pbf_v3 pbf_tool_couple(pbf_v3 x, pbf_v3 v, float rho, const pbf_tool_params *t,
                                         const pbf_params *p, pbf_v3 *f_adh, pbf_v3 *f_damp) {
    pbf_v3 r = v3_sub(t->center, x); /* r_j = c − x_j */
    float len = v3_len(r);
    pbf_v3 fa = v3(0.0f, 0.0f, 0.0f), fd = v3(0.0f, 0.0f, 0.0f);
    if (t->adh_k != 0.0f && len >= t->adh_a && len <= t->adh_b && len > 0.0f) {
        float vol = p->mass / (rho > 0.0f ? rho : p->rest_density); /* m_j / ρ_j */
        float w = pbf_tool_adhesion_kernel(len, t->adh_a, t->adh_b, t->adh_inv_q);
        fa = v3_scale(r, t->adh_k * vol * w / len);
    }
    if (t->damp > 0.0f && len < t->contact) fd = v3_scale(v3_sub(t->velocity, v), -t->damp);
    *f_adh = fa;
    *f_damp = fd;
    return v3_madd(v, v3_add(fa, fd), -p->dt / p->mass);
}

/* ---------------------------------------------------------------------------------------------
 * Diffuse particles: spray, foam and bubbles (Ihmsen et al. 2012; include/pbf/diffuse.h). */

/* The radially symmetric weight W̃(r) = 1 − r/h of the potentials, 0 beyond h. */
PBF_KERNEL_INLINE float pbf_diffuse_weight(float r, float h) { return r < h ? 1.0f - r / h : 0.0f; }

/* Φ(I, lo, hi) = (min(I, hi) − min(I, lo)) / (hi − lo): 0 below lo, 1 above hi. */
PBF_KERNEL_INLINE float pbf_diffuse_clamp(float I, float lo, float hi) {
    return (pbf_minf(I, hi) - pbf_minf(I, lo)) / (hi - lo);
}

/* One neighbour's share of the trapped-air potential: |v_ij| (1 − v̂_ij · x̂_ij) W̃, with
 * x_ij = x_i − x_j at distance r > 0 and v_ij = v_i − v_j. */
PBF_KERNEL_INLINE float pbf_trapped_air_term(pbf_v3 xij, float r, pbf_v3 vij, float h) {
    float vl = v3_len(vij);
    if (!(vl > 0.0f) || !(r > 0.0f)) return 0.0f;
    return vl * (1.0f - v3_dot(vij, xij) / (vl * r)) * pbf_diffuse_weight(r, h);
}

/* One neighbour's share of the wave-crest curvature: (1 − n̂_i · n̂_j) W̃ when j lies behind
 * i's surface normal (x_j − x_i) · n̂_i < 0 (a convex surface), else 0. xji = x_j − x_i. */
PBF_KERNEL_INLINE float pbf_wave_crest_term(pbf_v3 ni, pbf_v3 nj, pbf_v3 xji, float r, float h) {
    if (v3_dot(xji, ni) >= 0.0f) return 0.0f;
    return (1.0f - v3_dot(ni, nj)) * pbf_diffuse_weight(r, h);
}

/* A counter-based hash (a 32-bit finalizer over three words) to a float in [0, 1): the same
 * draw for the same particle id, substep and channel, whatever the thread count. */
PBF_KERNEL_INLINE uint32_t pbf_diffuse_mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
PBF_KERNEL_INLINE float pbf_diffuse_random(uint32_t id, uint32_t step, uint32_t channel) {
    uint32_t h = pbf_diffuse_mix(id * 0x9e3779b9u ^ pbf_diffuse_mix(step + 0x632be5abu));
    h = pbf_diffuse_mix(h ^ (channel * 0x85ebca6bu + 0x27d4eb2fu));
    return (float)(h >> 8) * (1.0f / 16777216.0f);
}

/* A diffuse particle removed at the next compaction (a kind beside pbf_diffuse_kind's). */
#define PBF_DIFFUSE_DEAD 255u
/* A fluid particle is at the surface when its colour-field gradient, scaled by h, exceeds this
 * (a flat free surface gives about 1.5, the inside about 0). */
#define PBF_DIFFUSE_SURFACE_GRADIENT 0.5f
/* The wave-crest potential counts only a particle moving along its normal (Ihmsen's δ_vn). */
#define PBF_DIFFUSE_CREST_ALIGNMENT 0.6f

/* The fluid around a diffuse particle: its neighbours within h and their W̃-weighted velocity. */
typedef struct pbf_diffuse_fluid {
    pbf_v3 vf; /* Σ W̃ v_j */
    float wsum; /* Σ W̃ */
    int count;
} pbf_diffuse_fluid;

PBF_KERNEL_INLINE pbf_diffuse_fluid pbf_diffuse_fluid_begin(void) {
    pbf_diffuse_fluid f;
    f.vf = v3(0.0f, 0.0f, 0.0f);
    f.wsum = 0.0f;
    f.count = 0;
    return f;
}

/* Fluid particle j at d = x − x_j moving at vj: counted when within h (h2 = h²). */
PBF_KERNEL_INLINE void pbf_diffuse_fluid_add(pbf_diffuse_fluid *f, pbf_v3 d, pbf_v3 vj, float h,
                                             float h2) {
    float r2 = v3_dot(d, d);
    if (r2 >= h2) return;
    float wt = pbf_diffuse_weight(sqrtf(r2), h);
    ++f->count;
    f->wsum += wt;
    f->vf = v3_madd(f->vf, vj, wt);
}

/* A diffuse particle's substep from x with velocity *v (include/pbf/diffuse.h, "Motion"):
 * classified by the fluid around it (spray, foam or bubble), moved and walked against the solids
 * and the walls at the substep's end (pbf_diffuse_collide). Returns its new position and updates
 * *v, *life and *kind (PBF_DIFFUSE_DEAD: a droplet that landed, or foam whose life ran out).
 * damp = 1 − e^(−drag dt), computed once by the caller. */
PBF_KERNEL_INLINE pbf_v3 pbf_diffuse_advect(pbf_v3 x, pbf_v3 *v, float *life, uint8_t *kind,
                                            pbf_diffuse_fluid f, const pbf_diffuse_def *d,
                                            float damp, const pbf_params *P, const pbf_solid *S) {
    const float dt = P->dt;
    pbf_v3 vel = *v, vf = f.vf;
    if (f.wsum > 0.0f) vf = v3_scale(vf, 1.0f / f.wsum);
    uint8_t k;
    float lf = *life;
    if (f.count < d->spray_neighbors) {
        k = PBF_DIFFUSE_SPRAY;
        vel = v3_madd(vel, P->gravity, dt);
    } else if (f.count > d->bubble_neighbors) {
        k = PBF_DIFFUSE_BUBBLE;
        vel = v3_madd(vel, P->gravity, -d->buoyancy * dt);
        vel = v3_madd(vel, v3_sub(vf, vel), damp);
    } else {
        k = PBF_DIFFUSE_FOAM;
        vel = vf;
        lf -= dt;
    }
    int contact;
    pbf_v3 xn = pbf_diffuse_collide(x, v3_madd(x, vel, dt), P, S, &contact);
    if (contact && k == PBF_DIFFUSE_SPRAY) /* a droplet that lands on a solid joins it */
        k = PBF_DIFFUSE_DEAD;
    else if (contact) /* foam and bubbles slide: the part of the move into the solid is gone */
        vel = v3_scale(v3_sub(xn, x), 1.0f / dt);
    if (!(lf > 0.0f)) k = PBF_DIFFUSE_DEAD;
    *v = vel;
    *life = lf;
    *kind = k;
    return xn;
}

/* A fluid particle's colour-field gradient: neighbour j at d = x_i − x_j adds ∇W(d). */
PBF_KERNEL_INLINE pbf_v3 pbf_diffuse_normal_add(pbf_v3 gsum, pbf_v3 d, const pbf_params *P) {
    return v3_add(gsum, pbf_spiky_grad(d, v3_len(d), P));
}

/* The outward unit surface normal from the gradient's sum (0 inside the fluid). */
PBF_KERNEL_INLINE pbf_v3 pbf_diffuse_normal_end(pbf_v3 gsum, const pbf_params *P) {
    pbf_v3 nrm = v3_scale(gsum, -P->volume * P->h);
    float len = v3_len(nrm);
    return len > PBF_DIFFUSE_SURFACE_GRADIENT ? v3_scale(nrm, 1.0f / len) : v3(0.0f, 0.0f, 0.0f);
}

/* The kinetic potential Φ_k of a fluid particle moving at vi: 0 spawns nothing. */
PBF_KERNEL_INLINE float pbf_diffuse_kinetic(pbf_v3 vi, const pbf_diffuse_def *d) {
    float energy = 0.5f * v3_dot(vi, vi);
    return pbf_diffuse_clamp(energy, d->energy_min, d->energy_max);
}

/* Whether a fluid particle with normal ni moving at vi is a crest: at the surface and moving
 * along its normal. */
PBF_KERNEL_INLINE int pbf_diffuse_crest(pbf_v3 vi, pbf_v3 ni) {
    float speed = v3_len(vi);
    return v3_dot(ni, ni) > 0.0f && speed > 0.0f &&
           v3_dot(vi, ni) >= PBF_DIFFUSE_CREST_ALIGNMENT * speed;
}

/* Neighbour j's share of fluid particle i's potentials: xij = x_i − x_j, vij = v_i − v_j, nj
 * its normal; the wave crest's only when i is a crest and j at the surface. */
PBF_KERNEL_INLINE void pbf_diffuse_potentials_add(float *ta, float *wc, pbf_v3 xij, pbf_v3 vij,
                                                  pbf_v3 ni, pbf_v3 nj, int crest, float h) {
    float r = v3_len(xij);
    *ta += pbf_trapped_air_term(xij, r, vij, h);
    if (crest && v3_dot(nj, nj) > 0.0f)
        *wc += pbf_wave_crest_term(ni, nj, v3_scale(xij, -1.0f), r, h);
}

/* How many diffuse particles fluid particle `id` spawns in the substep `step` (the diffuse
 * substeps' counter) of dt: Φ_k (k_ta Φ_ta + k_wc Φ_wc) dt, the fraction by a draw; at most
 * 1000. */
PBF_KERNEL_INLINE int32_t pbf_diffuse_spawn_count(float phi_k, float ta, float wc,
                                                  const pbf_diffuse_def *d, float dt, uint32_t id,
                                                  uint32_t step) {
    float rate =
        d->trapped_air_rate * pbf_diffuse_clamp(ta, d->trapped_air_min, d->trapped_air_max) +
        d->wave_crest_rate * pbf_diffuse_clamp(wc, d->wave_crest_min, d->wave_crest_max);
    float expected = phi_k * rate * dt;
    float draw = pbf_diffuse_random(id, step, 0u);
    float count = floorf(expected + draw);
    return count > 1000.0f ? 1000 : (int32_t)count;
}

/* The kind a fluid particle with `neighbors` neighbours gives the particles it spawns. */
PBF_KERNEL_INLINE uint8_t pbf_diffuse_born_kind(int neighbors, const pbf_diffuse_def *d) {
    return neighbors < d->spray_neighbors ? PBF_DIFFUSE_SPRAY : PBF_DIFFUSE_FOAM;
}

/* The frame new diffuse particles are placed in around a fluid particle moving at vi: its
 * direction of motion (up when at rest) and two unit vectors across it. */
typedef struct pbf_diffuse_frame {
    pbf_v3 axis, e1, e2;
    float speed;
} pbf_diffuse_frame;

PBF_KERNEL_INLINE pbf_diffuse_frame pbf_diffuse_frame_of(pbf_v3 vi) {
    pbf_diffuse_frame f;
    f.speed = v3_len(vi);
    f.axis = f.speed > 0.0f ? v3_scale(vi, 1.0f / f.speed) : v3(0.0f, 1.0f, 0.0f);
    pbf_v3 other = fabsf(f.axis.x) < 0.9f ? v3(1.0f, 0.0f, 0.0f) : v3(0.0f, 1.0f, 0.0f);
    f.e1 = v3_cross(f.axis, other);
    f.e1 = v3_scale(f.e1, 1.0f / v3_len(f.e1));
    f.e2 = v3_cross(f.axis, f.e1);
    return f;
}

/* Where fluid particle `id` at xi places its k-th new diffuse particle of substep `step`: in a
 * cylinder of radius r around it, reaching one substep's travel along its velocity (Ihmsen's
 * sampling), born outside the solids and inside the walls. */
PBF_KERNEL_INLINE pbf_v3 pbf_diffuse_place(pbf_v3 xi, const pbf_diffuse_frame *f, uint32_t id,
                                           uint32_t step, int k, const pbf_params *P,
                                           const pbf_solid *S) {
    const float two_pi = 6.28318530718f;
    uint32_t c = 1u + 3u * (uint32_t)k;
    float rr = P->radius * sqrtf(pbf_diffuse_random(id, step, c));
    float th = two_pi * pbf_diffuse_random(id, step, c + 1u);
    float along = pbf_diffuse_random(id, step, c + 2u) * f->speed * P->dt;
    pbf_v3 x = v3_madd(xi, f->e1, rr * cosf(th));
    x = v3_madd(x, f->e2, rr * sinf(th));
    x = v3_madd(x, f->axis, along);
    x = pbf_collide(x, P, S); /* born outside the solids, inside the walls */
    if (pbf_inside_analytic_solid(x, P, S)) x = xi; /* as pbf_diffuse_collide */
    return x;
}

#endif /* PBF_KERNELS_H */
