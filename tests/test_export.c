/* Exporters: PLY and VTK round trips are bit-exact against the world's readback; truncated and
 * foreign files are errors, not crashes; failed writes leave neither a partial file nor a
 * temporary one, and never clobber the previous file. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pbf/export.h"
#include "test.h"
#include "tmp_dir.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int bits_equal(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* A small moving, jittered block after a few steps: positions off the lattice, non-zero
 * velocities and densities, and a slot order that differs from the id order. */
static pbf_world *make_world(void) {
    pbf_world_def def = pbf_default_world_def();
    def.particle_radius = 0.02f;
    def.domain_max = (pbf_vec3){0.5f, 0.5f, 0.5f};
    def.threads = 1;
    pbf_world *world = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &world, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "pbf_world_create: %s\n", err);
        return NULL;
    }
    pbf_block_def block = pbf_default_block_def();
    block.min = (pbf_vec3){0.05f, 0.05f, 0.05f};
    block.max = (pbf_vec3){0.29f, 0.29f, 0.29f};
    block.velocity = (pbf_vec3){0.5f, 0.0f, -0.25f};
    block.jitter = 0.2f;
    if (pbf_world_add_block(world, &block) != PBF_OK) {
        fprintf(stderr, "pbf_world_add_block: %s\n", pbf_world_error(world));
        pbf_world_destroy(world);
        return NULL;
    }
    for (int i = 0; i < 3; ++i) pbf_world_step(world, 1.0f / 60.0f);
    return world;
}

/* The particles read from a file equal the world exactly: through the id-ordered readback and
 * through the cell-ordered view (slot i holds id view.ids[i]). */
static int check_equals_world(const pbf_particles *p, const pbf_world *world) {
    int n = pbf_world_particle_count(world);
    ENSURE(n > 0);
    ENSURE(p->count == n);
    pbf_particles ref;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_particles_from_world(world, &ref, err, sizeof err) == PBF_OK);
    int same = bits_equal(p->positions, ref.positions, 3 * (size_t)n) &&
               bits_equal(p->velocities, ref.velocities, 3 * (size_t)n) &&
               bits_equal(p->densities, ref.densities, (size_t)n) &&
               memcmp(p->ids, ref.ids, (size_t)n * sizeof(int32_t)) == 0;
    pbf_particles_free(&ref);
    ENSURE(same);

    pbf_particle_view view = pbf_world_view(world);
    ENSURE(view.count == n);
    for (int slot = 0; slot < n; ++slot) {
        int id = view.ids[slot];
        ENSURE(id >= 0 && id < n);
        ENSURE(p->ids[id] == id);
        ENSURE(bits_equal(p->positions + 3 * id, view.positions + 3 * slot, 3));
        ENSURE(bits_equal(p->velocities + 3 * id, view.velocities + 3 * slot, 3));
        ENSURE(bits_equal(p->densities + id, view.densities + slot, 1));
    }
    return 0;
}

/* Every array of pbf_particle_array_at reads back by name as the cell-ordered view holds it,
 * row k for id k; with two fluids the densities are the view's (m_ref Σ W) times the particle's
 * fluid's density over the reference's. An unknown name is refused with a message naming it and
 * the arrays. */
