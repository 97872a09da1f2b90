/* Read-back of the per-particle arrays in increasing id order (include/pbf/pbf.h), made from
 * fields.h's PBF_EXPORTED_FIELDS: the table of exported arrays, pbf_world_get_array and the
 * named pbf_world_get_* functions. Copies only (and the densities' scale with several fluids),
 * so the values are the bits of the slots they came from. */
#include <string.h>

#include "cuda/world_cuda.h" /* cuda: pbf__cuda_pull before reading a CUDA world */
#include "world_state.h"

/* The solver keeps m_ref Σ W for every particle: with several fluids each density is scaled
 * by its particle's mass. */
static void densities_of_phases(const pbf_world *w, const int32_t *slot, void *values) {
    float *out = values;
    if (!w->params.phases_on) return;
    for (int k = 0; k < w->count; ++k) out[k] *= w->params.phase_mass_ratio[w->phase[slot[k]]];
}

typedef void (*adjust_fn)(const pbf_world *w, const int32_t *slot, void *values);

/* Each array's components, from fields.h's main list. */
#define COMPONENTS(name, type, components, flags, scratch)                                         \
    enum { components_##name = (components) };
PBF_PARTICLE_FIELDS(COMPONENTS)
#undef COMPONENTS

/* The member's element type as a pbf_value_type (not evaluated: the pointer is never read). */
#define VALUE_TYPE(name)                                                                           \
    _Generic(((const pbf_world *)0)->name, float *: PBF_VALUE_FLOAT32,                             \
             int32_t *: PBF_VALUE_INT32, uint8_t *: PBF_VALUE_UINT8)

typedef struct exported {
    pbf_particle_array_info info;
    size_t row; /* bytes per particle */
    adjust_fn adjust;
} exported;

#define ENTRY(array, public_name, unit, adjust, what)                                              \
    {{public_name, VALUE_TYPE(array), components_##array, unit, what},                             \
     components_##array * sizeof *((const pbf_world *)0)->array,                                   \
     adjust},
static const exported arrays[] = {PBF_EXPORTED_FIELDS(ENTRY)};
#undef ENTRY

#define INDEX(array, public_name, unit, adjust, what) EXPORTED_##array,
enum { PBF_EXPORTED_FIELDS(INDEX) EXPORTED_COUNT };
#undef INDEX

/* The world's array of entry `index`. */
static const void *array_data(const pbf_world *w, int index) {
    switch (index) {
#define DATA(array, public_name, unit, adjust, what)                                               \
    case EXPORTED_##array: return w->array;
        PBF_EXPORTED_FIELDS(DATA)
#undef DATA
    default: return NULL;
    }
}

int pbf_particle_array_count(void) { return EXPORTED_COUNT; }

const pbf_particle_array_info *pbf_particle_array_at(int index) {
    return index >= 0 && index < EXPORTED_COUNT ? &arrays[index].info : NULL;
}

/* Array `index` of every particle, gathered by id into out. */
static void read_array(const pbf_world *w, int index, void *out) {
    pbf__cuda_pull(w); /* cuda: read back from the device if a step changed it */
    const exported *e = &arrays[index];
    const int32_t *slot = pbf__slots_by_id(w);
    const unsigned char *src = array_data(w, index);
    unsigned char *dst = out;
    const size_t row = e->row;
    if (row == 3 * sizeof(float)) /* a constant size: the copy is three loads and stores */
        for (int k = 0; k < w->count; ++k)
            memcpy(dst + 3 * sizeof(float) * k, src + 3 * sizeof(float) * slot[k],
                   3 * sizeof(float));
    else if (row == 4)
        for (int k = 0; k < w->count; ++k)
            memcpy(dst + 4 * (size_t)k, src + 4 * (size_t)slot[k], 4);
    else
        for (int k = 0; k < w->count; ++k) memcpy(dst + row * k, src + row * slot[k], row);
    if (e->adjust) e->adjust(w, slot, out);
}

pbf_status pbf_world_get_array(const pbf_world *w, const char *name, void *out, char *err,
                               size_t err_size) {
    for (int i = 0; name != NULL && i < EXPORTED_COUNT; ++i)
        if (strcmp(name, arrays[i].info.name) == 0) {
            read_array(w, i, out);
            return PBF_OK;
        }
    char names[256] = "";
    for (int i = 0; i < EXPORTED_COUNT; ++i) {
        size_t used = strlen(names);
        pbf__format(names + used, sizeof names - used, "%s%s", i ? ", " : "", arrays[i].info.name);
    }
    pbf__format(err, err_size, "pbf_world_get_array: no particle array '%s'; the arrays: %s",
                name ? name : "(null)", names);
    return PBF_ERR_INVALID_ARG;
}

void pbf_world_get_positions(const pbf_world *w, float *out) { read_array(w, EXPORTED_x, out); }
void pbf_world_get_velocities(const pbf_world *w, float *out) { read_array(w, EXPORTED_v, out); }
void pbf_world_get_densities(const pbf_world *w, float *out) {
    read_array(w, EXPORTED_density, out);
}
void pbf_world_get_ids(const pbf_world *w, int32_t *out) { read_array(w, EXPORTED_ids, out); }
void pbf_world_get_phases(const pbf_world *w, uint8_t *out) { read_array(w, EXPORTED_phase, out); }
