// Triangle meshes from OBJ, STL and PLY files through Assimp (mesh_import.h). The only C++ file
// of the library: everything it hands back is plain C arrays, and no exception leaves it. It runs
// in a child process (mesh_import_guard.c), so that an abort or a crash inside Assimp on a
// malformed file becomes an error message, not the end of the caller.
#include "mesh_import.h"

#include <assimp/Importer.hpp>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == nullptr || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

// The extension of path in lower case ("obj"), or "" when it has none.
void extension_of(const char *path, char *out, size_t size) {
    out[0] = '\0';
    const char *slash = std::strrchr(path, '/');
    const char *dot = std::strrchr(path, '.');
    if (dot == nullptr || (slash != nullptr && dot < slash) || dot[1] == '\0') return;
    size_t n = 0;
    for (const char *c = dot + 1; *c != '\0' && n + 1 < size; ++c) {
        char ch = *c;
        out[n++] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
    }
    out[n] = '\0';
}

bool supported(const char *ext) {
    return std::strcmp(ext, "obj") == 0 || std::strcmp(ext, "stl") == 0 ||
           std::strcmp(ext, "ply") == 0;
}

// Triangulated, node transforms baked into the vertices, points and lines sorted out; no
// welding (trimesh.c welds by position: STL files repeat every vertex with its face normal,
// which Assimp's JoinIdenticalVertices would keep apart).
const unsigned int kFlags = aiProcess_Triangulate | aiProcess_PreTransformVertices |
                            aiProcess_SortByPType | aiProcess_ValidateDataStructure;

pbf_status copy_scene(const aiScene *scene, const char *name, pbf_trimesh *out, char *err,
                      size_t err_size) {
    long long vertices = 0, triangles = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
        const aiMesh *mesh = scene->mMeshes[m];
        if (!(mesh->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
        vertices += mesh->mNumVertices;
        for (unsigned f = 0; f < mesh->mNumFaces; ++f)
            triangles += mesh->mFaces[f].mNumIndices == 3;
    }
    if (triangles == 0) {
        set_error(err, err_size, "mesh '%s': the file holds no triangles (an empty mesh)", name);
        return PBF_ERR_PARSE;
    }
    if (vertices > INT_MAX / 3 || triangles > INT_MAX / 3) {
        set_error(err, err_size, "mesh '%s': %lld vertices and %lld triangles, too many", name,
                  vertices, triangles);
        return PBF_ERR_INVALID_ARG;
    }
    out->vertices = static_cast<float *>(std::malloc(3 * (size_t)vertices * sizeof(float)));
    out->triangles = static_cast<int32_t *>(std::malloc(3 * (size_t)triangles * sizeof(int32_t)));
    if (out->vertices == nullptr || out->triangles == nullptr) {
        std::free(out->vertices);
        std::free(out->triangles);
        out->vertices = nullptr;
        out->triangles = nullptr;
        set_error(err, err_size, "mesh '%s': out of memory for %lld triangles", name, triangles);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    int v = 0, t = 0;
    for (unsigned m = 0; m < scene->mNumMeshes; ++m) {
        const aiMesh *mesh = scene->mMeshes[m];
        if (!(mesh->mPrimitiveTypes & aiPrimitiveType_TRIANGLE)) continue;
        const int base = v;
        for (unsigned i = 0; i < mesh->mNumVertices; ++i, ++v) {
            out->vertices[3 * v] = mesh->mVertices[i].x;
            out->vertices[3 * v + 1] = mesh->mVertices[i].y;
            out->vertices[3 * v + 2] = mesh->mVertices[i].z;
        }
        for (unsigned f = 0; f < mesh->mNumFaces; ++f) {
            const aiFace &face = mesh->mFaces[f];
            if (face.mNumIndices != 3) continue;
            for (int k = 0; k < 3; ++k) {
                if (face.mIndices[k] >= mesh->mNumVertices) {
                    set_error(err, err_size, "mesh '%s': triangle %d refers to vertex %u of %u",
                              name, t, face.mIndices[k], mesh->mNumVertices);
                    return PBF_ERR_PARSE;
                }
                out->triangles[3 * t + k] = base + (int32_t)face.mIndices[k];
            }
            ++t;
        }
    }
    out->vertex_count = v;
    out->triangle_count = t;
    return PBF_OK;
}

// Assimp's message without its trailing newline.
void assimp_error(char *err, size_t size, const char *name, const char *ext,
                  const Assimp::Importer &importer) {
    char why[256];
    std::snprintf(why, sizeof why, "%s", importer.GetErrorString());
    size_t n = std::strlen(why);
    while (n > 0 && (why[n - 1] == '\n' || why[n - 1] == '\r')) why[--n] = '\0';
    set_error(err, size, "mesh '%s': not a readable %s file (%s)", name, ext,
              n > 0 ? why : "the importer gave no reason");
}

pbf_status import(const char *path, pbf_trimesh *out, char *err, size_t err_size) {
    const char *name = path;
    std::memset(out, 0, sizeof *out);
    char ext[16];
    extension_of(path, ext, sizeof ext);
    if (!supported(ext)) {
        set_error(err, err_size,
                  "mesh '%s': unsupported format '%s%s' (supported: .obj, .stl and .ply)", name,
                  ext[0] != '\0' ? "." : "", ext[0] != '\0' ? ext : "no extension");
        return PBF_ERR_UNSUPPORTED;
    }
    char upper[16];
    for (size_t i = 0; i < sizeof upper; ++i)
        upper[i] = (ext[i] >= 'a' && ext[i] <= 'z') ? (char)(ext[i] - 'a' + 'A') : ext[i];
    try {
        Assimp::Importer importer;
        std::FILE *f = std::fopen(path, "rb");
        if (f == nullptr) {
            set_error(err, err_size, "mesh '%s': cannot open: %s", name, std::strerror(errno));
            return PBF_ERR_IO;
        }
        int c = std::fgetc(f);
        std::fclose(f);
        if (c == EOF) {
            set_error(err, err_size, "mesh '%s': the file is empty (an empty mesh)", name);
            return PBF_ERR_PARSE;
        }
        const aiScene *scene = importer.ReadFile(path, kFlags);
        if (scene == nullptr) {
            assimp_error(err, err_size, name, upper, importer);
            return PBF_ERR_PARSE;
        }
        return copy_scene(scene, name, out, err, err_size);
    } catch (const std::bad_alloc &) {
        std::free(out->vertices);
        std::free(out->triangles);
        std::memset(out, 0, sizeof *out);
        set_error(err, err_size, "mesh '%s': out of memory reading the file", name);
        return PBF_ERR_OUT_OF_MEMORY;
    } catch (...) {
        std::free(out->vertices);
        std::free(out->triangles);
        std::memset(out, 0, sizeof *out);
        set_error(err, err_size, "mesh '%s': the importer failed on this file", name);
        return PBF_ERR_PARSE;
    }
}

} // namespace

extern "C" int pbf__mesh_import_available(void) { return 1; }

extern "C" pbf_status pbf__mesh_read(const char *path, pbf_trimesh *out, char *err,
                                     size_t err_size) {
    if (path == nullptr || out == nullptr) {
        set_error(err, err_size, "mesh import: path and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    return import(path, out, err, err_size);
}
