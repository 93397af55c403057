/* docs/CONFIGURATION.md is rendered from the property table: every key, alias,
 * default, range, rule and rejected key must be in it. (docs/meson.build's
 * docs_configuration test compares the committed copy byte for byte.) */
#include "conf_testutil.h"

#include "conf/impl.h"

#include <stdlib.h>

static char *doc;

static int setup(void **state) {
    (void) state;
    doc = qsf_conf_render_docs();
    return doc ? 0 : -1;
}

static int teardown(void **state) {
    (void) state;
    free(doc);
    return 0;
}

static void has(const char *want) {
    if (!strstr(doc, want))
        fail_msg("docs lack '%s'", want);
}

static void every_key_has_one_row(void **state) {
    (void) state;
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[k];
        char row[96];
        if (d->alias)
            snprintf(row, sizeof row, "\n| `%s` (`%s`) | ", d->name, d->alias);
        else
            snprintf(row, sizeof row, "\n| `%s` | ", d->name);
        const char *at = strstr(doc, row);
        if (!at)
            fail_msg("docs lack a row for %s", d->name);
        assert_null(strstr(at + 1, row));
    }
}

static void rows_show_type_default_and_validation(void **state) {
    (void) state;
    has("| `username` (`user`) | string | unset | requires `password`; not with `token` |");
    has("| `password` (`pass`) | string (secret) | unset |");
    has("| `sf_max_segment_bytes` (`sf_max_bytes`) | size | `4m` | 33..2147483647; "
        "`sf_max_bytes` is the Java client's name of this key; both may be given only with the "
        "same value |");
    has("| `init_buf_size` | size | `64k` | ≥ 1k; ≤ `max_buf_size` |");
    has("| `max_background_drainers` | integer | `4` | 1..64 |");
    has("| `close_flush_timeout_millis` | ms | `5000` | ≥ -1; `0` or `-1` skip the wait |");
    has("| `durable_ack_keepalive_interval_millis` | ms | `200` | any integer; ≤ 0 disables |");
    has("| `initial_connect_retry` | enum `off` (`false`) \\| `on` (`true`, `sync`) \\| `async` "
        "| `off` |");
    has("| `sf_durability` | enum `memory` \\| `periodic` \\| `append` (`flush`) | `memory` |");
    has("| `auto_flush_rows` | integer or off | `1000` | ≥ 1 |");
    has("| `auto_flush_bytes` | size or off | `off` (0) | 0..9223372036854775807; `0` = off |");
    has("| `client_id` | string | `qsf/<library version>` | 1..128 bytes; printable ASCII");
    has("| `sf_max_total_bytes` | size | `128m` in memory mode, `10g` in SF mode |");
    has("| `max_batch_rows` | integer | server default | any value, not validated ");
}

static void groups_rules_and_rejected_keys(void **state) {
    (void) state;
    for (int g = 0; g < QSF_CONF_NGROUPS; g++) {
        char h[64];
        snprintf(h, sizeof h, "\n### %s\n", qsf_conf_group_names[g]);
        has(h);
    }
    const struct qsf_conf_rule_doc *r;
    for (size_t i = 0; (r = qsf_conf_rule_doc(i)); i++) {
        char row[512];
        snprintf(row, sizeof row, "| %s |", r->when);
        /* '|' inside a cell is escaped; the rule texts have none */
        assert_null(strchr(r->when, '|'));
        has(row);
    }
    for (size_t i = 0; i < qsf_conf_n_rejected; i++) {
        char row[128];
        snprintf(row, sizeof row, "| `%s` | ", qsf_conf_rejected_keys[i].name);
        has(row);
    }
}

/* A key the sender ignores says so first in its Meaning cell, e.g.
 * "**Applies to queries, ignored by the sender.**". */
static void ignored_keys_say_so(void **state) {
    (void) state;
    size_t noted = 0;
    for (size_t k = 0; k < QSF_CONF_NKEYS; k++) {
        const char *note = qsf_conf_key_notes[k];
        if (!note)
            continue;
        char row[96], want[160];
        snprintf(row, sizeof row, "\n| `%s` | ", qsf_conf_keys[k].name);
        snprintf(want, sizeof want, " | **%c%s.** ", note[0] - 'a' + 'A', note + 1);
        const char *at = strstr(doc, row), *end = at ? strchr(at + 1, '\n') : NULL;
        const char *cell = at ? strstr(at, want) : NULL;
        if (!cell || cell > end)
            fail_msg("the row of %s lacks '%s'", qsf_conf_keys[k].name, want);
        noted++;
    }
    assert_true(noted >= 30);
    has("| `compression` | enum `raw` \\| `zstd` \\| `auto` | `raw` | any value, not validated "
        "(one "
        "its type does not take is not kept) | **Applies to queries, ignored by the sender (any "
        "value, not validated).** ");
    has("| `drain_orphans` | on/off | `off` | also `true`/`false`, as the Java client takes them; "
        "`on` requires `sf_dir` |");
    has("| `sender_pool_max` | integer | `4` | ≥ 0 | **Applies to sender pools, ignored by the "
        "sender.** ");
    has("\n### connection pools\n");
}

static void rendering_is_deterministic(void **state) {
    (void) state;
    char *again = qsf_conf_render_docs();
    assert_string_equal(doc, again);
    free(again);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_key_has_one_row),
        cmocka_unit_test(rows_show_type_default_and_validation),
        cmocka_unit_test(groups_rules_and_rejected_keys),
        cmocka_unit_test(ignored_keys_say_so),
        cmocka_unit_test(rendering_is_deterministic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
