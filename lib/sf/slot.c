/* Slot directory, locks, markers and quarantine (slot.h;
 * docs/FORMAT.md §1, §5.1-§5.4, §5.6). */
#include "sf/slot.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/segfmt.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

/* ---- names ---- */

int qsf_sender_id_check(const char *id, qsf_errinfo *err) {
    size_t n = strlen(id);
    if (n == 0 || n > QSF_SLOT_NAME_MAX)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sender_id must be 1..%d bytes long, got %zu",
                           QSF_SLOT_NAME_MAX, n);
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok)
            return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                               "sender_id \"%s\" has an invalid byte at position %zu (only "
                               "letters, digits, '_' and '-' are allowed)",
                               id, i);
    }
    return QSF_OK;
}

bool qsf_slot_dir_name(const char *name, bool *quarantined) {
    static const char mark[] = ".unreplayable-";
    *quarantined = false;
    const char *dot = strstr(name, mark);
    if (!dot)
        return name[0] != '.' && qsf_sender_id_check(name, NULL) == QSF_OK;
    const char *n = dot + sizeof mark - 1;
    size_t digits = strspn(n, "0123456789");
    char id[QSF_SLOT_NAME_MAX + 1];
    size_t idlen = (size_t) (dot - name);
    if (digits == 0 || digits > 2 || n[digits] != '\0' || idlen == 0 || idlen > QSF_SLOT_NAME_MAX)
        return false;
    memcpy(id, name, idlen);
    id[idlen] = '\0';
    *quarantined = true;
    return qsf_sender_id_check(id, NULL) == QSF_OK;
}

/* ---- locks ---- */

/* "<pid>" from <dir>/<name>.pid (at most 64 bytes, digits only), or "unknown". */
static void read_holder(int dirfd, const char *name, char out[32]) {
    char pidname[QSF_SLOT_NAME_MAX + 16], buf[65] = {0};
    snprintf(out, 32, "unknown");
    snprintf(pidname, sizeof pidname, "%s.pid", name);
    int fd = qsf_open_regular(dirfd, pidname, O_RDONLY, NULL);
    if (fd < 0)
        return;
    size_t got = 0;
    qsf_pread_full(fd, buf, 64, 0, &got);
    QSF_OS->close(fd);
    size_t n = strspn(buf, "0123456789");
    if (n > 0 && n < 20)
        snprintf(out, 32, "%.*s", (int) n, buf);
}

/* Rewrites <dir>/<name>.pid with "<pid>\n". Diagnostics only: a failure is
 * logged, except a hard link (the name may be another file's, outside the
 * slot): that fails the lock, with nothing written. */
static int write_pid(int dirfd, const char *dir_path, const char *name, qsf_errinfo *err) {
    char pidname[QSF_SLOT_NAME_MAX + 16], line[32];
    snprintf(pidname, sizeof pidname, "%s.pid", name);
    int n = snprintf(line, sizeof line, "%ld\n", (long) getpid());
    int fd = qsf_open_regular(dirfd, pidname, O_WRONLY | O_CREAT | O_TRUNC, NULL);
    if (fd < 0 && errno == EMLINK)
        return qsf_file_err(err, errno, "cannot write", dir_path, pidname);
    if (fd < 0 || qsf_pwrite_full(fd, line, (size_t) n, 0) != 0)
        QSF_LOGW("cannot write %s/%s: %s", dir_path, pidname, strerror(errno));
    if (fd >= 0)
        QSF_OS->close(fd);
    return QSF_OK;
}

