/* Resource checks before allocating (docs/robustness.md): how much memory this
 * process may use, and the message when a world would need more. Never installed. */
#ifndef PBF_RESOURCES_H
#define PBF_RESOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "pbf/pbf.h"

/* Tests only: when non-zero, the memory limit instead of the machine's (tests/test_limits.c). */
extern size_t pbf__test_memory_limit;

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
