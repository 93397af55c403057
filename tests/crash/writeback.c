/* Intermediate page states for the power-loss test (see writeback.h). */
#include "writeback.h"

#include "shadow.h"

#include "bytes.h"
#include "os/os.h"
#include "sf/segfmt.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAGE   4096
#define NFILES 256
#define NSNAPS 4096
#define NMAPS  128
#define NFSN   4096

typedef struct wb_file {
    uint64_t ino, sync_begin, sync_end, dead;
} wb_file;

typedef struct wb_snap {
    uint64_t seq, ino, off;
    char name[QSF_SEG_NAME_MAX]; /* and the file's name then */
    _Atomic int done;
    uint8_t page[PAGE];
} wb_snap;

typedef struct wb_store {
    _Atomic uint64_t clock;
    _Atomic uint32_t nsnaps;
    uint32_t nfiles;
    wb_file files[NFILES];
    wb_snap snaps[NSNAPS];
    uint64_t append_at[NFSN]; /* the clock as the append of each FSN began */
} wb_store;

static wb_store *store;

void wb_reset(void) {
    if (!store) {
        void *p =
            mmap(NULL, sizeof *store, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            abort();
        store = p;
    }
    atomic_store(&store->clock, 1);
    atomic_store(&store->nsnaps, 0);
    /* A slot the kill caught between being claimed and being marked
     * incomplete must not offer the previous trial's page. */
    for (int i = 0; i < NSNAPS; i++)
        atomic_store(&store->snaps[i].done, 0);
    store->nfiles = 0;
    memset(store->append_at, 0, sizeof store->append_at);
}

static uint64_t tick(void) {
    return atomic_fetch_add(&store->clock, 1);
}

/* ---- the child: the page states ---- */

/* Copies [p, p + n) of inode ino at file offset off over the oldest
 * snapshot (the states just before the kill matter most); async-signal-safe
 * (atomics and memcpy only). */
static void snap_bytes(const char *name, uint64_t ino, uint64_t off, const uint8_t *p, size_t n) {
    wb_snap *s = &store->snaps[atomic_fetch_add(&store->nsnaps, 1) % NSNAPS];
    atomic_store(&s->done, 0);
    s->seq = tick();
    s->ino = ino;
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof s->name; k++)
        s->name[k] = name[k];
    s->name[k] = 0;
    s->off = off;
    memcpy(s->page, p, n < PAGE ? n : PAGE);
    if (n < PAGE)
        memset(s->page + n, 0, PAGE - n);
    atomic_store(&s->done, 1);
}

/* The mapped segment files, for the handler. An entry is LIVE while it may be
 * read; the handler holds it BUSY while it copies, and whoever retires it
 * (munmap, unlink) waits until it is LIVE again, so the handler never reads
 * a mapping that is gone. */
enum { M_FREE, M_LIVE, M_BUSY, M_SETTING };
static struct {
    _Atomic int state;
    const uint8_t *base;
    size_t len;
    uint64_t ino;
    char name[QSF_SEG_NAME_MAX];
} maps[NMAPS];

static char slot_dir[512];
static pthread_mutex_t files_mu = PTHREAD_MUTEX_INITIALIZER;

static wb_file *file_of(uint64_t ino) {
    for (uint32_t i = 0; i < store->nfiles; i++)
        if (store->files[i].ino == ino)
            return &store->files[i];
    if (store->nfiles == NFILES)
        abort();
    wb_file *f = &store->files[store->nfiles];
    memset(f, 0, sizeof *f);
    f->ino = ino;
    store->nfiles++; /* after the entry is whole: the parent reads up to nfiles */
    return f;
}

static void retire_where(const void *base, uint64_t ino) {
    for (int i = 0; i < NMAPS; i++) {
        if (base ? maps[i].base != base : maps[i].ino != ino)
            continue;
        int live = M_LIVE;
        while (atomic_load(&maps[i].state) != M_FREE &&
               !atomic_compare_exchange_weak(&maps[i].state, &live, M_FREE))
            live = M_LIVE;
    }
}

/* The slot file behind fd, if it is one: its name. */
static bool slot_file(int fd, char *name, size_t cap) {
    char link[64], path[1024];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return false;
    path[n] = 0;
    size_t k = strlen(slot_dir);
    if (strncmp(path, slot_dir, k) != 0 || path[k] != '/' || strchr(path + k + 1, '/'))
        return false;
    snprintf(name, cap, "%s", path + k + 1);
    return true;
}

