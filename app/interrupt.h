/* Ctrl-C handling: SIGINT and SIGTERM set a flag that the run loop checks after each frame, so
 * the frame being computed is finished and written before the program stops. The handler is
 * one-shot: a second Ctrl-C kills the program at once (files already renamed into place stay
 * complete; at most a "*.tmp.<pid>" file of the frame in progress is left). */
#ifndef PBF_APP_INTERRUPT_H
#define PBF_APP_INTERRUPT_H

void interrupt_install(void);
/* The signal that asked to stop (SIGINT, SIGTERM), or 0. */
int interrupt_pending(void);
/* Puts the default handlers back and drops the note. */
void interrupt_restore(void);
/* A line (at most INTERRUPT_NOTE_MAX - 1 bytes) the handler writes to stderr at once when the
 * first signal comes, NULL for none. Split over MPI ranks mpirun sends SIGTERM to every rank
 * when one has died, and kills them 1 s later: a rank waiting for a message from the dead one
 * never reaches the end of its frame, so this line is all it can say (docs/mpi.md). Not called
 * from the handler: the handler only reads the note that was complete when it came. */
#define INTERRUPT_NOTE_MAX 8192
void interrupt_set_note(const char *text);

#endif
