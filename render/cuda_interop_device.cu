/* The CUDA half of the renderer's interop (cuda_interop_device.h): the GL buffers registered
 * with CUDA, a world's arrays copied into them on the device, the colour values and the
 * ellipsoids computed there. Nothing goes through host memory but a few bytes (the largest
 * speed). */
#include <cuda_runtime.h>
// After cuda_runtime.h; it includes the legacy <GL/gl.h> for GLuint, which is why this file
// holds all the CUDA side and cuda_interop.c all the GL side.
#include <cuda_gl_interop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_interop_device.h"
extern "C" {
#include "util.h" /* pbf_render_set_error */
}

struct rc_device {
    int device;
    cudaStream_t stream;
    cudaGraphicsResource_t res[RC_SLOTS]; /* NULL: slot empty */
    float *snap_x, *snap_v, *snap_rho; /* the snapshot (rc_device_snapshot) */
    int snap_count, snap_capacity;
    unsigned int *d_max; /* the largest speed's bits (non-negative floats sort as integers) */
    unsigned int *h_max; /* pinned */
    pbf_surface_gpu *surface;
};

namespace {

const int BLOCK = 256;

/* A CUDA error as a status, with what failed and for how many particles. */
pbf_status fail(cudaError_t e, const char *what, int count, char *err, size_t size) {
    if (e == cudaErrorMemoryAllocation) {
        pbf_render_set_error(
            err, size, "CUDA–OpenGL interop: out of device memory %s (%d particles)", what, count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    pbf_render_set_error(err, size, "CUDA–OpenGL interop: %s (%d particles) failed: %s (%s)", what,
                         count, cudaGetErrorString(e), cudaGetErrorName(e));
    return PBF_ERR_NO_DEVICE;
}

/* |v| of each particle, as the host path's compute_scalars; the largest (NaN left out, as
 * there) into *max_bits: a warp's maximum first, then one atomic per warp. Integer maxima of
 * non-negative floats' bits are exact, so the result does not depend on the order. */
__global__ void __launch_bounds__(BLOCK)
    k_speed(int n, const float *__restrict__ v, float *__restrict__ out, unsigned int *max_bits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int bits = 0u;
    if (i < n) {
        const float x = v[3 * i], y = v[3 * i + 1], z = v[3 * i + 2];
        const float s = sqrtf(x * x + y * y + z * z);
        out[i] = s;
        if (s == s) bits = __float_as_uint(s);
    }
    bits = __reduce_max_sync(0xffffffffu, bits);
    if ((threadIdx.x & 31) == 0 && bits != 0u) atomicMax(max_bits, bits);
}

} // namespace

extern "C" pbf_status rc_device_create(const char *gl_renderer, rc_device **out, char *err,
                                       size_t err_size) {
    *out = nullptr;
    unsigned int count = 0;
    int devices[8];
    cudaError_t e = cudaGLGetDevices(&count, devices, 8, cudaGLDeviceListAll);
    if (e != cudaSuccess || count == 0) {
        pbf_render_set_error(
            err, err_size,
            "CUDA–OpenGL interop: the OpenGL context (%s) does not run on a CUDA device%s%s%s",
            gl_renderer, e != cudaSuccess ? " (" : "",
            e != cudaSuccess ? cudaGetErrorString(e) : "", e != cudaSuccess ? ")" : "");
        cudaGetLastError(); /* clear it */
        return PBF_ERR_NO_DEVICE;
    }
    rc_device *d = (rc_device *)calloc(1, sizeof *d);
    if (!d) {
        pbf_render_set_error(err, err_size, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    d->device = devices[0];
    e = cudaSetDevice(d->device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMalloc((void **)&d->d_max, sizeof *d->d_max);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&d->h_max, sizeof *d->h_max);
    if (e != cudaSuccess) {
        pbf_status st = fail(e, "setting up", 0, err, err_size);
        rc_device_destroy(d);
        return st;
    }
    char why[PBF_ERROR_SIZE];
    pbf_status st = pbf_surface_gpu_create(&d->surface, why, sizeof why);
    if (st != PBF_OK) {
        pbf_render_set_error(err, err_size, "CUDA–OpenGL interop: %s", why);
        rc_device_destroy(d);
        return st;
    }
    *out = d;
    return PBF_OK;
}

extern "C" void rc_device_destroy(rc_device *d) {
    if (!d) return;
    cudaSetDevice(d->device);
    for (int k = 0; k < RC_SLOTS; ++k)
        if (d->res[k]) cudaGraphicsUnregisterResource(d->res[k]);
    cudaFree(d->snap_x);
    cudaFree(d->snap_v);
    cudaFree(d->snap_rho);
    cudaFree(d->d_max);
    cudaFreeHost(d->h_max);
    pbf_surface_gpu_destroy(d->surface);
    if (d->stream) cudaStreamDestroy(d->stream);
    free(d);
}

extern "C" int rc_device_ordinal(const rc_device *d) { return d->device; }

extern "C" pbf_status rc_device_register(rc_device *d, int slot, unsigned buffer, char *err,
                                         size_t err_size) {
    cudaError_t e = cudaSetDevice(d->device);
    if (e == cudaSuccess && d->res[slot]) e = cudaGraphicsUnregisterResource(d->res[slot]);
    d->res[slot] = nullptr;
    if (e == cudaSuccess && buffer != 0)
        e = cudaGraphicsGLRegisterBuffer(&d->res[slot], buffer,
                                         cudaGraphicsRegisterFlagsWriteDiscard);
    return e == cudaSuccess ? PBF_OK : fail(e, "registering a GL buffer", 0, err, err_size);
}

static pbf_status check_device(const rc_device *d, const pbf_device_view *v, char *err,
                               size_t err_size) {
    if (v->count > 0 && v->device != d->device) {
        pbf_render_set_error(
            err, err_size,
            "CUDA–OpenGL interop: the particles are on CUDA device %d, the OpenGL context "
            "on device %d",
            v->device, d->device);
        return PBF_ERR_INVALID_ARG;
    }
    return PBF_OK;
}

extern "C" pbf_status rc_device_snapshot(rc_device *d, const pbf_device_view *v, char *err,
                                         size_t err_size) {
    pbf_status st = check_device(d, v, err, err_size);
    if (st != PBF_OK) return st;
    const int n = v->count;
    cudaError_t e = cudaSetDevice(d->device);
    if (e == cudaSuccess && n > d->snap_capacity) {
        cudaFree(d->snap_x);
        cudaFree(d->snap_v);
        cudaFree(d->snap_rho);
        d->snap_x = d->snap_v = d->snap_rho = nullptr;
        d->snap_capacity = 0;
        const size_t cap = (size_t)n + (size_t)n / 4;
        e = cudaMalloc((void **)&d->snap_x, 3 * cap * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&d->snap_v, 3 * cap * sizeof(float));
        if (e == cudaSuccess) e = cudaMalloc((void **)&d->snap_rho, cap * sizeof(float));
        if (e == cudaSuccess) d->snap_capacity = (int)cap;
    }
    const size_t v3 = 3 * (size_t)n * sizeof(float), s1 = (size_t)n * sizeof(float);
    if (e == cudaSuccess && n > 0) {
        e = cudaMemcpyAsync(d->snap_x, v->positions, v3, cudaMemcpyDeviceToDevice, d->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(d->snap_v, v->velocities, v3, cudaMemcpyDeviceToDevice, d->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(d->snap_rho, v->densities, s1, cudaMemcpyDeviceToDevice, d->stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess) return fail(e, "copying the particles", n, err, err_size);
    d->snap_count = n;
    return PBF_OK;
}

extern "C" pbf_device_view rc_device_snapshot_view(const rc_device *d) {
    pbf_device_view v;
    v.device = d->device;
    v.count = d->snap_count;
    v.positions = d->snap_count > 0 ? d->snap_x : nullptr;
    v.velocities = d->snap_count > 0 ? d->snap_v : nullptr;
    v.densities = d->snap_count > 0 ? d->snap_rho : nullptr;
    return v;
}

/* The device address of a mapped slot, checked to hold `bytes`. */
static cudaError_t mapped(rc_device *d, int slot, size_t bytes, void **ptr) {
    size_t size = 0;
    cudaError_t e = cudaGraphicsResourceGetMappedPointer(ptr, &size, d->res[slot]);
    if (e == cudaSuccess && size < bytes) e = cudaErrorInvalidValue;
    return e;
}

extern "C" pbf_status rc_device_fill(rc_device *d, const pbf_device_view *v, int scalar_mode,
                                     const pbf_surface_def *surface, float *max_speed, char *err,
                                     size_t err_size) {
    pbf_status st = check_device(d, v, err, err_size);
    if (st != PBF_OK) return st;
    const int n = v->count;
    *max_speed = 0.0f;
    if (n == 0) return PBF_OK;
    cudaGraphicsResource_t list[RC_SLOTS];
    int used = 0;
    const int want[RC_SLOTS] = {1, scalar_mode != RC_SCALARS_NONE, surface != nullptr,
                                surface != nullptr};
    for (int k = 0; k < RC_SLOTS; ++k) {
        if (!want[k]) continue;
        if (!d->res[k]) {
            pbf_render_set_error(err, err_size,
                                 "CUDA–OpenGL interop: GL buffer %d is not registered", k);
            return PBF_ERR_INVALID_ARG;
        }
        list[used++] = d->res[k];
    }
    cudaError_t e = cudaSetDevice(d->device);
    if (e == cudaSuccess) e = cudaGraphicsMapResources(used, list, d->stream);
    if (e != cudaSuccess) return fail(e, "mapping the GL buffers", n, err, err_size);
    const char *stage = "copying the positions";
    void *pos = nullptr, *scal = nullptr, *centers = nullptr, *axes = nullptr;
    const size_t v3 = 3 * (size_t)n * sizeof(float), s1 = (size_t)n * sizeof(float);
    e = mapped(d, RC_POSITIONS, v3, &pos);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(pos, v->positions, v3, cudaMemcpyDeviceToDevice, d->stream);
    if (e == cudaSuccess && scalar_mode == RC_SCALARS_SPEED) {
        stage = "computing the speeds";
        e = mapped(d, RC_SCALARS, s1, &scal);
        if (e == cudaSuccess) e = cudaMemsetAsync(d->d_max, 0, sizeof *d->d_max, d->stream);
        if (e == cudaSuccess) {
            k_speed<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, d->stream>>>(n, v->velocities,
                                                                      (float *)scal, d->d_max);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(d->h_max, d->d_max, sizeof *d->h_max, cudaMemcpyDeviceToHost,
                                d->stream);
    } else if (e == cudaSuccess && scalar_mode == RC_SCALARS_DENSITY) {
        stage = "copying the densities";
        e = mapped(d, RC_SCALARS, s1, &scal);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(scal, v->densities, s1, cudaMemcpyDeviceToDevice, d->stream);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
    if (e == cudaSuccess && surface != nullptr) {
        stage = "the ellipsoids";
        e = mapped(d, RC_CENTERS, v3, &centers);
        if (e == cudaSuccess) e = mapped(d, RC_AXES, 3 * v3, &axes);
        if (e == cudaSuccess) {
            char why[PBF_ERROR_SIZE];
            st = pbf_surface_gpu_anisotropy(d->surface, surface, v->positions, n, (float *)centers,
                                            (float *)axes, why, sizeof why);
            if (st != PBF_OK) pbf_render_set_error(err, err_size, "CUDA–OpenGL interop: %s", why);
        }
    }
    cudaError_t eu = cudaGraphicsUnmapResources(used, list, d->stream);
    if (e == cudaSuccess) e = eu;
    if (e != cudaSuccess) return fail(e, stage, n, err, err_size);
    if (st != PBF_OK) return st;
    if (scalar_mode == RC_SCALARS_SPEED) {
        float m;
        memcpy(&m, d->h_max, sizeof m);
        *max_speed = m;
    }
    return PBF_OK;
}
