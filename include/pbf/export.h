/* pbf — particle files and run statistics.
 *
 * Formats (one file per frame, particles in stable id order):
 *
 *   PLY  binary_little_endian 1.0, one `vertex` element with
 *        float x y z, float vx vy vz, float density, int id      (32 bytes per particle)
 *        and, for a world of several fluids, int phase           (36 bytes per particle)
 *        Blender 4.x, Houdini and splashsurf read it.
 *   VTK  legacy "# vtk DataFile Version 3.0", BINARY (big-endian), DATASET POLYDATA:
 *        POINTS float, VERTICES (one cell per particle), POINT_DATA with
 *        SCALARS density float, SCALARS id int, (several fluids: SCALARS phase int),
 *        VECTORS velocity float.   ParaView reads it.
 *
 * Every writer goes to a temporary name in the same folder ("<path>.tmp.<pid>"), flushes and
 * fsyncs it, and renames it into place, so a file is either complete or absent: a crash or
 * Ctrl-C never leaves half a file. On failure the temporary file is removed and the message
 * names the path and the system's reason (disk full, folder not writable, ...).
 *
 * The readers accept what the writers write, and also other binary little-endian PLY files
 * (x y z required; vx vy vz, density, id optional, any scalar type) and other legacy binary
 * VTK POLYDATA files (POINTS float/double; density, id and velocity arrays picked by name).
 * A truncated or foreign file is an error with a message, never a crash. */
#ifndef PBF_EXPORT_H
#define PBF_EXPORT_H

#include <stdio.h>

#include "pbf.h"
#include "scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Particle arrays in stable id order, as read back from a world or from a file. */
typedef struct pbf_particles {
    int count;
    float *positions;   /* 3*count, xyz */
    float *velocities;  /* 3*count, xyz; zero when the file has none */
    float *densities;   /* count; zero when the file has none */
    int32_t *ids;       /* count; 0..count-1 when the file has none */
    int32_t *phases;    /* count: each particle's fluid; NULL for a world of one fluid (no
                           phases in its def) and a file without a `phase` field */
} pbf_particles;

/* Allocates and fills from a world (id order). Free with pbf_particles_free. */
PBF_API pbf_status pbf_particles_from_world(const pbf_world *world, pbf_particles *out,
                                            char *err, size_t err_size);
/* Frees the arrays and zeroes *p. Safe on a zeroed struct and on NULL. */
PBF_API void pbf_particles_free(pbf_particles *p);

/* Writes one frame. format is exactly one pbf_format bit. */
PBF_API pbf_status pbf_export_write(const pbf_particles *p, pbf_format format, const char *path,
                                    char *err, size_t err_size);
/* Reads a file written by pbf_export_write (the format is taken from the extension: .ply or
 * .vtk). Errors name the file and what was wrong. On failure *out is zeroed. */
PBF_API pbf_status pbf_export_read(const char *path, pbf_particles *out, char *err,
                                   size_t err_size);
/* File name extension of a format: "ply" or "vtk"; "" for anything else. */
PBF_API const char *pbf_format_extension(pbf_format format);

/* Writes size bytes to path atomically (temporary file, fsync, rename), e.g. scene.json or a
 * rewritten CSV. Same guarantees and messages as pbf_export_write. */
PBF_API pbf_status pbf_write_file_atomic(const char *path, const void *data, size_t size,
                                         char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_EXPORT_H */
