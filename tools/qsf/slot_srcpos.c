/* `qsf slot inspect`: the slot's source positions (.source-positions,
 * docs/FORMAT.md §4a): the one an open would report, and the acknowledged
 * one, as text and hex. */
#include "slot_srcpos.h"

#include "out.h"
#include "sf/srcpos.h"

#include <stdio.h>
#include <stdlib.h>

/* The position as an open sees it: the last FSN of the live chain (or -1 for
 * a slot without segments, a drained one). */
static int view(const char *path, const qsf_slot_inspection *in, qsf_srcpos_view *v) {
    int64_t published = in->live && in->last_fsn >= in->first_fsn ? in->last_fsn : -1;
    qsf_errinfo e;
    return qsf_srcpos_view_slot(path, published, in->acked_fsn, v, &e);
}

static void hex(char *out, const uint8_t *b, uint32_t n) {
    static const char digits[] = "0123456789abcdef";
    for (uint32_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
}

static void print_one(const char *what, bool has, const qsf_srcpos_rec *r) {
    if (!has) {
        printf("  %s: none\n", what);
        return;
    }
    char h[2 * QSF_SRCPOS_MAX + 1];
    hex(h, r->bytes, r->len);
    printf("  %s: FSN %lld, %u bytes \"", what, (long long) r->fsn, r->len);
    out_text(stdout, (const char *) r->bytes, r->len);
    printf("\" (hex %s)\n", h);
}

void slot_print_source_positions(const char *path, const qsf_slot_inspection *in) {
    qsf_srcpos_view v;
    if (view(path, in, &v) != QSF_OK) {
        printf("source positions: cannot be read\n");
        return;
    }
    if (!v.present) {
        printf("source positions: none\n");
        return;
    }
    if (!v.valid) {
        printf("source positions: %llu bytes, not SPL1 (an open starts it anew)\n",
               (unsigned long long) v.size);
        return;
    }
    printf("source positions: %u records, %llu bytes", v.records, (unsigned long long) v.size);
    if (v.above)
        printf(", %u above the last FSN (an open drops them)", v.above);
    if (v.valid_end != v.size)
        printf(", torn tail of %llu bytes", (unsigned long long) (v.size - v.valid_end));
    printf("\n");
    print_one("published", v.has_published, &v.published);
    print_one("acknowledged", v.has_acked, &v.acked);
}

static void json_one(json *j, const char *key, bool has, const qsf_srcpos_rec *r) {
    if (!has) {
        json_null(j, key);
        return;
    }
    char h[2 * QSF_SRCPOS_MAX + 1];
    hex(h, r->bytes, r->len);
    json_obj(j, key);
    json_int(j, "fsn", r->fsn);
    json_str(j, "hex", h);
    json_end_obj(j);
}

void slot_json_source_positions(json *j, const char *path, const qsf_slot_inspection *in) {
    qsf_srcpos_view v;
    int rc = view(path, in, &v);
    json_obj(j, "source_positions");
    json_bool(j, "present", rc == QSF_OK && v.present);
    if (rc == QSF_OK && v.present) {
        json_bool(j, "valid", v.valid);
        json_uint(j, "records", v.records);
        json_uint(j, "bytes", v.size);
        json_uint(j, "dropped_on_open", v.above);
        json_one(j, "published", v.has_published, &v.published);
        json_one(j, "acknowledged", v.has_acked, &v.acked);
    }
    json_end_obj(j);
}

/* ---- qsf slot dump ---- */

static void keep(void *user, const qsf_srcpos_rec *rec) {
    slot_positions *p = user;
    qsf_srcpos_rec *n = realloc(p->recs, (p->n + 1) * sizeof *n);
    if (!n)
        return; /* shown without it: dump says nothing it did not read */
    p->recs = n;
    p->recs[p->n++] = *rec;
}

void slot_positions_load(const char *path, slot_positions *p) {
    *p = (slot_positions){0};
    bool present, valid;
    uint64_t size, end;
    qsf_errinfo e;
    (void) qsf_srcpos_read_slot(path, keep, p, &present, &valid, &size, &end, &e);
}

void slot_positions_free(slot_positions *p) {
    free(p->recs);
    *p = (slot_positions){0};
}

const qsf_srcpos_rec *slot_positions_at(const slot_positions *p, int64_t fsn) {
    for (uint32_t i = p->n; i-- > 0;)
        if (p->recs[i].fsn == fsn)
            return &p->recs[i];
    return NULL;
}

void slot_print_position(const qsf_srcpos_rec *r) {
    char h[2 * QSF_SRCPOS_MAX + 1];
    hex(h, r->bytes, r->len);
    printf("  source position: %u bytes \"", r->len);
    out_text(stdout, (const char *) r->bytes, r->len);
    printf("\" (hex %s)\n", h);
}

void slot_json_position(json *j, const qsf_srcpos_rec *r) {
    char h[2 * QSF_SRCPOS_MAX + 1];
    hex(h, r->bytes, r->len);
    json_str(j, "source_position_hex", h);
}
