/* Ctrl-C handling (see interrupt.h). */
#include "interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t pending_signal = 0;

/* Two buffers: interrupt_set_note fills the one the handler does not read, then points the
 * handler at it, so the handler never sees half a note. */
static char notes[2][INTERRUPT_NOTE_MAX];
static size_t note_len[2];
static volatile sig_atomic_t note = -1; /* the buffer to write, -1: none */

static void on_signal(int sig) {
    pending_signal = sig;
    int k = note;
    if (k >= 0 && write(STDERR_FILENO, notes[k], note_len[k]) < 0) {
        /* nothing to do about a closed stderr in a handler */
    }
}

void interrupt_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: a signal during a write must not make the write fail with EINTR.
     * SA_RESETHAND: the second signal takes the default action (stop now). */
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int interrupt_pending(void) { return (int)pending_signal; }

void interrupt_restore(void) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    note = -1;
}

void interrupt_set_note(const char *text) {
    if (text == NULL) {
        note = -1;
        return;
    }
    int k = note == 0 ? 1 : 0;
    snprintf(notes[k], sizeof notes[k], "%s", text);
    note_len[k] = strlen(notes[k]);
    note = k;
}
