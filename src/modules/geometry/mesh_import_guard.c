/* Mesh import in a child process (mesh_import.h).
 *
 * Assimp is built with its internal assertions on in Debian, and some malformed files trip them
 * (for example a PLY face list that runs into garbage: "TriangulateProcess.cpp: numOut !=
 * pMesh->mNumFaces", and the process ends). A long run or the viewer must not end because of
 * a bad mesh file, so the read happens in a forked child: it sends the
 * triangles (or its error message) back through a pipe and leaves with _exit. A child that dies
 * before sending everything, by a signal or otherwise, or that runs past a generous time limit
 * (Assimp also loops forever on some files), is reported as an unreadable file.
 *
 * The child only reads the file and writes to the pipe: no OpenMP, no stdio flushing, no atexit
 * handlers, no core file. What Assimp prints goes to a temporary file, not to the caller's
 * stderr; its last line goes into the message when the child crashed. */
#define _POSIX_C_SOURCE 200809L /* sigaction, waitpid */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mesh_import.h"
#include "resources.h"
#include "trimesh.h"

/* What the child sends first; the vertices and triangles follow when status is PBF_OK. */
typedef struct reply {
    int32_t status;
    int32_t vertex_count;
    int32_t triangle_count;
    char message[PBF_ERROR_SIZE];
} reply;

static void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == NULL || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

static int write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Seconds on a monotonic clock. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads exactly n bytes before the deadline (now()); 0 when they all came, -1 on an early end
 * or an error, -2 when the deadline passed. */
