/* Run-time loading of the OpenGL entry points (see gl.h for why). */
#include "gl.h"

#include "util.h"

#define X(name, type) type pbf_##name = NULL;
#include "gl_functions.h"
#undef X

static int gl_loaded = 0;

pbf_status pbf_gl_load_functions(pbf_gl_get_proc get_proc, char *err, size_t err_size) {
    if (get_proc == NULL) {
        pbf_render_set_error(err, err_size, "OpenGL: no get-proc-address function given");
        return PBF_ERR_INVALID_ARG;
    }
    /* A function pointer from the get-proc routine is converted to the entry point's own type:
     * the only conversion the loaders' contracts allow. */
#define X(name, type)                                                                              \
    pbf_##name = (type)get_proc(#name);                                                            \
    if (pbf_##name == NULL) {                                                                      \
        pbf_render_set_error(err, err_size, "OpenGL: entry point %s not found", #name);            \
        return PBF_ERR_UNSUPPORTED;                                                                \
    }
#include "gl_functions.h"
#undef X
    gl_loaded = 1;
    return PBF_OK;
}

int pbf_gl_loaded(void) { return gl_loaded; }
