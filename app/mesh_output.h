/* Surface meshes from the pbf command: the options shared by `pbf mesh` (app/cmd_mesh.c) and
 * `pbf run --mesh`, the per-frame work (particles -> surface_NNNNN.ply / .obj, written
 * atomically), and the run hooks of `pbf run --mesh`. The method is the library's
 * (include/pbf/surface.h, docs/surface.md). */
#ifndef PBF_APP_MESH_OUTPUT_H
#define PBF_APP_MESH_OUTPUT_H

#include "cli.h"
#include "pbf/surface.h"
#include "run.h"

/* MESH_VDB: an OpenVDB level set; MESH_VTU: an XML VTK UnstructuredGrid, for frames.pvd
 * (`pbf run --mesh --format vtu` adds it). MESH_LAST: the highest bit. */
enum { MESH_PLY = 1, MESH_OBJ = 2, MESH_VDB = 4, MESH_VTU = 8, MESH_LAST = MESH_VTU };

typedef struct mesh_settings {
    pbf_surface_def def; /* particle_radius 0: from the scene (or estimated) */
    unsigned formats; /* MESH_PLY | MESH_OBJ | MESH_VDB | MESH_VTU */
    const char *out_dir; /* NULL: next to the particle files */
} mesh_settings;

/* Options of both commands, for their --help. */
extern const char mesh_settings_help[];

void mesh_settings_init(mesh_settings *s);
/* Takes --kernel, --cell, --iso, --smooth, --decimate, --stretch, --radius, --mesh-format when the
 * parser's current argument is one (a bad value is a usage error: p->failed is set); returns 1 if
 * taken. */
int mesh_settings_option(mesh_settings *s, cli_parser *p);

/* 0 when the formats chosen can be written by this build; otherwise a message (exit status 1)
 * naming the option: .vdb files need OpenVDB built in. */
int mesh_settings_check(const mesh_settings *s, const char *option);
/* The extensions of the chosen formats for a message: "ply", "ply/.obj/.vdb". */
const char *mesh_formats_text(unsigned formats, char *buf, size_t size);

/* Meshes one frame and writes DIR/surface_NNNNN.ply (and/or .obj, .vtu, .vdb: the OpenVDB level set
 * of the mesh, voxel = the marching-cubes cell). Returns 0, or 1 with the message in err. The
 * mesh's size and the timings go to *stats and *triangles; the time spent writing the files
 * (the level set's conversion included) to *files_ms. */
int mesh_frame(const mesh_settings *s, const float *positions, int count, const char *dir,
               int frame, pbf_surface_stats *stats, int *triangles, double *files_ms, char *err,
               size_t err_size);
/* "surface_00042.ply" */
const char *mesh_frame_name(int frame, unsigned format, char *buf, size_t size);

/* `pbf run --mesh`: meshes every frame while simulating. */
typedef struct mesh_run mesh_run;
extern const char mesh_run_help[];
mesh_run *mesh_run_create(void); /* NULL when out of memory */
void mesh_run_destroy(mesh_run *mr);
/* Takes --mesh and the settings options above; returns 1 if the argument was one. */
int mesh_run_option(mesh_run *mr, cli_parser *p);
/* When --mesh was given, wraps the hooks already set (a renderer's) so both run each frame. */
void mesh_run_hooks(mesh_run *mr, int quiet, run_hooks *hooks);

#endif