static uint8_t *read_all(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    uint8_t *b = NULL;
    if (fd >= 0 && fstat(fd, &st) == 0 && (b = malloc((size_t) st.st_size + 1)) != NULL &&
        pread(fd, b, (size_t) st.st_size, 0) != st.st_size) {
        free(b);
        b = NULL;
    }
    *len = b ? (size_t) st.st_size : 0;
    if (fd >= 0)
        close(fd);
    return b;
}

static uint64_t ino_of_fd(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t) st.st_ino : 0;
}

static void *wb_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *p = mmap(addr, len, prot, flags, fd, off);
    char name[256];
    if (p == MAP_FAILED || fd < 0 || off != 0 || !slot_file(fd, name, sizeof name) ||
        !qsf_seg_name_is_candidate(name))
        return p;
    for (int i = 0; i < NMAPS; i++) {
        int free_ = M_FREE;
        if (atomic_compare_exchange_strong(&maps[i].state, &free_, M_SETTING)) {
            maps[i].base = p;
            maps[i].len = len;
            maps[i].ino = ino_of_fd(fd);
            snprintf(maps[i].name, sizeof maps[i].name, "%.31s", name);
            atomic_store(&maps[i].state, M_LIVE);
            break;
        }
    }
    return p;
}

static int wb_munmap(void *addr, size_t len) {
    retire_where(addr, 0);
    return munmap(addr, len);
}

/* An unlinked inode number may come back as a new file's: snapshots taken
 * before the unlink never belong to what has that number afterwards. */
static int wb_unlinkat(int dirfd, const char *path, int flags) {
    struct stat st;
    if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
        retire_where(NULL, (uint64_t) st.st_ino);
        pthread_mutex_lock(&files_mu);
        file_of((uint64_t) st.st_ino)->dead = tick();
        pthread_mutex_unlock(&files_mu);
    }
    return unlinkat(dirfd, path, flags);
}

/* What a write replaces was the page's state until then. */
static ssize_t wb_pwrite(int fd, const void *buf, size_t n, off_t off) {
    char name[256];
    uint64_t ino;
    if (n && slot_file(fd, name, sizeof name) && (ino = ino_of_fd(fd)) != 0) {
        uint8_t page[PAGE];
        for (off_t p = off / PAGE * PAGE; p < off + (off_t) n; p += PAGE) {
            ssize_t got = pread(fd, page, PAGE, p);
            if (got > 0)
                snap_bytes(name, ino, (uint64_t) p, page, (size_t) got);
        }
    }
    return pwrite(fd, buf, n, off);
}

/* A sync's stamps: begun (and not finished) disqualifies every snapshot of
 * the file, finished disqualifies those taken before it finished. */
static int synced(int fd, int (*sync)(int)) {
    uint64_t ino = ino_of_fd(fd);
    wb_file *f = NULL;
    if (ino) {
        pthread_mutex_lock(&files_mu);
        f = file_of(ino);
        f->sync_end = 0;
        f->sync_begin = tick();
        pthread_mutex_unlock(&files_mu);
    }
    int rc = sync(fd);
    if (f)
        f->sync_end = tick();
    return rc;
}

static int wb_fsync(int fd) {
    return synced(fd, shadow_fsync);
}

static int wb_fdatasync(int fd) {
    return synced(fd, shadow_fdatasync);
}

/* The handler: a page of some of the mapped segments, as they are at the
 * interrupted instruction. */
static unsigned handler_rng;

static void on_sample(int sig) {
    (void) sig;
    int saved = errno;
    for (int i = 0; i < NMAPS; i++) {
        int live = M_LIVE;
        handler_rng = handler_rng * 1103515245u + 12345u;
        if ((handler_rng >> 16) % 2 == 0 ||
            !atomic_compare_exchange_strong(&maps[i].state, &live, M_BUSY))
            continue;
        size_t pages = (maps[i].len + PAGE - 1) / PAGE;
        size_t p = (size_t) (handler_rng >> 8) % pages * PAGE;
        size_t n = maps[i].len - p < PAGE ? maps[i].len - p : PAGE;
        snap_bytes(maps[i].name, maps[i].ino, p, maps[i].base + p, n);
        atomic_store(&maps[i].state, M_LIVE);
    }
    errno = saved;
}

