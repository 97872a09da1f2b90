/* Where the mesh solids are (mesh_pose.h): a body's kinematic pose at a time, the move of the
 * moving bodies to a substep's end, the solids' entries from the poses and the frames of the
 * particles' sweep, and the end of a substep (the force a floating body moves by next). Apart
 * from meshes.c (adding meshes, their forces) because a CUDA world's substeps move the bodies
 * from the host too (src/backend/cuda/world_cuda.c). */
#include "mesh_pose.h"

#include <string.h>

#include "bodies.h"
#include "rigid.h"

void pbf__mesh_body_pose_at(const pbf_mesh_body *b, double t, double position[3], double R[9]) {
    const pbf_mesh_def *d = &b->def;
    double pos[3] = {d->position.x, d->position.y, d->position.z};
    double rot[3] = {d->rotation.x, d->rotation.y, d->rotation.z};
    if (d->motion == PBF_MESH_KINEMATIC && d->key_count > 0) {
        const pbf_mesh_key *k = d->keys;
        const int n = d->key_count;
        int i = 0;
        double s = 0.0;
        if (!(t > (double)k[0].time)) {
            i = 0;
        } else if (t >= (double)k[n - 1].time) {
            i = n - 1;
        } else {
            while (i + 2 < n && t >= (double)k[i + 1].time) ++i;
            s = (t - k[i].time) / ((double)k[i + 1].time - k[i].time);
        }
        const pbf_mesh_key *a = &k[i], *c = &k[i + 1 < n ? i + 1 : i];
        const double pa[6] = {a->position.x, a->position.y, a->position.z,
                              a->rotation.x, a->rotation.y, a->rotation.z};
        const double pc[6] = {c->position.x, c->position.y, c->position.z,
                              c->rotation.x, c->rotation.y, c->rotation.z};
        for (int q = 0; q < 3; ++q) {
            pos[q] = pa[q] + s * (pc[q] - pa[q]);
            rot[q] = pa[3 + q] + s * (pc[3 + q] - pa[3 + q]);
        }
    }
    pbf__mat_from_euler(rot[0], rot[1], rot[2], R);
    double off[3];
    pbf__mat_apply(R, b->offset, off);
    for (int q = 0; q < 3; ++q) position[q] = pos[q] + off[q];
}

void pbf__meshes_sync(pbf_world *w) {
    pbf_geometry *g = w->geometry;
    int n = w->collider_count;
    if (g != NULL)
        for (int i = 0; i < g->count && n < PBF_MAX_SOLIDS; ++i) {
            pbf_mesh_body *b = g->body[i];
            b->solid = b->def.sink ? -1 : n;
            if (!b->def.sink) pbf__mesh_body_solid(b, &w->solids[n++]);
        }
    w->params.solid_count = n;
}

/* Moves every body to where it is at the end of the substep. */
static void advance(pbf_world *w, pbf_mesh_body *b, float dt) {
    memcpy(b->position_start, b->position, sizeof b->position);
    memcpy(b->R_start, b->R, sizeof b->R);
    memcpy(b->q_start, b->q, sizeof b->q);
    if (b->def.motion == PBF_MESH_FLOATING) {
        pbf__bodies_advance(w, b, dt);
        return;
    }
    if (b->def.motion != PBF_MESH_KINEMATIC || b->def.key_count == 0) return;
    pbf__mesh_body_pose_at(b, w->time + dt, b->position, b->R);
    for (int k = 0; k < 3; ++k) b->velocity[k] = (b->position[k] - b->position_start[k]) / dt;
    /* ω from R R_startᵀ ≈ I + [ω dt]× (small rotations per substep) */
    double Rt[9], dR[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Rt[3 * r + c] = b->R_start[3 * c + r];
    pbf__mat_mul(b->R, Rt, dR);
    b->omega[0] = 0.5 * (dR[7] - dR[5]) / dt;
    b->omega[1] = 0.5 * (dR[2] - dR[6]) / dt;
    b->omega[2] = 0.5 * (dR[3] - dR[1]) / dt;
    pbf__quat_from_mat(b->R, b->q);
}

void pbf__meshes_move(pbf_world *w, float dt) {
    pbf_geometry *g = w->geometry;
    if (g == NULL || g->moving == 0) return;
    for (int i = 0; i < g->count; ++i) advance(w, g->body[i], dt);
    if (g->floating > 0) pbf__bodies_contacts(w, dt);
    pbf__meshes_sync(w);
}

int pbf__meshes_sweep_frames(const pbf_world *w, pbf_solid *start, pbf_solid *end) {
    const pbf_geometry *g = w->geometry;
    int m = 0;
    for (int k = 0; g != NULL && k < g->count; ++k) {
        const pbf_mesh_body *b = g->body[k];
        if (b->def.sink) continue; /* not a solid */
        pbf__mesh_body_solid(b, &end[m]);
        start[m] = end[m];
        start[m].a = v3((float)b->position_start[0], (float)b->position_start[1],
                        (float)b->position_start[2]);
        for (int q = 0; q < 9; ++q) start[m].rot[q] = (float)b->R_start[q];
        ++m;
    }
    return m;
}

void pbf__meshes_substep_end(pbf_world *w, float dt) {
    pbf_geometry *g = w->geometry;
    (void)dt;
    if (g == NULL) return;
    for (int i = 0; i < g->count; ++i) {
        pbf_mesh_body *b = g->body[i];
        b->substeps_done++;
        if (b->def.motion == PBF_MESH_FLOATING) pbf__bodies_substep_end(b);
    }
}
