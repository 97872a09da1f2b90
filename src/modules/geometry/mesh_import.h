/* Triangle meshes from files (OBJ, STL ASCII and binary, PLY), read through Assimp in one C++
 * file (mesh_import.cpp) behind this C header, run in a child process by mesh_import_guard.c;
 * without Assimp (PBF_MESH=OFF) a stub returns PBF_ERR_UNSUPPORTED (mesh_import_none.c). Only
 * the reading is here: welding, checks and transforms are in trimesh.c, which is plain C. */
#ifndef PBF_GEOMETRY_MESH_IMPORT_H
#define PBF_GEOMETRY_MESH_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pbf/pbf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Vertices and triangles as read, before welding: every mesh of the file, node transforms
 * applied. Free with pbf__trimesh_free (trimesh.h). */
typedef struct pbf_trimesh {
    int vertex_count;
    int triangle_count;
    float *vertices; /* 3 * vertex_count, xyz */
    int32_t *triangles; /* 3 * triangle_count vertex indices */
} pbf_trimesh;

/* Whether mesh import is built in (Assimp found at configure time). */
int pbf__mesh_import_available(void);

/* Reads path. The format is taken from the extension (.obj, .stl, .ply, any case); another
 * extension is PBF_ERR_UNSUPPORTED. Errors name the file: missing or unreadable (PBF_ERR_IO),
 * not parseable as that format (PBF_ERR_PARSE), no triangles (PBF_ERR_PARSE), and the reader
 * aborting or crashing on it (PBF_ERR_PARSE: Assimp asserts on some malformed files, and the
 * read runs in a child process so that this cannot take the caller down). */
pbf_status pbf__mesh_import(const char *path, pbf_trimesh *out, char *err, size_t err_size);

/* The same read in this process, unguarded (mesh_import.cpp): for mesh_import_guard.c only. */
pbf_status pbf__mesh_read(const char *path, pbf_trimesh *out, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
