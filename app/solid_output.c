/* solids.csv of `pbf run` (see solid_output.h). */
#include "solid_output.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "csv_file.h"
#include "pbf/geometry.h"

struct solid_output {
    csv_file csv;
    int meshes;
};

static const char csv_name[] = "solids.csv";
static const char *const fields[] = {"x",  "y",  "z",  "qw", "qx", "qy", "qz", "vx", "vy", "vz",
                                     "wx", "wy", "wz", "fx", "fy", "fz", "tx", "ty", "tz"};
#define FIELDS (sizeof fields / sizeof fields[0])

static int open_file(solid_output **out, const char *dir, const pbf_scene *scene, int frame) {
    *out = NULL;
    if (scene->mesh_count == 0) return 0;
    solid_output *o = calloc(1, sizeof *o);
    size_t size = 64 + (size_t)scene->mesh_count * FIELDS * 12;
    char *header = malloc(size);
    if (o == NULL || header == NULL) {
        free(o);
        free(header);
        return cli_error("out of memory");
    }
    o->meshes = scene->mesh_count;
    int n = snprintf(header, size, "frame,time");
    for (int i = 0; i < o->meshes; ++i)
        for (size_t k = 0; k < FIELDS; ++k)
            n += snprintf(header + n, size - (size_t)n, ",m%d_%s", i, fields[k]);
    n += snprintf(header + n, size - (size_t)n, "\n");
    int rc = frame < 0 ? csv_file_create(&o->csv, dir, csv_name, header, (size_t)n)
                       : csv_file_resume(&o->csv, dir, csv_name, frame, header, (size_t)n);
    free(header);
    if (rc != 0) {
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int solid_output_open(solid_output **out, const char *dir, const pbf_scene *scene) {
    return open_file(out, dir, scene, -1);
}

int solid_output_resume(solid_output **out, const char *dir, const pbf_scene *scene, int frame) {
    return open_file(out, dir, scene, frame);
}

int solid_output_row(solid_output *o, const pbf_world *world, int frame, char *err,
                     size_t err_size) {
    if (o == NULL) return 0;
    size_t size = 64 + (size_t)o->meshes * FIELDS * 20;
    char *row = malloc(size);
    if (row == NULL) {
        snprintf(err, err_size, "out of memory writing %s", csv_name);
        return 1;
    }
    int n = snprintf(row, size, "%d,%.9g", frame, pbf_world_time(world));
    for (int i = 0; i < o->meshes; ++i) {
        pbf_mesh_solid_state s = pbf_world_mesh_state(world, i);
        const float v[FIELDS] = {s.position.x,
                                 s.position.y,
                                 s.position.z,
                                 s.orientation[0],
                                 s.orientation[1],
                                 s.orientation[2],
                                 s.orientation[3],
                                 s.velocity.x,
                                 s.velocity.y,
                                 s.velocity.z,
                                 s.angular_velocity.x,
                                 s.angular_velocity.y,
                                 s.angular_velocity.z,
                                 s.force.x,
                                 s.force.y,
                                 s.force.z,
                                 s.torque.x,
                                 s.torque.y,
                                 s.torque.z};
        for (size_t k = 0; k < FIELDS; ++k)
            n += snprintf(row + n, size - (size_t)n, ",%.9g", (double)v[k]);
    }
    n += snprintf(row + n, size - (size_t)n, "\n");
    int rc = csv_file_append(&o->csv, row, (size_t)n, err, err_size);
    free(row);
    return rc;
}

void solid_output_close(solid_output *o) {
    if (o == NULL) return;
    csv_file_close(&o->csv);
    free(o);
}
