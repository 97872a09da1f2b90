/* Atomic files (see atomic_file.h). Library code: never prints, never exits. */
#include "atomic_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void set_error(char *err, size_t err_size, const char *fmt, ...) {
    if (err == NULL || err_size == 0) return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_size, fmt, args);
    va_end(args);
}

pbf_status pbf__atomic_open(atomic_file *af, const char *path, char *err, size_t err_size) {
    memset(af, 0, sizeof *af);
    af->path = path;
    size_t n = strlen(path) + 32;
    af->tmp = malloc(n);
    if (af->tmp == NULL) {
        set_error(err, err_size, "%s: out of memory", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    snprintf(af->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    af->fp = fopen(af->tmp, "wb");
    if (af->fp == NULL) {
        int e = errno;
        set_error(err, err_size, "cannot write '%s': %s", path, strerror(e));
        free(af->tmp);
        af->tmp = NULL;
        return PBF_ERR_IO;
    }
    return PBF_OK;
}

void pbf__atomic_fail(atomic_file *af, const char *what) {
    if (af->error == 0) {
        af->error = errno != 0 ? errno : EIO;
        af->what = what;
    }
}

void pbf__atomic_write(atomic_file *af, const void *data, size_t size) {
    if (af->error != 0 || size == 0) return;
    errno = 0;
    if (fwrite(data, 1, size, af->fp) != size) pbf__atomic_fail(af, "write");
}

void pbf__atomic_printf(atomic_file *af, const char *fmt, ...) {
    if (af->error != 0) return;
    va_list args;
    va_start(args, fmt);
    errno = 0;
    int rc = vfprintf(af->fp, fmt, args);
    va_end(args);
    if (rc < 0) pbf__atomic_fail(af, "write");
}

pbf_status pbf__atomic_commit(atomic_file *af, char *err, size_t err_size) {
    if (af->error == 0) {
        errno = 0;
        if (fflush(af->fp) != 0) pbf__atomic_fail(af, "write");
    }
    if (af->error == 0) {
        errno = 0;
        if (fsync(fileno(af->fp)) != 0) pbf__atomic_fail(af, "sync");
    }
    errno = 0;
    if (fclose(af->fp) != 0) pbf__atomic_fail(af, "close");
    af->fp = NULL;
    if (af->error == 0) {
        errno = 0;
        if (rename(af->tmp, af->path) != 0) pbf__atomic_fail(af, "rename");
    }
    pbf_status status = PBF_OK;
    if (af->error != 0) {
        remove(af->tmp);
        set_error(err, err_size, "cannot write '%s': %s failed: %s", af->path, af->what,
                  strerror(af->error));
        status = PBF_ERR_IO;
    }
    free(af->tmp);
    af->tmp = NULL;
    return status;
}
