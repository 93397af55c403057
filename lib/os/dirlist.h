/* The one sorted listing of a directory (an sf_dir's slots, a slot's files):
 * the names of the entries a filter keeps, in strcmp order, so that what is
 * done with them never depends on the order the filesystem returns them in. */
#ifndef QSF_DIRLIST_H
#define QSF_DIRLIST_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

/* Whether to list the entry de of the directory dirfd. */
typedef bool (*qsf_dir_keep_fn)(int dirfd, const struct dirent *de, void *arg);

/* Reads every entry of d (through the syscall table; d stays open, the
 * caller closes it) and returns in *names (malloc'd, each name malloc'd) the
 * *n names keep accepted, sorted. 0, or -1 with errno: ENOMEM, or readdir's
 * error; *names then holds, sorted, those listed before it. Free *names with
 * qsf_dir_names_free either way. */
int qsf_dir_list_sorted(DIR *d, qsf_dir_keep_fn keep, void *arg, char ***names, uint32_t *n);

/* Frees a listing of n names. NULL is a no-op. */
void qsf_dir_names_free(char **names, uint32_t n);

#endif