int qsf_lock_file(int dirfd, const char *dir_path, const char *name, const char *what, int *fd_out,
                  qsf_errinfo *err) {
    *fd_out = -1;
    int fd = qsf_open_regular(dirfd, name, O_RDWR | O_CREAT, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot open lock file", dir_path, name);
    if (QSF_OS->flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        QSF_OS->close(fd);
        if (e != EWOULDBLOCK)
            return qsf_file_err(err, e, "cannot lock", dir_path, name);
        char holder[32];
        read_holder(dirfd, name, holder);
        return qsf_err_set(err, QSF_E_LOCKED, QSF_ERRF_RETRIABLE, e,
                           "sf slot already in use by another process [slot=%s, holder=pid=%s]",
                           what, holder);
    }
    int rc = write_pid(dirfd, dir_path, name, err);
    if (rc != QSF_OK) {
        QSF_OS->close(fd);
        return rc;
    }
    *fd_out = fd;
    return QSF_OK;
}

/* The directory holding the last component of `path`. Trailing '/' do not
 * form a component: "/a/b/" -> "/a", "b" -> ".", "/b" -> "/". */
static void parent_of(const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s", path);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
    char *slash = strrchr(out, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == out)
        slash[1] = '\0';
    else
        *slash = '\0';
}

/* fsync of the directory holding a new entry, so the entry survives a host
 * crash (everything fsynced inside a directory is lost with its entry). */
static int sync_parent(int atfd, const char *name, const char *shown, qsf_errinfo *err) {
    char parent[QSF_SLOT_PATH_MAX];
    int fd = atfd;
    if (atfd == AT_FDCWD) {
        parent_of(name, parent, sizeof parent);
        fd = QSF_OS->open(parent, DIR_FLAGS, 0);
        if (fd < 0)
            return qsf_err_set(err, QSF_E_IO, 0, errno, "cannot open directory %s: %s", parent,
                               strerror(errno));
    }
    char shown_parent[QSF_SLOT_PATH_MAX + 4];
    snprintf(shown_parent, sizeof shown_parent, "%s/..", shown);
    int rc = qsf_fsync_dir(fd, shown_parent, err);
    if (fd != atfd)
        QSF_OS->close(fd);
    return rc;
}

/* mkdir that accepts an existing directory and makes a new one durable. */
static int ensure_dir(int atfd, const char *name, const char *shown, qsf_errinfo *err) {
    if (QSF_OS->mkdirat(atfd, name, 0700) == 0)
        return sync_parent(atfd, name, shown, err);
    if (errno == EEXIST)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_IO, 0, e, "cannot create directory %s: %s%s", shown, strerror(e),
                       e == ENOENT ? " (its parent must exist; sf_dir is created one level only)"
                                   : "");
}

static int open_dir(int atfd, const char *name, const char *shown, int *fd, qsf_errinfo *err) {
    *fd = QSF_OS->openat(atfd, name, DIR_FLAGS | (atfd == AT_FDCWD ? 0 : O_NOFOLLOW), 0);
    if (*fd >= 0)
        return QSF_OK;
    int e = errno;
    return qsf_err_set(err, QSF_E_IO, 0, e, "cannot open directory %s: %s", shown,
                       (e == ELOOP || e == ENOTDIR) ? "not a directory or a symbolic link (refused)"
                                                    : strerror(e));
}

int qsf_slot_lock_logical(qsf_slot *s, qsf_errinfo *err) {
    if (s->logical_lock_fd >= 0)
        return QSF_OK;
    char shown[QSF_SLOT_PATH_MAX + 16], lockname[QSF_SLOT_NAME_MAX + 8];
    snprintf(shown, sizeof shown, "%s/%s", s->sf_dir, QSF_NAME_SLOT_LOCKS);
    snprintf(lockname, sizeof lockname, "%s.lock", s->name);
    int rc = ensure_dir(s->sf_dirfd, QSF_NAME_SLOT_LOCKS, shown, err);
    int lfd = -1;
    if (rc == QSF_OK)
        rc = open_dir(s->sf_dirfd, QSF_NAME_SLOT_LOCKS, shown, &lfd, err);
    if (rc == QSF_OK)
        rc = qsf_lock_file(lfd, shown, lockname, s->path, &s->logical_lock_fd, err);
    if (lfd >= 0)
        QSF_OS->close(lfd);
    return rc;
}

void qsf_slot_unlock_logical(qsf_slot *s) {
    if (s->logical_lock_fd >= 0)
        QSF_OS->close(s->logical_lock_fd);
    s->logical_lock_fd = -1;
}

