/* What a directory is to qsf (slotdir.h): one listing of it, and one of each
 * subdirectory when it holds no slot files itself. */
#include "sfops/slotdir.h"

#include "err.h"
#include "os/dirlist.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfa.h"
#include "sf/sfio.h"
#include "sf/slot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one listing found. */
typedef struct listing {
    bool data;       /* a segment or a side file */
    bool lock;       /* .lock */
    bool slot_locks; /* .slot-locks */
    uint32_t subs;   /* slot-named subdirectories holding a slot */
} listing;

typedef int (*entry_fn)(void *user, int dirfd, const struct dirent *de);

/* Opens the directory `name` under atfd for listing (the path an operator
 * gave may be a symlink; a slot inside one never is). */
static int open_listing(int atfd, const char *name, DIR **out, qsf_errinfo *err) {
    int nofollow = atfd == AT_FDCWD ? 0 : O_NOFOLLOW;
    int fd = QSF_OS->openat(atfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | nofollow, 0);
    DIR *d = fd >= 0 ? QSF_OS->fdopendir(fd) : NULL;
    *out = d;
    if (d)
        return QSF_OK;
    int e = errno;
    if (fd >= 0)
        QSF_OS->close(fd);
    return qsf_err_set(err, QSF_E_IO, 0, e, "cannot open directory %s: %s", name, strerror(e));
}

/* Calls fn for every entry of the directory `name` under atfd, stopping at
 * its first non-zero return (QSF_E_NOMEM). */
static int for_each_entry(int atfd, const char *name, entry_fn fn, void *user, qsf_errinfo *err) {
    DIR *d;
    int rc = open_listing(atfd, name, &d, err);
    if (rc != QSF_OK)
        return rc;
    struct dirent *de;
    errno = 0;
    while (rc == QSF_OK && (de = QSF_OS->readdir(d)) != NULL) {
        rc = fn(user, dirfd(d), de);
        errno = 0;
    }
    int e = errno;
    QSF_OS->closedir(d);
    if (rc != QSF_OK)
        return qsf_err_set(err, rc, 0, 0, "no memory to list %s", name);
    return e ? qsf_err_set(err, QSF_E_IO, 0, e, "cannot list directory %s: %s", name, strerror(e))
             : QSF_OK;
}

static int note_entry(void *user, int dirfd, const struct dirent *de) {
    (void) dirfd;
    listing *l = user;
    const char *name = de->d_name;
    if (qsf_seg_name_is_candidate(name) || strcmp(name, QSF_NAME_MANIFEST) == 0 ||
        strcmp(name, QSF_NAME_WATERMARK) == 0 || strcmp(name, QSF_NAME_SYMDICT) == 0)
        l->data = true;
    else if (strcmp(name, QSF_NAME_LOCK) == 0)
        l->lock = true;
    else if (strcmp(name, QSF_NAME_SLOT_LOCKS) == 0)
        l->slot_locks = true;
    return QSF_OK;
}

/* A subdirectory that is a slot or a drained slot. */
static bool is_slot_subdir(int dirfd, const struct dirent *de) {
    bool quarantined;
    if (de->d_type == DT_REG || !qsf_slot_dir_name(de->d_name, &quarantined))
        return false;
    listing l = {0};
    if (for_each_entry(dirfd, de->d_name, note_entry, &l, NULL) != QSF_OK)
        return false;
    return l.data || l.lock;
}

static int note_top_entry(void *user, int dirfd, const struct dirent *de) {
    listing *l = user;
    l->subs += is_slot_subdir(dirfd, de);
    return note_entry(user, dirfd, de);
}

static int kind_of_listing(const listing *l) {
    if (l->data)
        return QSF_DIR_SLOT;
    if (l->lock)
        return QSF_DIR_DRAINED;
    return l->slot_locks || l->subs > 0 ? QSF_DIR_GROUP_ROOT : QSF_DIR_NOT_SLOT;
}

int qsf_dir_kind(const char *path, int *kind, uint32_t *slots, qsf_errinfo *err) {
    listing l = {0};
    int rc = for_each_entry(AT_FDCWD, path, note_top_entry, &l, err);
    *kind = kind_of_listing(&l);
    *slots = *kind == QSF_DIR_GROUP_ROOT ? l.subs : 0;
    return rc;
}

/* ---- the slots of a group root ---- */

static bool keep_slot(int dirfd, const struct dirent *de, void *arg) {
    (void) arg;
    return is_slot_subdir(dirfd, de);
}

int qsf_group_slots(const char *sf_dir, char ***out, uint32_t *n, qsf_errinfo *err) {
    DIR *d;
    *out = NULL;
    *n = 0;
    int rc = open_listing(AT_FDCWD, sf_dir, &d, err);
    if (rc != QSF_OK)
        return rc;
    if (qsf_dir_list_sorted(d, keep_slot, NULL, out, n) != 0) {
        int e = errno;
        rc = e == ENOMEM ? qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to list %s", sf_dir)
                         : qsf_err_set(err, QSF_E_IO, 0, e, "cannot list directory %s: %s", sf_dir,
                                       strerror(e));
        qsf_dir_names_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    QSF_OS->closedir(d);
    return rc;
}

/* ---- markers ---- */

int qsf_slot_read_line(const char *slot_path, const char *name, char *buf, size_t cap) {
    buf[0] = '\0';
    int dfd = QSF_OS->open(slot_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    int fd = dfd >= 0 ? qsf_open_regular(dfd, name, O_RDONLY, NULL) : -1;
    int e = errno;
    if (dfd >= 0)
        QSF_OS->close(dfd);
    if (fd < 0) {
        if (e == ENOENT)
            return 0;
        snprintf(buf, cap, "(unreadable: %s)",
                 e == EINVAL  ? "not a regular file"
                 : e == ELOOP ? "a symbolic link"
                              : strerror(e));
        errno = e;
        return -1;
    }
    ssize_t n = QSF_OS->pread(fd, buf, cap - 1, 0);
    e = errno;
    QSF_OS->close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (n < 0) {
        snprintf(buf, cap, "(unreadable: %s)", strerror(e));
        errno = e;
        return -1;
    }
    return 1;
}