static int test_arrays_by_name(void) {
    pbf_world_def def = pbf_default_world_def();
    def.particle_radius = 0.02f;
    def.domain_max = (pbf_vec3){0.5f, 0.5f, 0.5f};
    def.threads = 1;
    def.phase_count = 2;
    def.phases[0] = pbf_default_phase_def();
    def.phases[1] = pbf_default_phase_def();
    def.phases[1].density = 800.0f;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&def, &w, err, sizeof err) == PBF_OK);
    pbf_block_def block = pbf_default_block_def();
    block.min = (pbf_vec3){0.05f, 0.05f, 0.05f};
    block.max = (pbf_vec3){0.29f, 0.17f, 0.29f};
    block.jitter = 0.2f;
    ENSURE(pbf_world_add_block(w, &block) == PBF_OK);
    block.min.y = 0.19f, block.max.y = 0.31f, block.phase = 1;
    ENSURE(pbf_world_add_block(w, &block) == PBF_OK);
    for (int i = 0; i < 2; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);

    const int n = pbf_world_particle_count(w);
    ENSURE(pbf_particle_array_count() == 5);
    ENSURE(pbf_particle_array_at(-1) == NULL);
    ENSURE(pbf_particle_array_at(pbf_particle_array_count()) == NULL);
    const char *expected[] = {"positions", "velocities", "densities", "ids", "phases"};
    const int components[] = {3, 3, 1, 1, 1};
    const pbf_value_type types[] = {PBF_VALUE_FLOAT32, PBF_VALUE_FLOAT32, PBF_VALUE_FLOAT32,
                                    PBF_VALUE_INT32, PBF_VALUE_UINT8};
    float *buf = malloc(3 * (size_t)n * sizeof(float));
    ENSURE(buf != NULL);
    pbf_particle_view view = pbf_world_view(w);
    ENSURE(view.count == n);
    int ones = 0;
    for (int a = 0; a < 5; ++a) {
        const pbf_particle_array_info *info = pbf_particle_array_at(a);
        ENSURE(strcmp(info->name, expected[a]) == 0);
        ENSURE(info->components == components[a] && info->type == types[a]);
        ENSURE(pbf_world_get_array(w, info->name, buf, err, sizeof err) == PBF_OK);
        for (int slot = 0; slot < n; ++slot) {
            const int id = view.ids[slot]; /* no particle removed: row = id */
            const float *f = buf;
            switch (a) {
            case 0: ENSURE(bits_equal(f + 3 * id, view.positions + 3 * slot, 3)); break;
            case 1: ENSURE(bits_equal(f + 3 * id, view.velocities + 3 * slot, 3)); break;
            case 2: {
                float ratio = view.phases[slot] ? 800.0f / def.rest_density : 1.0f;
                float rho = view.densities[slot] * ratio;
                ENSURE(rho > 0.0f && bits_equal(f + id, &rho, 1));
                break;
            }
            case 3: ENSURE(((const int32_t *)buf)[id] == id); break;
            default:
                ENSURE(((const uint8_t *)buf)[id] == view.phases[slot]);
                ones += view.phases[slot];
            }
        }
    }
    ENSURE(ones > 0 && ones < n); /* both fluids were read */
    ENSURE(pbf_world_get_array(w, "pressures", buf, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "'pressures'") != NULL && strstr(err, "positions, velocities") != NULL);
    free(buf);
    pbf_world_destroy(w);
    return 0;
}

static int roundtrip(pbf_format format, const char *name) {
    pbf_world *world = make_world();
    ENSURE(world != NULL);
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, name);
    pbf_particles p;
    ENSURE(pbf_particles_from_world(world, &p, err, sizeof err) == PBF_OK);
    pbf_status s = pbf_export_write(&p, format, path, err, sizeof err);
    pbf_particles_free(&p);
    if (s != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(s == PBF_OK);
    ENSURE(count_temp_files(tmp_dir) == 0);

    pbf_particles back;
    s = pbf_export_read(path, &back, err, sizeof err);
    if (s != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(s == PBF_OK);
    int rc = check_equals_world(&back, world);
    pbf_particles_free(&back);
    pbf_world_destroy(world);
    return rc;
}

static int test_ply_roundtrip(void) { return roundtrip(PBF_FORMAT_PLY, "frame.ply"); }
static int test_vtk_roundtrip(void) { return roundtrip(PBF_FORMAT_VTK, "frame.vtk"); }

/* The PLY layout is exactly what Blender, Houdini and splashsurf expect. */
static int test_ply_header(void) {
    char path[1200];
    path_in_tmp(path, sizeof path, "frame.ply");
    FILE *fp = fopen(path, "rb");
    ENSURE(fp != NULL);
    char head[512] = {0};
    size_t got = fread(head, 1, sizeof head - 1, fp);
    fclose(fp);
    ENSURE(got > 0);
    ENSURE(strncmp(head, "ply\nformat binary_little_endian 1.0\n", 36) == 0);
    ENSURE(strstr(head, "property float x\nproperty float y\nproperty float z\n"
                        "property float vx\nproperty float vy\nproperty float vz\n"
                        "property float density\nproperty int id\nend_header\n") != NULL);
    char *end = strstr(head, "end_header\n");
    long data = (long)(end - head) + 11;
    long n = strtol(strstr(head, "element vertex ") + 15, NULL, 10);
    ENSURE(file_size(path) == data + 32 * n);
    return 0;
}

/* Cutting a file anywhere is an error (never a crash, never a silently shorter file). */
static int truncations(const char *name, long keep_tail) {
    char path[1200], cut[1300], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, name);
    snprintf(cut, sizeof cut, "%s/cut_%s", tmp_dir, name);
    FILE *fp = fopen(path, "rb");
    ENSURE(fp != NULL);
    long size = file_size(path);
    ENSURE(size > 0);
    unsigned char *bytes = malloc((size_t)size);
    ENSURE(bytes != NULL);
    ENSURE(fread(bytes, 1, (size_t)size, fp) == (size_t)size);
    fclose(fp);
    /* Every length up to the header end, then a stride through the data and its last bytes. */
    for (long len = 0; len < size - keep_tail; len += (len < 600 || len > size - 40) ? 1 : 7) {
        /* A new file each time: truncating one that has data makes ext4 flush it on close
         * (auto_da_alloc), which turns this loop into seconds of disk waits. */
        remove(cut);
        FILE *out = fopen(cut, "wb");
        ENSURE(out != NULL);
        ENSURE(fwrite(bytes, 1, (size_t)len, out) == (size_t)len);
        ENSURE(fclose(out) == 0);
        pbf_particles p;
        pbf_status s = pbf_export_read(cut, &p, err, sizeof err);
        if (s == PBF_OK)
            fprintf(stderr, "%s cut at %ld of %ld bytes was read as valid\n", name, len, size);
        ENSURE(s != PBF_OK);
        ENSURE(p.count == 0 && p.positions == NULL);
        ENSURE(strstr(err, cut) != NULL);
    }
    free(bytes);
    remove(cut);
    return 0;
}

