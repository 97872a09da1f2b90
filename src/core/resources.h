/* Resource checks before allocating (docs/robustness.md): how much memory this
 * process may use, and the message when a world would need more. Never installed. */
#ifndef PBF_RESOURCES_H
#define PBF_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "pbf/pbf.h"

/* Tests only: when non-zero, the memory limit instead of the machine's (tests/test_limits.c). */
extern size_t pbf__test_memory_limit;

/* Tests only: when > 0, the time in seconds a mesh file's reader may take instead of the
 * generous 10 s + 10 s per MB (src/modules/geometry/mesh_import_guard.c). The mesh fuzz target
 * sets it
 * (tests/fuzz/fuzz_mesh.c): its corpus holds a file on which Assimp loops forever, and every
 * replay of the corpus waited the full 10 s for it. */
extern double pbf__test_mesh_read_seconds;

/* The memory limit in bytes (see pbf_memory_limit in pbf.h) and what sets it: "physical
 * memory", "the cgroup memory limit", "ulimit -v (RLIMIT_AS)" or "ulimit -d (RLIMIT_DATA)".
 * 0 and "unknown" when nothing could be read. */
size_t pbf__memory_limit(const char **what);

/* Formats bytes as "1.5 GiB", "23.4 MiB", ... into buf (returns buf). */
const char *pbf__format_bytes(double bytes, char *buf, size_t size);

/* 0 when `need` bytes fit the memory limit. Otherwise writes "needs about X (what_for), more
 * than the Y of WHAT" into buf and returns -1. */
int pbf__check_memory(double need, const char *what_for, char *buf, size_t size);

#endif
