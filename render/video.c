/* H.264 MP4 through an ffmpeg child process fed raw RGBA frames on a pipe.
 *
 * ffmpeg is started with posix_spawnp (no shell, so any file name is safe), writes to a
 * temporary name beside the target and its messages to a log beside that; pbf_video_close
 * renames the video into place only when ffmpeg exited with status 0, and otherwise returns
 * the end of ffmpeg's log as the error. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pbf/render.h"
#include "util.h"

extern char **environ;

struct pbf_video {
    pid_t pid;
    int fd; /* write end of ffmpeg's stdin */
    int width, height;
    char path[4096];
    char tmp[4096 + 32]; /* the video while it is being written */
    char log[4096 + 32]; /* ffmpeg's stderr */
};

/* The last line of ffmpeg's log, for error messages. */
static void log_tail(const char *log, char *out, size_t out_size) {
    out[0] = '\0';
    FILE *f = fopen(log, "rb");
    if (f == NULL) return;
    char buf[2048];
    size_t len = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        long start = size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0;
        if (fseek(f, start, SEEK_SET) == 0) len = fread(buf, 1, sizeof buf - 1, f);
    }
    fclose(f);
    buf[len] = '\0';
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
    const char *line = strrchr(buf, '\n');
    snprintf(out, out_size, "%s", line != NULL ? line + 1 : buf);
}

/* Waits for ffmpeg; 1 when it exited with status 0. */
static int wait_child(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return 0;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

pbf_status pbf_video_open(const char *path, int width, int height, double fps, int crf,
                          pbf_video **out, char *err, size_t err_size) {
    if (out == NULL || path == NULL || width <= 0 || height <= 0 || !(fps > 0.0) || crf < 0 ||
        crf > 51) {
        pbf_render_set_error(err, err_size, "pbf_video_open: invalid argument");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
    pbf_video *v = calloc(1, sizeof *v);
    if (v == NULL) {
        pbf_render_set_error(err, err_size, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    v->width = width;
    v->height = height;
    v->fd = -1;
    if (snprintf(v->path, sizeof v->path, "%s", path) >= (int)sizeof v->path) {
        free(v);
        pbf_render_set_error(err, err_size, "%s: path too long", path);
        return PBF_ERR_INVALID_ARG;
    }
    snprintf(v->tmp, sizeof v->tmp, "%s.partial-%ld", path, (long)getpid());
    snprintf(v->log, sizeof v->log, "%s.ffmpeg-%ld.log", path, (long)getpid());

    /* The log opens here, not in the child: a folder that is missing or not writable is then
     * reported as such, before ffmpeg starts. */
    int logfd = open(v->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (logfd < 0) {
        pbf_render_set_error(err, err_size, "%s: cannot write there: %s", path, strerror(errno));
        free(v);
        return PBF_ERR_IO;
    }
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        pbf_render_set_error(err, err_size, "video: pipe: %s", strerror(errno));
        close(logfd);
        unlink(v->log);
        free(v);
        return PBF_ERR_IO;
    }
    /* Our end must not leak into other children. */
    fcntl(pipefd[1], F_SETFD, FD_CLOEXEC);

    char size[64], rate[64], quality[16];
    snprintf(size, sizeof size, "%dx%d", width, height);
    snprintf(rate, sizeof rate, "%.6g", fps);
    snprintf(quality, sizeof quality, "%d", crf);
    /* yuv420p (what every player plays) needs even sizes: pad odd ones by a pixel. */
    char *const argv[] = {"ffmpeg",
                          "-nostdin",
                          "-hide_banner",
                          "-loglevel",
                          "error",
                          "-y",
                          "-f",
                          "rawvideo",
                          "-pix_fmt",
                          "rgba",
                          "-s",
                          size,
                          "-r",
                          rate,
                          "-i",
                          "pipe:0",
                          "-an",
                          "-vf",
                          "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                          "-c:v",
                          "libx264",
                          "-preset",
                          "medium",
                          "-crf",
                          quality,
                          "-pix_fmt",
                          "yuv420p",
                          "-movflags",
                          "+faststart",
                          "-f",
                          "mp4",
                          v->tmp,
                          NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, logfd, 2);
    posix_spawn_file_actions_addclose(&fa, logfd);
    /* ffmpeg gets a process group of its own: a Ctrl-C at the terminal goes to our process
     * only, which finishes the frame and then closes the video properly. */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawnp(&v->pid, "ffmpeg", &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[0]);
    close(logfd);
    if (rc != 0) {
        close(pipefd[1]);
        unlink(v->log);
        pbf_render_set_error(err, err_size,
                             rc == ENOENT ? "video: ffmpeg not found on PATH (install ffmpeg)"
                                          : "video: cannot start ffmpeg: %s",
                             strerror(rc));
        free(v);
        return rc == ENOENT ? PBF_ERR_UNSUPPORTED : PBF_ERR_IO;
    }
    v->fd = pipefd[1];
    *out = v;
    return PBF_OK;
}

/* Writes all bytes with SIGPIPE blocked, so a dead ffmpeg gives EPIPE instead of killing the
 * process; a SIGPIPE raised by our write is consumed, not left pending. */
static int write_all(int fd, const uint8_t *p, size_t n) {
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int result = 0;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            result = errno;
            break;
        }
        p += w;
        n -= (size_t)w;
    }
    if (result == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&block, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return result;
}

pbf_status pbf_video_write(pbf_video *v, const uint8_t *rgba, char *err, size_t err_size) {
    if (v == NULL || rgba == NULL || v->fd < 0) {
        pbf_render_set_error(err, err_size, "pbf_video_write: invalid argument");
        return PBF_ERR_INVALID_ARG;
    }
    int e = write_all(v->fd, rgba, (size_t)v->width * (size_t)v->height * 4);
    if (e != 0) {
        char tail[512];
        close(v->fd);
        v->fd = -1;
        wait_child(v->pid);
        v->pid = 0;
        log_tail(v->log, tail, sizeof tail);
        pbf_render_set_error(err, err_size, "%s: ffmpeg stopped taking frames (%s)%s%s", v->path,
                             strerror(e), tail[0] ? ": " : "", tail);
        return PBF_ERR_IO;
    }
    return PBF_OK;
}

pbf_status pbf_video_close(pbf_video *v, char *err, size_t err_size) {
    if (v == NULL) return PBF_OK;
    if (v->fd >= 0) close(v->fd);
    int ok = v->pid > 0 ? wait_child(v->pid) : 0;
    pbf_status st = PBF_OK;
    if (!ok) {
        char tail[512];
        log_tail(v->log, tail, sizeof tail);
        pbf_render_set_error(err, err_size, "%s: ffmpeg failed%s%s", v->path, tail[0] ? ": " : "",
                             tail);
        unlink(v->tmp);
        st = PBF_ERR_IO;
    } else if (rename(v->tmp, v->path) != 0) {
        pbf_render_set_error(err, err_size, "%s: cannot rename into place: %s", v->path,
                             strerror(errno));
        unlink(v->tmp);
        st = PBF_ERR_IO;
    }
    unlink(v->log);
    free(v);
    return st;
}

void pbf_video_abort(pbf_video *v) {
    if (v == NULL) return;
    if (v->fd >= 0) close(v->fd);
    if (v->pid > 0) {
        kill(v->pid, SIGTERM);
        wait_child(v->pid);
    }
    unlink(v->tmp);
    unlink(v->log);
    free(v);
}
