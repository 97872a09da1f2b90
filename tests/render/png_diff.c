/* png_diff A B: compares two PNG images of the same size; prints the share of pixels whose
 * colour differs by more than 24 (of 255) in some channel, in percent, and the mean absolute
 * difference over the channels. Exits 0 when it could compare them, 1 otherwise (unreadable
 * files, different sizes). The render tests decide from the numbers. */
#include <stdio.h>
#include <stdlib.h>

#include "pbf/render.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: png_diff A B\n");
        return 2;
    }
    char err[PBF_ERROR_SIZE];
    uint8_t *a = NULL, *b = NULL;
    int wa = 0, ha = 0, wb = 0, hb = 0;
    if (pbf_png_read(argv[1], &a, &wa, &ha, err, sizeof err) != PBF_OK ||
        pbf_png_read(argv[2], &b, &wb, &hb, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "png_diff: %s\n", err);
        free(a);
        return 1;
    }
    if (wa != wb || ha != hb) {
        fprintf(stderr, "png_diff: %s is %dx%d, %s is %dx%d\n", argv[1], wa, ha, argv[2], wb, hb);
        free(a);
        free(b);
        return 1;
    }
    size_t pixels = (size_t)wa * (size_t)ha, differ = 0;
    double sum = 0.0;
    for (size_t i = 0; i < pixels; ++i) {
        int most = 0;
        for (int c = 0; c < 3; ++c) {
            int d = abs((int)a[4 * i + c] - (int)b[4 * i + c]);
            sum += d;
            if (d > most) most = d;
        }
        differ += most > 24;
    }
    printf("%.3f %.3f\n", 100.0 * (double)differ / (double)pixels, sum / (3.0 * (double)pixels));
    free(a);
    free(b);
    return 0;
}
