/* The failure path of qsf_assert (qsf_assert.h). */
#include "qsf_assert.h"

#ifdef QSF_ASSERTS
#include <stdio.h>
#include <stdlib.h>

void qsf_assert_fail(const char *rule, const char *file, int line) {
    fprintf(stderr, "qsf: broken rule at %s:%d: %s\n", file, line, rule);
    abort();
}

bool qsf_mutex_held(pthread_mutex_t *m) {
    if (pthread_mutex_trylock(m) != 0)
        return true;
    pthread_mutex_unlock(m);
    return false;
}
#endif
