/* Fuzz target: lib/qwp/peek over arbitrary bytes, whole and as every prefix.
 * Must never read out of bounds, and a prefix must never contradict the whole:
 * what a prefix answers OK the whole message answers the same, and a SHORT
 * asks for more than the prefix holds. */
#include "qwp/peek.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check(int cond) {
    if (!cond)
        abort();
}

/* Walks header, delta entries and the first table of buf[0..len); returns a
 * summary that the whole message must reproduce when the prefix got that far. */
typedef struct walk {
    int rc;
    uint64_t entries, table_off, rows;
    size_t need;
} walk;

static walk run(const uint8_t *buf, size_t len) {
    walk w = {0};
    qsf_qwp_hdr h;
    w.rc = qsf_qwp_peek_header(buf, len, &h);
    if (w.rc != QSF_QWP_PEEK_OK)
        return w;
    (void) qsf_qwp_peek_consistent(&h, len);
    (void) qsf_qwp_peek_is_placeholder(&h);
    qsf_qwp_delta_info d;
    if (qsf_qwp_peek_delta(buf, len, &h, &d, &w.need) == QSF_QWP_PEEK_OK) {
        uint64_t pos = d.entries, str, slen;
        for (uint64_t i = 0; i < d.count; i++) {
            int rc = qsf_qwp_peek_delta_entry(buf, len, 0, &h, &pos, &str, &slen, &w.need);
            if (rc != QSF_QWP_PEEK_OK)
                break;
            check(str + slen <= len);
            w.entries++;
        }
    }
    size_t off;
    w.rc = qsf_qwp_peek_tables(buf, len, &h, &off, &w.need);
    if (w.rc == QSF_QWP_PEEK_SHORT)
        check(w.need > len);
    if (w.rc != QSF_QWP_PEEK_OK)
        return w;
    w.table_off = off;
    qsf_qwp_table_info t;
    w.rc = qsf_qwp_peek_table_at(buf, len, 0, &h, off, &t, &w.need);
    if (w.rc == QSF_QWP_PEEK_SHORT)
        check(w.need > len);
    if (w.rc == QSF_QWP_PEEK_OK) {
        check(t.name + t.name_len <= len);
        w.rows = t.rows;
    }
    qsf_qwp_table_info ft;
    if (qsf_qwp_peek_first_table(buf, len, &ft) == QSF_QWP_PEEK_OK)
        check(w.rc == QSF_QWP_PEEK_OK && ft.rows == t.rows && ft.name == t.name);
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* a private copy of exactly `size` bytes, so a sanitizer sees any overread */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    walk whole = run(buf, size);
    size_t step = size > 4096 ? size / 512 : 1;
    for (size_t n = 0; n < size; n += step) {
        uint8_t *pre = malloc(n ? n : 1);
        memcpy(pre, buf, n);
        walk p = run(pre, n);
        if (p.rc == QSF_QWP_PEEK_OK)
            check(whole.rc == QSF_QWP_PEEK_OK && whole.table_off == p.table_off &&
                  whole.rows == p.rows);
        free(pre);
    }
    free(buf);
    return 0;
}
