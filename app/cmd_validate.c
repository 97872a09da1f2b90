/* `pbf validate spheric2|lobovsky`: runs a validation scene (scenes/validation/), compares its
 * probes (probes.csv) with the laboratory data (../shared/validation/, see its README) and writes
 * the metrics and the plots (docs/validation.md).
 *
 *   OUT/<resolution>/            the run: probes.csv, stats.csv, scene.json, metrics.csv
 *   OUT/metrics.md               the metrics of every resolution run so far, as Markdown tables
 *   OUT/heights.png, pressure.png, front.png   simulated (each resolution) against measured
 *   OUT/plot.gp, *.dat           the gnuplot script and its data (redraw: cd OUT && gnuplot plot.gp)
 *
 * Metrics (definitions in docs/validation.md):
 *   wetting time   first time a gauge (the level probe H*; the highest particle H*_top in the
 *                  "(column top)" rows) reads more than the case's threshold;
 *   height RMS     root mean square of simulated − measured height over the common time window,
 *                  the measurement interpolated at the simulated frames;
 *   front arrival  when the water reaches a position, read alike on both sides: a gauge's
 *                  wetting time there, or the first pressure on a wall sensor there;
 *   leading edge   first time the front probe (the leading particle) passes those positions;
 *   pressure       arrival (first time above a threshold), peak, and the mean over a window.
 * Measured quantities come from the data files only; nothing is typed in from a paper. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "pbf/export.h" /* pbf_write_file_atomic */
#include "pbf/scene.h"
#include "run.h"

/* =============================================================================================
 * The cases */

enum { MAX_SERIES = 2, MAX_HEIGHTS = 4, MAX_PRESSURES = 8, MAX_FRONTS = 4 };

typedef struct height_spec {
    const char *probe; /* column NAME_m of probes.csv */
    const char *measured[MAX_SERIES]; /* data columns (repetitions); NULL-terminated */
} height_spec;

typedef struct pressure_spec {
    const char *probe; /* NAME: columns NAME_Pa of probes.csv */
    const char *measured; /* data column */
    double w0, w1; /* window of the mean, in the data's time unit */
} pressure_spec;

/* A front arrival: where, and which measurement says when the water got there. The simulated
 * arrival is read the same way from the simulated probe `probe` (a gauge's H*_m, a sensor's
 * P*_Pa), so that both sides use one threshold at one place. */
typedef struct front_spec {
    double x; /* m, in the scene's frame */
    const char *label;
    int from_pressure; /* 1: the first pressure above p_arrive on `measured`; 0: wetting */
    const char *measured;
    const char *probe; /* the simulated probe at x */
} front_spec;

typedef struct case_spec {
    const char *name; /* the command's argument */
    const char *title;
    const char *scene[2]; /* coarse, fine: relative to the repository root */
    const char *level_file, *pressure_file; /* in the data folder */
    const char *time_col; /* the data's time column */
    double t_scale; /* data time units per simulated second */
    const char *t_label;
    double h_scale; /* data height units per metre */
    const char *h_label, *h_unit;
    double p_scale; /* data pressure units per Pa */
    const char *p_label, *p_unit;
    double wet; /* wetting threshold, data height units */
    double p_arrive; /* pressure arrival threshold, data pressure units */
    int front_sign; /* +1: the front moves towards +x */
    int nh, np, nf;
    height_spec h[MAX_HEIGHTS];
    pressure_spec p[MAX_PRESSURES];
    front_spec f[MAX_FRONTS];
    int plot_cols; /* pressure panels per row */
} case_spec;

#define LOBOVSKY_H 0.3
#define G 9.81
#define RHO 1000.0

static const case_spec CASES[] = {
    {"spheric2",
     "SPHERIC test 2 (MARIN 3D dam break with an obstacle)",
     {"scenes/validation/spheric2.json", "scenes/validation/spheric2_fine.json"},
     "spheric_test2_marin_3d.csv",
     "spheric_test2_marin_3d.csv",
     "t_s",
     1.0,
     "t (s)",
     1.0,
     "h (m)",
     "m",
     1.0,
     "p (Pa)",
     "Pa",
     0.02,
     1000.0,
     -1,
     4,
     8,
     3,
     {{"H1", {"H1_x0.496_m", NULL}},
      {"H2", {"H2_x0.992_m", NULL}},
      {"H3", {"H3_x1.488_m", NULL}},
      {"H4", {"H4_x2.638_m", NULL}}},
     {{"P1", "P1_Pa", 0.6, 1.2},
      {"P2", "P2_Pa", 0.6, 1.2},
      {"P3", "P3_Pa", 0.6, 1.2},
      {"P4", "P4_Pa", 0.6, 1.2},
      {"P5", "P5_Pa", 1.5, 2.5},
      {"P6", "P6_Pa", 1.5, 2.5},
      {"P7", "P7_Pa", 1.5, 2.5},
      {"P8", "P8_Pa", 1.5, 2.5}},
     {{1.488, "x = 1.488 m (H3)", 0, "H3_x1.488_m", "H3"},
      {0.992, "x = 0.992 m (H2)", 0, "H2_x0.992_m", "H2"},
      {0.8245, "obstacle face (P1)", 1, "P1_Pa", "P1"}},
     4},
    {"lobovsky",
     "Lobovsky et al. 2014, dam break H = 300 mm",
     {"scenes/validation/lobovsky_h300.json", "scenes/validation/lobovsky_h300_fine.json"},
     "lobovsky2014_H300_water_level.csv",
     "lobovsky2014_H300_pressure.csv",
     "T",
     5.718391382198319 /* sqrt(g/H) = sqrt(9.81 / 0.3) */,
     "T = t sqrt(g/H)",
     1.0 / LOBOVSKY_H,
     "h/H",
     "H",
     1.0 / (RHO * G * LOBOVSKY_H),
     "p/(rho g H)",
     "rho g H",
     0.01 / LOBOVSKY_H,
     0.1,
     +1,
     4,
     4,
     4,
     {{"H1", {"H1_ETSIN01", NULL}},
      {"H2", {"H2_ETSIN02", "H2_ETSIN01"}},
      {"H3", {"H3_ETSIN02", "H3_ETSIN01"}},
      {"H4", {"H4_ETSIN02", "H4_ETSIN01"}}},
     {{"P1", "P1", 3.5, 5.5},
      {"P2", "P2", 3.5, 5.5},
      {"P3", "P3", 3.5, 5.5},
      {"P4", "P4", 3.5, 5.5}},
     {{0.865, "x = 865 mm (H2)", 0, "H2_ETSIN02", "H2"},
      {1.114, "x = 1114 mm (H3)", 0, "H3_ETSIN02", "H3"},
      {1.3625, "x = 1362.5 mm (H4)", 0, "H4_ETSIN02", "H4"},
      {1.61, "far wall (P1)", 1, "P1", "P1"}},
     2},
};
static const int CASE_COUNT = (int)(sizeof CASES / sizeof CASES[0]);
static const char *const RES_NAMES[2] = {"coarse", "fine"};

