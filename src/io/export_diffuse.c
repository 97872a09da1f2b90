/* The diffuse particles of a frame as a binary PLY file (pbf_export_diffuse_write,
 * include/pbf/export.h): position, velocity, kind, lifetime; written atomically like the
 * particle files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "pbf/diffuse.h"
#include "pbf/export.h"

#define CHUNK 1024
#define RECORD 29 /* 7 floats and a byte */

static void put_le32(unsigned char *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    p[0] = (unsigned char)u, p[1] = (unsigned char)(u >> 8), p[2] = (unsigned char)(u >> 16),
    p[3] = (unsigned char)(u >> 24);
}

pbf_status pbf_export_diffuse_write(const pbf_world *world, const char *path, char *err,
                                    size_t err_size) {
    if (world == NULL || path == NULL) {
        if (err && err_size) snprintf(err, err_size, "pbf_export_diffuse_write: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    const int n = pbf_world_diffuse_count(world);
    float *x = malloc(((size_t)n * 7 + 1) * sizeof *x);
    uint8_t *kind = malloc((size_t)n + 1);
    if (x == NULL || kind == NULL) {
        free(x), free(kind);
        if (err && err_size)
            snprintf(err, err_size, "cannot write '%s': out of memory for %d diffuse particles",
                     path, n);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    float *v = x + 3 * (size_t)n, *life = x + 6 * (size_t)n;
    pbf_world_get_diffuse(world, x, v, kind, life);
    atomic_file af;
    pbf_status st = pbf__atomic_open(&af, path, err, err_size);
    if (st == PBF_OK) {
        pbf__atomic_printf(&af,
                           "ply\n"
                           "format binary_little_endian 1.0\n"
                           "comment pbf diffuse particles: kind 0 spray, 1 foam, 2 bubble\n"
                           "element vertex %d\n"
                           "property float x\nproperty float y\nproperty float z\n"
                           "property float vx\nproperty float vy\nproperty float vz\n"
                           "property uchar kind\n"
                           "property float lifetime\n"
                           "end_header\n",
                           n);
        unsigned char buf[CHUNK * RECORD];
        for (int start = 0; start < n; start += CHUNK) {
            int end = n - start < CHUNK ? n : start + CHUNK;
            unsigned char *dst = buf;
            for (int i = start; i < end; ++i, dst += RECORD) {
                for (int k = 0; k < 3; ++k) {
                    put_le32(dst + 4 * k, x[3 * i + k]);
                    put_le32(dst + 12 + 4 * k, v[3 * i + k]);
                }
                dst[24] = kind[i];
                put_le32(dst + 25, life[i]);
            }
            pbf__atomic_write(&af, buf, (size_t)(dst - buf));
        }
        st = pbf__atomic_commit(&af, err, err_size);
    }
    free(x);
    free(kind);
    return st;
}
