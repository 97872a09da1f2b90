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
 *   VTU  XML VTK "UnstructuredGrid" 1.0, LittleEndian, header_type UInt64, one raw appended
 *        block: Points Float32×3; PointData velocity Float32×3, density Float32, id Int32
 *        (several fluids: phase Int32);
 *        one VTK_VERTEX cell per particle (connectivity and offsets Int32, types UInt8).
 *        ParaView, VTK 9 (ids included) and meshio read it. A run writes a .pvd time series
 *        beside the frames (pbf_export_write_pvd) and, split over MPI ranks, one .vtu piece per
 *        rank and a .pvtu naming them (pbf_export_write_pvtu).
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
    float *positions; /* 3*count, xyz */
    float *velocities; /* 3*count, xyz; zero when the file has none */
    float *densities; /* count; zero when the file has none */
    int32_t *ids; /* count; 0..count-1 when the file has none */
    int32_t *phases; /* count: each particle's fluid; NULL for a world of one fluid (no
                           phases in its def) and a file without a `phase` field */
} pbf_particles;

/* Allocates and fills from a world (id order). Free with pbf_particles_free. */
PBF_API pbf_status pbf_particles_from_world(const pbf_world *world, pbf_particles *out, char *err,
                                            size_t err_size);
/* Frees the arrays and zeroes *p. Safe on a zeroed struct and on NULL. */
PBF_API void pbf_particles_free(pbf_particles *p);

/* Writes one frame. format is exactly one pbf_format bit. */
PBF_API pbf_status pbf_export_write(const pbf_particles *p, pbf_format format, const char *path,
                                    char *err, size_t err_size);
/* The PLY file pbf_export_write writes, in its two parts, for a writer that assembles the file
 * itself (one file written by many MPI ranks, include/pbf/mpi.h): the header for `count`
 * particles (with the phase property when `phases`) into buf, NUL-terminated (returns its
 * length without the NUL, or the size it needs when size is too small), then
 * PBF_PLY_VERTEX_BYTES bytes per particle (4 more with p->phases) for particles
 * [first, first + n) of p, little-endian, into dst. */
#define PBF_PLY_VERTEX_BYTES 32
PBF_API size_t pbf_export_ply_header(int64_t count, int phases, char *buf, size_t size);
PBF_API void pbf_export_ply_vertices(const pbf_particles *p, int first, int n, unsigned char *dst);

/* Writes the parallel header of one frame split into pieces (.vtu files, named relative to the
 * .pvtu's folder), atomically. */
PBF_API pbf_status pbf_export_write_pvtu(const char *path, const char *const *pieces, int count,
                                         char *err, size_t err_size);
/* Writes a ParaView time series (.pvd): count data sets, file[i] (a .vtu or .pvtu relative to the
 * .pvd's folder) at time times[i] in seconds, atomically: a run rewrites it every frame, so a
 * killed run leaves a valid series of the frames it finished. */
PBF_API pbf_status pbf_export_write_pvd(const char *path, const double *times,
                                        const char *const *files, int count, char *err,
                                        size_t err_size);
/* One data set of a .pvd collection: a file (relative to the .pvd's folder) at a time in
 * seconds, in a part (ParaView shows each part as a block of its own: particles, solids, ...). */
typedef struct pbf_pvd_entry {
    double time; /* s */
    int part; /* 0, 1, ...: the block */
    const char *file;
} pbf_pvd_entry;
/* Writes a .pvd of several parts, atomically like pbf_export_write_pvd: count entries, in the
 * given order; part_names[part] (when part < part_count and not NULL) goes into the entry's
 * `name` attribute, which ParaView uses for the block's name. */
PBF_API pbf_status pbf_export_write_pvd_parts(const char *path, const pbf_pvd_entry *entries,
                                              int count, const char *const *part_names,
                                              int part_count, char *err, size_t err_size);
/* Writes a ParaView file series (.series, JSON: {"file-series-version": "1.0", "files":
 * [{"name": file[i], "time": times[i]}, ...]}) for files of another format (legacy .vtk, .ply),
 * whose own headers carry no time: ParaView opens "<name>.<ext>.series" as the files' time
 * series in seconds. Atomically, like pbf_export_write_pvd. */
PBF_API pbf_status pbf_export_write_series(const char *path, const double *times,
                                           const char *const *files, int count, char *err,
                                           size_t err_size);
/* Reads a file written by pbf_export_write (the format is taken from the extension: .ply or
 * .vtk; .vtu is not read back yet).
 * Errors name the file and what was wrong. On failure *out is zeroed. */
