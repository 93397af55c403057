/* Recovery steps 2-3 (docs/FORMAT.md §6.2, §6.3): list the slot and scan every
 * *.sfa with pread through one 64 KiB buffer. Never maps a file: a page lost in
 * a crash must surface as EIO here, not as SIGBUS. Any I/O error aborts
 * recovery with every file untouched; only format problems make a file corrupt. */
#include "recover_int.h"

#include "bytes.h"
#include "crc32c.h"
#include "err.h"
#include "log.h"
#include "os/os.h"
#include "qsf_assert.h"
#include "sf/segfmt.h"
#include "sf/sfio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- bounded reader ---- */

int qsf_rc_reader_open(rc_reader *r, const qsf_slot *slot, const char *name, uint8_t *buf,
                       int flags, qsf_errinfo *err) {
    memset(r, 0, sizeof *r);
    r->dir = slot->path;
    r->name = name;
    r->buf = buf;
    r->fd = qsf_open_regular(slot->dirfd, name, flags, &r->size);
    if (r->fd < 0)
        return qsf_file_err(err, errno, "cannot open segment", slot->path, name);
    return QSF_OK;
}

void qsf_rc_reader_close(rc_reader *r) {
    if (r->fd >= 0)
        QSF_OS->close(r->fd);
    r->fd = -1;
}

int qsf_rc_read(rc_reader *r, uint64_t off, size_t want, const uint8_t **p, size_t *got,
                qsf_errinfo *err) {
    *got = 0;
    *p = r->buf; /* never an unset pointer, even for an empty read */
    if (off >= r->size)
        return QSF_OK;
    if (want > QSF_RECOVER_BUF)
        want = QSF_RECOVER_BUF;
    uint64_t avail = r->size - off;
    size_t need = avail < want ? (size_t) avail : want;
    if (off < r->win_off || off + need > r->win_off + r->win_len) {
        size_t n = avail < QSF_RECOVER_BUF ? (size_t) avail : QSF_RECOVER_BUF;
        r->win_len = 0;
        int rc = qsf_read_at(r->fd, r->buf, n, off, r->dir, r->name, err);
        if (rc != QSF_OK)
            return rc;
        r->win_off = off;
        r->win_len = n;
    }
    *p = r->buf + (off - r->win_off);
    *got = need;
    return QSF_OK;
}

/* ---- enumeration ---- */

static int add_candidate(rc_found *f, const char *name, qsf_errinfo *err) {
    if (f->nsegs % 16 == 0) {
        rc_seg *n = realloc(f->segs, (f->nsegs + 16) * sizeof *n);
        if (!n)
            return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory for the segment list");
        f->segs = n;
    }
    rc_seg *s = &f->segs[f->nsegs++];
    memset(s, 0, sizeof *s);
    snprintf(s->info.name, sizeof s->info.name, "%s", name);
    uint64_t gen;
    s->info.generation = qsf_seg_name_parse(name, &gen) == 0 ? (int64_t) gen : -1;
    if (s->info.generation >= 0 && (!f->any_gen || gen > f->max_gen)) {
        f->max_gen = gen;
        f->any_gen = true;
    }
    return QSF_OK;
}

/* "<name>.sfa.tmp": a segment rewrite that never reached its rename. */
static bool is_rewrite_tmp(const char *name) {
    size_t n = strlen(name);
    return n > 8 && n < 256 && strcmp(name + n - 8, ".sfa.tmp") == 0;
}

static int add_tmp(rc_found *f, const char *name, qsf_errinfo *err) {
    if (f->ntmp % 8 == 0) {
        char(*n)[256] = realloc(f->tmp, (f->ntmp + 8) * sizeof *n);
        if (!n)
            return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory for the file list");
        f->tmp = n;
    }
    snprintf(f->tmp[f->ntmp++], 256, "%s", name);
    return QSF_OK;
}

static int list_error(const qsf_slot *slot, int e, qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_IO, 0, e,
                       "cannot list slot directory %s: %s (recovery aborted, files untouched)",
                       slot->path, strerror(e));
}

