// Reading one float grid of a .vdb file back (pbf__vdb_read_grid, src/surface/vdb.h): its class,
// transform, active voxels and values at given points, for the tests and checks of the files
// pbf_mesh_write_vdb writes. The second of the two C++ files behind vdb.h; no exception leaves it.
#include "vdb.h"

#include <openvdb/openvdb.h>
#include <openvdb/tools/Interpolation.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
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

} // namespace

extern "C" pbf_status pbf__vdb_read_grid(const char *path, const char *grid_name,
                                         pbf_vdb_grid_info *info, const double *points, int count,
                                         float *values, char *err, size_t err_size) {
    if (path == nullptr || grid_name == nullptr || info == nullptr || count < 0 ||
        (count > 0 && (points == nullptr || values == nullptr))) {
        set_error(err, err_size, "OpenVDB read: path, grid name and info must be given");
        return PBF_ERR_INVALID_ARG;
    }
    std::memset(info, 0, sizeof *info);
    struct stat st;
    if (stat(path, &st) != 0) { // OpenVDB's own message would not say why
        set_error(err, err_size, "cannot read '%s': %s", path, std::strerror(errno));
        return PBF_ERR_IO;
    }
    try {
        openvdb::initialize();
        openvdb::io::File file(path);
        file.open(/*delayLoad=*/false);
        openvdb::GridPtrVecPtr all = file.readAllGridMetadata();
        info->grid_count = all ? (int)all->size() : 0;
        if (!file.hasGrid(grid_name)) {
            file.close();
            set_error(err, err_size, "%s: no grid named '%s' (the file has %d grid%s)", path,
                      grid_name, info->grid_count, info->grid_count == 1 ? "" : "s");
            return PBF_ERR_PARSE;
        }
        openvdb::GridBase::Ptr base = file.readGrid(grid_name);
        file.close();
        openvdb::FloatGrid::Ptr grid = openvdb::gridPtrCast<openvdb::FloatGrid>(base);
        if (!grid) {
            set_error(err, err_size, "%s: grid '%s' holds %s values; expected float", path,
                      grid_name, base->valueType().c_str());
            return PBF_ERR_PARSE;
        }
        info->level_set = grid->getGridClass() == openvdb::GRID_LEVEL_SET;
        const openvdb::Vec3d voxel = grid->voxelSize();
        for (int d = 0; d < 3; ++d) info->voxel_size[d] = voxel[d];
        info->background = grid->background();
        info->active_voxels = (long long)grid->activeVoxelCount();
        if (info->active_voxels > 0) {
            const openvdb::CoordBBox box = grid->evalActiveVoxelBoundingBox();
            const openvdb::Vec3d lo = grid->indexToWorld(box.min());
            const openvdb::Vec3d hi = grid->indexToWorld(box.max());
            for (int d = 0; d < 3; ++d) info->active_min[d] = lo[d], info->active_max[d] = hi[d];
        }
        openvdb::tools::GridSampler<openvdb::FloatGrid, openvdb::tools::BoxSampler> sampler(*grid);
        for (int i = 0; i < count; ++i)
            values[i] = sampler.wsSample(
                openvdb::Vec3d(points[3 * i], points[3 * i + 1], points[3 * i + 2]));
    } catch (const std::bad_alloc &) {
        set_error(err, err_size, "%s: out of memory reading grid '%s'", path, grid_name);
        return PBF_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_error(err, err_size, "%s: not a readable OpenVDB file: %s", path, e.what());
        return PBF_ERR_PARSE;
    }
    return PBF_OK;
}
