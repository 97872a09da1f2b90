/* png_check FILE WIDTH HEIGHT: exits 0 when FILE is a PNG of that size that shows a picture
 * (many colours) with the viewer's HUD on it (white text pixels in the top-left corner). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/render.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: png_check FILE WIDTH HEIGHT\n");
        return 2;
    }
    char err[PBF_ERROR_SIZE];
    uint8_t *img = NULL;
    int w = 0, h = 0;
    if (pbf_png_read(argv[1], &img, &w, &h, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "png_check: %s\n", err);
        return 1;
    }
    int ok = 1;
    if (w != atoi(argv[2]) || h != atoi(argv[3])) {
        fprintf(stderr, "png_check: %s is %dx%d, expected %sx%s\n", argv[1], w, h, argv[2],
                argv[3]);
        ok = 0;
    }
    /* Distinct colours (coarsely binned) and white HUD pixels. */
    static unsigned char seen[4096];
    int colours = 0, white = 0;
    for (int y = 0; y < h; ++y) {
        for (int x = 0; x < w; ++x) {
            const uint8_t *p = img + 4 * ((size_t)y * (size_t)w + (size_t)x);
            int bin = (p[0] >> 4) << 8 | (p[1] >> 4) << 4 | (p[2] >> 4);
            if (!seen[bin]) {
                seen[bin] = 1;
                ++colours;
            }
            if (x < w / 2 && y < h / 4 && p[0] == 255 && p[1] == 255 && p[2] == 255) ++white;
        }
    }
    printf("png_check: %s %dx%d, %d colour bins, %d white HUD pixels\n", argv[1], w, h, colours,
           white);
    if (colours < 20) {
        fprintf(stderr, "png_check: too few colours: not a rendered scene\n");
        ok = 0;
    }
    if (white < 50) {
        fprintf(stderr, "png_check: no HUD text found\n");
        ok = 0;
    }
    free(img);
    return ok ? 0 : 1;
}
