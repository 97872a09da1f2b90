/* The XML VTK UnstructuredGrid writer behind pbf_export_write (library-internal; see
 * include/pbf/export.h for the format). */
#ifndef PBF_IO_EXPORT_VTU_H
#define PBF_IO_EXPORT_VTU_H

#include "atomic_file.h"
#include "pbf/export.h"

/* Writes the whole .vtu file into af (the caller opens and commits it). */
void pbf__write_vtu(atomic_file *af, const pbf_particles *p);

#endif