void wb_sample_now(void) {
    on_sample(SIGUSR1);
}

typedef struct sampler_arg {
    pthread_t target;
    unsigned seed;
} sampler_arg;

static void *sampler(void *arg) {
    sampler_arg *a = arg;
    prctl(PR_SET_TIMERSLACK, 1UL); /* the default 50 us would set the pace */
    for (;;) {
        struct timespec ts = {0, 5000 + (long) (rand_r(&a->seed) % 95000)};
        nanosleep(&ts, NULL);
        pthread_kill(a->target, SIGUSR1);
    }
    return NULL;
}

void wb_child_start(const char *slot, unsigned seed) {
    static sampler_arg arg;
    snprintf(slot_dir, sizeof slot_dir, "%s", slot);
    QSF_OS->fsync = wb_fsync;
    QSF_OS->fdatasync = wb_fdatasync;
    QSF_OS->mmap = wb_mmap;
    QSF_OS->munmap = wb_munmap;
    QSF_OS->unlinkat = wb_unlinkat;
    QSF_OS->pwrite = wb_pwrite;
    handler_rng = seed;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sample;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    arg.target = pthread_self(); /* pthread_kill: only the producer takes it */
    arg.seed = seed;
    pthread_t t;
    pthread_create(&t, NULL, sampler, &arg);
}

void wb_note_append(int64_t fsn) {
    if (fsn >= 0 && fsn < NFSN)
        store->append_at[fsn] = tick();
}

/* ---- the parent: the restore ---- */

/* Whether a state of inode ino as of seq is later than all that is durable
 * of the file that has that inode now. */
static bool after_sync(uint64_t ino, uint64_t seq) {
    for (uint32_t i = 0; i < store->nfiles; i++) {
        const wb_file *f = &store->files[i];
        if (f->ino == ino)
            return seq > f->dead && (!f->sync_begin || (f->sync_end && seq > f->sync_end));
    }
    return true;
}

static bool usable(const wb_snap *s) {
    return atomic_load(&s->done) && after_sync(s->ino, s->seq);
}

/* ---- moments inside a frame's write, from the order of its stores ---- */

/* The sampler rarely lands inside a frame's few stores, so those moments are
 * also built from the final file and the order docs/FORMAT.md §2.4 gives: the
 * frames before it as they are now, then the marker and the length, a prefix
 * of the payload (or all of it, or all of it and the CRC), then what was
 * durable past that point, untouched until the frame was written. Only for a
 * frame whose append began after its file's last sync. */
static uint64_t frame_moment(const char *name, uint64_t ino, const uint8_t *live,
                             const uint8_t *dur, size_t size, uint64_t off, uint32_t len,
                             unsigned *seed) {
    static uint8_t img[1 << 20];
    if (size > sizeof img)
        return 0;
    memcpy(img, live, off);
    memcpy(img + off, dur + off, size - off);
    uint8_t *f = img + off;
    int kind = rand_r(seed) % 4; /* envelope, part of the payload, all of it, with its CRC */
    uint32_t have = kind == 0 ? 0 : kind == 1 ? 1 + (uint32_t) rand_r(seed) % len : len;
    qsf_put_u32(f + QSF_SFA_FRAME_AT_CRC,
                kind == 3 ? qsf_sfa_frame_stored_crc(live + off) : QSF_SFA_FRAME_WRITING);
    qsf_put_u32(f + QSF_SFA_FRAME_AT_LEN, len);
    memcpy(f + QSF_SFA_FRAME_AT_PAYLOAD, live + off + QSF_SFA_FRAME_AT_PAYLOAD, have);
    uint64_t end = off + QSF_SFA_FRAME_AT_PAYLOAD + have, n = 0;
    for (uint64_t p = off / PAGE * PAGE; p < end; p += PAGE, n++)
        snap_bytes(name, ino, p, img + p, size - p < PAGE ? size - p : PAGE);
    return n;
}

