/* A power cut in sf_durability=memory, with rotations (docs/FORMAT.md,
 * "FSN gap after a host crash"). A child appends flushes of one to three
 * frames (FLAG_DEFER_COMMIT on all but the last) into small segments, with
 * acknowledgements so that trims run, and is SIGKILLed at a random moment.
 * The slot is then replaced by its durable state with some unsynced pages
 * (4096 bytes) or blocks (512 bytes) let through at random, as when the
 * kernel had written some of them back before the power went: sealed
 * segments lose their tails while the next segment's header, synced at
 * rotation, survives, and holes appear in the middle of segments.
 *
 * Every open must succeed, and of what survived:
 *   - every frame delivered (above ackedFsn, not retired, not a placeholder)
 *     is an original frame, intact, in order, once;
 *   - a flush is delivered whole or not at all (past what was acknowledged);
 *   - every surviving frame above ackedFsn is delivered unless recovery says
 *     it gave it up (a retired span, counted in a loss) - never silently;
 *   - no original is numbered below its own FSN (it could look acknowledged);
 *   - the ring opens the result, and the next open retires the same spans.
 *
 * The mid-write subtests let pages through as they were at an earlier
 * moment too (writeback.h): a frame's envelope and the start of its payload
 * without the rest, a flush's committing frame over zeros where the frames
 * it commits were, a segment whose later pages are newer than its first. */
#include "testutil.h"

#include "shadow.h"
#include "writeback.h"

#include "bytes.h"
#include "log.h"
#include "os/os.h"
#include "sf/recover.h"
#include "sf/ring.h"
#include "sf/segfmt.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#define SEG     4096
#define FRAMES  600
#define MAX_FSN 4096
#define TRIALS  40

static char dir[256], slot[512], shadow[512];

static int setup(void **state) {
    (void) state;
    tu_mkdtemp(dir, sizeof dir);
    snprintf(slot, sizeof slot, "%s/p", dir);
    snprintf(shadow, sizeof shadow, "%s/shadow", dir);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    tu_rmtree(dir);
    return 0;
}

static qsf_ring_opts opts(void) {
    qsf_ring_opts o = {0};
    o.sf_dir = dir;
    o.sender_id = "p";
    o.segment_bytes = SEG;
    o.total_bytes = 1 << 20;
    o.durability = QSF_DUR_MEMORY;
    o.append_deadline_ms = 5000;
    return o;
}

/* ---- frames: one table "t", the true FSN at a fixed place ---- */

#define FSN_AT 17 /* header 12, delta 00 00, name 01 't', rows 01 */

/* With `embed`, every fourth frame long enough carries, right after its FSN,
 * the bytes of a stored frame (a BINARY value may hold any bytes): a torn
 * frame's payload must never be delivered as a frame of its own. Not in the
 * random trials: a frame whose first bytes are lost (a page or block of its
 * envelope and message header from before it was written) leaves the stored
 * frame in its payload indistinguishable from a frame after damage, which
 * salvage keeps (docs/FORMAT.md §6.15). */
static bool embed;

#define EMBED_AT  (FSN_AT + 8)
#define EMBED_LEN (QSF_SFA_FRAME_OVERHEAD + 20)

static bool embeds(int64_t fsn, size_t len) {
    return embed && fsn % 4 == 0 && len >= EMBED_AT + EMBED_LEN + 8;
}

static void embed_stored_frame(uint8_t *e) {
    uint8_t *m = e + QSF_SFA_FRAME_AT_PAYLOAD;
    qsf_put_u32(m, QSF_QWP_MAGIC);
    m[4] = 1;
    m[5] = 0x08;
    qsf_put_u16(m + 6, 1);
    qsf_put_u32(m + 8, 8);
    memcpy(m + 12, "GHOSTROW", 8);
    qsf_put_u32(e + QSF_SFA_FRAME_AT_LEN, 20);
    qsf_put_u32(e + QSF_SFA_FRAME_AT_CRC, qsf_sfa_frame_crc(m, 20));
}

