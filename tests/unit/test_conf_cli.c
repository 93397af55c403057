/* The qsf binary: `qsf conf check` on good and bad strings, --env, help, exit
 * codes, and redaction of secrets in its output. The binary path is argv[1]. */
#include "conf_testutil.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *qsf_bin;

struct run {
    int status;
    char out[32768];
    char err[4096];
};

static void drain(int fd, char *buf, size_t cap) {
    size_t n = 0;
    ssize_t got;
    while ((got = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t) got;
    buf[n] = '\0';
}

/* Runs qsf with args (NULL-terminated); env_conf sets QDB_CLIENT_CONF unless NULL. */
static struct run *run_qsf(const char *env_conf, const char *const *args) {
    static struct run r;
    int out[2], err[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(err), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[8] = {(char *) qsf_bin};
        for (int i = 0; args[i] && i < 6; i++)
            argv[i + 1] = (char *) args[i];
        if (env_conf)
            setenv("QDB_CLIENT_CONF", env_conf, 1);
        else
            unsetenv("QDB_CLIENT_CONF");
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        execv(qsf_bin, argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    drain(out[0], r.out, sizeof r.out); /* outputs are small: stderr fits the pipe */
    drain(err[0], r.err, sizeof r.err);
    close(out[0]);
    close(err[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    r.status = WEXITSTATUS(st);
    return &r;
}

static void check_good_string(void **state) {
    (void) state;
    const char *args[] = {"conf", "check",
                          "ws::addr=127.0.0.1:9000;sf_dir=/tmp/qsf-demo;sender_id=demo;"
                          "sf_durability=periodic;sf_sync_interval_millis=1000;",
                          NULL};
    struct run *r = run_qsf(NULL, args);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "configuration is valid\n"));
    assert_non_null(strstr(r->out, "\naddr=127.0.0.1:9000  (set)\n"));
    assert_non_null(strstr(r->out, "\nsf_durability=periodic  (set)\n"));
    assert_non_null(strstr(r->out, "\nsf_max_total_bytes=10g  (default; SF-mode default 10g)\n"));
    assert_non_null(strstr(r->out, "\nrequest_timeout=30000  (default)\n"));
    assert_non_null(strstr(r->out, "\nsf_ack_watermark_form=java16  (default)\n"));
    assert_string_equal(r->err, "");
}

/* A key that another setting makes idle says so; the same key acting does
 * not. */
static void check_marks_settings_not_in_effect(void **state) {
    (void) state;
    const char *off[] = {"conf", "check", "ws::addr=a;auto_flush=off;", NULL};
    struct run *r = run_qsf(NULL, off);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\nauto_flush=off  (set)\n"));
    assert_non_null(
        strstr(r->out, "\nauto_flush_rows=1000  (default; not in effect: auto_flush=off)\n"));
    assert_non_null(
        strstr(r->out, "\nauto_flush_interval=100  (default; not in effect: auto_flush=off)\n"));
    assert_non_null(strstr(r->out, "\ntls_ca=os_roots  (default; not in effect: schema=ws)\n"));
    assert_non_null(
        strstr(r->out,
               "\nsf_sync_interval_millis=5000  (default; not in effect: sf_durability=memory)\n"));
    const char *on[] = {"conf", "check",
                        "wss::addr=a;sf_dir=/tmp/q;sf_durability=periodic;auto_flush_rows=10;",
                        NULL};
    r = run_qsf(NULL, on);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\nauto_flush_rows=10  (set)\n"));
    assert_non_null(strstr(r->out, "\ntls_ca=os_roots  (default)\n"));
    assert_non_null(strstr(r->out, "\nsf_sync_interval_millis=5000  (default)\n"));
    assert_null(strstr(r->out, "auto_flush_interval=100  (default; not"));
}

static void check_bad_string(void **state) {
    (void) state;
    const char *args[] = {"conf", "check", "ws::addr=a;sf_max_total_bytes=12x;", NULL};
    struct run *r = run_qsf(NULL, args);
    assert_int_equal(r->status, 2);
    assert_string_equal(r->out, "");
    assert_non_null(strstr(r->err, "sf_max_total_bytes: '12x' at position 30 is not a size"));
    /* a segment size the sender would refuse is refused here too */
    const char *big[] = {"conf", "check", "ws::addr=a;sf_max_segment_bytes=2g;", NULL};
    r = run_qsf(NULL, big);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "sf_max_segment_bytes: '2g' at position 32 must be between 33 "
                                   "and 2147483647 bytes"));
    const char *form[] = {"conf", "check", "ws::addr=a;sf_ack_watermark_form=foo;", NULL};
    r = run_qsf(NULL, form);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "sf_ack_watermark_form: 'foo' at position 33 is not one of: "
                                   "java16, dual"));
}