static int list_slot(const qsf_slot *slot, rc_found *f, qsf_errinfo *err) {
    int fd = QSF_OS->openat(slot->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return list_error(slot, errno, err);
    DIR *d = QSF_OS->fdopendir(fd);
    if (!d) {
        int e = errno;
        QSF_OS->close(fd);
        return list_error(slot, e, err);
    }
    int rc = QSF_OK;
    for (;;) {
        errno = 0;
        struct dirent *e = QSF_OS->readdir(d);
        if (!e) {
            /* A listing error must never be read as "no more segments". */
            if (errno != 0)
                rc = list_error(slot, errno, err);
            break;
        }
        if (qsf_seg_name_is_candidate(e->d_name) && strlen(e->d_name) < sizeof f->segs->info.name)
            rc = add_candidate(f, e->d_name, err);
        else if (is_rewrite_tmp(e->d_name))
            rc = add_tmp(f, e->d_name, err);
        else if (qsf_seg_name_is_candidate(e->d_name))
            QSF_LOGW("ignoring %s/%s: name too long", slot->path, e->d_name);
        if (rc != QSF_OK)
            break;
    }
    QSF_OS->closedir(d);
    return rc;
}

/* ---- scanning one segment ---- */

int qsf_rc_frame_crc_ok(rc_reader *r, uint64_t off, uint32_t len, uint32_t want, bool *ok,
                        qsf_errinfo *err) {
    uint32_t s = qsf_sfa_frame_crc_begin(len);
    uint64_t pos = off + QSF_SFA_FRAME_AT_PAYLOAD, remain = len;
    while (remain > 0) {
        const uint8_t *p;
        size_t got;
        int rc = qsf_rc_read(r, pos, remain < QSF_RECOVER_BUF ? (size_t) remain : QSF_RECOVER_BUF,
                             &p, &got, err);
        if (rc != QSF_OK)
            return rc;
        if (got == 0)
            return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "frame read past end of %s", r->name);
        s = qsf_crc32c_update(s, p, got);
        pos += got;
        remain -= got;
    }
    *ok = qsf_crc32c_end(s) == want;
    return QSF_OK;
}

int qsf_rc_add_piece(rc_seg *s, const rc_piece *p, qsf_errinfo *err) {
    /* pieces cover the file in order, without overlapping */
    qsf_assert(p->off < p->end && (s->npieces == 0 || s->pieces[s->npieces - 1].end <= p->off));
    if (s->npieces % 8 == 0) {
        rc_piece *n = realloc(s->pieces, (s->npieces + 8) * sizeof *n);
        if (!n)
            return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "no memory for the segment map");
        s->pieces = n;
    }
    s->pieces[s->npieces++] = *p;
    return QSF_OK;
}

/* Whether the frame at off validates; *len gets its payload length. A length
 * with the top bit set or past the end is impossible (*impossible). */
