/* Ctrl-C handling (see interrupt.h). */
#include "interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t pending_signal = 0;

static void on_signal(int sig) { pending_signal = sig; }

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
}
