/* Resuming a source exactly: a loader that streams a text file into QuestDB,
 * one row per line, and after any crash (kill -9 included) starts again right
 * after the last line that made it into qsf's slot: no line skipped, no line
 * that was published read again.
 *
 * The trick is qsf_set_source_position: each flush carries the file offset
 * after its last line, and qsf stores it atomically with that flush. At
 * start, qsf_source_position says where the last flush kept in the slot
 * ended; the loader seeks there. Rows the server had already committed from
 * the slot's unacknowledged tail may still arrive twice (the at-least-once
 * window, a few milliseconds): give each row a stable id (here: its line
 * number) and its own timestamp, and declare DEDUP on the table:
 *
 *   CREATE TABLE lines (ts TIMESTAMP, line LONG, text VARCHAR)
 *     TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, line);
 *
 *   resume_file CONF FILE [LINES_PER_FLUSH]
 *
 * It prints "resuming at line N" at start, "flushed through line N" after
 * every flush and "done: N lines" at the end (after waiting for the server's
 * acknowledgements). Lines are at most 4095 bytes. */
#include <qsf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The position: byte offset of the next line, and its number, as 16 bytes
 * little-endian (a position is opaque to qsf: any encoding does). */
typedef struct position {
    uint64_t offset, line;
} position;

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Where the last flush kept in the slot ended (0, 0 for a new slot). */
static int load_position(qsf_sender *s, position *pos, qsf_errinfo *e) {
    uint8_t buf[QSF_SOURCE_POSITION_MAX];
    size_t len = 0;
    int64_t fsn;
    int rc = qsf_source_position(s, buf, sizeof buf, &len, &fsn, e);
    *pos = (position){0, 0};
    if (rc == QSF_OK && len == 16)
        *pos = (position){get_u64(buf), get_u64(buf + 8)};
    else if (rc == QSF_OK && len != 0)
        return fprintf(stderr, "the slot holds a position of %zu bytes, not this loader's\n", len),
               QSF_E_INVAL;
    return rc;
}

static int add_line(qsf_sender *s, uint64_t line, const char *text, size_t len, qsf_errinfo *e) {
    int rc = qsf_table(s, "lines", 5, e);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "line", 4, (int64_t) line, e); /* the stable id ... */
    if (rc == QSF_OK)
        rc = qsf_col_varchar(s, "text", 4, text, len, e);
    /* ... and a timestamp of its own, the same on every run */
    return rc == QSF_OK ? qsf_at_micros(s, 1767225600000000 + (int64_t) line, e) : rc;
}

/* Rows and the position after them go in together. */
static int flush_at(qsf_sender *s, const position *pos, qsf_errinfo *e) {
    uint8_t buf[16];
    put_u64(buf, pos->offset);
    put_u64(buf + 8, pos->line);
    int rc = qsf_set_source_position(s, buf, sizeof buf, e);
    if (rc == QSF_OK)
        rc = qsf_flush(s, NULL, e);
    if (rc == QSF_OK) {
        printf("flushed through line %llu\n", (unsigned long long) pos->line);
        fflush(stdout);
    }
    return rc;
}

static int stream(qsf_sender *s, FILE *f, position *pos, long per_flush, qsf_errinfo *e) {
    static char text[4096];
    int rc = QSF_OK;
    long in_batch = 0;
    while (rc == QSF_OK && fgets(text, sizeof text, f)) {
        size_t len = strlen(text);
        pos->offset += len;
        if (len && text[len - 1] == '\n')
            len--;
        rc = add_line(s, pos->line++, text, len, e);
        if (rc == QSF_OK && ++in_batch == per_flush) {
            rc = flush_at(s, pos, e);
            in_batch = 0;
        }
    }
    return rc == QSF_OK && in_batch ? flush_at(s, pos, e) : rc;
}

int main(int argc, char **argv) {
    if (argc < 3)
        return fprintf(stderr, "usage: resume_file CONF FILE [LINES_PER_FLUSH]\n"), 2;
    long per_flush = argc > 3 ? atol(argv[3]) : 1000;
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(argv[1], strlen(argv[1]), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    position pos;
    FILE *f = fopen(argv[2], "rb");
    int rc = f ? load_position(s, &pos, &e) : QSF_E_IO;
    if (rc == QSF_OK && fseek(f, (long) pos.offset, SEEK_SET) != 0)
        rc = QSF_E_IO;
    if (rc == QSF_OK) {
        printf("resuming at line %llu\n", (unsigned long long) pos.line);
        rc = stream(s, f, &pos, per_flush < 1 ? 1 : per_flush, &e);
    }
    int64_t last = qsf_published_fsn(s);
    if (rc == QSF_OK && last >= 0) /* optional: the server has it all before we say done */
        rc = qsf_wait(s, last, QSF_WAIT_OK, 10000, &e);
    if (rc == QSF_OK)
        printf("done: %llu lines\n", (unsigned long long) pos.line);
    else if (rc == QSF_E_IO)
        fprintf(stderr, "cannot read %s\n", argv[2]);
    else
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    if (f)
        fclose(f);
    if (qsf_close(s, &e) != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
