/* Host-loss simulation for the crash tests (see shadow.h). */
#include "shadow.h"

#include "sf/sfa.h"

#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char slot[512], shadow[512];

void shadow_init(const char *slot_dir, const char *shadow_dir) {
    snprintf(slot, sizeof slot, "%s", slot_dir);
    snprintf(shadow, sizeof shadow, "%s", shadow_dir);
    mkdir(shadow, 0700);
}

static pthread_mutex_t shadow_mu = PTHREAD_MUTEX_INITIALIZER;

static bool is_lock_name(const char *n) {
    return strcmp(n, QSF_NAME_LOCK) == 0 || strcmp(n, QSF_NAME_LOCK_PID) == 0;
}

/* Copies through a temporary name and renames it into place, so a SIGKILL in
 * the middle of a shadow update (the parent kills the child at any moment)
 * leaves the previous durable copy, never a torn one. */
static void copy_file(const char *from, const char *to, bool zeros) {
    int in = open(from, O_RDONLY);
    if (in < 0)
        return;
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.shadow-tmp", to);
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    struct stat st;
    fstat(in, &st);
    static char buf[1 << 16];
    for (off_t off = 0; off < st.st_size;) {
        ssize_t n =
            zeros ? (st.st_size - off < (off_t) sizeof buf ? st.st_size - off : (off_t) sizeof buf)
                  : pread(in, buf, sizeof buf, off);
        if (zeros)
            memset(buf, 0, (size_t) n);
        if (n <= 0 || pwrite(out, buf, (size_t) n, off) != n)
            break;
        off += n;
    }
    close(in);
    close(out);
    rename(tmp, to);
}

/* Renames inside the slot since the last directory sync, in order. */
static struct { char from[256], to[256]; } renames[64];
static int nrenames;

static void apply_renames(void) {
    char a[1024], b[1024], live[1024];
    for (int i = 0; i < nrenames; i++) {
        snprintf(a, sizeof a, "%.511s/%.255s", shadow, renames[i].from);
        snprintf(b, sizeof b, "%.511s/%.255s", shadow, renames[i].to);
        snprintf(live, sizeof live, "%.511s/%.255s", slot, renames[i].to);
        if (access(a, F_OK) == 0)
            rename(a, b);
        else /* never synced under its old name: only the preallocation */
            copy_file(live, b, true);
    }
    nrenames = 0;
}

/* Directory fsync: renames and unlinks become durable; names created since
 * appear with whatever content was synced (zeros if none: only the
 * preallocation). */
static void shadow_dir_synced(void) {
    apply_renames();
    DIR *d = opendir(shadow);
    struct dirent *e;
    char a[1024], b[1024];
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_REG)
            continue;
        snprintf(a, sizeof a, "%s/%s", slot, e->d_name);
        snprintf(b, sizeof b, "%s/%s", shadow, e->d_name);
        if (access(a, F_OK) != 0)
            unlink(b);
    }
    if (d)
        closedir(d);
    d = opendir(slot);
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_REG || is_lock_name(e->d_name))
            continue;
        snprintf(a, sizeof a, "%s/%s", slot, e->d_name);
        snprintf(b, sizeof b, "%s/%s", shadow, e->d_name);
        if (access(b, F_OK) != 0)
            copy_file(a, b, true);
    }
    if (d)
        closedir(d);
}

static void shadow_file_synced(int fd) {
    char link[64], path[1024], copy[1024], to[1024];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return;
    path[n] = 0;
    snprintf(copy, sizeof copy, "%s", path);
    if (strstr(path, "(deleted)") || strcmp(dirname(copy), slot) != 0)
        return;
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(to, sizeof to, "%s/%s", shadow, basename(copy));
    if (!is_lock_name(basename(copy)))
        copy_file(path, to, false);
}

static void shadow_synced(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return;
    pthread_mutex_lock(&shadow_mu);
    if (S_ISDIR(st.st_mode))
        shadow_dir_synced();
    else
        shadow_file_synced(fd);
    pthread_mutex_unlock(&shadow_mu);
}

int shadow_fsync(int fd) {
    int rc = fsync(fd);
    if (rc == 0)
        shadow_synced(fd);
    return rc;
}

/* The slot-relative name of a path given to renameat (dirfd the slot's, or
 * AT_FDCWD with the slot's path), NULL when it is not in the slot. */
static const char *in_slot(int dirfd, const char *p) {
    char link[64], dir[1024];
    if (dirfd == AT_FDCWD) {
        size_t n = strlen(slot);
        return strncmp(p, slot, n) == 0 && p[n] == '/' ? p + n + 1 : NULL;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, dir, sizeof dir - 1);
    if (n <= 0)
        return NULL;
    dir[n] = 0;
    return strcmp(dir, slot) == 0 && !strchr(p, '/') ? p : NULL;
}

