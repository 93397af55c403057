/* `qsf slot inspect` and `dump`: the slot's source positions
 * (.source-positions, docs/FORMAT.md §4a) as an open would report them
 * (in->srcpos, sfops/srcpos_view.h): the published and the acknowledged one,
 * as text and hex, and each kept one beside its frame. */
#include "slot_srcpos.h"

#include "out.h"
#include "sf/srcpos.h"

#include <stdio.h>

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
    (void) path;
    const qsf_srcpos_view *v = &in->srcpos;
    if (in->srcpos_rc != QSF_OK) {
        printf("source positions: cannot be read: ");
        out_str(stdout, in->srcpos_msg);
        printf("\n");
        return;
    }
    if (!v->present) {
        printf("source positions: none\n");
        return;
    }
    if (!v->valid) {
        printf("source positions: %llu bytes, not SPL1 (an open starts it anew)\n",
               (unsigned long long) v->size);
        return;
    }
    printf("source positions: %u records, %llu bytes", v->records,
           (unsigned long long) v->valid_end);
    if (v->dropped)
        printf(", %u dropped by an open (their flushes did not survive: above the last FSN, "
               "given up, or another frame at their FSN)",
               v->dropped);
    if (v->torn)
        printf(", torn tail of %llu bytes", (unsigned long long) v->torn);
    printf("\n");
    print_one("published", v->has_published, &v->published);
    print_one("acknowledged", v->has_acked, &v->acked);
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
    (void) path;
    const qsf_srcpos_view *v = &in->srcpos;
    bool ok = in->srcpos_rc == QSF_OK;
    json_obj(j, "source_positions");
    json_bool(j, "present", ok && v->present);
    if (!ok)
        json_str(j, "error", in->srcpos_msg);
    if (ok && v->present) {
        json_bool(j, "valid", v->valid);
        json_uint(j, "records", v->records);
        json_uint(j, "bytes", v->valid_end);
        json_uint(j, "file_bytes", v->size);
        json_uint(j, "torn_bytes", v->torn);
        json_uint(j, "dropped_on_open", v->dropped);
        json_one(j, "published", v->has_published, &v->published);
        json_one(j, "acknowledged", v->has_acked, &v->acked);
    }
    json_end_obj(j);
}

/* ---- qsf slot dump ---- */

const qsf_srcpos_rec *slot_positions_at(const qsf_slot_inspection *in, int64_t fsn) {
    const qsf_srcpos_view *v = &in->srcpos;
    for (uint32_t i = v->n; i-- > 0;)
        if (v->recs[i].fsn == fsn)
            return &v->recs[i];
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
