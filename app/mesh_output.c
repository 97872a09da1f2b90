/* Surface meshes from the pbf command (see mesh_output.h). */
#include "mesh_output.h"

#include <stdlib.h>
#include <string.h>

#include "pbf/export.h"

const char mesh_settings_help[] =
    "surface options (docs/surface.md):\n"
    "  --kernel NAME       anisotropic (Yu & Turk ellipsoids, default) or isotropic\n"
    "  --cell C            marching-cubes cell in particle radii (default 1; 0.5 is finer,\n"
    "                      about 8x slower)\n"
    "  --iso V             iso value of the field, 1 = fluid at rest (default 0.5)\n"
    "  --smooth N          Taubin smoothing steps of the mesh (default 2; 0: raw marching cubes)\n"
    "  --decimate F        keep about F of the triangles (0.05..1; edge collapses that keep\n"
    "                      the mesh closed; default 1: all)\n"
    "  --stretch K         largest axis ratio of the ellipsoids (default 4; 1: round)\n"
    "  --radius R          particle radius in m (default: the run's scene.json, else estimated)\n"
    "  --mesh-format LIST  ply, obj, vdb, vtu or several (ply,vdb); default ply: binary,\n"
    "                      with normals. vdb: an OpenVDB level set (grid 'surface', voxel =\n"
    "                      cell) for Houdini and Blender; `pbf run --mesh --format vtu` adds\n"
    "                      vtu for frames.pvd\n";

void mesh_settings_init(mesh_settings *s) {
    memset(s, 0, sizeof *s);
    s->def = pbf_default_surface_def();
    s->formats = MESH_PLY;
}

int mesh_settings_option(mesh_settings *s, cli_parser *p) {
    const char *v;
    double x;
    int n;
    if (cli_option(p, "--kernel", &v)) {
        if (strcmp(v, "anisotropic") == 0)
            s->def.kernel = PBF_SURFACE_ANISOTROPIC;
        else if (strcmp(v, "isotropic") == 0)
            s->def.kernel = PBF_SURFACE_ISOTROPIC;
        else
            cli_usage_error(p, "--kernel expects anisotropic or isotropic, got '%s'", v);
    } else if (cli_option(p, "--cell", &v)) {
        if (cli_parse_double(p, "--cell", v, 0.25, 4.0, &x)) s->def.cell_size = (float)x;
    } else if (cli_option(p, "--iso", &v)) {
        if (cli_parse_double(p, "--iso", v, 0.01, 0.99, &x)) s->def.iso = (float)x;
    } else if (cli_option(p, "--smooth", &v)) {
        if (cli_parse_int(p, "--smooth", v, 0, 100, &n)) s->def.smooth_iterations = n;
    } else if (cli_option(p, "--decimate", &v)) {
        if (cli_parse_double(p, "--decimate", v, 0.05, 1.0, &x)) s->def.decimate = (float)x;
    } else if (cli_option(p, "--stretch", &v)) {
        if (cli_parse_double(p, "--stretch", v, 1.0, 16.0, &x)) s->def.max_stretch = (float)x;
    } else if (cli_option(p, "--radius", &v)) {
        if (cli_parse_double(p, "--radius", v, 1e-6, 100.0, &x)) s->def.particle_radius = (float)x;
    } else if (cli_option(p, "--mesh-format", &v)) {
        unsigned bits = 0;
        const char *t = v;
        for (;;) {
            size_t len = strcspn(t, ",");
            if (len == 3 && strncmp(t, "ply", 3) == 0)
                bits |= MESH_PLY;
            else if (len == 3 && strncmp(t, "obj", 3) == 0)
                bits |= MESH_OBJ;
            else if (len == 3 && strncmp(t, "vdb", 3) == 0)
                bits |= MESH_VDB;
            else if (len == 3 && strncmp(t, "vtu", 3) == 0)
                bits |= MESH_VTU;
            else {
                cli_usage_error(p,
                                "--mesh-format: unknown format '%.*s' (expected ply, obj, vdb, "
                                "vtu or a list such as ply,vdb)",
                                (int)len, t);
                break;
            }
            if (t[len] == '\0') break;
            t += len + 1;
        }
        if (!p->failed) s->formats = bits;
    } else {
        return 0;
    }
    return 1;
}

static const char *format_extension(unsigned format) {
    return format == MESH_OBJ   ? "obj"
           : format == MESH_VDB ? "vdb"
           : format == MESH_VTU ? "vtu"
                                : "ply";
}

const char *mesh_frame_name(int frame, unsigned format, char *buf, size_t size) {
    snprintf(buf, size, "surface_%05d.%s", frame, format_extension(format));
    return buf;
}

const char *mesh_formats_text(unsigned formats, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned f = MESH_PLY; f <= MESH_LAST && n < size; f <<= 1)
        if (formats & f)
            n +=
                (size_t)snprintf(buf + n, size - n, "%s%s", n > 0 ? "/." : "", format_extension(f));
    return buf;
}

int mesh_settings_check(const mesh_settings *s, const char *option) {
    if ((s->formats & MESH_VDB) && !pbf_vdb_available())
        return cli_error("%s vdb: OpenVDB output is not built into this pbf (install "
                         "libopenvdb-dev and libboost-dev, and configure with -DPBF_VDB=ON)",
                         option);
    return 0;
}

