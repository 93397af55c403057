/* The streaming JSON writer (json.h). */
#include "json.h"

#include "qwp/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_begin(json *j, FILE *f) {
    j->f = f;
    j->depth = 0;
    j->first[0] = true;
}

static void sep(json *j) {
    if (!j->first[j->depth])
        fputc(',', j->f);
    j->first[j->depth] = false;
}

static void raw_string(FILE *f, const char *s, size_t n) {
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else if (c < 0x80)
            fputc(c, f);
        else {
            size_t k = 1; /* one UTF-8 sequence, or one stray byte */
            while (k < 4 && i + k < n && ((unsigned char) s[i + k] & 0xC0) == 0x80)
                k++;
            for (; k > 1 && !qsf_utf8_valid(s + i, k); k--)
                ;
            if (k == 1 && !qsf_utf8_valid(s + i, 1))
                fprintf(f, "\\u%04x", c);
            else
                fwrite(s + i, 1, k, f);
            i += k - 1;
        }
    }
    fputc('"', f);
}

static void key(json *j, const char *k) {
    sep(j);
    if (k) {
        raw_string(j->f, k, strlen(k));
        fputc(':', j->f);
    }
}

static void open_(json *j, const char *k, char c) {
    key(j, k);
    fputc(c, j->f);
    if (j->depth < 15)
        j->depth++;
    j->first[j->depth] = true;
}

void json_obj(json *j, const char *k) {
    open_(j, k, '{');
}

void json_arr(json *j, const char *k) {
    open_(j, k, '[');
}

void json_end_obj(json *j) {
    j->depth--;
    fputc('}', j->f);
}

void json_end_arr(json *j) {
    j->depth--;
    fputc(']', j->f);
}

void json_str(json *j, const char *k, const char *s) {
    if (!s) {
        json_null(j, k);
        return;
    }
    json_strn(j, k, s, strlen(s));
}

void json_strn(json *j, const char *k, const char *s, size_t n) {
    key(j, k);
    raw_string(j->f, s, n);
}

void json_int(json *j, const char *k, int64_t v) {
    key(j, k);
    fprintf(j->f, "%" PRId64, v);
}

void json_uint(json *j, const char *k, uint64_t v) {
    key(j, k);
    fprintf(j->f, "%" PRIu64, v);
}

void json_double(json *j, const char *k, double v) {
    key(j, k);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else /* JSON has no NaN or infinity */
        fprintf(j->f, "\"%s\"", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
}

void json_bool(json *j, const char *k, bool v) {
    key(j, k);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json *j, const char *k) {
    key(j, k);
    fputs("null", j->f);
}

void json_number(json *j, const char *k, const char *text) {
    key(j, k);
    fputs(text, j->f);
}

void json_finish(json *j) {
    fputc('\n', j->f);
    j->first[0] = true;
}
