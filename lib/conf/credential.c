/* The credential keys and the words close to them (docs/CONFIGURATION.md,
 * "Grammar"). A key typed with a typo, in another case, without its '=' or
 * with its value glued on ("passwordSekr1t", "togken=...") is not a key qsf
 * knows, so the messages about it would show it, and with it the secret. Such
 * a word, and whatever follows it, is never shown. */
#include "conf/impl.h"

#include <ctype.h>
#include <string.h>

/* The longest prefix of a word ever compared: the longest credential name
 * plus the edits allowed. */
#define NEAR_MAX 32

bool qsf_conf_is_credential(const struct qsf_conf_keydesc *d) {
    return d && (d->type == QSF_CONF_T_SECRET || qsf_conf_key_of(d) == QSF_CONF_KEY_username);
}

static size_t min3(size_t a, size_t b, size_t c) {
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Edit distance (insert, delete, substitute, swap of neighbours) between
 * a[0..n) and b[0..m), ignoring case; n, m <= NEAR_MAX. */
static size_t distance(const char *a, size_t n, const char *b, size_t m) {
    size_t d[NEAR_MAX + 1][NEAR_MAX + 1];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int ai = tolower((unsigned char) a[i - 1]), bj = tolower((unsigned char) b[j - 1]);
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (ai != bj));
            if (i > 1 && j > 1 && ai == tolower((unsigned char) b[j - 2]) &&
                tolower((unsigned char) a[i - 2]) == bj && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    }
    return d[n][m];
}

/* The word is the name with a typo (one edit, two for names longer than five
 * characters), or it starts with the name or a one-edit typo of it and goes
 * on for two or more characters: a value glued to it. */
static bool near_name(const char *w, size_t n, const char *name, int how) {
    size_t m = strlen(name), whole = m > 5 ? 2 : 1;
    if (m + whole > NEAR_MAX) /* no such name in keys.def; test_conf_redact covers each */
        return false;
    if ((how & QSF_CONF_NEAR_TYPO) && n <= m + whole && distance(w, n, name, m) <= whole)
        return true;
    for (size_t k = m - 1; (how & QSF_CONF_NEAR_GLUED) && n >= m + 2 && k <= m + 1; k++)
        if (distance(w, k, name, m) <= 1)
            return true;
    return false;
}

const struct qsf_conf_keydesc *qsf_conf_near_credential(const char *w, size_t n, int how) {
    for (size_t i = 0; i < QSF_CONF_NKEYS; i++) {
        const struct qsf_conf_keydesc *d = &qsf_conf_keys[i];
        if (!qsf_conf_is_credential(d))
            continue;
        if (near_name(w, n, d->name, how) || (d->alias && near_name(w, n, d->alias, how)))
            return d;
    }
    return NULL;
}