/* The lifting gate (--gate): the coarse scene with a thin plate keyframed upwards from the
 * water's front face, lifted by `lift` metres (clear of the water) at GATE_SPEED unless
 * --gate-speed says otherwise (docs/notes/validation_log.md, "The lifting gate"). */
#define GATE_SPEED 1.5
static const struct {
    const char *name, *scene;
    double lift; /* m */
} GATES[] = {{"spheric2", "scenes/validation/spheric2_gate.json", 0.62},
             {"lobovsky", "scenes/validation/lobovsky_h300_gate.json", 0.52}};

/* =============================================================================================
 * CSV tables: '#' comment lines, one header row, numbers ("nan" allowed) */

typedef struct table {
    int cols, rows;
    char **names;
    double *v; /* rows * cols */
} table;

static void table_free(table *t) {
    for (int i = 0; i < t->cols; ++i) free(t->names[i]);
    free(t->names);
    free(t->v);
    memset(t, 0, sizeof *t);
}

static int table_load(const char *path, table *t) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (f == NULL) return cli_error("cannot open '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, vcap = 0;
    ssize_t len;
    int rc = 0, line_no = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
        ++line_no;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        if (t->names == NULL) { /* the header */
            int n = 1;
            for (char *c = line; *c; ++c) n += *c == ',';
            t->names = calloc((size_t)n, sizeof *t->names);
            if (t->names == NULL) {
                rc = cli_error("out of memory reading '%s'", path);
                break;
            }
            char *save = NULL;
            for (char *tok = strtok_r(line, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
                t->names[t->cols++] = strdup(tok);
            continue;
        }
        if ((size_t)(t->rows + 1) * (size_t)t->cols > vcap) {
            size_t ncap = vcap ? 2 * vcap : 4096 * (size_t)t->cols;
            double *nv = realloc(t->v, ncap * sizeof *nv);
            if (nv == NULL) {
                rc = cli_error("out of memory reading '%s'", path);
                break;
            }
            t->v = nv;
            vcap = ncap;
        }
        char *c = line;
        for (int k = 0; k < t->cols; ++k) {
            char *end = NULL;
            double x = strtod(c, &end);
            if (end == c) {
                rc = cli_error("%s:%d: column %d ('%s') is not a number", path, line_no, k + 1,
                               t->names[k]);
                break;
            }
            t->v[(size_t)t->rows * (size_t)t->cols + (size_t)k] = x;
            c = end;
            if (k + 1 < t->cols) {
                if (*c != ',') {
                    rc = cli_error("%s:%d: %d columns expected, as in the header", path, line_no,
                                   t->cols);
                    break;
                }
                ++c;
            }
        }
        if (rc == 0) ++t->rows;
    }
    free(line);
    fclose(f);
    if (rc == 0 && (t->names == NULL || t->rows == 0))
        rc = cli_error("'%s' holds no data (a header and at least one row are expected)", path);
    if (rc != 0) table_free(t);
    return rc;
}

static int table_col(const table *t, const char *name) {
    for (int i = 0; i < t->cols; ++i)
        if (strcmp(t->names[i], name) == 0) return i;
    return -1;
}

static double at(const table *t, int row, int col) {
    return t->v[(size_t)row * (size_t)t->cols + (size_t)col];
}

/* Column c at time x (column tc, increasing), linearly interpolated; NAN outside. */
static double interp(const table *t, int tc, int c, double x) {
    if (t->rows == 0 || x < at(t, 0, tc) || x > at(t, t->rows - 1, tc)) return NAN;
    int lo = 0, hi = t->rows - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (at(t, mid, tc) <= x)
            lo = mid;
        else
            hi = mid;
    }
    double t0 = at(t, lo, tc), t1 = at(t, hi, tc);
    if (!(t1 > t0)) return at(t, lo, c);
    double s = (x - t0) / (t1 - t0);
    return at(t, lo, c) + s * (at(t, hi, c) - at(t, lo, c));
}

/* The first time (column tc, times `scale`) at which sign*(column c * vscale) rises above
 * sign*threshold, interpolated between rows; NAN if never. */
static double first_crossing(const table *t, int tc, double tscale, int c, double vscale,
                             double threshold, int sign) {
    for (int i = 0; i < t->rows; ++i) {
        double v = sign * at(t, i, c) * vscale;
        if (!(v > sign * threshold)) continue;
        if (i == 0) return at(t, 0, tc) * tscale;
        double v0 = sign * at(t, i - 1, c) * vscale;
        double s = isfinite(v0) && v > v0 ? (sign * threshold - v0) / (v - v0) : 1.0;
        return (at(t, i - 1, tc) + s * (at(t, i, tc) - at(t, i - 1, tc))) * tscale;
    }
    return NAN;
}

