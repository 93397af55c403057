/* Table and column name rules shared by the row buffer (and usable by tools). */
#ifndef QSF_QWP_NAMES_H
#define QSF_QWP_NAMES_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>

/* Checks a table (is_column false) or column name: 1..max_len bytes, valid UTF-8,
 * none of the characters QuestDB refuses (table: ? , ' " \ / : ) ( + * % ~, control
 * characters, U+FEFF, a leading or trailing '.', ".."; column: those plus . and -).
 * Returns QSF_OK or QSF_E_VALUE with a message naming the name and the reason;
 * `what` prefixes the message (e.g. the table of a column). */
int qsf_qwp_check_name(const char *name, size_t len, bool is_column, int max_len, const char *what,
                       qsf_errinfo *err);

#endif
