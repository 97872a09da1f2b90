// The fluid's surface as an OpenVDB level set (pbf_mesh_write_vdb, include/pbf/surface.h;
// docs/surface.md). One of the two C++ files behind src/surface/vdb.h; no exception leaves it.
//
// Why from the mesh: the surface field of src/surface/ (a sum of anisotropic kernels, 1 in the
// bulk and 0 outside) is not a distance, and turning φ − iso into one needs a redistancing pass
// that is only as good as the field's gradient. The marching-cubes mesh is closed and manifold by
// construction, so OpenVDB's meshToLevelSet gives exact distances to it near the surface and a
// sure sign everywhere: the level set's zero crossing is the mesh, the surface a renderer gets
// from the .ply, and Houdini or Blender meshing the .vdb again find the same shape.
#include "vdb.h"

#include <openvdb/openvdb.h>
#include <openvdb/io/Archive.h>
#include <openvdb/tools/MeshToVolume.h>
#include <tbb/global_control.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

void set_error(char *err, size_t size, const char *fmt, ...) {
    if (err == nullptr || size == 0) return;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

// OpenVDB's writer onto a stream of ours. io::File::write opens its own std::ofstream and does
// not look at it afterwards, so a full disk would leave a short file that we then rename into
// place. Archive's seekable stream write is what io::File uses (offsets of each grid patched in,
// so readers can seek to a grid); it is protected, hence this subclass, which only exposes it.
class StreamWriter : public openvdb::io::Archive {
  public:
    void write_to(std::ostream &os, const openvdb::GridPtrVec &grids) const {
        Archive::write(os, grids, /*seekable=*/true);
    }
};

// The level set of the mesh; throws on OpenVDB's errors and std::bad_alloc.
openvdb::FloatGrid::Ptr level_set(const pbf_mesh *mesh, double voxel_size) {
    auto xform = openvdb::math::Transform::createLinearTransform(voxel_size);
    std::vector<openvdb::Vec3s> points((size_t)mesh->vertex_count);
    std::vector<openvdb::Vec3I> triangles((size_t)mesh->triangle_count);
    for (size_t v = 0; v < points.size(); ++v)
        points[v] = openvdb::Vec3s(mesh->positions[3 * v], mesh->positions[3 * v + 1],
                                   mesh->positions[3 * v + 2]);
    for (size_t t = 0; t < triangles.size(); ++t)
        triangles[t] = openvdb::Vec3I((openvdb::Index32)mesh->triangles[3 * t],
                                      (openvdb::Index32)mesh->triangles[3 * t + 1],
                                      (openvdb::Index32)mesh->triangles[3 * t + 2]);
    openvdb::FloatGrid::Ptr grid;
    if (triangles.empty()) { // meshToLevelSet wants triangles; the empty level set by hand
        const float background = (float)(openvdb::LEVEL_SET_HALF_WIDTH * voxel_size);
        grid = openvdb::FloatGrid::create(background);
        grid->setTransform(xform);
    } else {
        grid = openvdb::tools::meshToLevelSet<openvdb::FloatGrid>(*xform, points, triangles);
    }
    grid->setGridClass(openvdb::GRID_LEVEL_SET);
    grid->setName("surface");
    grid->setCreator("pbf " PBF_VERSION_STRING);
    return grid;
}

// Checks what OpenVDB would take badly: indices out of range, non-finite or far-flung vertices.
pbf_status check_mesh(const pbf_mesh *mesh, double voxel_size, const char *path, char *err,
                      size_t err_size) {
    if (!(voxel_size > 0.0) || !std::isfinite(voxel_size)) {
        set_error(err, err_size, "%s: voxel size %g; expected a finite size > 0 in m", path,
                  voxel_size);
        return PBF_ERR_INVALID_ARG;
    }
    if (mesh->vertex_count < 0 || mesh->triangle_count < 0 ||
        (mesh->vertex_count > 0 && mesh->positions == nullptr) ||
        (mesh->triangle_count > 0 && mesh->triangles == nullptr)) {
        set_error(err, err_size, "%s: a mesh of %d vertices and %d triangles without its arrays",
                  path, mesh->vertex_count, mesh->triangle_count);
        return PBF_ERR_INVALID_ARG;
    }
    for (long long i = 0; i < 3LL * mesh->triangle_count; ++i)
        if (mesh->triangles[i] < 0 || mesh->triangles[i] >= mesh->vertex_count) {
            set_error(err, err_size, "%s: triangle %lld names vertex %d of %d", path, i / 3,
                      (int)mesh->triangles[i], mesh->vertex_count);
            return PBF_ERR_INVALID_ARG;
        }
    const double limit = 1073741824.0 * voxel_size; // 2^30 voxels: OpenVDB's int coordinates
    for (long long i = 0; i < 3LL * mesh->vertex_count; ++i) {
        const double x = mesh->positions[i];
        if (!std::isfinite(x) || std::fabs(x) >= limit) {
            set_error(err, err_size,
                      "%s: vertex %lld at coordinate %g is not finite or lies beyond 2^30 voxels "
                      "of %g m",
                      path, i / 3, x, voxel_size);
            return PBF_ERR_INVALID_ARG;
        }
    }
    return PBF_OK;
}

// Writes the grid to tmp, checked at every step, and syncs it. Throws on OpenVDB's errors; a
// failure of the system comes back as what failed ("create", "write", "sync"), with errno in
// *error; nullptr when all went well.
const char *write_file(const openvdb::GridPtrVec &grids, const std::string &tmp, int *error) {
    errno = 0;
    std::ofstream os(tmp, std::ios_base::out | std::ios_base::binary | std::ios_base::trunc);
    if (!os) {
        *error = errno != 0 ? errno : EIO;
        return "create";
    }
    os.exceptions(std::ios_base::badbit | std::ios_base::failbit);
    try {
        StreamWriter().write_to(os, grids);
        os.flush();
        os.close();
    } catch (const std::ios_base::failure &) {
        *error = errno != 0 ? errno : EIO;
        return "write";
    }
    const int fd = open(tmp.c_str(), O_WRONLY);
    if (fd < 0) {
        *error = errno;
        return "sync";
    }
    int failed = fsync(fd) != 0;
    *error = errno;
    if (close(fd) != 0 && !failed) failed = 1, *error = errno;
    return failed ? "sync" : nullptr;
}

} // namespace

