/* run_comm.h in a build without MPI: every run is one process. Launched by mpirun anyway, the
 * command says so instead of running the whole scene once per rank. */
#include <stdlib.h>

#include "cli.h"
#include "run_comm.h"

int run_comm_start(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (size != NULL && atoi(size) > 1)
        return cli_error("this pbf was built without MPI (PBF_MPI): it cannot run split over %s "
                         "ranks; install libopenmpi-dev and build again",
                         size);
    return 0;
}

const run_comm *run_comm_get(void) { return NULL; }

void run_comm_end(void) {}
