/* Text the tool prints that comes from a slot or a server: file and slot
 * names, table, column and symbol names and values, server messages, audit
 * lines, host names. Everything of that kind goes through out_text, which
 * escapes control characters (lib/text.h, docs/ERRORS.md, "Text from
 * outside"): a name found in a directory may hold a newline or a terminal
 * escape. --json output escapes the same characters as JSON does (json.c). */
#ifndef QSF_TOOL_OUT_H
#define QSF_TOOL_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes n bytes of foreign text, escaped. */
void out_text(FILE *f, const char *s, size_t n);
/* The same for a NUL-terminated string. */
void out_str(FILE *f, const char *s);

/* "2026-05-01T12:00:00.000000Z" of a wall-clock time in microseconds. */
void out_time(char *buf, size_t cap, int64_t us);
/* "3h 2m", "45s", "2d 4h" of a duration in microseconds (>= 0). */
void out_age(char *buf, size_t cap, int64_t us);
/* "1.5 MB", "512 B" (powers of 1000). */
void out_bytes(char *buf, size_t cap, uint64_t n);

#endif
