/* Small helpers of the pbf command: clock, folders, number formatting, muting stderr. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pbf/scene.h"

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_make_dirs(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0) return 0;
    if (n >= sizeof buf) return ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    /* Create each prefix ending before a '/', then the whole path. */
    for (size_t i = 1; i <= n; ++i) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return errno;
        buf[i] = saved;
    }
    struct stat st;
    if (stat(path, &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return 0;
}

const char *cli_format_bytes(double bytes, char *buf, size_t size) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        ++u;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f B", bytes);
    else
        snprintf(buf, size, "%.1f %s", bytes, units[u]);
    return buf;
}

const char *cli_format_duration(double seconds, char *buf, size_t size) {
    if (!(seconds >= 0.0) || seconds > 3.6e6) {
        snprintf(buf, size, "--:--");
        return buf;
    }
    long s = (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else
        snprintf(buf, size, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

const char *cli_format_count(long long n, char *buf, size_t size) {
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < size) buf[o++] = '-';
    for (int i = 0; i < len && o + 1 < size; ++i) {
        if (i > 0 && (len - i) % 3 == 0 && o + 1 < size) buf[o++] = ',';
        if (o + 1 < size) buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

int cli_load_scene(const char *path, const char *const *sets, int set_count, pbf_scene *out) {
    char err[PBF_ERROR_SIZE];
    pbf_status s = path != NULL ? pbf_scene_load(path, sets, set_count, out, err, sizeof err)
                                : pbf_scene_default(sets, set_count, out, err, sizeof err);
    if (s != PBF_OK) return cli_error("%s", err);
    /* Values legal one by one that cannot give a useful simulation together
     * (docs/robustness.md, "Scene files"). */
    char *warnings = malloc(8192);
    int count = 0;
    s = pbf_scene_check(out, warnings, warnings ? 8192 : 0, &count, err, sizeof err);
    if (s == PBF_OK && warnings != NULL) cli_print_warnings(warnings);
    free(warnings);
    if (s != PBF_OK) return cli_error("%s", err);
    return CLI_EXIT_OK;
}

void cli_print_warnings(const char *warnings) {
    const char *line = warnings;
    while (line != NULL && *line != '\0') {
        const char *end = strchr(line, '\n');
        int n = end != NULL ? (int)(end - line) : (int)strlen(line);
        fprintf(stderr, "pbf: warning: %.*s\n", n, line);
        line = end != NULL ? end + 1 : NULL;
    }
}

void cli_warn_disk_space(const char *dir, double bytes, int frames) {
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    struct statvfs fs;
    /* the folder may not exist yet: ask its nearest existing parent */
    while (statvfs(path, &fs) != 0) {
        char *slash = strrchr(path, '/');
        if (slash == NULL) {
            snprintf(path, sizeof path, ".");
            if (statvfs(path, &fs) != 0) return;
            break;
        }
        if (slash == path)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    double free_bytes = (double)fs.f_bavail * (double)fs.f_frsize;
    if (bytes <= free_bytes) return;
    char need[32], have[32];
    fprintf(stderr,
            "pbf: warning: %d frames will write about %s to '%s', which has %s free: the run "
            "will stop with an error when the disk is full (the frames written until then stay "
            "valid)\n",
            frames, cli_format_bytes(bytes, need, sizeof need), dir,
            cli_format_bytes(free_bytes, have, sizeof have));
}

const char *cli_format_names(unsigned formats, char *buf, size_t size) {
    static const char *const names[] = {"ply", "vtk", "vtu"}; /* bit i of pbf_format */
    size_t n = 0;
    if (size > 0) buf[0] = '\0';
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i)
        if ((formats & (1u << i)) && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n > 0 ? "," : "", names[i]);
    if (formats == 0) snprintf(buf, size, "none");
    return buf;
}

int cli_mute_stderr(int mute) {
    if (!mute) return -1;
    fflush(stderr);
    int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0) dup2(null, STDERR_FILENO);
    if (null >= 0) close(null);
    return saved;
}

void cli_unmute_stderr(int saved) {
    if (saved < 0) return;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
}