static size_t frame(uint8_t *out, int64_t fsn, bool deferred) {
    size_t len = 40 + (size_t) ((fsn * 7) % 120);
    qsf_put_u32(out, QSF_QWP_MAGIC);
    out[4] = 1;
    out[5] = (uint8_t) (0x08 | (deferred ? 0x01 : 0));
    qsf_put_u16(out + 6, 1);
    qsf_put_u32(out + 8, (uint32_t) (len - 12));
    memcpy(out + 12, "\x00\x00\x01t\x01", 5);
    qsf_put_i64(out + FSN_AT, fsn);
    memset(out + FSN_AT + 8, (int) (fsn & 0xff), len - FSN_AT - 8);
    if (embeds(fsn, len))
        embed_stored_frame(out + EMBED_AT);
    return len;
}

static bool is_original(const uint8_t *p, uint32_t len, int64_t *fsn) {
    if (len < FSN_AT + 8)
        return false;
    *fsn = qsf_get_i64(p + FSN_AT);
    if (*fsn < 0 || *fsn >= MAX_FSN)
        return false;
    uint8_t want[256];
    return frame(want, *fsn, p[5] & 0x01) == len && memcmp(want, p, len) == 0;
}

/* ---- the child ---- */

typedef struct truth {
    int64_t appended; /* frames whose append returned */
    bool deferred[MAX_FSN];
    int64_t acked; /* the highest acknowledgement given */
} truth;

static void child(int out, unsigned seed, bool mid_write) {
    shadow_init(slot, shadow);
    QSF_OS->fsync = shadow_fsync;
    QSF_OS->fdatasync = shadow_fdatasync;
    if (mid_write)
        wb_child_start(slot, seed);
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    qsf_ring_opts o = opts();
    qsf_ring *r;
    if (qsf_ring_open(&o, &r, NULL, NULL) != QSF_OK)
        _exit(2);
    uint8_t buf[256];
    int64_t commits[64] = {0};
    int ncommits = 0;
    for (int64_t f = 0; f < FRAMES;) {
        int n = 1 + rand_r(&seed) % 3;
        for (int k = 0; k < n; k++, f++) {
            bool deferred = k + 1 < n;
            int64_t msg[2] = {f, deferred};
            if (mid_write)
                wb_note_append(f);
            if (qsf_ring_append(r, buf, frame(buf, f, deferred), NULL, NULL) != QSF_OK)
                _exit(4);
            if (mid_write && rand_r(&seed) % 3 == 0) /* a frame in, its flush maybe not */
                wb_sample_now();
            if (write(out, msg, sizeof msg) != sizeof msg)
                _exit(3);
        }
        commits[ncommits++ % 64] = f - 1;
        if (ncommits > 8) { /* the flush 8 flushes ago is acknowledged */
            int64_t a = commits[(ncommits - 8) % 64], msg[2] = {-1, a};
            if (write(out, msg, sizeof msg) != sizeof msg)
                _exit(3);
            qsf_ring_acknowledge(r, a);
        }
    }
    _exit(0);
}

static void run_child(truth *t, unsigned seed, int kill_after, bool mid_write) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child(p[1], seed, mid_write);
    }
    close(p[1]);
    memset(t, 0, sizeof *t);
    t->acked = -1;
    int64_t msg[2];
    while (read(p[0], msg, sizeof msg) == sizeof msg) {
        if (msg[0] >= 0) {
            t->deferred[msg[0]] = msg[1];
            if (++t->appended == kill_after)
                kill(pid, SIGKILL);
        } else
            t->acked = msg[1];
    }
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fail_msg("child failed with status %d", WEXITSTATUS(status));
}

/* ---- what survived: originals intact in the files after the cut ---- */

typedef struct disk {
    bool present[MAX_FSN]; /* an intact original somewhere in a segment file */
} disk;