static void secrets_are_redacted(void **state) {
    (void) state;
    const char *good[] = {"conf", "check", "wss::addr=a;user=u;pass=Wombat77;", NULL};
    struct run *r = run_qsf(NULL, good);
    assert_int_equal(r->status, 0);
    assert_null(strstr(r->out, "Wombat77"));
    assert_non_null(strstr(r->out, "\npassword=***  (set)\n"));
    const char *bad[] = {"conf", "check", "wss::addr=a;token=Wombat77;user=u;", NULL};
    r = run_qsf(NULL, bad);
    assert_int_equal(r->status, 2);
    assert_null(strstr(r->err, "Wombat77"));
    assert_null(strstr(r->out, "Wombat77"));
    assert_non_null(strstr(r->err, "conflicting authentication"));
}

/* The string that printed the token: ';;' made it part of addr's value, which
 * the addr error echoed. */
static void escaped_semicolon_does_not_print_a_token(void **state) {
    (void) state;
    const char *args[] = {"conf", "check", "ws::addr=127.0.0.1:1;;token=T0kenXyz8;", NULL};
    struct run *r = run_qsf(NULL, args);
    assert_int_equal(r->status, 2);
    assert_null(strstr(r->err, "T0kenXyz8"));
    assert_null(strstr(r->out, "T0kenXyz8"));
    assert_non_null(strstr(r->err, "addr: value at position 9"));
    const char *dump[] = {"conf", "check", "ws::addr=a;zone=eu;;token=T0kenXyz8;", NULL};
    r = run_qsf(NULL, dump);
    assert_int_equal(r->status, 2);
    assert_null(strstr(r->out, "T0kenXyz8"));
    assert_null(strstr(r->err, "T0kenXyz8"));
}

/* A value may hold a bidirectional override (it is no control character); the
 * dump shows it escaped, so it cannot reorder the line it is on. */
static void dump_escapes_bidi_overrides(void **state) {
    (void) state;
    const char *args[] = {"conf", "check", "ws::addr=a;zone=eu\xe2\x80\xaewest;", NULL};
    struct run *r = run_qsf(NULL, args);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\nzone=eu\\u202ewest  (set)\n"));
    assert_null(strstr(r->out, "\xe2\x80\xae"));
}

static void check_env(void **state) {
    (void) state;
    const char *args[] = {"conf", "check", "--env", NULL};
    struct run *r = run_qsf("wss::addr=h:1;token=Wombat77;", args);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "\naddr=h:1  (set)\n"));
    assert_non_null(strstr(r->out, "\ntoken=***  (set)\n"));
    assert_null(strstr(r->out, "Wombat77"));
    r = run_qsf(NULL, args);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "QDB_CLIENT_CONF is not set"));
    r = run_qsf("ws::addr=a;bogus=1;", args);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "QDB_CLIENT_CONF: unknown configuration key: bogus"));
}

static void help_and_usage(void **state) {
    (void) state;
    const char *help[] = {"--help", NULL};
    struct run *r = run_qsf(NULL, help);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "usage: qsf <command>"));
    assert_non_null(strstr(r->out, "  conf "));
    const char *conf_help[] = {"conf", "--help", NULL};
    r = run_qsf(NULL, conf_help);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "usage: qsf conf check '<connect string>'"));
    const char *check_help[] = {"conf", "check", "--help", NULL};
    r = run_qsf(NULL, check_help);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "qsf conf check --env"));
    const char *none[] = {NULL};
    r = run_qsf(NULL, none);
    assert_int_equal(r->status, 64);
    const char *unknown[] = {"frob", NULL};
    r = run_qsf(NULL, unknown);
    assert_int_equal(r->status, 64);
    assert_non_null(strstr(r->err, "unknown command 'frob'"));
    const char *missing[] = {"conf", "check", NULL};
    r = run_qsf(NULL, missing);
    assert_int_equal(r->status, 64);
    const char *sub[] = {"conf", "frob", NULL};
    r = run_qsf(NULL, sub);
    assert_int_equal(r->status, 64);
    assert_non_null(strstr(r->err, "unknown subcommand 'frob'"));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_conf_cli <path of the qsf binary>\n");
        return 1;
    }
    qsf_bin = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(check_good_string),
        cmocka_unit_test(check_marks_settings_not_in_effect),
        cmocka_unit_test(check_bad_string),
        cmocka_unit_test(secrets_are_redacted),
        cmocka_unit_test(check_env),
        cmocka_unit_test(help_and_usage),
        cmocka_unit_test(escaped_semicolon_does_not_print_a_token),
        cmocka_unit_test(dump_escapes_bidi_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
