/* Fault script parsing and matching (grammar in docs/QWP-SINK.md). */
#include "fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct action_name {
    const char *name;
    int action;
    int needs_arg; /* 1 required, 0 forbidden, 2 optional */
};

static const struct action_name ACTIONS[] = {
    {"close", FA_CLOSE, 1},
    {"rst", FA_RST, 0},
    {"fin", FA_FIN, 0},
    {"stall", FA_STALL, 0},
    {"silent", FA_SILENT, 0},
    {"delay-ok", FA_DELAY_OK, 1},
    {"withhold-ok", FA_WITHHOLD_OK, 0},
    {"status", FA_STATUS, 1},
    {"reject", FA_REJECT, 1},
    {"upgrade", FA_UPGRADE, 1},
    {"fragment", FA_FRAGMENT, 1},
    {"malformed", FA_MALFORMED, 1},
    {"forged-ok", FA_FORGED_OK, 2},
    {"restart", FA_RESTART, 0},
    {"random", FA_RANDOM, 1},
    {"half-frame", FA_HALF_FRAME, 0},
    {"wide-durable", FA_WIDE_DURABLE, 1},
};

/* Strict integer parse (decimal or 0x hex) of the whole string. */
static int parse_i64(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* Splits "a:b" in place: returns b (or NULL without a colon). */
static char *split_colon(char *s) {
    char *c = strchr(s, ':');
    if (!c)
        return NULL;
    *c = '\0';
    return c + 1;
}

static int bad(char *err, size_t cap, const char *what, const char *tok) {
    snprintf(err, cap, "fault: %s in '%s'", what, tok);
    return -1;
}

static int parse_upgrade(struct fault *f, char *arg, char *err, size_t cap) {
    char *rest = split_colon(arg);
    int64_t v;
    if (strcmp(arg, "no-version") == 0)
        f->code = UV_NO_VERSION;
    else if (strcmp(arg, "no-durable") == 0)
        f->code = UV_NO_DURABLE;
    else if (strcmp(arg, "no-batch") == 0)
        f->code = UV_NO_BATCH;
    else if (strcmp(arg, "version") == 0 && rest)
        f->code = UV_VERSION, snprintf(f->text, sizeof f->text, "%s", rest);
    else if (strcmp(arg, "batch") == 0 && rest && parse_i64(rest, &v) == 0 && v > 0)
        f->code = UV_BATCH, f->arg = v;
    else
        return bad(err, cap,
                   "unknown upgrade variant (no-version, version:V, no-durable, "
                   "batch:N, no-batch)",
                   arg);
    return 0;
}

static const char *const MALFORMED_KINDS[] = {
    "bad-length", "trailing",   "text",           "masked",     "rsv",       "bad-close",
    "opcode",     "ctl-opcode", "ctl-fragmented", "ctl-len16",  "ctl-len64", "cont",
    "no-fin",     "len-b63",    "empty",          "close-utf8",
};

static int parse_malformed(struct fault *f, const char *arg, char *err, size_t cap) {
    size_t n = sizeof MALFORMED_KINDS / sizeof MALFORMED_KINDS[0];
    for (size_t i = 0; i < n; i++)
        if (strcmp(arg, MALFORMED_KINDS[i]) == 0) {
            f->code = MK_BAD_LENGTH + (int) i;
            return 0;
        }
    return bad(err, cap, "unknown malformed kind (see docs/QWP-SINK.md)", arg);
}

static int parse_close(struct fault *f, char *arg, char *err, size_t cap) {
    char *reason = split_colon(arg);
    int64_t v;
    if (parse_i64(arg, &v) != 0 || v < 0 || v > 65535)
        return bad(err, cap, "close code must be 0..65535", arg);
    f->code = (int) v;
    if (reason)
        snprintf(f->text, sizeof f->text, "%.123s", reason);
    return 0;
}

static int parse_status(struct fault *f, char *arg, char *err, size_t cap) {
    char *msg = split_colon(arg);
    int64_t v;
    if (parse_i64(arg, &v) != 0 || v < 0 || v > 255)
        return bad(err, cap, "status must be a byte (e.g. 0x05)", arg);
    f->code = (int) v;
    snprintf(f->text, sizeof f->text, "%s", msg ? msg : "injected status");
    return 0;
}

static int parse_random(struct fault *f, char *arg, char *err, size_t cap) {
    char *seed = split_colon(arg);
    char *end;
    f->rate = strtod(arg, &end);
    if (end == arg || *end || f->rate < 0 || f->rate > 1)
        return bad(err, cap, "random rate must be 0..1", arg);
    int64_t s = 1;
    if (seed && parse_i64(seed, &s) != 0)
        return bad(err, cap, "random seed must be an integer", seed);
    f->rng = (uint64_t) s;
    f->trig = FT_SEQ;
    f->at = -1;
    return 0;
}

/* Fills the action-specific fields from "name=arg". */
static int parse_action(struct fault *f, char *tok, char *err, size_t cap) {
    char *arg = strchr(tok, '=');
    if (arg)
        *arg++ = '\0';
    const struct action_name *a = NULL;
    for (size_t i = 0; i < sizeof ACTIONS / sizeof ACTIONS[0]; i++)
        if (strcmp(tok, ACTIONS[i].name) == 0)
            a = &ACTIONS[i];
    if (!a)
        return bad(err, cap, "unknown action", tok);
    if ((a->needs_arg == 1 && !arg) || (a->needs_arg == 0 && arg))
        return bad(err, cap, a->needs_arg ? "action needs =ARG" : "action takes no argument", tok);
    f->action = a->action;
    int64_t v = 0;
    switch (a->action) {
    case FA_CLOSE:
        return parse_close(f, arg, err, cap);
    case FA_STATUS:
        return parse_status(f, arg, err, cap);
    case FA_UPGRADE:
        return parse_upgrade(f, arg, err, cap);
    case FA_MALFORMED:
        return parse_malformed(f, arg, err, cap);
    case FA_RANDOM:
        return parse_random(f, arg, err, cap);
    case FA_FORGED_OK:
        return arg && parse_i64(arg, &f->arg) != 0 ? bad(err, cap, "bad seq", arg) : 0;
    case FA_FRAGMENT: {
        char *ping = split_colon(arg);
        if (parse_i64(arg, &v) != 0 || v < 1 || (ping && strcmp(ping, "ping") != 0))
            return bad(err, cap, "fragment needs BYTES[:ping]", arg);
        f->code = (int) v;
        f->arg = ping != NULL;
        return 0;
    }
    case FA_WIDE_DURABLE:
        if (parse_i64(arg, &v) != 0 || v < 1 || v > 65535)
            return bad(err, cap, "wide-durable needs a table count 1..65535", arg);
        f->code = (int) v;
        return 0;
    case FA_REJECT:
    case FA_DELAY_OK:
        if (parse_i64(arg, &v) != 0 || v < 0 || v > 100000000)
            return bad(err, cap, "expected a number", arg);
        f->code = (int) v;
        return 0;
    default:
        return 0;
    }
}

/* conn=N, conn=N+ or conn=N-M */
static int parse_conn(struct fault *f, char *v, char *err, size_t cap) {
    size_t l = strlen(v);
    int64_t a, b;
    char *dash = strchr(v, '-');
    if (l > 1 && v[l - 1] == '+') {
        v[l - 1] = '\0';
        if (parse_i64(v, &a) != 0 || a < 1)
            return bad(err, cap, "conn=N+ needs N >= 1", v);
        f->conn_from = (int) a, f->conn_to = 0;
    } else if (dash) {
        *dash = '\0';
        if (parse_i64(v, &a) != 0 || parse_i64(dash + 1, &b) != 0 || a < 1 || b < a)
            return bad(err, cap, "conn=N-M needs 1 <= N <= M", v);
        f->conn_from = (int) a, f->conn_to = (int) b;
    } else {
        if (parse_i64(v, &a) != 0 || a < 1)
            return bad(err, cap, "conn=N needs N >= 1", v);
        f->conn_from = f->conn_to = (int) a;
    }
    return 0;
}

static int parse_option(struct fault *f, char *tok, char *err, size_t cap) {
    char *v = strchr(tok, '=');
    if (!v)
        return bad(err, cap, "expected key=value", tok);
    *v++ = '\0';
    int64_t n;
    if (strcmp(tok, "conn") == 0)
        return parse_conn(f, v, err, cap);
    if (strcmp(tok, "role") == 0)
        return snprintf(f->role, sizeof f->role, "%s", v), 0;
    if (strcmp(tok, "zone") == 0)
        return snprintf(f->zone, sizeof f->zone, "%s", v), 0;
    if (strcmp(tok, "seq") == 0 && strcmp(v, "*") == 0)
        return f->trig = FT_SEQ, f->at = -1, 0;
    if (parse_i64(v, &n) != 0 || n < 0)
        return bad(err, cap, "expected a non-negative number", v);
    if (strcmp(tok, "after") == 0)
        f->trig = FT_FRAMES, f->at = n;
    else if (strcmp(tok, "bytes") == 0)
        f->trig = FT_BYTES, f->at = n;
    else if (strcmp(tok, "seq") == 0)
        f->trig = FT_SEQ, f->at = n;
    else if (strcmp(tok, "times") == 0)
        f->times = n == 0 ? -1 : (int) n;
    else
        return bad(err, cap, "unknown option (conn, after, bytes, seq, times, role, zone)", tok);
    return 0;
}

/* Trigger defaults and combinations that make sense for the action. */
static int check_fault(struct fault *f, char *err, size_t cap) {
    int upgrade = f->action == FA_REJECT || f->action == FA_UPGRADE;
    if (upgrade && f->trig && f->trig != FT_UPGRADE)
        return bad(err, cap, "upgrade faults fire at the upgrade; drop after/bytes/seq",
                   f->action == FA_REJECT ? "reject" : "upgrade");
    if (upgrade)
        f->trig = FT_UPGRADE;
    if (f->action == FA_STATUS && !f->trig)
        f->trig = FT_SEQ, f->at = -1;
    if (f->action == FA_STATUS && f->trig != FT_SEQ)
        return bad(err, cap, "status takes seq=N or seq=*", "status");
    if (f->action != FA_STATUS && f->action != FA_RANDOM && f->trig == FT_SEQ)
        return bad(err, cap, "seq= applies to status only; use after=N", "seq");
    if (!f->trig)
        f->trig = FT_FRAMES, f->at = 0;
    if (f->action == FA_REJECT && (f->code < 100 || f->code > 599 || f->code == 101))
        return bad(err, cap, "reject needs an HTTP status other than 101", "reject");
    if (f->times == 0)
        f->times = f->action == FA_REJECT ? 1 : -1;
    return 0;
}

int fault_parse(struct fault_set *fs, const char *line, char *err, size_t cap) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", line);
    char *save = NULL;
    char *tok = strtok_r(copy, " \t\r\n", &save);
    if (!tok || tok[0] == '#')
        return 0;
    struct fault f = {.conn_from = 1};
    if (parse_action(&f, tok, err, cap) != 0)
        return -1;
    while ((tok = strtok_r(NULL, " \t\r\n", &save)))
        if (parse_option(&f, tok, err, cap) != 0)
            return -1;
    if (check_fault(&f, err, cap) != 0)
        return -1;
    struct fault *n = realloc(fs->f, (size_t) (fs->n + 1) * sizeof *n);
    if (!n)
        return bad(err, cap, "out of memory", line);
    fs->f = n;
    fs->f[fs->n++] = f;
    return 0;
}