static void scan_frames(const char *path, void (*fn)(void *, const uint8_t *, uint32_t, uint64_t),
                        void *user) {
    size_t n;
    uint8_t *img = tu_read_file(path, &n);
    /* every offset: originals may sit after damage */
    const uint64_t env = QSF_SFA_FRAME_OVERHEAD;
    for (uint64_t off = QSF_SFA_HEADER_SIZE; n >= env && off + env <= n; off++) {
        const uint8_t *f = img + off, *payload = f + QSF_SFA_FRAME_AT_PAYLOAD;
        uint32_t len = qsf_sfa_frame_len(f);
        if (len < 20 || len > n - off - env || memcmp(payload, "QWP1", 4) != 0 ||
            qsf_sfa_frame_crc(payload, len) != qsf_sfa_frame_stored_crc(f))
            continue;
        fn(user, payload, len, off);
    }
    free(img);
}

static void note_present(void *user, const uint8_t *p, uint32_t len, uint64_t off) {
    (void) off;
    int64_t fsn;
    if (is_original(p, len, &fsn))
        ((disk *) user)->present[fsn] = true;
}

static void survey(disk *d) {
    memset(d, 0, sizeof *d);
    DIR *dd = opendir(slot);
    struct dirent *e;
    while (dd && (e = readdir(dd))) {
        size_t l = strlen(e->d_name);
        if (l > 4 && qsf_seg_name_is_candidate(e->d_name)) {
            char p[1200];
            snprintf(p, sizeof p, "%s/%s", slot, e->d_name);
            scan_frames(p, note_present, d);
        }
    }
    if (dd)
        closedir(dd);
}

/* ---- what recovery delivers ---- */

static bool retired(const qsf_slot_recovered *r, int64_t fsn) {
    for (uint32_t i = 0; i < r->n_retired; i++)
        if (r->retired[i].from <= fsn && fsn <= r->retired[i].to)
            return true;
    return false;
}

typedef struct delivered {
    int n;
    int64_t fsn[MAX_FSN];    /* true FSNs, in delivery order */
    int64_t rec_of[MAX_FSN]; /* recovered FSN of each original still on disk, or -1 */
} delivered;

static void deliver(const qsf_slot_recovered *r, delivered *dv, const char *what) {
    dv->n = 0;
    for (int i = 0; i < MAX_FSN; i++)
        dv->rec_of[i] = -1;
    for (uint32_t i = 0; i < r->segment_count; i++) {
        const qsf_seg_info *s = &r->segments[i];
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", slot, s->name);
        size_t n;
        uint8_t *img = tu_read_file(p, &n);
        uint64_t off = QSF_SFA_HEADER_SIZE;
        for (uint64_t k = 0; k < s->frame_count; k++) {
            const uint8_t *f = img + off, *pl = f + QSF_SFA_FRAME_AT_PAYLOAD;
            uint32_t len = qsf_sfa_frame_len(f);
            if (off + QSF_SFA_FRAME_OVERHEAD + len > n ||
                qsf_sfa_frame_crc(pl, len) != qsf_sfa_frame_stored_crc(f))
                fail_msg("%s: %s frame %" PRIu64 " does not validate", what, s->name, k);
            int64_t fsn = s->base_seq + (int64_t) k, real;
            bool original = is_original(pl, len, &real);
            if (!original && len != 14) /* only originals, placeholders and empty commits */
                fail_msg("%s: FSN %" PRId64 " (%s at offset %" PRIu64
                         ") is neither an original frame nor a placeholder",
                         what, fsn, s->name, off);
            if (original)
                dv->rec_of[real] = fsn;
            if (original && fsn > r->acked_fsn && !retired(r, fsn))
                dv->fsn[dv->n++] = real;
            off += QSF_SFA_FRAME_OVERHEAD + len;
        }
        free(img);
    }
}

static int64_t group_end(const truth *t, int64_t f) {
    while (f < t->appended && t->deferred[f])
        f++;
    return f;
}

static int64_t group_start(const truth *t, int64_t f) {
    while (f > 0 && t->deferred[f - 1])
        f--;
    return f;
}