/* Creates (if needed) and opens the slot directory, then takes its .lock. */
static int open_slot_dir(qsf_slot *s, qsf_errinfo *err) {
    int rc = ensure_dir(s->sf_dirfd, s->name, s->path, err);
    if (rc == QSF_OK)
        rc = open_dir(s->sf_dirfd, s->name, s->path, &s->dirfd, err);
    if (rc == QSF_OK)
        rc = qsf_lock_file(s->dirfd, s->path, QSF_NAME_LOCK, s->path, &s->lock_fd, err);
    return rc;
}

static int slot_init(const char *sf_dir, const char *id, qsf_slot *s, qsf_errinfo *err) {
    memset(s, 0, sizeof *s);
    s->sf_dirfd = s->dirfd = s->logical_lock_fd = s->lock_fd = -1;
    if (!sf_dir || !*sf_dir)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sf_dir is empty");
    int rc = qsf_sender_id_check(id, err);
    if (rc != QSF_OK)
        return rc;
    snprintf(s->name, sizeof s->name, "%s", id);
    int n1 = snprintf(s->sf_dir, sizeof s->sf_dir, "%s", sf_dir);
    int n2 = snprintf(s->path, sizeof s->path, "%s/%s", sf_dir, id);
    if (n1 >= (int) sizeof s->sf_dir || n2 + 32 >= (int) sizeof s->path)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sf_dir path is too long (%d bytes)", n1);
    return QSF_OK;
}

int qsf_slot_acquire(const char *sf_dir, const char *sender_id, qsf_slot *s, qsf_errinfo *err) {
    int rc = slot_init(sf_dir, sender_id ? sender_id : "default", s, err);
    if (rc == QSF_OK)
        rc = ensure_dir(AT_FDCWD, sf_dir, sf_dir, err);
    if (rc == QSF_OK)
        rc = open_dir(AT_FDCWD, sf_dir, sf_dir, &s->sf_dirfd, err);
    if (rc == QSF_OK)
        rc = qsf_slot_lock_logical(s, err);
    if (rc == QSF_OK)
        rc = open_slot_dir(s, err);
    if (rc != QSF_OK)
        qsf_slot_close(s);
    return rc;
}

static void close_fd(int *fd) {
    if (*fd >= 0)
        QSF_OS->close(*fd);
    *fd = -1;
}

void qsf_slot_close(qsf_slot *s) {
    close_fd(&s->lock_fd);
    close_fd(&s->logical_lock_fd);
    close_fd(&s->dirfd);
    close_fd(&s->sf_dirfd);
}

int qsf_slot_recreate(qsf_slot *s, qsf_errinfo *err) {
    close_fd(&s->lock_fd);
    close_fd(&s->dirfd);
    return open_slot_dir(s, err);
}

/* ---- markers and quarantine ---- */

int qsf_orphan_markers_at(int dirfd, const char *name, bool *failed, bool *segments) {
    *failed = *segments = false;
    int fd = QSF_OS->openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    DIR *d = fd >= 0 ? QSF_OS->fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0)
            QSF_OS->close(fd);
        errno = e;
        return -1;
    }
    struct dirent *de;
    errno = 0; /* readdir's end and its failure look alike but for errno */
    while ((de = QSF_OS->readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (strcmp(de->d_name, QSF_NAME_FAILED) == 0)
            *failed = true;
        else if (n > 4 && qsf_seg_name_is_candidate(de->d_name))
            *segments = true;
        errno = 0;
    }
    int e = errno;
    QSF_OS->closedir(d);
    errno = e;
    return e ? -1 : 0;
}

