/* What an open needs of the file system (openable.h), checked without
 * changing anything: the same refusals the open makes (a symlink, a file of
 * the wrong kind, a second hard link, no write permission) found before it. */
#include "sfops/openable.h"

#include "os/os.h"
#include "sf/sfa.h"
#include "sf/slot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct need {
    qsf_slot_inspection *in;
    bool failed;
} need;

static void refuse(need *n, const char *dir, const char *name, const char *why) {
    if (n->failed)
        return;
    n->failed = true;
    n->in->verdict = QSF_E_IO;
    char *m = n->in->verdict_msg;
    size_t cap = sizeof n->in->verdict_msg;
    if (snprintf(m, cap, "%s%s%s %s", dir, dir[0] ? "/" : "", name, why) >= (int) cap)
        memcpy(m + cap - 4, "...", 4); /* cut: says so */
}

/* For this process's effective user: what an open with O_RDWR (or creating
 * entries in a directory) needs. */
static bool may_write(int dirfd, const char *name, bool is_dir) {
    int mode = R_OK | W_OK | (is_dir ? X_OK : 0);
    return faccessat(dirfd, name, mode, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0;
}

/* <dir>/<name> must be a directory (is_dir) or a regular file with one link
 * that this user may write; absent is fine when the open creates it (the
 * caller checks the directory it is created in). */
static void entry(need *n, int dirfd, const char *dir, const char *name, bool is_dir,
                  bool may_be_absent) {
    struct stat st;
    if (n->failed)
        return;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT || !may_be_absent)
            refuse(n, dir, name, errno == ENOENT ? "is missing" : strerror(errno));
        return;
    }
    if (S_ISLNK(st.st_mode))
        refuse(n, dir, name, "is a symbolic link: an open refuses it");
    else if (is_dir && !S_ISDIR(st.st_mode))
        refuse(n, dir, name, "is not a directory: an open cannot use it");
    else if (!is_dir && !S_ISREG(st.st_mode))
        refuse(n, dir, name,
               "is not a regular file (a directory, FIFO or device): an open "
               "refuses it");
    else if (!is_dir && st.st_nlink > 1)
        refuse(n, dir, name, "has more than one hard link: an open refuses it");
    else if (!may_write(dirfd, name, is_dir))
        refuse(n, dir, name,
               is_dir ? "is not writable by this user: an open cannot create its files"
                      : "is not writable by this user: an open needs to write it");
}