static void check_delivered(const truth *t, const disk *d, const delivered *dv, bool *got,
                            const char *what) {
    for (int i = 0; i < dv->n; i++) {
        if (i > 0 && dv->fsn[i] <= dv->fsn[i - 1])
            fail_msg("%s: FSN %" PRId64 " delivered after %" PRId64, what, dv->fsn[i],
                     dv->fsn[i - 1]);
        if (!d->present[dv->fsn[i]])
            fail_msg("%s: FSN %" PRId64 " delivered but it did not survive", what, dv->fsn[i]);
        got[dv->fsn[i]] = true;
    }
    /* whole flushes: from a member delivered on, every later member is */
    for (int i = 0; i < dv->n; i++)
        for (int64_t f = dv->fsn[i]; f <= group_end(t, dv->fsn[i]); f++)
            if (!got[f])
                fail_msg("%s: FSN %" PRId64 " delivered without FSN %" PRId64 " of its flush", what,
                         dv->fsn[i], f);
}

/* Every surviving frame of a whole, committed flush above ackedFsn is
 * delivered, or recovery gave it up and said so. */
static void check_nothing_silent(const truth *t, const disk *d, const delivered *dv,
                                 const bool *got, const qsf_slot_recovered *r, const char *what,
                                 uint64_t *given_up_intact) {
    uint64_t reported = (uint64_t) r->report.aborted_frames_cut, vanished = 0;
    for (uint32_t i = 0; i < r->n_losses; i++)
        reported += r->losses[i].frames_retired;
    for (int64_t f = r->acked_fsn + 1; f < t->appended; f++) {
        bool whole = group_end(t, f) < t->appended;
        for (int64_t g = group_start(t, f); whole && g <= group_end(t, f); g++)
            whole = d->present[g];
        if (!whole || got[f])
            continue;
        (*given_up_intact)++;
        if (dv->rec_of[f] >= 0 && !retired(r, dv->rec_of[f]) && dv->rec_of[f] > r->acked_fsn)
            fail_msg("%s: FSN %" PRId64 " survived, is on disk as FSN %" PRId64
                     ", and is neither delivered nor retired",
                     what, f, dv->rec_of[f]);
        vanished += dv->rec_of[f] < 0;
    }
    if (vanished > reported)
        fail_msg("%s: %" PRIu64 " surviving frames were replaced, only %" PRIu64 " reported", what,
                 vanished, reported);
}

/* The slot was fresh, so an original's FSN is the one in its payload; after
 * a gap recovery may count more frames than were lost, never fewer: a frame
 * numbered lower than its own could look acknowledged and never be sent. */
static void check_never_lower(const delivered *dv, const char *what) {
    for (int64_t f = 0; f < MAX_FSN; f++)
        if (dv->rec_of[f] >= 0 && dv->rec_of[f] < f)
            fail_msg("%s: FSN %" PRId64 " is on disk as FSN %" PRId64, what, f, dv->rec_of[f]);
}

static void check(const truth *t, const disk *d, const qsf_slot_recovered *r, const char *what,
                  uint64_t *given_up_intact) {
    static delivered dv;
    static bool got[MAX_FSN];
    memset(got, 0, sizeof got);
    deliver(r, &dv, what);
    check_delivered(t, d, &dv, got, what);
    check_never_lower(&dv, what);
    check_nothing_silent(t, d, &dv, got, r, what, given_up_intact);
}

typedef struct summary {
    int64_t published;
    uint32_t n;
    qsf_fsn_span spans[256];
} summary;

static void summarize(const qsf_slot_recovered *r, summary *s) {
    s->published = r->published_fsn;
    s->n = r->n_retired < 256 ? r->n_retired : 256;
    if (s->n)
        memcpy(s->spans, r->retired, s->n * sizeof *s->spans);
}

/* The next open finds a valid slot: the same FSNs, the same retired spans
 * (placeholders are retired again), no new loss. */