static void moments_of(const char *name, const uint8_t *live, const uint8_t *dur, size_t size,
                       uint64_t ino, unsigned *seed, wb_stats *st) {
    static uint64_t at[NFSN];
    static uint32_t lens[NFSN];
    int n = 0;
    int64_t base = qsf_get_i64(live + QSF_SFA_AT_BASE_SEQ);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (int64_t fsn = base; off + QSF_SFA_FRAME_OVERHEAD <= size; fsn++) {
        uint32_t len = qsf_sfa_frame_len(live + off);
        if (len == 0 || len > size - off - QSF_SFA_FRAME_OVERHEAD ||
            qsf_sfa_frame_crc(live + off + QSF_SFA_FRAME_AT_PAYLOAD, len) !=
                qsf_sfa_frame_stored_crc(live + off))
            break;
        if (fsn >= 0 && fsn < NFSN && store->append_at[fsn] &&
            after_sync(ino, store->append_at[fsn])) {
            at[n] = off;
            lens[n++] = len;
        }
        off += QSF_SFA_FRAME_OVERHEAD + len;
    }
    for (int k = 0; n > 0 && k < 2; k++) {
        int i = rand_r(seed) % n;
        st->frame_moments += frame_moment(name, ino, live, dur, size, at[i], lens[i], seed) > 0;
    }
}

void wb_add_frame_moments(const char *slot, const char *shadow, unsigned *seed, wb_stats *st) {
    DIR *d = opendir(slot);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!qsf_seg_name_is_candidate(e->d_name))
            continue;
        char a[1100], b[1100];
        snprintf(a, sizeof a, "%s/%s", slot, e->d_name);
        snprintf(b, sizeof b, "%s/%s", shadow, e->d_name);
        size_t ll = 0, dl = 0;
        uint8_t *live = read_all(a, &ll), *dur = read_all(b, &dl);
        struct stat sb;
        if (live && dur && ll == dl && ll > QSF_SFA_HEADER_SIZE && stat(a, &sb) == 0)
            moments_of(e->d_name, live, dur, ll, (uint64_t) sb.st_ino, seed, st);
        free(live);
        free(dur);
    }
    if (d)
        closedir(d);
}

typedef struct restoring {
    unsigned keep, *seed;
    wb_stats *st;
} restoring;

/* The usable states of [off, off + k) of ino other than the synced and the
 * final one. */
static int states_of(const char *name, uint64_t ino, size_t off, size_t k, const uint8_t *dur,
                     const uint8_t *live, const uint8_t **out, int cap) {
    int n = 0;
    uint32_t total = atomic_load(&store->nsnaps);
    for (uint32_t i = 0; i < total && i < NSNAPS && n < cap; i++) {
        const wb_snap *s = &store->snaps[i];
        if (s->ino != ino || strcmp(s->name, name) != 0 || s->off > off ||
            off + k > s->off + PAGE || !usable(s))
            continue;
        const uint8_t *b = s->page + (off - s->off);
        if (memcmp(b, dur, k) != 0 && memcmp(b, live, k) != 0)
            out[n++] = b;
    }
    return n;
}

static void pick_any_moment(void *user, const char *name, uint64_t ino, size_t off, uint8_t *dur,
                            const uint8_t *live, size_t k) {
    restoring *rs = user;
    static const uint8_t *cand[NSNAPS + 1];
    int n = ino ? states_of(name, ino, off, k, dur, live, cand, NSNAPS) : 0;
    if (n == 0 && memcmp(dur, live, k) == 0)
        return;
    if ((unsigned) (rand_r(rs->seed) % 100) >= rs->keep) {
        rs->st->lost++;
        return;
    }
    /* the final state a third of the time, else any of the others */
    const uint8_t *c = n == 0 || rand_r(rs->seed) % 3 == 0 ? live : cand[rand_r(rs->seed) % n];
    if (c == live)
        rs->st->from_live++;
    else
        rs->st->from_mid++;
    memcpy(dur, c, k);
}

void wb_restore(size_t unit, unsigned keep, unsigned *seed, wb_stats *st) {
    uint32_t total = atomic_load(&store->nsnaps);
    for (uint32_t i = 0; i < total && i < NSNAPS; i++) {
        st->snapshots += atomic_load(&store->snaps[i].done) != 0;
        st->usable += usable(&store->snaps[i]);
    }
    restoring rs = {keep, seed, st};
    shadow_restore_picked(unit, pick_any_moment, &rs);
}
