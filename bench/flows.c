/* The standing wave and the joined vessels of docs/physics.md ("What dissipates energy"), with
 * their measures and the energy audit:
 *   wave:    period against linear theory, the amplitude of each half swing, and where the
 *            energy went (the stages' shares of the loss over the run, pbf_energy_audit);
 *   vessels: the level difference every 0.25 s and its mean over the last second.
 *
 * usage: pbf_flows wave|vessels [--radius R] [--periods P | --seconds S] [--iterations N]
 *                  [--target-error PERCENT] [--artificial on|off] [--threads T]
 *                  [--substeps N] [--unilateral on|off] [--amplitude A] [--length L]
 *                  [--depth H] [--layers N] [--mode N] [--kernel-scale H] [--kernel-core C]
 *                  [--chebyshev on|off]
 *                  [--clearance C] [--kernel paper|wendland] [--relaxation E]
 *                  [--impulse-blend B] [--xsph C] [--vorticity E] [--scorr-k K]
 *                  [--scorr-deficit D] [--scorr-reach F] [--scorr-iterations N]
 *                  [--step-weights plain|chebyshev]
 * (--amplitude, --length, --depth and --layers: the wave's starting amplitude in m, default
 * 0.02, the tank's length and the water's depth at rest in m, defaults 0.4 and 0.2, and the
 * tank's thickness in particles, default 4; --mode: the sloshing mode n, k = nπ/L, default 1;
 * --kernel-scale: h in particle radii, default 4; --kernel-core: fluid.kernel_core, default 0;
 * --chebyshev off: plain Jacobi iterations; --clearance: the domain walls' collision distance
 * in particle radii, default 1; --kernel: the density kernel pair, default paper;
 * --relaxation: the constraint relaxation ε as a fraction of the rest lattice's Σ|∇C|²,
 * default 0.05; --impulse-blend, --xsph, --vorticity, --scorr-k, --scorr-deficit,
 * --scorr-reach, --scorr-iterations: solver.impulse_blend, solver.xsph, solver.vorticity,
 * solver.scorr.k, solver.scorr.deficit, solver.scorr.reach and solver.scorr.iterations,
 * defaults 0, 0.01, 0.02, 0.1, 0.05 (0: s_corr at every density), 1 and 4;
 * --step-weights: solver.step_weights, default plain)
 * bench/flows.sh runs the table of docs/physics.md. */
#include <string.h>

#include "../bench/flows_setup.h"

static int usage(void) {
    fprintf(stderr, "usage: pbf_flows wave|vessels [--radius R] [--periods P | --seconds S] "
                    "[--iterations N] [--target-error PERCENT] [--artificial on|off] "
                    "[--threads T] [--substeps N] [--unilateral on|off] [--amplitude A] "
                    "[--length L] [--depth H] [--layers N] [--mode N] [--kernel-scale H] "
                    "[--kernel-core C] [--chebyshev on|off] [--clearance C] "
                    "[--kernel paper|wendland] [--relaxation E] [--impulse-blend B] [--xsph C] "
                    "[--vorticity E] "
                    "[--scorr-k K] [--scorr-deficit D] [--scorr-reach F] [--scorr-iterations N] "
                    "[--step-weights plain|chebyshev]\n");
    return 2;
}

