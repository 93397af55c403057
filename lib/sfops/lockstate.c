/* Who holds a slot's lock (lockstate.h), read from /proc/locks:
 *
 *   1: FLOCK  ADVISORY  WRITE 22195 fe:00:10953520 0 EOF
 *      type   mode      kind  pid   major:minor:inode (hex:hex:decimal)
 *
 * Lines of waiters ("1: -> FLOCK ...") read "->" as their type: skipped. */
#include "sfops/lockstate.h"

#include "os/os.h"
#include "sf/sfa.h"
#include "sfops/slotdir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define LOCKS_MAX (1u << 20) /* the table is read up to this size */

/* The holder of the flock on (dev, ino) in the table text, 0 if none. */
static long holder_in(const char *text, dev_t dev, ino_t ino) {
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += line != NULL) {
        char type[16], kind[16];
        long pid;
        unsigned maj, min;
        uintmax_t inode;
        if (sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%ju", type, kind, &pid, &maj, &min,
                   &inode) == 6 &&
            strcmp(type, "FLOCK") == 0 && maj == major(dev) && min == minor(dev) &&
            inode == (uintmax_t) ino)
            return pid;
    }
    return 0;
}

/* The whole of /proc/locks (NUL-terminated, malloc'd), NULL when unreadable. */
static char *read_table(void) {
    int fd = QSF_OS->open("/proc/locks", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    for (ssize_t got = 1; buf && got > 0 && n < LOCKS_MAX;) {
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        got = QSF_OS->pread(fd, buf + n, cap - n, (off_t) n);
        if (got < 0) {
            free(buf);
            buf = NULL;
        } else
            n += (size_t) got;
    }
    QSF_OS->close(fd);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The pid in .lock.pid, read through the regular-file opener: a FIFO planted
 * under that name must not stall a monitoring run. */
static long read_pid_file(const char *slot_path) {
    char line[32];
    if (qsf_slot_read_line(slot_path, QSF_NAME_LOCK_PID, line, sizeof line) != 1)
        return 0;
    size_t digits = strspn(line, "0123456789");
    return digits > 0 && digits < 19 ? strtol(line, NULL, 10) : 0;
}

static bool alive(long pid) {
    return pid > 0 && (kill((pid_t) pid, 0) == 0 || errno == EPERM);
}

void qsf_slot_lock_state(const char *slot_path, qsf_lock_state *out) {
    memset(out, 0, sizeof *out);
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", slot_path, QSF_NAME_LOCK);
    struct stat st;
    out->lock_file = lstat(p, &st) == 0 && S_ISREG(st.st_mode);
    out->pid_file = read_pid_file(slot_path);
    out->pid_alive = alive(out->pid_file);
    char *table = out->lock_file ? read_table() : NULL;
    out->known = table != NULL || !out->lock_file; /* no lock file: nobody can hold it */
    if (table) {
        out->holder_pid = holder_in(table, st.st_dev, st.st_ino);
        out->held = out->holder_pid != 0;
    }
    free(table);
}

void qsf_lock_state_describe(const qsf_lock_state *ls, char *buf, size_t cap) {
    if (!ls->known)
        snprintf(buf, cap, "unknown (/proc/locks unreadable; last holder pid %ld, %s)",
                 ls->pid_file, ls->pid_alive ? "running" : "not running");
    else if (ls->held)
        snprintf(buf, cap, "held by pid %ld (%s)", ls->holder_pid,
                 alive(ls->holder_pid) ? "running" : "not visible from here");
    else if (ls->pid_file)
        snprintf(buf, cap, "free (last holder pid %ld, %s)", ls->pid_file,
                 ls->pid_alive ? "running: it released the slot, or the pid was reused"
                               : "not running");
    else
        snprintf(buf, cap, "free%s", ls->lock_file ? "" : " (never locked)");
}