/* =============================================================================================
 * Metrics */

typedef struct metric {
    char kind[24]; /* "wetting time", "height RMS", ... */
    char probe[40];
    char unit[16];
    double measured, simulated; /* NAN: not available */
} metric;

typedef struct result {
    int present;
    float radius;
    int particles;
    double t_end; /* simulated seconds: the end of the metrics' window */
    double t_run; /* the whole run (the plots show all of it) */
    int count;
    metric m[64];
} result;

static void add_metric(result *r, const char *kind, const char *probe, const char *unit,
                       double measured, double simulated) {
    if (r->count >= (int)(sizeof r->m / sizeof r->m[0])) return;
    metric *m = &r->m[r->count++];
    snprintf(m->kind, sizeof m->kind, "%s", kind);
    snprintf(m->probe, sizeof m->probe, "%s", probe);
    snprintf(m->unit, sizeof m->unit, "%s", unit);
    m->measured = measured;
    m->simulated = simulated;
}

/* The measured height of probe k at data time x: the mean of its repetitions. */
static double measured_height(const table *lv, int tc, const int *cols, double x) {
    double sum = 0.0;
    int n = 0;
    for (int s = 0; s < MAX_SERIES && cols[s] >= 0; ++s) {
        double v = interp(lv, tc, cols[s], x);
        if (isfinite(v)) sum += v, ++n;
    }
    return n ? sum / n : NAN;
}

typedef struct data {
    table lv, pr; /* levels and pressures (the same file for spheric2) */
    int lv_t, pr_t; /* their time columns */
    int hcol[MAX_HEIGHTS][MAX_SERIES];
    int pcol[MAX_PRESSURES];
    int fcol[MAX_FRONTS];
} data;

static int load_data(const case_spec *cs, const char *dir, data *d) {
    memset(d, 0, sizeof *d);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, cs->level_file);
    if (table_load(path, &d->lv) != 0) return 1;
    snprintf(path, sizeof path, "%s/%s", dir, cs->pressure_file);
    if (table_load(path, &d->pr) != 0) return 1;
    d->lv_t = table_col(&d->lv, cs->time_col);
    d->pr_t = table_col(&d->pr, cs->time_col);
    if (d->lv_t < 0 || d->pr_t < 0) return cli_error("%s: no time column '%s'", path, cs->time_col);
    for (int k = 0; k < cs->nh; ++k)
        for (int s = 0; s < MAX_SERIES; ++s) {
            d->hcol[k][s] = cs->h[k].measured[s] ? table_col(&d->lv, cs->h[k].measured[s]) : -1;
            if (cs->h[k].measured[s] && d->hcol[k][s] < 0)
                return cli_error("%s/%s: no column '%s'", dir, cs->level_file,
                                 cs->h[k].measured[s]);
        }
    for (int k = 0; k < cs->np; ++k)
        if ((d->pcol[k] = table_col(&d->pr, cs->p[k].measured)) < 0)
            return cli_error("%s/%s: no column '%s'", dir, cs->pressure_file, cs->p[k].measured);
    for (int k = 0; k < cs->nf; ++k) {
        const table *t = cs->f[k].from_pressure ? &d->pr : &d->lv;
        if ((d->fcol[k] = table_col(t, cs->f[k].measured)) < 0)
            return cli_error("no column '%s' in the data", cs->f[k].measured);
    }
    return 0;
}

/* Measured arrival time (data units) of front k. */
static double measured_arrival(const case_spec *cs, const data *d, int k) {
    if (cs->f[k].from_pressure)
        return first_crossing(&d->pr, d->pr_t, 1.0, d->fcol[k], 1.0, cs->p_arrive, +1);
    return first_crossing(&d->lv, d->lv_t, 1.0, d->fcol[k], 1.0, cs->wet, +1);
}

/* Wetting times (of the gauges that start dry in the data) and height RMS over the common
 * window, at the simulated frames, of the gauges in columns hc of sim; `suffix` follows each
 * gauge's name in the metric's label. */
static void height_metrics(const case_spec *cs, const data *d, const table *sim, int tc,
                           const int *hc, const char *suffix, result *r) {
    const double ts = cs->t_scale;
    char label[40];
    for (int k = 0; k < cs->nh; ++k) {
        snprintf(label, sizeof label, "%s%s", cs->h[k].probe, suffix);
        double h0 = measured_height(&d->lv, d->lv_t, d->hcol[k], at(&d->lv, 0, d->lv_t));
        if (!(h0 < cs->wet)) continue;
        double sum = 0.0;
        int n = 0;
        for (int s = 0; s < MAX_SERIES && d->hcol[k][s] >= 0; ++s) {
            double tw = first_crossing(&d->lv, d->lv_t, 1.0, d->hcol[k][s], 1.0, cs->wet, +1);
            if (isfinite(tw)) sum += tw, ++n;
        }
        double sim_t = first_crossing(sim, tc, ts, hc[k], cs->h_scale, cs->wet, +1);
        add_metric(r, "wetting time", label, cs->t_label, n ? sum / n : NAN, sim_t);
    }
    for (int k = 0; k < cs->nh; ++k) {
        snprintf(label, sizeof label, "%s%s", cs->h[k].probe, suffix);
        double sum = 0.0;
        int n = 0;
        for (int i = 0; i < sim->rows; ++i) {
            double x = at(sim, i, tc) * ts;
            double m = measured_height(&d->lv, d->lv_t, d->hcol[k], x);
            double s = at(sim, i, hc[k]) * cs->h_scale;
            if (isfinite(m) && isfinite(s)) sum += (s - m) * (s - m), ++n;
        }
        add_metric(r, "height RMS", label, cs->h_unit, 0.0, n ? sqrt(sum / n) : NAN);
    }
}

