/* Multi-host failover with durable acknowledgements.
 *
 * addr lists several servers: the sender talks to one at a time and moves to
 * another when its connection fails or is refused. With
 * request_durable_ack=on (QuestDB Enterprise: a commit is durable once it is
 * in object storage) the ring keeps every frame until the server says it is
 * durable, not merely committed, so frames a lost server had committed but not
 * made durable are sent again to the next one: no row lives only on a server
 * that went away. Events tell the program where it is connected.
 *
 *   failover ['ws::addr=db-a:9000,db-b:9000;request_durable_ack=on;sf_dir=qdb-sf;...']
 */
#include <qsf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Runs on a qsf dispatcher thread, never on the I/O thread. */
static void on_event(void *user, const qsf_event *ev) {
    (void) user;
    if (ev->kind == QSF_EVENT_CONNECTED)
        printf("connected to %s (durable acks %s)\n", ev->endpoint, ev->durable_ack ? "on" : "off");
    else if (ev->kind == QSF_EVENT_FAILED_OVER)
        printf("failed over from %s to %s\n", ev->previous_endpoint, ev->endpoint);
    else if (ev->kind == QSF_EVENT_DISCONNECTED)
        printf("disconnected from %s: %s\n", ev->endpoint, ev->cause);
    fflush(stdout);
}

static int publish_batch(qsf_sender *s, int batch, int64_t *fsn, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int i = 0; i < 100 && rc == QSF_OK; i++) {
        int64_t id = (int64_t) batch * 100 + i;
        rc = qsf_table(s, "fills", 5, e);
        if (rc == QSF_OK)
            rc = qsf_col_i64(s, "fill_id", 7, id, e);
        if (rc == QSF_OK)
            rc = qsf_col_f64(s, "px", 2, 100.0 + (double) i / 8, e);
        if (rc == QSF_OK)
            rc = qsf_at_micros(s, 1767225600000000 + id, e);
    }
    return rc == QSF_OK ? qsf_flush(s, fsn, e) : rc; /* one frame per batch */
}

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1]
                                : "ws::addr=db-a:9000,db-b:9000;request_durable_ack=on;"
                                  "sf_dir=qdb-sf;sender_id=fills;";
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    qsf_set_event_handler(s, on_event, NULL);
    /* Durable only when asked for: without request_durable_ack=on (a plain
     * connect string, a server without durable acks) committed is as far as
     * rows go, and waiting for durable would be an error (QSF_E_INVAL). */
    int durable = strstr(conf, "request_durable_ack=on") != NULL;
    int64_t fsn = -1;
    int rc = QSF_OK;
    for (int batch = 0; batch < 20 && rc == QSF_OK; batch++)
        rc = publish_batch(s, batch, &fsn, &e);
    /* Durable: every row is in object storage, wherever it ended up. */
    if (rc == QSF_OK)
        rc = qsf_wait(s, fsn, durable ? QSF_WAIT_DURABLE : QSF_WAIT_OK, 10000, &e);
    qsf_stats st;
    qsf_stats_get(s, &st);
    if (rc != QSF_OK)
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    else
        printf("2000 rows %s; last server %s, %" PRIu64 " durable acks\n",
               durable ? "durable" : "committed", st.current_host, st.durable_acks);
    if (qsf_close(s, &e) != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
