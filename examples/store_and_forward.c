/* Store-and-forward across a crash.
 *
 * With sf_dir set, every flush first lands in a ring of files under
 * <sf_dir>/<sender_id>/; the I/O thread streams it to the server and trims
 * what the server acknowledged. A process that dies before that leaves the
 * rest on disk, and the next sender on the same slot (same sf_dir and
 * sender_id) sends it before anything new. Run it twice:
 *
 *   store_and_forward CONF crash    rows 0..999, flushed, then the process is
 *                                   killed (SIGKILL) before it could close
 *   store_and_forward CONF resume   rows 1000..1999; the first run's rows go
 *                                   first; exits 0 once the server has all
 *
 * CONF defaults to the one below; stop the server during the first run to see
 * the rows wait on disk (initial_connect_retry=async lets the sender start
 * without a server). Delivery is at least once: a row the server committed
 * just before the crash may arrive twice (see the idempotent example).
 */
#include <qsf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define ROWS 1000

static int publish(qsf_sender *s, int64_t first, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int64_t id = first; id < first + ROWS && rc == QSF_OK; id++) {
        rc = qsf_table(s, "orders", 6, e);
        if (rc == QSF_OK)
            rc = qsf_col_i64(s, "order_id", 8, id, e);
        if (rc == QSF_OK)
            rc = qsf_col_f64(s, "qty", 3, (double) (id % 50), e);
        if (rc == QSF_OK)
            rc = qsf_at_micros(s, 1767225600000000 + id, e);
    }
    int64_t fsn;
    return rc == QSF_OK ? qsf_flush(s, &fsn, e) : rc; /* on disk once this returns */
}

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1]
                                : "ws::addr=localhost:9000;sf_dir=qdb-sf;sender_id=orders;"
                                  "initial_connect_retry=async;";
    int crash = argc > 2 && strcmp(argv[2], "crash") == 0;
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK) /* replays the slot's rows */
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    if (publish(s, crash ? 0 : ROWS, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    if (crash) {
        fprintf(stderr, "rows 0..%d flushed; dying without closing\n", ROWS - 1);
        raise(SIGKILL); /* a crash: no close, no chance to send */
    }
    /* close waits (close_flush_timeout_millis) until the server acknowledged
     * everything, replayed rows included; QSF_OK says it did */
    if (qsf_close(s, &e) != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    printf("everything acknowledged\n");
    return 0;
}