/* Reads a run folder (probes.csv + scene.json) and computes its metrics over simulated times
 * up to t_limit (s): every resolution is measured over the same window. */
static int evaluate(const case_spec *cs, const data *d, const char *run_dir, double t_limit,
                    result *r) {
    memset(r, 0, sizeof *r);
    char path[4096];
    snprintf(path, sizeof path, "%s/probes.csv", run_dir);
    struct stat st;
    if (stat(path, &st) != 0) return 0; /* not run at this resolution */
    pbf_scene *scene = malloc(sizeof *scene);
    char err[PBF_ERROR_SIZE];
    snprintf(path, sizeof path, "%s/scene.json", run_dir);
    if (scene == NULL) return cli_error("out of memory");
    if (pbf_scene_load(path, NULL, 0, scene, err, sizeof err) != PBF_OK) {
        free(scene);
        return cli_error("%s", err);
    }
    r->radius = scene->world.particle_radius;
    r->particles = (int)pbf_scene_particle_count(scene);
    free(scene);
    table sim;
    snprintf(path, sizeof path, "%s/probes.csv", run_dir);
    if (table_load(path, &sim) != 0) return 1;
    int tc = table_col(&sim, "time");
    char col[64];
    int hc[MAX_HEIGHTS], pc[MAX_PRESSURES], fc;
    for (int k = 0; k < cs->nh; ++k) {
        snprintf(col, sizeof col, "%s_m", cs->h[k].probe);
        hc[k] = table_col(&sim, col);
    }
    for (int k = 0; k < cs->np; ++k) {
        snprintf(col, sizeof col, "%s_Pa", cs->p[k].probe);
        pc[k] = table_col(&sim, col);
    }
    fc = table_col(&sim, "front_m");
    int missing = tc < 0 || fc < 0;
    for (int k = 0; k < cs->nh; ++k) missing |= hc[k] < 0;
    for (int k = 0; k < cs->np; ++k) missing |= pc[k] < 0;
    if (missing) {
        table_free(&sim);
        return cli_error("%s: the columns of the %s probes are missing (time, front_m, H*_m, "
                         "P*_Pa): was it run with %s?",
                         path, cs->name, cs->scene[0]);
    }
    while (sim.rows > 1 && at(&sim, sim.rows - 1, tc) > t_limit + 1e-6) --sim.rows;
    r->present = 1;
    r->t_end = at(&sim, sim.rows - 1, tc);
    const double ts = cs->t_scale;

    height_metrics(cs, d, &sim, tc, hc, "", r);
    /* The same gauges read as the highest particle in a column 2r wide, where the scene has
     * them (NAME_top height probes): the reading every table before the level probe used. */
    int tops = 0;
    for (int k = 0; k < cs->nh; ++k) {
        snprintf(col, sizeof col, "%s_top_m", cs->h[k].probe);
        hc[k] = table_col(&sim, col);
        tops += hc[k] >= 0;
    }
    if (tops == cs->nh) height_metrics(cs, d, &sim, tc, hc, " (column top)", r);
    /* front arrivals, as measured: the gauge's wetting, or the sensor's first pressure */
    double measured_at[MAX_FRONTS];
    for (int k = 0; k < cs->nf; ++k) {
        const front_spec *f = &cs->f[k];
        snprintf(col, sizeof col, f->from_pressure ? "%s_Pa" : "%s_m", f->probe);
        int at_x = table_col(&sim, col);
        double sim_t = at_x < 0 ? NAN
                       : f->from_pressure
                           ? first_crossing(&sim, tc, ts, at_x, cs->p_scale, cs->p_arrive, +1)
                           : first_crossing(&sim, tc, ts, at_x, cs->h_scale, cs->wet, +1);
        measured_at[k] = measured_arrival(cs, d, k);
        add_metric(r, "front arrival", f->label, cs->t_label, measured_at[k], sim_t);
    }
    /* the leading particle's edge (the front probe) at the same places: at a wall it stops at
     * the wall itself, so a crossing within half a particle radius counts. It has no measured
     * counterpart: it sees a tongue thinner than a gauge's threshold, and a thinner one the
     * finer the particles (docs/validation.md, "Metrics"). */
    for (int k = 0; k < cs->nf; ++k) {
        double x = cs->f[k].x - cs->front_sign * 0.5 * r->radius;
        double sim_t = first_crossing(&sim, tc, ts, fc, 1.0, x, cs->front_sign);
        add_metric(r, "leading edge", cs->f[k].label, cs->t_label, measured_at[k], sim_t);
    }
    /* pressures */
    for (int k = 0; k < cs->np; ++k) {
        const pressure_spec *p = &cs->p[k];
        double arr_m = first_crossing(&d->pr, d->pr_t, 1.0, d->pcol[k], 1.0, cs->p_arrive, +1);
        double arr_s = first_crossing(&sim, tc, ts, pc[k], cs->p_scale, cs->p_arrive, +1);
        add_metric(r, "pressure arrival", p->probe, cs->t_label, arr_m, arr_s);
        double pk_m = -INFINITY, pk_s = -INFINITY, mean_m = 0.0, mean_s = 0.0;
        int nm = 0, ns = 0;
        for (int i = 0; i < d->pr.rows; ++i) {
            double x = at(&d->pr, i, d->pr_t), v = at(&d->pr, i, d->pcol[k]);
            if (x > r->t_end * ts) break; /* compare over what was simulated */
            if (v > pk_m) pk_m = v;
            if (x >= p->w0 && x <= p->w1) mean_m += v, ++nm;
        }
        for (int i = 0; i < sim.rows; ++i) {
            double x = at(&sim, i, tc) * ts, v = at(&sim, i, pc[k]) * cs->p_scale;
            if (x > at(&d->pr, d->pr.rows - 1, d->pr_t)) break;
            if (v > pk_s) pk_s = v;
            if (x >= p->w0 && x <= p->w1) mean_s += v, ++ns;
        }
        char label[40];
        snprintf(label, sizeof label, "%s, %g-%g", p->probe, p->w0, p->w1);
        add_metric(r, "pressure peak", p->probe, cs->p_unit, pk_m, pk_s);
        add_metric(r, "pressure mean", label, cs->p_unit, nm ? mean_m / nm : NAN,
                   ns ? mean_s / ns : NAN);
    }
    table_free(&sim);
    return 0;
}

