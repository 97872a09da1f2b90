/* The plain data that the per-particle math (kernels.h) and the world's state (world_state.h)
 * share: small vector helpers on the public pbf_vec3, the solids in the form the kernels use, and
 * pbf_params, the constants of a pass. A file that only holds or fills these needs this header,
 * not the math: kernels.h includes it. Same layout on host and device. */
#ifndef PBF_PARAMS_H
#define PBF_PARAMS_H

#include <math.h>

#include "pbf/pbf.h"

#define PBF_KERNEL_INLINE PBF_HD static inline
/* PBF_KERNEL_COLD: a function off the default path (the Wendland pair's wall sums), kept out of
 * line on the CPU so that it does not grow the hot passes that call it. PBF_KERNEL_HOT: one on
 * that path that GCC stopped inlining into the Δp pass when kernels.h grew. */
#if defined(__GNUC__) && !defined(__CUDACC__)
#define PBF_KERNEL_COLD static __attribute__((noinline, cold))
#define PBF_KERNEL_HOT static inline __attribute__((always_inline))
#else
#define PBF_KERNEL_COLD PBF_KERNEL_INLINE
#define PBF_KERNEL_HOT PBF_KERNEL_INLINE
#endif

/* ---------------------------------------------------------------------------------------------
 * Small vector helpers on the public pbf_vec3 (a plain struct: the same layout in C and CUDA). */

typedef pbf_vec3 pbf_v3;

PBF_KERNEL_INLINE pbf_v3 v3(float x, float y, float z) {
    pbf_v3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}
