/* Small helpers of the surface reconstruction (surface_util.h): messages, threads, input
 * checks. They call nothing else in src/surface/. */
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>

#include "surface_util.h"

void surface_format(char *err, size_t err_size, const char *fmt, ...) {
    if (err == NULL || err_size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

int surface_threads(const pbf_surface_def *def) {
    return def->threads > 0 ? def->threads : omp_get_max_threads();
}

int surface_find_nonfinite(const float *p, int count, int threads) {
    int first = count;
#pragma omp parallel for num_threads(threads) reduction(min : first) schedule(static)
    for (int i = 0; i < count; ++i)
        if (!isfinite(p[3 * (size_t)i]) || !isfinite(p[3 * (size_t)i + 1]) ||
            !isfinite(p[3 * (size_t)i + 2]))
            if (i < first) first = i;
    return first < count ? first : -1;
}