/* =============================================================================================
 * Output: metrics.csv, metrics.md, the plots */

static void fmt_num(char *buf, size_t size, double v) {
    if (!isfinite(v))
        snprintf(buf, size, "n/a");
    else
        snprintf(buf, size, "%.4g", v);
}

static int write_text(const char *path, const char *text) {
    char err[PBF_ERROR_SIZE];
    if (pbf_write_file_atomic(path, text, strlen(text), err, sizeof err) != PBF_OK)
        return cli_error("%s", err);
    return 0;
}

/* A growing string. */
typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static int write_metrics_csv(const case_spec *cs, const result *r, const char *run_dir) {
    sbuf b = {0};
    sb_printf(&b, "case,particle_radius_m,metric,probe,unit,measured,simulated,error\n");
    for (int i = 0; i < r->count; ++i) {
        const metric *m = &r->m[i];
        sb_printf(&b, "%s,%g,%s,\"%s\",%s,%.6g,%.6g,%.6g\n", cs->name, (double)r->radius, m->kind,
                  m->probe, m->unit, m->measured, m->simulated, m->simulated - m->measured);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.csv", run_dir);
    int rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    free(b.s);
    return rc;
}

/* metrics.md: one table with a column pair per resolution. */
static int write_metrics_md(const case_spec *cs, const result res[2], const char *dir,
                            const char *data_dir) {
    sbuf b = {0};
    sb_printf(&b, "### %s\n\n", cs->title);
    for (int k = 0; k < 2; ++k)
        if (res[k].present)
            sb_printf(&b, "- %s: r = %.4g mm, %d particles (`pbf validate %s%s`)\n", RES_NAMES[k],
                      1000.0 * res[k].radius, res[k].particles, cs->name, k ? " --fine" : "");
    const result *any = res[0].present ? &res[0] : &res[1];
    sb_printf(&b,
              "- metrics over t = 0 to %.4g s (%s = 0 to %.4g), the time every run covers; "
              "wetting threshold %.3g %s, pressure arrival threshold %.3g %s\n",
              any->t_end, cs->t_label, any->t_end * cs->t_scale, cs->wet, cs->h_unit, cs->p_arrive,
              cs->p_unit);
    sb_printf(&b, "- measured: `%s/%s`%s%s\n\n", data_dir, cs->level_file,
              strcmp(cs->level_file, cs->pressure_file) ? ", " : "",
              strcmp(cs->level_file, cs->pressure_file) ? cs->pressure_file : "");
    sb_printf(&b, "| metric | probe | unit | measured |");
    for (int k = 0; k < 2; ++k)
        if (res[k].present) sb_printf(&b, " %s | error |", RES_NAMES[k]);
    sb_printf(&b, "\n|---|---|---|---|");
    for (int k = 0; k < 2; ++k)
        if (res[k].present) sb_printf(&b, "---|---|");
    sb_printf(&b, "\n");
    const result *ref = res[0].present ? &res[0] : &res[1];
    for (int i = 0; i < ref->count; ++i) {
        const metric *m = &ref->m[i];
        char a[32], s[32], e[32];
        int rms = strcmp(m->kind, "height RMS") == 0;
        fmt_num(a, sizeof a, m->measured);
        sb_printf(&b, "| %s | %s | %s | %s |", m->kind, m->probe, m->unit, rms ? "" : a);
        for (int k = 0; k < 2; ++k) {
            if (!res[k].present) continue;
            const metric *n = i < res[k].count ? &res[k].m[i] : NULL;
            fmt_num(s, sizeof s, n ? n->simulated : NAN);
            fmt_num(e, sizeof e, n ? n->simulated - n->measured : NAN);
            if (rms)
                sb_printf(&b, " %s | |", s);
            else
                sb_printf(&b, " %s | %s |", s, e);
        }
        sb_printf(&b, "\n");
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.md", dir);
    int rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    if (rc == 0) printf("%s\n", b.s);
    free(b.s);
    return rc;
}

/* The data files of the plots: measured.dat (levels), measured_p.dat (pressures, thinned to at
 * most ~4000 rows) and sim_<res>.dat, all in the data's units. */
static int write_plot_data(const case_spec *cs, const data *d, const char *dir,
                           const int present[2]) {
    char path[4096];
    sbuf b = {0};
    sb_printf(&b, "# %s: measured heights (%s) against %s; NaN = no such repetition\n", cs->name,
              cs->h_label, cs->t_label);
    for (int i = 0; i < d->lv.rows; ++i) {
        sb_printf(&b, "%.6g", at(&d->lv, i, d->lv_t));
        for (int k = 0; k < cs->nh; ++k)
            for (int s = 0; s < MAX_SERIES; ++s)
                sb_printf(&b, " %.6g", d->hcol[k][s] >= 0 ? at(&d->lv, i, d->hcol[k][s]) : NAN);
        sb_printf(&b, "\n");
    }
    snprintf(path, sizeof path, "%s/measured.dat", dir);
    int rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    b.len = 0;
    int stride = d->pr.rows / 4000 + 1;
    sb_printf(&b, "# %s: measured pressures (%s) against %s, every %d-th sample\n", cs->name,
              cs->p_label, cs->t_label, stride);
    for (int i = 0; i < d->pr.rows; i += stride) {
        sb_printf(&b, "%.6g", at(&d->pr, i, d->pr_t));
        for (int k = 0; k < cs->np; ++k) sb_printf(&b, " %.6g", at(&d->pr, i, d->pcol[k]));
        sb_printf(&b, "\n");
    }
    snprintf(path, sizeof path, "%s/measured_p.dat", dir);
    if (rc == 0) rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    for (int res = 0; rc == 0 && res < 2; ++res) {
        if (!present[res]) continue;
        table sim;
        snprintf(path, sizeof path, "%s/%s/probes.csv", dir, RES_NAMES[res]);
        if ((rc = table_load(path, &sim)) != 0) break;
        b.len = 0;
        sb_printf(&b, "# %s %s: %s, heights (%s), front (m), pressures (%s)\n", cs->name,
                  RES_NAMES[res], cs->t_label, cs->h_label, cs->p_label);
        int tc = table_col(&sim, "time"), fc = table_col(&sim, "front_m");
        for (int i = 0; i < sim.rows; ++i) {
            sb_printf(&b, "%.6g", at(&sim, i, tc) * cs->t_scale);
            char col[64];
            for (int k = 0; k < cs->nh; ++k) {
                snprintf(col, sizeof col, "%s_m", cs->h[k].probe);
                sb_printf(&b, " %.6g", at(&sim, i, table_col(&sim, col)) * cs->h_scale);
            }
            sb_printf(&b, " %.6g", at(&sim, i, fc));
            for (int k = 0; k < cs->np; ++k) {
                snprintf(col, sizeof col, "%s_Pa", cs->p[k].probe);
                sb_printf(&b, " %.6g", at(&sim, i, table_col(&sim, col)) * cs->p_scale);
            }
            sb_printf(&b, "\n");
        }
        table_free(&sim);
        snprintf(path, sizeof path, "%s/sim_%s.dat", dir, RES_NAMES[res]);
        rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    }
    free(b.s);
    return rc;
}

/* plot.gp: heights.png, pressure.png, front.png. */
static int write_plot_script(const case_spec *cs, const data *d, const result res[2],
                             const char *dir) {
    sbuf b = {0};
    sb_printf(&b,
              "# %s: simulated against measured (written by pbf validate; redraw: gnuplot "
              "plot.gp)\n"
              "set terminal pngcairo noenhanced size 1400,%d font 'sans,11'\n"
              "set grid\nset key top right\n",
              cs->title, 900);
    const char *colors[2] = {"#d62728", "#1f77b4"};
    char lab[2][64];
    for (int k = 0; k < 2; ++k)
        snprintf(lab[k], sizeof lab[k], "%s, r = %.3g mm", RES_NAMES[k], 1000.0 * res[k].radius);
    double t_max = 0.0;
    for (int k = 0; k < 2; ++k)
        if (res[k].present && res[k].t_run * cs->t_scale > t_max)
            t_max = res[k].t_run * cs->t_scale;
    /* heights */
    sb_printf(&b, "set output 'heights.png'\nset multiplot layout 2,2 title '%s: water height'\n",
              cs->title);
    sb_printf(&b, "set xlabel '%s'\nset ylabel '%s'\nset xrange [0:%g]\n", cs->t_label, cs->h_label,
              t_max);
    for (int k = 0; k < cs->nh; ++k) {
        sb_printf(&b, "set title '%s'\nplot ", cs->h[k].probe);
        int first = 1;
        for (int s = 0; s < MAX_SERIES; ++s) {
            if (d->hcol[k][s] < 0) continue;
            sb_printf(&b, "%s'measured.dat' using 1:%d with lines lw 1.5 lc rgb '%s' title '%s'",
                      first ? "" : ", ", 2 + k * MAX_SERIES + s, s ? "#7f7f7f" : "black",
                      cs->h[k].measured[s]);
            first = 0;
        }
        for (int r = 0; r < 2; ++r)
            if (res[r].present)
                sb_printf(&b, ", 'sim_%s.dat' using 1:%d with lines lw 2 lc rgb '%s' title '%s'",
                          RES_NAMES[r], 2 + k, colors[r], lab[r]);
        sb_printf(&b, "\n");
    }
    sb_printf(&b, "unset multiplot\n");
    /* pressures */
    int rows = (cs->np + cs->plot_cols - 1) / cs->plot_cols;
    sb_printf(&b,
              "set terminal pngcairo noenhanced size 1400,%d font 'sans,11'\n"
              "set output 'pressure.png'\n"
              "set multiplot layout %d,%d title '%s: pressure (force probe / patch area)'\n"
              "set ylabel '%s'\n",
              rows > 2 ? 400 * rows : 900, rows, cs->plot_cols, cs->title, cs->p_label);
    for (int k = 0; k < cs->np; ++k) {
        sb_printf(&b,
                  "set title '%s'\nplot 'measured_p.dat' using 1:%d with lines lw 1 lc rgb "
                  "'black' title 'measured'",
                  cs->p[k].probe, 2 + k);
        for (int r = 0; r < 2; ++r)
            if (res[r].present)
                sb_printf(&b, ", 'sim_%s.dat' using 1:%d with lines lw 2 lc rgb '%s' title '%s'",
                          RES_NAMES[r], 2 + cs->nh + 1 + k, colors[r], lab[r]);
        sb_printf(&b, "\n");
    }
    sb_printf(&b, "unset multiplot\n");
    /* front */
    /* the front's run, up to twice the last measured arrival */
    double last_arrival = 0.0;
    for (int k = 0; k < cs->nf; ++k) {
        double tm = measured_arrival(cs, d, k);
        if (isfinite(tm) && tm > last_arrival) last_arrival = tm;
    }
    sb_printf(&b,
              "set terminal pngcairo noenhanced size 1000,700 font 'sans,11'\n"
              "set output 'front.png'\nset xrange [0:%g]\n"
              "set title '%s: front position'\nset ylabel 'x (m)'\nset key %s\n",
              last_arrival > 0.0 ? 2.0 * last_arrival : t_max, cs->title,
              cs->front_sign > 0 ? "bottom right" : "bottom left");
    sb_printf(&b, "$arrivals << EOD\n");
    for (int k = 0; k < cs->nf; ++k) {
        double tm = measured_arrival(cs, d, k);
        if (isfinite(tm)) sb_printf(&b, "%.6g %.6g\n", tm, cs->f[k].x);
    }
    sb_printf(&b, "EOD\nplot $arrivals using 1:2 with points pt 7 ps 2 lc rgb 'black' title "
                  "'measured arrival (gauge wetting / first wall pressure)'");
    for (int r = 0; r < 2; ++r)
        if (res[r].present)
            sb_printf(&b, ", 'sim_%s.dat' using 1:%d with lines lw 2 lc rgb '%s' title '%s'",
                      RES_NAMES[r], 2 + cs->nh, colors[r], lab[r]);
    sb_printf(&b, "\n");
    char path[4096];
    snprintf(path, sizeof path, "%s/plot.gp", dir);
    int rc = b.failed ? cli_error("out of memory") : write_text(path, b.s);
    free(b.s);
    return rc;
}

/* Runs `gnuplot plot.gp` in dir. A missing gnuplot is a note, not an error: the data files and
 * the metrics are there. */
static int run_gnuplot(const char *dir) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return cli_error("cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(dir) != 0) _exit(126);
        execlp("gnuplot", "gnuplot", "plot.gp", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 127) {
        fprintf(stderr,
                "pbf validate: note: gnuplot not found, so the plots are not drawn (install "
                "gnuplot-nox, then: cd %s && gnuplot plot.gp)\n",
                dir);
        return 0;
    }
    if (code != 0) return cli_error("gnuplot failed on %s/plot.gp (exit %d)", dir, code);
    return 0;
}

/* =============================================================================================
 * The command */

static const char validate_synopsis[] =
    "usage: pbf validate spheric2|lobovsky [--fine | --gate [--gate-speed V]] [--data DIR]\n"
    "                    [--out DIR] [--time T]\n"
    "                    [--threads N] [--set key=value ...] [--plot-only] [--quiet]\n";

static const char validate_help[] =
    "Runs a validation case against laboratory data and writes the comparison "
    "(docs/validation.md):\n"
    "  spheric2   SPHERIC test 2, the MARIN 3D dam break with an obstacle (Kleefsman et al. 2005)\n"
    "  lobovsky   the dam break of Lobovsky et al. 2014, H = 300 mm\n"
    "\n"
    "The run goes to OUT/coarse or OUT/fine (probes.csv, stats.csv, scene.json, metrics.csv);\n"
    "OUT/metrics.md and the plots (heights.png, pressure.png, front.png) show every resolution "
    "run\n"
    "so far against the measurements.\n"
    "\n"
    "options:\n"
    "  --fine            the fine scene (scenes/validation/<case>_fine.json) instead of the "
    "coarse\n"
    "  --scene FILE      another scene with the case's probes\n"
    "  --data DIR        the measured data (default: $PBF_VALIDATION_DATA, else "
    "../shared/validation)\n"
    "  --out DIR         default out/validate/<case>\n"
    "  --time T          simulated seconds (default: the scene's time.frames)\n"
    "  --gate            release the water by lifting a gate (a thin kinematic plate,\n"
    "                    scenes/validation/<case>_gate.json; coarse only; default OUT\n"
    "                    out/validate/<case>-gate)\n"
    "  --gate-speed V    the gate's lift speed in m/s (default 1.5); implies --gate\n"
    "  --threads N       CPU threads, 0 = all cores\n"
    "  --set KEY=VALUE   override a scene parameter; repeatable\n"
    "  --plot-only       no simulation: metrics and plots from the runs already in OUT\n"
    "  --quiet, -q       no progress line\n"
    "  --help, -h        this help\n"
    "\n"
    "Scenes are looked up relative to the current folder: run it from the repository root.\n"
    "\n"
    "examples:\n"
    "  pbf validate lobovsky\n"
    "  pbf validate spheric2 --fine\n"
    "  pbf validate lobovsky --time 0.5 --out out/quick\n"
    "  pbf validate lobovsky --set domain.friction=0.1 --out out/validate/lobovsky-mu0.1\n";

int cmd_validate(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "validate", validate_synopsis, argc, argv);
    cli_overrides sets = {NULL, 0, 0};
    const char *case_name = NULL, *data_dir = NULL, *out = NULL, *scene_path = NULL, *a, *v;
    int rc = CLI_EXIT_OK, help = 0, fine = 0, plot_only = 0, quiet = 0, threads = -1, gate = 0;
    double time = -1.0, gate_speed = 0.0;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--quiet", "-q")) {
            quiet = 1;
        } else if (cli_flag(&p, "--fine", NULL)) {
            fine = 1;
        } else if (cli_flag(&p, "--gate", NULL)) {
            gate = 1;
        } else if (cli_option(&p, "--gate-speed", &v)) {
            gate = 1;
            if (!cli_parse_double(&p, "--gate-speed", v, 0.01, 100.0, &gate_speed))
                rc = CLI_EXIT_USAGE;
        } else if (cli_flag(&p, "--plot-only", NULL)) {
            plot_only = 1;
        } else if (cli_option(&p, "--data", &v)) {
            data_dir = v;
        } else if (cli_option(&p, "--out", &v)) {
            out = v;
        } else if (cli_option(&p, "--scene", &v)) {
            scene_path = v;
        } else if (cli_option(&p, "--time", &v)) {
            if (!cli_parse_double(&p, "--time", v, 0.0, 1e6, &time)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--threads", &v)) {
            if (!cli_parse_int(&p, "--threads", v, 0, 4096, &threads)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &sets);
        } else if (p.failed) {
            rc = CLI_EXIT_USAGE;
        } else {
            rc = cli_operand(&p, a, "case", &case_name);
        }
    }
    if (p.failed) rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", validate_synopsis, validate_help);
        cli_overrides_free(&sets);
        return CLI_EXIT_OK;
    }
    const case_spec *cs = NULL;
    if (rc == CLI_EXIT_OK) {
        if (case_name == NULL) {
            rc = cli_usage_error(&p, "which case? spheric2 or lobovsky");
        } else {
            for (int i = 0; i < CASE_COUNT; ++i)
                if (strcmp(CASES[i].name, case_name) == 0) cs = &CASES[i];
            if (cs == NULL)
                rc = cli_usage_error(&p, "unknown case '%s': spheric2 or lobovsky", case_name);
        }
    }
    const char *gate_scene = NULL;
    static char gate_set[96];
    if (rc == CLI_EXIT_OK && gate) {
        if (fine || scene_path != NULL)
            rc = cli_usage_error(&p, "--gate runs the coarse gate scene: not with --fine or "
                                     "--scene");
        for (size_t i = 0; i < sizeof GATES / sizeof GATES[0]; ++i)
            if (strcmp(GATES[i].name, cs->name) == 0) {
                gate_scene = GATES[i].scene;
                /* the second key's time: the lift over the speed */
                snprintf(gate_set, sizeof gate_set, "meshes[0].keys[1].time=%.6f",
                         GATES[i].lift / (gate_speed > 0.0 ? gate_speed : GATE_SPEED));
            }
        if (rc == CLI_EXIT_OK && gate_speed > 0.0 && !cli_overrides_add(&sets, gate_set))
            rc = cli_error("out of memory");
    }
    if (rc != CLI_EXIT_OK) {
        cli_overrides_free(&sets);
        return rc;
    }
    if (data_dir == NULL) data_dir = getenv("PBF_VALIDATION_DATA");
    if (data_dir == NULL || data_dir[0] == '\0') data_dir = "../shared/validation";
    char out_dir[2048], run_dir[2400];
    snprintf(out_dir, sizeof out_dir, "%s", out ? out : "");
    if (out == NULL)
        snprintf(out_dir, sizeof out_dir, "out/validate/%s%s", cs->name, gate ? "-gate" : "");
    snprintf(run_dir, sizeof run_dir, "%s/%s", out_dir, RES_NAMES[fine]);

    /* the data first: a missing file should not cost a whole run */
    data d;
    if (load_data(cs, data_dir, &d) != 0) {
        table_free(&d.lv);
        table_free(&d.pr);
        cli_overrides_free(&sets);
        fprintf(stderr,
                "pbf validate: the measured data is read from '%s' (--data DIR or "
                "PBF_VALIDATION_DATA)\n",
                data_dir);
        return CLI_EXIT_ERROR;
    }
    if (!plot_only) {
        run_options o;
        run_options_init(&o);
        o.scene_path = scene_path ? scene_path : gate_scene ? gate_scene : cs->scene[fine];
        o.sets = sets.items;
        o.set_count = sets.count;
        o.time = time;
        o.out_dir = run_dir;
        o.formats = 0; /* probes.csv and stats.csv only */
        o.threads = threads;
        o.quiet = quiet;
        rc = run_simulation(&o, NULL);
        if (rc != 0) { /* printed; 130 after Ctrl-C */
            table_free(&d.lv);
            table_free(&d.pr);
            cli_overrides_free(&sets);
            return rc;
        }
    }
    result res[2];
    int present[2] = {0, 0};
    /* the window every run covers, then the metrics over it */
    double t_common = INFINITY, t_run[2] = {0.0, 0.0};
    for (int pass = 0; pass < 2; ++pass) {
        for (int k = 0; rc == 0 && k < 2; ++k) {
            char dir[2400];
            snprintf(dir, sizeof dir, "%s/%s", out_dir, RES_NAMES[k]);
            rc = evaluate(cs, &d, dir, pass ? t_common : INFINITY, &res[k]);
            present[k] = res[k].present;
            if (pass == 0) t_run[k] = res[k].t_end;
            if (pass == 0 && present[k] && res[k].t_end < t_common) t_common = res[k].t_end;
            if (rc == 0 && pass == 1 && present[k]) rc = write_metrics_csv(cs, &res[k], dir);
            res[k].t_run = t_run[k];
        }
    }
    if (rc == 0 && !present[0] && !present[1])
        rc = cli_error("no run in '%s' (%s/coarse or %s/fine): run without --plot-only first",
                       out_dir, out_dir, out_dir);
    if (rc == 0) rc = write_metrics_md(cs, res, out_dir, data_dir);
    if (rc == 0) rc = write_plot_data(cs, &d, out_dir, present);
    if (rc == 0) rc = write_plot_script(cs, &d, res, out_dir);
    if (rc == 0) rc = run_gnuplot(out_dir);
    if (rc == 0)
        fprintf(stderr,
                "pbf validate: %s/metrics.md, %s/{heights,pressure,front}.png (per run: "
                "metrics.csv)\n",
                out_dir, out_dir);
    table_free(&d.lv);
    table_free(&d.pr);
    cli_overrides_free(&sets);
    return rc == 0 ? CLI_EXIT_OK : rc >= 128 ? rc : CLI_EXIT_ERROR;
}
