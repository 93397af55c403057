/* qsf_assert(cond): a rule the code relies on (a comment says "under mu",
 * "producer only", "never moves back"), checked where it matters. Builds with
 * assertions (-Dasserts, on unless the build type is release or minsize; CI's
 * sanitizer builds have it) abort with the rule, the file and the line when it
 * is broken; other builds compile it out entirely, so a check costs nothing in
 * the library users ship. */
#ifndef QSF_ASSERT_H
#define QSF_ASSERT_H

#ifdef QSF_ASSERTS
void qsf_assert_fail(const char *rule, const char *file, int line) __attribute__((noreturn));
#define qsf_assert(cond) ((cond) ? (void) 0 : qsf_assert_fail(#cond, __FILE__, __LINE__))
#else
#define qsf_assert(cond) ((void) 0)
#endif

#endif
