/* Which settings of a configuration act: `qsf conf check` marks a key whose
 * value another setting makes irrelevant ("auto_flush_rows=1000  (default;
 * not in effect: auto_flush=off)"), so that a dump does not read as if every
 * value applied. */
#ifndef QSF_TOOL_CONF_EFFECT_H
#define QSF_TOOL_CONF_EFFECT_H

#include <stddef.h>

/* dump: the text of qsf_conf_dump ("key=value  (...)" lines). When the
 * setting `key` is not in effect, writes why into why ("auto_flush=off",
 * NUL-terminated, truncated to cap) and returns 1; else returns 0. */
int qsf_conf_not_in_effect(const char *dump, const char *key, char *why, size_t cap);

#endif
