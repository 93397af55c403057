/* Options of a subcommand (args.h). */
#include "args.h"

#include "cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool number(const char *s, int64_t *v, const char **end) {
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *e;
    long long n = strtoll(s, &e, 10);
    if (errno || n < 0)
        return false;
    *v = n;
    *end = e;
    return true;
}

bool args_span(const char *s, int64_t span[2]) {
    const char *e;
    if (!number(s, &span[0], &e))
        return false;
    if (*e == '\0') {
        span[1] = span[0];
        return true;
    }
    return strncmp(e, "..", 2) == 0 && number(e + 2, &span[1], &e) && *e == '\0' &&
           span[1] >= span[0];
}

static const arg_opt *find(const arg_opt *opts, int n, const char *name, size_t len) {
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

static int set_value(const char *cmd, const arg_opt *o, const char *v) {
    const char *e;
    bool ok = true;
    if (o->kind == ARG_STR)
        *(const char **) o->dst = v;
    else if (o->kind == ARG_I64)
        ok = number(v, o->dst, &e) && *e == '\0';
    else
        ok = args_span(v, o->dst);
    if (!ok)
        fprintf(stderr, "%s: --%s needs %s, got '%s'\n", cmd, o->name,
                o->kind == ARG_SPAN ? "an FSN or a span A..B" : "a number >= 0", v);
    return ok ? 0 : QSF_EXIT_USAGE;
}

/* One "--name[=value]" at argv[*i]; the value may be the next argument. */
static int option(const char *cmd, int argc, char **argv, int *i, const arg_opt *opts, int n) {
    const char *a = argv[*i] + 2, *eq = strchr(a, '=');
    size_t len = eq ? (size_t) (eq - a) : strlen(a);
    const arg_opt *o = find(opts, n, a, len);
    if (!o) {
        fprintf(stderr, "%s: unknown option '%s'\n", cmd, argv[*i]);
        return QSF_EXIT_USAGE;
    }
    if (o->seen)
        *o->seen = true;
    if (o->kind == ARG_FLAG) {
        if (eq) {
            fprintf(stderr, "%s: --%s takes no value\n", cmd, o->name);
            return QSF_EXIT_USAGE;
        }
        *(bool *) o->dst = true;
        return 0;
    }
    if (!eq && *i + 1 >= argc) {
        fprintf(stderr, "%s: --%s needs a value\n", cmd, o->name);
        return QSF_EXIT_USAGE;
    }
    return set_value(cmd, o, eq ? eq + 1 : argv[++*i]);
}

int args_parse(const char *cmd, int argc, char **argv, const arg_opt *opts, int nopts,
               const char **pos, int npos) {
    int got = 0;
    for (int i = 1; i < argc; i++) {
        int rc = 0;
        if (strncmp(argv[i], "--", 2) == 0 && argv[i][2])
            rc = option(cmd, argc, argv, &i, opts, nopts);
        else if (got < npos)
            pos[got++] = argv[i];
        else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[i]);
            rc = QSF_EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    if (got < npos) {
        fprintf(stderr, "%s: missing argument (see --help)\n", cmd);
        return QSF_EXIT_USAGE;
    }
    return 0;
}
