/* Grid sort and neighbour search against brute force. */
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "test.h"

typedef struct grid_case {
    pbf_grid g;
    pbf_neighbor_list nl;
    float *x; /* sorted positions */
    int n;
} grid_case;

/* Random positions in [-0.1, 1.1]³ around a unit domain: a third on cell faces (multiples of h
 * on some axis), some outside the domain. Sorted and with a neighbour list built. */
static void make_case(grid_case *c, int n, float h, unsigned seed, int threads) {
    memset(c, 0, sizeof *c);
    srand(seed);
    float *raw = malloc(3 * (size_t)n * sizeof *raw);
    for (int i = 0; i < 3 * n; ++i) {
        float u = (float)rand() / (float)RAND_MAX * 1.2f - 0.1f;
        if (rand() % 3 == 0) u = h * (float)(int)(u / h); /* exactly on a cell face */
        raw[i] = u;
    }
    pbf_grid_layout(&c->g, v3(0, 0, 0), v3(1, 1, 1), h);
    c->g.cell_start = calloc((size_t)c->g.cell_count + 1, sizeof(uint32_t));
    c->g.cursor = calloc((size_t)c->g.cell_count, sizeof(uint32_t));
    c->g.cell_of = malloc((size_t)n * sizeof(uint32_t));
    c->g.order = malloc((size_t)n * sizeof(uint32_t));
    pbf_grid_sort(&c->g, raw, n, threads);
    c->x = malloc(3 * (size_t)n * sizeof *c->x);
    for (int i = 0; i < n; ++i) v3_store(c->x, i, v3_load(raw, (int)c->g.order[i]));
    c->nl.start = malloc(((size_t)n + 1) * sizeof(uint32_t));
    pbf_neighbor_list_build(&c->nl, &c->g, c->x, raw, n, h, threads); /* raw: the scratch */
    c->n = n;
    free(raw);
}

static void free_case(grid_case *c) {
    free(c->g.cell_start);
    free(c->g.cursor);
    free(c->g.cell_of);
    free(c->g.order);
    free(c->nl.start);
    pbf_neighbor_list_free(&c->nl); /* index and the per-thread chunks (leak found by ASan) */
    free(c->x);
}

static int sort_is_stable_and_grouped(void) {
    grid_case c;
    make_case(&c, 5000, 0.1f, 3, 2);
    for (int i = 1; i < c.n; ++i) {
        ENSURE(c.g.cell_of[i - 1] <= c.g.cell_of[i]);
        if (c.g.cell_of[i - 1] == c.g.cell_of[i]) ENSURE(c.g.order[i - 1] < c.g.order[i]);
    }
    for (int i = 0; i < c.n; ++i) ENSURE(c.g.cell_of[i] == pbf_grid_cell(&c.g, v3_load(c.x, i)));
    ENSURE(c.g.cell_start[c.g.cell_count] == (uint32_t)c.n);
    free_case(&c);
    return 0;
}

static int neighbor_list_equals_brute_force(void) {
    const float h = 0.15f;
    grid_case c;
    make_case(&c, 4000, h, 11, 2);
    char *mark = calloc((size_t)c.n, 1);
    long pairs = 0;
    for (int i = 0; i < c.n; ++i) {
        pbf_v3 xi = v3_load(c.x, i);
        int expected = 0;
        for (uint32_t k = c.nl.start[i]; k < c.nl.start[i + 1]; ++k) mark[c.nl.index[k]] = 1;
        for (int j = 0; j < c.n; ++j) {
            pbf_v3 d = v3_sub(xi, v3_load(c.x, j));
            int near = j != i && v3_dot(d, d) < h * h;
            ENSURE(near == mark[j]); /* every true neighbour listed, nothing else */
            expected += near;
        }
        ENSURE((int)(c.nl.start[i + 1] - c.nl.start[i]) == expected);
        for (uint32_t k = c.nl.start[i]; k < c.nl.start[i + 1]; ++k) mark[c.nl.index[k]] = 0;
        pairs += expected;
    }
    ENSURE(pairs > 10 * c.n); /* the case is dense enough to mean something */
    free(mark);
    free_case(&c);
    return 0;
}

/* The cell ranges cover every neighbour (the property the cells mode relies on). */
static int cell_ranges_cover_neighbors(void) {
    const float h = 0.1f;
    grid_case c;
    make_case(&c, 3000, h, 5, 1);
    for (int i = 0; i < c.n; ++i) {
        uint32_t r[18];
        int nr = pbf_grid_ranges(&c.g, c.g.cell_of[i], r);
        for (uint32_t k = c.nl.start[i]; k < c.nl.start[i + 1]; ++k) {
            uint32_t j = c.nl.index[k];
            int covered = 0;
            for (int q = 0; q < nr; ++q) covered |= j >= r[2 * q] && j < r[2 * q + 1];
            ENSURE(covered);
        }
    }
    free_case(&c);
    return 0;
}

/* Same list for 1 and 2 threads. */
static int neighbor_list_independent_of_threads(void) {
    grid_case a, b;
    make_case(&a, 3000, 0.1f, 9, 1);
    make_case(&b, 3000, 0.1f, 9, 2);
    ENSURE(memcmp(a.nl.start, b.nl.start, ((size_t)a.n + 1) * sizeof(uint32_t)) == 0);
    ENSURE(memcmp(a.nl.index, b.nl.index, a.nl.start[a.n] * sizeof(uint32_t)) == 0);
    free_case(&a);
    free_case(&b);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(sort_is_stable_and_grouped);
RUN_TEST(neighbor_list_equals_brute_force);
RUN_TEST(cell_ranges_cover_neighbors);
RUN_TEST(neighbor_list_independent_of_threads);
TEST_MAIN_END