int qsf_slot_write_failed(int slot_dirfd, const char *slot_path, const char *reason,
                          qsf_errinfo *err) {
    bool existed = faccessat(slot_dirfd, QSF_NAME_FAILED, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    int fd = qsf_open_regular(slot_dirfd, QSF_NAME_FAILED, O_WRONLY | O_CREAT | O_TRUNC, NULL);
    if (fd < 0)
        return qsf_file_err(err, errno, "cannot write", slot_path, QSF_NAME_FAILED);
    char line[1024];
    int n = snprintf(line, sizeof line, "%s\n", reason && *reason ? reason : "drainer failed");
    size_t len = n < (int) sizeof line ? (size_t) n : sizeof line - 1;
    int rc = qsf_write_at(fd, line, len, 0, slot_path, QSF_NAME_FAILED, err);
    if (rc == QSF_OK && QSF_OS->fsync(fd) != 0)
        rc = qsf_file_err(err, errno, "cannot sync", slot_path, QSF_NAME_FAILED);
    QSF_OS->close(fd);
    /* the entry itself must survive a host crash, or orphan scans adopt the slot */
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(slot_dirfd, slot_path, err);
    if (rc != QSF_OK && !existed) /* not durably written: no new marker */
        (void) QSF_OS->unlinkat(slot_dirfd, QSF_NAME_FAILED, 0);
    return rc;
}

/* True if <dir>/<name> exists (any type, a symlink not followed): rename()
 * would silently replace a file or an empty directory, so taken names are
 * skipped explicitly (the slot lock keeps other qsf processes out meanwhile). */
static bool name_taken(int dirfd, const char *name) {
    int fd = QSF_OS->openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_PATH, 0);
    if (fd >= 0) {
        QSF_OS->close(fd);
        return true;
    }
    return errno != ENOENT;
}

/* Renames <dirfd>/<from> to the first free "<from><suffix>-<n>", n = 1..64
 * (plain "<from><suffix>" for n = 1 when bare_first), never replacing an
 * earlier quarantine. The name used is left in `to`. Returns 0, 1 when all 64
 * names are taken, or -1 with errno when the rename fails. */
static int rename_free(int dirfd, const char *from, const char *suffix, bool bare_first, char *to,
                       size_t cap) {
    for (int n = 1; n <= QSF_MAX_QUARANTINE_ATTEMPTS; n++) {
        if (n == 1 && bare_first)
            snprintf(to, cap, "%s%s", from, suffix);
        else
            snprintf(to, cap, "%s%s-%d", from, suffix, n);
        if (name_taken(dirfd, to))
            continue;
        if (QSF_OS->renameat(dirfd, from, dirfd, to) == 0)
            return 0;
        if (errno != EEXIST && errno != ENOTEMPTY)
            return -1;
    }
    return 1;
}

/* ---- the quarantine cap ---- */

/* "<x>.corrupt" or "<x>.corrupt-<digits>": a quarantined file. */
static bool is_quarantined(const char *name) {
    const char *p = strstr(name, ".corrupt");
    while (p && strstr(p + 1, ".corrupt"))
        p = strstr(p + 1, ".corrupt");
    if (!p || p == name)
        return false;
    p += 8;
    if (*p == '\0')
        return true;
    if (*p++ != '-' || *p == '\0')
        return false;
    return strspn(p, "0123456789") == strlen(p);
}

static bool quarantined_match(const char *name, const void *arg) {
    (void) arg;
    return is_quarantined(name);
}

static int aged_newest_first(const void *a, const void *b) {
    const qsf_aged_name *x = a, *y = b;
    if (x->ctime.tv_sec != y->ctime.tv_sec)
        return x->ctime.tv_sec > y->ctime.tv_sec ? -1 : 1;
    if (x->ctime.tv_nsec != y->ctime.tv_nsec)
        return x->ctime.tv_nsec > y->ctime.tv_nsec ? -1 : 1;
    return strcmp(y->name, x->name);
}