static int read_all(int fd, void *data, size_t n, double deadline) {
    char *p = data;
    while (n > 0) {
        double left = deadline - now();
        if (left <= 0.0) return -2;
        struct pollfd pfd = {fd, POLLIN, 0};
        int ready = poll(&pfd, 1, (int)(left * 1000.0) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) return -1;
        if (ready == 0) continue; /* the loop's check ends it */
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The child: default handlers for the crash signals (a fuzzer's or a debugger's handlers would
 * otherwise report the child's crash as their own), no core file, read, send, leave. */
static void child(int fd, int log_fd, const char *path) {
    static const int crash_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGPIPE};
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; ++i)
        sigaction(crash_signals[i], &dfl, NULL);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (log_fd >= 0) dup2(log_fd, STDERR_FILENO); /* Assimp's assertion text, for the message */

    pbf_trimesh m;
    reply r;
    memset(&r, 0, sizeof r);
    r.status = (int32_t)pbf__mesh_read(path, &m, r.message, sizeof r.message);
    if (r.status == PBF_OK) {
        r.vertex_count = m.vertex_count;
        r.triangle_count = m.triangle_count;
    }
    int failed = write_all(fd, &r, sizeof r) != 0;
    if (!failed && r.status == PBF_OK)
        failed = write_all(fd, m.vertices, 3 * (size_t)m.vertex_count * sizeof(float)) != 0 ||
                 write_all(fd, m.triangles, 3 * (size_t)m.triangle_count * sizeof(int32_t)) != 0;
    close(fd);
    _exit(failed ? 1 : 0);
}

/* Waits for the child and says how it ended, for a message: "it crashed with signal 6,
 * Aborted" or "it stopped early with exit status 1". */
static void reap(pid_t pid, char *out, size_t size) {
    int ws = 0;
    pid_t got;
    do {
        got = waitpid(pid, &ws, 0);
    } while (got < 0 && errno == EINTR);
    if (got < 0)
        snprintf(out, size, "it stopped early");
    else if (WIFSIGNALED(ws))
        snprintf(out, size, "it crashed with signal %d, %s", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else
        snprintf(out, size, "it stopped early with exit status %d", WEXITSTATUS(ws));
}

/* The last non-empty line the child wrote to its log, or "". */
static void last_line(FILE *log, char *out, size_t size) {
    out[0] = '\0';
    if (log == NULL || fseek(log, 0, SEEK_SET) != 0) return;
    char line[512];
    while (fgets(line, sizeof line, log) != NULL) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
        if (n > 0) snprintf(out, size, "%s", line);
    }
}

/* Reads the child's reply into out: PBF_OK or the child's own error; -1 when the child ended
 * early, -2 when it ran past the deadline. */
static int receive(int fd, const char *name, double deadline, pbf_trimesh *out, char *err,
                   size_t err_size) {
    reply r;
    int got = read_all(fd, &r, sizeof r, deadline);
    if (got != 0) return got;
    r.message[sizeof r.message - 1] = '\0';
    if (r.status != PBF_OK) {
        if (r.status < 0 || r.status > PBF_ERR_CAPACITY) return -1;
        if (err != NULL && err_size > 0) snprintf(err, err_size, "%s", r.message);
        return r.status;
    }
    if (r.vertex_count < 1 || r.triangle_count < 1 || r.vertex_count > INT_MAX / 3 ||
        r.triangle_count > INT_MAX / 3)
        return -1;
    out->vertices = malloc(3 * (size_t)r.vertex_count * sizeof(float));
    out->triangles = malloc(3 * (size_t)r.triangle_count * sizeof(int32_t));
    if (out->vertices == NULL || out->triangles == NULL) {
        pbf__trimesh_free(out);
        set_error(err, err_size, "mesh '%s': out of memory for its triangles", name);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    got = read_all(fd, out->vertices, 3 * (size_t)r.vertex_count * sizeof(float), deadline);
    if (got == 0)
        got =
            read_all(fd, out->triangles, 3 * (size_t)r.triangle_count * sizeof(int32_t), deadline);
    if (got != 0) {
        pbf__trimesh_free(out);
        return got;
    }
    out->vertex_count = r.vertex_count;
    out->triangle_count = r.triangle_count;
    return PBF_OK;
}

pbf_status pbf__mesh_import(const char *path, pbf_trimesh *out, char *err, size_t err_size) {
    if (path == NULL || out == NULL) {
        set_error(err, err_size, "mesh import: path and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof *out);
    /* Assimp loops forever on some malformed files (a PLY header cut by binary garbage): the
     * child gets a time far beyond what any real file needs, 10 s plus 10 s per MB (a test may
     * set a shorter one, resources.h). */
    struct stat info;
    double megabytes = stat(path, &info) == 0 ? (double)info.st_size / 1e6 : 0.0;
    double limit =
        pbf__test_mesh_read_seconds > 0.0 ? pbf__test_mesh_read_seconds : 10.0 + 10.0 * megabytes;
    int fds[2];
    FILE *log = tmpfile(); /* may be NULL: then Assimp's words are lost, nothing else */
    if (pipe(fds) != 0) {
        if (log != NULL) fclose(log);
        set_error(err, err_size, "mesh '%s': cannot start the mesh reader: %s", path,
                  strerror(errno));
        return PBF_ERR_IO;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        if (log != NULL) fclose(log);
        set_error(err, err_size, "mesh '%s': cannot start the mesh reader: %s", path, strerror(e));
        return PBF_ERR_IO;
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], log != NULL ? fileno(log) : -1, path);
    }
    close(fds[1]);
    int st = receive(fds[0], path, now() + limit, out, err, err_size);
    close(fds[0]);
    if (st == -2) kill(pid, SIGKILL);
    char end[96], said[160];
    reap(pid, end, sizeof end);
    if (st == -2) snprintf(end, sizeof end, "it did not finish within %.0f s", limit);
    last_line(log, said, sizeof said);
    if (log != NULL) fclose(log);
    if (st >= 0) return (pbf_status)st;
    set_error(err, err_size,
              "mesh '%s': the mesh reader (Assimp) failed on this file (%s%s%s); the file is "
              "malformed or a variant of the format that Assimp cannot read",
              path, end, said[0] != '\0' ? ": " : "", said);
    return PBF_ERR_PARSE;
}
