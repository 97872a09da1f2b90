/* PNG files through libpng's simplified API. Writes go to a temporary file beside the target
 * and are renamed into place (DESIGN.md §12). */
#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pbf/render.h"
#include "util.h"

/* Opens a unique temporary file "<path>.XXXXXX" in the target's folder. */
static FILE *open_temp(const char *path, char *tmp, size_t tmp_size) {
    int len = snprintf(tmp, tmp_size, "%s.XXXXXX", path);
    if (len < 0 || (size_t)len >= tmp_size) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) return NULL;
    /* mkstemp makes the file private; a picture is for everyone who can read the folder. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *f = fdopen(fd, "wb");
    if (f == NULL) {
        close(fd);
        unlink(tmp);
    }
    return f;
}

pbf_status pbf_png_write(const char *path, const uint8_t *rgba, int width, int height, char *err,
                         size_t err_size) {
    if (path == NULL || rgba == NULL || width <= 0 || height <= 0) {
        pbf_render_set_error(err, err_size, "pbf_png_write: invalid argument");
        return PBF_ERR_INVALID_ARG;
    }
    char tmp[4096];
    FILE *f = open_temp(path, tmp, sizeof tmp);
    if (f == NULL) {
        pbf_render_set_error(err, err_size, "%s: cannot create: %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_RGBA;
    int ok = png_image_write_to_stdio(&image, f, 0, rgba, width * 4, NULL);
    char message[sizeof image.message];
    memcpy(message, image.message, sizeof message);
    png_image_free(&image);
    int flushed = fflush(f) == 0 && fsync(fileno(f)) == 0;
    int closed = fclose(f) == 0;
    if (!ok || !flushed || !closed) {
        unlink(tmp);
        pbf_render_set_error(err, err_size, "%s: cannot write: %s", path,
                             !ok ? message : strerror(errno));
        return PBF_ERR_IO;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        pbf_render_set_error(err, err_size, "%s: cannot rename into place: %s", path, strerror(e));
        return PBF_ERR_IO;
    }
    return PBF_OK;
}

pbf_status pbf_png_read(const char *path, uint8_t **rgba, int *width, int *height, char *err,
                        size_t err_size) {
    if (path == NULL || rgba == NULL || width == NULL || height == NULL) {
        pbf_render_set_error(err, err_size, "pbf_png_read: invalid argument");
        return PBF_ERR_INVALID_ARG;
    }
    *rgba = NULL;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&image, path)) {
        pbf_render_set_error(err, err_size, "%s: cannot read PNG: %s", path, image.message);
        png_image_free(&image);
        return PBF_ERR_IO;
    }
    image.format = PNG_FORMAT_RGBA;
    size_t bytes = PNG_IMAGE_SIZE(image);
    uint8_t *buf = malloc(bytes);
    if (buf == NULL) {
        png_image_free(&image);
        pbf_render_set_error(err, err_size, "%s: out of memory", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    if (!png_image_finish_read(&image, NULL, buf, 0, NULL)) {
        pbf_render_set_error(err, err_size, "%s: cannot decode PNG: %s", path, image.message);
        free(buf);
        png_image_free(&image);
        return PBF_ERR_PARSE;
    }
    *rgba = buf;
    *width = (int)image.width;
    *height = (int)image.height;
    png_image_free(&image);
    return PBF_OK;
}
