/* Video through the ffmpeg pipe: a short clip lands under its name with the right number of
 * frames and no temporary files; a failed encode leaves nothing. Skips (77) without ffmpeg. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pbf/render.h"
#include "render_fixture.h"
#include "test.h"

#define W 160
#define H 120
#define FRAMES 12

static char err[PBF_ERROR_SIZE];
static char scratch[256];

/* Files in the scratch folder. */
static int file_count(void) {
    DIR *d = opendir(scratch);
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++n;
    }
    closedir(d);
    return n;
}

static int test_video_from_renderer(void) {
    pbf_gl_context *ctx = NULL;
    ENSURE(pbf_gl_context_create_headless(&ctx, err, sizeof err) == PBF_OK);
    fixture fx;
    ENSURE(fixture_make(&fx) == 0);
    pbf_render_def def = pbf_default_render_def();
    def.width = W;
    def.height = H;
    pbf_renderer *r = NULL;
    ENSURE(pbf_renderer_create(&def, &r, err, sizeof err) == PBF_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/clip.mp4", scratch);
    pbf_video *v = NULL;
    ENSURE(pbf_video_open(path, W, H, 30.0, 23, &v, err, sizeof err) == PBF_OK);
    pbf_render_scene s = fixture_scene(&fx);
    uint8_t *img = malloc(W * H * 4);
    for (int f = 0; f < FRAMES; ++f) {
        /* The camera circles a little, so frames differ. */
        s.camera.position.x = 0.5f + 0.03f * (float)f;
        ENSURE(pbf_renderer_draw(r, &s, err, sizeof err) == PBF_OK);
        ENSURE(pbf_renderer_read_rgba(r, img, err, sizeof err) == PBF_OK);
        ENSURE(pbf_video_write(v, img, err, sizeof err) == PBF_OK);
    }
    ENSURE(pbf_video_close(v, err, sizeof err) == PBF_OK);
    struct stat st;
    ENSURE(stat(path, &st) == 0 && st.st_size > 1000);
    ENSURE(file_count() == 1); /* no partial file, no log left */
    /* ffprobe (shipped with ffmpeg) counts the frames. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ffprobe -v error -count_frames -select_streams v:0 -show_entries "
             "stream=nb_read_frames,width,height -of csv=p=0 '%s'",
             path);
    FILE *p = popen(cmd, "r");
    ENSURE(p != NULL);
    char line[256] = "";
    if (fgets(line, sizeof line, p) == NULL) line[0] = '\0';
    ENSURE(pclose(p) == 0);
    printf("  ffprobe: %s", line);
    int w = 0, h = 0, frames = 0;
    ENSURE(sscanf(line, "%d,%d,%d", &w, &h, &frames) == 3);
    ENSURE(w == W && h == H && frames == FRAMES);
    free(img);
    fixture_free(&fx);
    pbf_renderer_destroy(r);
    pbf_gl_context_destroy(ctx);
    return 0;
}

static int test_video_failure_leaves_nothing(void) {
    /* ffmpeg cannot create a file in a missing folder: close reports it, nothing remains. */
    char path[512];
    snprintf(path, sizeof path, "%s/missing/clip.mp4", scratch);
    pbf_video *v = NULL;
    pbf_status st = pbf_video_open(path, W, H, 30.0, 23, &v, err, sizeof err);
    if (st == PBF_OK) {
        uint8_t *img = calloc(W * H * 4, 1);
        for (int f = 0; f < 3 && st == PBF_OK; ++f) st = pbf_video_write(v, img, err, sizeof err);
        free(img);
        if (st == PBF_OK) {
            st = pbf_video_close(v, err, sizeof err);
        } else {
            pbf_video_abort(v);
        }
    }
    ENSURE(st != PBF_OK);
    printf("  expected error: %s\n", err);
    ENSURE(strstr(err, "missing/clip.mp4") != NULL);
    ENSURE(file_count() == 1); /* only the clip of the test before */
    /* Odd sizes are padded to even ones rather than refused by the encoder. */
    snprintf(path, sizeof path, "%s/odd.mp4", scratch);
    ENSURE(pbf_video_open(path, 33, 17, 24.0, 30, &v, err, sizeof err) == PBF_OK);
    uint8_t img[33 * 17 * 4];
    memset(img, 128, sizeof img);
    ENSURE(pbf_video_write(v, img, err, sizeof err) == PBF_OK);
    ENSURE(pbf_video_close(v, err, sizeof err) == PBF_OK);
    ENSURE(access(path, F_OK) == 0);
    return 0;
}

int main(void) {
    if (system("ffmpeg -version > /dev/null 2>&1") != 0 ||
        system("ffprobe -version > /dev/null 2>&1") != 0) {
        printf("ffmpeg/ffprobe not found: skipping\n");
        return 77;
    }
    int test_failures_ = 0;
    snprintf(scratch, sizeof scratch, "test_render_video_tmp_%ld", (long)getpid());
    if (mkdir(scratch, 0755) != 0) {
        perror(scratch);
        return 1;
    }
    RUN_TEST(test_video_from_renderer);
    RUN_TEST(test_video_failure_leaves_nothing);
    if (test_failures_ == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", scratch);
    }
    return test_failures_ == 0 ? 0 : 1;
}