static void reopen_and_compare(const summary *first, const char *what) {
    qsf_slot_recovered r;
    qsf_errinfo e;
    if (qsf_slot_open_sized(dir, "p", QSF_DUR_MEMORY, SEG, &r, &e) != QSF_OK)
        fail_msg("%s: second open failed: %s", what, e.msg);
    if (r.n_retired != first->n || r.n_losses != 0 || r.published_fsn != first->published)
        fail_msg("%s: the second open differs (published %" PRId64 "/%" PRId64
                 ", retired %u/%u, losses %u)",
                 what, r.published_fsn, first->published, r.n_retired, first->n, r.n_losses);
    for (uint32_t i = 0; i < r.n_retired; i++)
        if (r.retired[i].from != first->spans[i].from || r.retired[i].to != first->spans[i].to)
            fail_msg("%s: retired span %u differs on the second open", what, i);
    qsf_slot_release(&r);
}

/* The runtime adopts the result (maps every segment, checks the sizes). */
static void ring_opens(const summary *first, const char *what) {
    qsf_ring_opts o = opts();
    qsf_ring *ring;
    qsf_errinfo e;
    if (qsf_ring_open(&o, &ring, NULL, &e) != QSF_OK)
        fail_msg("%s: the ring does not open the recovered slot: %s", what, e.msg);
    if (qsf_ring_published_fsn(ring) != first->published)
        fail_msg("%s: the ring sees published %" PRId64 ", recovery %" PRId64, what,
                 qsf_ring_published_fsn(ring), first->published);
    qsf_ring_close(ring, NULL);
}

/* ---- what the restore tore ---- */

/* Segment files whose chain of valid frames from the header ends at a frame
 * still marked as being written. */
static int marked_tails(void) {
    int n = 0;
    DIR *dd = opendir(slot);
    struct dirent *e;
    while (dd && (e = readdir(dd))) {
        if (!qsf_seg_name_is_candidate(e->d_name))
            continue;
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", slot, e->d_name);
        size_t len;
        uint8_t *img = tu_read_file(p, &len);
        uint64_t off = QSF_SFA_HEADER_SIZE;
        while (off + QSF_SFA_FRAME_OVERHEAD <= len) {
            const uint8_t *f = img + off;
            uint32_t l = qsf_sfa_frame_len(f);
            if (l == 0 || l > len - off - QSF_SFA_FRAME_OVERHEAD ||
                qsf_sfa_frame_crc(f + QSF_SFA_FRAME_AT_PAYLOAD, l) != qsf_sfa_frame_stored_crc(f))
                break;
            off += QSF_SFA_FRAME_OVERHEAD + l;
        }
        n += off + QSF_SFA_FRAME_OVERHEAD <= len &&
             qsf_sfa_frame_stored_crc(img + off) == QSF_SFA_FRAME_WRITING;
        free(img);
    }
    if (dd)
        closedir(dd);
    return n;
}

/* Flushes that returned, of which some frames survived and some did not;
 * *orphaned counts those whose committing frame is among the survivors. */
static int torn_flushes(const truth *t, const disk *d, int *orphaned) {
    int n = 0;
    for (int64_t f = 0; f < t->appended;) {
        int64_t end = group_end(t, f);
        if (end >= t->appended)
            break;
        int have = 0;
        for (int64_t g = f; g <= end; g++)
            have += d->present[g];
        n += have > 0 && have <= end - f;
        *orphaned += d->present[end] && have <= end - f;
        f = end + 1;
    }
    return n;
}

typedef enum restore_mode { FINAL_STATES, ANY_MOMENT } restore_mode;

static void restore(restore_mode mode, size_t unit, unsigned keep, unsigned *seed, wb_stats *st) {
    if (mode == ANY_MOMENT) {
        wb_add_frame_moments(slot, shadow, seed, st);
        wb_restore(unit, keep, seed, st);
    } else
        shadow_restore_mixed(unit, keep, seed);
}

