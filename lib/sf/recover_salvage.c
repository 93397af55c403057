/* Past a bad frame (docs/FORMAT.md, "Salvage"): a crash tears at most the
 * tail of a segment, so intact frames after a bad one mean corruption, and
 * they are kept. This file finds them and counts the frames destroyed in
 * between.
 *
 * Finding: every offset after the bad frame is a candidate, but only one that
 * looks like a stored QWP message has its CRC computed:
 *
 *   o        o+4        o+8    o+12  o+13   o+16             o+20
 *   | crc    | len      | QWP1 | 01  | ...  | payload_length | ...
 *                                           == len - 12
 *
 * "QWP1" is searched with memmem, so zeros and ordinary bytes cost a scan,
 * and the CRC bytes spent on candidates that fail are bounded by a budget: a
 * hostile file cannot make the search quadratic.
 *
 * Counting: the gap between the bad frame and the next intact one is whole
 * frames. If the (unverified) length fields from the bad frame on chain
 * exactly onto the next intact frame, their number is the count (unless a
 * frame that validates lies in a length that was trusted, recover_scan.c
 * find_next); otherwise only an upper bound is known, (gap bytes) / 22,
 * since no stored frame is smaller than 22 bytes. */
#include "recover_int.h"

#include "bytes.h"
#include "qwp/peek.h"
#include "sf/segfmt.h"

#include <string.h>

#define CAND_HEAD 20 /* envelope + QWP header */

/* The header checks of a candidate whose bytes [o, o + 20) are at p. */
static bool looks_stored(const uint8_t *p, uint64_t o, uint64_t size) {
    uint32_t len = qsf_sfa_frame_len(p);
    if ((len & 0x80000000u) || len > size - o - QSF_SFA_FRAME_OVERHEAD)
        return false;
    qsf_qwp_hdr h;
    return qsf_qwp_peek_header(p + QSF_SFA_FRAME_AT_PAYLOAD, 12, &h) == QSF_QWP_PEEK_OK &&
           qsf_qwp_peek_consistent(&h, len);
}

int qsf_rc_looks_stored_at(rc_reader *r, uint64_t off, bool *looks, qsf_errinfo *err) {
    *looks = false;
    if (r->size - off < CAND_HEAD)
        return QSF_OK;
    const uint8_t *p;
    size_t got;
    int rc = qsf_rc_read(r, off, CAND_HEAD, &p, &got, err);
    if (rc == QSF_OK && got >= CAND_HEAD)
        *looks = looks_stored(p, off, r->size);
    return rc;
}

/* CRC check of the candidate at o; spends the budget when it fails. */
static int try_candidate(rc_reader *r, uint64_t o, const uint8_t *p, bool *ok, uint64_t *budget,
                         qsf_errinfo *err) {
    uint32_t crc = qsf_sfa_frame_stored_crc(p), len = qsf_sfa_frame_len(p);
    int rc = qsf_rc_frame_crc_ok(r, o, len, crc, ok, err);
    uint64_t spent = (uint64_t) len + QSF_SFA_FRAME_OVERHEAD;
    if (rc == QSF_OK && !*ok)
        *budget = *budget > spent ? *budget - spent : 0;
    return rc;
}

/* Scans the window at pos for the first candidate that validates. *cont is
 * the offset to go on from (the window was used up, or a CRC check moved the
 * reader's window), or 0 when the file is done. */
static int scan_window(rc_reader *r, uint64_t pos, uint64_t *next, bool *found, uint64_t *cont,
                       uint64_t *budget, qsf_errinfo *err) {
    const uint8_t *p;
    size_t got;
    int rc = qsf_rc_read(r, pos, QSF_RECOVER_BUF, &p, &got, err);
    *cont = 0;
    if (rc != QSF_OK || got < CAND_HEAD)
        return rc;
    for (size_t j = 8; j + 12 <= got;) {
        const uint8_t *m = memmem(p + j, got - j, "QWP1", 4);
        if (!m)
            break;
        j = (size_t) (m - p);
        if (j + 12 > got)
            break;
        uint64_t o = pos + j - 8;
        if (looks_stored(m - 8, o, r->size)) {
            bool ok = false;
            rc = try_candidate(r, o, m - 8, &ok, budget, err);
            if (rc != QSF_OK || ok) {
                *found = ok;
                *next = o;
                return rc;
            }
            *cont = *budget ? o + 1 : 0; /* the window moved; start again after o */
            return QSF_OK;
        }
        j++;
    }
    /* a magic in the last 11 bytes is seen again with its 12 following bytes */
    if (pos + got < r->size)
        *cont = pos + got - (CAND_HEAD - 1);
    return QSF_OK;
}

int qsf_rc_salvage_next(rc_reader *r, uint64_t from, uint64_t *next, bool *found, uint64_t *budget,
                        bool *out_of_budget, qsf_errinfo *err) {
    *found = false;
    *out_of_budget = false;
    uint64_t pos = from;
    while (pos != 0 && *budget > 0 && r->size >= CAND_HEAD && pos <= r->size - CAND_HEAD) {
        uint64_t cont, data = qsf_rc_next_data(r, pos);
        if (data >= r->size)
            break;
        if (data > pos + 8) /* a candidate's envelope may begin in the hole */
            pos = data - 8;
        int rc = scan_window(r, pos, next, found, &cont, budget, err);
        if (rc != QSF_OK || *found)
            return rc;
        pos = cont;
    }
    *out_of_budget = *budget == 0;
    return QSF_OK;
}

int qsf_rc_count_gap(rc_reader *r, rc_piece *g, qsf_errinfo *err) {
    g->ub = (g->end - g->off) / RC_MIN_FRAME;
    uint64_t o = g->off, hops = 0;
    while (o < g->end && g->end - o >= RC_MIN_FRAME) {
        const uint8_t *p;
        size_t got;
        int rc = qsf_rc_read(r, o, QSF_SFA_FRAME_OVERHEAD, &p, &got, err);
        if (rc != QSF_OK)
            return rc;
        uint32_t len = qsf_sfa_frame_len(p);
        if ((len & 0x80000000u) || len < RC_MIN_FRAME - QSF_SFA_FRAME_OVERHEAD ||
            len > g->end - o - QSF_SFA_FRAME_OVERHEAD)
            break;
        o += QSF_SFA_FRAME_OVERHEAD + len;
        hops++;
    }
    g->chained = o == g->end && hops > 0;
    g->exact = g->chained;
    g->frames = g->chained ? hops : (g->ub > 0 ? g->ub : 1);
    return QSF_OK;
}
