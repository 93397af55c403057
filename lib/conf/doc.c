/* Renders docs/CONFIGURATION.md from the property table (conf/keys.def) and the
 * rule table (conf/rules.c). The committed file is regenerated with
 * `ninja -C build docs-configuration`; a unit test compares it byte for byte. */
#include "conf/impl.h"

#include <stdlib.h>
#include <string.h>

static const char intro[] =
    "# Configuration\n"
    "\n"
    "<!-- Generated from lib/conf/keys.def and lib/conf/rules.c by\n"
    "     `ninja -C build docs-configuration`. Do not edit by hand. -->\n"
    "\n"
    "qsf is configured with QuestDB's connect string, the format every QuestDB client\n"
    "uses, so one string can configure qsf and the other clients alike:\n"
    "\n"
    "```text\n"
    "wss::addr=node-a:9000,node-b:9000;sf_dir=/var/lib/myapp/qdb-sf;sender_id=ingest-1;\n"
    "```\n"
    "\n"
    "Pass it to `qsf_conf_parse` / `qsf_sender_new`, or put it in the environment\n"
    "variable `QDB_CLIENT_CONF` (`qsf_conf_from_env`, `qsf_sender_from_env`). Check a\n"
    "string and see every effective value with `qsf conf check '<string>'` (or\n"
    "`qsf conf check --env` for `QDB_CLIENT_CONF`; exit code 0 valid, 2 invalid).\n"
    "A value that another setting makes idle is marked so, e.g.\n"
    "`auto_flush_rows=1000  (default; not in effect: auto_flush=off)`: the\n"
    "`auto_flush_*` triggers under `auto_flush=off`, the `tls_*` keys under `ws::`,\n"
    "`sf_sync_interval_millis` unless `sf_durability=periodic`,\n"
    "`durable_ack_keepalive_interval_millis` under `request_durable_ack=off` and\n"
    "`max_background_drainers` under `drain_orphans=off`.\n"
    "\n"
    "## Grammar\n"
    "\n"
    "- `schema::key=value;key=value;`. The schema is `ws` (plain WebSocket) or `wss`\n"
    "  (WebSocket over TLS); any other schema is rejected. That includes `qwpws` and\n"
    "  `qwpwss`: QuestDB's docs call them aliases of `ws` and `wss`, but the Java client\n"
    "  refuses them, so a string that uses them would configure qsf alone; the message\n"
    "  names the schema to write instead.\n"
    "- Keys are ASCII letters, digits and `_`, case-sensitive. Values run to the next\n"
    "  `;`; write a literal `;` as `;;` (`password=p;;ssw;;rd;` gives `p;ssw;rd`). A value\n"
    "  may contain `=`. Nothing is trimmed. The trailing `;` is optional.\n"
    "- No value may hold a credential after a literal `;`: a `;;` followed by\n"
    "  `username=`, `user=`, `password=`, `pass=`, `token=` or `tls_roots_password=`\n"
    "  (in any case, with a typo such as `togken=`, with spaces before or after the\n"
    "  name), or by such a name with two or more characters glued to it\n"
    "  (`;;passwordS3kr1t`), is rejected in the value of every key, and the message\n"
    "  shows no value. `zone=eu;;token=T;` would otherwise\n"
    "  make the token part of `zone`, which messages, the dump and the `client_id`\n"
    "  header show; the intended string is `zone=eu;token=T;`. A value that ends in a\n"
    "  literal `;` before a credential pair is written `;;;` (`zone=eu;;;token=T;`).\n"
    "- Control characters (U+0000-U+001F, U+007F-U+009F) and invalid UTF-8 are\n"
    "  rejected anywhere. Empty values, duplicate keys (an alias and its canonical name\n"
    "  are the same key) and unknown keys are rejected. Only `addr` may repeat; it\n"
    "  accumulates. Where a key's Validation says so, its alias may be given beside it\n"
    "  with the same value.\n"
    "- A connect string is shared by the sides of a client: a sender, a query client,\n"
    "  and a facade that pools both. qsf is a sender: it accepts and validates the keys\n"
    "  of the other sides and ignores them, and says so (the Meaning column here, and a\n"
    "  `note:` line per key given in the output of `qsf conf check`).\n"
    "- Errors name the key, the byte position (0-based) and the reason, e.g.\n"
    "  `sf_max_total_bytes: '12x' at position 41 is not a size (expected digits with an\n"
    "  optional k/m/g/t suffix)`. The values of `password`, `pass`, `token` and\n"
    "  `tls_roots_password` never appear in a message, log line or dump (`***`), nor\n"
    "  does text right after a secret (it may be the secret's tail, cut by a `;` that\n"
    "  should have been `;;`), nor an unknown key close to a credential key (a typo,\n"
    "  or the key with its value glued on and no `=`: `passwordS3kr1t`): the message\n"
    "  names the credential key it resembles and the position instead.\n"
    "\n"
    "## Value types\n"
    "\n"
    "| Type | Syntax |\n"
    "|---|---|\n"
    "| string | any value |\n"
    "| path | any value, used verbatim (no `~` expansion; relative to the working directory) |\n"
    "| integer | optional `-` (only where the range allows negatives), then decimal digits |\n"
    "| ms | integer milliseconds, no unit suffix; a value over 100 years (INT64_MAX, other "
    "clients' \"forever\", included) means 100 years, which never runs out |\n"
    "| size | digits, then an optional `k`, `m`, `g` or `t`, each optionally followed by `b`, "
    "or a bare `b`; case-insensitive, 1024-based (`4m` = `4MB` = 4194304) |\n"
    "| on/off | `on` or `off` |\n"
    "| enum | one of the listed words, case-sensitive; words in parentheses are synonyms |\n"
    "| ... or off | the type, or the word `off` (stored as 0) |\n"
    "\n"
    "## Addresses\n"
    "\n"
    "- An entry is `host[:port]`: a DNS name, an IPv4 literal, or an IPv6 literal in\n"
    "  brackets (`[::1]`, `[fe80::1%eth0]`). Unbracketed IPv6 is rejected.\n"
    "- The default port is 9000 for both `ws` and `wss`; a port is 1..65535.\n"
    "- `addr=a:9000,b:9000` and `addr=a:9000;addr=b:9000;` both accumulate, in order:\n"
    "  the failover preference order.\n"
    "- Empty entries are rejected. Duplicates (after the default port, host names\n"
    "  compared case-insensitively) are rejected.\n"
    "\n"
    "## Keys\n";

