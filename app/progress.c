/* Progress line of `pbf run` (see progress.h). */
#include "progress.h"

#include <unistd.h>

#include "cli.h"

/* Seconds between plain lines when not on a terminal, and between bar redraws on one. */
#define PLAIN_INTERVAL_S 5.0
#define BAR_INTERVAL_S 0.1
#define BAR_WIDTH 24

void progress_begin(progress *p, FILE *out, int total_frames) {
    p->out = out;
    p->tty = isatty(fileno(out));
    p->total = total_frames;
    p->start_frame = 0;
    p->start = cli_now();
    p->last_print = p->start;
    p->next_percent = 10;
    p->drawn = 0;
}

void progress_update(progress *p, int frame, double sim_time, int particles) {
    double now = cli_now();
    int last = frame >= p->total;
    double elapsed = now - p->start;
    double rate = elapsed > 0.0 ? (double)(frame - p->start_frame) / elapsed : 0.0;
    double eta = rate > 0.0 ? (double)(p->total - frame) / rate : -1.0;
    int percent = p->total > 0 ? (int)(100.0 * frame / p->total) : 100;
    char eta_text[32], count_text[32];
    cli_format_duration(eta, eta_text, sizeof eta_text);
    cli_format_count(particles, count_text, sizeof count_text);

    if (p->tty) {
        if (!last && now - p->last_print < BAR_INTERVAL_S) return;
        char bar[BAR_WIDTH + 1];
        int filled = p->total > 0 ? (int)((long long)BAR_WIDTH * frame / p->total) : BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; ++i) bar[i] = i < filled ? '#' : '.';
        bar[BAR_WIDTH] = '\0';
        /* \033[K clears what a longer previous line left at the end. */
        fprintf(p->out, "\r[%s] frame %d/%d  t=%.3f s  %s particles  %.1f frames/s  ETA %s\033[K",
                bar, frame, p->total, sim_time, count_text, rate, eta_text);
        fflush(p->out);
        p->drawn = 1;
    } else {
        if (!last && percent < p->next_percent && now - p->last_print < PLAIN_INTERVAL_S) return;
        fprintf(p->out,
                "pbf run: frame %d/%d (%d%%)  t=%.3f s  %s particles  %.1f frames/s  ETA %s\n",
                frame, p->total, percent, sim_time, count_text, rate, eta_text);
        fflush(p->out);
        while (p->next_percent <= percent) p->next_percent += 10;
    }
    p->last_print = now;
}

void progress_end(progress *p) {
    if (p->tty && p->drawn) {
        fputc('\n', p->out);
        fflush(p->out);
    }
    p->drawn = 0;
}
