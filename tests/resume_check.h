/* A run resumed from a checkpoint against the run that went on: the check that a checkpoint
 * keeps everything the next steps depend on (their bits). */
#ifndef PBF_TEST_RESUME_CHECK_H
#define PBF_TEST_RESUME_CHECK_H

#include <stdio.h>

#include "pbf/checkpoint.h"
#include "pbf/pbf.h"
#include "test.h"

/* A test's own checks of the open checkpoint (its def's fields, a def it refuses): 0 when they
 * pass. */
typedef int (*resume_check_fn)(const pbf_checkpoint *ck);

/* Saves w to path and steps it `frames` frames of dt; then opens the file, runs check (NULL:
 * none), creates a world from the file and steps that `frames` frames too. Prints the particle
 * count and both worlds' pbf_world_hash; returns 0 when the hashes agree and every call and
 * check passed, else 1. The file is removed; w stays the caller's. */
static inline int resume_check(pbf_world *w, int frames, float dt, const char *path,
                               resume_check_fn check) {
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
    for (int f = 0; f < frames; ++f) ENSURE(pbf_world_step(w, dt) == PBF_OK);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    if (check != NULL) ENSURE(check(ck) == 0);
    pbf_world *r = NULL;
    ENSURE(pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err) == PBF_OK);
    pbf_checkpoint_close(ck);
    remove(path);
    for (int f = 0; f < frames; ++f) ENSURE(pbf_world_step(r, dt) == PBF_OK);
    printf("  %d particles, straight %016llx, resumed %016llx\n", pbf_world_particle_count(w),
           (unsigned long long)pbf_world_hash(w), (unsigned long long)pbf_world_hash(r));
    ENSURE(pbf_world_hash(w) == pbf_world_hash(r));
    pbf_world_destroy(r);
    return 0;
}

#endif
