/* Status strings, version and error formatting. */
#include <stdio.h>

#include "world_state.h"

const char *pbf_status_string(pbf_status status) {
    switch (status) {
    case PBF_OK: return "ok";
    case PBF_ERR_INVALID_ARG: return "invalid argument";
    case PBF_ERR_OUT_OF_MEMORY: return "out of memory";
    case PBF_ERR_IO: return "i/o error";
    case PBF_ERR_PARSE: return "parse error";
    case PBF_ERR_UNSTABLE: return "simulation unstable";
    case PBF_ERR_NO_DEVICE: return "no device";
    case PBF_ERR_UNSUPPORTED: return "unsupported";
    case PBF_ERR_CAPACITY: return "particle capacity full";
    }
    return "unknown status";
}

const char *pbf_version(void) { return PBF_VERSION_STRING; }

void pbf__format(char *buf, size_t size, const char *fmt, ...) {
    if (!buf || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

pbf_status pbf__fail(pbf_world *w, pbf_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
    return status;
}

const char *pbf_stage_name(pbf_stage stage) {
    static const char *names[PBF_STAGE_COUNT] = {"predict", "grid",     "neighbors", "lambda",
                                                 "delta",   "velocity", "vorticity"};
    return (int)stage >= 0 && stage < PBF_STAGE_COUNT ? names[stage] : "unknown";
}
