/* The largest eigenvalue of the plain Jacobi step of the density constraint on the rest lattice
 * (pbf_solver_def.step_weights; kernels.h, pbf_step_weight; docs/physics.md, "Step weights").
 *
 * Linearized about the rest lattice (spacing s = 2r, where Σ_j ∇W_ij = 0), a displacement
 * u_i = û e^{i k·x_i} changes C_i by i V G(k)·û with G(k) = Σ_j ∇W(r_j) sin(k·r_j), the sum
 * over the lattice's neighbours r_j of a particle. λ_i = −C_i / D, D = V² Σ_j |∇W(r_j)|² (1 + ε)
 * (the lattice's denominator with the relaxation), and the Δp pass moves the particle by
 * V Σ_j (λ_i + λ_j) ∇W_ij, which is −V² G (G·û) / D: the plain step removes μ(k) =
 * |G(k)|² / (Σ_j |∇W(r_j)|² (1 + ε)) of the longitudinal mode k, and nothing of the others.
 * Above μ = 2 a plain pass overshoots that mode by more than it had. The scan takes the
 * largest μ over a grid of k in the lattice's Brillouin zone [0, π/s]³ (k_x ≥ k_y ≥ k_z: the
 * lattice's symmetry); it finds 2.68 for the paper pair at h = 4r and 3.66 for Wendland C2 at
 * h = 5r, with the default ε 0.05 (tests/test_step_weights.c). */
#include <math.h>

#include "kernels.h"
#include "world_state.h"

#define PI_D 3.14159265358979323846
#define SCAN 16 /* k points per axis: the maximum moves by under 0.5 % from 16 to 24 */

float pbf__jacobi_bound(const pbf_params *p, double spacing, double relaxation) {
    const int reach = (int)ceil(p->h / spacing);
    double g2 = 0.0;
    for (int a = -reach; a <= reach; ++a)
        for (int b = -reach; b <= reach; ++b)
            for (int c = -reach; c <= reach; ++c) {
                pbf_v3 x = v3((float)(a * spacing), (float)(b * spacing), (float)(c * spacing));
                float r2 = v3_dot(x, x);
                pbf_v3 g = pbf_spiky_grad(x, sqrtf(r2), p);
                g2 += v3_dot(g, g);
            }
    double best = 0.0;
    for (int ka = 0; ka <= SCAN; ++ka)
        for (int kb = 0; kb <= ka; ++kb)
            for (int kc = 0; kc <= kb; ++kc) {
                const double qa = PI_D * ka / SCAN, qb = PI_D * kb / SCAN, qc = PI_D * kc / SCAN;
                double G[3] = {0.0, 0.0, 0.0};
                for (int a = -reach; a <= reach; ++a)
                    for (int b = -reach; b <= reach; ++b)
                        for (int c = -reach; c <= reach; ++c) {
                            pbf_v3 x = v3((float)(a * spacing), (float)(b * spacing),
                                          (float)(c * spacing));
                            float r2 = v3_dot(x, x);
                            if (!(r2 > 0.0f && r2 < p->h2)) continue;
                            pbf_v3 g = pbf_spiky_grad(x, sqrtf(r2), p);
                            const double sn = sin(qa * a + qb * b + qc * c);
                            G[0] += g.x * sn, G[1] += g.y * sn, G[2] += g.z * sn;
                        }
                const double mu =
                    (G[0] * G[0] + G[1] * G[1] + G[2] * G[2]) / (g2 * (1.0 + relaxation));
                best = mu > best ? mu : best;
            }
    return (float)best;
}
