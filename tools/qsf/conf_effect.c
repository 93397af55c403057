/* Settings that do not act because another one switches off what they
 * configure (conf_effect.h). Each rule names the keys, the switch and the
 * value of the switch under which they are idle (or, with `unless`, the one
 * value under which they act). docs/CONFIGURATION.md gives each rule. */
#include "conf_effect.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct idle_rule {
    const char *keys[5];
    const char *switch_key;
    const char *value;
    bool unless; /* idle unless switch_key has value, instead of when it has */
};

static const struct idle_rule rules[] = {
    {{"auto_flush_rows", "auto_flush_interval", "auto_flush_bytes"}, "auto_flush", "off", false},
    /* plain ws:: makes no TLS connection */
    {{"tls_verify", "tls_roots", "tls_roots_password", "tls_ca"}, "schema", "ws", false},
    {{"sf_sync_interval_millis"}, "sf_durability", "periodic", true},
    /* no durable confirmation is ever pending */
    {{"durable_ack_keepalive_interval_millis"}, "request_durable_ack", "off", false},
    {{"max_background_drainers"}, "drain_orphans", "off", false},
};

/* The value of key in the dump (up to the two spaces before its note), into
 * buf; false when the dump has no line for key. */
static bool dump_value(const char *dump, const char *key, char *buf, size_t cap) {
    size_t klen = strlen(key);
    for (const char *line = dump; line && *line; line = strchr(line, '\n'), line += line != NULL) {
        if (strncmp(line, key, klen) != 0 || line[klen] != '=')
            continue;
        const char *v = line + klen + 1;
        size_t n = strcspn(v, "\n"), note = strcspn(v, " ");
        snprintf(buf, cap, "%.*s", (int) (note < n ? note : n), v);
        return true;
    }
    return false;
}

int qsf_conf_not_in_effect(const char *dump, const char *key, char *why, size_t cap) {
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        const struct idle_rule *rule = &rules[r];
        bool listed = false;
        for (size_t k = 0; k < 5 && rule->keys[k] && !listed; k++)
            listed = strcmp(rule->keys[k], key) == 0;
        char value[256];
        if (!listed || !dump_value(dump, rule->switch_key, value, sizeof value))
            continue;
        if ((strcmp(value, rule->value) == 0) != rule->unless) {
            snprintf(why, cap, "%s=%s", rule->switch_key, value);
            return 1;
        }
    }
    return 0;
}
