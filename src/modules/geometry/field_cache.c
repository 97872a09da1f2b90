/* The disk cache of baked fields (bake.h): one file per field, named by its key.
 *
 *     header  "PBFFIELD" (8 bytes), u32 PBF_BAKE_VERSION, u32 PBF_FIELD_STRIDE, u64 key,
 *             i32 nx, ny, nz, f32 origin x y z, f32 cell, f32 outside, u32 1 (byte order)
 *     data    nx·ny·nz·stride f32
 *     u32     CRC-32 (zlib) of everything before it
 * in the machine's byte order (the marker tells another machine's file apart: it is rebaked).
 * Written to a temporary name and renamed, so a file is whole or absent; any file that does not
 * check out is ignored and baked again. */
#include <errno.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bake.h"

#define MAGIC "PBFFIELD"
#define HEADER_BYTES 64

static void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

void pbf__field_cache_default_dir(char *out, size_t size) {
    const char *env = getenv("PBF_CACHE_DIR");
    if (env != NULL && env[0] != '\0') {
        snprintf(out, size, "%s", env);
        return;
    }
    env = getenv("XDG_CACHE_HOME");
    if (env != NULL && env[0] == '/') {
        snprintf(out, size, "%s/pbf", env);
        return;
    }
    env = getenv("HOME");
    if (env != NULL && env[0] != '\0') {
        snprintf(out, size, "%s/.cache/pbf", env);
        return;
    }
    if (size > 0) out[0] = '\0';
}

static void file_name(const char *dir, uint64_t key, char *out, size_t size) {
    snprintf(out, size, "%s/field-%016llx.pbffield", dir, (unsigned long long)key);
}

static void header(unsigned char *h, uint64_t key, const pbf_field *f) {
    memset(h, 0, HEADER_BYTES);
    memcpy(h, MAGIC, 8);
    const uint32_t version = PBF_BAKE_VERSION, stride = PBF_FIELD_STRIDE, order = 1;
    const int32_t n[3] = {f->nx, f->ny, f->nz};
    const float g[5] = {f->origin.x, f->origin.y, f->origin.z, f->cell, f->outside};
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &stride, 4);
    memcpy(h + 16, &key, 8);
    memcpy(h + 24, n, 12);
    memcpy(h + 36, g, 20);
    memcpy(h + 56, &order, 4);
}

/* Adds n bytes at p to the running CRC-32 (zlib's crc32 takes at most 4 GiB per call). */
static uLong crc_add(uLong crc, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return crc;
}

/* Reads the file's nodes (after the header) into the block lo..lo+n of its grid (nodes per
 * axis; data holds n[0]·n[1]·n[2] records, x fastest), adding every byte read to the CRC. The
 * whole grid is read in one piece; a part of it one z-plane at a time, so that only the block
 * and one plane are held while the whole file still passes through the CRC. */
static int read_block(FILE *fp, const pbf_field *layout, const int lo[3], const int n[3],
                      float *data, uLong *crc) {
    const size_t rec = PBF_FIELD_STRIDE, nx = (size_t)layout->nx, ny = (size_t)layout->ny;
    const size_t plane = nx * ny * rec, row = (size_t)n[0] * rec;
    if (n[0] == layout->nx && n[1] == layout->ny && n[2] == layout->nz) {
        const size_t values = plane * (size_t)layout->nz;
        if (fread(data, sizeof *data, values, fp) != values) return 0;
        *crc = crc_add(*crc, data, values * sizeof *data);
        return 1;
    }
    float *buf = malloc(plane * sizeof *buf);
    int ok = buf != NULL;
    for (int z = 0; z < layout->nz && ok; ++z) {
        ok = fread(buf, sizeof *buf, plane, fp) == plane;
        if (!ok) break;
        *crc = crc_add(*crc, buf, plane * sizeof *buf);
        if (z < lo[2] || z >= lo[2] + n[2]) continue;
        for (int y = 0; y < n[1]; ++y)
            memcpy(data + ((size_t)(z - lo[2]) * n[1] + y) * row,
                   buf + (((size_t)lo[1] + y) * nx + (size_t)lo[0]) * rec, row * sizeof *data);
    }
    free(buf);
    return ok;
}

