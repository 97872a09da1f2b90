/* The MPI entry points of mpi.c in a build where the library has no MPI (PBF_MPI=OFF, or AUTO
 * without libopenmpi-dev): each raises pbf.UnsupportedError saying so, so that the module has
 * the same names in every build (pbf.HAVE_MPI tells them apart). */
#include "pbfpy.h"

const int pbfpy_have_mpi = 0;

static PyObject *no_mpi(const char *what) {
    char msg[PBF_ERROR_SIZE];
    snprintf(msg, sizeof msg,
             "%s: this build of pbf has no MPI (pbf.HAVE_MPI is False): install libopenmpi-dev "
             "and openmpi-bin (scripts/install-deps.sh) and build the module again "
             "(PBF_MPI=AUTO finds it; docs/mpi.md)",
             what);
    return pbfpy_raise(PBF_ERR_UNSUPPORTED, msg);
}

PyObject *pbfpy_world_split(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    (void)self, (void)args, (void)kwargs;
    return no_mpi("World.split");
}

PyObject *pbfpy_world_slab(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.slab");
}

PyObject *pbfpy_world_cuts(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.cuts");
}

PyObject *pbfpy_world_halo(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.halo");
}

PyObject *pbfpy_world_balance(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    (void)self, (void)args, (void)kwargs;
    return no_mpi("World.balance");
}

PyObject *pbfpy_world_gather(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.gather");
}

PyObject *pbfpy_world_gather_diffuse(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.gather_diffuse");
}

PyObject *pbfpy_world_totals(pbfpy_world *self, PyObject *unused) {
    (void)self, (void)unused;
    return no_mpi("World.totals");
}

PyObject *pbfpy_mpi_rank(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return no_mpi("mpi_rank");
}

PyObject *pbfpy_mpi_size(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return no_mpi("mpi_size");
}