static void power_loss(size_t unit, unsigned seed0, restore_mode mode) {
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    static truth t;
    static disk d;
    int with_loss = 0, multi = 0, marked = 0, torn = 0, orphaned = 0;
    uint64_t given_up = 0, frames = 0;
    wb_stats st = {0};
    /* QSF_POWER_LOSS_SEED=<n> runs only the trial with that seed */
    int only = getenv("QSF_POWER_LOSS_SEED") ? atoi(getenv("QSF_POWER_LOSS_SEED")) : -1;
    /* QSF_POWER_LOSS_TRIALS=<n> runs n trials from seed0 instead of TRIALS */
    int trials = getenv("QSF_POWER_LOSS_TRIALS") ? atoi(getenv("QSF_POWER_LOSS_TRIALS")) : TRIALS;
    for (int i = 0; i < trials; i++) {
        if (only >= 0 && seed0 + (unsigned) i != (unsigned) only)
            continue;
        unsigned seed = seed0 + (unsigned) i;
        int kill_after = 50 + rand_r(&seed) % (FRAMES - 50);
        unsigned keep = (unsigned) (rand_r(&seed) % 101);
        char what[128];
        snprintf(what, sizeof what, "unit %zu%s, seed %u, kill after %d, keep %u%%", unit,
                 mode == ANY_MOMENT ? " (any moment)" : "", seed0 + (unsigned) i, kill_after, keep);
        tu_rmtree(slot);
        tu_rmtree(shadow);
        if (mode == ANY_MOMENT)
            wb_reset();
        run_child(&t, seed0 + (unsigned) i, kill_after, mode == ANY_MOMENT);
        shadow_init(slot, shadow); /* the parent's view of the same directories */
        restore(mode, unit, keep, &seed, &st);
        survey(&d);
        marked += marked_tails();
        torn += torn_flushes(&t, &d, &orphaned);
        qsf_slot_recovered r;
        qsf_errinfo e;
        if (qsf_slot_open_sized(dir, "p", QSF_DUR_MEMORY, SEG, &r, &e) != QSF_OK)
            fail_msg("%s: open failed: %s", what, e.msg);
        with_loss += r.n_losses > 0;
        multi += r.segment_count > 1;
        frames += (uint64_t) (r.published_fsn - r.acked_fsn);
        check(&t, &d, &r, what, &given_up);
        summary sum;
        summarize(&r, &sum);
        qsf_slot_release(&r);
        reopen_and_compare(&sum, what);
        ring_opens(&sum, what);
    }
    printf("# unit %zu: %d trials, every open succeeded; %d reported losses, %d had several "
           "segments; %" PRIu64 " unacknowledged FSNs, %" PRIu64
           " intact frames of whole flushes given up; %d flushes torn (%d with their committing "
           "frame intact), %d segments ending in a frame being written\n",
           unit, trials, with_loss, multi, frames, given_up, torn, orphaned, marked);
    if (mode == ANY_MOMENT)
        printf("# unit %zu: %" PRIu64 " page states recorded, %" PRIu64
               " after their file's last sync, %" PRIu64 " moments inside a frame's write "
               "built; units restored: %" PRIu64 " from an intermediate state, %" PRIu64
               " final, %" PRIu64 " as synced\n",
               unit, st.snapshots, st.usable, st.frame_moments, st.from_mid, st.from_live, st.lost);
}

static void power_loss_at_page_granularity(void **state) {
    (void) state;
    power_loss(4096, 1000, FINAL_STATES);
}

static void power_loss_at_block_granularity(void **state) {
    (void) state;
    power_loss(512, 5000, FINAL_STATES);
}

static void power_loss_mid_write_at_page_granularity(void **state) {
    (void) state;
    power_loss(4096, 9000, ANY_MOMENT);
}

static void power_loss_mid_write_at_block_granularity(void **state) {
    (void) state;
    power_loss(512, 13000, ANY_MOMENT);
}

/* ---- a frame whose head survived and whose tail did not ---- */

