/* A CSV file in the output folder of `pbf run` that grows by one row per frame: stats.csv
 * (run_output.c), forces.csv (tool_output.c) and probes.csv (probe_output.c). Every row starts
 * with its frame number, and the rows are frames 0, 1, 2, ... in order.
 *
 * The header goes to disk atomically (pbf_write_file_atomic: temporary name, fsync, rename), so
 * the file is never half a header. Each row is then appended with one write() call and fsynced:
 * a row is on disk whole or not at all. Resuming at frame F keeps the header and the rows of
 * frames 0..F, rewritten atomically, and appends from there. */
#ifndef PBF_APP_CSV_FILE_H
#define PBF_APP_CSV_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct csv_file {
    char *path; /* DIR/NAME */
    FILE *file; /* open for appending */
} csv_file;

/* Writes DIR/NAME with the header (header_len bytes, its newline included) and opens it for
 * appending. Prints the error and returns non-zero on failure (f is then closed). */
int csv_file_create(csv_file *f, const char *dir, const char *name, const char *header,
                    size_t header_len);
/* Resuming at `frame`: keeps the header and the rows of frames 0..frame of DIR/NAME, which must
 * all be there (each frame's rows are written before its checkpoint), and opens the file for
 * appending. A missing file is started with `header` (a folder from before the file existed),
 * or is an error when header is NULL. Prints the error and returns non-zero on failure. */
int csv_file_resume(csv_file *f, const char *dir, const char *name, int frame, const char *header,
                    size_t header_len);
/* Appends one row (row_len bytes, its newline included). Returns non-zero with the message in
 * err on failure (not printed: the caller's progress line is on the terminal). */
int csv_file_append(csv_file *f, const char *row, size_t row_len, char *err, size_t err_size);
/* Closes the file; safe on a closed or zeroed csv_file. */
void csv_file_close(csv_file *f);

#endif
