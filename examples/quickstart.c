/* Quick start: ten rows into QuestDB in memory mode (no sf_dir, so rows the
 * server has not acknowledged when the program ends are lost; the other
 * examples keep them on disk).
 *
 *   quickstart ['ws::addr=localhost:9000;']
 */
#include <qsf.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1] : "ws::addr=localhost:9000;";
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    int rc = QSF_OK;
    for (int i = 0; i < 10 && rc == QSF_OK; i++) { /* a row: table, columns, timestamp */
        rc = qsf_table(s, "sensors", 7, &e);
        if (rc == QSF_OK)
            rc = qsf_symbol(s, "room", 4, "kitchen", 7, &e);
        if (rc == QSF_OK)
            rc = qsf_col_f64(s, "temp", 4, 20.0 + i * 0.1, &e);
        if (rc == QSF_OK)
            rc = qsf_at_now(s, &e); /* the server stamps the row */
    }
    int64_t fsn;
    if (rc == QSF_OK)
        rc = qsf_flush(s, &fsn, &e); /* hands the rows to the I/O thread */
    if (rc == QSF_OK)
        rc = qsf_wait(s, fsn, QSF_WAIT_OK, 5000, &e); /* until the server committed them */
    if (rc != QSF_OK)
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    if (qsf_close(s, &e) != QSF_OK) /* says whether anything was left unsent */
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
