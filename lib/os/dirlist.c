/* The one sorted directory listing (dirlist.h). */
#include "os/dirlist.h"

#include "grow.h"
#include "os/os.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    char **v;
    uint32_t n, cap;
} names;

static int push_name(names *ns, const char *name) {
    if (ns->n == ns->cap) {
        char **v = qsf_grow(ns->v, &ns->cap, 16);
        if (!v)
            return -1;
        ns->v = v;
    }
    char *c = strdup(name);
    if (!c)
        return -1;
    ns->v[ns->n++] = c;
    return 0;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *) a, *(char *const *) b);
}

int qsf_dir_list_sorted(DIR *d, qsf_dir_keep_fn keep, void *arg, char ***out, uint32_t *n) {
    names ns = {0};
    int rc = 0, e = 0;
    struct dirent *de;
    errno = 0; /* readdir's end and its failure look alike but for errno */
    while ((de = QSF_OS->readdir(d)) != NULL) {
        if (keep(dirfd(d), de, arg) && push_name(&ns, de->d_name) != 0) {
            rc = -1;
            e = ENOMEM;
            break;
        }
        errno = 0;
    }
    if (rc == 0 && errno != 0) {
        rc = -1;
        e = errno;
    }
    if (ns.n > 1)
        qsort(ns.v, ns.n, sizeof *ns.v, cmp_name);
    *out = ns.v;
    *n = ns.n;
    errno = e;
    return rc;
}

void qsf_dir_names_free(char **names, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