PBF_KERNEL_INLINE pbf_v3 v3_add(pbf_v3 a, pbf_v3 b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
PBF_KERNEL_INLINE pbf_v3 v3_sub(pbf_v3 a, pbf_v3 b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
PBF_KERNEL_INLINE pbf_v3 v3_scale(pbf_v3 a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
PBF_KERNEL_INLINE float v3_dot(pbf_v3 a, pbf_v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
PBF_KERNEL_INLINE pbf_v3 v3_cross(pbf_v3 a, pbf_v3 b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
PBF_KERNEL_INLINE float v3_len(pbf_v3 a) { return sqrtf(v3_dot(a, a)); }
/* a + s*b */
PBF_KERNEL_INLINE pbf_v3 v3_madd(pbf_v3 a, pbf_v3 b, float s) {
    return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
PBF_KERNEL_INLINE pbf_v3 v3_load(const float *a, int i) {
    return v3(a[3 * i], a[3 * i + 1], a[3 * i + 2]);
}
PBF_KERNEL_INLINE void v3_store(float *a, int i, pbf_v3 v) {
    a[3 * i] = v.x;
    a[3 * i + 1] = v.y;
    a[3 * i + 2] = v.z;
}

/* max and min as a > b ? a : b, without a branch, for per-particle (scalar) code such as the
 * wall clamp. On x86 the compiler keeps the compare-and-jump form in scalar code (fmaxf/fminf
 * are even library calls, for their NaN rules), which mispredicts when the choice is
 * data-dependent; maxss/minss compute exactly a > b ? a : b (and a < b ? a : b). The pair
 * functions use plain selects instead (pbf_pos): they run in vectorized loops. */
#if !defined(__CUDA_ARCH__) && (defined(__SSE__) || defined(__x86_64__))
#include <xmmintrin.h>
PBF_KERNEL_INLINE float pbf_maxf(float a, float b) {
    return _mm_cvtss_f32(_mm_max_ss(_mm_set_ss(a), _mm_set_ss(b)));
}
PBF_KERNEL_INLINE float pbf_minf(float a, float b) {
    return _mm_cvtss_f32(_mm_min_ss(_mm_set_ss(a), _mm_set_ss(b)));
}
#else
PBF_KERNEL_INLINE float pbf_maxf(float a, float b) { return a > b ? a : b; }
PBF_KERNEL_INLINE float pbf_minf(float a, float b) { return a < b ? a : b; }
#endif

/* ---------------------------------------------------------------------------------------------
 * Solids: the domain walls and the colliders, as signed distance functions. */

#define PBF_MAX_SOLIDS 64

enum { PBF_SOLID_SPHERE = 0, PBF_SOLID_BOX = 1, PBF_SOLID_CAPSULE = 2, PBF_SOLID_MESH = 3 };

/* A collider in the form the kernels use (same layout on host and device). */
typedef struct pbf_solid {
    int type;
    pbf_v3 a; /* sphere/box centre, capsule end a; a mesh's position */
    pbf_v3 b; /* box half extents, capsule end b */
    float radius; /* sphere/capsule radius */
    float adhesion; /* work of adhesion with the fluid, N/m (pbf_collider_def.adhesion) */
    float friction; /* Coulomb friction coefficient μ (pbf_collider_def.friction) */
    /* PBF_SOLID_MESH ("Mesh solids" below): x_world = R x_local + a, R row-major, and the
     * field baked in the local frame. NULL for the analytic solids. */
    float rot[9];
    const struct pbf_field *field;
} pbf_solid;

/* Entries of the adhesion profile table (pbf_params.adh_table), over distances [0, h]. */
#define PBF_ADH_TABLE 64

/* Everything a pass needs besides the particle arrays. Plain old data: it is copied as is into
 * CUDA constant memory. */
typedef struct pbf_params {
    /* kernel */
    float h, h2;
    int kernel; /* pbf_kernel_pair: 0 the paper's pair, 1 Wendland C2 */
    float poly6_k; /* 315 / (64 π h^9) (Wendland C2: 21 / (2π h³)) */
    float spiky_k; /* -45 / (π h^6): spiky gradient magnitude factor (Wendland C2:
                           -210 / (π h⁵), the gradient's factor of the pair vector) */
    float w_self; /* W(0) */
    /* the Wendland pair's core (pbf_world_def.kernel_core, pbf_wendland_factor): its radius r0
     * (0: off), 1/r0 (0: off), and the signed gradient magnitude at r0, K_s (1 − r0/h)³ r0 */
    float core_r, core_inv_r, core_grad;
    /* fluid */
    float mass; /* kg */
    float rest_density; /* ρ0 */
    float inv_rest_density;
    float volume; /* V = m / ρ0 */
    /* constraint */
    float eps; /* absolute CFM ε = relaxation · S0 (1/m²) */
    int unilateral;
    float scorr_scale; /* k / S0: s_corr in the units of λ */
    float scorr_inv_q; /* 1 / (h² − Δq²): W(r)/W(Δq) = ((h² − r²) · this)³ */
    float scorr_gain; /* 1 / (1 − W(s)/W(Δq)), s = 2r the rest spacing (pbf_delta_coef) */
    float scorr_shift; /* W(s)/W(Δq) · scorr_gain: s_corr's shape is zero from r = s on */
    int scorr_n;
    float scorr_inv_deficit; /* 1/δ: s_corr's weight grows from 0 at ρ0 to 1 at (1 − δ) ρ0; 0:
                                weight 1 everywhere (pbf_scorr_weight) */
    /* velocity passes */
    float vorticity;
    float xsph;
    float impulse_blend; /* β: v = v* + ((1 − β) d + β d_prev)/dt (pbf_velocity_blend) */
    float step_bound; /* solver.step_weights: b of pbf_step_weight; 0: plain passes */
    float max_speed; /* 0: no limit */
    /* step */
    float dt, inv_dt;
    pbf_v3 gravity;
    /* boundaries: particle centres stay `radius` away from every solid surface */
    float radius;
    float wall_clear; /* the domain walls' collision distance, wall_clearance · r */
    pbf_v3 wall_lo, wall_hi; /* the domain box at the end of the current substep */
    int solid_count;
    /* materials (the "Materials" section below; docs/physics.md): all zero when off */
    int surface_tension_on;
    float st_cohesion; /* γ m: the cohesion term's factor (γ from σ, pbf__init_params) */
    float st_curvature; /* γ ρ0 / 1000: the curvature term's factor */
    float coh_k; /* 32 / (π h^9) */
    float coh_h6; /* h^6 / 64 */
    float normal_scale; /* h m: n_i = h Σ_j (m/ρ_j) ∇W_ij, pointing into the fluid */
    int adhesion_on;
    float wall_adhesion; /* N/m */
    float adhesion_scale; /* 1 / (ρ0 ∫ s T(s) ds): Δv = −dt W · this · T(d) n per N/m of W */
    float adh_inv_step; /* PBF_ADH_TABLE / h */
    float adh_table[PBF_ADH_TABLE + 1]; /* T(d) at d = k h / PBF_ADH_TABLE (m³/m³·1/m: 1/m) */
    int friction_on;
    float wall_friction;
    /* viscosity and surface drag ("Viscosity for thick fluids" below): zero when off */
    int viscosity_on;
    float visc_k; /* 10 ν V (m⁵/s), calibrated on the rest lattice (pbf_visc_pair) */
    float visc_eps; /* 0.01 h² */
    float visc_wall_k; /* −π visc_k K_s / s²: the walls' term (pbf_visc_wall); 0: free-slip */
    float surface_drag; /* c, 1/s */
    float drag_inv_span; /* 1 / (ρ0 − ρ_top), ρ_top the rest lattice's top layer's density */
    /* several fluids (the "Several fluids" section below): phases_on 0 leaves them unused */
    int phases_on;
    float phase_inv_mass[PBF_MAX_PHASES]; /* w_k = m_ref / m_k = ρ_ref / ρ0_k */
    float phase_mass_ratio[PBF_MAX_PHASES]; /* m_k / m_ref = ρ0_k / ρ_ref */
    float phase_gravity[PBF_MAX_PHASES]; /* the fluid's gravity scale */
    float phase_xsph[PBF_MAX_PHASES]; /* the fluid's XSPH c */
} pbf_params;

/* The tool's constants for its per-particle functions (kernels.h, "The tool"). */
typedef struct pbf_tool_params {
    int active; /* 0: no tool; every function below is then never called */
    pbf_v3 center; /* c at the end of the current substep, m */
    pbf_v3 velocity; /* v_t over the current substep, m/s */
    float radius; /* R, m */
    float adh_k; /* K̄ = (K_tool + K_fluid)/2, N/m³ */
    float adh_a; /* A, m from the centre */
    float adh_b; /* B, m from the centre */
    float adh_inv_q; /* 1 / (B − A) */
    float damp; /* κ, kg/s per particle in contact */
    float contact; /* contact distance from the centre, R + 2r, m */
} pbf_tool_params;

#endif /* PBF_PARAMS_H */
