/* pbf_cuda_format (format.h). */
#include "format.h"

#include <stdarg.h>
#include <stdio.h>

void pbf_cuda_format(char *buf, size_t size, const char *fmt, ...) {
    if (!buf || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}