/* A VTK file may lose its final newline and stay complete; a PLY file may lose nothing. */
static int test_truncated_ply(void) { return truncations("frame.ply", 0); }
static int test_truncated_vtk(void) { return truncations("frame.vtk", 1); }

static int write_text(const char *path, const char *text, size_t len) {
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) return 1;
    size_t put = fwrite(text, 1, len, fp);
    return (fclose(fp) != 0 || put != len) ? 1 : 0;
}

static int test_foreign_files(void) {
    static const struct {
        const char *name;
        const char *text;
    } cases[] = {
        {"empty.ply", ""},
        {"empty.vtk", ""},
        {"garbage.ply", "\x7f"
                        "ELF\x02\x01\x01"},
        {"garbage.vtk", "\x89PNG\r\n\x1a\nIHDR"},
        {"ascii.ply",
         "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
         "property float z\nend_header\n0 0 0\n"},
        {"noxyz.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float q\n"
                      "end_header\nabcd"},
        {"huge.ply", "ply\nformat binary_little_endian 1.0\nelement vertex 2147483647\n"
                     "property float x\nproperty float y\nproperty float z\nend_header\n"},
        {"ascii.vtk",
         "# vtk DataFile Version 3.0\nx\nASCII\nDATASET POLYDATA\nPOINTS 1 float\n0 0 0\n"},
        {"grid.vtk", "# vtk DataFile Version 3.0\nx\nBINARY\nDATASET STRUCTURED_POINTS\n"},
        {"huge.vtk",
         "# vtk DataFile Version 3.0\nx\nBINARY\nDATASET POLYDATA\nPOINTS 2000000000 float\n"},
        {"v5.vtk", "# vtk DataFile Version 5.1\nx\nBINARY\nDATASET POLYDATA\n"},
        {"vtk.ply", "# vtk DataFile Version 3.0\nx\nBINARY\nDATASET POLYDATA\n"},
    };
    char path[1200], err[PBF_ERROR_SIZE];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        path_in_tmp(path, sizeof path, cases[i].name);
        ENSURE(write_text(path, cases[i].text, strlen(cases[i].text)) == 0);
        pbf_particles p;
        err[0] = '\0';
        pbf_status s = pbf_export_read(path, &p, err, sizeof err);
        if (s == PBF_OK) fprintf(stderr, "%s was read as valid\n", cases[i].name);
        ENSURE(s != PBF_OK);
        ENSURE(strstr(err, path) != NULL);
        ENSURE(p.count == 0 && p.positions == NULL);
        remove(path);
    }
    pbf_particles p;
    ENSURE(pbf_export_read("/nonexistent/frame.ply", &p, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, "/nonexistent/frame.ply") != NULL);
    path_in_tmp(path, sizeof path, "frame.txt");
    ENSURE(pbf_export_read(path, &p, err, sizeof err) != PBF_OK);
    return 0;
}

