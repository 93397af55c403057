/* Name rules (see names.h). QuestDB refuses these characters in table and column
 * names; refusing them here gives the application an error at the row call instead
 * of a server rejection of the whole frame later. */
#include "qwp/names.h"

#include "err.h"
#include "qwp/utf8.h"

#include <stdio.h>
#include <string.h>

static bool bad_char(unsigned char c, bool is_column) {
    if (c < 0x20 || c == 0x7f)
        return true;
    if (strchr("?,'\"\\/:)(+*%~", c))
        return true;
    return is_column && (c == '.' || c == '-');
}

static int fail(qsf_errinfo *err, const char *what, bool is_column, const char *name, size_t len,
                const char *why) {
    int shown = len > 64 ? 64 : (int) len;
    return qsf_err_set(err, QSF_E_VALUE, 0, 0, "%s%s name \"%.*s%s\" is invalid: %s", what,
                       is_column ? "column" : "table", shown, name, len > 64 ? "..." : "", why);
}

static int check_chars(const char *name, size_t len, bool is_column, const char *what,
                       qsf_errinfo *err) {
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) name[i];
        if (c && bad_char(c, is_column))
            return fail(err, what, is_column, name, len, "contains a forbidden character");
        if (c == 0)
            return fail(err, what, is_column, name, len, "contains a NUL byte");
        if (c == 0xEF && i + 2 < len && (unsigned char) name[i + 1] == 0xBB &&
            (unsigned char) name[i + 2] == 0xBF)
            return fail(err, what, is_column, name, len, "contains U+FEFF");
    }
    if (!is_column &&
        (name[0] == '.' || name[len - 1] == '.' || memmem(name, len, "..", 2) != NULL))
        return fail(err, what, is_column, name, len, "'.' at the start or end, or \"..\"");
    return QSF_OK;
}

int qsf_qwp_check_name(const char *name, size_t len, bool is_column, int max_len, const char *what,
                       qsf_errinfo *err) {
    if (!what)
        what = "";
    if (len == 0 || !name)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0, "%s%s name is empty", what,
                           is_column ? "column" : "table");
    if (len > (size_t) max_len) {
        char why[80];
        snprintf(why, sizeof why, "%zu bytes, longer than max_name_len=%d", len, max_len);
        return fail(err, what, is_column, name, len, why);
    }
    size_t bad = qsf_utf8_error_offset(name, len);
    if (bad != len) {
        char why[64];
        snprintf(why, sizeof why, "invalid UTF-8 at byte %zu", bad);
        return fail(err, what, is_column, name, len, why);
    }
    return check_chars(name, len, is_column, what, err);
}
