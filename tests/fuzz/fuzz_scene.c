/* libFuzzer target for the scene loader (docs/robustness.md).
 *
 * Input: the bytes of a scene file, optionally followed by up to 8 `--set` overrides, each
 * after a NUL byte ("{...}\0solver.iterations=6\0time.fps=30"). For every input:
 *   - pbf_scene_parse must return without crashing, leaking or reading out of bounds (ASan,
 *     UBSan), and its message must be a NUL-terminated string that starts with the source name
 *     on failure and is empty on success;
 *   - a scene that loads must survive the round trip: pbf_scene_to_json, parsed again, gives
 *     the same scene (a writer that writes what the reader refuses is a bug too);
 *   - the scene checks (pbf_scene_check: time step, overlaps) run on it without crashing or
 *     undefined behaviour, and report like the loader (a message naming the file).
 * A violated property calls abort(), which libFuzzer reports as a crash and saves.
 *
 * Built with clang -fsanitize=fuzzer by scripts/fuzz.sh; tests/fuzz/replay.c runs the same
 * function over the saved corpus with any compiler (the fuzz_replay test). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/scene.h"

#define MAX_INPUT (64 * 1024) /* larger inputs say nothing new and slow the fuzzer down */
#define MAX_OVERRIDES 8
#define SOURCE "fuzz.json"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_message(const char *err, size_t size, pbf_status status) {
    if (memchr(err, '\0', size) == NULL) {
        fprintf(stderr, "fuzz_scene: error message not NUL-terminated\n");
        abort();
    }
    if (status == PBF_OK && err[0] != '\0') {
        fprintf(stderr, "fuzz_scene: success with a message: %s\n", err);
        abort();
    }
    if (status != PBF_OK && strncmp(err, SOURCE, strlen(SOURCE)) != 0) {
        fprintf(stderr, "fuzz_scene: message does not name the file: %s\n", err);
        abort();
    }
}

/* Equal apart from source (see scenes_equal in tests/test_scene_errors.c: pbf_scene has no
 * padding and the loader starts from a zeroed scene). */
static int same_scene(const pbf_scene *a, const pbf_scene *b) {
    static pbf_scene x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    memset(x.source, 0, sizeof x.source);
    memset(y.source, 0, sizeof y.source);
    return memcmp(&x, &y, sizeof x) == 0;
}

static void round_trip(const pbf_scene *scene) {
    char *json = pbf_scene_to_json(scene);
    if (json == NULL) return; /* out of memory under the fuzzer's malloc limit */
    static pbf_scene again;
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_scene_parse(json, SOURCE, NULL, 0, &again, err, sizeof err);
    if (st != PBF_OK) {
        fprintf(stderr, "fuzz_scene: pbf_scene_to_json wrote a scene that does not load: %s\n%s\n",
                err, json);
        abort();
    }
    if (!same_scene(scene, &again)) {
        fprintf(stderr, "fuzz_scene: the scene changed in the round trip:\n%s\n", json);
        abort();
    }
    free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > MAX_INPUT) return 0;
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    /* JSON, then the overrides after each NUL */
    const char *overrides[MAX_OVERRIDES];
    int count = 0;
    for (char *p = memchr(text, '\0', size); p != NULL && p < text + size && count < MAX_OVERRIDES;
         p = memchr(p + 1, '\0', (size_t)(text + size - p))) {
        overrides[count++] = p + 1;
    }

    static pbf_scene scene;
    char err[PBF_ERROR_SIZE];
    memset(err, 'x', sizeof err);
    pbf_status st = pbf_scene_parse(text, SOURCE, overrides, count, &scene, err, sizeof err);
    check_message(err, sizeof err, st);
    /* a tiny buffer must be cut, not overrun */
    char tiny[7];
    pbf_scene_parse(text, SOURCE, overrides, count, &scene, tiny, sizeof tiny);
    if (memchr(tiny, '\0', sizeof tiny) == NULL) abort();
    if (st == PBF_OK) {
        round_trip(&scene);
        char warnings[1024];
        int warned = -1;
        memset(err, 'x', sizeof err);
        pbf_status ck =
            pbf_scene_check(&scene, warnings, sizeof warnings, &warned, err, sizeof err);
        check_message(err, sizeof err, ck);
        if (memchr(warnings, '\0', sizeof warnings) == NULL || warned < 0 ||
            (warned > 0 && strncmp(warnings, SOURCE, strlen(SOURCE)) != 0)) {
            fprintf(stderr, "fuzz_scene: bad warnings (%d): %.100s\n", warned, warnings);
            abort();
        }
    }
    free(text);
    return 0;
}