static int frame_at(rc_reader *r, uint64_t off, bool *ok, uint32_t *len, bool *impossible,
                    qsf_errinfo *err) {
    const uint8_t *p;
    size_t got;
    *ok = *impossible = false;
    int rc = qsf_rc_read(r, off, QSF_SFA_FRAME_OVERHEAD, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    uint32_t crc = qsf_sfa_frame_stored_crc(p);
    *len = qsf_sfa_frame_len(p);
    if ((*len & 0x80000000u) || *len > r->size - off - QSF_SFA_FRAME_OVERHEAD) {
        *impossible = true;
        return QSF_OK;
    }
    return qsf_rc_frame_crc_ok(r, off, *len, crc, ok, err);
}

static int end_run(rc_seg *s, rc_piece *run, qsf_errinfo *err) {
    if (run->frames == 0)
        return QSF_OK;
    s->intact += run->frames;
    s->info.last_good = run->end;
    int rc = qsf_rc_add_piece(s, run, err);
    run->frames = 0;
    return rc;
}

/* Whether the bad frame at off keeps a length salvage can trust, so that
 * nothing inside it is a frame: its crc field still the writer's marker
 * (docs/FORMAT.md §2.4: torn while being written), or its envelope and the
 * header of its QWP message agree (the length a stored message has): then
 * the damage lies in its payload - a page of it that was never written back,
 * or was before the payload was all in - and its payload's bytes, a BINARY
 * value holding a stored frame among them, are not searched. In both cases
 * its length is possible and its CRC not valid (a CRC may equal the marker). */
static int kept_length_at(rc_reader *r, uint64_t off, bool *kept, uint32_t *len, qsf_errinfo *err) {
    *kept = false;
    if (r->size - off < QSF_SFA_FRAME_OVERHEAD)
        return QSF_OK;
    const uint8_t *p;
    size_t got;
    int rc = qsf_rc_read(r, off, QSF_SFA_FRAME_OVERHEAD, &p, &got, err);
    bool whole = rc == QSF_OK && qsf_sfa_frame_stored_crc(p) == QSF_SFA_FRAME_WRITING;
    if (rc == QSF_OK && !whole)
        rc = qsf_rc_looks_stored_at(r, off, &whole, err);
    if (rc != QSF_OK || !whole)
        return rc;
    bool ok, impossible;
    rc = frame_at(r, off, &ok, len, &impossible, err);
    *kept = rc == QSF_OK && !ok && !impossible;
    return rc;
}

/* Where the search for intact frames after the bad frame at off starts: past
 * its length when salvage can trust it (above), and past every such bad
 * frame that follows it end to end (a host crash can keep the marker of
 * more than one); else at the next byte, since damage may have hit the
 * length too. */
static int salvage_from(rc_reader *r, uint64_t off, uint64_t *from, qsf_errinfo *err) {
    *from = off + 1;
    bool kept;
    uint32_t len;
    int rc = kept_length_at(r, off, &kept, &len, err);
    for (uint64_t o = off; rc == QSF_OK && kept;) {
        o += QSF_SFA_FRAME_OVERHEAD + len;
        *from = o;
        rc = kept_length_at(r, o, &kept, &len, err);
    }
    return rc;
}

/* The next intact frame past the lengths salvage trusts from the bad frame
 * at off (salvage_from). *hidden when a frame that validates lies inside
 * them: a lookalike a BINARY value holds, or a frame written later over a
 * stale envelope a host crash brought back (docs/FORMAT.md §6.15). Either
 * way it is not kept, and the length fields cannot tell how many frames
 * those bytes held. The first search is the one from the next byte, so the
 * bytes are searched once. */
static int find_next(rc_reader *r, uint64_t off, uint64_t *next, bool *found, bool *hidden,
                     uint64_t *budget, bool *out_of_budget, qsf_errinfo *err) {
    uint64_t from;
    *hidden = false;
    int rc = salvage_from(r, off, &from, err);
    if (rc == QSF_OK)
        rc = qsf_rc_salvage_next(r, off + 1, next, found, budget, out_of_budget, err);
    *hidden = rc == QSF_OK && *found && *next < from;
    if (*hidden)
        rc = qsf_rc_salvage_next(r, from, next, found, budget, out_of_budget, err);
    return rc;
}

/* After the bad frame at off: a gap up to the next intact frame, if any
 * (*next = its offset, 0 when none). */
static int salvage(rc_reader *r, rc_seg *s, uint64_t off, bool impossible, uint64_t *budget,
                   uint64_t *next, qsf_errinfo *err) {
    *next = 0;
    if (s->ngaps >= RC_MAX_GAPS) {
        s->unsalvaged = true;
        return QSF_OK;
    }
    bool found, hidden, out_of_budget;
    int rc = find_next(r, off, next, &found, &hidden, budget, &out_of_budget, err);
    if (rc != QSF_OK)
        return rc;
    s->unsalvaged = out_of_budget;
    if (!found) {
        *next = 0;
        return QSF_OK;
    }
    rc_piece g = {.off = off, .end = *next, .kind = RC_GAP, .bad_len = impossible};
    rc = qsf_rc_count_gap(r, &g, err);
    if (hidden) { /* the chain counts only the trusted lengths: the bound */
        g.chained = g.exact = false;
        g.frames = g.ub > 0 ? g.ub : 1;
    }
    if (rc == QSF_OK)
        rc = qsf_rc_add_piece(s, &g, err);
    s->ngaps++;
    return rc;
}

/* Walks frames from offset 24 while at least 8 bytes remain. A bad frame
 * followed by intact ones is a gap (salvage); with nothing intact after it,
 * it is the end of data. Sets the pieces, intact and last_good. */
static int walk_frames(rc_reader *r, rc_seg *s, qsf_errinfo *err) {
    uint64_t off = QSF_SFA_HEADER_SIZE, budget = 2 * r->size + QSF_RECOVER_BUF;
    rc_piece run = {.off = off, .end = off, .kind = RC_RUN};
    s->info.last_good = off;
    int rc = QSF_OK;
    while (rc == QSF_OK && r->size - off >= QSF_SFA_FRAME_OVERHEAD) {
        bool ok, impossible;
        uint32_t len;
        rc = frame_at(r, off, &ok, &len, &impossible, err);
        if (rc == QSF_OK && ok) {
            off += QSF_SFA_FRAME_OVERHEAD + len;
            run.end = off;
            run.frames++;
            continue;
        }
        uint64_t next;
        if (rc == QSF_OK)
            rc = end_run(s, &run, err);
        if (rc == QSF_OK)
            rc = salvage(r, s, off, impossible, &budget, &next, err);
        if (rc != QSF_OK || next == 0)
            break;
        off = next;
        run = (rc_piece){.off = off, .end = off, .kind = RC_RUN};
    }
    if (rc == QSF_OK)
        rc = end_run(s, &run, err);
    qsf_rc_count_slots(s);
    return rc;
}

/* A hole (a sparse or preallocated and never written stretch) reads as zeros,
 * so reading it proves nothing, and an 8 GiB sparse segment would cost
 * seconds of CPU: the work is bounded by the bytes stored, not the apparent
 * size. Where SEEK_DATA is not supported, pos itself (everything is read). */
uint64_t qsf_rc_next_data(const rc_reader *r, uint64_t pos) {
    off_t d = lseek(r->fd, (off_t) pos, SEEK_DATA);
    if (d >= 0)
        return (uint64_t) d > pos ? (uint64_t) d : pos;
    return errno == ENXIO ? r->size : pos; /* ENXIO: only a hole from pos to the end */
}

/* Inspects the whole suffix [lastGood, size): any non-zero byte makes it a torn
 * tail. residue_end = offset after the last non-zero byte (what must be zeroed). */
static int inspect_tail(rc_reader *r, rc_seg *s, qsf_errinfo *err) {
    uint64_t pos = s->info.last_good;
    while ((pos = qsf_rc_next_data(r, pos)) < r->size) {
        const uint8_t *p;
        size_t got;
        int rc = qsf_rc_read(r, pos, QSF_RECOVER_BUF, &p, &got, err);
        if (rc != QSF_OK)
            return rc;
        for (size_t i = got; i > 0; i--)
            if (p[i - 1] != 0) {
                s->residue_end = pos + i;
                break;
            }
        pos += got;
    }
    if (s->residue_end > 0) {
        s->torn_bytes = r->size - s->info.last_good;
        QSF_LOGW("segment %s/%s: torn tail of %llu bytes after offset %llu", r->dir, r->name,
                 (unsigned long long) s->torn_bytes, (unsigned long long) s->info.last_good);
    }
    return QSF_OK;
}

static int size_recheck(rc_reader *r, qsf_errinfo *err) {
    struct stat st;
    if (QSF_OS->fstat(r->fd, &st) != 0)
        return qsf_file_err(err, errno, "cannot stat", r->dir, r->name);
    if ((uint64_t) st.st_size == r->size)
        return QSF_OK;
    return qsf_err_set(err, QSF_E_IO, 0, 0,
                       "segment %s/%s changed size during recovery (%llu -> %llu bytes)", r->dir,
                       r->name, (unsigned long long) r->size, (unsigned long long) st.st_size);
}

/* Whether every byte of the file is zero (or it is empty). */
static int all_zero(rc_reader *r, bool *zero, qsf_errinfo *err) {
    *zero = true;
    for (uint64_t pos = 0; (pos = qsf_rc_next_data(r, pos)) < r->size && *zero;) {
        const uint8_t *p;
        size_t got;
        int rc = qsf_rc_read(r, pos, QSF_RECOVER_BUF, &p, &got, err);
        if (rc != QSF_OK)
            return rc;
        for (size_t i = 0; i < got && *zero; i++)
            *zero = p[i] == 0;
        pos += got;
    }
    return QSF_OK;
}

/* No valid header: a file of nothing but zeros (a spare whose header never
 * reached the disk) holds no data and is debris; anything else is corrupt. */
static int mark_corrupt(rc_found *f, rc_reader *r, rc_seg *s, const char *why, qsf_errinfo *err) {
    bool zero;
    int rc = all_zero(r, &zero, err);
    if (rc != QSF_OK)
        return rc;
    s->corrupt = true;
    if (zero) {
        s->debris = true;
        return QSF_OK;
    }
    QSF_LOGW("segment %s/%s is corrupt: %s", r->dir, s->info.name, why);
    f->corrupt++;
    return QSF_OK;
}

/* Header checks: bad size/magic/baseSeq -> corrupt; version/flags -> operational.
 * A baseSeq above INT64_MAX - (size - 24) / 8 is corrupt too: every frame the
 * file could hold (at least 8 bytes each) must have an FSN, and baseSeq +
 * frameCount (the next FSN) must not overflow. */
static int check_header(rc_found *f, rc_reader *r, rc_seg *s, qsf_errinfo *err) {
    if (r->size < QSF_SFA_HEADER_SIZE)
        return mark_corrupt(f, r, s, "shorter than the 24-byte header", err);
    const uint8_t *p;
    size_t got;
    int rc = qsf_rc_read(r, 0, QSF_SFA_HEADER_SIZE, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    qsf_sfa_header h;
    int v = qsf_sfa_header_decode(p, &h);
    if (v == QSF_SFA_UNSUPPORTED)
        return qsf_err_set(err, QSF_E_UNSUPPORTED, 0, 0,
                           "segment %s/%s has unsupported version %u / flags 0x%02x (recovery "
                           "aborted, file left untouched)",
                           r->dir, r->name, h.version, h.flags);
    s->info.base_seq = h.base_seq;
    s->info.flags = h.flags;
    if (v == QSF_SFA_CORRUPT)
        return mark_corrupt(f, r, s, h.base_seq < 0 ? "negative baseSeq" : "bad magic", err);
    if (h.base_seq > INT64_MAX - (int64_t) ((r->size - QSF_SFA_HEADER_SIZE) / 8))
        return mark_corrupt(f, r, s, "baseSeq too large (the FSNs of its frames would overflow)",
                            err);
    return QSF_OK;
}

static int scan_one(const qsf_slot *slot, uint8_t *buf, rc_found *f, rc_seg *s, qsf_errinfo *err) {
    rc_reader r;
    int rc = qsf_rc_reader_open(&r, slot, s->info.name, buf, O_RDONLY, err);
    if (rc != QSF_OK)
        return rc;
    s->info.file_size = r.size;
    rc = check_header(f, &r, s, err);
    if (rc == QSF_OK && !s->corrupt)
        rc = walk_frames(&r, s, err);
    if (rc == QSF_OK && !s->corrupt)
        rc = inspect_tail(&r, s, err);
    if (rc == QSF_OK)
        rc = size_recheck(&r, err);
    qsf_rc_reader_close(&r);
    return rc;
}

static int scan_found(const qsf_slot *slot, uint8_t *buf, rc_found *f, qsf_errinfo *err) {
    for (uint32_t i = 0; i < f->nsegs; i++) {
        int rc = scan_one(slot, buf, f, &f->segs[i], err);
        if (rc != QSF_OK)
            return rc;
        qsf_assert(f->segs[i].corrupt || (f->segs[i].info.last_good >= QSF_SFA_HEADER_SIZE &&
                                          f->segs[i].info.last_good <= f->segs[i].info.file_size));
    }
    return QSF_OK;
}

int qsf_rc_enumerate(rc_state *st, qsf_errinfo *err) {
    return list_slot(&st->out->slot, &st->found, err);
}

int qsf_rc_scan_all(rc_state *st, qsf_errinfo *err) {
    return scan_found(&st->out->slot, st->buf, &st->found, err);
}

/* ---- the watermark ---- */

/* The .ack-watermark value as it is on disk, in either form, without
 * repairing anything (the handle is opened later): -1 when the file is absent,
 * has neither size or no valid value. */
static int read_watermark(const qsf_slot *s, int64_t *wm, qsf_errinfo *err) {
    *wm = -1;
    uint64_t size = 0;
    int fd = qsf_open_regular(s->dirfd, QSF_NAME_WATERMARK, O_RDONLY, &size);
    if (fd < 0)
        return errno == ENOENT
                   ? QSF_OK
                   : qsf_file_err(err, errno, "cannot open", s->path, QSF_NAME_WATERMARK);
    uint8_t img[QSF_DUAL_FILE_SIZE];
    bool known = size == QSF_DUAL_FILE_SIZE || size == QSF_AKW_COMPACT_SIZE;
    int rc = known ? qsf_read_at(fd, img, size, 0, s->path, QSF_NAME_WATERMARK, err) : QSF_OK;
    int64_t g, v;
    if (rc == QSF_OK && known && qsf_akw_read_image(img, size, &g, &v) == 0)
        *wm = v;
    QSF_OS->close(fd);
    return rc;
}

int qsf_rc_read_slot(const qsf_slot *slot, uint8_t *buf, rc_found *f, qsf_errinfo *err) {
    int rc = list_slot(slot, f, err);
    if (rc == QSF_OK)
        rc = scan_found(slot, buf, f, err);
    if (rc == QSF_OK)
        rc = read_watermark(slot, &f->wm, err);
    return rc;
}