int shadow_renameat(int olddir, const char *oldp, int newdir, const char *newp) {
    int rc = renameat(olddir, oldp, newdir, newp);
    const char *from = in_slot(olddir, oldp), *to = in_slot(newdir, newp);
    pthread_mutex_lock(&shadow_mu);
    if (rc == 0 && from && to && nrenames < 64) {
        snprintf(renames[nrenames].from, sizeof renames[0].from, "%s", from);
        snprintf(renames[nrenames].to, sizeof renames[0].to, "%s", to);
        nrenames++;
    }
    pthread_mutex_unlock(&shadow_mu);
    return rc;
}

int shadow_fdatasync(int fd) {
    int rc = fdatasync(fd);
    if (rc == 0)
        shadow_synced(fd);
    return rc;
}

/* After the kill: the slot becomes exactly its durable shadow. */
void shadow_restore(void) {
    DIR *d = opendir(slot);
    struct dirent *e;
    char a[1024], b[1024];
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_REG || is_lock_name(e->d_name))
            continue;
        snprintf(a, sizeof a, "%s/%s", slot, e->d_name);
        unlink(a);
    }
    if (d)
        closedir(d);
    d = opendir(shadow);
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_REG || strstr(e->d_name, ".shadow-tmp"))
            continue;
        snprintf(a, sizeof a, "%s/%s", shadow, e->d_name);
        snprintf(b, sizeof b, "%s/%s", slot, e->d_name);
        copy_file(a, b, false);
    }
    if (d)
        closedir(d);
}

/* ---- a power cut that lets some unsynced pages through ---- */

static uint8_t *slurp(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    uint8_t *b = malloc((size_t) st.st_size + 1);
    *len = (size_t) st.st_size;
    if (b && pread(fd, b, *len, 0) != (ssize_t) *len) {
        free(b);
        b = NULL;
    }
    close(fd);
    return b;
}

/* Each unit-sized piece of the durable copy `dur`, as `pick` decides. */
static void mix(uint8_t *dur, size_t dlen, const uint8_t *live, size_t llen, const char *name,
                uint64_t ino, size_t unit, shadow_pick_fn pick, void *user) {
    size_t n = dlen < llen ? dlen : llen;
    for (size_t off = 0; off < n; off += unit)
        pick(user, name, ino, off, dur + off, live + off, n - off < unit ? n - off : unit);
}

static uint64_t inode_of(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t) st.st_ino : 0;
}

void shadow_restore_picked(size_t unit, shadow_pick_fn pick, void *user) {
    char live_dir[600];
    snprintf(live_dir, sizeof live_dir, "%s.live", slot);
    rename(slot, live_dir);
    mkdir(slot, 0700);
    DIR *d = opendir(shadow);
    struct dirent *e;
    char a[1100], b[1100];
    while (d && (e = readdir(d))) {
        if (e->d_type != DT_REG || strstr(e->d_name, ".shadow-tmp"))
            continue;
        snprintf(a, sizeof a, "%s/%s", shadow, e->d_name);
        snprintf(b, sizeof b, "%s/%s", live_dir, e->d_name);
        size_t dl = 0, ll = 0;
        uint8_t *dur = slurp(a, &dl), *live = slurp(b, &ll);
        if (dur && live)
            mix(dur, dl, live, ll, e->d_name, inode_of(b), unit, pick, user);
        snprintf(b, sizeof b, "%s/%s", slot, e->d_name);
        int fd = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0 && dur && dl)
            (void) !pwrite(fd, dur, dl, 0);
        if (fd >= 0)
            close(fd);
        free(dur);
        free(live);
    }
    if (d)
        closedir(d);
    /* the lock files (and whatever else is not a slot file) come back as they are */
    snprintf(a, sizeof a, "%s/%s", live_dir, QSF_NAME_LOCK);
    snprintf(b, sizeof b, "%s/%s", slot, QSF_NAME_LOCK);
    rename(a, b);
    snprintf(a, sizeof a, "%s/%s", live_dir, QSF_NAME_LOCK_PID);
    snprintf(b, sizeof b, "%s/%s", slot, QSF_NAME_LOCK_PID);
    rename(a, b);
    d = opendir(live_dir);
    while (d && (e = readdir(d))) {
        snprintf(a, sizeof a, "%s/%s", live_dir, e->d_name);
        unlink(a);
    }
    if (d)
        closedir(d);
    rmdir(live_dir);
}

typedef struct keep_some {
    unsigned keep, *seed;
} keep_some;

static void pick_final_or_synced(void *user, const char *name, uint64_t ino, size_t off,
                                 uint8_t *dur, const uint8_t *live, size_t k) {
    (void) name;
    (void) ino;
    (void) off;
    keep_some *ks = user;
    if (memcmp(dur, live, k) != 0 && (unsigned) (rand_r(ks->seed) % 100) < ks->keep)
        memcpy(dur, live, k);
}

void shadow_restore_mixed(size_t unit, unsigned keep_percent, unsigned *seed) {
    keep_some ks = {keep_percent, seed};
    shadow_restore_picked(unit, pick_final_or_synced, &ks);
}
