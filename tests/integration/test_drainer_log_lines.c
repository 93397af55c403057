/* A drainer's log lines say they are a drainer's (docs/THREADING.md: "its
 * connection lines start with drain_orphans:"). A drainer connects to the
 * owner's endpoint and numbers its frames in its own slot, so a line without
 * the prefix reads as the owner's: "connection to H lost (FSN 0..1)" would
 * name frames the owner never published. Here the sink withholds every OK on
 * the first two connections (the owner's and the drainer's) and then drops
 * them: the drainer's two frames are unacknowledged when its connection is
 * lost. */
#include "itest.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char lines[64][600];
static int nlines;

static void on_log(void *user, int level, const char *line) {
    (void) user;
    (void) level;
    pthread_mutex_lock(&mu);
    if (nlines < 64)
        snprintf(lines[nlines++], sizeof lines[0], "%s", line);
    pthread_mutex_unlock(&mu);
}

/* The first line holding needle, copied into out; false when none. */
static bool line_with(const char *needle, char *out, size_t cap) {
    bool found = false;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nlines && !found; i++)
        if (strstr(lines[i], needle)) {
            snprintf(out, cap, "%.599s", lines[i]);
            found = true;
        }
    pthread_mutex_unlock(&mu);
    return found;
}

/* Slot `id` left behind with rows [0, 200) in two frames (FSN 0..1), unsent. */
static void make_orphan(const char *id) {
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=%s;initial_connect_retry=async;close_flush_timeout_millis=0;",
             it_dir, id);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, 1, extra)); /* nothing on port 1 */
    it_publish(s, "td", 0, 200, 100);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
}

static void a_drainers_lost_connection_is_its_own_line(void **state) {
    (void) state;
    make_orphan("dead");
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1-2");
    assert_int_equal(qsf_set_log_handler(QSF_LOG_WARN, on_log, NULL), QSF_OK);
    char conf[1024], extra[800];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=main;drain_orphans=on;" FAST, it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    if (qsink_wait_frames(sink, 2, 20000) != 0)
        fail_msg("the drainer did not send the orphan's frames");
    qsink_restart(sink);
    char line[600];
    for (int i = 0; i < 2000 && !line_with("(FSN 0..1)", line, sizeof line); i++)
        it_sleep_ms(10);
    if (!line_with("(FSN 0..1)", line, sizeof line))
        fail_msg("no line about the drainer's unacknowledged frames");
    if (strncmp(line, "drain_orphans: ", 15) != 0)
        fail_msg("the drainer's lost connection reads as the owner's: \"%s\"", line);
    /* the drainer replays both frames on its next connection: wait until it
     * has finished (its slot removed) before counting */
    qsf_stats st = {.struct_size = sizeof st};
    for (int i = 0; i < 2000; i++) {
        qsf_stats_get(s, &st);
        if (st.drainers_succeeded == 1)
            break;
        it_sleep_ms(10);
    }
    assert_int_equal(st.drainers_succeeded, 1);
    it_assert_rows(sink, "td", 200, true);
    qsf_errinfo e;
    (void) qsf_close(s, &e);
    qsf_set_log_handler(QSF_LOG_OFF, NULL, NULL);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_drainers_lost_connection_is_its_own_line, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
