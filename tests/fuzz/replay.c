/* Runs the scene fuzz target (fuzz_scene.c) over files and folders given on the command line:
 * the saved corpus and the shipped scenes. This is the fuzz_replay test of every build, with any
 * compiler; under the sanitizer build it is the regression test for every crash the fuzzer ever
 * found (each one is saved in tests/fuzz/corpus/). libFuzzer itself runs in scripts/fuzz.sh. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    unsigned char *data = malloc(cap);
    while (data != NULL) {
        len += fread(data + len, 1, cap - len, f);
        if (len < cap) break;
        unsigned char *bigger = realloc(data, cap * 2);
        if (bigger == NULL) free(data);
        data = bigger;
        cap *= 2;
    }
    fclose(f);
    if (data == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, len); /* a failed property aborts */
    free(data);
    return 0;
}

static int compare(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's files in name order, so a failure is reproducible. */
static int run_dir(const char *dir, int *count) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **bigger = realloc(names, cap * sizeof *names);
            if (bigger == NULL) break;
            names = bigger;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (names[n] == NULL) break;
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare);
    int failed = 0;
    for (size_t i = 0; i < n; ++i) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            failed |= run_file(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return failed;
}

int main(int argc, char **argv) {
    int failed = 0, count = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            failed = 1;
        } else if (S_ISDIR(st.st_mode)) {
            failed |= run_dir(argv[i], &count);
        } else {
            failed |= run_file(argv[i]);
            ++count;
        }
    }
    printf("fuzz_replay: %d inputs\n", count);
    return failed || count == 0;
}
