/* qsf conf: check a connect string and print the effective configuration. */
#include "cmd.h"
#include "conf_effect.h"

#include "conf/conf.h"
#include "qsf.h"
#include "text.h"

#include <stdlib.h>
#include <string.h>

static void conf_usage(FILE *out) {
    fprintf(out, "usage: qsf conf check '<connect string>'\n"
                 "       qsf conf check --env\n"
                 "\n"
                 "Parses a connect string (or the value of QDB_CLIENT_CONF with --env) and\n"
                 "prints the effective configuration: every key with its value and whether it\n"
                 "was set or is a default, and when another setting leaves it not in effect.\n"
                 "Secrets are shown as ***. Then a note for each key given that a sender\n"
                 "accepts and ignores (it applies to queries or to connection pools).\n"
                 "Exit codes: 0 valid, 2 invalid (the message names the key, position and\n"
                 "reason), 64 bad command line.\n");
}

/* Values hold no control character (the parser rejects them) but may hold
 * text that reorders a terminal line (bidirectional overrides): each line of
 * the dump is printed escaped. A key that another setting makes idle says so
 * inside its parentheses (conf_effect.h). */
static int print_dump(const qsf_conf *conf) {
    size_t need = qsf_conf_dump(conf, NULL, 0);
    char *buf = malloc(need + 1), *shown = malloc(QSF_TEXT_ESCAPED_MAX(need));
    if (!buf || !shown) {
        free(buf);
        free(shown);
        fprintf(stderr, "qsf: out of memory\n");
        return QSF_EXIT_FAIL;
    }
    qsf_conf_dump(conf, buf, need + 1);
    for (char *line = buf; *line;) {
        size_t n = strcspn(line, "\n");
        qsf_text_escape(shown, QSF_TEXT_ESCAPED_MAX(need), line, n);
        char key[128], why[300];
        snprintf(key, sizeof key, "%.*s", (int) strcspn(line, "="), line);
        size_t len = strlen(shown);
        if (qsf_conf_not_in_effect(buf, key, why, sizeof why) && len && shown[len - 1] == ')')
            printf("%.*s; not in effect: %s)\n", (int) (len - 1), shown, why);
        else
            printf("%s\n", shown);
        line += n + (line[n] == '\n');
    }
    free(buf);
    free(shown);
    return QSF_EXIT_OK;
}

/* One line per key given that the sender does not apply, so a string copied from
 * another client shows what qsf leaves to that client. */
static void print_notes(const qsf_conf *conf) {
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++)
        if (qsf_conf_key_notes[k] && qsf_conf_is_set(conf, (enum qsf_conf_key) k))
            printf("note: %s at position %zu: %s\n", qsf_conf_keys[k].name, conf->key_pos[k],
                   qsf_conf_key_notes[k]);
}

static int check(int argc, char **argv) {
    if (argc != 2) {
        conf_usage(stderr);
        return QSF_EXIT_USAGE;
    }
    qsf_conf *conf = NULL;
    qsf_errinfo err;
    int rc = strcmp(argv[1], "--env") == 0 ? qsf_conf_from_env(&conf, &err)
                                           : qsf_conf_parse(argv[1], strlen(argv[1]), &conf, &err);
    if (rc != QSF_OK) {
        char msg[QSF_TEXT_ESCAPED_MAX(sizeof err.msg)];
        fprintf(stderr, "qsf: invalid configuration: %s\n",
                qsf_cmd_escaped(msg, sizeof msg, err.msg));
        return rc == QSF_E_CONF ? QSF_EXIT_INVALID : QSF_EXIT_FAIL;
    }
    printf("configuration is valid\n");
    rc = print_dump(conf);
    if (rc == QSF_EXIT_OK)
        print_notes(conf);
    qsf_conf_free(conf);
    return rc;
}

static int run(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "check") == 0 && !qsf_cmd_wants_help(argc - 1, argv + 1))
        return check(argc - 1, argv + 1);
    bool help = argc < 2 || qsf_cmd_wants_help(argc, argv);
    if (!help)
        fprintf(stderr, "qsf conf: unknown subcommand '%s'\n", argv[1]);
    conf_usage(help && argc >= 2 ? stdout : stderr);
    return help && argc >= 2 ? QSF_EXIT_OK : QSF_EXIT_USAGE;
}

const struct qsf_cmd qsf_cmd_conf = {"conf",
                                     "check a connect string and show its effective "
                                     "configuration",
                                     run};
