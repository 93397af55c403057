/* The failure path of qsf_assert (qsf_assert.h). */
#include "qsf_assert.h"

#ifdef QSF_ASSERTS
#include <stdio.h>
#include <stdlib.h>

void qsf_assert_fail(const char *rule, const char *file, int line) {
    fprintf(stderr, "qsf: broken rule at %s:%d: %s\n", file, line, rule);
    abort();
}
#endif
