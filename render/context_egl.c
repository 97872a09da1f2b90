/* Headless OpenGL through EGL: no window system, rendering goes to framebuffer objects.
 *
 * Display order: the device platform first (EGL_EXT_platform_device: how NVIDIA's driver runs
 * without X, and Mesa lists its software device there too), then Mesa's surfaceless platform,
 * then the default display (which honours EGL_PLATFORM=surfaceless). The first display that
 * initialises and gives a desktop OpenGL core context of version 3.3 or later wins. Among the
 * devices, those of CUDA GPUs come first (EGL_NV_device_cuda), CUDA device 0 (the CUDA
 * backend's) before the others, so that CUDA–OpenGL interop finds the world's GPU under the
 * context; then the rest in the driver's order. */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl.h"
#include "util.h"

struct pbf_gl_context {
    EGLDisplay display;
    EGLContext context;
    char description[256];
};

static int has_extension(const char *list, const char *name) {
    if (list == NULL) return 0;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    }
    return 0;
}

/* Creates a core context on an initialised display, newest version first. */
static EGLContext create_core_context(EGLDisplay dpy) {
    if (!eglBindAPI(EGL_OPENGL_API)) return EGL_NO_CONTEXT;
    const char *ext = eglQueryString(dpy, EGL_EXTENSIONS);
    EGLConfig config = (EGLConfig)0;
    if (!has_extension(ext, "EGL_KHR_no_config_context") &&
        !has_extension(ext, "EGL_MESA_configless_context")) {
        /* No configless contexts: any config that supports desktop GL and pbuffers will do,
         * the context never renders to a surface of its own. */
        const EGLint attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                  EGL_OPENGL_BIT, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(dpy, attribs, &config, 1, &n) || n < 1) return EGL_NO_CONTEXT;
    }
    static const EGLint versions[][2] = {{4, 6}, {4, 5}, {4, 3}, {4, 1}, {3, 3}};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
        const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION,
                                  versions[i][0],
                                  EGL_CONTEXT_MINOR_VERSION,
                                  versions[i][1],
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                  EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                  EGL_NONE};
        EGLContext c = eglCreateContext(dpy, config, EGL_NO_CONTEXT, attribs);
        if (c != EGL_NO_CONTEXT) return c;
    }
    return EGL_NO_CONTEXT;
}

/* 0: the EGL device of CUDA device 0; 1: of another CUDA device; 2: not a CUDA device (Mesa's
 * software device, or no way to ask). */
static int cuda_device_rank(EGLDeviceEXT device) {
    PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    PFNEGLQUERYDEVICEATTRIBEXTPROC query_attrib =
        (PFNEGLQUERYDEVICEATTRIBEXTPROC)eglGetProcAddress("eglQueryDeviceAttribEXT");
    if (query_string == NULL || query_attrib == NULL) return 2;
    if (!has_extension(query_string(device, EGL_EXTENSIONS), "EGL_NV_device_cuda")) return 2;
    EGLAttrib ordinal = -1;
    if (!query_attrib(device, EGL_CUDA_DEVICE_NV, &ordinal)) return 2;
    return ordinal == 0 ? 0 : 1;
}

static pbf_gl_proc egl_get_proc(const char *name) { return (pbf_gl_proc)eglGetProcAddress(name); }

/* Tries one display: initialise, create, make current. Leaves nothing behind on failure. */
static int try_display(EGLDisplay dpy, const char *label, pbf_gl_context *ctx) {
    if (dpy == EGL_NO_DISPLAY) return 0;
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) return 0;
    EGLContext c = create_core_context(dpy);
    if (c == EGL_NO_CONTEXT) {
        eglTerminate(dpy);
        return 0;
    }
    if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) {
        eglDestroyContext(dpy, c);
        eglTerminate(dpy);
        return 0;
    }
    ctx->display = dpy;
    ctx->context = c;
    snprintf(ctx->description, sizeof ctx->description, "%s", label);
    return 1;
}

pbf_status pbf_gl_context_create_headless(pbf_gl_context **out, char *err, size_t err_size) {
    if (out == NULL) {
        pbf_render_set_error(err, err_size, "pbf_gl_context_create_headless: out is NULL");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
    pbf_gl_context *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        pbf_render_set_error(err, err_size, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    int ok = 0;
    if (get_platform_display != NULL && has_extension(client, "EGL_EXT_platform_device")) {
        PFNEGLQUERYDEVICESEXTPROC query_devices =
            (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
        EGLDeviceEXT devices[16];
        EGLint n = 0;
        if (query_devices != NULL && query_devices(16, devices, &n)) {
            int rank[16], order[16];
            for (EGLint i = 0; i < n; ++i) rank[i] = cuda_device_rank(devices[i]);
            int m = 0; /* a stable order by rank */
            for (int r = 0; r < 3; ++r)
                for (EGLint i = 0; i < n; ++i)
                    if (rank[i] == r) order[m++] = (int)i;
            for (int k = 0; k < m && !ok; ++k) {
                EGLDisplay dpy =
                    get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[order[k]], NULL);
                ok = try_display(dpy,
                                 rank[order[k]] == 0   ? "EGL device (CUDA device 0)"
                                 : rank[order[k]] == 1 ? "EGL device (a CUDA device)"
                                                       : "EGL device",
                                 ctx);
            }
        }
    }
    if (!ok && get_platform_display != NULL &&
        has_extension(client, "EGL_MESA_platform_surfaceless")) {
        EGLDisplay dpy =
            get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        ok = try_display(dpy, "EGL surfaceless", ctx);
    }
    if (!ok) ok = try_display(eglGetDisplay(EGL_DEFAULT_DISPLAY), "EGL default display", ctx);
    if (!ok) {
        pbf_render_set_error(err, err_size,
                             "EGL: no display gave an OpenGL 3.3 core context (tried the device "
                             "platform, Mesa surfaceless and the default display; last EGL error "
                             "0x%x). On Mesa, install libegl-mesa0 and libgl1-mesa-dri.",
                             (unsigned)eglGetError());
        free(ctx);
        return PBF_ERR_NO_DEVICE;
    }
    pbf_status st = pbf_render_load_gl(egl_get_proc, err, err_size);
    if (st != PBF_OK) {
        pbf_gl_context_destroy(ctx);
        return st;
    }
    size_t len = strlen(ctx->description);
    snprintf(ctx->description + len, sizeof ctx->description - len, ": %s, OpenGL %s",
             (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION));
    *out = ctx;
    return PBF_OK;
}

void pbf_gl_context_destroy(pbf_gl_context *ctx) {
    if (ctx == NULL) return;
    eglMakeCurrent(ctx->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(ctx->display, ctx->context);
    eglTerminate(ctx->display);
    free(ctx);
}

const char *pbf_gl_context_description(const pbf_gl_context *ctx) {
    return ctx != NULL ? ctx->description : "";
}