extern "C" int pbf_vdb_available(void) { return 1; }

extern "C" pbf_status pbf_mesh_write_vdb(const pbf_mesh *mesh, double voxel_size, int threads,
                                         const char *path, char *err, size_t err_size) {
    if (mesh == nullptr || path == nullptr || path[0] == '\0') {
        set_error(err, err_size, "OpenVDB output: mesh and path must be given");
        return PBF_ERR_INVALID_ARG;
    }
    pbf_status st = check_mesh(mesh, voxel_size, path, err, err_size);
    if (st != PBF_OK) return st;
    const std::string tmp = std::string(path) + ".tmp." + std::to_string((long)getpid());
    try {
        openvdb::initialize(); // registers the grid types; cheap after the first call
        std::unique_ptr<tbb::global_control> limit;
        if (threads > 0)
            limit.reset(new tbb::global_control(tbb::global_control::max_allowed_parallelism,
                                                (size_t)threads));
        openvdb::GridPtrVec grids{level_set(mesh, voxel_size)};
        int error = 0;
        const char *failed = write_file(grids, tmp, &error);
        if (failed == nullptr && std::rename(tmp.c_str(), path) != 0) {
            error = errno;
            failed = "rename";
        }
        if (failed != nullptr) {
            std::remove(tmp.c_str());
            set_error(err, err_size, "cannot write '%s': %s failed: %s", path, failed,
                      std::strerror(error));
            return PBF_ERR_IO;
        }
    } catch (const std::bad_alloc &) {
        std::remove(tmp.c_str());
        set_error(err, err_size, "%s: out of memory for the level set of %d triangles", path,
                  mesh->triangle_count);
        return PBF_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        std::remove(tmp.c_str());
        set_error(err, err_size, "cannot write '%s': OpenVDB: %s", path, e.what());
        return PBF_ERR_IO;
    }
    return PBF_OK;
}
