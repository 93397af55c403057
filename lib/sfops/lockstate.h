/* Who holds a slot's lock, for the operator tools, without taking it: taking
 * it even for a moment would make a sender that starts at that moment fail
 * with QSF_E_LOCKED. The kernel's table of flock locks (/proc/locks) says
 * whether some process holds <slot>/.lock and which; .lock.pid names the last
 * process that took it (docs/FORMAT.md §5). */
#ifndef QSF_LOCKSTATE_H
#define QSF_LOCKSTATE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct qsf_lock_state {
    bool lock_file;  /* <slot>/.lock exists */
    bool known;      /* the kernel's lock table could be read */
    bool held;       /* known: a process holds the flock on .lock */
    long holder_pid; /* held: that process (as the kernel reports it), else 0 */
    long pid_file;   /* the pid in .lock.pid (the last holder), 0 when none */
    bool pid_alive;  /* pid_file names a running process */
} qsf_lock_state;

/* Fills *out for the slot directory slot_path. Never fails: what cannot be
 * read is reported as unknown (known false, pid_file 0). */
void qsf_slot_lock_state(const char *slot_path, qsf_lock_state *out);

/* One line for people: "held by pid 123 (running)", "free (last holder pid
 * 123, not running)", "free (never locked)", "unknown (...)". */
void qsf_lock_state_describe(const qsf_lock_state *ls, char *buf, size_t cap);

#endif