int qsf_list_newest_first(int dirfd, bool (*match)(const char *name, const void *arg),
                          const void *arg, unsigned type, qsf_aged_name **out, uint32_t *n) {
    *out = NULL;
    *n = 0;
    int fd = QSF_OS->openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    DIR *d = fd >= 0 ? QSF_OS->fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            QSF_OS->close(fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = QSF_OS->readdir(d)) != NULL && rc == 0) {
        struct stat st;
        if (!match(e->d_name, arg) || strlen(e->d_name) >= sizeof(*out)->name ||
            fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            (st.st_mode & S_IFMT) != type)
            continue;
        qsf_aged_name *m = *n % 16 ? *out : realloc(*out, (*n + 16) * sizeof **out);
        if (!m) {
            rc = -1;
            break;
        }
        *out = m;
        snprintf(m[*n].name, sizeof m[*n].name, "%s", e->d_name);
        m[(*n)++].ctime = st.st_ctim;
    }
    QSF_OS->closedir(d);
    if (rc == 0 && *n > 1)
        qsort(*out, *n, sizeof **out, aged_newest_first);
    return rc;
}

/* Keeps the newest `keep` quarantined files of the slot and removes the
 * others (each logged): no sequence of crashes can fill the names. Returns
 * how many were removed; a failure to list or remove only logs. */
static uint32_t prune_quarantine(int dirfd, const char *slot_path, uint32_t keep) {
    qsf_aged_name *f;
    uint32_t n, removed = 0;
    if (qsf_list_newest_first(dirfd, quarantined_match, NULL, S_IFREG, &f, &n) != 0) {
        QSF_LOGW("cannot list the quarantined files of %s: %s", slot_path, strerror(errno));
        free(f);
        return 0;
    }
    for (uint32_t i = keep; i < n; i++) {
        if (QSF_OS->unlinkat(dirfd, f[i].name, 0) == 0) {
            QSF_LOGW("removed %s/%s: only the newest %d quarantined files are kept", slot_path,
                     f[i].name, QSF_MAX_QUARANTINED_KEPT);
            removed++;
        } else
            QSF_LOGW("cannot remove %s/%s: %s", slot_path, f[i].name, strerror(errno));
    }
    free(f);
    return removed;
}

int qsf_slot_quarantine_file(int slot_dirfd, const char *slot_path, const char *name,
                             uint32_t *pruned, qsf_errinfo *err) {
    uint32_t p = prune_quarantine(slot_dirfd, slot_path, QSF_MAX_QUARANTINED_KEPT - 1);
    if (pruned)
        *pruned += p;
    char to[300];
    int r = rename_free(slot_dirfd, name, ".corrupt", true, to, sizeof to);
    if (r == 0) {
        QSF_LOGW("quarantined %s/%s as %s", slot_path, name, to);
        return qsf_fault_check(QSF_FP_QUARANTINE_RENAMED, err);
    }
    if (r > 0) /* never delete a file because older quarantines fill the names */
        return qsf_err_set(err, QSF_E_IO, 0, 0,
                           "cannot quarantine %s/%s: %s.corrupt and .corrupt-2..%d are all taken",
                           slot_path, name, name, QSF_MAX_QUARANTINE_ATTEMPTS);
    int e = errno;
    QSF_LOGW("cannot rename %s/%s to %s (%s); removing it instead", slot_path, name, to,
             strerror(e));
    if (QSF_OS->unlinkat(slot_dirfd, name, 0) == 0 || errno == ENOENT)
        return QSF_OK;
    return qsf_file_err(err, errno, "cannot quarantine or remove", slot_path, name);
}

/* Creates the first free "<name>.corrupt[-N]" with O_EXCL. */
static int create_free(int dirfd, const char *slot_path, const char *name, char *to, size_t cap,
                       int *fd, qsf_errinfo *err) {
    for (int n = 1; n <= QSF_MAX_QUARANTINE_ATTEMPTS; n++) {
        if (n == 1)
            snprintf(to, cap, "%s.corrupt", name);
        else
            snprintf(to, cap, "%s.corrupt-%d", name, n);
        *fd = QSF_OS->openat(dirfd, to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (*fd >= 0)
            return QSF_OK;
        if (errno != EEXIST)
            return qsf_file_err(err, errno, "cannot create", slot_path, to);
    }
    return qsf_err_set(err, QSF_E_IO, 0, 0,
                       "cannot keep a copy of %s/%s: %s.corrupt and .corrupt-2..%d are all taken",
                       slot_path, name, name, QSF_MAX_QUARANTINE_ATTEMPTS);
}

#define COPY_BUF (64 * 1024)

static int copy_bytes(int in, int out, const char *slot_path, const char *from, const char *to,
                      qsf_errinfo *err) {
    uint8_t *buf = malloc(COPY_BUF);
    if (!buf)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "no memory to copy %s", from);
    int rc = QSF_OK;
    for (uint64_t off = 0; rc == QSF_OK; off += COPY_BUF) {
        size_t got = 0;
        int r = qsf_pread_full(in, buf, COPY_BUF, (off_t) off, &got);
        if (r < 0)
            rc = qsf_file_err(err, errno, "cannot read", slot_path, from);
        else if (got)
            rc = qsf_write_at(out, buf, got, off, slot_path, to, err);
        if (r != 0)
            break;
    }
    free(buf);
    return rc;
}

