/* A file written under a temporary name and renamed into place (library-internal, src/io/).
 *
 * "<path>.tmp.<pid>" in the same folder (so rename() cannot cross file systems), every write
 * checked, fflush + fsync, then rename over the final name: a file is either complete or absent.
 * The first failure is remembered and reported at commit time, with the path and the system's
 * reason, and the temporary file is removed. Used by the particle exporters (export.c,
 * export_vtu.c). */
#ifndef PBF_IO_ATOMIC_FILE_H
#define PBF_IO_ATOMIC_FILE_H

#include <stdio.h>

#include "pbf/pbf.h"

typedef struct atomic_file {
    FILE *fp;
    const char *path;
    char *tmp;
    int error; /* errno of the first failure, 0 if none */
    const char *what; /* what failed: "write", "flush", ... */
} atomic_file;

/* Opens the temporary file; on failure the message names the path. */
pbf_status pbf__atomic_open(atomic_file *af, const char *path, char *err, size_t err_size);
/* Records a failure of `what` (errno, or EIO) unless one is recorded already. */
void pbf__atomic_fail(atomic_file *af, const char *what);
/* Writes; a no-op after the first failure. */
void pbf__atomic_write(atomic_file *af, const void *data, size_t size);
void pbf__atomic_printf(atomic_file *af, const char *fmt, ...);
/* Flushes, syncs, closes and renames into place; or removes the temporary file and reports the
 * first failure. Frees what atomic_open allocated either way. */
pbf_status pbf__atomic_commit(atomic_file *af, char *err, size_t err_size);

#endif
