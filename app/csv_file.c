/* The per-frame CSV files of `pbf run` (see csv_file.h). */
#include "csv_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pbf/export.h" /* pbf_write_file_atomic */

static int set_path(csv_file *f, const char *dir, const char *name) {
    memset(f, 0, sizeof *f);
    size_t n = strlen(dir) + strlen(name) + 2;
    f->path = malloc(n);
    if (f->path == NULL) return cli_error("out of memory");
    snprintf(f->path, n, "%s/%s", dir, name);
    return 0;
}

/* Writes `len` bytes of text atomically as the whole file, then opens it for appending. */
static int rewrite(csv_file *f, const char *text, size_t len) {
    char err[PBF_ERROR_SIZE];
    if (pbf_write_file_atomic(f->path, text, len, err, sizeof err) != PBF_OK)
        return cli_error("%s", err);
    f->file = fopen(f->path, "a");
    if (f->file == NULL) return cli_error("cannot write '%s': %s", f->path, strerror(errno));
    return 0;
}

int csv_file_create(csv_file *f, const char *dir, const char *name, const char *header,
                    size_t header_len) {
    int rc = set_path(f, dir, name);
    if (rc == 0) rc = rewrite(f, header, header_len);
    if (rc != 0) csv_file_close(f);
    return rc;
}

/* The whole file, NUL-terminated, malloc'd; NULL with errno set on failure. */
static char *read_all(FILE *in, size_t *size) {
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    while (text != NULL) {
        len += fread(text + len, 1, cap - len - 1, in);
        if (len + 1 < cap) break;
        char *bigger = realloc(text, cap * 2);
        if (bigger == NULL) free(text);
        text = bigger;
        cap *= 2;
    }
    if (text == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    text[len] = '\0';
    *size = len;
    return text;
}

int csv_file_resume(csv_file *f, const char *dir, const char *name, int frame, const char *header,
                    size_t header_len) {
    if (set_path(f, dir, name) != 0) return 1;
    FILE *in = fopen(f->path, "rb");
    if (in == NULL && errno == ENOENT && header != NULL) {
        csv_file_close(f);
        return csv_file_create(f, dir, name, header, header_len);
    }
    if (in == NULL) {
        cli_error("cannot resume: '%s': %s", f->path, strerror(errno));
        csv_file_close(f);
        return 1;
    }
    size_t len = 0;
    char *text = read_all(in, &len);
    fclose(in);
    if (text == NULL) {
        cli_error("out of memory reading '%s'", f->path);
        csv_file_close(f);
        return 1;
    }
    /* the header, then rows "N,..." with N = 0, 1, 2, ..., frame; a last row without its
     * newline was cut by a hard kill and goes too */
    char *end = strchr(text, '\n');
    long expect = 0;
    while (end != NULL && expect <= frame) {
        char *row = end + 1, *next = strchr(row, '\n');
        if (next == NULL || !(row[0] >= '0' && row[0] <= '9') || strtol(row, NULL, 10) != expect)
            break;
        end = next;
        ++expect;
    }
    int rc = 0;
    if (end == NULL)
        rc = cli_error("cannot resume: '%s' has no header", f->path);
    else if (expect <= frame)
        rc = cli_error("cannot resume: '%s' has rows for frames 0..%ld, the checkpoint is at "
                       "frame %d",
                       f->path, expect - 1, frame);
    else
        rc = rewrite(f, text, (size_t)(end + 1 - text));
    free(text);
    if (rc != 0) csv_file_close(f);
    return rc;
}

int csv_file_append(csv_file *f, const char *row, size_t row_len, char *err, size_t err_size) {
    /* one fwrite + fflush = one write() call: a row is on disk whole or not at all */
    errno = 0;
    if (fwrite(row, 1, row_len, f->file) != row_len || fflush(f->file) != 0 ||
        fsync(fileno(f->file)) != 0) {
        snprintf(err, err_size, "cannot write '%s': %s", f->path,
                 strerror(errno != 0 ? errno : EIO));
        return 1;
    }
    return 0;
}

void csv_file_close(csv_file *f) {
    if (f->file != NULL) fclose(f->file);
    free(f->path);
    f->file = NULL;
    f->path = NULL;
}