static int run_wave(const pbf_world_def *d, float r, double periods) {
    int n = 0;
    double depth = 0.0;
    pbf_world *w = wave_create(d, r, &n, &depth);
    if (w == NULL) return 1;
    if (pbf_world_set_energy_audit(w, 1) != PBF_OK) {
        fprintf(stderr, "pbf_flows: %s\n", pbf_world_error(w));
        return 1;
    }
    const double s = 2.0 * r, volume = s * s * s, theory = wave_theory_period();
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (x == NULL) return 1;
    pbf_world_get_positions(w, x);
    wave_track k;
    wave_track_start(&k, mode_amplitude(x, n, volume, depth));
    for (int i = 0; i < n; ++i) k.centre0 += x[3 * i + 1] / n;
    double change[PBF_ENERGY_COUNT] = {0}, e0 = 0.0, e_end = 0.0, iterations = 0.0;
    const int frames = (int)ceil(periods * theory * 60.0);
    for (int f = 1; f <= frames; ++f) {
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            fprintf(stderr, "pbf_flows: %s\n", pbf_world_error(w));
            return 1;
        }
        pbf_energy_audit a = pbf_world_get_energy_audit(w);
        if (f == 1) e0 = a.start;
        e_end = a.end;
        for (int j = 0; j < PBF_ENERGY_COUNT; ++j) change[j] += a.change[j];
        iterations += (double)pbf_world_get_profile(w).iterations / frames;
        pbf_world_get_positions(w, x);
        wave_track_add(&k, f / 60.0, mode_amplitude(x, n, volume, depth));
    }
    /* the end state's kinetic energy and centre height: a heated or swollen fluid shows here */
    float *v = malloc(sizeof(float) * 3 * (size_t)n);
    if (v == NULL) return 1;
    pbf_world_get_velocities(w, v);
    double ke = 0.0, cy = 0.0, cy0 = k.centre0;
    for (int i = 0; i < n; ++i) {
        ke +=
            0.5 * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
        cy += x[3 * i + 1] / n;
    }
    int fast = 0; /* particles faster than 0.05 m/s */
    for (int i = 0; i < n; ++i)
        fast += v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2] >
                0.0025f;
    free(v);
    printf("end: %d of %d particles faster than 0.05 m/s\n", fast, n);
    printf("particles %d, %.1f iterations per substep\n", n, iterations);
    printf("end: kinetic energy %.3e J/kg per particle mass, centre of mass %+.3f mm from the "
           "start\n",
           ke / n, 1e3 * (cy - cy0));
    printf("period %.4f s, theory %.4f s (%+.1f %%)\n", k.period, theory,
           100.0 * (k.period / theory - 1.0));
    printf("amplitude per half swing (A/A0):");
    for (int j = 0; j <= k.swings; ++j) printf(" %.3f", k.amp[j] / k.amp[0]);
    double ratio = k.swings > 0 ? pow(k.amp[k.swings] / k.amp[0], 1.0 / k.swings) : 0.0;
    printf("\nkept per half swing (geometric mean) %.3f\n", ratio);
    /* The same from a least-squares line through ln A over half swings 1..N (the start, a
     * cosine laid on a lattice, left out), with its standard error: less at the mercy of one
     * noisy peak, and with it the decay rate per second. */
    if (k.swings >= 3) {
        double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, m = k.swings;
        for (int j = 1; j <= k.swings; ++j) {
            double y = log(k.amp[j] / k.amp[0]);
            sx += j, sy += y, sxx += (double)j * j, sxy += j * y;
        }
        double vx = sxx - sx * sx / m, slope = (sxy - sx * sy / m) / vx, res = 0.0;
        for (int j = 1; j <= k.swings; ++j) {
            double e = log(k.amp[j] / k.amp[0]) - (sy / m + slope * (j - sx / m));
            res += e * e;
        }
        double se = sqrt(res / (m - 2.0) / vx);
        printf("kept per half swing (fit over half swings 1-%d) %.3f +- %.3f; decay rate %.3f +- "
               "%.3f 1/s\n",
               k.swings, exp(slope), exp(slope) * se, -2.0 * slope / k.period, 2.0 * se / k.period);
    }
    const char *names[] = {"prediction", "projection", "blend", "XSPH", "vorticity", "tool"};
    printf("energy: start %.5f J, end %.5f J, change %.5f J; by stage:\n", e0, e_end, e_end - e0);
    for (int j = 0; j < PBF_ENERGY_COUNT; ++j) printf("  %-11s %+.5f J\n", names[j], change[j]);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

