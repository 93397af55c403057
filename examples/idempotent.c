/* Idempotent ingestion: exactly-once tables from at-least-once delivery.
 *
 * qsf delivers every row at least once: after a reconnect or a restart, frames
 * whose acknowledgement was not recorded are sent again, and a program that
 * re-reads its input after a crash sends rows again too. Give every row a
 * stable id from its source and its own designated timestamp (qsf_at_micros
 * with the event's time, never qsf_at_now), and let QuestDB keep one row per
 * key:
 *
 *   CREATE TABLE payments (
 *     ts TIMESTAMP, payment_id LONG, account SYMBOL, amount DOUBLE
 *   ) TIMESTAMP(ts) PARTITION BY DAY WAL DEDUP UPSERT KEYS(ts, payment_id);
 *
 * A row sent twice is then the same row twice, and the table holds it once.
 *
 *   idempotent [CONF [FIRST [COUNT]]]   sends payments FIRST..FIRST+COUNT-1
 *                                       (default 0 and 100) of the source below
 */
#include <qsf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The source: payment n is always the same payment (id, time, account, amount). */
typedef struct payment {
    int64_t id, ts_micros;
    const char *account;
    double amount;
} payment;

static payment payment_at(int64_t n) {
    static const char *ACCOUNTS[] = {"acme", "globex", "initech"};
    payment p = {n, 1767225600000000 + n * 1000, ACCOUNTS[n % 3], (double) (n % 97) * 1.25};
    return p;
}

static int send_payment(qsf_sender *s, const payment *p, qsf_errinfo *e) {
    int rc = qsf_table(s, "payments", 8, e);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "payment_id", 10, p->id, e); /* the stable id ... */
    if (rc == QSF_OK)
        rc = qsf_symbol(s, "account", 7, p->account, strlen(p->account), e);
    if (rc == QSF_OK)
        rc = qsf_col_f64(s, "amount", 6, p->amount, e);
    return rc == QSF_OK ? qsf_at_micros(s, p->ts_micros, e) : rc; /* ... and its own time */
}

int main(int argc, char **argv) {
    const char *conf = argc > 1 ? argv[1] : "ws::addr=localhost:9000;sf_dir=qdb-sf;sender_id=pay;";
    int64_t first = argc > 2 ? atoll(argv[2]) : 0, count = argc > 3 ? atoll(argv[3]) : 100;
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(conf, strlen(conf), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    int rc = QSF_OK;
    for (int64_t n = first; n < first + count && rc == QSF_OK; n++) {
        payment p = payment_at(n);
        rc = send_payment(s, &p, &e);
    }
    int64_t fsn;
    if (rc == QSF_OK)
        rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        fprintf(stderr, "%s: %s\n", qsf_err_name(rc), e.msg);
    if (qsf_close(s, &e) != QSF_OK) /* waits for the acknowledgements */
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