pbf_status pbf__field_cache_load_block(const char *dir, uint64_t key, const pbf_field *layout,
                                       const int lo[3], const int n[3], pbf_baked_field *out) {
    memset(out, 0, sizeof *out);
    if (dir == NULL || dir[0] == '\0') return PBF_ERR_IO;
    const int whole[3] = {layout->nx, layout->ny, layout->nz};
    for (int k = 0; k < 3; ++k)
        if (lo[k] < 0 || n[k] < 2 || lo[k] + n[k] > whole[k]) return PBF_ERR_IO;
    double t0 = omp_get_wtime();
    char path[1200];
    file_name(dir, key, path, sizeof path);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) return PBF_ERR_IO;
    unsigned char want[HEADER_BYTES], got[HEADER_BYTES];
    header(want, key, layout);
    const size_t values = (size_t)n[0] * n[1] * n[2] * PBF_FIELD_STRIDE;
    float *data = NULL;
    pbf_status st = PBF_ERR_IO;
    if (fread(got, 1, HEADER_BYTES, fp) == HEADER_BYTES && memcmp(got, want, HEADER_BYTES) == 0 &&
        (data = malloc(values * sizeof *data)) != NULL) {
        uLong crc = crc32(0L, got, HEADER_BYTES);
        uint32_t crc_file = 0;
        unsigned char extra;
        if (read_block(fp, layout, lo, n, data, &crc) && fread(&crc_file, 4, 1, fp) == 1 &&
            fread(&extra, 1, 1, fp) == 0 && (uint32_t)crc == crc_file)
            st = PBF_OK;
    }
    fclose(fp);
    if (st != PBF_OK) {
        free(data);
        return st;
    }
    out->field = *layout;
    for (int k = 0; k < 3; ++k) out->field.block_lo[k] = lo[k], out->field.block_n[k] = n[k];
    out->field.node = data;
    out->data = data;
    out->bytes = values * sizeof *data;
    out->from_cache = 1;
    out->seconds = omp_get_wtime() - t0;
    return PBF_OK;
}

pbf_status pbf__field_cache_load(const char *dir, uint64_t key, const pbf_field *layout,
                                 pbf_baked_field *out) {
    const int lo[3] = {0, 0, 0}, n[3] = {layout->nx, layout->ny, layout->nz};
    return pbf__field_cache_load_block(dir, key, layout, lo, n, out);
}

/* mkdir -p */
static int make_dirs(const char *dir) {
    char path[1200];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p != '\0'; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return errno;
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return errno;
    return 0;
}

pbf_status pbf__field_cache_save(const char *dir, uint64_t key, const pbf_baked_field *f, char *err,
                                 size_t err_size) {
    if (dir == NULL || dir[0] == '\0') return PBF_OK;
    int e = make_dirs(dir);
    if (e != 0) {
        set_error(err, err_size, "cannot create the field cache folder '%s': %s", dir, strerror(e));
        return PBF_ERR_IO;
    }
    char path[1200], tmp[1300];
    file_name(dir, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    unsigned char h[HEADER_BYTES];
    header(h, key, &f->field);
    uLong crc = crc_add(crc32(0L, h, HEADER_BYTES), f->data, f->bytes);
    uint32_t crc32v = (uint32_t)crc;
    FILE *fp = fopen(tmp, "wb");
    int ok = fp != NULL && fwrite(h, 1, HEADER_BYTES, fp) == HEADER_BYTES &&
             fwrite(f->data, 1, f->bytes, fp) == f->bytes && fwrite(&crc32v, 4, 1, fp) == 1;
    if (fp != NULL) {
        if (fflush(fp) != 0) ok = 0;
        if (ok && fsync(fileno(fp)) != 0) ok = 0;
        e = errno;
        if (fclose(fp) != 0) ok = 0;
    } else {
        e = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        unlink(tmp);
        set_error(err, err_size, "cannot write the field cache file '%s': %s", path,
                  strerror(e ? e : EIO));
        return PBF_ERR_IO;
    }
    return PBF_OK;
}
