/* libFuzzer target for the mesh loaders (docs/robustness.md, include/pbf/geometry.h).
 *
 * Input: one byte choosing the format (its value mod 3: OBJ, STL, PLY), then the file's bytes.
 * They are written to a temporary file and added to a small world (particle radius 5 cm in a
 * 1 m box) with the cache off, under a memory limit of 4 MiB for the library's checks: a mesh
 * whose field would need more is refused before baking, so that any field that bakes does so in
 * well under a second even under the sanitizers (a mesh 3 m wide reaching into the 1 m box
 * bakes 175,000 nodes, half a minute with ASan; 30 m wide, hours). The mesh reader gets 2 s
 * instead of its 10 s (resources.h): far more than these small files need, and an input on which
 * Assimp loops forever (mesh_corpus/ply_assimp_hang.ply) is killed and reported after 2 s in
 * every replay of the corpus instead of 10.
 * pbf_world_add_mesh must return without crashing, leaking or reading out of bounds (ASan,
 * UBSan); on failure its message must name the file and the world must hold no mesh; on
 * success the mesh must have triangles and a field. A violated property calls abort().
 *
 * Built with clang -fsanitize=fuzzer by scripts/fuzz.sh; tests/fuzz/replay.c runs the same
 * function over tests/fuzz/mesh_corpus with any compiler (the fuzz_mesh_replay test). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/geometry.h"
#include "resources.h"

#define MAX_INPUT (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > MAX_INPUT || !pbf_mesh_import_available()) return 0;
    pbf__test_memory_limit = (size_t)4 << 20;
    pbf__test_mesh_read_seconds = 2.0;
    static const char *const ext[3] = {"obj", "stl", "ply"};
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/pbf_fuzz_mesh_%ld.%s", tmp != NULL && tmp[0] ? tmp : "/tmp",
             (long)getpid(), ext[data[0] % 3]);
    FILE *f = fopen(path, "wb");
    if (f == NULL) return 0;
    size_t wrote = fwrite(data + 1, 1, size - 1, f);
    if (fclose(f) != 0 || wrote != size - 1) {
        remove(path);
        return 0;
    }
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.05f;
    d.domain_min = (pbf_vec3){-0.5f, -0.5f, -0.5f};
    d.domain_max = (pbf_vec3){0.5f, 0.5f, 0.5f};
    d.threads = 1;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&d, &w, err, sizeof err) != PBF_OK) {
        remove(path);
        return 0; /* out of memory under the fuzzer's limit */
    }
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path);
    m.cache = 0;
    pbf_status st = pbf_world_add_mesh(w, &m);
    const char *msg = pbf_world_error(w);
    if (st != PBF_OK) {
        if (st != PBF_ERR_OUT_OF_MEMORY && strstr(msg, path) == NULL) {
            fprintf(stderr, "fuzz_mesh: message does not name the file: %s\n", msg);
            abort();
        }
        if (pbf_world_mesh_count(w) != 0) {
            fprintf(stderr, "fuzz_mesh: a failed mesh was kept\n");
            abort();
        }
    } else {
        pbf_mesh_solid_info in = pbf_world_mesh_info(w, 0);
        if (pbf_world_mesh_count(w) != 1 || in.triangles < 1 || in.nx < 2 || in.field_bytes == 0) {
            fprintf(stderr, "fuzz_mesh: a mesh without triangles or field was added\n");
            abort();
        }
    }
    pbf_world_destroy(w);
    remove(path);
    return 0;
}
