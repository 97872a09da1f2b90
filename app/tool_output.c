/* forces.csv, forces.gp and forces.png of `pbf run` (see tool_output.h; docs/tool.md). */
#include "tool_output.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "csv_file.h"
#include "pbf/export.h" /* pbf_write_file_atomic (forces.gp) */

struct tool_output {
    char *dir;
    csv_file csv;
    int rows;
};

static const char csv_name[] = "forces.csv";
static const char script_name[] = "forces.gp";
static const char png_name[] = "forces.png";

static const char columns[] =
    "time,x,y,z,vx,vy,vz,fx,fy,fz,reaction_x,reaction_y,reaction_z,adhesion_x,adhesion_y,"
    "adhesion_z,damping_x,damping_y,damping_z,contacts,min_distance";

const char *tool_csv_columns(void) { return columns; }

int tool_csv_values(char *buf, size_t size, const pbf_tool_state *s) {
    const pbf_vec3 v[6] = {s->position, s->velocity, s->total,
                           s->reaction, s->adhesion, s->damping};
    int n = snprintf(buf, size, "%.9g", s->time);
    for (int k = 0; k < 6 && n > 0 && (size_t)n < size; ++k)
        n += snprintf(buf + n, size - (size_t)n, ",%.9g,%.9g,%.9g", (double)v[k].x, (double)v[k].y,
                      (double)v[k].z);
    if (n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ",%d,%.9g", s->contacts,
                      isfinite(s->min_distance) ? (double)s->min_distance : -1.0);
    return n;
}

/* dir + "/" + name, malloc'd. */
static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

/* The gnuplot script: three panels against time, total force (with the buoyancy ρ0 g V of the
 * whole sphere for reference), its components, and the tool's centre. Kept in the folder so a
 * user can edit and redraw it. Columns as in `columns` after "frame" (1-based: time is 2). */
static const char script_format[] =
    "# Force on the tool, written by `pbf run` (docs/tool.md). Redraw in this folder with:\n"
    "#   gnuplot forces.gp\n"
    "csv = 'forces.csv'\n"
    "buoyancy = %.6g  # rho0 |g| V of the tool in N: the plateau of a submerged tool at rest\n"
    "set terminal pngcairo size 1200,1000 font 'sans,10'\n"
    "set output 'forces.png'\n"
    "set datafile separator ','\n"
    "set grid\n"
    "set key outside right top\n"
    "set lmargin 10\n"
    "set multiplot layout 3,1 title 'Force on the tool: %s' noenhanced\n"
    "set ylabel 'total force (N)'\n"
    "plot csv every ::1 using 2:9 with lines lw 2 title 'F_x', \\\n"
    "     '' every ::1 using 2:10 with lines lw 2 title 'F_y', \\\n"
    "     '' every ::1 using 2:11 with lines lw 2 title 'F_z', \\\n"
    "     buoyancy with lines dashtype 2 lc rgb 'gray40' title 'rho_0 g V'\n"
    "set ylabel 'components (N)'\n"
    "plot csv every ::1 using 2:12 with lines title 'reaction x', \\\n"
    "     '' every ::1 using 2:13 with lines title 'reaction y', \\\n"
    "     '' every ::1 using 2:15 with lines title 'adhesion x', \\\n"
    "     '' every ::1 using 2:16 with lines title 'adhesion y', \\\n"
    "     '' every ::1 using 2:18 with lines title 'damping x', \\\n"
    "     '' every ::1 using 2:19 with lines title 'damping y'\n"
    "set ylabel 'tool centre (m)'\n"
    "set xlabel 'time (s)'\n"
    "plot csv every ::1 using 2:3 with lines lw 2 title 'x', \\\n"
    "     '' every ::1 using 2:4 with lines lw 2 title 'y', \\\n"
    "     '' every ::1 using 2:5 with lines lw 2 title 'z'\n"
    "unset multiplot\n";

static int write_script(const char *dir, const pbf_scene *scene) {
    const pbf_world_def *w = &scene->world;
    double g = sqrt((double)w->gravity.x * w->gravity.x + (double)w->gravity.y * w->gravity.y +
                    (double)w->gravity.z * w->gravity.z);
    double r = scene->tool.radius;
    double buoyancy = w->rest_density * g * 4.0 / 3.0 * 3.14159265358979323846 * r * r * r;
    /* the scene's name goes into a single-quoted gnuplot string: no quotes in it */
    char name[sizeof scene->name];
    size_t k = 0;
    for (const char *c = scene->name; *c != '\0' && k + 1 < sizeof name; ++c)
        name[k++] = (*c == '\'' || *c == '\\' || (unsigned char)*c < 32) ? '_' : *c;
    name[k] = '\0';
    char text[4096];
    int n = snprintf(text, sizeof text, script_format, buoyancy, name);
    char *path = join(dir, script_name);
    char err[PBF_ERROR_SIZE];
    int rc = 0;
    if (path == NULL || n <= 0 || (size_t)n >= sizeof text)
        rc = cli_error("out of memory writing %s", script_name);
    else if (pbf_write_file_atomic(path, text, (size_t)n, err, sizeof err) != PBF_OK)
        rc = cli_error("%s", err);
    free(path);
    return rc;
}

