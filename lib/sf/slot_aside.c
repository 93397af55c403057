/* The cap on slots set aside (docs/FORMAT.md §5.6): before a slot is renamed
 * to <slot>.unreplayable-<N>, the oldest of its earlier set-aside slots (by
 * the time they were set aside, their ctime) are removed, each with a log
 * line, so that at most QSF_MAX_SET_ASIDE_KEPT remain. Without it the 65th
 * set-aside of one slot found every name taken and the open failed, as the
 * .corrupt files did before their cap (slot.c). A set-aside slot in use (an
 * operator draining it holds its .lock) or holding anything but files is
 * left alone. */
#include "sf/slot.h"

#include "log.h"
#include "os/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

/* "<slot>.unreplayable-<digits>" for arg = the slot's name */
static bool is_set_aside_of(const char *name, const void *arg) {
    static const char mark[] = ".unreplayable-";
    const char *slot = arg;
    size_t n = strlen(slot);
    if (strncmp(name, slot, n) != 0 || strncmp(name + n, mark, sizeof mark - 1) != 0)
        return false;
    const char *d = name + n + sizeof mark - 1;
    return *d && strspn(d, "0123456789") == strlen(d);
}

/* Unlinks every entry of the directory dfd (its .lock last, while held);
 * fails with ENOTEMPTY at a subdirectory. Closes dfd. */
static int empty_dir(int dfd) {
    int fd = QSF_OS->openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    DIR *d = fd >= 0 ? QSF_OS->fdopendir(fd) : NULL;
    int rc = d ? 0 : -1;
    for (struct dirent *e; rc == 0 && d && (e = QSF_OS->readdir(d)) != NULL;) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, ".lock") == 0)
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            rc = -1;
        else if (S_ISDIR(st.st_mode)) { /* not what a slot holds: leave it all */
            errno = ENOTEMPTY;
            rc = -1;
        } else if (QSF_OS->unlinkat(dfd, e->d_name, 0) != 0)
            rc = -1;
    }
    if (d)
        QSF_OS->closedir(d);
    else if (fd >= 0)
        QSF_OS->close(fd);
    if (rc == 0 && QSF_OS->unlinkat(dfd, ".lock", 0) != 0 && errno != ENOENT)
        rc = -1;
    QSF_OS->close(dfd);
    return rc;
}

/* Removes one set-aside slot unless someone holds its lock. */
static int remove_set_aside(const qsf_slot *s, const char *name) {
    int dfd = QSF_OS->openat(s->sf_dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (dfd < 0)
        return -1;
    int lk = QSF_OS->openat(dfd, ".lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (lk >= 0 && QSF_OS->flock(lk, LOCK_EX | LOCK_NB) != 0) {
        QSF_OS->close(lk);
        QSF_OS->close(dfd);
        errno = EBUSY;
        return -1;
    }
    int rc = empty_dir(dfd);
    if (rc == 0)
        rc = QSF_OS->unlinkat(s->sf_dirfd, name, AT_REMOVEDIR);
    if (lk >= 0)
        QSF_OS->close(lk);
    return rc;
}

uint32_t qsf_slot_prune_set_aside(const qsf_slot *s, uint32_t keep) {
    qsf_aged_name *v;
    uint32_t n, removed = 0;
    if (qsf_list_newest_first(s->sf_dirfd, is_set_aside_of, s->name, S_IFDIR, &v, &n) != 0) {
        QSF_LOGW("cannot list the set-aside slots of %s in %s: %s", s->name, s->sf_dir,
                 strerror(errno));
        free(v);
        return 0;
    }
    for (uint32_t i = keep; i < n; i++) {
        if (remove_set_aside(s, v[i].name) == 0) {
            QSF_LOGW("removed %s/%s: only the newest %d slots set aside are kept", s->sf_dir,
                     v[i].name, QSF_MAX_SET_ASIDE_KEPT);
            removed++;
        } else
            QSF_LOGW("cannot remove %s/%s: %s", s->sf_dir, v[i].name, strerror(errno));
    }
    free(v);
    return removed;
}
