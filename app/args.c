/* Option parsing for the pbf commands: hand-written because getopt_long is a GNU extension and
 * we build with _POSIX_C_SOURCE only; and because every error must name the option. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pbf/scene.h"

void cli_parser_init(cli_parser *p, const char *command, const char *synopsis, int argc,
                     char **argv) {
    p->command = command;
    p->synopsis = synopsis;
    p->argc = argc;
    p->argv = argv;
    p->index = 0; /* argv[0] is the command name: cli_next moves to 1 first */
    p->failed = 0;
}

const char *cli_next(cli_parser *p) {
    if (p->failed || p->index + 1 >= p->argc) return NULL;
    return p->argv[++p->index];
}

int cli_flag(const cli_parser *p, const char *name, const char *alias) {
    const char *a = p->argv[p->index];
    return strcmp(a, name) == 0 || (alias != NULL && strcmp(a, alias) == 0);
}

int cli_option(cli_parser *p, const char *name, const char **value) {
    const char *a = p->argv[p->index];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (p->index + 1 >= p->argc) {
        cli_usage_error(p, "option '%s' needs a value", name);
        return 0;
    }
    *value = p->argv[++p->index];
    return 1;
}

int cli_usage_error(cli_parser *p, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "pbf %s: ", p->command);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fprintf(stderr, "\n%sRun 'pbf %s --help' for all options.\n", p->synopsis, p->command);
    p->failed = 1;
    return CLI_EXIT_USAGE;
}

int cli_operand(cli_parser *p, const char *arg, const char *what, const char **operand) {
    if (arg[0] == '-' && arg[1] != '\0') return cli_usage_error(p, "unknown option '%s'", arg);
    if (*operand != NULL)
        return cli_usage_error(p, "one %s at a time (got '%s' and '%s')", what, *operand, arg);
    *operand = arg;
    return CLI_EXIT_OK;
}

int cli_parse_int(cli_parser *p, const char *option, const char *text, long min, long max,
                  int *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
        cli_usage_error(p, "%s expects an integer in [%ld, %ld], got '%s'", option, min, max, text);
        return 0;
    }
    *out = (int)v;
    return 1;
}

int cli_parse_double(cli_parser *p, const char *option, const char *text, double min, double max,
                     double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < min || v > max) {
        cli_usage_error(p, "%s expects a number in [%g, %g], got '%s'", option, min, max, text);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_parse_formats(cli_parser *p, const char *option, const char *text, unsigned *out) {
    unsigned bits = 0;
    int none = 0;
    const char *s = text;
    for (;;) {
        size_t n = strcspn(s, ",");
        if (n == 3 && strncmp(s, "ply", 3) == 0)
            bits |= PBF_FORMAT_PLY;
        else if (n == 3 && strncmp(s, "vtk", 3) == 0)
            bits |= PBF_FORMAT_VTK;
        else if (n == 3 && strncmp(s, "vtu", 3) == 0)
            bits |= PBF_FORMAT_VTU;
        else if (n == 4 && strncmp(s, "none", 4) == 0)
            none = 1;
        else {
            cli_usage_error(p,
                            "%s: unknown format '%.*s' (expected ply, vtk, vtu, a list such as "
                            "ply,vtu, or none)",
                            option, (int)n, s);
            return 0;
        }
        if (s[n] == '\0') break;
        s += n + 1;
    }
    if (none && bits != 0) {
        cli_usage_error(p, "%s: 'none' cannot be combined with other formats", option);
        return 0;
    }
    *out = bits;
    return 1;
}

int cli_overrides_add(cli_overrides *o, const char *item) {
    if (o->count == o->capacity) {
        int cap = o->capacity ? 2 * o->capacity : 8;
        const char **items = realloc((void *)o->items, (size_t)cap * sizeof *items);
        if (items == NULL) return 0;
        o->items = items;
        o->capacity = cap;
    }
    o->items[o->count++] = item;
    return 1;
}

int cli_take_set(cli_parser *p, const char *value, cli_overrides *o) {
    const char *eq = strchr(value, '=');
    if (eq == NULL || eq == value)
        return cli_usage_error(p, "--set expects KEY=VALUE, got '%s'", value);
    if (!cli_overrides_add(o, value)) return cli_error("out of memory");
    return CLI_EXIT_OK;
}

void cli_overrides_free(cli_overrides *o) {
    free((void *)o->items);
    o->items = NULL;
    o->count = o->capacity = 0;
}

int cli_error(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("pbf: ", stderr);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return CLI_EXIT_ERROR;
}
