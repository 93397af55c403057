/* The program around docs/ARROW.md's "Example" (send_trades, which the build
 * extracts from the document): connects with the connect string argv[1],
 * sends, waits for the server's OK and closes, as a user's main would. */
#include <qsf.h>

#include <stdio.h>
#include <string.h>

int send_trades(qsf_sender *s);

int main(int argc, char **argv) {
    if (argc != 2)
        return fprintf(stderr, "usage: arrow_doc_example CONNECT-STRING\n"), 2;
    qsf_errinfo e;
    qsf_sender *s;
    if (qsf_sender_new(argv[1], strlen(argv[1]), &s, &e) != QSF_OK)
        return fprintf(stderr, "%s: %s\n", qsf_err_name(e.code), e.msg), 1;
    int rc = send_trades(s);
    if (rc == QSF_OK)
        rc = qsf_wait(s, qsf_published_fsn(s), QSF_WAIT_OK, 20000, &e);
    if (rc != QSF_OK)
        fprintf(stderr, "%s\n", qsf_err_name(rc));
    if (qsf_close(s, &e) != QSF_OK)
        return fprintf(stderr, "close: %s: %s\n", qsf_err_name(e.code), e.msg), 1;
    return rc == QSF_OK ? 0 : 1;
}