/* A foreign but valid little-endian PLY: double coordinates, an extra property, no id, and a
 * face element after the vertices. */
static int test_foreign_valid_ply(void) {
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "foreign.ply");
    const char *head = "ply\nformat binary_little_endian 1.0\ncomment other tool\n"
                       "element vertex 2\nproperty double x\nproperty double y\n"
                       "property double z\nproperty uchar red\nelement face 0\n"
                       "property list uchar int vertex_indices\nend_header\n";
    FILE *fp = fopen(path, "wb");
    ENSURE(fp != NULL);
    fputs(head, fp);
    for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 3; ++k) {
            double v = i * 10 + k + 0.5;
            unsigned char b[8];
            uint64_t u;
            memcpy(&u, &v, 8);
            for (int j = 0; j < 8; ++j) b[j] = (unsigned char)(u >> (8 * j));
            fwrite(b, 1, 8, fp);
        }
        fputc(200, fp);
    }
    ENSURE(fclose(fp) == 0);
    pbf_particles p;
    pbf_status s = pbf_export_read(path, &p, err, sizeof err);
    if (s != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(s == PBF_OK);
    ENSURE(p.count == 2);
    ENSURE(p.positions[0] == 0.5f && p.positions[5] == 12.5f);
    ENSURE(p.ids[0] == 0 && p.ids[1] == 1 && p.velocities[4] == 0.0f && p.densities[1] == 0.0f);
    pbf_particles_free(&p);
    remove(path);
    return 0;
}

static int make_particles(pbf_particles *p, int n) {
    memset(p, 0, sizeof *p);
    p->count = n;
    p->positions = calloc(3 * (size_t)n, sizeof(float));
    p->velocities = calloc(3 * (size_t)n, sizeof(float));
    p->densities = calloc((size_t)n, sizeof(float));
    p->ids = calloc((size_t)n, sizeof(int32_t));
    if (!p->positions || !p->velocities || !p->densities || !p->ids) return 1;
    for (int i = 0; i < n; ++i) {
        p->positions[3 * i] = (float)i;
        p->ids[i] = i;
    }
    return 0;
}