static void put_cell(struct qsf_sbuf *b, const char *s) {
    for (const char *bar; (bar = strchr(s, '|')); s = bar + 1) {
        qsf_sbuf_put(b, s, (size_t) (bar - s));
        qsf_sbuf_puts(b, "\\|");
    }
    qsf_sbuf_puts(b, s);
}

/* "enum `off` (`false`) \| `on` (`true`, `sync`) \| `async`" */
static void put_enum_type(struct qsf_sbuf *b, const char *w) {
    qsf_sbuf_puts(b, "enum ");
    bool in_syn = false;
    while (*w) {
        size_t n = strcspn(w, ",|");
        qsf_sbuf_puts(b, "`");
        qsf_sbuf_put(b, w, n);
        qsf_sbuf_puts(b, "`");
        w += n;
        if (*w == ',')
            qsf_sbuf_puts(b, in_syn ? ", " : " (");
        if (*w != ',' && in_syn)
            qsf_sbuf_puts(b, ")");
        in_syn = *w == ',';
        if (*w == '|')
            qsf_sbuf_puts(b, " \\| ");
        if (*w)
            w++;
    }
}

static void put_type(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    static const char *const names[] = {
        [QSF_CONF_T_STR] = "string",
        [QSF_CONF_T_PATH] = "path",
        [QSF_CONF_T_SECRET] = "string (secret)",
        [QSF_CONF_T_INT] = "integer",
        [QSF_CONF_T_MS] = "ms",
        [QSF_CONF_T_SIZE] = "size",
        [QSF_CONF_T_ONOFF] = "on/off",
        [QSF_CONF_T_INT_OFF] = "integer or off",
        [QSF_CONF_T_MS_OFF] = "ms or off",
        [QSF_CONF_T_SIZE_OFF] = "size or off",
        [QSF_CONF_T_ADDR] = "host[:port] list",
    };
    if (d->type == QSF_CONF_T_ENUM)
        put_enum_type(b, d->words);
    else
        qsf_sbuf_puts(b, names[d->type]);
}

static void put_default(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    if (d->doc_default[0])
        put_cell(b, d->doc_default);
    else if (!d->def)
        qsf_sbuf_puts(b, "unset");
    else
        qsf_sbuf_printf(b, "`%s`", d->def);
}

static void put_bound(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d, uint64_t v, bool neg) {
    bool size = d->type == QSF_CONF_T_SIZE || d->type == QSF_CONF_T_SIZE_OFF;
    if (size)
        qsf_conf_put_size(b, v);
    else
        qsf_sbuf_printf(b, neg ? "-%llu" : "%llu", (unsigned long long) v);
}

/* The range the parser enforces, as text ("" when only non-empty is checked). */
static bool put_range(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    bool size = d->type == QSF_CONF_T_SIZE || d->type == QSF_CONF_T_SIZE_OFF;
    bool open = d->max == UINT64_MAX || (!size && d->max == INT64_MAX);
    bool neg = d->min < 0;
    uint64_t mag = neg ? 0 - (uint64_t) d->min : (uint64_t) d->min;
    if (qsf_conf_type_is_string(d->type)) {
        if (open)
            return false;
        qsf_sbuf_printf(b, "%lld..%llu bytes", (long long) d->min, (unsigned long long) d->max);
    } else if (d->type == QSF_CONF_T_ONOFF || d->type == QSF_CONF_T_ENUM ||
               d->type == QSF_CONF_T_ADDR) {
        return false;
    } else if (d->min == INT64_MIN && open) {
        qsf_sbuf_puts(b, "any integer");
    } else if (open) {
        qsf_sbuf_puts(b, "≥ ");
        put_bound(b, d, mag, neg);
    } else {
        put_bound(b, d, mag, neg);
        qsf_sbuf_puts(b, "..");
        put_bound(b, d, d->max, false);
    }
    return true;
}

