/* Resource checks before allocating (docs/robustness.md).
 *
 * Linux overcommits: a malloc of more memory than the machine has usually succeeds, and the
 * process is killed later, when the pages are touched, with no message at all. So every large
 * allocation the user controls (the grid, the particle arrays, a checkpoint's state) is first
 * compared with what this process may really use: the smallest of the physical memory, the
 * cgroup limit (containers, CI) and the address-space / data limits (ulimit -v, ulimit -d). */
#include "resources.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "world_state.h"

/* A limit file of cgroup v2 ("max" or bytes) or v1 (bytes; huge when unlimited). 0: none. */
static size_t cgroup_limit(void) {
    static const char *const files[] = {"/sys/fs/cgroup/memory.max",
                                        "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        FILE *f = fopen(files[i], "r");
        if (f == NULL) continue;
        char text[64] = "";
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[n] = '\0';
        unsigned long long v = 0;
        if (sscanf(text, "%llu", &v) == 1 && v > 0 && v < (1ull << 62)) return (size_t)v;
    }
    return 0;
}

static void take(size_t candidate, const char *name, size_t *best, const char **what) {
    if (candidate > 0 && (*best == 0 || candidate < *best)) {
        *best = candidate;
        *what = name;
    }
}

size_t pbf__test_memory_limit = 0;
double pbf__test_mesh_read_seconds = 0.0;

size_t pbf__memory_limit(const char **what) {
    if (pbf__test_memory_limit > 0) {
        if (what != NULL) *what = "the test's limit";
        return pbf__test_memory_limit;
    }
    size_t best = 0;
    const char *name = "unknown";
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) take((size_t)pages * (size_t)page, "physical memory", &best, &name);
    take(cgroup_limit(), "the cgroup memory limit", &best, &name);
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take((size_t)rl.rlim_cur, "ulimit -v (RLIMIT_AS)", &best, &name);
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        take((size_t)rl.rlim_cur, "ulimit -d (RLIMIT_DATA)", &best, &name);
    if (what != NULL) *what = name;
    return best;
}

size_t pbf_memory_limit(void) { return pbf__memory_limit(NULL); }

const char *pbf_memory_limit_source(void) {
    const char *what = "unknown";
    pbf__memory_limit(&what);
    return what;
}

const char *pbf__format_bytes(double bytes, char *buf, size_t size) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        ++u;
    }
    snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

int pbf__check_memory(double need, const char *what_for, char *buf, size_t size) {
    const char *what = NULL;
    size_t limit = pbf__memory_limit(&what);
    if (limit == 0 || need <= (double)limit) return 0;
    char a[32], b[32];
    pbf__format(buf, size, "needs about %s (%s), more than the %s of %s",
                pbf__format_bytes(need, a, sizeof a), what_for,
                pbf__format_bytes((double)limit, b, sizeof b), what);
    return -1;
}
