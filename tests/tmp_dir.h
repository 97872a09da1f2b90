/* A test program's own temporary folder, $TMPDIR/pbf_test_NAME_XXXXXX (or under /tmp), for the
 * files its tests write; and the count of temporary files a failed write may leave in a folder.
 * Needs mkdtemp (POSIX 2008). Include it in one file of a program. */
#ifndef PBF_TEST_TMP_DIR_H
#define PBF_TEST_TMP_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[1024];

/* Creates tmp_dir for the program `name`: 0, or 1 with the reason printed. */
static inline int make_tmp_dir(const char *name) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/pbf_test_%s_XXXXXX", base && *base ? base : "/tmp", name);
    if (mkdtemp(tmp_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    return 0;
}

/* The file `name` in tmp_dir. */
static inline void path_in_tmp(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmp_dir, name);
}

/* Number of entries in dir whose name contains ".tmp." (left-over temporary files). */
static inline int count_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) return 0;
    int n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        if (strstr(e->d_name, ".tmp.") != NULL) ++n;
    closedir(d);
    return n;
}

/* Removes the files in tmp_dir and the folder itself. */
static inline void remove_tmp_dir(void) {
    DIR *d = opendir(tmp_dir);
    if (d == NULL) return;
    char path[1400];
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
        remove(path);
    }
    closedir(d);
    rmdir(tmp_dir);
}

#endif