/* "**Applies to queries, ignored by the sender.** <meaning>" for an ignored key. */
static void put_meaning(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    const char *note = qsf_conf_key_notes[qsf_conf_key_of(d)];
    if (note) {
        char first = note[0] >= 'a' && note[0] <= 'z' ? (char) (note[0] - 'a' + 'A') : note[0];
        qsf_sbuf_printf(b, "**%c", first);
        put_cell(b, note + 1);
        qsf_sbuf_puts(b, ".** ");
    }
    put_cell(b, d->doc_meaning);
}

/* The Validation cell: the range, true/false where taken, the cross-key rule;
 * for an unchecked key only that its value is not validated. */
static void put_validation(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    size_t k = qsf_conf_key_of(d);
    if (qsf_conf_unchecked[k]) {
        qsf_sbuf_puts(b, "any value, not validated (one its type does not take is not kept)");
        return;
    }
    bool ranged = put_range(b, d), tf = qsf_conf_true_false[k];
    if (tf)
        qsf_sbuf_puts(b, "also `true`/`false`, as the Java client takes them");
    if (d->doc_rule[0]) {
        qsf_sbuf_puts(b, ranged || tf ? "; " : "");
        put_cell(b, d->doc_rule);
    } else if (!ranged && !tf) {
        qsf_sbuf_puts(b, "-");
    }
}

static void put_row(struct qsf_sbuf *b, const struct qsf_conf_keydesc *d) {
    qsf_sbuf_printf(b, "| `%s`", d->name);
    if (d->alias)
        qsf_sbuf_printf(b, " (`%s`)", d->alias);
    qsf_sbuf_puts(b, " | ");
    put_type(b, d);
    qsf_sbuf_puts(b, " | ");
    put_default(b, d);
    qsf_sbuf_puts(b, " | ");
    put_validation(b, d);
    qsf_sbuf_puts(b, " | ");
    put_meaning(b, d);
    qsf_sbuf_puts(b, " |\n");
}

static void put_group(struct qsf_sbuf *b, int g) {
    qsf_sbuf_printf(b, "\n### %s\n\n", qsf_conf_group_names[g]);
    static const char *const intros[QSF_CONF_NGROUPS] = {
        [QSF_CONF_G_EGRESS] = "Keys of the query client. A qsf sender accepts them whatever their "
                              "value, so one string\nconfigures a sender and a query client, "
                              "and ignores them: QuestDB's connect-string\nreference says a "
                              "sender ignores the query-side keys. A value the key's type takes "
                              "is\nkept (the dump shows it); any other is noted and not kept.\n\n",
        [QSF_CONF_G_POOL] = "Keys of the facades that lend senders and query clients from "
                            "pools (the Java\n`QuestDB` handle, the Rust `QuestDb` pool). A qsf "
                            "sender accepts and validates them,\nand ignores them.\n\n",
    };
    if (intros[g])
        qsf_sbuf_puts(b, intros[g]);
    qsf_sbuf_puts(b, "| Key | Type | Default | Validation | Meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++)
        if (qsf_conf_keys[i].group == g)
            put_row(b, &qsf_conf_keys[i]);
}

static void put_rules(struct qsf_sbuf *b) {
    qsf_sbuf_puts(b, "\n## Cross-key rules\n\nChecked in this order after every key "
                     "parsed; the first failing rule is reported.\n\n"
                     "| When | Outcome |\n|---|---|\n");
    const struct qsf_conf_rule_doc *r;
    for (size_t i = 0; (r = qsf_conf_rule_doc(i)); i++) {
        qsf_sbuf_puts(b, "| ");
        put_cell(b, r->when);
        qsf_sbuf_puts(b, " | ");
        put_cell(b, r->outcome);
        qsf_sbuf_puts(b, " |\n");
    }
}

static void put_rejected(struct qsf_sbuf *b) {
    qsf_sbuf_puts(b, "\n## Rejected keys\n\nEvery key not listed above is rejected as "
                     "unknown. These keys from other\nclients are rejected with a reason:\n\n"
                     "| Key | Why |\n|---|---|\n");
    for (size_t i = 0; i < qsf_conf_n_rejected; i++) {
        qsf_sbuf_printf(b, "| `%s` | ", qsf_conf_rejected_keys[i].name);
        put_cell(b, qsf_conf_rejected_keys[i].why);
        qsf_sbuf_puts(b, " |\n");
    }
}

static void render(struct qsf_sbuf *b) {
    qsf_sbuf_puts(b, intro);
    for (int g = 0; g < QSF_CONF_NGROUPS; g++)
        put_group(b, g);
    put_rules(b);
    put_rejected(b);
}

char *qsf_conf_render_docs(void) {
    struct qsf_sbuf probe = {NULL, 0, 0};
    render(&probe);
    struct qsf_sbuf b = {malloc(probe.len + 1), probe.len + 1, 0};
    if (!b.buf)
        return NULL;
    render(&b);
    return b.buf;
}