int fault_parse_file(struct fault_set *fs, const char *path, char *err, size_t cap) {
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, cap, "fault file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        lineno++;
        if ((rc = fault_parse(fs, line, err, cap)) != 0) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "%s:%d: %s", path, lineno, err);
            snprintf(err, cap, "%s", tmp);
        }
    }
    fclose(fp);
    return rc;
}

void fault_clear(struct fault_set *fs) {
    free(fs->f);
    fs->f = NULL;
    fs->n = 0;
}

static int conn_matches(const struct fault *f, int conn) {
    return conn >= f->conn_from && (f->conn_to == 0 || conn <= f->conn_to);
}

/* splitmix64: a tiny seeded generator, reproducible across runs. */
static uint64_t next_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A random fault that fires becomes one of the recoverable faults a soak test
 * must survive. */
static int random_pick(struct fault *f, struct fault *out) {
    if ((double) (next_rand(&f->rng) >> 11) / 9007199254740992.0 >= f->rate)
        return 0;
    static const struct {
        int action, code;
    } menu[] = {{FA_CLOSE, 1011}, {FA_CLOSE, 1001},  {FA_RST, 0},
                {FA_FIN, 0},      {FA_STATUS, 0x06}, {FA_STATUS, 0x09}};
    uint64_t pick = next_rand(&f->rng) % (sizeof menu / sizeof menu[0]);
    *out = *f;
    out->action = menu[pick].action;
    out->code = menu[pick].code;
    snprintf(out->text, sizeof out->text, "random fault");
    return 1;
}

int fault_take(struct fault_set *fs, int conn, int trig, int64_t v, struct fault *out, int max) {
    int n = 0;
    for (int i = 0; i < fs->n && n < max; i++) {
        struct fault *f = &fs->f[i];
        if (f->times == 0 || f->trig != trig || !conn_matches(f, conn))
            continue;
        if (f->at != -1 && trig != FT_UPGRADE && f->at != v)
            continue;
        if (f->action == FA_RANDOM) {
            n += random_pick(f, &out[n]);
            continue;
        }
        out[n++] = *f;
        if (f->times > 0)
            f->times--;
    }
    return n;
}

int64_t fault_next_bytes(const struct fault_set *fs, int conn, int64_t bytes) {
    int64_t best = -1;
    for (int i = 0; i < fs->n; i++) {
        const struct fault *f = &fs->f[i];
        if (f->times != 0 && f->trig == FT_BYTES && conn_matches(f, conn) && f->at > bytes &&
            (best < 0 || f->at < best))
            best = f->at;
    }
    return best;
}
