/* `pbf haptic SCENE`: the haptic loop of seed 004 (docs/tool.md). The scene's tool is
 * moved in real time with a fixed step of 1/rate, its pose taken from the scene's path, from
 * standard input or from a UDP socket on loopback (an external device driver), and the force on
 * it is written every step. At the end: the achieved rate and the deadline misses.
 *
 * Timing: the first step sets the world up (on a GPU: the upload and the graph capture) and t0
 * is its end; step k is then due at t0 + (k − 1)/rate on the monotonic clock. A step that ends
 * after its deadline is a miss; the next one then starts at once, due one period later (no
 * catching up: simulated time falls behind the wall clock instead of bunching steps). */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "interrupt.h"
#include "pbf/scene.h"
#include "tool_output.h"

static const char haptic_synopsis[] =
    "usage: pbf haptic SCENE [--rate HZ] [--pose path|stdin|udp] [--port N] [--duration S]\n"
    "                  [--out FILE] [--substeps N] [--threads N] [--backend cpu|cuda]\n"
    "                  [--set key=value ...] [--quiet]\n";

static const char haptic_help[] =
    "Runs SCENE's tool in real time, one pbf_world_step of 1/rate seconds per period, and writes\n"
    "the force on the tool every step as CSV. SCENE needs a \"tool\" section (docs/tool.md).\n"
    "\n"
    "pose sources (--pose):\n"
    "  path    the scene's scripted path (default); ends at the path's last key\n"
    "  stdin   one pose per line, 'x y z' in metres (spaces, tabs or commas between; blank\n"
    "          lines and lines starting with # are skipped). One line is taken per step, so a\n"
    "          recorded trajectory replays at the step rate; without a new line the tool stays.\n"
    "          Ends at the end of input (or at --duration).\n"
    "  udp     datagrams 'x y z' (ASCII, metres) to 127.0.0.1:PORT; the newest one received\n"
    "          before a step is used. Each step is answered to the sender of the last pose with\n"
    "          't fx fy fz' (s, N: the total force on the tool). The datagram 'quit' ends the\n"
    "          run. The port actually bound is printed on stderr (--port 0 picks a free one).\n"
    "\n"
    "options:\n"
    "  --rate HZ           steps per second, dt = 1/HZ (default 1000)\n"
    "  --pose SOURCE       path, stdin or udp (default path)\n"
    "  --port N            UDP port on 127.0.0.1 (default 5005; 0: any free port)\n"
    "  --duration S        stop after S seconds of simulated time (rate * S steps)\n"
    "  --out FILE          the CSV (default: standard output)\n"
    "  --substeps N        substeps per step (default 1: the step is already short)\n"
    "  --threads N         CPU threads, 0 = all cores (default: the scene's)\n"
    "  --backend NAME      cpu or cuda: the GPU (docs/cuda.md; default: the scene's)\n"
    "  --set KEY=VALUE     override a scene parameter; repeatable\n"
    "  --quiet, -q         no summary\n"
    "  --help, -h          this help\n"
    "\n"
    "CSV columns: step, then time,x,y,z,vx,vy,vz,fx,fy,fz,reaction_*,adhesion_*,damping_*,\n"
    "contacts,min_distance (as forces.csv of `pbf run`), then step_ms (wall-clock time of the\n"
    "step) and late (1 when the step missed its deadline; the first step sets up and the\n"
    "schedule starts at its end).\n"
    "\n"
    "examples:\n"
    "  pbf haptic scenes/tool_sphere.json --rate 1000 --out forces.csv\n"
    "  my_driver | pbf haptic scenes/tool_sphere.json --pose stdin --duration 10\n"
    "  pbf haptic scenes/tool_sphere.json --pose udp --port 5005 --duration 60\n";

typedef enum pose_source { POSE_PATH, POSE_STDIN, POSE_UDP } pose_source;

typedef struct haptic_options {
    const char *scene_path;
    double rate, duration; /* duration < 0: unset */
    pose_source pose;
    int port, substeps, threads, quiet;
    int backend; /* pbf_backend; < 0: the scene's */
    const char *out;
    cli_overrides sets;
} haptic_options;

