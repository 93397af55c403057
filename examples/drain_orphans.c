/* Draining orphan slots at startup.
 *
 * Several ingestion processes may share one sf_dir, each with its own
 * sender_id (its slot). When one goes away for good (a host renamed, a
 * replica scaled down), its slot keeps rows that nobody would send.
 * drain_orphans=on makes a starting sender adopt such slots (unlocked, holding
 * data, not marked .failed) and drain them in the background, each on its own
 * connection, while it publishes its own rows. A drained slot's files are
 * removed; one that cannot be drained is marked .failed and left for an
 * operator (`qsf slot ...`).
 *
 *   drain_orphans ['ws::addr=localhost:9000;sf_dir=qdb-sf;sender_id=ingest-2;drain_orphans=on;']
 */
/* nanosleep is POSIX: under -std=c11 <time.h> declares it only when asked. */
#define _POSIX_C_SOURCE 200809L
#include <qsf.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int publish_own_rows(qsf_sender *s, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int64_t i = 0; i < 100 && rc == QSF_OK; i++) {
        rc = qsf_table(s, "heartbeats", 10, e);
        if (rc == QSF_OK)
            rc = qsf_col_i64(s, "n", 1, i, e);
        if (rc == QSF_OK)
            rc = qsf_at_now(s, e);
    }
    int64_t fsn;
    if (rc == QSF_OK)
        rc = qsf_flush(s, &fsn, e);
    return rc == QSF_OK ? qsf_wait(s, fsn, QSF_WAIT_OK, 10000, e) : rc;
}

/* The drainers work on their own; the stats say how far they are. */
static void wait_for_drainers(qsf_sender *s) {
    for (int i = 0; i < 300; i++) { /* 30 s at most; close waits as well */
        qsf_stats st;
        qsf_stats_get(s, &st);
        if (st.orphans_queued == 0 && st.active_drainers == 0) {
            printf("orphan slots drained %" PRIu64 ", failed %" PRIu64 "\n", st.drainers_succeeded,
                   st.drainers_failed);
            return;
        }
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
}

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1]
                                : "ws::addr=localhost:9000;sf_dir=qdb-sf;sender_id=ingest-2;"
                                  "drain_orphans=on;";
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK) /* finds the orphans */
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    int rc = publish_own_rows(s, &e);
    if (rc != QSF_OK)
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    wait_for_drainers(s);
    qsf_close_info info = {.struct_size = sizeof info};
    int crc = qsf_close_report(s, &info, &e);
    printf("left in orphan slots: %" PRIu64 " frames in %" PRIu64 " slots (%" PRIu64
           " not started)\n",
           info.orphan_frames_left, info.orphan_slots_left, info.orphan_slots_not_started);
    if (crc != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(crc), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
