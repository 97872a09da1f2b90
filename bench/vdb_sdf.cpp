/* OpenVDB's side of bench/sdf_compare.c (vdb_sdf.h). */
#include "vdb_sdf.h"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include <openvdb/openvdb.h>
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/MeshToVolume.h>
#include <tbb/global_control.h>

struct vdb_sdf {
    openvdb::FloatGrid::Ptr grid;
};

extern "C" vdb_sdf *vdb_sdf_bake(const float *vertices, int vertex_count, const int32_t *triangles,
                                 int triangle_count, const double origin[3], double cell,
                                 float ex_band, float in_band, int threads, double *seconds,
                                 char *err, size_t err_size) {
    try {
        openvdb::initialize();
        std::vector<openvdb::Vec3s> points(static_cast<size_t>(vertex_count));
        for (size_t i = 0; i < points.size(); ++i)
            points[i] = openvdb::Vec3s(vertices[3 * i], vertices[3 * i + 1], vertices[3 * i + 2]);
        std::vector<openvdb::Vec3I> tris(static_cast<size_t>(triangle_count));
        for (size_t t = 0; t < tris.size(); ++t)
            tris[t] = openvdb::Vec3I(static_cast<uint32_t>(triangles[3 * t]),
                                     static_cast<uint32_t>(triangles[3 * t + 1]),
                                     static_cast<uint32_t>(triangles[3 * t + 2]));
        const std::vector<openvdb::Vec4I> quads;
        /* index (i, j, k) is a voxel's centre: world origin + cell (i, j, k), pbf's nodes */
        openvdb::math::Transform::Ptr xform = openvdb::math::Transform::createLinearTransform(cell);
        xform->postTranslate(openvdb::Vec3d(origin[0], origin[1], origin[2]));
        std::unique_ptr<tbb::global_control> limit;
        if (threads > 0)
            limit = std::make_unique<tbb::global_control>(
                tbb::global_control::max_allowed_parallelism, static_cast<size_t>(threads));
        auto t0 = std::chrono::steady_clock::now();
        openvdb::FloatGrid::Ptr grid =
            openvdb::tools::meshToSignedDistanceField<openvdb::FloatGrid>(*xform, points, tris,
                                                                          quads, ex_band, in_band);
        *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return new vdb_sdf{grid};
    } catch (const std::exception &e) {
        std::snprintf(err, err_size, "OpenVDB: %s", e.what());
    } catch (...) {
        std::snprintf(err, err_size, "OpenVDB: unknown exception");
    }
    return nullptr;
}

extern "C" float vdb_sdf_sample(const vdb_sdf *s, const double x[3]) {
    openvdb::tools::GridSampler<openvdb::FloatGrid, openvdb::tools::BoxSampler> sampler(*s->grid);
    return sampler.wsSample(openvdb::Vec3d(x[0], x[1], x[2]));
}

extern "C" void vdb_sdf_free(vdb_sdf *s) { delete s; }

extern "C" const char *vdb_sdf_version(void) { return "OpenVDB " OPENVDB_LIBRARY_VERSION_STRING; }
