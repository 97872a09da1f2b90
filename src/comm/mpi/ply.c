/* One PLY file written by all the ranks of a split world with MPI-IO (include/pbf/mpi.h,
 * pbf_mpi_export_ply): rank 0 writes the header for the whole count, every rank its own
 * particles at its offset (an exclusive prefix sum of the counts). No rank gathers the
 * particles. */
#include "pbf/mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/export.h"

/* Particles packed per MPI_File_write_at (512 KiB). */
#define CHUNK 16384

static void say(char *err, size_t err_size, const char *fmt, const char *path, const char *why) {
    if (err != NULL && err_size > 0) snprintf(err, err_size, fmt, path, why);
}

/* This rank's particles (p NULL: none) into fh at `offset`, after the header on rank 0.
 * Returns an MPI error code. */
static int write_part(MPI_File fh, const pbf_particles *p, int rank, const char *header,
                      size_t header_size, MPI_Offset offset) {
    int code = MPI_SUCCESS;
    if (rank == 0)
        code = MPI_File_write_at(fh, 0, header, (int)header_size, MPI_BYTE, MPI_STATUS_IGNORE);
    const int n = p != NULL ? p->count : 0;
    unsigned char *buf = n > 0 ? malloc((size_t)CHUNK * PBF_PLY_VERTEX_BYTES) : NULL;
    if (n > 0 && buf == NULL) return MPI_ERR_NO_MEM;
    for (int start = 0; code == MPI_SUCCESS && start < n; start += CHUNK) {
        int k = n - start < CHUNK ? n - start : CHUNK;
        pbf_export_ply_vertices(p, start, k, buf);
        code = MPI_File_write_at(fh, offset + (MPI_Offset)start * PBF_PLY_VERTEX_BYTES, buf,
                                 k * PBF_PLY_VERTEX_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    free(buf);
    return code;
}

PBF_API pbf_status pbf_mpi_export_ply(const pbf_particles *p, MPI_Comm comm, const char *path,
                                      char *err, size_t err_size) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    long long mine = p != NULL ? p->count : 0, before = 0, total = 0;
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (rank == 0) before = 0; /* MPI_Exscan leaves rank 0's undefined */
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    char header[512]; /* a split world has one fluid: no phases */
    size_t header_size = pbf_export_ply_header(total, 0, header, sizeof header);
    /* written under a temporary name, renamed by rank 0 once every rank is done: a reader never
     * sees half a frame, and a killed run leaves only a .tmp. file, which the next run removes */
    size_t path_size = strlen(path) + 32;
    char *tmp = malloc(path_size);
    int code = tmp == NULL ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    int any = code != MPI_SUCCESS;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        free(tmp);
        say(err, err_size, "cannot write '%s': %s", path, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    long pid = (long)getpid(); /* rank 0's: "<path>.tmp.<digits>", what a run cleans up */
    MPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
    snprintf(tmp, path_size, "%s.tmp.%ld", path, pid);
    MPI_File fh;
    code = MPI_File_open(comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (code == MPI_SUCCESS) { /* collective: an open that failed anywhere failed everywhere */
        code = MPI_File_set_size(fh, 0); /* a stale temporary file of a killed run */
        if (code == MPI_SUCCESS)
            code = write_part(fh, p, rank, header, header_size,
                              (MPI_Offset)header_size + (MPI_Offset)before * PBF_PLY_VERTEX_BYTES);
        int sync = MPI_File_sync(fh);
        if (code == MPI_SUCCESS) code = sync;
        MPI_File_close(&fh);
    }
    /* the first rank that failed says why */
    int first = code != MPI_SUCCESS ? rank : ranks;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
    char why[MPI_MAX_ERROR_STRING + 32] = "";
    if (first == ranks && rank == 0 && rename(tmp, path) != 0) {
        snprintf(why, sizeof why, "renaming the temporary file failed");
        first = 0;
    }
    MPI_Bcast(&first, 1, MPI_INT, 0, comm);
    if (first < ranks) {
        if (code != MPI_SUCCESS) {
            int len = 0;
            MPI_Error_string(code, why, &len);
        }
        MPI_Bcast(why, (int)sizeof why, MPI_CHAR, first, comm);
        if (rank == 0) MPI_File_delete(tmp, MPI_INFO_NULL);
        free(tmp);
        char detail[sizeof why + 32];
        snprintf(detail, sizeof detail, "%s (MPI rank %d, MPI-IO)", why, first);
        say(err, err_size, "cannot write '%s': %s", path, detail);
        return PBF_ERR_IO;
    }
    free(tmp);
    return PBF_OK;
}
