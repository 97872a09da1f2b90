/* Ctrl-C handling: SIGINT and SIGTERM set a flag that the run loop checks after each frame, so
 * the frame being computed is finished and written before the program stops. The handler is
 * one-shot: a second Ctrl-C kills the program at once (files already renamed into place stay
 * complete; at most a "*.tmp.<pid>" file of the frame in progress is left). */
#ifndef PBF_APP_INTERRUPT_H
#define PBF_APP_INTERRUPT_H

void interrupt_install(void);
/* The signal that asked to stop (SIGINT, SIGTERM), or 0. */
int interrupt_pending(void);
/* Puts the default handlers back. */
void interrupt_restore(void);

#endif