PBF_API pbf_status pbf_export_read(const char *path, pbf_particles *out, char *err,
                                   size_t err_size);
/* The world's mesh solids (include/pbf/geometry.h) at their current pose, as one file of
 * triangles in world coordinates (`pbf run` writes solids_00042.ply/.vtk next to each frame):
 *   PLY  binary little-endian: element vertex (float x y z), element face (list uchar int
 *        vertex_indices, int solid: the mesh's index); one header comment per solid,
 *        "comment solid I FILE position X Y Z orientation W X Y Z" (the pose: the local frame's
 *        origin, a floating body's centre of mass, and the unit quaternion local to world).
 *        Blender imports it as a mesh; the comments are for scripts.
 *   VTK  legacy binary POLYDATA: POINTS, POLYGONS, CELL_DATA SCALARS solid int, and field data
 *        time (1 float), position (3 per solid), orientation (4 per solid, w x y z). ParaView
 *        reads the numbered files as a series and shows the field data in its spreadsheet.
 * Written atomically like the particle files. */
PBF_API pbf_status pbf_export_solids_write(const pbf_world *world, pbf_format format,
                                           const char *path, char *err, size_t err_size);

/* The same triangles as an XML VTK UnstructuredGrid (.vtu, like the particle .vtu): VTK_TRIANGLE
 * cells with CellData `solid` (Int32, the mesh's index); `pbf run --format vtu` writes
 * solids_00042.vtu and lists it in frames.pvd. */
PBF_API pbf_status pbf_export_solids_write_vtu(const pbf_world *world, const char *path, char *err,
                                               size_t err_size);
/* A surface mesh (include/pbf/surface.h) as a .vtu of VTK_TRIANGLE cells with PointData Normals
 * (Float32×3): `pbf run --mesh --format vtu` writes surface_00042.vtu for frames.pvd. */
struct pbf_mesh;
PBF_API pbf_status pbf_export_surface_write_vtu(const struct pbf_mesh *mesh, const char *path,
                                                char *err, size_t err_size);

/* The world's diffuse particles (include/pbf/diffuse.h) as a binary little-endian PLY file:
 * per vertex x y z vx vy vz (float), kind (uchar: 0 spray, 1 foam, 2 bubble), lifetime (float,
 * s), in the set's order. A world without them writes an empty file. Written atomically. */
PBF_API pbf_status pbf_export_diffuse_write(const pbf_world *world, const char *path, char *err,
                                            size_t err_size);

/* The same as a .vtu: one VTK_VERTEX per particle, PointData velocity (Float32×3), kind
 * (UInt8) and lifetime (Float32); `pbf run --format vtu` writes diffuse_00042.vtu. */
PBF_API pbf_status pbf_export_diffuse_write_vtu(const pbf_world *world, const char *path, char *err,
                                                size_t err_size);

/* A diffuse-particle file as pbf_export_diffuse_write writes it, read back (`pbf render` draws
 * them): count particles, positions and velocities 3 per particle, kinds and lifetimes 1.
 * Exactly that layout is accepted; anything else is an error naming the file and what was
 * expected (a kind above 2 too). Free with pbf_diffuse_particles_free. */
typedef struct pbf_diffuse_particles {
    int count;
    float *positions;
    float *velocities;
    uint8_t *kinds; /* pbf_diffuse_kind: 0 spray, 1 foam, 2 bubble */
    float *lifetimes;
} pbf_diffuse_particles;
PBF_API pbf_status pbf_export_diffuse_read(const char *path, pbf_diffuse_particles *out, char *err,
                                           size_t err_size);
/* Frees the arrays and zeroes *p. Safe on a zeroed struct and on NULL. */
PBF_API void pbf_diffuse_particles_free(pbf_diffuse_particles *p);
/* Writes such a set as pbf_export_diffuse_write (vtu 0) or pbf_export_diffuse_write_vtu (1)
 * write a world's: a split run's rank 0 writes the particles gathered from every rank
 * (pbf_mpi_world_gather_diffuse, include/pbf/mpi.h). */
PBF_API pbf_status pbf_export_diffuse_write_particles(const pbf_diffuse_particles *p, int vtu,
                                                      const char *path, char *err, size_t err_size);

/* File name extension of a format: "ply", "vtk" or "vtu"; "" for anything else. */
PBF_API const char *pbf_format_extension(pbf_format format);

/* Writes size bytes to path atomically (temporary file, fsync, rename), e.g. scene.json or a
 * rewritten CSV. Same guarantees and messages as pbf_export_write. */
PBF_API pbf_status pbf_write_file_atomic(const char *path, const void *data, size_t size, char *err,
                                         size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_EXPORT_H */