int mesh_frame(const mesh_settings *s, const float *positions, int count, const char *dir,
               int frame, pbf_surface_stats *stats, int *triangles, double *files_ms, char *err,
               size_t err_size) {
    pbf_mesh mesh;
    *files_ms = 0.0;
    if (pbf_surface_reconstruct(&s->def, positions, count, &mesh, stats, err, err_size) != PBF_OK)
        return 1;
    *triangles = mesh.triangle_count;
    const double start = cli_now();
    int rc = 0;
    for (unsigned f = MESH_PLY; f <= MESH_LAST && rc == 0; f <<= 1) {
        if (!(s->formats & f)) continue;
        char name[64], path[4096];
        mesh_frame_name(frame, f, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        pbf_status st;
        if (f == MESH_VDB) /* the level set on the marching-cubes grid's spacing */
            st = pbf_mesh_write_vdb(&mesh, (double)s->def.cell_size * s->def.particle_radius,
                                    s->def.threads, path, err, err_size);
        else if (f == MESH_VTU)
            st = pbf_export_surface_write_vtu(&mesh, path, err, err_size);
        else
            st = pbf_mesh_write(&mesh, f == MESH_OBJ ? PBF_MESH_OBJ : PBF_MESH_PLY, path, err,
                                err_size);
        if (st != PBF_OK) rc = 1;
    }
    *files_ms = 1e3 * (cli_now() - start);
    pbf_mesh_free(&mesh);
    return rc;
}

/* ---- pbf run --mesh ------------------------------------------------------------------------ */

const char mesh_run_help[] =
    "meshing while simulating:\n"
    "  --mesh              also write surface_NNNNN.ply, the fluid's surface as a closed\n"
    "                      triangle mesh, for every frame (`pbf mesh DIR` does it afterwards);\n"
    "                      --mesh-format vdb writes OpenVDB level sets instead or as well\n";

struct mesh_run {
    int enabled, quiet;
    mesh_settings settings;
    const char *dir;
    pbf_particles particles; /* readback buffer */
    run_hooks inner; /* the hooks that were set before (a renderer's) */
    double ms; /* meshing time, summed */
    long long triangles;
    int frames;
};

mesh_run *mesh_run_create(void) {
    mesh_run *mr = calloc(1, sizeof *mr);
    if (mr != NULL) mesh_settings_init(&mr->settings);
    return mr;
}

void mesh_run_destroy(mesh_run *mr) {
    if (mr == NULL) return;
    pbf_particles_free(&mr->particles);
    free(mr);
}

int mesh_run_option(mesh_run *mr, cli_parser *p) {
    if (cli_flag(p, "--mesh", NULL)) {
        mr->enabled = 1;
        return 1;
    }
    return mesh_settings_option(&mr->settings, p);
}

static int mesh_on_start(const pbf_world *world, const pbf_scene *scene, void *user) {
    mesh_run *mr = user;
    mr->dir = scene->output_dir;
    if (mr->settings.def.particle_radius <= 0.0f)
        mr->settings.def.particle_radius = scene->world.particle_radius;
    mr->settings.def.threads = scene->world.threads;
    /* with vtu the surfaces are a part of frames.pvd too (app/series_output.h) */
    if (scene->formats & PBF_FORMAT_VTU) mr->settings.formats |= MESH_VTU;
    char err[PBF_ERROR_SIZE];
    if (pbf_surface_check_def(&mr->settings.def, err, sizeof err) != PBF_OK)
        return cli_error("--mesh: %s", err);
    if (mesh_settings_check(&mr->settings, "--mesh-format") != 0) return 1;
    return mr->inner.on_start ? mr->inner.on_start(world, scene, mr->inner.user) : 0;
}

/* particles: split over MPI ranks, the whole world's gathered to rank 0 (run.h); NULL: read
 * from the world */
static int mesh_on_frame(const pbf_world *world, const pbf_particles *particles, int frame,
                         void *user) {
    mesh_run *mr = user;
    char err[PBF_ERROR_SIZE];
    if (particles == NULL) {
        pbf_particles_free(&mr->particles);
        if (pbf_particles_from_world(world, &mr->particles, err, sizeof err) != PBF_OK)
            return cli_error("frame %d: --mesh: %s", frame, err);
    }
    const pbf_particles *p = particles != NULL ? particles : &mr->particles;
    pbf_surface_stats st;
    int triangles = 0;
    double files_ms = 0.0;
    if (mesh_frame(&mr->settings, p->positions, p->count, mr->dir, frame, &st, &triangles,
                   &files_ms, err, sizeof err) != 0)
        return cli_error("frame %d: --mesh: %s", frame, err);
    mr->ms += st.total_ms + files_ms;
    mr->triangles += triangles;
    ++mr->frames;
    return mr->inner.on_frame ? mr->inner.on_frame(world, particles, frame, mr->inner.user) : 0;
}

static void mesh_on_finish(const pbf_world *world, int frames_done, void *user) {
    mesh_run *mr = user;
    if (!mr->quiet && mr->frames > 0) {
        char ext[32];
        fprintf(stderr,
                "pbf run: %d surface mesh%s in %s (surface_NNNNN.%s), %.0f triangles and "
                "%.0f ms per frame\n",
                mr->frames, mr->frames == 1 ? "" : "es", mr->dir,
                mesh_formats_text(mr->settings.formats, ext, sizeof ext),
                (double)mr->triangles / mr->frames, mr->ms / mr->frames);
    }
    if (mr->inner.on_finish) mr->inner.on_finish(world, frames_done, mr->inner.user);
}

void mesh_run_hooks(mesh_run *mr, int quiet, run_hooks *hooks) {
    if (!mr->enabled) return;
    mr->quiet = quiet;
    mr->inner = *hooks;
    hooks->on_start = mesh_on_start;
    hooks->on_frame = mesh_on_frame;
    hooks->on_finish = mesh_on_finish;
    hooks->user = mr;
}