/* The one segment file of the slot. */
static void segment_path(char *out, size_t cap) {
    DIR *dd = opendir(slot);
    struct dirent *e;
    while (dd && (e = readdir(dd)))
        if (qsf_seg_name_is_candidate(e->d_name))
            snprintf(out, cap, "%s/%s", slot, e->d_name);
    if (dd)
        closedir(dd);
}

#define BIG_SEG (16 * 4096)

/* Single-frame flushes into one segment, frame `torn` the first to cross a
 * page boundary (*page the page after it) with its embedded stored frame
 * before it; returns the number of frames. */
static int64_t write_across_a_page(int64_t *torn, uint64_t *page) {
    qsf_ring_opts o = opts();
    o.segment_bytes = BIG_SEG;
    qsf_ring *r;
    assert_int_equal(qsf_ring_open(&o, &r, NULL, NULL), QSF_OK);
    uint8_t buf[256];
    uint64_t off = QSF_SFA_HEADER_SIZE;
    int64_t f = 0;
    *torn = -1;
    for (; off < BIG_SEG - 4096; f++) {
        size_t n = frame(buf, f, false);
        uint64_t embedded_end = off + QSF_SFA_FRAME_OVERHEAD + EMBED_AT + EMBED_LEN;
        uint64_t next_page = (off / 4096 + 1) * 4096;
        if (*torn < 0 && embeds(f, n) && embedded_end <= next_page &&
            off + QSF_SFA_FRAME_OVERHEAD + n > next_page) {
            *torn = f;
            *page = next_page;
        }
        assert_int_equal(qsf_ring_append(r, buf, n, NULL, NULL), QSF_OK);
        off += QSF_SFA_FRAME_OVERHEAD + n;
    }
    qsf_ring_acknowledge(r, *torn); /* the server has the torn frame */
    qsf_ring_close(r, NULL);
    return f;
}

/* The state a power cut leaves in sf_durability=memory when the kernel had
 * written back every page of a segment but one: the frame across the
 * boundary before that page keeps its envelope, its CRC and the start of its
 * payload, which holds the bytes of a stored frame. (A page written back
 * before the frame's tail was copied into it leaves the same.) Recovery
 * gives the torn frame up and salvages the frames of the later pages; the
 * bytes inside the torn frame are not a frame and are never delivered. */
static void a_frame_torn_after_its_head_gives_no_frame_from_its_payload(void **state) {
    (void) state;
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    embed = true;
    uint64_t page = 0;
    int64_t torn, n = write_across_a_page(&torn, &page);
    assert_true(torn >= 0);
    char p[1200] = "";
    segment_path(p, sizeof p);
    size_t len;
    uint8_t *img = tu_read_file(p, &len);
    memset(img + page, 0, 4096);
    tu_write_file(p, img, len);
    free(img);
    qsf_slot_recovered r;
    qsf_errinfo e;
    if (qsf_slot_open_sized(dir, "p", QSF_DUR_MEMORY, BIG_SEG, &r, &e) != QSF_OK)
        fail_msg("open failed: %s", e.msg);
    static delivered dv;
    deliver(&r, &dv, "the page after a torn frame's head lost"); /* only originals */
    assert_true(r.n_losses > 0);
    for (int i = 0; i < dv.n; i++)
        if (dv.fsn[i] == torn)
            fail_msg("the torn frame, FSN %" PRId64 ", was delivered", torn);
    assert_true(dv.n > 0 && dv.fsn[dv.n - 1] == n - 1); /* the later pages salvaged */
    qsf_slot_release(&r);
    embed = false;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(power_loss_at_page_granularity, setup, teardown),
        cmocka_unit_test_setup_teardown(power_loss_at_block_granularity, setup, teardown),
        cmocka_unit_test_setup_teardown(power_loss_mid_write_at_page_granularity, setup, teardown),
        cmocka_unit_test_setup_teardown(power_loss_mid_write_at_block_granularity, setup, teardown),
        cmocka_unit_test_setup_teardown(a_frame_torn_after_its_head_gives_no_frame_from_its_payload,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
