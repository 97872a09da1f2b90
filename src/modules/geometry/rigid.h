/* Rotations for placed and moving meshes, in double precision: Euler angles (degrees, about x,
 * then y, then z: R = Rz Ry Rx), row-major 3x3 matrices and unit quaternions (w, x, y, z). */
#ifndef PBF_GEOMETRY_RIGID_H
#define PBF_GEOMETRY_RIGID_H

#include <math.h>

#define PBF_DEG 0.017453292519943295

static inline void pbf__mat_mul(const double a[9], const double b[9], double out[9]) {
    double r[9];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    for (int k = 0; k < 9; ++k) out[k] = r[k];
}

static inline void pbf__mat_from_euler(double ax, double ay, double az, double out[9]) {
    double cx = cos(ax * PBF_DEG), sx = sin(ax * PBF_DEG), cy = cos(ay * PBF_DEG),
           sy = sin(ay * PBF_DEG), cz = cos(az * PBF_DEG), sz = sin(az * PBF_DEG);
    const double rx[9] = {1, 0, 0, 0, cx, -sx, 0, sx, cx};
    const double ry[9] = {cy, 0, sy, 0, 1, 0, -sy, 0, cy};
    const double rz[9] = {cz, -sz, 0, sz, cz, 0, 0, 0, 1};
    double t[9];
    pbf__mat_mul(ry, rx, t);
    pbf__mat_mul(rz, t, out);
}

static inline void pbf__mat_from_quat(const double q[4], double m[9]) {
    double w = q[0], x = q[1], y = q[2], z = q[3];
    m[0] = 1 - 2 * (y * y + z * z);
    m[1] = 2 * (x * y - w * z);
    m[2] = 2 * (x * z + w * y);
    m[3] = 2 * (x * y + w * z);
    m[4] = 1 - 2 * (x * x + z * z);
    m[5] = 2 * (y * z - w * x);
    m[6] = 2 * (x * z - w * y);
    m[7] = 2 * (y * z + w * x);
    m[8] = 1 - 2 * (x * x + y * y);
}

static inline void pbf__quat_normalize(double q[4]) {
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 0.0)) {
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
        return;
    }
    for (int k = 0; k < 4; ++k) q[k] /= n;
    if (q[0] < 0.0) /* one sign for the same rotation: files and tests compare it */
        for (int k = 0; k < 4; ++k) q[k] = -q[k];
}

/* Shepperd's method: stable for every rotation. */
static inline void pbf__quat_from_mat(const double m[9], double q[4]) {
    double tr = m[0] + m[4] + m[8];
    if (tr > 0.0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q[0] = 0.25 * s;
        q[1] = (m[7] - m[5]) / s;
        q[2] = (m[2] - m[6]) / s;
        q[3] = (m[3] - m[1]) / s;
    } else if (m[0] > m[4] && m[0] > m[8]) {
        double s = 2.0 * sqrt(1.0 + m[0] - m[4] - m[8]);
        q[0] = (m[7] - m[5]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[1] + m[3]) / s;
        q[3] = (m[2] + m[6]) / s;
    } else if (m[4] > m[8]) {
        double s = 2.0 * sqrt(1.0 + m[4] - m[0] - m[8]);
        q[0] = (m[2] - m[6]) / s;
        q[1] = (m[1] + m[3]) / s;
        q[2] = 0.25 * s;
        q[3] = (m[5] + m[7]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + m[8] - m[0] - m[4]);
        q[0] = (m[3] - m[1]) / s;
        q[1] = (m[2] + m[6]) / s;
        q[2] = (m[5] + m[7]) / s;
        q[3] = 0.25 * s;
    }
    pbf__quat_normalize(q);
}

/* q ← q advanced by angular velocity w (world frame) over dt: q + ½ dt (0, w) q, normalised. */
static inline void pbf__quat_integrate(double q[4], const double w[3], double dt) {
    double a = 0.5 * dt;
    double dq[4] = {-a * (w[0] * q[1] + w[1] * q[2] + w[2] * q[3]),
                    a * (w[0] * q[0] + w[1] * q[3] - w[2] * q[2]),
                    a * (w[1] * q[0] + w[2] * q[1] - w[0] * q[3]),
                    a * (w[2] * q[0] + w[0] * q[2] - w[1] * q[1])};
    for (int k = 0; k < 4; ++k) q[k] += dq[k];
    pbf__quat_normalize(q);
}

/* out = m v */
static inline void pbf__mat_apply(const double m[9], const double v[3], double out[3]) {
    double r[3];
    for (int i = 0; i < 3; ++i) r[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
    out[0] = r[0];
    out[1] = r[1];
    out[2] = r[2];
}

/* Inverse of a symmetric positive definite 3x3 (an inertia tensor); 0 on success. */
static inline int pbf__mat_inverse(const double m[9], double out[9]) {
    double c[9] = {m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
                   m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                   m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3]};
    double det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6];
    if (!(fabs(det) > 0.0)) return -1;
    for (int k = 0; k < 9; ++k) out[k] = c[k] / det;
    return 0;
}

#endif