static int open_dir(need *n, int atfd, const char *dir, const char *name) {
    int fd = QSF_OS->openat(atfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        refuse(n, dir, name, strerror(errno));
    return fd;
}

/* <sf_dir>/.slot-locks/<slot>.lock: the logical lock every open takes. */
static void logical_lock(need *n, int sfd, const char *sf_dir, const char *slot) {
    entry(n, sfd, sf_dir, QSF_NAME_SLOT_LOCKS, true, true);
    if (n->failed)
        return;
    struct stat st;
    if (fstatat(sfd, QSF_NAME_SLOT_LOCKS, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (!may_write(sfd, ".", true)) /* it is created in sf_dir */
            refuse(n, "", sf_dir,
                   "is not writable by this user: an open cannot create .slot-locks");
        return;
    }
    char shown[QSF_SLOT_PATH_MAX + 16], lock[QSF_SLOT_NAME_MAX + 40];
    snprintf(shown, sizeof shown, "%s/%s", sf_dir, QSF_NAME_SLOT_LOCKS);
    snprintf(lock, sizeof lock, "%s.lock", slot);
    int lfd = open_dir(n, sfd, sf_dir, QSF_NAME_SLOT_LOCKS);
    if (lfd < 0)
        return;
    entry(n, lfd, shown, lock, false, true);
    QSF_OS->close(lfd);
}

/* The files of the slot an open writes, and the slot directory itself. */
static void slot_files(need *n, int dfd, const char *path) {
    static const char *const side[] = {QSF_NAME_LOCK, QSF_NAME_WATERMARK, QSF_NAME_MANIFEST,
                                       QSF_NAME_SYMDICT};
    entry(n, dfd, path, ".", true, false);
    if (n->failed) /* "." is the directory itself: name it */
        snprintf(n->in->verdict_msg, sizeof n->in->verdict_msg,
                 "slot directory %.400s is not writable by this user: an open cannot write its "
                 "files",
                 path);
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++)
        entry(n, dfd, path, side[i], false, true);
    const qsf_slot_inspection *in = n->in;
    for (uint32_t i = 0; i < in->nfiles; i++)
        if (in->files[i].live && in->files[i].info.active)
            entry(n, dfd, path, in->files[i].info.name, false, false);
}

/* A rewrite keeps a copy as <name>.corrupt[-N]: the name must fit. */
static void copy_names(need *n, const char *path) {
    const qsf_slot_inspection *in = n->in;
    for (uint32_t i = 0; i < in->nfiles && in->rewrites; i++)
        if (strlen(in->files[i].info.name) + sizeof ".corrupt-64" - 1 > NAME_MAX)
            refuse(n, path, in->files[i].info.name,
                   "would be rewritten, but the name of its .corrupt copy is longer than 255 "
                   "bytes: the open would fail");
}

/* An owner's open sets an unreplayable slot aside as <slot>.unreplayable-<N>. */
static void set_aside_name(need *n, int sfd, const char *sf_dir, const char *slot) {
    if (!n->in->unreplayable)
        return;
    for (int i = 1; i <= QSF_MAX_QUARANTINE_ATTEMPTS; i++) {
        char name[QSF_SLOT_NAME_MAX + 40];
        struct stat st;
        snprintf(name, sizeof name, "%s.unreplayable-%d", slot, i);
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
            return;
    }
    char why[300];
    snprintf(why, sizeof why,
             ".unreplayable-1..%d are all taken: an open could not set the slot aside",
             QSF_MAX_QUARANTINE_ATTEMPTS);
    refuse(n, sf_dir, slot, why);
}

/* <sf_dir> and <slot> from a path: trailing '/' are no component. */
static bool split(const char *path, char *sf_dir, char *slot) {
    char p[QSF_SLOT_PATH_MAX];
    int len = snprintf(p, sizeof p, "%s", path);
    if (len <= 0 || len >= (int) sizeof p)
        return false;
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    char *slash = strrchr(p, '/');
    const char *name = slash ? slash + 1 : p;
    if (strlen(name) > QSF_SLOT_NAME_MAX + 20)
        return false;
    snprintf(slot, QSF_SLOT_NAME_MAX + 21, "%s", name);
    if (!slash)
        snprintf(sf_dir, QSF_SLOT_PATH_MAX, ".");
    else if (slash == p)
        snprintf(sf_dir, QSF_SLOT_PATH_MAX, "/");
    else
        snprintf(sf_dir, QSF_SLOT_PATH_MAX, "%.*s", (int) (slash - p), p);
    return true;
}

void qsf_slot_open_verdict(const char *slot_path, qsf_slot_inspection *in) {
    need n = {.in = in};
    char sf_dir[QSF_SLOT_PATH_MAX], slot[QSF_SLOT_NAME_MAX + 21];
    if (in->verdict != QSF_OK || !split(slot_path, sf_dir, slot))
        return;
    int sfd = open_dir(&n, AT_FDCWD, "", sf_dir);
    if (sfd < 0)
        return;
    entry(&n, sfd, sf_dir, slot, true, false);
    logical_lock(&n, sfd, sf_dir, slot);
    set_aside_name(&n, sfd, sf_dir, slot);
    int dfd = n.failed ? -1 : open_dir(&n, sfd, sf_dir, slot);
    QSF_OS->close(sfd);
    if (dfd < 0)
        return;
    slot_files(&n, dfd, slot_path);
    copy_names(&n, slot_path);
    QSF_OS->close(dfd);
}
