/* The `pbf` command: shared declarations of the commands and the small helpers they use.
 *
 * Conventions for every command: stdout carries results (tables, JSON), stderr carries progress
 * and messages. Exit codes: 0 success, 1 a failure reported by the library or the system,
 * 2 a usage error (unknown option, missing or bad value), 128+N stopped by signal N
 * (130 for Ctrl-C). */
#ifndef PBF_APP_CLI_H
#define PBF_APP_CLI_H

#include <stdio.h>

#include "pbf/pbf.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_ERROR = 1, CLI_EXIT_USAGE = 2 };

/* One command of the dispatch table in main.c. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary; /* one line for `pbf --help` */
} cli_command;

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_haptic(int argc, char **argv); /* the tool in real time (docs/tool.md) */
int cmd_resume(int argc, char **argv); /* app/cmd_resume.c */
int cmd_validate(int argc, char **argv); /* app/cmd_validate.c */
int cmd_mesh(int argc, char **argv); /* surfaces from particles: app/cmd_mesh.c */
int cmd_features(int argc, char **argv); /* what runs where: app/cmd_features.c */
int cmd_dataset(int argc, char **argv); /* learned-simulator datasets, in Python: cmd_dataset.c */
int cmd_paraview(int argc, char **argv); /* a run in ParaView: app/cmd_paraview.c */
/* Renderer commands (app/cmd_view.c, app/cmd_render.c), compiled in when the renderer is. */
#ifdef PBF_APP_HAVE_VIEW
int cmd_view(int argc, char **argv);
#endif
#ifdef PBF_APP_HAVE_RENDER
int cmd_render(int argc, char **argv);
#endif

/* ---- option parsing (args.c) ----------------------------------------------------------------
 * Options are `--name VALUE` or `--name=VALUE`; flags are `--name`. A usage error prints
 * "pbf CMD: <message>", the command's synopsis and a hint to --help, on stderr. */

typedef struct cli_parser {
    const char *command; /* "run", "info", ... */
    const char *synopsis; /* printed after a usage error */
    int argc;
    char **argv;
    int index; /* the argument being looked at */
    int failed; /* a usage error was printed */
} cli_parser;

void cli_parser_init(cli_parser *p, const char *command, const char *synopsis, int argc,
                     char **argv);
/* The next argument, or NULL at the end. */
const char *cli_next(cli_parser *p);
/* 1 if the current argument is the flag `name` (or `alias`, which may be NULL). */
int cli_flag(const cli_parser *p, const char *name, const char *alias);
/* If the current argument is option `name`, stores its value (consuming `--name VALUE` or
 * `--name=VALUE`) and returns 1. A missing value is a usage error: returns 0 and sets failed. */
int cli_option(cli_parser *p, const char *name, const char **value);
/* Prints a usage error and sets failed; always returns CLI_EXIT_USAGE. */
int cli_usage_error(cli_parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The current argument `arg` when no option of the command took it: an unknown option is a
 * usage error; otherwise it is the command's operand, stored in *operand, and a second one is a
 * usage error "one WHAT at a time". Returns an exit code (0 when stored). */
int cli_operand(cli_parser *p, const char *arg, const char *what, const char **operand);
/* Strict number parsing with a range; a bad value is a usage error naming the option. */
int cli_parse_int(cli_parser *p, const char *option, const char *text, long min, long max,
                  int *out);
int cli_parse_double(cli_parser *p, const char *option, const char *text, double min, double max,
                     double *out);
/* "ply", "vtk", "vtu", a list such as "ply,vtu", or "none" -> pbf_format bits. */
int cli_parse_formats(cli_parser *p, const char *option, const char *text, unsigned *out);

/* A growing list of --set overrides (pointers into argv). */
typedef struct cli_overrides {
    const char **items;
    int count;
    int capacity;
} cli_overrides;
int cli_overrides_add(cli_overrides *o, const char *item); /* 0 when out of memory */
/* Checks and adds the value of a --set option; returns an exit code (0 when added). */
int cli_take_set(cli_parser *p, const char *value, cli_overrides *o);
void cli_overrides_free(cli_overrides *o);

/* Prints "pbf: <message>" on stderr and returns CLI_EXIT_ERROR. */
int cli_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* ---- small utilities (util.c) ---------------------------------------------------------------- */

struct pbf_scene;
/* Loads `path` (NULL: the built-in default scene) with --set overrides; prints
 * "pbf: <message>" and returns CLI_EXIT_ERROR on failure. */
int cli_load_scene(const char *path, const char *const *sets, int set_count, struct pbf_scene *out);
/* "ply", "ply,vtu", "none" into buf. */
const char *cli_format_names(unsigned formats, char *buf, size_t size);

/* Seconds on a monotonic clock. */
double cli_now(void);
/* Creates a folder and its parents (mkdir -p). 0 on success, else errno. */
int cli_make_dirs(const char *path);
/* "1.5 KiB", "23.4 MiB" ... into buf. */
const char *cli_format_bytes(double bytes, char *buf, size_t size);
/* "1:05", "1:02:03" into buf. */
const char *cli_format_duration(double seconds, char *buf, size_t size);
/* "1,234,567" into buf. */
const char *cli_format_count(long long n, char *buf, size_t size);
/* Prints "pbf: warning: ..." when `bytes` (what `frames` frames will write) exceed the free
 * space of the file system holding dir (or its nearest existing parent). */
void cli_warn_disk_space(const char *dir, double bytes, int frames);
/* Prints the lines of pbf_scene_check's warnings as "pbf: warning: <line>". */
void cli_print_warnings(const char *warnings);
/* With `mute` (a run split over MPI ranks, on every rank but 0: each would print the same),
 * sends stderr to /dev/null and returns the saved descriptor; otherwise returns -1. */
int cli_mute_stderr(int mute);
/* Restores stderr saved by cli_mute_stderr (nothing for -1). */
void cli_unmute_stderr(int saved);

#endif /* PBF_APP_CLI_H */
