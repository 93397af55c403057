/* qsf_assert(cond): a rule the code relies on (a comment says "under mu",
 * "producer only", "never moves back"), checked where it matters. Builds with
 * assertions (-Dasserts, on unless the build type is release or minsize; CI's
 * sanitizer builds have it) abort with the rule, the file and the line when it
 * is broken; other builds compile it out entirely, so a check costs nothing in
 * the library users ship. */
#ifndef QSF_ASSERT_H
#define QSF_ASSERT_H

#ifdef QSF_ASSERTS
#include <pthread.h>
#include <stdbool.h>

void qsf_assert_fail(const char *rule, const char *file, int line) __attribute__((noreturn));
#define qsf_assert(cond) ((cond) ? (void) 0 : qsf_assert_fail(#cond, __FILE__, __LINE__))
/* Whether mutex m is locked (by this thread, where the rule says "under m";
 * another thread holding it at that moment passes too, so a check of it can
 * miss a broken rule but never reports a kept one). A default mutex only. */
bool qsf_mutex_held(pthread_mutex_t *m);
/* "under m": qsf_assert_held(&r->mu), also through a const object. */
#define qsf_assert_held(m) qsf_assert(qsf_mutex_held((pthread_mutex_t *) (m)))
#else
#define qsf_assert(cond)   ((void) 0)
#define qsf_assert_held(m) ((void) 0)
#endif

#endif
