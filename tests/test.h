/* Tiny test macros (after Box2D's test/test_macros.h). A test is a function returning 0 on
 * success; ENSURE* print the failing expression with file and line and return 1. */
#ifndef PBF_TEST_H
#define PBF_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"

#define ENSURE(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: ENSURE(%s) failed\n", __FILE__, __LINE__, #cond);              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* |a - b| <= tol, printing both values on failure. */
#define ENSURE_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double ensure_a_ = (double)(a), ensure_b_ = (double)(b);                                   \
        if (!(fabs(ensure_a_ - ensure_b_) <= (double)(tol))) {                                     \
            fprintf(stderr, "%s:%d: ENSURE_NEAR(%s, %s, %s) failed: %.9g vs %.9g\n", __FILE__,     \
                    __LINE__, #a, #b, #tol, ensure_a_, ensure_b_);                                 \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* 1 in the sanitizer build's CTest run (PBF_SANITIZED=1, tests/CMakeLists.txt). The long physics
 * tests then run a short variant there: the same worlds and code paths for a few frames, with
 * every check that holds that early, but not the bounds that need the full run (a settled
 * state); the release build runs the full version and checks them. Unset, or run by hand, every
 * test runs in full. */
static inline int test_sanitized(void) {
    const char *e = getenv("PBF_SANITIZED");
    return e != NULL && e[0] == '1';
}

/* A world of def d, or NULL with the library's message printed. */
static inline pbf_world *test_world_create(const pbf_world_def *d) {
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "create: %s\n", err);
        return NULL;
    }
    return w;
}

/* 1 when each of the n positions x (3 floats each) lies in the world's domain as it is now
 * (walls may move). */
static inline int all_in_domain(const pbf_world *w, const float *x, int n) {
    pbf_vec3 lo, hi;
    pbf_world_get_domain(w, &lo, &hi);
    for (int i = 0; i < n; ++i, x += 3)
        if (!(x[0] >= lo.x && x[0] <= hi.x && x[1] >= lo.y && x[1] <= hi.y && x[2] >= lo.z &&
              x[2] <= hi.z))
            return 0;
    return 1;
}

/* Runs one test function and counts it. PBF_TEST_FILTER=TEXT runs only the tests whose name
 * contains TEXT (a slow tool such as compute-sanitizer on one part of a program). */
/* PBF_TEST_FILTER=TEXT runs the tests whose name holds TEXT; !TEXT those whose name does not
 * (tests/CMakeLists.txt runs a long test's parts as separate ctest cases this way). */
static inline int test_selected(const char *name) {
    const char *f = getenv("PBF_TEST_FILTER");
    if (f == NULL || f[0] == '\0') return 1;
    if (f[0] == '!') return strstr(name, f + 1) == NULL;
    return strstr(name, f) != NULL;
}

#define RUN_TEST(fn)                                                                               \
    do {                                                                                           \
        if (!test_selected(#fn)) break;                                                            \
        int test_rc_ = fn();                                                                       \
        printf("%-48s %s\n", #fn, test_rc_ == 0 ? "ok" : "FAILED");                                \
        fflush(stdout);                                                                            \
        if (test_rc_ != 0) ++test_failures_;                                                       \
    } while (0)

#define TEST_MAIN_BEGIN                                                                            \
    int main(void) {                                                                               \
        int test_failures_ = 0;
#define TEST_MAIN_END                                                                              \
    return test_failures_ == 0 ? 0 : 1;                                                            \
    }

#endif