int qsf_slot_quarantine_copy(int slot_dirfd, const char *slot_path, const char *name, char *copy,
                             size_t cap, uint32_t *pruned, qsf_errinfo *err) {
    uint32_t p = prune_quarantine(slot_dirfd, slot_path, QSF_MAX_QUARANTINED_KEPT - 1);
    if (pruned)
        *pruned += p;
    int in = qsf_open_regular(slot_dirfd, name, O_RDONLY, NULL);
    if (in < 0)
        return qsf_file_err(err, errno, "cannot open", slot_path, name);
    int out = -1;
    int rc = create_free(slot_dirfd, slot_path, name, copy, cap, &out, err);
    if (rc == QSF_OK)
        rc = copy_bytes(in, out, slot_path, name, copy, err);
    if (rc == QSF_OK && QSF_OS->fsync(out) != 0)
        rc = qsf_file_err(err, errno, "cannot sync", slot_path, copy);
    QSF_OS->close(in);
    if (out >= 0)
        QSF_OS->close(out);
    if (rc != QSF_OK && out >= 0)
        QSF_OS->unlinkat(slot_dirfd, copy, 0);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(slot_dirfd, slot_path, err);
    if (rc == QSF_OK)
        QSF_LOGW("kept a copy of %s/%s as %s", slot_path, name, copy);
    return rc;
}

static int rename_slot(qsf_slot *s, char *newname, size_t cap, qsf_errinfo *err) {
    int r = rename_free(s->sf_dirfd, s->name, ".unreplayable", false, newname, cap);
    if (r == 0)
        return qsf_fault_check(QSF_FP_QUARANTINE_RENAMED, err);
    if (r < 0)
        return qsf_err_set(err, QSF_E_IO, 0, errno, "cannot rename slot %s to %s/%s: %s", s->path,
                           s->sf_dir, newname, strerror(errno));
    return qsf_err_set(err, QSF_E_IO, 0, 0,
                       "cannot quarantine slot %s: %s.unreplayable-1..%d are all taken", s->path,
                       s->name, QSF_MAX_QUARANTINE_ATTEMPTS);
}

int qsf_slot_quarantine_slot(qsf_slot *s, const char *reason, char *out_path, size_t cap,
                             qsf_errinfo *err) {
    int rc = qsf_slot_lock_logical(s, err);
    if (rc == QSF_OK)
        rc = qsf_slot_write_failed(s->dirfd, s->path, reason, err);
    if (rc == QSF_OK)
        qsf_slot_prune_set_aside(s, QSF_MAX_SET_ASIDE_KEPT - 1);
    char newname[QSF_SLOT_NAME_MAX + 32];
    if (rc == QSF_OK)
        rc = rename_slot(s, newname, sizeof newname, err);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(s->sf_dirfd, s->sf_dir, err);
    if (rc != QSF_OK)
        return rc;
    /* The slot lock was held across the rename; the quarantined copy is free now. */
    close_fd(&s->lock_fd);
    close_fd(&s->dirfd);
    snprintf(out_path, cap, "%s/%s", s->sf_dir, newname);
    QSF_LOGW("slot %s quarantined as %s: %s", s->path, out_path, reason);
    return QSF_OK;
}
