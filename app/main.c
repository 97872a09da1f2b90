/* pbf — the command-line tool: dispatches `pbf COMMAND ...` to the cmd_*.c files.
 *
 * To add a command: write `int cmd_NAME(int argc, char **argv)` in app/cmd_NAME.c (argv[0] is
 * the command name, the command handles its own --help and returns an exit code), declare it in
 * cli.h and add one row to the table below. */
#include <string.h>

#include "cli.h"
#include "run_comm.h"

static const cli_command commands[] = {
    {"run", cmd_run, "simulate a scene and write particle files and statistics"},
    {"info", cmd_info, "show a scene's particle count, memory and every parameter"},
    {"bench", cmd_bench, "time the solver at several particle counts"},
    {"haptic", cmd_haptic, "move a scene's tool in real time and write the force on it"},
    {"resume", cmd_resume, "go on with a run from its checkpoint (pbf run --checkpoint-every)"},
    {"validate", cmd_validate, "compare a validation case with laboratory data (metrics, plots)"},
    {"mesh", cmd_mesh, "write the fluid's surface as triangle meshes for a run's frames"},
    {"features", cmd_features, "print which features run on which backend (CSV)"},
    {"dataset", cmd_dataset,
     "write learned-simulator datasets (LagrangeBench, GNS) of varied runs"},
    {"paraview", cmd_paraview, "open a run in ParaView, or render one of its frames headless"},
#ifdef PBF_APP_HAVE_VIEW
    {"view", cmd_view, "open a window and play with the fluid"},
#endif
#ifdef PBF_APP_HAVE_RENDER
    {"render", cmd_render, "render the particle files of a run to a video or PNG frames"},
#endif
};
static const int command_count = (int)(sizeof commands / sizeof commands[0]);

static void print_usage(FILE *out) {
    fprintf(out,
            "pbf %s - Position Based Fluids simulator\n"
            "\n"
            "usage: pbf COMMAND [ARGS...]\n"
            "       pbf --help | --version\n"
            "\n"
            "commands:\n",
            pbf_version());
    for (int i = 0; i < command_count; ++i)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n"
                 "Run 'pbf COMMAND --help' for the options of a command.\n"
                 "Example: pbf run --frames 60 --out out/dam   (the built-in dam break)\n"
                 "Exit status: 0 ok, 1 error, 2 usage error, 130 interrupted (Ctrl-C).\n");
}

static const cli_command *find_command(const char *name) {
    for (int i = 0; i < command_count; ++i)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

static int run_command(int argc, char **argv);

/* Under mpirun only `pbf run` and `pbf resume` know how to split their work; MPI starts and
 * ends around them. */
int main(int argc, char **argv) {
    if (run_comm_start(&argc, &argv) != 0) return CLI_EXIT_ERROR;
    int rc;
    const run_comm *comm = run_comm_get();
    if (comm != NULL &&
        (argc < 2 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "resume") != 0))) {
        if (comm->rank == 0)
            cli_error("under mpirun only 'pbf run' and 'pbf resume' run split over the ranks "
                      "(docs/mpi.md)");
        rc = CLI_EXIT_USAGE;
    } else {
        rc = run_command(argc, argv);
    }
    run_comm_end();
    return rc;
}

static int run_command(int argc, char **argv) {
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "--version") == 0) {
        printf("pbf %s\n", pbf_version());
        return CLI_EXIT_OK;
    }
    /* `pbf help` and `pbf help COMMAND` */
    if (strcmp(first, "help") == 0) {
        if (argc < 3) {
            print_usage(stdout);
            return CLI_EXIT_OK;
        }
        const cli_command *c = find_command(argv[2]);
        if (c == NULL) {
            fprintf(stderr, "pbf: unknown command '%s'\n\n", argv[2]);
            print_usage(stderr);
            return CLI_EXIT_USAGE;
        }
        static char help_flag[] = "--help";
        char *help_argv[] = {argv[2], help_flag, NULL};
        return c->run(2, help_argv);
    }
    const cli_command *c = find_command(first);
    if (c == NULL) {
        fprintf(stderr, "pbf: unknown %s '%s'\n\n", first[0] == '-' ? "option" : "command", first);
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1);
}