/* ---- poses ---------------------------------------------------------------------------------- */

/* "x y z" with spaces, tabs or commas between. 1 when a pose was read, 0 when the line is
 * blank or a comment, -1 when it is malformed. */
static int parse_pose(const char *line, pbf_vec3 *out) {
    const char *s = line;
    while (*s == ' ' || *s == '\t' || *s == '\r') ++s;
    if (*s == '\0' || *s == '#' || *s == '\n') return 0;
    double v[3];
    for (int k = 0; k < 3; ++k) {
        while (*s == ' ' || *s == '\t' || *s == ',') ++s;
        char *end = NULL;
        errno = 0;
        v[k] = strtod(s, &end);
        if (end == s || errno != 0 || !isfinite(v[k]) || fabs(v[k]) > 1e6) return -1;
        s = end;
    }
    while (*s == ' ' || *s == '\t' || *s == ',' || *s == '\r' || *s == '\n') ++s;
    if (*s != '\0') return -1;
    out->x = (float)v[0];
    out->y = (float)v[1];
    out->z = (float)v[2];
    return 1;
}

/* Standard input read without blocking: bytes are gathered as they come, complete lines are
 * handed out one per step. */
typedef struct line_reader {
    char buf[8192];
    size_t len;
    int eof;
    long line_no;
} line_reader;

/* Reads what is available now (poll with a zero timeout). */
static void reader_fill(line_reader *r) {
    while (!r->eof && r->len + 1 < sizeof r->buf) {
        struct pollfd p = {STDIN_FILENO, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP))) return;
        ssize_t got = read(STDIN_FILENO, r->buf + r->len, sizeof r->buf - 1 - r->len);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            r->eof = 1;
            return;
        }
        r->len += (size_t)got;
    }
}

/* The next complete line (the last one may lack its newline at end of input) into line.
 * 1: a line, 0: none yet, -1: none and never again. */
static int reader_line(line_reader *r, char *line, size_t size) {
    reader_fill(r);
    char *nl = memchr(r->buf, '\n', r->len);
    size_t n;
    if (nl != NULL) {
        n = (size_t)(nl - r->buf) + 1;
    } else if (r->eof && r->len > 0) {
        n = r->len;
    } else if (r->len + 1 >= sizeof r->buf) {
        n = r->len; /* a line longer than the buffer: handed out cut, it will not parse */
    } else {
        return r->eof ? -1 : 0;
    }
    size_t copy = n < size ? n : size - 1;
    memcpy(line, r->buf, copy);
    line[copy] = '\0';
    memmove(r->buf, r->buf + n, r->len - n);
    r->len -= n;
    r->line_no++;
    return 1;
}

/* ---- the loop -------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_until(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec += 1, ts.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        if (interrupt_pending()) return;
    }
}

/* Waits until t: sleeps until SPIN_S before it, then spins on the clock. A sleeping thread
 * wakes up a millisecond late now and then on a loaded machine or a VM (seen on a GPU VM: 11
 * of 60,000 steps of 1 ms missed with 0.34 ms steps when the loop slept, 7 when it spun only
 * the last half millisecond), which a 1 kHz loop cannot afford: at rates above 500 Hz the
 * loop spins through the whole wait and keeps one core busy, as haptic servo loops do. */
#define SPIN_S 0.002
static void wait_until(double t) {
    if (now_s() < t - SPIN_S) sleep_until(t - SPIN_S);
    while (now_s() < t && !interrupt_pending()) {
    }
}

static const char *source_name(pose_source s) {
    return s == POSE_STDIN ? "stdin" : s == POSE_UDP ? "udp" : "path";
}

static int open_udp(int port, int *fd_out, int *bound) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return cli_error("haptic: cannot open a UDP socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        return cli_error("haptic: cannot listen on udp 127.0.0.1:%d: %s", port, strerror(e));
    }
    socklen_t len = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &len);
    *bound = ntohs(a.sin_port);
    *fd_out = fd;
    return 0;
}

