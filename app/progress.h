/* Progress of a run on stderr, in frames (each frame one pbf_world_step of the scene's
 * substeps) and frames per second of wall time. On a terminal: one line redrawn in place with '\r' (at most ten
 * times a second). Otherwise (a log file, CI): a plain line every 10 % of the frames or every
 * few seconds, whichever comes first. */
#ifndef PBF_APP_PROGRESS_H
#define PBF_APP_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

typedef struct progress {
    FILE *out;
    int tty; /* redraw in place */
    int total; /* frames to simulate (frame 0 excluded) */
    int start_frame; /* frame the timing started from */
    double start; /* cli_now() at the start */
    double last_print; /* cli_now() of the last line */
    int next_percent; /* plain mode: print when this percentage is reached */
    int drawn; /* a bar is on the terminal line */
} progress;

void progress_begin(progress *p, FILE *out, int total_frames);
/* After frame `frame` (1..total) is done. */
void progress_update(progress *p, int frame, double sim_time, int particles);
/* Clears the bar so the next lines start on a fresh line. */
void progress_end(progress *p);

#endif