static int test_unwritable_folder(void) {
    pbf_particles p;
    ENSURE(make_particles(&p, 10) == 0);
    char err[PBF_ERROR_SIZE], path[2048], blocker[1200];
    /* A folder that does not exist. */
    snprintf(path, sizeof path, "%s/no/such/folder/frame.ply", tmp_dir);
    ENSURE(pbf_export_write(&p, PBF_FORMAT_PLY, path, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL);
    ENSURE(strstr(err, strerror(ENOENT)) != NULL);
    /* A "folder" that is a file (works as root too, unlike chmod). */
    path_in_tmp(blocker, sizeof blocker, "blocker");
    ENSURE(write_text(blocker, "x", 1) == 0);
    snprintf(path, sizeof path, "%s/frame.vtk", blocker);
    ENSURE(pbf_export_write(&p, PBF_FORMAT_VTK, path, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL);
    ENSURE(count_temp_files(tmp_dir) == 0);
    remove(blocker);
    /* Read-only folder: only meaningful when not root. */
    if (geteuid() != 0) {
        char ro[1200];
        path_in_tmp(ro, sizeof ro, "readonly");
        ENSURE(mkdir(ro, 0500) == 0);
        snprintf(path, sizeof path, "%s/frame.ply", ro);
        ENSURE(pbf_export_write(&p, PBF_FORMAT_PLY, path, err, sizeof err) == PBF_ERR_IO);
        ENSURE(strstr(err, strerror(EACCES)) != NULL);
        ENSURE(count_temp_files(ro) == 0);
        rmdir(ro);
    }
    pbf_particles_free(&p);
    return 0;
}

/* A write that fails half way (file size limit: the same path as a full disk, EFBIG instead of
 * ENOSPC) reports the error, removes the temporary file and keeps the previous file intact. */
static int test_write_fails_midway(void) {
    pbf_particles small, big;
    ENSURE(make_particles(&small, 4) == 0);
    ENSURE(make_particles(&big, 20000) == 0);
    char err[PBF_ERROR_SIZE];
    const pbf_format formats[2] = {PBF_FORMAT_PLY, PBF_FORMAT_VTK};
    const char *names[2] = {"keep.ply", "keep.vtk"};
    for (int f = 0; f < 2; ++f) {
        char path[1200];
        path_in_tmp(path, sizeof path, names[f]);
        ENSURE(pbf_export_write(&small, formats[f], path, err, sizeof err) == PBF_OK);
        long before = file_size(path);

        struct rlimit old, lim;
        ENSURE(getrlimit(RLIMIT_FSIZE, &old) == 0);
        lim = old;
        lim.rlim_cur = 64 * 1024;
        void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
        ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
        pbf_status s = pbf_export_write(&big, formats[f], path, err, sizeof err);
        ENSURE(setrlimit(RLIMIT_FSIZE, &old) == 0);
        signal(SIGXFSZ, old_handler);

        ENSURE(s == PBF_ERR_IO);
        ENSURE(strstr(err, path) != NULL);
        ENSURE(strstr(err, strerror(EFBIG)) != NULL);
        ENSURE(count_temp_files(tmp_dir) == 0);
        ENSURE(file_size(path) == before);
        pbf_particles back;
        ENSURE(pbf_export_read(path, &back, err, sizeof err) == PBF_OK);
        ENSURE(back.count == 4);
        pbf_particles_free(&back);
        remove(path);
    }
    pbf_particles_free(&small);
    pbf_particles_free(&big);
    return 0;
}

static int test_invalid_arguments(void) {
    pbf_particles p;
    ENSURE(make_particles(&p, 3) == 0);
    char err[PBF_ERROR_SIZE], path[1200];
    path_in_tmp(path, sizeof path, "x.ply");
    ENSURE(pbf_export_write(&p, PBF_FORMAT_NONE, path, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_export_write(&p, (pbf_format)(PBF_FORMAT_PLY | PBF_FORMAT_VTK), path, err,
                            sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(!file_exists(path));
    ENSURE(strcmp(pbf_format_extension(PBF_FORMAT_PLY), "ply") == 0);
    ENSURE(strcmp(pbf_format_extension(PBF_FORMAT_VTK), "vtk") == 0);
    ENSURE(strcmp(pbf_format_extension(PBF_FORMAT_VTU), "vtu") == 0);
    ENSURE(strcmp(pbf_format_extension(PBF_FORMAT_NONE), "") == 0);
    pbf_particles_free(&p);
    pbf_particles_free(&p); /* twice is harmless */
    /* An empty frame is a valid file. */
    pbf_particles empty = {0, NULL, NULL, NULL, NULL, NULL};
    path_in_tmp(path, sizeof path, "empty_frame.vtk");
    ENSURE(pbf_export_write(&empty, PBF_FORMAT_VTK, path, err, sizeof err) == PBF_OK);
    ENSURE(pbf_export_read(path, &p, err, sizeof err) == PBF_OK);
    ENSURE(p.count == 0);
    pbf_particles_free(&p);
    remove(path);
    return 0;
}

static int test_write_file_atomic(void) {
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "scene.json");
    const char *text = "{\"a\": 1}\n";
    ENSURE(pbf_write_file_atomic(path, text, strlen(text), err, sizeof err) == PBF_OK);
    ENSURE(file_size(path) == (long)strlen(text));
    ENSURE(count_temp_files(tmp_dir) == 0);
    remove(path);
    return 0;
}

/* The whole of a small file, NUL-terminated, into buf (size bytes at most). */
static int read_text(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return 1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 0;
}

/* ParaView's .series (JSON): names escaped as JSON strings, times as the doubles given, and the
 * .pvd of several parts with their block names (XML-escaped); both atomic, and refused with
 * bad arguments or an unwritable folder. */
static int test_series_and_pvd_parts(void) {
    char path[1200], err[PBF_ERROR_SIZE], text[2048];
    path_in_tmp(path, sizeof path, "frames.ply.series");
    const double times[] = {0.0, 0.5, 1.0 / 60.0};
    const char *files[] = {"frame_00000.ply", "we\"ird\\name.ply", "tab\there.ply"};
    ENSURE(pbf_export_write_series(path, times, files, 3, err, sizeof err) == PBF_OK);
    ENSURE(read_text(path, text, sizeof text) == 0);
    const char *want = "{\n  \"file-series-version\": \"1.0\",\n  \"files\": [\n"
                       "    {\"name\": \"frame_00000.ply\", \"time\": 0},\n"
                       "    {\"name\": \"we\\\"ird\\\\name.ply\", \"time\": 0.5},\n"
                       "    {\"name\": \"tab\\u0009here.ply\", \"time\": 0.016666666666666666}\n"
                       "  ]\n}\n";
    if (strcmp(text, want) != 0) fprintf(stderr, "got:\n%s", text);
    ENSURE(strcmp(text, want) == 0);
    /* an empty series is valid JSON too */
    ENSURE(pbf_export_write_series(path, NULL, NULL, 0, err, sizeof err) == PBF_OK);
    ENSURE(read_text(path, text, sizeof text) == 0);
    ENSURE(strcmp(text, "{\n  \"file-series-version\": \"1.0\",\n  \"files\": [\n  ]\n}\n") == 0);

    path_in_tmp(path, sizeof path, "frames.pvd");
    const pbf_pvd_entry entries[] = {{0.0, 0, "frame_00000.vtu"},
                                     {0.0, 1, "solids_00000.vtu"},
                                     {0.25, 0, "frame_00001.vtu"},
                                     {0.25, 1, "solids_00001.vtu"}};
    const char *names[] = {"particles", "solids & co"};
    ENSURE(pbf_export_write_pvd_parts(path, entries, 4, names, 2, err, sizeof err) == PBF_OK);
    ENSURE(read_text(path, text, sizeof text) == 0);
    ENSURE(strstr(text, "<DataSet timestep=\"0\" group=\"\" part=\"1\" name=\"solids &amp; co\" "
                        "file=\"solids_00000.vtu\"/>\n    <DataSet timestep=\"0.25\" group=\"\" "
                        "part=\"0\" name=\"particles\" file=\"frame_00001.vtu\"/>") != NULL);
    /* the one-part series of pbf_export_write_pvd: part 0, no name */
    const char *vtu[] = {"frame_00000.vtu"};
    ENSURE(pbf_export_write_pvd(path, times, vtu, 1, err, sizeof err) == PBF_OK);
    ENSURE(read_text(path, text, sizeof text) == 0);
    ENSURE(
        strstr(text, "<DataSet timestep=\"0\" group=\"\" part=\"0\" file=\"frame_00000.vtu\"/>"));
    ENSURE(count_temp_files(tmp_dir) == 0);

    /* refused: an entry without a file, a negative part, a folder that does not exist */
    const pbf_pvd_entry bad[] = {{0.0, -1, "frame_00000.vtu"}};
    ENSURE(pbf_export_write_pvd_parts(path, bad, 1, NULL, 0, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    ENSURE(pbf_export_write_series(path, NULL, files, 1, err, sizeof err) == PBF_ERR_INVALID_ARG);
    path_in_tmp(path, sizeof path, "no/such/folder/frames.vtk.series");
    ENSURE(pbf_export_write_series(path, times, files, 1, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, "no/such/folder/frames.vtk.series") != NULL);
    return 0;
}

int main(void) {
    if (make_tmp_dir("export") != 0) return 1;
    int test_failures_ = 0;
    RUN_TEST(test_arrays_by_name);
    RUN_TEST(test_ply_roundtrip);
    RUN_TEST(test_vtk_roundtrip);
    RUN_TEST(test_ply_header);
    RUN_TEST(test_truncated_ply);
    RUN_TEST(test_truncated_vtk);
    RUN_TEST(test_foreign_files);
    RUN_TEST(test_foreign_valid_ply);
    RUN_TEST(test_unwritable_folder);
    RUN_TEST(test_write_fails_midway);
    RUN_TEST(test_invalid_arguments);
    RUN_TEST(test_write_file_atomic);
    RUN_TEST(test_series_and_pvd_parts);
    remove_tmp_dir();
    return test_failures_ == 0 ? 0 : 1;
}
