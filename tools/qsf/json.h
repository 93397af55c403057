/* A streaming JSON writer for the tool's --json output: objects and arrays
 * nested up to 16 deep, strings escaped (RFC 8259: quote, backslash, control
 * characters as \u00XX; bytes that are not UTF-8 as \u00XX of their value, so
 * the output stays valid UTF-8). Keys are NULL inside arrays. */
#ifndef QSF_TOOL_JSON_H
#define QSF_TOOL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct json {
    FILE *f;
    int depth;
    bool first[16];
} json;

void json_begin(json *j, FILE *f);
void json_obj(json *j, const char *key);
void json_arr(json *j, const char *key);
void json_end_obj(json *j);
void json_end_arr(json *j);
void json_str(json *j, const char *key, const char *s);
void json_strn(json *j, const char *key, const char *s, size_t n);
void json_int(json *j, const char *key, int64_t v);
void json_uint(json *j, const char *key, uint64_t v);
void json_double(json *j, const char *key, double v);
void json_bool(json *j, const char *key, bool v);
void json_null(json *j, const char *key);
/* A number already formatted (digits, sign, '.', exponent: the caller's). */
void json_number(json *j, const char *key, const char *text);
/* Ends the document with a newline (one JSON value per line). */
void json_finish(json *j);

#endif
