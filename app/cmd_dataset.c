/* `pbf dataset`: learned-simulator datasets (docs/datasets.md). The work is the Python module
 * pbf.dataset (python/pbf/dataset.py): it writes HDF5 through h5py and NPZ through numpy, and
 * runs the trajectories through the package's bindings in a pool of processes, none of which C
 * would do more simply. This command only finds a Python interpreter that has the package and
 * hands it the arguments (exec: the exit status, the progress bar and Ctrl-C are Python's).
 *
 * The interpreter, first found: $PBF_PYTHON; the venv scripts/test_python.sh makes beside this
 * binary (build/python-venv); the README's venv at the repository root (.venv); Debian's
 * /usr/bin/python3; python3 on PATH. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Run as `python -c BOOT ARGS...`: a missing package is a clear error, not a traceback. */
static const char boot[] =
    "import sys\n"
    "try:\n"
    "    import pbf.dataset as d\n"
    "except ImportError as e:\n"
    "    sys.exit('pbf dataset: the Python package pbf is not importable by ' + sys.executable\n"
    "             + ' (' + str(e) + '): install it as docs/python.md says, or set PBF_PYTHON '\n"
    "             'to an interpreter that has it')\n"
    "sys.exit(d.main(sys.argv[1:], prog='pbf dataset'))\n";

static int executable(const char *path) { return access(path, X_OK) == 0; }

/* The folder of this binary, from /proc/self/exe (Linux); "" when unknown. */
static void binary_folder(char *out, size_t size) {
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    out[0] = '\0';
    if (n <= 0) return;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL) return;
    *slash = '\0';
    snprintf(out, size, "%s", path);
}

int cmd_dataset(int argc, char **argv) {
    char python[PATH_MAX + 32] = "";
    const char *env = getenv("PBF_PYTHON");
    if (env != NULL && env[0] != '\0') {
        if (!executable(env))
            return cli_error("dataset: PBF_PYTHON is '%s', which is not an executable file", env);
        snprintf(python, sizeof python, "%s", env);
    } else {
        char folder[PATH_MAX];
        binary_folder(folder, sizeof folder);
        const char *suffixes[] = {"/python-venv/bin/python", "/../.venv/bin/python"};
        for (int i = 0; i < 2 && python[0] == '\0' && folder[0] != '\0'; ++i) {
            char candidate[PATH_MAX + 32];
            snprintf(candidate, sizeof candidate, "%s%s", folder, suffixes[i]);
            if (executable(candidate)) snprintf(python, sizeof python, "%s", candidate);
        }
        if (python[0] == '\0')
            snprintf(python, sizeof python, "%s",
                     executable("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
    }

    /* python -c BOOT argv[1..] */
    char **args = malloc(((size_t)argc + 3) * sizeof *args);
    if (args == NULL) return cli_error("dataset: out of memory");
    static char dash_c[] = "-c";
    static char boot_copy[sizeof boot];
    memcpy(boot_copy, boot, sizeof boot);
    args[0] = python;
    args[1] = dash_c;
    args[2] = boot_copy;
    for (int i = 1; i < argc; ++i) args[i + 2] = argv[i];
    args[argc + 2] = NULL;
    fflush(NULL);
    execvp(python, args);
    int e = errno;
    free(args);
    return cli_error("dataset: cannot start the Python interpreter '%s' (%s); install python3 "
                     "or set PBF_PYTHON",
                     python, strerror(e));
}
