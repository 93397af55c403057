/* Flags that handler threads and the test thread wait on, and a watchdog that
 * ends a test stuck on them: for tests of calls that threads could make wait
 * for each other (handlers closing or replacing each other's senders'
 * handlers). A stuck wait is the failure such a test looks for, so it must
 * end with a message, never hang the suite.
 *
 * Every wait is on an event (a flag raised under one lock and condition
 * variable); the watchdog only bounds how long a broken build may take. */
#ifndef QSF_ITEST_WATCHDOG_H
#define QSF_ITEST_WATCHDOG_H

#include <stdbool.h>

/* The bound: no test waits this long for an event unless threads are stuck. */
#define WD_BOUND_S 60

/* cmocka setup / teardown: starts the watchdog, stops it. Past WD_BOUND_S
 * seconds without wd_stop the process ends (status 1) with a line naming
 * the step it was in: cmocka can fail a test only from its own thread,
 * which is the one stuck. */
int wd_start(void **state);
int wd_stop(void **state);

/* What the test waits for now, for the watchdog's line ("waiting for ..."). */
void wd_step(const char *what);

/* Sets *flag to 1 and wakes every waiter. Returns true when it was 0. */
bool wd_raise(int *flag);

/* Waits until *flag is set. */
void wd_await(const int *flag);

#endif
