/* A user's program, built out of the tree by check_install.sh against the
 * installed qsf only: `cc -std=c11 ... $(pkg-config --cflags --libs qsf)`.
 * It touches every part of an install a user would: the header's version
 * macros, the library's version, the connect-string parser, and a sender whose
 * I/O thread runs without a server. Prints one line per check that fails and
 * exits 1 then; exits 0 when every check holds.
 * Usage: consumer VERSION (what `pkg-config --modversion qsf` says). */
#define _POSIX_C_SOURCE 200809L

#include <qsf.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int failures;

static void check(int ok, const char *what, const char *detail) {
    if (!ok) {
        printf("FAIL: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        failures++;
    }
}

static void check_version(const char *expected) {
    check(strcmp(QSF_VERSION_STRING, expected) == 0, "QSF_VERSION_STRING is the .pc's version",
          QSF_VERSION_STRING);
    check(strcmp(qsf_version(), expected) == 0, "qsf_version() is the .pc's version",
          qsf_version());
}

static void check_conf(void) {
    const char *good = "ws::addr=127.0.0.1:9000;auto_flush_rows=10;";
    const char *bad = "ws::addr=127.0.0.1:9000;no_such_key=1;";
    qsf_errinfo e;
    qsf_conf *c = NULL;
    char dump[8192];
    int rc = qsf_conf_parse(good, strlen(good), &c, &e);
    check(rc == QSF_OK, "a valid connect string parses", rc == QSF_OK ? NULL : e.msg);
    size_t n = qsf_conf_dump(c, dump, sizeof dump);
    check(n > 0 && n < sizeof dump && strstr(dump, "auto_flush_rows=10  (set)") != NULL,
          "the dump shows the key set", NULL);
    qsf_conf_free(c);
    rc = qsf_conf_parse(bad, strlen(bad), &c, &e);
    check(rc == QSF_E_CONF && c == NULL, "an unknown key is QSF_E_CONF", qsf_err_name(rc));
    check(strstr(e.msg, "no_such_key") != NULL, "the message names the key", e.msg);
}

/* A port on 127.0.0.1 held by a socket that never listens: connecting to it is
 * refused for as long as the socket is open, and no one else can take it. */
static int refusing_port(int *fd_out) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *) &a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *) &a, &len) != 0)
        return -1;
    *fd_out = fd;
    return ntohs(a.sin_port);
}

/* Memory mode, no server: creation returns at once (async), a flush publishes
 * into the ring, and close says that the frame was never acknowledged. */
static void check_sender(void) {
    int fd = -1, port = refusing_port(&fd);
    char conf[160];
    qsf_errinfo e;
    qsf_sender *s = NULL;
    int64_t fsn = -1;
    check(port > 0, "a refusing port on 127.0.0.1", NULL);
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:%d;initial_connect_retry=async;close_flush_timeout_millis=0;",
             port);
    int rc = qsf_sender_new(conf, strlen(conf), &s, &e);
    check(rc == QSF_OK, "a sender without a server is created", rc == QSF_OK ? NULL : e.msg);
    if (rc != QSF_OK)
        return;
    check(qsf_table(s, "install_check", 13, &e) == QSF_OK &&
              qsf_col_i64(s, "x", 1, 1, &e) == QSF_OK &&
              qsf_at_micros(s, 1767225600000000, &e) == QSF_OK,
          "a row is buffered", e.msg);
    check(qsf_flush(s, &fsn, &e) == QSF_OK && fsn >= 0, "the flush is published", e.msg);
    qsf_close_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    rc = qsf_close_report(s, &info, &e);
    check(rc == QSF_E_DATA_LOSS, "close reports the unacknowledged frame lost", qsf_err_name(rc));
    check(info.frames_unacked == 1 && info.kept_on_disk == 0, "close counts one frame, not kept",
          e.msg);
    close(fd);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: consumer VERSION\n");
        return 64;
    }
    check_version(argv[1]);
    check_conf();
    check_sender();
    return failures ? 1 : 0;
}