static int run_vessels(const pbf_world_def *d, float r, double seconds) {
    int n = 0;
    pbf_world *w = vessels_create(d, r, &n);
    if (w == NULL) return 1;
    const double s = 2.0 * r, volume = s * s * s;
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (x == NULL) return 1;
    pbf_world_get_positions(w, x);
    const double start = level_difference(x, n, volume);
    printf("particles %d, level difference at 0 s: %.2f mm\n", n, 1e3 * start);
    const int frames = (int)lround(seconds * 60.0);
    double tail = 0.0, prev = start, peak = start, swing[8];
    int swings = 0;
    for (int f = 1; f <= frames; ++f) {
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            fprintf(stderr, "pbf_flows: %s\n", pbf_world_error(w));
            return 1;
        }
        pbf_world_get_positions(w, x);
        double dh = level_difference(x, n, volume);
        if (f % 15 == 0) printf("  %.2f s  %+.2f mm\n", f / 60.0, 1e3 * dh);
        if (f > frames - 60) tail += dh / 60.0;
        /* the extreme of each swing past level, from the frames between two level crossings */
        if ((dh > 0.0) != (prev > 0.0)) {
            if (swings < 8) swing[swings++] = peak;
            peak = 0.0;
        }
        if (fabs(dh) > fabs(peak)) peak = dh;
        prev = dh;
    }
    if (swings < 8) swing[swings++] = peak; /* the last swing, still under way */
    printf("swing extremes (mm):");
    for (int j = 1; j < swings; ++j) printf(" %+.2f", 1e3 * swing[j]);
    printf("\nfirst swing past level / start: %.3f\n", swings > 1 ? -swing[1] / start : 0.0);
    printf("mean over the last second: %+.2f mm (%.2f %% of the start)\n", 1e3 * tail,
           100.0 * fabs(tail) / start);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return usage();
    const int wave = strcmp(argv[1], "wave") == 0;
    if (!wave && strcmp(argv[1], "vessels") != 0) return usage();
    pbf_world_def d = pbf_default_world_def();
    float r = 0.005f;
    double periods = 5.0, seconds = 3.0;
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) return usage();
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--radius") == 0)
            r = (float)atof(v);
        else if (strcmp(k, "--periods") == 0)
            periods = atof(v);
        else if (strcmp(k, "--seconds") == 0)
            seconds = atof(v);
        else if (strcmp(k, "--iterations") == 0)
            d.solver.iterations = atoi(v);
        else if (strcmp(k, "--relaxation") == 0)
            d.solver.relaxation = (float)atof(v);
        else if (strcmp(k, "--target-error") == 0)
            d.solver.target_error = (float)atof(v);
        else if (strcmp(k, "--amplitude") == 0)
            wave_a = atof(v);
        else if (strcmp(k, "--depth") == 0)
            tank_h = atof(v);
        else if (strcmp(k, "--mode") == 0)
            wave_mode = atoi(v);
        else if (strcmp(k, "--length") == 0)
            tank_l = atof(v);
        else if (strcmp(k, "--layers") == 0)
            wave_layers = atoi(v);
        else if (strcmp(k, "--kernel-core") == 0)
            d.kernel_core = (float)atof(v);
        else if (strcmp(k, "--kernel-scale") == 0)
            d.kernel_scale = (float)atof(v);
        else if (strcmp(k, "--substeps") == 0)
            d.substeps = atoi(v);
        else if (strcmp(k, "--clearance") == 0)
            d.wall_clearance = (float)atof(v);
        else if (strcmp(k, "--kernel") == 0 && strcmp(v, "wendland") == 0)
            d.kernel = PBF_KERNEL_WENDLAND;
        else if (strcmp(k, "--unilateral") == 0 && strcmp(v, "off") == 0)
            d.solver.unilateral = 0;
        else if (strcmp(k, "--threads") == 0)
            d.threads = atoi(v);
        else if (strcmp(k, "--chebyshev") == 0 && strcmp(v, "off") == 0)
            d.solver.chebyshev = 0;
        else if (strcmp(k, "--artificial") == 0 && strcmp(v, "off") == 0)
            d.solver.scorr_k = d.solver.xsph = d.solver.vorticity = 0.0f;
        else if (strcmp(k, "--step-weights") == 0 && strcmp(v, "chebyshev") == 0)
            d.solver.step_weights = PBF_STEP_WEIGHTS_CHEBYSHEV;
        else if (strcmp(k, "--step-weights") == 0 && strcmp(v, "plain") == 0)
            d.solver.step_weights = PBF_STEP_WEIGHTS_PLAIN;
        else if (strcmp(k, "--impulse-blend") == 0)
            d.solver.impulse_blend = (float)atof(v);
        else if (strcmp(k, "--xsph") == 0)
            d.solver.xsph = (float)atof(v);
        else if (strcmp(k, "--vorticity") == 0)
            d.solver.vorticity = (float)atof(v);
        else if (strcmp(k, "--scorr-k") == 0)
            d.solver.scorr_k = (float)atof(v);
        else if (strcmp(k, "--scorr-deficit") == 0)
            d.solver.scorr_deficit = (float)atof(v);
        else if (strcmp(k, "--scorr-reach") == 0)
            d.solver.scorr_reach = (float)atof(v);
        else if (strcmp(k, "--scorr-iterations") == 0)
            d.solver.scorr_iterations = atoi(v);
        else if (strcmp(k, "--kernel") == 0 && strcmp(v, "paper") == 0)
            d.kernel = PBF_KERNEL_PAPER;
        else if ((strcmp(k, "--artificial") != 0 && strcmp(k, "--unilateral") != 0 &&
                  strcmp(k, "--chebyshev") != 0) ||
                 strcmp(v, "on") != 0)
            return usage();
    }
    if (!(r > 0.0f) || !(wave_a > 0.0) || !(tank_l > 0.0) || !(tank_h > 0.0) || wave_layers < 1 ||
        wave_mode < 1 || wave_mode > 10)
        return usage();
    return wave ? run_wave(&d, r, periods) : run_vessels(&d, r, seconds);
}