typedef struct haptic_stats {
    long steps, misses, bad_datagrams;
    double sum_ms, max_ms, first_ms, start, end; /* sum and max over the steps after the first */
} haptic_stats;

static int run_haptic(const haptic_options *o, pbf_scene *scene) {
    if (!scene->has_tool)
        return cli_error("haptic: %s has no \"tool\" section (docs/tool.md)", scene->source);
    if (o->threads >= 0) scene->world.threads = o->threads;
    if (o->backend >= 0) scene->world.backend = (pbf_backend)o->backend;
    scene->world.substeps = o->substeps;
    const double dt = 1.0 / o->rate;
    long max_steps = -1;
    if (o->duration >= 0.0) {
        max_steps = (long)floor(o->duration * o->rate + 0.5);
    } else if (o->pose == POSE_PATH) {
        if (scene->tool.key_count == 0)
            return cli_error("haptic: the tool has no path to follow; give --duration or a "
                             "\"path\" in the scene");
        double end = scene->tool.keys[scene->tool.key_count - 1].time;
        max_steps = (long)ceil(end * o->rate - 1e-4); /* keys are floats */
    }

    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    if (pbf_scene_create_world(scene, &w, err, sizeof err) != PBF_OK) return cli_error("%s", err);

    FILE *out = stdout;
    int rc = 0, udp = -1, port = 0;
    if (o->out != NULL && strcmp(o->out, "-") != 0) {
        out = fopen(o->out, "w");
        if (out == NULL) rc = cli_error("haptic: cannot write '%s': %s", o->out, strerror(errno));
    }
    if (rc == 0 && o->pose == POSE_UDP) rc = open_udp(o->port, &udp, &port);
    if (rc != 0) {
        if (out != NULL && out != stdout) fclose(out);
        pbf_world_destroy(w);
        return rc;
    }
    char count[32];
    if (!o->quiet) {
        fprintf(
            stderr, "pbf haptic: %s: %s particles, %d substep%s, dt %.4g ms (%g Hz), pose from %s",
            scene->name, cli_format_count(pbf_world_particle_count(w), count, sizeof count),
            o->substeps, o->substeps == 1 ? "" : "s", 1000.0 * dt, o->rate, source_name(o->pose));
        if (max_steps >= 0) fprintf(stderr, ", %ld steps", max_steps);
        fprintf(stderr, "\n");
    }
    if (udp >= 0) fprintf(stderr, "pbf haptic: listening on udp 127.0.0.1:%d\n", port);
    fflush(stderr);
    fprintf(out, "step,%s,step_ms,late\n", tool_csv_columns());

    line_reader *reader = o->pose == POSE_STDIN ? calloc(1, sizeof *reader) : NULL;
    if (o->pose == POSE_STDIN && reader == NULL) rc = cli_error("out of memory");
    struct sockaddr_in peer;
    int have_peer = 0;
    haptic_stats st;
    memset(&st, 0, sizeof st);
    interrupt_install();
    st.start = now_s();
    double deadline = st.start;
    int stop = 0;
    for (long k = 0; rc == 0 && !stop && (max_steps < 0 || k < max_steps); ++k) {
        if (interrupt_pending()) break;
        double step_start = now_s();
        deadline += dt;
        /* the pose for this step */
        pbf_vec3 pose;
        int have_pose = 0;
        if (o->pose == POSE_STDIN) {
            char line[512];
            int got;
            while ((got = reader_line(reader, line, sizeof line)) == 1) {
                int p = parse_pose(line, &pose);
                if (p < 0) {
                    line[strcspn(line, "\r\n")] = '\0';
                    rc = cli_error("haptic: stdin line %ld: expected 'x y z' in metres, got '%s'",
                                   reader->line_no, line);
                    break;
                }
                if (p == 1) {
                    have_pose = 1;
                    break;
                }
            }
            if (rc != 0) break;
            if (got < 0 && o->duration < 0.0) break; /* end of input */
        } else if (o->pose == POSE_UDP) {
            char msg[512];
            struct sockaddr_in from;
            socklen_t flen = sizeof from;
            ssize_t n;
            while ((n = recvfrom(udp, msg, sizeof msg - 1, MSG_DONTWAIT, (struct sockaddr *)&from,
                                 &flen)) >= 0) {
                msg[n] = '\0';
                if (strncmp(msg, "quit", 4) == 0) {
                    stop = 1;
                    break;
                }
                /* several lines in one datagram: the last pose wins */
                char *line = msg, *next;
                int parsed = 0;
                for (; line != NULL && *line != '\0'; line = next) {
                    next = strchr(line, '\n');
                    if (next != NULL) *next++ = '\0';
                    pbf_vec3 p;
                    int r = parse_pose(line, &p);
                    if (r < 0) parsed = -1;
                    if (r == 1) pose = p, have_pose = 1, parsed = parsed < 0 ? -1 : 1;
                }
                if (parsed < 0 && st.bad_datagrams++ == 0)
                    fprintf(stderr, "pbf haptic: ignoring a malformed datagram (expected 'x y "
                                    "z' in metres); further ones are only counted\n");
                peer = from, have_peer = 1;
                flen = sizeof from;
            }
            if (stop) break;
        }
        if (have_pose && pbf_tool_set_pose(w, pose) != PBF_OK) {
            rc = cli_error("haptic: %s", pbf_world_error(w));
            break;
        }
        if (pbf_world_step(w, (float)dt) != PBF_OK) {
            rc = cli_error("haptic: step %ld: %s", k + 1, pbf_world_error(w));
            break;
        }
        pbf_tool_state s = pbf_tool_get_state(w);
        if (have_peer) {
            char reply[128];
            int n = snprintf(reply, sizeof reply, "%.9g %.9g %.9g %.9g\n", s.time,
                             (double)s.total.x, (double)s.total.y, (double)s.total.z);
            sendto(udp, reply, (size_t)n, 0, (struct sockaddr *)&peer, sizeof peer);
        }
        double done = now_s();
        double ms = 1000.0 * (done - step_start);
        /* The first step sets the world up (on the GPU: the upload and the graph capture): the
         * schedule starts at its end, as a device is engaged once the loop runs. */
        int late = k > 0 && done > deadline;
        if (k == 0) {
            st.first_ms = ms;
            deadline = done;
        }
        char row[1024];
        int n = snprintf(row, sizeof row, "%ld,", k + 1);
        n += tool_csv_values(row + n, sizeof row - (size_t)n, &s);
        snprintf(row + n, sizeof row - (size_t)n, ",%.4f,%d\n", ms, late);
        if (fputs(row, out) == EOF) {
            rc = cli_error("haptic: cannot write the CSV: %s", strerror(errno));
            break;
        }
        if (out == stdout) fflush(out); /* a reader on the other end of a pipe gets it now */
        st.steps++;
        if (k > 0) {
            st.sum_ms += ms;
            if (ms > st.max_ms) st.max_ms = ms;
        }
        if (late) {
            st.misses++;
            deadline = done; /* no catching up */
        } else {
            wait_until(deadline);
        }
    }
    st.end = now_s();
    int interrupted = interrupt_pending();
    interrupt_restore();
    if (fflush(out) != 0 && rc == 0)
        rc = cli_error("haptic: cannot write the CSV: %s", strerror(errno));
    if (out != stdout && fclose(out) != 0 && rc == 0)
        rc = cli_error("haptic: cannot write '%s': %s", o->out, strerror(errno));
    if (!o->quiet && st.steps > 0) {
        double wall = st.end - st.start;
        fprintf(stderr, "pbf haptic: %ld steps in %.3f s (t = %.4f s simulated)\n", st.steps, wall,
                pbf_world_time(w));
        fprintf(stderr, "  achieved rate    %.1f steps/s (target %g)\n",
                wall > 0.0 ? st.steps / wall : 0.0, o->rate);
        fprintf(stderr, "  deadline misses  %ld (%.1f %%)\n", st.misses,
                100.0 * (double)st.misses / (double)st.steps);
        if (st.steps > 1)
            fprintf(stderr, "  step time        mean %.3f ms, max %.3f ms (period %.3f ms)\n",
                    st.sum_ms / (double)(st.steps - 1), st.max_ms, 1000.0 * dt);
        fprintf(stderr, "  first step       %.3f ms (sets up; the schedule starts at its end)\n",
                st.first_ms);
        if (st.bad_datagrams > 0)
            fprintf(stderr, "  bad datagrams    %ld (ignored)\n", st.bad_datagrams);
    }
    if (udp >= 0) close(udp);
    free(reader);
    pbf_world_destroy(w);
    if (interrupted && rc == 0) rc = 128 + interrupted;
    return rc;
}

