/* What runs where, inside the library (src/core/caps.c; the table is public in
 * include/pbf/features.h). The checks the rest of the library asks before it adds a feature. */
#ifndef PBF_CAPS_H
#define PBF_CAPS_H

#include "pbf/features.h"
#include "world_state.h"

/* Whether the features in `adding` may run in `column` (bits 1u << pbf_feature): PBF_OK, or
 * PBF_ERR_UNSUPPORTED with the table's message in err. `have`, the features already in use, is
 * for pairs of features that do not run together; today there are none (every feature runs with
 * both kernel pairs). */
pbf_status pbf__caps_check(uint32_t have, uint32_t adding, pbf_column column, char *err,
                           size_t err_size);
/* Before feature f is added to world w: checked against w's backend, against the split over
 * processes when w has one. PBF_OK, or
 * PBF_ERR_UNSUPPORTED with the message set (pbf_world_error). */
pbf_status pbf__caps_require(pbf_world *w, pbf_feature f);

#endif