static void destroy(tool_output *o) {
    if (o == NULL) return;
    csv_file_close(&o->csv);
    free(o->dir);
    free(o);
}

/* Opens (resume_frame < 0) or resumes forces.csv, and writes forces.gp. */
static int open_files(tool_output **out, const char *dir, const pbf_scene *scene,
                      int resume_frame) {
    *out = NULL;
    if (!scene->has_tool) return 0;
    tool_output *o = calloc(1, sizeof *o);
    if (o != NULL) o->dir = join(dir, "");
    if (o == NULL || o->dir == NULL) {
        free(o);
        return cli_error("out of memory");
    }
    o->dir[strlen(o->dir) - 1] = '\0'; /* the trailing '/' of join(dir, "") */
    char header[512];
    int n = snprintf(header, sizeof header, "frame,%s\n", columns);
    int rc = resume_frame < 0
                 ? csv_file_create(&o->csv, dir, csv_name, header, (size_t)n)
                 : csv_file_resume(&o->csv, dir, csv_name, resume_frame, header, (size_t)n);
    if (rc == 0) rc = write_script(dir, scene);
    if (rc != 0) {
        destroy(o);
        return rc;
    }
    *out = o;
    return 0;
}

int tool_output_open(tool_output **out, const char *dir, const pbf_scene *scene) {
    return open_files(out, dir, scene, -1);
}

int tool_output_resume(tool_output **out, const char *dir, const pbf_scene *scene, int frame) {
    return open_files(out, dir, scene, frame);
}

int tool_output_row(tool_output *o, const pbf_world *world, int frame, char *err, size_t err_size) {
    if (o == NULL) return 0;
    pbf_tool_state s = pbf_tool_get_state(world);
    char row[1024];
    int n = snprintf(row, sizeof row, "%d,", frame);
    n += tool_csv_values(row + n, sizeof row - (size_t)n, &s);
    n += snprintf(row + n, sizeof row - (size_t)n, "\n");
    if (csv_file_append(&o->csv, row, (size_t)n, err, err_size) != 0) return 1;
    ++o->rows;
    return 0;
}

/* Runs `gnuplot forces.gp` in the folder. Returns 0 when forces.png was drawn; otherwise a note
 * on stderr. */
static int draw_plot(const tool_output *o) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        fprintf(stderr, "pbf run: note: cannot start gnuplot (%s); forces.csv is written\n",
                strerror(errno));
        return 1;
    }
    if (pid == 0) { /* the child: gnuplot in the folder, its messages into the pipe */
        close(fds[0]);
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        if (chdir(o->dir) != 0) _exit(126);
        execlp("gnuplot", "gnuplot", script_name, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char msg[512];
    size_t len = 0;
    ssize_t got;
    while ((got = read(fds[0], msg + len, sizeof msg - 1 - len)) > 0 && len + 1 < sizeof msg)
        len += (size_t)got;
    while (got > 0) got = read(fds[0], msg, sizeof msg - 1); /* drain */
    close(fds[0]);
    msg[len] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 127) {
        fprintf(stderr,
                "pbf run: note: gnuplot not found, so %s/forces.png is not drawn (install "
                "gnuplot-nox, then: cd %s && gnuplot %s)\n",
                o->dir, o->dir, script_name);
        return 1;
    }
    char *png = join(o->dir, png_name);
    struct stat st;
    int drawn = code == 0 && png != NULL && stat(png, &st) == 0 && st.st_size > 0;
    free(png);
    if (!drawn) {
        char *nl = strchr(msg, '\n');
        if (nl != NULL) *nl = '\0';
        fprintf(stderr, "pbf run: note: gnuplot could not draw %s/forces.png (exit %d%s%s)\n",
                o->dir, code, msg[0] ? ": " : "", msg);
        return 1;
    }
    return 0;
}

void tool_output_close(tool_output *o) {
    if (o == NULL) return;
    csv_file_close(&o->csv);
    if (o->rows > 0) draw_plot(o);
    destroy(o);
}