int cmd_haptic(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "haptic", haptic_synopsis, argc, argv);
    haptic_options o;
    memset(&o, 0, sizeof o);
    o.rate = 1000.0;
    o.duration = -1.0;
    o.pose = POSE_PATH;
    o.port = 5005;
    o.substeps = 1;
    o.threads = -1;
    o.backend = -1;
    int rc = CLI_EXIT_OK, help = 0;
    const char *a, *v;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--quiet", "-q")) {
            o.quiet = 1;
        } else if (cli_option(&p, "--rate", &v)) {
            cli_parse_double(&p, "--rate", v, 1.0, 100000.0, &o.rate);
        } else if (cli_option(&p, "--duration", &v)) {
            cli_parse_double(&p, "--duration", v, 0.0, 1e7, &o.duration);
        } else if (cli_option(&p, "--pose", &v)) {
            if (strcmp(v, "path") == 0)
                o.pose = POSE_PATH;
            else if (strcmp(v, "stdin") == 0)
                o.pose = POSE_STDIN;
            else if (strcmp(v, "udp") == 0)
                o.pose = POSE_UDP;
            else
                cli_usage_error(&p, "--pose expects path, stdin or udp, got '%s'", v);
        } else if (cli_option(&p, "--port", &v)) {
            cli_parse_int(&p, "--port", v, 0, 65535, &o.port);
        } else if (cli_option(&p, "--out", &v)) {
            if (v[0] == '\0') cli_usage_error(&p, "--out needs a file name (or - for stdout)");
            o.out = v;
        } else if (cli_option(&p, "--substeps", &v)) {
            cli_parse_int(&p, "--substeps", v, 1, 1000, &o.substeps);
        } else if (cli_option(&p, "--threads", &v)) {
            cli_parse_int(&p, "--threads", v, 0, 4096, &o.threads);
        } else if (cli_option(&p, "--backend", &v)) {
            if (strcmp(v, "cpu") == 0)
                o.backend = PBF_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0)
                o.backend = PBF_BACKEND_CUDA;
            else
                cli_usage_error(&p, "--backend expects cpu or cuda, got '%s'", v);
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &o.sets);
        } else if (p.failed) {
            break;
        } else {
            cli_operand(&p, a, "scene", &o.scene_path);
        }
        if (p.failed) rc = CLI_EXIT_USAGE;
    }
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", haptic_synopsis, haptic_help);
    } else if (rc == CLI_EXIT_OK && o.scene_path == NULL) {
        rc = cli_usage_error(&p, "a scene with a tool is needed, e.g. scenes/tool_sphere.json");
    } else if (rc == CLI_EXIT_OK) {
        pbf_scene *scene = malloc(sizeof *scene);
        if (scene == NULL) rc = cli_error("out of memory");
        if (rc == CLI_EXIT_OK) rc = cli_load_scene(o.scene_path, o.sets.items, o.sets.count, scene);
        if (rc == CLI_EXIT_OK) rc = run_haptic(&o, scene);
        free(scene);
    }
    cli_overrides_free(&o.sets);
    return rc;
}
